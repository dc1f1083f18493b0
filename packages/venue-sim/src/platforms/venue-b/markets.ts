// https://docs.kalshi.com/api-reference/market/get-markets, …/get-trades, …/get-market-candlesticks
import { DAY_MS, isoSeconds } from '../../core/time';
import { json, type SimRequest, type SimResponse } from '../../http/types';
import { CANDLE_PERIODS, type Candle, MAX_CANDLES, candles, periodCount } from './candles';
import type { KalshiListing, KalshiMarketDef } from './catalog';
import { badRequest, dollars, fp, kalshiErrors, type KalshiApi, Query, type RouteFamily } from './common';
import type { TapeTrade } from './tape';
import { kalshiTrade } from './trades';

/** The market as Kalshi's `Market` model has it [V] (every field 3.30 marks required, dollars and fixed-point). */
export function marketJson(api: KalshiApi, m: KalshiMarketDef): Record<string, unknown> {
  const { tape, ctx } = api;
  const settled = api.catalog.historical.marketsByTicker.has(m.ticker);
  const closeMs = Date.parse(m.close_time);
  // A settled market's figures are frozen at its close; a live one's are as of now.
  const asOf = settled ? closeMs - 1 : api.now();
  const dayAgo = asOf - DAY_MS;
  const openMs = Date.parse(m.open_time);
  let bid: number;
  let ask: number;
  let bidSize = 0;
  let askSize = 0;
  const book = settled ? undefined : ctx.engine.book('venue-b', m.ticker);
  if (book) {
    bid = book.bids.best() ?? 0;
    ask = book.asks.best() ?? 10000;
    bidSize = book.bids.get(bid);
    askSize = book.asks.get(ask);
  } else {
    ({ bid, ask } = tape.quoteAtTime(m.ticker, asOf));
  }
  const last = tape.lastTrade(m.ticker, asOf);
  const previous = dayAgo >= openMs ? tape.quoteAtTime(m.ticker, dayAgo) : { bid: 0, ask: 0 };
  const previousTrade = tape.lastTrade(m.ticker, dayAgo);
  const result = settled ? (bid + ask >= 10000 ? 'yes' : 'no') : '';
  return {
    ticker: m.ticker,
    event_ticker: m.event_ticker,
    market_type: 'binary',
    title: m.title,
    subtitle: '',
    yes_sub_title: m.yes_sub_title,
    no_sub_title: m.no_sub_title,
    created_time: m.open_time,
    // [V] "Time of the last non-trading metadata update": nothing about a catalogue market changes after creation.
    updated_time: m.open_time,
    open_time: m.open_time,
    close_time: m.close_time,
    expected_expiration_time: m.close_time,
    expiration_time: m.close_time,
    latest_expiration_time: isoSeconds(closeMs + 7 * DAY_MS),
    settlement_timer_seconds: SETTLEMENT_TIMER_SECONDS,
    status: settled ? 'finalized' : 'active',
    yes_bid_dollars: dollars(bid),
    yes_bid_size_fp: fp(bidSize),
    yes_ask_dollars: dollars(ask),
    yes_ask_size_fp: fp(askSize),
    no_bid_dollars: dollars(10000 - ask),
    no_ask_dollars: dollars(10000 - bid),
    last_price_dollars: dollars(last ? tape.price(last) : 0),
    volume_fp: fp(tape.cumulativeVolume(m.ticker, asOf)),
    volume_24h_fp: fp(tape.volume(m.ticker, api.now() - DAY_MS, api.now())),
    open_interest_fp: fp(settled ? 0 : tape.openInterest(m.ticker, asOf)),
    // [V] deprecated, "will always return 0.0000".
    liquidity_dollars: '0.0000',
    notional_value_dollars: '1.0000',
    previous_yes_bid_dollars: dollars(previous.bid),
    previous_yes_ask_dollars: dollars(previous.ask),
    previous_price_dollars: dollars(previousTrade ? tape.price(previousTrade) : 0),
    result,
    can_close_early: true,
    expiration_value: settled ? (result === 'yes' ? m.yes_sub_title : '') : '',
    ...(settled
      ? {
          settlement_value_dollars: result === 'yes' ? '1.0000' : '0.0000',
          settlement_ts: isoSeconds(closeMs + SETTLEMENT_TIMER_SECONDS * 1000),
        }
      : {}),
    rules_primary: m.rules_primary,
    rules_secondary: '',
    price_level_structure: 'linear_cent',
    price_ranges: [{ start: '0.0000', end: '1.0000', step: '0.0100' }],
    strike_type: m.strike_type,
    ...(m.floor_strike !== undefined ? { floor_strike: m.floor_strike } : {}),
    ...(m.cap_strike !== undefined ? { cap_strike: m.cap_strike } : {}),
    fractional_trading_enabled: true,
  };
}

export const SETTLEMENT_TIMER_SECONDS = 60;

const MARKET_STATUSES = ['unopened', 'open', 'paused', 'closed', 'settled'] as const;

/**
 * `/markets` and `/historical/markets` filters [V]: status, event_ticker (one), series_ticker, tickers (a comma
 * list), created/updated/close/settled time bounds (Unix seconds), mve_filter. Catalogue markets are open; the
 * historical ones settled.
 */
export function filterMarkets(q: Query, listing: KalshiListing, state: 'open' | 'settled'): KalshiMarketDef[] {
  const status = q.oneOf('status', MARKET_STATUSES);
  const mve = q.oneOf('mve_filter', ['only', 'exclude'] as const);
  const [minCreated, maxCreated, minUpdated, maxClose, minClose, minSettled, maxSettled] = [
    'min_created_ts',
    'max_created_ts',
    'min_updated_ts',
    'max_close_ts',
    'min_close_ts',
    'min_settled_ts',
    'max_settled_ts',
  ].map((n) => q.int(n));
  const event = q.get('event_ticker');
  const series = q.get('series_ticker');
  const tickers = q.commaList('tickers');
  const sec = (iso: string) => Date.parse(iso) / 1000;
  const within = (v: number, min: number | undefined, max: number | undefined) =>
    (min === undefined || v > min) && (max === undefined || v < max);
  const wantsSettled = minSettled !== undefined || maxSettled !== undefined;
  if ((status !== undefined && status !== state) || (wantsSettled && state !== 'settled') || mve === 'only') return [];
  return listing.markets.filter(
    (m) =>
      (!event || m.event_ticker === event) &&
      (!series || m.series_ticker === series) &&
      (tickers.length === 0 || tickers.includes(m.ticker)) &&
      within(sec(m.open_time), minCreated, maxCreated) &&
      within(sec(m.open_time), minUpdated, undefined) &&
      within(sec(m.close_time), minClose, maxClose) &&
      within(sec(m.close_time) + SETTLEMENT_TIMER_SECONDS, minSettled, maxSettled),
  );
}

/** Order of trades on a page: newest first; at the same millisecond by ticker, then the later (draw or number) first. */
function before(a: TapeTrade, b: TapeTrade): number {
  return b.ts - a.ts || (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0) || b.index - a.index;
}

type TradeKey = [number, string, number];

function encodeTradeCursor(t: TapeTrade): string {
  return Buffer.from(JSON.stringify([t.ts, t.ticker, t.index])).toString('base64url');
}

function decodeTradeCursor(cursor: string | null): TradeKey | null | undefined {
  if (!cursor) return undefined;
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown;
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string' && typeof v[2] === 'number') {
      return v as TradeKey;
    }
  } catch {
    // not a cursor of ours
  }
  return null;
}

/**
 * `/markets/trades` and `/historical/trades` [V]: a page of the trades in [fromMs, toMs] of every market (live and
 * settled) or of the one named by `ticker`, newest first. The two routes split the trades at the historical cutoff
 * (`trades_created_ts`), so together they hold each trade once. The cursor names the last trade returned, so a walk
 * neither repeats nor skips trades while new ones keep arriving at the head.
 */
export function tradePage(api: KalshiApi, req: SimRequest, fromMs: number, toMs: number): SimResponse {
  const { catalog } = api;
  const ticker = req.params.get('ticker');
  const all = [...catalog.markets, ...catalog.historical.markets].map((m) => m.ticker);
  const tickers = ticker ? all.filter((t) => t === ticker) : all;
  const q = new Query(req.params);
  const n = q.int('limit', 1, 1000) ?? 100;
  const block = q.bool('is_block_trade');
  const minTs = q.int('min_ts');
  const maxTs = q.int('max_ts');
  const cursor = decodeTradeCursor(req.params.get('cursor'));
  if (q.error) return q.error;
  if (cursor === null) return badRequest('invalid cursor');
  // Every simulated trade filled on the order book [V: block trades are matched off-book].
  if (block === true) return json(200, { trades: [], cursor: '' });
  const lo = Math.max(fromMs, minTs !== undefined ? minTs * 1000 : -Infinity);
  const hi = Math.min(toMs, maxTs !== undefined ? maxTs * 1000 + 999 : Infinity, cursor ? cursor[0] : Infinity);
  const mark = cursor ? ({ ts: cursor[0], ticker: cursor[1], index: cursor[2] } as TapeTrade) : undefined;
  const after = mark ? (t: TapeTrade) => before(t, mark) > 0 : undefined;
  // n + 1 of each market, then the newest n + 1 of them all: the extra one says whether a next page exists.
  const out = tickers.flatMap((t) => api.tape.newestFirst(t, lo, hi, n + 1, after)).sort(before);
  const page = out.slice(0, n);
  return json(200, {
    trades: page.map((t) => tradeJson(api, t)),
    cursor: out.length > n ? encodeTradeCursor(page[page.length - 1] as TapeTrade) : '',
  });
}

/** Kalshi's `Trade` [V] (trades.ts): `taker_outcome_side` and `taker_book_side`, and the deprecated `taker_side`. */
function tradeJson(api: KalshiApi, t: TapeTrade): Record<string, unknown> {
  return kalshiTrade.rest({
    id: api.tape.tradeId(t),
    ticker: t.ticker,
    ts: t.ts,
    yesPrice: api.tape.price(t),
    count: t.count,
    yes: t.yes,
  });
}

export interface CandleQuery {
  startTs: number;
  endTs: number;
  period: number;
  includeLatestBeforeStart: boolean;
}

/** Candlestick query parameters shared by the market, batch, event and historical routes [V]. */
export function candleParams(q: Query, maxCandles = MAX_CANDLES): CandleQuery {
  const v = {
    startTs: q.requiredInt('start_ts'),
    endTs: q.requiredInt('end_ts'),
    period: q.requiredInt('period_interval'),
    includeLatestBeforeStart: q.bool('include_latest_before_start') ?? false,
  };
  if (q.error) return v;
  if (!(CANDLE_PERIODS as readonly number[]).includes(v.period)) {
    q.error = badRequest('period_interval must be 1, 60 or 1440');
  } else if (v.endTs < v.startTs) {
    q.error = badRequest('end_ts must not be before start_ts');
  } else if (periodCount(v.startTs, v.endTs, v.period) > maxCandles) {
    q.error = badRequest(`at most ${maxCandles} candlesticks per market per request`);
  }
  return v;
}

/** Kalshi's live `MarketCandlestick` [V]: dollar strings, prices only for periods that traded. */
export function candleJson(c: Candle): Record<string, unknown> {
  const ohlc = (x: readonly number[]) => ({
    open_dollars: dollars(x[0] as number),
    low_dollars: dollars(x[2] as number),
    high_dollars: dollars(x[1] as number),
    close_dollars: dollars(x[3] as number),
  });
  return {
    end_period_ts: c.end,
    yes_bid: ohlc(c.bid),
    yes_ask: ohlc(c.ask),
    price: {
      ...(c.price
        ? {
            open_dollars: dollars(c.price.open),
            low_dollars: dollars(c.price.low),
            high_dollars: dollars(c.price.high),
            close_dollars: dollars(c.price.close),
            mean_dollars: dollars(c.price.mean),
          }
        : {}),
      ...(c.previous !== undefined ? { previous_dollars: dollars(c.previous) } : {}),
    },
    volume_fp: fp(c.volume),
    open_interest_fp: fp(c.openInterest),
  };
}

export const marketRoutes: RouteFamily = (r, api) => {
  const { catalog, ctx } = api;

  r.get('/markets', (req) => {
    const q = new Query(req.params);
    const list = filterMarkets(q, catalog, 'open');
    const page = q.page(list, 1000, 100);
    if (q.error) return q.error;
    return json(200, { markets: page.items.map((m) => marketJson(api, m)), cursor: page.cursor });
  });

  // [V] bids only, YES and NO, levels ascending by price; a YES ask at p is a NO bid at 1-p.
  const orderbookFp = (ticker: string, depth: number) => {
    const book = ctx.engine.book('venue-b', ticker);
    if (!book) return undefined;
    const n = depth > 0 ? depth : Infinity;
    const yes = book.bids.levels(n).map(([p, q]) => [dollars(p), fp(q)]);
    const no = book.asks.levels(n).map(([p, q]) => [dollars(10000 - p), fp(q)]);
    return { yes_dollars: yes.reverse(), no_dollars: no.reverse() };
  };
  // [V] "0 or negative means all levels, 1-100 for specific depth".
  const depthOf = (q: Query) => q.int('depth', Number.MIN_SAFE_INTEGER, 100) ?? 0;
  const orderbookAuth = ctx.opts.assumptions.kalshiOrderbookRequiresAuth ? 'required' : 'none';

  // [V] "Get Multiple Market Orderbooks": `tickers` is an array, sent as a repeated key (kalshi-typescript); a comma
  // list is read too. Registered before /markets/:ticker so `orderbooks` is not taken for a ticker.
  r.get(
    '/markets/orderbooks',
    (req) => {
      const q = new Query(req.params);
      const depth = depthOf(q);
      const tickers = [...new Set(q.array('tickers'))];
      if (q.error) return q.error;
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

  // Live trades are those at or after the historical cutoff [V] (the catalogue's live markets all open after it).
  r.get('/markets/trades', (req) => tradePage(api, req, catalog.cutoffMs, api.now()));

  r.get('/markets/candlesticks', (req) => {
    const q = new Query(req.params);
    const c = candleParams(q);
    const tickers = q.commaList('market_tickers');
    if (q.error) return q.error;
    if (tickers.length === 0 || tickers.length > 100) return badRequest('market_tickers must name 1 to 100 markets');
    if (tickers.some((t) => !catalog.marketsByTicker.has(t))) return kalshiErrors.notFound(req);
    // [U] a bound on the whole batch (Kalshi documents none).
    if (tickers.length * periodCount(c.startTs, c.endTs, c.period) > 2 * MAX_CANDLES) {
      return badRequest(`at most ${2 * MAX_CANDLES} candlesticks per request`);
    }
    const now = api.now();
    return json(200, {
      markets: tickers.map((ticker) => ({
        market_ticker: ticker,
        candlesticks: candles(api.tape, { ticker, ...c, now }).map(candleJson),
      })),
    });
  });

  r.get('/markets/:ticker', (req) => {
    const m = catalog.marketsByTicker.get(req.pathParams.ticker as string);
    return m ? json(200, { market: marketJson(api, m) }) : kalshiErrors.notFound(req);
  });

  r.get(
    '/markets/:ticker/orderbook',
    (req) => {
      const q = new Query(req.params);
      const depth = depthOf(q);
      if (q.error) return q.error;
      const book = orderbookFp(req.pathParams.ticker as string, depth);
      return book ? json(200, { orderbook_fp: book }) : kalshiErrors.notFound(req);
    },
    orderbookAuth,
  );

  r.get('/series/:series_ticker/markets/:ticker/candlesticks', (req) => {
    const m = catalog.marketsByTicker.get(req.pathParams.ticker as string);
    if (!m || m.series_ticker !== req.pathParams.series_ticker) return kalshiErrors.notFound(req);
    const q = new Query(req.params);
    const c = candleParams(q);
    if (q.error) return q.error;
    const list = candles(api.tape, { ticker: m.ticker, ...c, now: api.now() });
    return json(200, { ticker: m.ticker, candlesticks: list.map(candleJson) });
  });
};
