// https://docs.kalshi.com/api-reference (structured-targets, milestone, live-data, multivariate, incentive-programs)
import { hashInts } from '../../core/rng';
import { DAY_MS } from '../../core/time';
import { json } from '../../http/types';
import { badRequest, fp, kalshiErrors, Query, type RouteFamily } from './common';
import { type Game, type Milestone, milestoneJson, sum, type WeatherCity } from './reference';

const MINUTE_MS = 60_000;

/**
 * A game's state at `now` [U: Kalshi documents `details` only as "a flexible object"]: scheduled before tip-off,
 * live with the quarters played so far, final after. Points per quarter are the seeded ones.
 */
function gameDetails(g: Game, now: number, playerStats: boolean): Record<string, unknown> {
  const quarterMs = (g.endMs - g.startMs) / 4;
  const played = now < g.startMs ? 0 : now >= g.endMs ? 4 : Math.min(3, Math.floor((now - g.startMs) / quarterMs));
  const status = played === 0 && now < g.startMs ? 'scheduled' : now >= g.endMs ? 'final' : 'live';
  return {
    status,
    away_team: g.away,
    home_team: g.home,
    away_points: sum(g.awayQuarters.slice(0, played)),
    home_points: sum(g.homeQuarters.slice(0, played)),
    period: status === 'scheduled' ? 0 : Math.min(4, played + (status === 'live' ? 1 : 0)),
    ...(playerStats ? { player_stats: { away: [], home: [] } } : {}),
  };
}

export const referenceRoutes: RouteFamily = (r, api) => {
  const { reference } = api;
  const milestonesById = new Map(reference.milestones.map((m) => [m.id, m]));

  r.get('/structured_targets', (req) => {
    const q = new Query(req.params);
    const ids = q.array('ids');
    const type = q.get('type');
    const competition = q.get('competition');
    const list = reference.structuredTargets.filter(
      (t) =>
        (ids.length === 0 || ids.includes(t.id)) &&
        (!type || t.type === type) &&
        // [V] matches the league, conference, division or tour in the details, or any of its `leagues`.
        (!competition ||
          ['league', 'conference', 'division', 'tour'].some((k) => t.details[k] === competition) ||
          (Array.isArray(t.details.leagues) && t.details.leagues.includes(competition))),
    );
    const page = q.page(list, 2000, 100, 'page_size');
    if (q.error) return q.error;
    return json(200, { structured_targets: page.items, cursor: page.cursor });
  });
  r.get('/structured_targets/:structured_target_id', (req) => {
    const t = reference.structuredTargets.find((x) => x.id === req.pathParams.structured_target_id);
    return t ? json(200, { structured_target: t }) : kalshiErrors.notFound(req);
  });

  r.get('/milestones', (req) => {
    const q = new Query(req.params);
    // kalshi-typescript makes `limit` required [V]; its upper bound is not documented ([U] 500).
    if (q.get('limit') === undefined) return badRequest('limit is required');
    const minUpdated = q.int('min_updated_ts');
    const minStartText = q.get('minimum_start_date');
    const minStart = minStartText === undefined ? undefined : Date.parse(minStartText);
    if (minStart !== undefined && Number.isNaN(minStart)) return badRequest('minimum_start_date must be RFC 3339');
    const eq = (name: string, value: unknown) => q.get(name) === undefined || q.get(name) === value;
    const related = q.get('related_event_ticker');
    const list = reference.milestones.filter(
      (m) =>
        eq('category', m.category) &&
        eq('competition', m.details.competition) &&
        eq('source_id', m.source_id) &&
        eq('type', m.type) &&
        (!related || m.related_event_tickers.includes(related)) &&
        (minStart === undefined || Date.parse(m.start_date) >= minStart) &&
        (minUpdated === undefined || Date.parse(m.last_updated_ts) / 1000 > minUpdated),
    );
    const page = q.page(list, 500, 100);
    if (q.error) return q.error;
    return json(200, { milestones: page.items.map(milestoneJson), cursor: page.cursor });
  });
  r.get('/milestones/:milestone_id', (req) => {
    const m = milestonesById.get(req.pathParams.milestone_id as string);
    return m ? json(200, { milestone: milestoneJson(m) }) : kalshiErrors.notFound(req);
  });

  const liveData = (m: Milestone, playerStats: boolean) => ({
    type: m.type,
    details: gameDetails(m.game, api.now(), playerStats),
    milestone_id: m.id,
  });

  r.get('/live_data/batch', (req) => {
    const q = new Query(req.params);
    const playerStats = q.bool('include_player_stats') === true;
    const ids = q.array('milestone_ids');
    if (q.error) return q.error;
    if (ids.length === 0 || ids.length > 100) return badRequest('milestone_ids must name 1 to 100 milestones');
    const found = ids.map((id) => milestonesById.get(id)).filter((m): m is Milestone => m !== undefined);
    return json(200, { live_datas: found.map((m) => liveData(m, playerStats)) });
  });
  r.get('/live_data/milestone/:milestone_id', (req) => {
    const q = new Query(req.params);
    const playerStats = q.bool('include_player_stats') === true;
    if (q.error) return q.error;
    const m = milestonesById.get(req.pathParams.milestone_id as string);
    return m ? json(200, { live_data: liveData(m, playerStats) }) : kalshiErrors.notFound(req);
  });
  r.get('/live_data/milestone/:milestone_id/game_stats', (req) => {
    const m = milestonesById.get(req.pathParams.milestone_id as string);
    if (!m) return kalshiErrors.notFound(req);
    const details = gameDetails(m.game, api.now(), false);
    const played = details.status === 'final' ? 4 : Math.max(0, (details.period as number) - 1);
    // Play-by-play per completed period [U shape of the events]: the running score at the end of each quarter.
    return json(200, {
      pbp: {
        periods: Array.from({ length: played }, (_, q) => ({
          events: [
            {
              type: 'period_end',
              period: q + 1,
              away_points: sum(m.game.awayQuarters.slice(0, q + 1)),
              home_points: sum(m.game.homeQuarters.slice(0, q + 1)),
              description: `End of quarter ${q + 1}`,
            },
          ],
        })),
      },
    });
  });
  r.get('/live_data/events/:event_ticker', (req) => {
    const m = reference.milestones.find((x) => x.primary_event_tickers.includes(req.pathParams.event_ticker as string));
    // Only the games carry live data here ([U] Kalshi also has crypto and other types).
    return m
      ? json(200, { live_data: { type: m.type, details: gameDetails(m.game, api.now(), false) } })
      : kalshiErrors.notFound(req);
  });
  r.get('/live_data/:type/milestone/:milestone_id', (req) => {
    const q = new Query(req.params);
    const playerStats = q.bool('include_player_stats') === true;
    if (q.error) return q.error;
    const m = milestonesById.get(req.pathParams.milestone_id as string);
    return m && m.type === req.pathParams.type
      ? json(200, { live_data: liveData(m, playerStats) })
      : kalshiErrors.notFound(req);
  });

  r.get('/live_data/weather/:city', (req) => {
    const city = reference.weatherCities.get(req.pathParams.city as string);
    if (!city) return kalshiErrors.notFound(req);
    const q = new Query(req.params);
    const from = q.int('from');
    const to = q.int('to');
    const lastSec = q.int('last_sec', 1, 7 * 86_400);
    const detailed = q.bool('detailed') === true;
    if (q.error) return q.error;
    const now = api.now();
    if (lastSec !== undefined && (from !== undefined || to !== undefined)) {
      return badRequest('last_sec cannot be combined with from/to');
    }
    if (from !== undefined && to === undefined) return badRequest('from must be paired with to');
    // [V] defaults: `to` now, `from` a day before it; `last_sec` a trailing window ending now.
    const end = lastSec !== undefined ? now : (to ?? now);
    const start = lastSec !== undefined ? now - lastSec * 1000 : (from ?? end - DAY_MS);
    const first = Math.ceil(start / MINUTE_MS);
    const last = Math.floor(Math.min(end, now) / MINUTE_MS);
    if (last - first + 1 > 7 * 1440) return badRequest('at most seven days of points per request');
    const points = [];
    for (let minute = first; minute <= last; minute++) {
      const t = minute * MINUTE_MS;
      const hundredths = temperature(api.ctx.opts.seed, city, t);
      const degraded = hashInts(api.ctx.opts.seed, 31, city.n, minute) % 50 === 0;
      points.push({
        t,
        v: hundredths / 100,
        status: degraded ? 'degraded' : 'normal',
        contributors: 1,
        ...(detailed
          ? {
              stations: [
                {
                  station_id: city.station,
                  code: degraded ? 'substituted' : 'accepted',
                  source: 'asos',
                  temp_f: hundredths / 100,
                  obs_time_ms: t,
                  received_at_ms: t + 45_000,
                },
              ],
            }
          : {}),
      });
    }
    return json(200, {
      city: req.pathParams.city,
      ...(points.length ? { config_version: `${req.pathParams.city}-temperature-v1.0` } : {}),
      units: 'fahrenheit',
      timeseries: points,
    });
  });
  r.get('/live_data/weather/:city/calibrations', (req) => {
    const city = reference.weatherCities.get(req.pathParams.city as string);
    if (!city) return kalshiErrors.notFound(req);
    const effective = api.day - 30 * DAY_MS;
    return json(200, {
      city: req.pathParams.city,
      units: 'fahrenheit',
      calibrations: [
        {
          config_version: `${req.pathParams.city}-temperature-v1.0`,
          effective_at_ms: effective,
          published_at_ms: effective - DAY_MS,
          // The city's yearly mean in °C, to a tenth.
          city_reference_c: Math.round(((city.meanF - 32) * 50) / 9) / 10,
          stations: [{ station_id: city.station, weight: 1, offset_c: 0 }],
          change_reason: 'initial calibration',
        },
      ],
    });
  });

  const collectionStatus = (c: { open_date: string; close_date: string }) => {
    const now = api.now();
    return now < Date.parse(c.open_date) ? 'unopened' : now >= Date.parse(c.close_date) ? 'closed' : 'open';
  };
  r.get('/multivariate_event_collections', (req) => {
    const q = new Query(req.params);
    const status = q.oneOf('status', ['unopened', 'open', 'closed'] as const);
    const event = q.get('associated_event_ticker');
    const series = q.get('series_ticker');
    const list = reference.collections.filter(
      (c) =>
        (status === undefined || collectionStatus(c) === status) &&
        (!event || c.associated_event_tickers.includes(event)) &&
        (!series || c.series_ticker === series),
    );
    // [U] the limit's bounds are not documented.
    const page = q.page(list, 200, 100);
    if (q.error) return q.error;
    return json(200, { multivariate_contracts: page.items, cursor: page.cursor });
  });
  r.get('/multivariate_event_collections/:collection_ticker', (req) => {
    const c = reference.collections.find((x) => x.collection_ticker === req.pathParams.collection_ticker);
    return c ? json(200, { multivariate_contract: c }) : kalshiErrors.notFound(req);
  });

  r.get('/incentive_programs', (req) => {
    const q = new Query(req.params);
    const status = q.oneOf('status', ['all', 'active', 'upcoming', 'closed', 'paid_out'] as const) ?? 'all';
    const type =
      q.oneOf('type', ['all', 'liquidity', 'volume', 'margin_maker_volume', 'margin_taker_volume'] as const) ?? 'all';
    const description = q.get('incentive_description');
    const now = api.now();
    const state = (p: { start_date: string; end_date: string; paid_out: boolean }) =>
      p.paid_out
        ? 'paid_out'
        : now < Date.parse(p.start_date)
          ? 'upcoming'
          : now < Date.parse(p.end_date)
            ? 'active'
            : 'closed';
    const list = reference.incentivePrograms.filter(
      (p) =>
        (status === 'all' || state(p) === status) &&
        (type === 'all' || p.incentive_type === type) &&
        (!description || p.incentive_description === description),
    );
    const page = q.page(list, 10000, 100);
    if (q.error) return q.error;
    return json(200, {
      incentive_programs: page.items.map(({ targetSize, ...p }) => ({ ...p, target_size_fp: fp(targetSize) })),
      next_cursor: page.cursor,
    });
  });
};

/**
 * A city's temperature in 1e-2 °F at minute `t`: its seasonal swing, a daily one peaking mid-afternoon, and seeded
 * jitter. Rounded to hundredths as the index publishes it [V].
 */
function temperature(seed: number, city: WeatherCity, t: number): number {
  const dayOfYear = (t / DAY_MS) % 365.25;
  const hourUtc = (t % DAY_MS) / 3_600_000;
  const seasonal = city.meanF - city.swingF * Math.cos((2 * Math.PI * (dayOfYear - 20)) / 365.25);
  const daily = 8 * Math.sin((2 * Math.PI * (hourUtc - 13)) / 24);
  const jitter = ((hashInts(seed, 30, city.n, Math.floor(t / MINUTE_MS)) % 101) - 50) / 100;
  return Math.round((seasonal + daily + jitter) * 100);
}
