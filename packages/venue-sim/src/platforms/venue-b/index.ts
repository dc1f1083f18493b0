// https://docs.kalshi.com/api-reference
import { kalshiErrors, kalshiHost, KALSHI_PREFIX } from './rest';
import { KALSHI_WS_PATH, KalshiFeed } from './ws';
import { buildKalshiCatalog } from './catalog';
import { KalshiTradeIds } from './trade-ids';
import { kalshiTrade } from './trades';
import { formatLevels, type KalshiBookView } from '../../book/view';
import { feedHeartbeatMs } from '../context';
import { simPlatform } from '../platform';
import type { SimHost } from '../platform';

/** Kalshi: the Trade API v2 host with its `orderbook_delta` WebSocket, RSA-PSS verified. */
export const venueBSim = simPlatform({
  book: {
    tickers: 8,
    // Kalshi's native view: YES bids, and NO bids at 1 − p of each YES ask.
    view: (v, inst, book): KalshiBookView => ({
      ...v,
      yes: v.bids,
      no: formatLevels(
        inst,
        book.asks.map(([p, q]) => [10000 - p, q]),
      ),
    }),
  },
  signs: ['rsa'],
  rateLimits: { main: { limit: 20, windowMs: 1000 } },
  catalog: (c) => {
    const catalog = buildKalshiCatalog(c.seed, c.catalogDate, c.tickers('venue-b'));
    return { catalog, instruments: catalog.instruments };
  },
  create(ctx, catalog) {
    const main = kalshiHost(ctx, catalog);
    const feed = new KalshiFeed(
      ctx.engine,
      catalog,
      {
        seed: ctx.opts.seed,
        snapshotFields: ctx.opts.assumptions.kalshiSnapshotFields,
        heartbeatIntervalMs: feedHeartbeatMs(ctx, 'venue-b'),
        verify: main.verify as NonNullable<SimHost['verify']>,
        unauthorizedBody: (reason) => String(kalshiErrors.unauthorized(reason).body),
      },
      ctx.clock,
    );
    main.upgrade = (req, socket, head, record) => feed.upgrade(req, socket, head, record);
    const trades = new KalshiTradeIds(ctx.opts.seed);
    return {
      hosts: { main: { ...main, basePath: KALSHI_PREFIX } },
      trade: (inst, t) => kalshiTrade.describe(trades, inst, t),
      feeds: { main: { host: 'main', path: KALSHI_WS_PATH, hub: feed.hub } },
      credentials: {
        KALSHI_ACCESS_KEY: ctx.credentials.kalshi.accessKey,
        KALSHI_PRIVATE_KEY: ctx.credentials.kalshi.privateKeyPem,
      },
      close: () => feed.close(),
    };
  },
});
