// https://docs.kalshi.com/api-reference/exchange/get-exchange-schedule, …/search/get-tags-for-series-categories
import { DAY_MS, isoMillis, isoSeconds } from '../../core/time';
import { json } from '../../http/types';
import type { RouteFamily } from './common';

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** Weekly maintenance: Thursdays 08:00–10:00 UTC (3–5 AM ET, the announcement's window). */
const MAINTENANCE_HOUR_UTC = 8;

export const exchangeRoutes: RouteFamily = (r, api) => {
  const { catalog, day } = api;

  r.get('/exchange/status', () =>
    json(200, { exchange_active: true, trading_active: true, exchange_estimated_resume_time: null }),
  );
  r.get('/exchange/announcements', () =>
    json(200, {
      announcements: [
        {
          type: 'info',
          message: 'Scheduled maintenance Thursday 3:00-5:00 AM ET.',
          delivery_time: isoSeconds(day - DAY_MS),
          status: 'active',
        },
      ],
    }),
  );
  // [V] Schedule: standard hours per weekday (times of day, ET) and dated maintenance windows. Trading runs around
  // the clock every day; the next four weekly maintenance windows from the catalogue date are listed.
  r.get('/exchange/schedule', () => {
    const toThursday = (4 - new Date(day).getUTCDay() + 7) % 7;
    const firstWindow = day + toThursday * DAY_MS + MAINTENANCE_HOUR_UTC * 3_600_000;
    return json(200, {
      schedule: {
        standard_hours: [
          {
            start_time: isoSeconds(day - 30 * DAY_MS),
            end_time: isoSeconds(day + 365 * DAY_MS),
            ...Object.fromEntries(WEEKDAYS.map((d) => [d, [{ open_time: '00:00', close_time: '23:59' }]])),
          },
        ],
        maintenance_windows: [0, 1, 2, 3].map((w) => ({
          start_datetime: isoSeconds(firstWindow + w * 7 * DAY_MS),
          end_datetime: isoSeconds(firstWindow + w * 7 * DAY_MS + 2 * 3_600_000),
        })),
      },
    });
  });
  // [V] public in the OpenAPI (no security); upstreams.md suggested treating it as private, but the docs win.
  r.get('/exchange/user_data_timestamp', () => json(200, { as_of_time: isoMillis(api.now()) }));

  r.get('/search/filters_by_sport', () =>
    json(200, {
      filters_by_sports: {
        Basketball: { competitions: { NBA: { scopes: ['Games', 'Futures'] } }, scopes: ['Games', 'Futures'] },
        Football: { competitions: { NFL: { scopes: ['Games'] } }, scopes: ['Games'] },
      },
      sport_ordering: ['Basketball', 'Football'],
    }),
  );
  r.get('/search/tags_by_categories', () => {
    const categories = [...new Set(catalog.series.flatMap((s) => s.categories))];
    return json(200, {
      tags_by_categories: Object.fromEntries(
        categories.map((c) => [
          c,
          [...new Set(catalog.series.filter((s) => s.categories.includes(c)).flatMap((s) => s.tags))],
        ]),
      ),
    });
  });
};
