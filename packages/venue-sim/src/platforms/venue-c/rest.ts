// https://developer.gemini.com/rest-api (market data) and /prediction-markets-spec (events)
import { formatScaled, formatScaledTrimmed, scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import type { Instrument, TimedTrade } from '../../book/types';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors, type SimRequest, type SimResponse } from '../../http/types';
import { type PlatformContext, boolParam, intParam } from '../context';
import type { GeminiCatalog, GeminiEvent } from './catalog';
import type { GeminiTrades } from './trades';

/** Error payload `{result: "error", reason, message}` [V] (developer.gemini.com/error-codes); reasons are [3P]/[U]. */
const geminiError = (status: number, reason: string, message: string) =>
  json(status, { result: 'error', reason, message });

const geminiErrors: PlatformErrors = {
  notFound: (req) => geminiError(404, 'EndpointNotFound', `API entry point \`${req.path}\` not found`),
  unauthorized: (reason) => geminiError(400, 'InvalidSignature', reason),
  rateLimited: () => geminiError(429, 'RateLimit', 'Requests were made too frequently'),
  serverError: (status) =>
    geminiError(status, status === 503 ? 'Maintenance' : 'ServerError', 'The server encountered an error'),
};

const TIMEFRAMES: Record<string, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '30m': 1_800_000,
  '1hr': 3_600_000,
  '6hr': 21_600_000,
  '1day': 86_400_000,
};

export function geminiHost(ctx: PlatformContext, catalog: GeminiCatalog, trades: GeminiTrades): SimHost {
  const { engine, opts } = ctx;
  const r = new Router();

  const lookup = (req: SimRequest): Instrument | SimResponse => {
    const raw = req.pathParams.symbol as string;
    const inst = catalog.bySymbol.get(raw.toUpperCase());
    return (
      inst ??
      geminiError(
        opts.assumptions.geminiUnknownSymbolStatus,
        'InvalidSymbol',
        `Supplied value '${raw}' is not a valid symbol`,
      )
    );
  };
  const isInst = (v: Instrument | SimResponse): v is Instrument => 'ticker' in v;

  const best = (inst: Instrument) => {
    const book = engine.book('venue-c', inst.ticker);
    const bid = book?.bids.best() ?? inst.initialMid - inst.tick;
    const ask = book?.asks.best() ?? inst.initialMid + inst.tick;
    return { bid, ask, last: Math.round((bid + ask) / 2 / inst.tick) * inst.tick };
  };
  const px = (inst: Instrument, p: number) => formatScaled(p, inst.priceDecimals);

  // Every instrument with a book: the spot pairs (BTCUSD, ETHUSD, …) and the prediction contracts (GEMI-…), lower
  // case [3P]. ccxt builds its spot markets from this list (base/quote by suffix, or from the details below).
  r.get('/v1/symbols', () =>
    json(
      200,
      [...catalog.bySymbol.keys()].map((s) => s.toLowerCase()),
    ),
  );
  r.get('/v1/symbols/details/:symbol', (req) => {
    const inst = lookup(req);
    if (!isInst(inst)) return inst;
    const spot = catalog.spot.find((s) => s.symbol === inst.ticker);
    // [3P] `tick_size` is the quantity increment and `quote_increment` the price tick (both JSON numbers). Only
    // derivatives carry `product_type`/`contract_type`/`contract_price_currency` (ccxt reads the latter as "this is
    // a swap"), so spot pairs do not; what the prediction contracts' details hold is [U].
    return json(200, {
      symbol: inst.ticker,
      base_currency: spot?.base ?? inst.ticker,
      quote_currency: 'USD',
      tick_size: scaledNumber(1, inst.qtyDecimals),
      quote_increment: scaledNumber(1, inst.priceDecimals),
      min_order_size: formatScaledTrimmed(1, inst.qtyDecimals),
      status: 'open',
      wrap_enabled: false,
      ...(spot ? {} : { product_type: 'prediction', contract_type: 'binary', contract_price_currency: 'USD' }),
    });
  });
  r.get('/v1/pubticker/:symbol', (req) => {
    const inst = lookup(req);
    if (!isInst(inst)) return inst;
    const b = best(inst);
    const spot = catalog.spot.find((s) => s.symbol === inst.ticker);
    // 24 h volume in the base currency, and in USD at the last price (exact: lots × ticks, cut to cents).
    const baseLots = 12_345_678 * 10 ** Math.max(0, inst.qtyDecimals - 4);
    const usdCents = (BigInt(baseLots) * BigInt(b.last)) / 10n ** BigInt(inst.qtyDecimals + inst.priceDecimals - 2);
    return json(200, {
      bid: px(inst, b.bid),
      ask: px(inst, b.ask),
      volume: {
        [spot?.base ?? inst.ticker]: formatScaled(baseLots, inst.qtyDecimals),
        USD: formatScaled(Number(usdCents), 2),
        timestamp: ctx.clock(),
      },
      last: px(inst, b.last),
    });
  });
  r.get('/v2/ticker/:symbol', (req) => {
    const inst = lookup(req);
    if (!isInst(inst)) return inst;
    const b = best(inst);
    const closes = hourly(inst, b.last, 24, opts.seed);
    return json(200, {
      symbol: inst.ticker,
      open: px(inst, closes[0] as number),
      high: px(inst, Math.max(...closes)),
      low: px(inst, Math.min(...closes)),
      close: px(inst, b.last),
      changes: closes.map((c) => px(inst, c)),
      bid: px(inst, b.bid),
      ask: px(inst, b.ask),
    });
  });
  // [3P] every symbol's last price and its change over 24 h (a fraction, 4 decimals), pairs upper case.
  r.get('/v1/pricefeed', () =>
    json(
      200,
      [...catalog.bySymbol.values()].map((inst) => {
        const last = best(inst).last;
        const open = hourly(inst, last, 24, opts.seed)[0] as number;
        return {
          pair: inst.ticker,
          price: px(inst, last),
          percentChange24h: formatScaled(Math.round(((last - open) * 10_000) / open), 4),
        };
      }),
    ),
  );
  r.get('/v1/book/:symbol', (req) => {
    const inst = lookup(req);
    if (!isInst(inst)) return inst;
    const lb = intParam(req.params, 'limit_bids');
    const la = intParam(req.params, 'limit_asks');
    if (lb === null || la === null || (lb ?? 0) < 0 || (la ?? 0) < 0) {
      return geminiError(400, 'InvalidParameter', 'limit_bids and limit_asks must be non-negative integers');
    }
    const book = engine.book('venue-c', inst.ticker);
    const ts = String(Math.floor(ctx.clock() / 1000));
    // [V] default 50 levels per side; 0 means all.
    const side = (s: 'bids' | 'asks', limit: number | undefined) =>
      (book ? book[s].levels(limit === 0 ? Infinity : (limit ?? 50)) : []).map(([p, q]) => ({
        price: px(inst, p),
        amount: formatScaled(q, inst.qtyDecimals),
        timestamp: ts,
      }));
    return json(200, { bids: side('bids', lb), asks: side('asks', la) });
  });
  /**
   * [V] newest first, at most 500 (default 50); `since_tid` (trades with a greater tid: the next `limit_trades` after
   * it, so a walk goes forward; "trumps timestamp"), else `timestamp` (alias `since`; seconds or milliseconds [3P]:
   * the newest trades at or after it), `include_breaks` (adds `broken`). The books' own trades, as far back as the
   * simulator retains them (`historyRetentionMs`; Gemini's own limit, 7 days, is longer).
   */
  r.get('/v1/trades/:symbol', (req) => {
    const inst = lookup(req);
    if (!isInst(inst)) return inst;
    const limit = intParam(req.params, 'limit_trades');
    const sinceTid = intParam(req.params, 'since_tid');
    const since = intParam(req.params, req.params.has('timestamp') ? 'timestamp' : 'since');
    const breaks = boolParam(req.params, 'include_breaks');
    if (limit === null || (limit !== undefined && limit < 1))
      return geminiError(400, 'InvalidParameter', 'limit_trades must be a positive integer');
    if (sinceTid === null || (sinceTid !== undefined && sinceTid < 0))
      return geminiError(400, 'InvalidParameter', 'since_tid must be a non-negative integer');
    if (since === null || (since !== undefined && since < 0))
      return geminiError(400, 'InvalidParameter', 'timestamp must be a non-negative integer (seconds or ms)');
    if (breaks === null) return geminiError(400, 'InvalidParameter', 'include_breaks must be true or false');
    const n = Math.min(500, limit ?? 50);
    const log = engine.tradeLog('venue-c', inst.ticker);
    if (!log) return json(200, []);
    let from: number;
    let to: number;
    if (sinceTid !== undefined) {
      from = Math.max(log.firstTradeNo, trades.firstNoAfter(inst.ticker, sinceTid));
      to = Math.min(log.lastTradeNo, from + n - 1);
    } else {
      // Below 10^11 a timestamp is in seconds (that is the year 5138 in milliseconds).
      const sinceMs = since === undefined ? -Infinity : since < 1e11 ? since * 1000 : since;
      to = log.lastTradeNo;
      from = Math.max(log.firstTradeNo, log.tradeNoAtOrAfter(sinceMs), to - n + 1);
    }
    const out: Record<string, unknown>[] = [];
    for (let no = to; no >= from; no--) out.push(trades.rest(inst, log.trade(no) as TimedTrade, breaks === true));
    return json(200, out);
  });
  r.get('/v2/candles/:symbol/:tf', (req) => {
    const inst = lookup(req);
    if (!isInst(inst)) return inst;
    const tf = req.pathParams.tf as string;
    const step = Object.hasOwn(TIMEFRAMES, tf) ? TIMEFRAMES[tf] : undefined;
    if (!step)
      return geminiError(400, 'InvalidParameter', `Supplied value '${req.pathParams.tf}' is not a valid time frame`);
    const closes = hourly(inst, best(inst).last, 60, opts.seed + step);
    const now = Math.floor(ctx.clock() / step) * step;
    const scale = 10 ** inst.priceDecimals;
    // Gemini candles are JSON numbers: [ms, open, high, low, close, volume], newest first.
    return json(
      200,
      closes
        .map((c, i) => {
          const o = closes[i - 1] ?? c;
          return [
            now - (closes.length - 1 - i) * step,
            o / scale,
            Math.max(o, c) / scale,
            Math.min(o, c) / scale,
            c / scale,
            (i + 1) * 1.5,
          ];
        })
        .reverse(),
    );
  });

  const eventJson = (e: GeminiEvent) => ({
    id: e.id,
    title: e.title,
    slug: e.slug,
    description: e.description,
    imageUrl: `https://www.gemini.com/images/prediction-markets/${e.slug}.png`,
    type: e.type,
    category: e.category,
    series: e.series,
    ticker: e.ticker,
    status: e.status,
    resolvedAt: null,
    createdAt: e.createdAt,
    expiryDate: e.expiryDate,
    contracts: e.contracts.map((c) => {
      const inst = catalog.bySymbol.get(c.instrumentSymbol);
      const book = inst ? engine.book('venue-c', inst.ticker) : undefined;
      const bid = book?.bids.best();
      const ask = book?.asks.best();
      const p = (v: number | undefined) => (v === undefined ? null : formatScaled(v, 2));
      return {
        id: c.id,
        label: c.label,
        abbreviatedName: c.abbreviatedName,
        instrumentSymbol: c.instrumentSymbol,
        status: 'active',
        prices: {
          bestBid: p(bid),
          bestAsk: p(ask),
          lastTradePrice: p(bid),
          buy: { yes: p(ask), no: bid === undefined ? null : formatScaled(100 - bid, 2) },
          sell: { yes: p(bid), no: ask === undefined ? null : formatScaled(100 - ask, 2) },
        },
      };
    }),
  });

  r.get('/v1/prediction-markets/categories', () => json(200, { categories: catalog.categories }));
  r.get('/v1/prediction-markets/events', (req) => {
    const limit = intParam(req.params, 'limit');
    const offset = intParam(req.params, 'offset');
    if (limit === null || offset === null || (limit !== undefined && (limit < 1 || limit > 500)) || (offset ?? 0) < 0) {
      return geminiError(400, 'InvalidParameter', 'limit must be 1-500 and offset non-negative');
    }
    const statuses = [...req.params.getAll('status'), ...req.params.getAll('status[]')];
    const categories = [...req.params.getAll('category'), ...req.params.getAll('category[]')];
    const search = (req.params.get('search') ?? '').toLowerCase();
    const list = catalog.events.filter(
      (e) =>
        (!statuses.length || statuses.includes(e.status)) &&
        (!categories.length || categories.includes(e.category)) &&
        (!search || e.title.toLowerCase().includes(search) || e.ticker.toLowerCase().includes(search)),
    );
    const o = offset ?? 0;
    const n = limit ?? 50;
    return json(200, {
      data: list.slice(o, o + n).map(eventJson),
      pagination: { limit: n, offset: o, total: list.length },
    });
  });
  r.get('/v1/prediction-markets/events/:eventTicker', (req) => {
    const e = catalog.events.find((x) => x.ticker === req.pathParams.eventTicker);
    return e
      ? json(200, eventJson(e))
      : geminiError(404, 'EventNotFound', `Event ${req.pathParams.eventTicker} not found`);
  });

  return { router: r, errors: geminiErrors };
}

/** Deterministic hourly closes ending at `last` (a small walk on the tick grid). */
function hourly(inst: Instrument, last: number, n: number, seed: number): number[] {
  const rng = new Rng(seed, 'gemini', 'closes', inst.ticker);
  const out = [last];
  for (let i = 1; i < n; i++) {
    const prev = out[0] as number;
    const next = Math.min(
      inst.maxPrice,
      Math.max(inst.minPrice, prev + rng.range(-inst.window, inst.window) * inst.tick),
    );
    out.unshift(next);
  }
  return out;
}
