// https://docs.polymarket.com/developers/CLOB/introduction
import { simPlatform } from '../platform';
import { polymarketCatalog } from '../venue-a';
import { ClobBooks } from './books';
import { clobHost } from './clob';
import { dataHost } from './data-api';
import { ClobTrades } from './trades';
import { CLOB_WS_PATH, ClobMarketFeed } from './ws';

/**
 * Polymarket CLOB (L2 HMAC verified), its market channel WebSocket (served on the CLOB host at `/ws/market`; the
 * platform's is on its own host, `ws-subscriptions-clob.polymarket.com`) and the Data API. Cloudflare delays rather
 * than rejects [V].
 */
export const venueAClobSim = simPlatform({
  book: { tickers: 6 },
  signs: ['l2'],
  rateLimits: {
    main: {
      limit: 9000,
      windowMs: 10_000,
      overflow: 'delay',
      routes: [
        { prefix: '/book', limit: 1500, windowMs: 10_000 },
        { prefix: '/books', limit: 500, windowMs: 10_000 },
        { prefix: '/price', limit: 1500, windowMs: 10_000 },
        { prefix: '/midpoint', limit: 1500, windowMs: 10_000 },
        { prefix: '/prices-history', limit: 1000, windowMs: 10_000 },
        { prefix: '/data/', limit: 900, windowMs: 10_000 },
      ],
    },
    data: {
      limit: 1000,
      windowMs: 10_000,
      overflow: 'delay',
      routes: [{ prefix: '/trades', limit: 200, windowMs: 10_000 }],
    },
  },
  catalog: (c) => {
    const catalog = polymarketCatalog(c);
    return { catalog, instruments: catalog.instruments };
  },
  create(ctx, catalog) {
    const trades = new ClobTrades(ctx.opts.seed, ctx.engine, catalog);
    const books = new ClobBooks(ctx.engine, catalog);
    const main = clobHost(ctx, books, trades);
    const feed = new ClobMarketFeed(ctx.engine, books, trades, ctx.clock);
    main.upgrade = (req, socket, head, record) => feed.upgrade(req, socket, head, record);
    return {
      hosts: { main, data: dataHost(ctx, catalog, trades) },
      feeds: { main: { host: 'main', path: CLOB_WS_PATH, hub: feed.hub } },
      trade: (inst, t) => trades.describe(inst, t),
      credentials: {
        POLYMARKET_CLOB_ADDRESS: ctx.credentials.polymarketClob.address,
        POLYMARKET_CLOB_API_KEY: ctx.credentials.polymarketClob.apiKey,
        POLYMARKET_CLOB_SECRET: ctx.credentials.polymarketClob.secret,
        POLYMARKET_CLOB_PASSPHRASE: ctx.credentials.polymarketClob.passphrase,
      },
      close: () => feed.close(),
    };
  },
});
