// https://docs.cdp.coinbase.com/exchange/reference (Exchange REST: products, currencies, time, private)
import { formatScaled, scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import { isoMillis } from '../../core/time';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors, type SimRequest } from '../../http/types';
import type { TimedTrade } from '../../book/types';
import { type PlatformContext, intParam } from '../context';
import { verifyCoinbase, type CoinbaseVerifier } from './auth';
import { CURRENCIES, type CoinbaseCatalog, type CoinbaseProduct } from './catalog';
import type { CoinbaseTrades } from './trades';

/** `{"message": ...}` bodies [3P] (`NotFound`, `Public rate limit exceeded`, `invalid signature`). */
const coinbaseErrors: PlatformErrors = {
  notFound: () => json(404, { message: 'NotFound' }),
  unauthorized: (reason) => json(401, { message: reason }),
  // [3P] the public text; [U] the private one, worded alike.
  rateLimited: (budget) =>
    json(429, { message: budget === 'authenticated' ? 'Private rate limit exceeded' : 'Public rate limit exceeded' }),
  serverError: (status) => json(status, { message: 'Internal server error' }),
};

const GRANULARITIES = [60, 300, 900, 3600, 21600, 86400];

export function coinbaseHost(ctx: PlatformContext, catalog: CoinbaseCatalog, trades: CoinbaseTrades): SimHost {
  const { engine, opts } = ctx;
  const verifier = coinbaseVerifier(ctx);
  const r = new Router();
  const px = (p: number) => formatScaled(p, 2);
  const sz = (p: CoinbaseProduct, q: number) => formatScaled(q, p.baseDecimals);

  const productJson = (p: CoinbaseProduct) => ({
    id: p.id,
    base_currency: p.base,
    quote_currency: p.quote,
    quote_increment: '0.01',
    base_increment: formatScaled(1, p.baseDecimals),
    display_name: `${p.base}-${p.quote}`,
    min_market_funds: '1',
    margin_enabled: false,
    post_only: false,
    limit_only: false,
    cancel_only: false,
    status: 'online',
    status_message: '',
    trading_disabled: false,
    fx_stablecoin: false,
    max_slippage_percentage: '0.02000000',
    auction_mode: false,
    high_bid_limit_percentage: '',
  });
  const products = JSON.stringify(catalog.products.map(productJson));
  const currencies = JSON.stringify(
    CURRENCIES.map((c) => ({
      id: c.id,
      name: c.name,
      min_size: c.min_size,
      status: 'online',
      message: '',
      max_precision: c.max_precision,
      convertible_to: c.id === 'USD' ? ['USDC'] : [],
      details: {
        type: c.type,
        symbol: c.id === 'USD' ? '$' : '',
        network_confirmations: c.type === 'crypto' ? 6 : 0,
        sort_order: 0,
        crypto_address_link: '',
        crypto_transaction_link: '',
        push_payment_methods: c.type === 'crypto' ? ['crypto'] : ['bank_wire'],
        min_withdrawal_amount: Number(c.minWithdrawal),
        max_withdrawal_amount: Number(c.maxWithdrawal),
      },
      default_network: c.network,
      supported_networks: c.network
        ? [
            {
              id: c.network,
              name: c.network,
              status: 'online',
              contract_address: '',
              min_withdrawal_amount: Number(c.minWithdrawal),
              max_withdrawal_amount: Number(c.maxWithdrawal),
            },
          ]
        : [],
    })),
  );

  const product = (req: SimRequest) => catalog.byId.get((req.pathParams.id as string).toUpperCase());
  const mid = (p: CoinbaseProduct) => {
    const b = engine.book('venue-d', p.id);
    const bid = b?.bids.best() ?? p.mid;
    const ask = b?.asks.best() ?? p.mid;
    return { bid, ask, last: Math.round((bid + ask) / 2) };
  };

  r.get('/products', () => ({ status: 200, body: products, contentType: 'application/json; charset=utf-8' }));
  r.get('/products/:id', (req) => {
    const p = product(req);
    return p ? json(200, productJson(p)) : coinbaseErrors.notFound(req);
  });
  r.get('/products/:id/ticker', (req) => {
    const p = product(req);
    if (!p) return coinbaseErrors.notFound(req);
    const m = mid(p);
    // The last trade's id, price and size (the mid and a small size before the first).
    const last = engine.lastTrade('venue-d', p.id);
    return json(200, {
      ask: px(m.ask),
      bid: px(m.bid),
      volume: sz(p, 123_456_789_012),
      trade_id: trades.tradeId(last?.no ?? 0),
      price: px(last?.price ?? m.last),
      size: sz(p, last?.size ?? p.minLots * 3),
      time: isoMillis(ctx.clock()),
      rfq_volume: '0',
    });
  });
  r.get('/products/:id/book', (req) => {
    const p = product(req);
    if (!p) return coinbaseErrors.notFound(req);
    const level = req.params.get('level') ?? '1';
    if (!['1', '2', '3'].includes(level)) return json(400, { message: 'Invalid level' });
    const book = engine.book('venue-d', p.id);
    const rng = new Rng(opts.seed, 'coinbase', 'orders', p.id, String(engine.lastSeq('venue-d', p.id)));
    const side = (s: 'bids' | 'asks') => {
      const levels = book ? book[s].levels(level === '1' ? 1 : Infinity) : [];
      if (level === '3') return levels.map(([pr, q]) => [px(pr), sz(p, q), rng.uuid()]);
      return levels.map(([pr, q], i) => [px(pr), sz(p, q), 1 + ((pr + i) % 7)]);
    };
    return json(200, {
      bids: side('bids'),
      asks: side('asks'),
      sequence: trades.productSequence(engine, p.id),
      auction_mode: false,
      auction: null,
      time: isoMillis(ctx.clock()),
    });
  });
  /**
   * Candles of `g` seconds, newest first, the newest ending at the live price: `[time, low, high, open, close,
   * volume]` in cents and 0.01 units. One seeded walk per product and granularity, so a window is a slice of it.
   */
  const candles = (p: CoinbaseProduct, g: number, fromSec: number, toSec: number) => {
    const rng = new Rng(opts.seed, 'coinbase', 'candles', p.id, String(g));
    const newest = Math.floor(ctx.clock() / 1000 / g) * g;
    // The walk starts now; a window further back than 100 000 candles has none.
    if ((newest - fromSec) / g > 100_000) return [];
    let close = mid(p).last;
    const rows: number[][] = [];
    for (let t = newest; t >= fromSec; t -= g) {
      const open = close + rng.range(-40, 40);
      const high = Math.max(open, close) + rng.range(0, 20);
      const low = Math.min(open, close) - rng.range(0, 20);
      const volume = rng.range(1, 50_000);
      if (t <= toSec) rows.push([t, low, high, open, close, volume]);
      close = open;
    }
    return rows;
  };
  const price = (cents: number) => scaledNumber(cents, 2);

  r.get('/products/:id/candles', (req) => {
    const p = product(req);
    if (!p) return coinbaseErrors.notFound(req);
    const g = Number(req.params.get('granularity') ?? 60);
    if (!GRANULARITIES.includes(g)) {
      return json(400, { message: 'Unsupported granularity. Must be one of 60, 300, 900, 3600, 21600, 86400' });
    }
    // [3P] `start` and `end` (ISO 8601) together, at most 300 candles; without them the latest 300.
    const startParam = req.params.get('start');
    const endParam = req.params.get('end');
    const nowSec = Math.floor(ctx.clock() / 1000);
    const end = endParam ? Date.parse(endParam) / 1000 : nowSec;
    const start = startParam ? Date.parse(startParam) / 1000 : Math.floor(nowSec / g) * g - 299 * g;
    if (Number.isNaN(start) || Number.isNaN(end)) return json(400, { message: 'Invalid start or end' });
    if (end < start) return json(400, { message: 'start must be before end' });
    if ((end - start) / g > 300) {
      return json(400, {
        message: 'granularity too small for the requested time range. Count of aggregations requested exceeds 300',
      });
    }
    // JSON numbers, as the platform sends them [3P].
    return json(
      200,
      candles(p, g, Math.ceil(start / g) * g, Math.min(end, nowSec)).map(([t, lo, hi, o, c, v]) => [
        t,
        price(lo as number),
        price(hi as number),
        price(o as number),
        price(c as number),
        scaledNumber(v as number, 2),
      ]),
    );
  });
  // Undocumented, read by ccxt's fetchTickers [3P]: per product, the last 24 hourly candles newest first,
  // `[time, low, high, open, close]` (the candles' first five columns).
  r.get('/products/spark-lines', () => {
    const nowSec = Math.floor(ctx.clock() / 1000);
    return json(
      200,
      Object.fromEntries(
        catalog.products.map((p) => [
          p.id,
          candles(p, 3600, Math.floor(nowSec / 3600) * 3600 - 23 * 3600, nowSec).map(([t, lo, hi, o, c]) => [
            t,
            price(lo as number),
            price(hi as number),
            price(o as number),
            price(c as number),
          ]),
        ]),
      ),
    );
  });
  r.get('/products/:id/stats', (req) => {
    const p = product(req);
    if (!p) return coinbaseErrors.notFound(req);
    const m = mid(p);
    return json(200, {
      open: px(m.last - 1234),
      high: px(m.last + 2011),
      low: px(m.last - 3020),
      last: px(m.last),
      volume: sz(p, 987_654_321_000),
      volume_30day: sz(p, 29_876_543_210_000),
      rfq_volume_24hour: '0',
      rfq_volume_30day: '0',
    });
  });
  /**
   * [V] newest first; `limit` (default and most 1000); pagination by trade id: `after` = older (the page right below
   * that id), `before` = newer (the page right above it); `CB-BEFORE` names the page's first (newest) trade and
   * `CB-AFTER` its last (oldest), so `?after=<CB-AFTER>` walks back and `?before=<CB-BEFORE>` polls forward. The
   * books' own trades, as far back as the simulator retains them.
   */
  r.get('/products/:id/trades', (req) => {
    const p = product(req);
    if (!p) return coinbaseErrors.notFound(req);
    const limit = intParam(req.params, 'limit');
    const before = intParam(req.params, 'before');
    const after = intParam(req.params, 'after');
    if (limit === null || (limit !== undefined && limit < 1)) return json(400, { message: 'Invalid limit' });
    if (before === null || after === null) return json(400, { message: 'Invalid pagination cursor' });
    // [U] Coinbase's answer to both cursors at once.
    if (before !== undefined && after !== undefined)
      return json(400, { message: 'before and after cannot be used together' });
    const n = Math.min(1000, limit ?? 1000);
    const inst = engine.instrument('venue-d', p.id);
    const log = engine.tradeLog('venue-d', p.id);
    const out: Record<string, unknown>[] = [];
    if (inst && log) {
      // Trade numbers from..to, then newest first.
      let from = log.firstTradeNo;
      let to = log.lastTradeNo;
      if (after !== undefined) to = Math.min(to, after - trades.tradeId(0) - 1);
      if (before !== undefined) from = Math.max(from, before - trades.tradeId(0) + 1);
      if (before !== undefined) to = Math.min(to, from + n - 1);
      else from = Math.max(from, to - n + 1);
      for (let no = to; no >= from; no--) out.push(trades.rest(inst, log.trade(no) as TimedTrade));
    }
    const first = out[0];
    const last = out[out.length - 1];
    return {
      ...json(200, out),
      ...(first && last ? { headers: { 'cb-before': String(first.trade_id), 'cb-after': String(last.trade_id) } } : {}),
    };
  });
  r.get('/currencies', () => ({ status: 200, body: currencies, contentType: 'application/json; charset=utf-8' }));
  r.get('/currencies/:id', (req) => {
    const all = JSON.parse(currencies) as Array<{ id: string }>;
    const c = all.find((x) => x.id === (req.pathParams.id as string).toUpperCase());
    return c ? json(200, c) : coinbaseErrors.notFound(req);
  });
  r.get('/time', () => {
    const now = ctx.clock();
    return json(200, { iso: isoMillis(now), epoch: now / 1000 });
  });

  const accounts = CURRENCIES.map((c, i) => ({
    id: new Rng(opts.seed, 'coinbase', 'account', c.id).uuid(),
    currency: c.id,
    balance: i === CURRENCIES.length - 2 ? '10000.0000000000000000' : '0.0000000000000000',
    hold: '0.0000000000000000',
    available: i === CURRENCIES.length - 2 ? '10000.0000000000000000' : '0.0000000000000000',
    profile_id: new Rng(opts.seed, 'coinbase', 'profile').uuid(),
    trading_enabled: true,
    pending_deposit: '0',
    display_name: '',
  }));
  r.get('/accounts', () => json(200, accounts), 'required');
  r.get(
    '/accounts/:id',
    (req) => {
      const a = accounts.find((x) => x.id === req.pathParams.id);
      return a ? json(200, a) : coinbaseErrors.notFound(req);
    },
    'required',
  );
  r.get('/orders', () => json(200, []), 'required');
  // [V] one order by id, or by `client:<client_oid>` (docs, Get single order); the account has none: Coinbase's 404.
  r.get('/orders/:id', (req) => coinbaseErrors.notFound(req), 'required');
  r.get(
    '/fills',
    (req) => {
      if (!req.params.get('product_id') && !req.params.get('order_id')) {
        return json(400, { message: 'product_id or order_id is required' });
      }
      return json(200, []);
    },
    'required',
  );
  r.get(
    '/profiles',
    () => json(200, [{ id: accounts[0]?.profile_id, user_id: 'sim', name: 'default', active: true, is_default: true }]),
    'required',
  );

  return {
    router: r,
    errors: coinbaseErrors,
    rejectInvalidOnPublic: opts.assumptions.rejectInvalidAuthOnPublicRoutes,
    verify: (input) => verifyCoinbase(input, verifier),
  };
}

/** The simulator's Coinbase credentials and assumptions, as REST and the feed's signed subscribe verify them. */
export function coinbaseVerifier(ctx: PlatformContext): CoinbaseVerifier {
  const { opts, credentials, keys } = ctx;
  return {
    key: credentials.coinbase.key,
    secret: credentials.coinbase.secret,
    passphrase: credentials.coinbase.passphrase,
    signsQuery: opts.assumptions.coinbaseSignsQuery,
    toleranceSec: opts.assumptions.coinbaseTimestampToleranceSec,
    now: ctx.clock,
    jwt: {
      keyName: credentials.coinbaseJwt.keyName,
      publicKey: keys.coinbaseJwtPublicKey,
      hosts: opts.assumptions.coinbaseJwtHosts,
    },
  };
}
