// https://docs.gemini.com/rest-api/
import { feedHeartbeatMs } from '../context';
import { simPlatform } from '../platform';
import { buildGeminiCatalog } from './catalog';
import { geminiHost } from './rest';
import { GeminiTrades } from './trades';
import { GEMINI_WS_PATH, GeminiFeed } from './ws';

/** Gemini: REST (spot and prediction markets) and the market data v2 WebSocket. Public; no signing. */
export const venueCSim = simPlatform({
  book: { tickers: 6 },
  // 120 per minute; 5 extra requests are queued, anything beyond gets 429 [V].
  rateLimits: { main: { limit: 120, windowMs: 60_000, overflow: 'queue', queue: 5 } },
  catalog: (c) => {
    const catalog = buildGeminiCatalog(c.catalogDate, c.tickers('venue-c'));
    return { catalog, instruments: catalog.instruments };
  },
  create(ctx, catalog) {
    const trades = new GeminiTrades(catalog);
    const main = geminiHost(ctx, catalog, trades);
    const feed = new GeminiFeed(ctx.engine, catalog, trades, feedHeartbeatMs(ctx, 'venue-c'), ctx.clock);
    main.upgrade = (req, socket, head, record) => feed.upgrade(req, socket, head, record);
    return {
      hosts: { main },
      feeds: { main: { host: 'main', path: GEMINI_WS_PATH, hub: feed.hub } },
      trade: (inst, t) => trades.describe(inst, t),
      close: () => feed.close(),
    };
  },
});
