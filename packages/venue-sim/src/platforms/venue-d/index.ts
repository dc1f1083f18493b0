// https://docs.cdp.coinbase.com/exchange/reference
import { simPlatform } from '../platform';
import { buildCoinbaseCatalog } from './catalog';
import { coinbaseHost } from './rest';

/** Coinbase Exchange: public market data, HMAC- or CDP-JWT-verified private routes. */
export const venueDSim = simPlatform({
  book: 'coinbase',
  // HMAC only: with JWT credentials set too, the gateway would prefer the JWT.
  signs: ['hmac'],
  // Public: token bucket, 10/s with bursts of 15 [V].
  rateLimits: { main: { limit: 10, windowMs: 1000, burst: 15 } },
  catalog: (c) => {
    const catalog = buildCoinbaseCatalog(c.tickers.coinbase);
    return { catalog, instruments: catalog.instruments };
  },
  create: (ctx, catalog) => ({
    hosts: { main: coinbaseHost(ctx, catalog) },
    credentials: {
      COINBASE_API_KEY: ctx.credentials.coinbase.key,
      COINBASE_API_SECRET: ctx.credentials.coinbase.secret,
      COINBASE_API_PASSPHRASE: ctx.credentials.coinbase.passphrase,
    },
  }),
});
