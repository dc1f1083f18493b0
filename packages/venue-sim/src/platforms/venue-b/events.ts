// https://docs.kalshi.com/api-reference/events/get-events, …/market/get-series-list
import { DAY_MS, isoSeconds } from '../../core/time';
import { json, type SimRequest } from '../../http/types';
import { MAX_CANDLES, candles, periodCount } from './candles';
import type { KalshiEvent, KalshiMarketDef, KalshiSeries } from './catalog';
import { badRequest, fp, kalshiErrors, type KalshiApi, Query, type RouteFamily } from './common';
import { candleJson, candleParams, marketJson } from './markets';
import { inForce, milestoneJson } from './reference';

/** Kalshi's `EventData` [V], with its markets when asked for. */
function eventJson(api: KalshiApi, e: KalshiEvent, nested: boolean): Record<string, unknown> {
  // The latest fee change that has taken effect sets the event's override [V: EventFeeChange].
  const fee = inForce(
    api.reference.eventFeeChanges.filter((c) => c.event_ticker === e.event_ticker),
    api.now(),
  );
  return {
    event_ticker: e.event_ticker,
    series_ticker: e.series_ticker,
    sub_title: e.sub_title,
    title: e.title,
    collateral_return_type: '',
    mutually_exclusive: e.mutually_exclusive,
    category: e.category,
    strike_date: e.strike_date,
    settlement_sources: e.settlement_sources,
    available_on_brokers: true,
    product_metadata: {},
    last_updated_ts: isoSeconds(api.day - 7 * DAY_MS),
    ...(fee?.fee_type_override
      ? { fee_type_override: fee.fee_type_override, fee_multiplier_override: fee.fee_multiplier_override }
      : {}),
    ...(nested ? { markets: liveMarketsOf(api, e).map((m) => marketJson(api, m)) } : {}),
  };
}

/** The event's markets still served live (settled ones before the cutoff are not [V]). */
function liveMarketsOf(api: KalshiApi, e: KalshiEvent): KalshiMarketDef[] {
  return api.catalog.marketsByEvent.get(e.event_ticker) ?? [];
}

/** An event, live or past the cutoff. */
function eventOf(api: KalshiApi, ticker: string): KalshiEvent | undefined {
  return api.catalog.eventsByTicker.get(ticker) ?? api.catalog.historical.eventsByTicker.get(ticker);
}

/** The fee structure in force for a series: its latest change that has taken effect, else the default [V]. */
function seriesFee(api: KalshiApi, s: KalshiSeries): { fee_type: string; fee_multiplier: number } {
  const change = inForce(
    api.reference.seriesFeeChanges.filter((c) => c.series_ticker === s.ticker),
    api.now(),
  );
  return change
    ? { fee_type: change.fee_type, fee_multiplier: change.fee_multiplier }
    : { fee_type: 'quadratic', fee_multiplier: 1 };
}

/** How a series' forecasts print [U: modelled on Kalshi's site]; null for series without numerical strikes. */
const FORECAST_FORMAT: Readonly<Record<string, { decimals: number; format: (v: number) => string }>> = {
  KXBTCD: { decimals: 0, format: (v) => `$${v.toLocaleString('en-US', { maximumFractionDigits: 0 })}` },
  KXFED: { decimals: 2, format: (v) => `${v.toFixed(2)}%` },
  KXHIGHNY: { decimals: 1, format: (v) => `${v.toFixed(1)}°` },
};

export const eventRoutes: RouteFamily = (r, api) => {
  const { catalog, reference } = api;

  const seriesJson = (s: KalshiSeries, q: Query) => {
    const withMetadata = q.bool('include_product_metadata') === true;
    const withVolume = q.bool('include_volume') === true;
    const volume = () =>
      [...catalog.markets, ...catalog.historical.markets]
        .filter((m) => m.series_ticker === s.ticker)
        .reduce((v, m) => v + api.tape.cumulativeVolume(m.ticker, api.now()), 0);
    return {
      ticker: s.ticker,
      frequency: s.frequency,
      title: s.title,
      category: s.category,
      categories: s.categories,
      tags: s.tags,
      settlement_sources: s.settlement_sources,
      contract_url: `https://kalshi.com/series/${s.ticker.toLowerCase()}`,
      contract_terms_url: `https://kalshi.com/contract-terms/${s.ticker.toLowerCase()}`,
      ...seriesFee(api, s),
      additional_prohibitions: [],
      last_updated_ts: isoSeconds(api.day - 30 * DAY_MS),
      ...(withMetadata ? { product_metadata: {} } : {}),
      ...(withVolume ? { volume_fp: fp(volume()) } : {}),
    };
  };

  r.get('/events', (req) => {
    const q = new Query(req.params);
    const status = q.oneOf('status', ['unopened', 'open', 'closed', 'settled'] as const);
    const nested = q.bool('with_nested_markets') === true;
    const withMilestones = q.bool('with_milestones') === true;
    const minClose = q.int('min_close_ts');
    const minUpdated = q.int('min_updated_ts');
    const series = q.get('series_ticker');
    const tickers = q.commaList('tickers');
    const updatedSec = (api.day - 7 * DAY_MS) / 1000;
    const list =
      status !== undefined && status !== 'open'
        ? []
        : catalog.events.filter(
            (e) =>
              (!series || e.series_ticker === series) &&
              (tickers.length === 0 || tickers.includes(e.event_ticker)) &&
              (minClose === undefined ||
                liveMarketsOf(api, e).some((m) => Date.parse(m.close_time) / 1000 > minClose)) &&
              (minUpdated === undefined || updatedSec > minUpdated),
          );
    const page = q.page(list, 200, 200);
    if (q.error) return q.error;
    const shown = new Set(page.items.map((e) => e.event_ticker));
    return json(200, {
      events: page.items.map((e) => eventJson(api, e, nested)),
      cursor: page.cursor,
      ...(withMilestones
        ? {
            milestones: reference.milestones
              .filter((m) => m.related_event_tickers.some((t) => shown.has(t)))
              .map(milestoneJson),
          }
        : {}),
    });
  });

  r.get('/events/multivariate', (req) => {
    const q = new Query(req.params);
    if (q.get('series_ticker') && q.get('collection_ticker')) {
      return badRequest('collection_ticker cannot be used together with series_ticker');
    }
    q.bool('with_nested_markets');
    // No combination has been created in any collection, so there are no multivariate events yet.
    const page = q.page([], 200, 100);
    if (q.error) return q.error;
    return json(200, { events: page.items, cursor: page.cursor });
  });

  r.get('/events/fee_changes', (req) => {
    const q = new Query(req.params);
    const ticker = q.get('event_ticker');
    const page = q.page(
      reference.eventFeeChanges.filter((c) => !ticker || c.event_ticker === ticker),
      1000,
      100,
    );
    if (q.error) return q.error;
    return json(200, {
      event_fee_changes: page.items.map(({ scheduledMs, ...c }) => ({ ...c, scheduled_ts: isoSeconds(scheduledMs) })),
      cursor: page.cursor,
    });
  });

  r.get('/events/:event_ticker', (req) => {
    const e = eventOf(api, req.pathParams.event_ticker as string);
    if (!e) return kalshiErrors.notFound(req);
    const q = new Query(req.params);
    const nested = q.bool('with_nested_markets') === true;
    if (q.error) return q.error;
    // `markets` at the top level is required (deprecated) [V]; nested ones only when asked for.
    return json(200, {
      event: eventJson(api, e, nested),
      markets: liveMarketsOf(api, e).map((m) => marketJson(api, m)),
    });
  });

  r.get('/events/:event_ticker/metadata', (req) => {
    const e = eventOf(api, req.pathParams.event_ticker as string);
    if (!e) return kalshiErrors.notFound(req);
    const palette = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989'];
    return json(200, {
      image_url: `https://kalshi-public-docs.s3.amazonaws.com/series-images-webp/${e.series_ticker}.webp`,
      market_details: liveMarketsOf(api, e).map((m, i) => ({
        market_ticker: m.ticker,
        image_url: '',
        color_code: palette[i % palette.length],
      })),
      settlement_sources: e.settlement_sources,
      ...(e.teams ? { competition: 'Pro Basketball (M)', competition_scope: 'Game' } : {}),
    });
  });

  const eventIn = (req: SimRequest) => {
    const e = catalog.eventsByTicker.get(req.pathParams.ticker as string);
    return e && e.series_ticker === req.pathParams.series_ticker ? e : undefined;
  };

  r.get('/series/:series_ticker/events/:ticker/candlesticks', (req) => {
    const e = eventIn(req);
    if (!e) return kalshiErrors.notFound(req);
    const q = new Query(req.params);
    // The bound is on the whole event here: `adjusted_end_ts` pulls the end in instead of refusing [V].
    const c = candleParams(q, Infinity);
    if (q.error) return q.error;
    const markets = liveMarketsOf(api, e);
    const step = c.period * 60;
    const perMarket = Math.max(1, Math.floor(MAX_CANDLES / Math.max(1, markets.length)));
    let endTs = c.endTs;
    if (periodCount(c.startTs, endTs, c.period) > perMarket) {
      endTs = (Math.ceil(c.startTs / step) + perMarket - 1) * step;
    }
    const now = api.now();
    return json(200, {
      market_tickers: markets.map((m) => m.ticker),
      market_candlesticks: markets.map((m) =>
        candles(api.tape, { ticker: m.ticker, ...c, endTs, now }).map(candleJson),
      ),
      adjusted_end_ts: endTs,
    });
  });

  r.get(
    '/series/:series_ticker/events/:ticker/forecast_percentile_history',
    (req) => {
      const e = eventIn(req);
      if (!e) return kalshiErrors.notFound(req);
      const q = new Query(req.params);
      const start = q.requiredInt('start_ts');
      const end = q.requiredInt('end_ts');
      const interval = q.requiredInt('period_interval');
      const raw = q.array('percentiles');
      if (q.error) return q.error;
      if (![0, 1, 60, 1440].includes(interval)) return badRequest('period_interval must be 0, 1, 60 or 1440');
      const percentiles = raw.map(Number);
      if (
        raw.length === 0 ||
        raw.length > 10 ||
        !percentiles.every((x) => Number.isInteger(x) && x >= 0 && x <= 9999)
      ) {
        return badRequest('percentiles must be 1 to 10 integers between 0 and 9999');
      }
      if (end < start) return badRequest('end_ts must not be before start_ts');
      // [V] period_interval 0 means five-second periods.
      const step = interval === 0 ? 5 : interval * 60;
      const last = Math.min(Math.floor(end / step), Math.floor(api.now() / 1000 / step));
      const first = Math.ceil(start / step);
      if (last - first + 1 > MAX_CANDLES) return badRequest(`at most ${MAX_CANDLES} forecast periods per request`);
      const ladder = liveMarketsOf(api, e)
        .filter(
          (m) => m.floor_strike !== undefined && m.cap_strike === undefined && m.strike_type.startsWith('greater'),
        )
        .sort((a, b) => (a.floor_strike as number) - (b.floor_strike as number));
      const format = FORECAST_FORMAT[e.series_ticker];
      if (ladder.length < 2 || !format) return badRequest('the event has no numerical forecast');
      const points = [];
      for (let k = first; k <= last; k++) {
        const ts = k * step * 1000;
        points.push({
          event_ticker: e.event_ticker,
          end_period_ts: k * step,
          period_interval: interval,
          percentile_points: percentiles.map((q) => {
            const x = forecastAt(api, ladder, ts, q / 10000);
            const rounded = Number(x.toFixed(format.decimals));
            return {
              percentile: q,
              raw_numerical_forecast: x,
              numerical_forecast: rounded,
              formatted_forecast: format.format(rounded),
            };
          }),
        });
      }
      return json(200, { forecast_history: points });
    },
    'required',
  );

  r.get('/series', (req) => {
    const q = new Query(req.params);
    const minUpdated = q.int('min_updated_ts');
    const category = q.get('category');
    const tags = q.commaList('tags');
    const updatedSec = (api.day - 30 * DAY_MS) / 1000;
    const list = catalog.series.filter(
      (s) =>
        (!category || s.categories.includes(category)) &&
        (tags.length === 0 || s.tags.some((t) => tags.includes(t))) &&
        (minUpdated === undefined || updatedSec > minUpdated),
    );
    const body = list.map((s) => seriesJson(s, q));
    if (q.error) return q.error;
    return json(200, { series: body });
  });

  r.get('/series/fee_changes', (req) => {
    const q = new Query(req.params);
    const historical = q.bool('show_historical') === true;
    if (q.error) return q.error;
    const ticker = q.get('series_ticker');
    const now = api.now();
    return json(200, {
      series_fee_change_arr: reference.seriesFeeChanges
        .filter((c) => (!ticker || c.series_ticker === ticker) && (historical || c.scheduledMs > now))
        .map(({ scheduledMs, ...c }) => ({ ...c, scheduled_ts: isoSeconds(scheduledMs) })),
    });
  });

  r.get('/series/:series_ticker', (req) => {
    const s = catalog.series.find((x) => x.ticker === req.pathParams.series_ticker);
    if (!s) return kalshiErrors.notFound(req);
    const q = new Query(req.params);
    const body = seriesJson(s, q);
    return q.error ?? json(200, { series: body });
  });
};

/**
 * The value at a cumulative probability, read off the event's strike ladder: each "above s" market's mid is
 * P(X >= s), so 1 - mid is the distribution function at s; linear between strikes, and one step beyond each end.
 */
function forecastAt(api: KalshiApi, ladder: readonly KalshiMarketDef[], ts: number, target: number): number {
  const strikes = ladder.map((m) => m.floor_strike as number);
  const cdf: number[] = [];
  for (const m of ladder) {
    const q = api.tape.quoteAtTime(m.ticker, ts);
    cdf.push(Math.max(cdf[cdf.length - 1] ?? 0, 1 - (q.bid + q.ask) / 20000));
  }
  const gap = ((strikes[strikes.length - 1] as number) - (strikes[0] as number)) / (strikes.length - 1);
  const xs = [(strikes[0] as number) - gap, ...strikes, (strikes[strikes.length - 1] as number) + gap];
  const fs = [0, ...cdf, 1];
  for (let i = 1; i < xs.length; i++) {
    const [f0, f1] = [fs[i - 1] as number, fs[i] as number];
    if (target <= f1 || i === xs.length - 1) {
      const [x0, x1] = [xs[i - 1] as number, xs[i] as number];
      return f1 === f0 ? x0 : x0 + ((Math.min(target, f1) - f0) / (f1 - f0)) * (x1 - x0);
    }
  }
  return xs[xs.length - 1] as number;
}
