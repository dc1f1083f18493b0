// https://docs.polymarket.com/api-reference/orderbook/get-order-book (CLOB)
import { createHash } from 'node:crypto';
import { formatScaled, formatScaledTrimmed } from '../../core/decimal';
import { Rng } from '../../core/rng';
import type { IntBook } from '../../book/types';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors, type SimRequest, type SimResponse, text } from '../../http/types';
import type { PlatformContext } from '../context';
import type { GammaMarketDef, PolymarketCatalog } from '../venue-a/catalog';
import { verifyClob } from './clob-auth';

/** `{"error": ...}` bodies [3P] (captured 400/401/404); the unknown-route 404 is Go's default text [U]. */
export const clobErrors: PlatformErrors = {
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

export function clobHost(ctx: PlatformContext, catalog: PolymarketCatalog): SimHost {
  const { engine, opts, credentials } = ctx;
  const r = new Router();

  /** The book of a token: its own process for YES, the YES book mirrored at 1 − p for NO. */
  const bookOf = (tokenId: string): { market: GammaMarketDef; book: IntBook } | undefined => {
    const t = catalog.tokens.get(tokenId);
    if (!t) return undefined;
    const live = engine.book('clob', t.market.tokens[0]);
    if (!live) return undefined;
    const yes: IntBook = { bids: live.bids.levels(), asks: live.asks.levels() };
    if (t.yes) return { market: t.market, book: yes };
    return {
      market: t.market,
      book: { bids: yes.asks.map(([p, q]) => [100 - p, q]), asks: yes.bids.map(([p, q]) => [100 - p, q]) },
    };
  };
  const token = (req: SimRequest, name = 'token_id'): string | SimResponse => {
    const id = req.params.get(name);
    if (!id || !/^\d+$/.test(id)) return json(400, { error: 'Invalid token id' });
    return id;
  };
  const missing = () => json(404, { error: 'No orderbook exists for the requested token id' });
  const px = (p: number) => formatScaled(p, 2);

  const bookJson = (tokenId: string, market: GammaMarketDef, book: IntBook) => {
    // [3P] bids ascend and asks descend: the best price comes last on both sides.
    const bids = [...book.bids].reverse().map(([p, q]) => ({ price: px(p), size: formatScaledTrimmed(q, 2) }));
    const asks = [...book.asks].reverse().map(([p, q]) => ({ price: px(p), size: formatScaledTrimmed(q, 2) }));
    const hash = createHash('sha1')
      .update(JSON.stringify([tokenId, bids, asks]))
      .digest('hex');
    return {
      market: market.conditionId,
      asset_id: tokenId,
      timestamp: String(ctx.clock()),
      hash,
      bids,
      asks,
      min_order_size: '5',
      tick_size: '0.01',
      neg_risk: false,
      last_trade_price: px(book.bids[0]?.[0] ?? market.cents),
    };
  };

  r.get('/', () => json(200, 'OK'));
  r.get('/time', () => json(200, Math.floor(ctx.clock() / 1000)));
  r.get('/book', (req) => {
    const id = token(req);
    if (typeof id !== 'string') return id;
    const b = bookOf(id);
    return b ? json(200, bookJson(id, b.market, b.book)) : missing();
  });
  r.post('/books', (req) => {
    let body: unknown;
    try {
      body = JSON.parse(req.body.toString('utf8'));
    } catch {
      return json(400, { error: 'Invalid payload' });
    }
    if (!Array.isArray(body)) return json(400, { error: 'Invalid payload' });
    const out = [];
    for (const item of body as Array<{ token_id?: unknown }>) {
      const id = typeof item?.token_id === 'string' ? item.token_id : '';
      const b = bookOf(id);
      if (b) out.push(bookJson(id, b.market, b.book));
    }
    return json(200, out);
  });
  r.get('/price', (req) => {
    const id = token(req);
    if (typeof id !== 'string') return id;
    const side = (req.params.get('side') ?? '').toUpperCase();
    if (side !== 'BUY' && side !== 'SELL') return json(400, { error: 'Invalid side' });
    const b = bookOf(id);
    if (!b) return missing();
    const bid = b.book.bids[0]?.[0];
    const ask = b.book.asks[0]?.[0];
    const buyIsBid = opts.assumptions.clobBuyPriceIsBestBid;
    const p = side === 'BUY' ? (buyIsBid ? bid : ask) : buyIsBid ? ask : bid;
    return p === undefined ? missing() : json(200, { price: px(p) });
  });
  r.get('/midpoint', (req) => {
    const id = token(req);
    if (typeof id !== 'string') return id;
    const b = bookOf(id);
    const bid = b?.book.bids[0]?.[0];
    const ask = b?.book.asks[0]?.[0];
    if (bid === undefined || ask === undefined) return missing();
    return json(200, { mid: formatScaledTrimmed((bid + ask) * 5, 3) });
  });
  r.get('/spread', (req) => {
    const id = token(req);
    if (typeof id !== 'string') return id;
    const b = bookOf(id);
    const bid = b?.book.bids[0]?.[0];
    const ask = b?.book.asks[0]?.[0];
    if (bid === undefined || ask === undefined) return missing();
    return json(200, { spread: formatScaledTrimmed(ask - bid, 2) });
  });
  r.get('/last-trade-price', (req) => {
    const id = token(req);
    if (typeof id !== 'string') return id;
    const b = bookOf(id);
    const bid = b?.book.bids[0]?.[0];
    return bid === undefined ? missing() : json(200, { price: px(bid), side: 'SELL' });
  });
  r.get('/tick-size', (req) => {
    const id = token(req);
    if (typeof id !== 'string') return id;
    return bookOf(id) ? json(200, { minimum_tick_size: 0.01 }) : missing();
  });
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
      const span = INTERVALS[interval];
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
    const mid2 = (b.book.bids[0]?.[0] ?? 50) + (b.book.asks[0]?.[0] ?? 50);
    let p = mid2 * 5;
    const points: Array<{ t: number; p: number }> = [];
    for (let t = Math.floor(end / step) * step; t >= start && points.length < 5000; t -= step) {
      points.push({ t, p: p / 1000 });
      p = Math.min(990, Math.max(10, p + rng.range(-5, 5)));
    }
    return json(200, { history: points.reverse() });
  });
  r.get('/markets/:condition_id', (req) => {
    const m = catalog.markets.find((x) => x.conditionId === req.pathParams.condition_id);
    if (!m) return json(404, { error: 'market not found' });
    return json(200, {
      condition_id: m.conditionId,
      question_id: m.questionId,
      question: m.question,
      market_slug: m.slug,
      end_date_iso: m.endDate,
      active: true,
      closed: false,
      accepting_orders: true,
      enable_order_book: true,
      minimum_tick_size: 0.01,
      minimum_order_size: 5,
      neg_risk: false,
      tokens: [
        { token_id: m.tokens[0], outcome: 'Yes', price: m.cents / 100, winner: false },
        { token_id: m.tokens[1], outcome: 'No', price: (100 - m.cents) / 100, winner: false },
      ],
    });
  });

  // Private ledger (L2).
  const ledger = () => json(200, { data: [], next_cursor: 'LTE=', limit: 100, count: 0 });
  r.get('/data/orders', ledger, 'required');
  r.get('/data/trades', ledger, 'required');
  r.get('/data/order/:id', () => json(404, { error: 'order not found' }), 'required');
  r.get('/trades', () => json(200, []), 'required');
  r.get('/balance-allowance', () => json(200, { balance: '0', allowances: {} }), 'required');
  // [V] clob-client `areOrdersScoring`: a JSON array of order ids, signed with the body; `{id: scoring}`. No order
  // of the simulator is ever scoring.
  r.post(
    '/orders-scoring',
    (req) => {
      let ids: unknown;
      try {
        ids = JSON.parse(req.body.toString('utf8'));
      } catch {
        return json(400, { error: 'Invalid payload' });
      }
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))
        return json(400, { error: 'Invalid payload' });
      return json(200, Object.fromEntries(ids.map((id) => [id, false])));
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
