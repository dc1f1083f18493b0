// https://docs.cdp.coinbase.com/exchange/reference
import { simPlatform } from '../platform';
import { buildCoinbaseCatalog } from './catalog';
import { coinbaseHost, coinbaseVerifier } from './rest';
import { CoinbaseTrades } from './trades';
import { COINBASE_WS_PATH, CoinbaseFeed } from './ws';

/** Coinbase Exchange: public market data, HMAC- or CDP-JWT-verified private routes, and its WebSocket feed. */
export const venueDSim = simPlatform({
  book: { tickers: 3 },
  // HMAC only: with JWT credentials set too, the gateway would prefer the JWT.
  signs: ['hmac'],
  // Public: token bucket, 10/s with bursts of 15; private (the signed routes): 15/s with bursts of 30, `/fills` 10/s
  // with bursts of 20 [V] — per IP and per profile on the venue, one budget each here.
  rateLimits: {
    main: {
      limit: 10,
      windowMs: 1000,
      burst: 15,
      authenticated: {
        limit: 15,
        windowMs: 1000,
        burst: 30,
        routes: [{ prefix: '/fills', limit: 10, windowMs: 1000, burst: 20 }],
      },
    },
  },
  catalog: (c) => {
    const catalog = buildCoinbaseCatalog(c.tickers('venue-d'));
    return { catalog, instruments: catalog.instruments };
  },
  create(ctx, catalog) {
    const trades = new CoinbaseTrades(ctx.opts.seed);
    const main = coinbaseHost(ctx, catalog, trades);
    const feed = new CoinbaseFeed(ctx, catalog, coinbaseVerifier(ctx), trades);
    main.upgrade = (req, socket, head, record) => feed.upgrade(req, socket, head, record);
    return {
      hosts: { main },
      feeds: { main: { host: 'main', path: COINBASE_WS_PATH, hub: feed.hub } },
      trade: (inst, t) => trades.describe(inst, t),
      credentials: {
        COINBASE_API_KEY: ctx.credentials.coinbase.key,
        COINBASE_API_SECRET: ctx.credentials.coinbase.secret,
        COINBASE_API_PASSPHRASE: ctx.credentials.coinbase.passphrase,
      },
      close: () => feed.close(),
    };
  },
});
