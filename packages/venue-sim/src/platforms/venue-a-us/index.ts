// https://docs.polymarket.us/api/introduction
import type { SimHost } from '../platform';
import { feedHeartbeatMs } from '../context';
import { simPlatform } from '../platform';
import { buildPmUsCatalog } from './catalog';
import { pmUsHosts } from './rest';
import { pmUsTrade } from './trades';
import { PM_US_WS_PATH, PmUsFeed } from './ws';

/** Polymarket US: the public gateway host, the authenticated host (Ed25519) and its markets WebSocket. */
export const venueAUsSim = simPlatform({
  book: { tickers: 8 },
  signs: ['ed25519'],
  rateLimits: { main: { limit: 20, windowMs: 1000 }, auth: { limit: 20, windowMs: 1000 } },
  catalog: (c) => {
    const catalog = buildPmUsCatalog(c.seed, c.catalogDate, c.tickers('venue-a-us'));
    return { catalog, instruments: catalog.instruments };
  },
  create(ctx, catalog) {
    const hosts = pmUsHosts(ctx, catalog);
    const feed = new PmUsFeed(
      ctx.engine,
      hosts.auth.verify as NonNullable<SimHost['verify']>,
      feedHeartbeatMs(ctx, 'venue-a-us'),
      ctx.clock,
    );
    hosts.auth.upgrade = (req, socket, head, record) => feed.upgrade(req, socket, head, record);
    return {
      hosts: { main: hosts.pub, auth: hosts.auth },
      feeds: { main: { host: 'auth', path: PM_US_WS_PATH, hub: feed.hub } },
      trade: (inst, t) => pmUsTrade.describe(inst, t),
      credentials: {
        POLYMARKET_US_ACCESS_KEY: ctx.credentials.polymarketUs.accessKey,
        POLYMARKET_US_SECRET_KEY: ctx.credentials.polymarketUs.secretKeyBase64,
      },
      close: () => feed.close(),
    };
  },
});
