// https://docs.polymarket.com/api-reference/orderbook/get-order-book (CLOB)
import { formatScaledTrimmed, scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors, type SimRequest, type SimResponse, text } from '../../http/types';
import type { PlatformContext } from '../context';
import { accountRoutes } from './account';
import { type ClobBooks, clobPrice, type TokenBook } from './books';
import { verifyClob } from './clob-auth';
import { ClobMarkets } from './markets';
import type { ClobTrades } from './trades';

/** `{"error": ...}` bodies [3P] (captured 400/401/404); the unknown-route 404 is Go's default text [U]. */
const clobErrors: PlatformErrors = {
  notFound: () => text(404, '404 page not found'),
  unauthorized: () => json(401, { error: 'Unauthorized/Invalid api key' }),
  rateLimited: () => json(429, { error: 'Too Many Requests' }),
  serverError: (status) => json(status, { error: 'internal error' }),
};

const INTERVALS: Record<string, number> = {
  '1h': 3600,
  '6h': 21_600,
  '1d': 86_400,
  '1w': 604_800,
  '1m': 2_592_000,
  max: 2_678_400,
  all: 2_678_400,
};

/** Items one batch request may carry [V] (docs: "Maximum 500 token IDs can be requested per call"). */
const MAX_BATCH = 500;

type Side = 'BUY' | 'SELL';

/** `/last-trade-price` for a token without trades [V]: "Returns default values of "0.5" for price and empty string for side". */
const NO_TRADE = { price: '0.5', side: '' } as const;

export function clobHost(ctx: PlatformContext, books: ClobBooks, trades: ClobTrades): SimHost {
  const { opts, credentials } = ctx;
  const r = new Router();
  const markets = new ClobMarkets(ctx, books, trades);

  const bookOf = (tokenId: string) => books.tokenBook(tokenId);
  const token = (req: SimRequest, name = 'token_id'): string | SimResponse => {
    const id = req.params.get(name);
    if (!id || !/^\d+$/.test(id)) return json(400, { error: 'Invalid token id' });
    return id;
  };
  const missing = () => json(404, { error: 'No orderbook exists for the requested token id' });

  // The quotes every price route derives from a token's book (one definition each, for GET and POST alike).
  const bestBid = (b: TokenBook) => b.book.bids[0]?.[0];
  const bestAsk = (b: TokenBook) => b.book.asks[0]?.[0];
  /** `side=BUY` is the price a buyer is quoted; which book side that is, is [U] (`clobBuyPriceIsBestBid`). */
  const priceOf = (b: TokenBook, side: Side) => {
    const buyIsBid = opts.assumptions.clobBuyPriceIsBestBid;
    return side === 'BUY' ? (buyIsBid ? bestBid(b) : bestAsk(b)) : buyIsBid ? bestAsk(b) : bestBid(b);
  };
  const midOf = (b: TokenBook) => {
    const bid = bestBid(b);
    const ask = bestAsk(b);
    return bid === undefined || ask === undefined ? undefined : formatScaledTrimmed((bid + ask) * 5, 3);
  };
  const spreadOf = (b: TokenBook) => {
    const bid = bestBid(b);
    const ask = bestAsk(b);
    return bid === undefined || ask === undefined ? undefined : formatScaledTrimmed(ask - bid, 2);
  };
  /**
   * The token's last trade: its price and the taker's side (the book's `last_trade_price`, the channel's
   * `last_trade_price` events). Without one, the documented default: "0.5" and an empty side [V].
   */
  const lastTradeOf = (id: string): { price: string; side: Side | '' } => books.lastTrade(id) ?? NO_TRADE;

  /** A GET on one token: 400 for a malformed id, 404 for an unknown token or a book side without the price. */
  const perToken = (derive: (b: TokenBook, id: string) => object | undefined) => (req: SimRequest) => {
    const id = token(req);
    if (typeof id !== 'string') return id;
    const b = bookOf(id);
    const out = b && derive(b, id);
    return out === undefined ? missing() : json(200, out);
  };

  r.get('/', () => json(200, 'OK'));
  r.get('/time', () => json(200, Math.floor(ctx.clock() / 1000)));
  r.get(
    '/book',
    perToken((_b, id) => books.summary(id)),
  );
  r.get('/price', (req) => {
    const side = (req.params.get('side') ?? '').toUpperCase();
    if (side !== 'BUY' && side !== 'SELL') return json(400, { error: 'Invalid side' });
    return perToken((b) => {
      const p = priceOf(b, side);
      return p === undefined ? undefined : { price: clobPrice(p) };
    })(req);
  });
  r.get(
    '/midpoint',
    perToken((b) => {
      const mid = midOf(b);
      return mid === undefined ? undefined : { mid };
    }),
  );
  r.get(
    '/spread',
    perToken((b) => {
      const spread = spreadOf(b);
      return spread === undefined ? undefined : { spread };
    }),
  );
  r.get(
    '/last-trade-price',
    perToken((_b, id) => lastTradeOf(id)),
  );
  r.get(
    '/tick-size',
    perToken((b) => ({ minimum_tick_size: Number(books.tickSize(b.market)) })),
  );
  // clob-client's order creation reads these two first [V]: neg_risk picks the exchange contract to sign for.
  r.get(
    '/neg-risk',
    perToken((b) => ({ neg_risk: b.market.negRisk })),
  );
  // [V] base fee in basis points; Polymarket charges none on these markets (the market objects' fees say 0 too).
  r.get(
    '/fee-rate',
    perToken(() => ({ base_fee: 0 })),
  );
  r.get('/prices-history', (req) => {
    const id = token(req, 'market');
    if (typeof id !== 'string') return json(400, { error: "invalid filters: 'market' is required" });
    const b = bookOf(id);
    if (!b) return json(200, { history: [] });
    const interval = req.params.get('interval');
    const fidelity = Number(req.params.get('fidelity') ?? 1);
    if (!Number.isInteger(fidelity) || fidelity < 1)
      return json(400, { error: "invalid filters: 'fidelity' is invalid" });
    const now = Math.floor(ctx.clock() / 1000);
    let start: number;
    let end: number;
    if (interval) {
      const span = Object.hasOwn(INTERVALS, interval) ? INTERVALS[interval] : undefined;
      if (!span) return json(400, { error: `invalid filters: 'interval' is invalid` });
      start = now - span;
      end = now;
    } else {
      start = Number(req.params.get('startTs') ?? now - 86_400);
      end = Number(req.params.get('endTs') ?? now);
      if (!Number.isInteger(start) || !Number.isInteger(end) || end < start) {
        return json(400, { error: 'invalid filters: startTs/endTs' });
      }
      // [3P] windows are capped at 15 days.
      if (end - start > 1_296_000)
        return json(400, { error: "invalid filters: 'startTs' and 'endTs' interval is too long" });
    }
    const step = fidelity * 60;
    const rng = new Rng(opts.seed, 'clob', 'history', id);
    let p = ((bestBid(b) ?? 50) + (bestAsk(b) ?? 50)) * 5;
    const points: Array<{ t: number; p: number }> = [];
    for (let t = Math.floor(end / step) * step; t >= start && points.length < 5000; t -= step) {
      points.push({ t, p: scaledNumber(p, 3) });
      p = Math.min(990, Math.max(10, p + rng.range(-5, 5)));
    }
    // The docs (and ccxt) read `{history: [...]}`; clob-client 5.8 types a bare MarketPrice[] (the docs win).
    return json(200, { history: points.reverse() });
  });

  // Batch reads by query string [V] (the GET twins of the POSTs below): comma-separated `token_ids`.
  const tokenIds = (req: SimRequest): string[] | SimResponse => {
    const ids = (req.params.get('token_ids') ?? '').split(',').filter(Boolean);
    if (ids.length === 0 || ids.length > MAX_BATCH || !ids.every((x) => /^\d+$/.test(x))) {
      return json(400, { error: 'Invalid token ids' });
    }
    return ids;
  };
  r.get('/midpoints', (req) => {
    const ids = tokenIds(req);
    return Array.isArray(ids) ? json(200, midpoints(ids.map((token_id) => ({ token_id })))) : ids;
  });
  r.get('/last-trades-prices', (req) => {
    const ids = tokenIds(req);
    return Array.isArray(ids) ? json(200, lastTrades(ids.map((token_id) => ({ token_id })))) : ids;
  });
  r.get('/prices', (req) => {
    const ids = tokenIds(req);
    if (!Array.isArray(ids)) return ids;
    const sides = (req.params.get('sides') ?? '').split(',');
    if (sides.length !== ids.length || !sides.every((s) => s === 'BUY' || s === 'SELL')) {
      return json(400, { error: 'Invalid sides: one of BUY or SELL per token id, comma-separated' });
    }
    return json(200, prices(ids.map((token_id, i) => ({ token_id, side: sides[i] as Side }))));
  });

  markets.register(r);
  const account = accountRoutes(r, ctx, markets);

  // -------------------------------------------------------------------------------------------------------------
  // POST routes. The read-only batch reads [V] take a JSON array of `{token_id, side?}` (clob-client
  // getOrderBooks/getMidpoints/getPrices/getSpreads/getLastTradesPrices, ccxt polymarket fetchTickers) and answer
  // exactly what the single-token GETs above answer for each token; unknown tokens are left out. The L2
  // `/orders-scoring` signs its body. Further POST routes belong in this block.
  // -------------------------------------------------------------------------------------------------------------

  interface BookParam {
    token_id: string;
    side?: Side;
  }

  /**
   * The batch body: 400 `Invalid payload` unless a JSON array of objects with a numeric `token_id`; more than 500 is
   * 400 `Payload exceeds the limit` [V] (docs.polymarket.com/resources/error-codes).
   */
  const batchBody = (req: SimRequest, sideRequired: boolean): BookParam[] | SimResponse => {
    let body: unknown;
    try {
      body = JSON.parse(req.body.toString('utf8'));
    } catch {
      return json(400, { error: 'Invalid payload' });
    }
    if (!Array.isArray(body)) return json(400, { error: 'Invalid payload' });
    if (body.length > MAX_BATCH) return json(400, { error: 'Payload exceeds the limit' });
    const out: BookParam[] = [];
    for (const item of body as unknown[]) {
      const { token_id: id, side } = (item ?? {}) as { token_id?: unknown; side?: unknown };
      if (typeof id !== 'string' || !/^\d+$/.test(id)) return json(400, { error: 'Invalid token id' });
      if (side !== undefined && side !== 'BUY' && side !== 'SELL') return json(400, { error: 'Invalid side' });
      if (sideRequired && side === undefined) return json(400, { error: 'Invalid side' });
      out.push({ token_id: id, ...(side !== undefined ? { side } : {}) });
    }
    return out;
  };
  const known = (params: BookParam[]) =>
    params.flatMap((p) => {
      const b = bookOf(p.token_id);
      return b ? [{ ...p, b }] : [];
    });
  /** `{token_id: mid}` [V]. */
  function midpoints(params: BookParam[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const { token_id, b } of known(params)) {
      const mid = midOf(b);
      if (mid !== undefined) out[token_id] = mid;
    }
    return out;
  }
  /** `{token_id: {BUY?, SELL?}}`, prices as JSON numbers as the docs show them [V]. */
  function prices(params: Array<BookParam & { side: Side }>): Record<string, Partial<Record<Side, number>>> {
    const out: Record<string, Partial<Record<Side, number>>> = {};
    for (const { token_id, side, b } of known(params)) {
      const p = priceOf(b, side as Side);
      if (p !== undefined) (out[token_id] ??= {})[side as Side] = scaledNumber(p, 2);
    }
    return out;
  }
  /** `[{token_id, price, side}]` [V]. */
  function lastTrades(params: BookParam[]): Array<{ token_id: string; price: string; side: Side | '' }> {
    return known(params).map(({ token_id }) => ({ token_id, ...lastTradeOf(token_id) }));
  }
  const batch =
    (sideRequired: boolean, answer: (params: BookParam[]) => unknown) =>
    (req: SimRequest): SimResponse => {
      const params = batchBody(req, sideRequired);
      return Array.isArray(params) ? json(200, answer(params)) : params;
    };

  r.post(
    '/books',
    batch(false, (params) => known(params).map(({ token_id }) => books.summary(token_id))),
  );
  r.post('/midpoints', batch(false, midpoints));
  r.post(
    '/prices',
    batch(true, (params) => prices(params as Array<BookParam & { side: Side }>)),
  );
  r.post(
    '/spreads',
    batch(false, (params) => {
      const out: Record<string, string> = {};
      for (const { token_id, b } of known(params)) {
        const spread = spreadOf(b);
        if (spread !== undefined) out[token_id] = spread;
      }
      return out;
    }),
  );
  r.post('/last-trades-prices', batch(false, lastTrades));
  // L2, body signed: `["0x…", …]` → `{order id: scoring}` [V].
  r.post(
    '/orders-scoring',
    (req) => {
      let body: unknown;
      try {
        body = JSON.parse(req.body.toString('utf8'));
      } catch {
        body = undefined;
      }
      if (!Array.isArray(body) || !body.every((x) => typeof x === 'string')) {
        return json(400, { error: 'Invalid payload' });
      }
      return json(200, Object.fromEntries((body as string[]).map((id) => [id, account.isScoring(id)])));
    },
    'required',
  );

  return {
    router: r,
    errors: clobErrors,
    rejectInvalidOnPublic: opts.assumptions.rejectInvalidAuthOnPublicRoutes,
    verify: (input) =>
      verifyClob(input, {
        ...credentials.polymarketClob,
        signsQuery: opts.assumptions.clobSignsQuery,
        toleranceSec: opts.assumptions.clobTimestampToleranceSec,
        now: ctx.clock,
      }),
  };
}
