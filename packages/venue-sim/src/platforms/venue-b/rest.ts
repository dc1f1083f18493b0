// https://docs.kalshi.com/api-reference
import { formatScaled } from '../../core/decimal';
import { DAY_MS, isoMillis, isoSeconds, parseDay } from '../../core/time';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors, type SimRequest, type SimResponse } from '../../http/types';
import { type PlatformContext, decodeCursor, encodeCursor, intParam } from '../context';
import { verifyKalshi } from './auth';
import type { KalshiCatalog, KalshiMarketDef } from './catalog';

export const KALSHI_PREFIX = '/trade-api/v2';

/**
 * Kalshi's error envelope `{"error":{"code","message","details"?}}` [V] (SDK ErrorResponse). The 401 body is the
 * one third parties captured ([3P]: `authentication_error` with the reason in `details`); 404 and 429 codes are [U].
 */
export const kalshiErrors: PlatformErrors = {
  notFound: () => json(404, { error: { code: 'not_found', message: 'not found' } }),
  unauthorized: (reason) =>
    json(401, { error: { code: 'authentication_error', message: 'authentication_error', details: reason } }),
  rateLimited: () => json(429, { error: { code: 'too_many_requests', message: 'too many requests' } }),
  serverError: (status) =>
    json(status, { error: { code: 'internal_server_error', message: 'internal server error', service: 'exchange' } }),
};

const badRequest = (message: string) => json(400, { error: { code: 'bad_request', message } });

/** Cents as a dollar string with 4 decimals (`45` → `"0.4500"`). */
const dollars = (priceE4: number) => formatScaled(priceE4, 4);

export function kalshiHost(ctx: PlatformContext, catalog: KalshiCatalog): SimHost {
  const { engine, opts, credentials, keys } = ctx;
  const day = parseDay(opts.catalogDate);
  const r = new Router(KALSHI_PREFIX);
  const authed = 'required' as const;

  const marketJson = (m: KalshiMarketDef) => {
    const book = engine.book('kalshi', m.ticker);
    const yesBid = book?.bids.best() ?? 0;
    const yesAsk = book?.asks.best() ?? 10000;
    return {
      ticker: m.ticker,
      event_ticker: m.event_ticker,
      market_type: 'binary',
      title: m.title,
      subtitle: '',
      yes_sub_title: m.yes_sub_title,
      no_sub_title: m.no_sub_title,
      created_time: m.open_time,
      open_time: m.open_time,
      close_time: m.close_time,
      expected_expiration_time: m.close_time,
      expiration_time: m.close_time,
      latest_expiration_time: isoSeconds(Date.parse(m.close_time) + 7 * DAY_MS),
      settlement_timer_seconds: 60,
      status: 'active',
      yes_bid_dollars: dollars(yesBid),
      yes_ask_dollars: dollars(yesAsk),
      no_bid_dollars: dollars(10000 - yesAsk),
      no_ask_dollars: dollars(10000 - yesBid),
      last_price_dollars: dollars(Math.round((yesBid + yesAsk) / 200) * 100),
      volume_fp: formatScaled(m.volume * 100, 2),
      volume_24h_fp: formatScaled(Math.floor(m.volume / 7) * 100, 2),
      open_interest_fp: formatScaled(m.open_interest * 100, 2),
      liquidity_dollars: formatScaled(m.open_interest * 37, 2),
      notional_value_dollars: '1.0000',
      result: '',
      can_close_early: true,
      expiration_value: '',
      rules_primary: m.rules_primary,
      rules_secondary: '',
      price_level_structure: 'linear_cent',
      price_ranges: [{ start: '0.0000', end: '1.0000', step: '0.0100' }],
      strike_type: m.strike_type,
      ...(m.floor_strike !== undefined ? { floor_strike: m.floor_strike } : {}),
      ...(m.cap_strike !== undefined ? { cap_strike: m.cap_strike } : {}),
      fractional_trading_enabled: true,
    };
  };

  const page = <T>(req: SimRequest, items: T[], maxLimit: number, defaultLimit: number) => {
    const limit = intParam(req.params, 'limit');
    if (limit === null || (limit !== undefined && (limit < 1 || limit > maxLimit))) {
      return { error: badRequest(`limit must be between 1 and ${maxLimit}`) };
    }
    const offset = decodeCursor(req.params.get('cursor'));
    if (offset === null) return { error: badRequest('invalid cursor') };
    const n = limit ?? defaultLimit;
    const slice = items.slice(offset, offset + n);
    return { slice, cursor: offset + n < items.length ? encodeCursor(offset + n) : '' };
  };

  const listedMarkets = (req: SimRequest): KalshiMarketDef[] | SimResponse => {
    const status = req.params.get('status');
    if (status && !['unopened', 'open', 'paused', 'closed', 'settled'].includes(status)) {
      return badRequest('invalid status');
    }
    let list = catalog.markets;
    if (status && status !== 'open') list = [];
    const ev = req.params.get('event_ticker');
    if (ev) list = list.filter((m) => ev.split(',').includes(m.event_ticker));
    const se = req.params.get('series_ticker');
    if (se) list = list.filter((m) => m.series_ticker === se);
    const tickers = req.params.get('tickers');
    if (tickers) list = list.filter((m) => tickers.split(',').includes(m.ticker));
    return list;
  };

  r.get('/markets', (req) => {
    const list = listedMarkets(req);
    if (!Array.isArray(list)) return list;
    const p = page(req, list, 1000, 100);
    if (p.error) return p.error;
    return json(200, { markets: p.slice.map(marketJson), cursor: p.cursor });
  });

  // [V] bids only, YES and NO, levels ascending by price; a YES ask at p is a NO bid at 1-p.
  const orderbookFp = (ticker: string, depth: number | undefined) => {
    const book = engine.book('kalshi', ticker);
    if (!book) return undefined;
    const n = depth ? depth : Infinity;
    const yes = book.bids.levels(n).map(([p, q]) => [dollars(p), formatScaled(q, 2)]);
    const no = book.asks.levels(n).map(([p, q]) => [dollars(10000 - p), formatScaled(q, 2)]);
    return { yes_dollars: yes.reverse(), no_dollars: no.reverse() };
  };
  const depthOf = (req: SimRequest) => {
    const depth = intParam(req.params, 'depth');
    return depth === null || (depth !== undefined && (depth < 0 || depth > 100)) ? null : depth;
  };
  const orderbookAuth = opts.assumptions.kalshiOrderbookRequiresAuth ? authed : 'none';

  // [U] shape: "Get Multiple Market Orderbooks" exists in Kalshi's docs (upstreams.md §4); the per-market entry
  // carries the ticker and the same `orderbook_fp` as the single-market endpoint. Registered before
  // /markets/:ticker so `orderbooks` is not taken for a ticker.
  r.get(
    '/markets/orderbooks',
    (req) => {
      const depth = depthOf(req);
      if (depth === null) return badRequest('depth must be between 0 and 100');
      const tickers = (req.params.get('tickers') ?? '').split(',').filter((t) => t !== '');
      if (tickers.length === 0 || tickers.length > 100) return badRequest('tickers must name 1 to 100 markets');
      const orderbooks = [];
      for (const ticker of tickers) {
        const book = orderbookFp(ticker, depth);
        if (!book) return kalshiErrors.notFound(req);
        orderbooks.push({ ticker, orderbook_fp: book });
      }
      return json(200, { orderbooks });
    },
    orderbookAuth,
  );

  r.get('/markets/:ticker', (req) => {
    const m = catalog.marketsByTicker.get(req.pathParams.ticker as string);
    return m ? json(200, { market: marketJson(m) }) : kalshiErrors.notFound(req);
  });

  r.get(
    '/markets/:ticker/orderbook',
    (req) => {
      const depth = depthOf(req);
      if (depth === null) return badRequest('depth must be between 0 and 100');
      const book = orderbookFp(req.pathParams.ticker as string, depth);
      return book ? json(200, { orderbook_fp: book }) : kalshiErrors.notFound(req);
    },
    orderbookAuth,
  );

  r.get('/events', (req) => {
    let list = catalog.events;
    const se = req.params.get('series_ticker');
    if (se) list = list.filter((e) => e.series_ticker === se);
    const status = req.params.get('status');
    if (status && !['open', 'closed', 'settled'].includes(status)) return badRequest('invalid status');
    if (status && status !== 'open') list = [];
    const p = page(req, list, 200, 200);
    if (p.error) return p.error;
    const nested = req.params.get('with_nested_markets') === 'true';
    return json(200, {
      events: p.slice.map((e) => ({
        ...e,
        collateral_return_type: '',
        available_on_brokers: true,
        product_metadata: {},
        ...(nested
          ? { markets: catalog.markets.filter((m) => m.event_ticker === e.event_ticker).map(marketJson) }
          : {}),
      })),
      cursor: p.cursor,
    });
  });

  r.get('/events/multivariate', (req) => {
    const p = page(req, [], 200, 100);
    if (p.error) return p.error;
    return json(200, { events: [], cursor: '' });
  });

  r.get('/events/:event_ticker', (req) => {
    const e = catalog.events.find((x) => x.event_ticker === req.pathParams.event_ticker);
    if (!e) return kalshiErrors.notFound(req);
    return json(200, {
      event: { ...e, collateral_return_type: '', available_on_brokers: true, product_metadata: {} },
      markets: catalog.markets.filter((m) => m.event_ticker === e.event_ticker).map(marketJson),
    });
  });

  const seriesJson = (s: (typeof catalog.series)[number]) => ({
    ...s,
    settlement_sources: [{ name: 'Kalshi', url: 'https://kalshi.com' }],
    contract_url: `https://kalshi.com/series/${s.ticker.toLowerCase()}`,
    contract_terms_url: `https://kalshi.com/contract-terms/${s.ticker.toLowerCase()}`,
    fee_type: 'quadratic',
    fee_multiplier: 1,
    additional_prohibitions: [],
    product_metadata: {},
  });
  r.get('/series', (req) => {
    const cat = req.params.get('category');
    return json(200, { series: catalog.series.filter((s) => !cat || s.category === cat).map(seriesJson) });
  });
  r.get('/series/fee_changes', () =>
    json(200, {
      series_fee_change_arr: [
        {
          id: 'c0b5a7e2-1d2f-4f7e-9a51-3b1f1c2d4e5f',
          series_ticker: 'KXBTCD',
          fee_type: 'quadratic',
          fee_multiplier: 1,
          scheduled_ts: isoSeconds(day + 14 * DAY_MS),
        },
      ],
    }),
  );
  r.get('/series/:series_ticker', (req) => {
    const s = catalog.series.find((x) => x.ticker === req.pathParams.series_ticker);
    return s ? json(200, { series: seriesJson(s) }) : kalshiErrors.notFound(req);
  });

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
  r.get('/exchange/schedule', () =>
    json(200, {
      schedule: {
        standard_hours: [
          {
            start_time: isoSeconds(day - 30 * DAY_MS),
            end_time: isoSeconds(day + 365 * DAY_MS),
            monday: [{ open_time: '00:00', close_time: '23:59' }],
          },
        ],
        maintenance_windows: [],
      },
    }),
  );
  // upstreams.md lists it as public but advises treating it as private; the simulator requires a signature.
  r.get('/exchange/user_data_timestamp', () => json(200, { as_of_time: isoMillis(ctx.clock()) }), authed);

  r.get('/search/filters_by_sport', () =>
    json(200, {
      filters_by_sports: {
        Basketball: { competitions: { NBA: { scopes: ['Games', 'Futures'] } }, scopes: ['Games', 'Futures'] },
        Football: { competitions: { NFL: { scopes: ['Games'] } }, scopes: ['Games'] },
      },
      sport_ordering: ['Basketball', 'Football'],
    }),
  );
  r.get('/search/tags_by_categories', () =>
    json(200, {
      tags_by_categories: Object.fromEntries(
        [...new Set(catalog.series.map((s) => s.category))].map((c) => [
          c,
          catalog.series.filter((s) => s.category === c).flatMap((s) => s.tags),
        ]),
      ),
    }),
  );

  r.get('/historical/cutoff', () => {
    const cutoff = isoSeconds(day - 90 * DAY_MS);
    return json(200, {
      market_settled_ts: cutoff,
      trades_created_ts: cutoff,
      orders_updated_ts: cutoff,
      market_positions_last_updated_ts: cutoff,
    });
  });
  r.get('/historical/markets', () => json(200, { markets: [], cursor: '' }));
  r.get('/historical/fills', () => json(200, { fills: [], cursor: '' }), authed);
  r.get('/historical/orders', () => json(200, { orders: [], cursor: '' }), authed);

  r.get('/structured_targets', () =>
    json(200, {
      structured_targets: [
        {
          id: '5e3c1b9a-2f4d-4c8e-b7a1-9d0e6f2a3b4c',
          name: 'Los Angeles Lakers',
          type: 'basketball_team',
          details: { league: 'NBA', abbreviation: 'LAL' },
          source_id: 'lal',
          last_updated_ts: isoSeconds(day - DAY_MS),
        },
      ],
      cursor: '',
    }),
  );
  r.get('/incentive_programs', (req) => {
    const limit = intParam(req.params, 'limit');
    if (limit === null || (limit !== undefined && (limit < 1 || limit > 10000))) {
      return badRequest('limit must be between 1 and 10000');
    }
    return json(200, {
      incentive_programs: catalog.markets.slice(0, 2).map((m, i) => ({
        id: `ip-${i + 1}`,
        market_ticker: m.ticker,
        incentive_type: i === 0 ? 'liquidity' : 'volume',
        start_date: isoSeconds(day - DAY_MS),
        end_date: isoSeconds(day + 6 * DAY_MS),
        // [V] period_reward is in centi-cents.
        period_reward: 500000,
        paid_out: false,
        discount_factor_bps: 5000,
        target_size: 1000,
      })),
      next_cursor: '',
    });
  });

  r.get(
    '/portfolio/balance',
    () => json(200, { balance: 1_000_000, portfolio_value: 0, updated_ts: Math.floor(ctx.clock() / 1000) }),
    authed,
  );
  r.get('/portfolio/positions', () => json(200, { market_positions: [], event_positions: [], cursor: '' }), authed);
  r.get('/portfolio/orders', () => json(200, { orders: [], cursor: '' }), authed);
  r.get('/portfolio/fills', () => json(200, { fills: [], cursor: '' }), authed);
  r.get('/portfolio/settlements', () => json(200, { settlements: [], cursor: '' }), authed);

  return {
    router: r,
    errors: kalshiErrors,
    rejectInvalidOnPublic: opts.assumptions.rejectInvalidAuthOnPublicRoutes,
    verify: (input) =>
      verifyKalshi(input, {
        accessKey: credentials.kalshi.accessKey,
        publicKey: keys.kalshiPublicKey,
        toleranceMs: opts.assumptions.kalshiTimestampToleranceMs,
        now: ctx.clock,
      }),
  };
}
