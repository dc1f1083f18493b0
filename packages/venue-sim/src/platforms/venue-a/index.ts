// https://docs.polymarket.com/developers/gamma-markets-api/overview
import { simPlatform, type CatalogContext } from '../platform';
import { buildPolymarketCatalog } from './catalog';
import { gammaHost } from './gamma';

/** The Polymarket catalogue, shared by Gamma and the CLOB (its markets' token ids are the CLOB's books). */
export const polymarketCatalog = (c: CatalogContext) =>
  c.shared('polymarket', () => buildPolymarketCatalog(c.seed, c.catalogDate, c.tickers('venue-a-clob')));

/** Polymarket Gamma: markets, events, tags, series, search. Cloudflare delays rather than rejects [V]. */
export const venueASim = simPlatform({
  rateLimits: {
    main: {
      limit: 4000,
      windowMs: 10_000,
      overflow: 'delay',
      routes: [
        { prefix: '/events', limit: 500, windowMs: 10_000 },
        { prefix: '/markets', limit: 300, windowMs: 10_000 },
        { prefix: '/tags', limit: 200, windowMs: 10_000 },
        { prefix: '/public-search', limit: 350, windowMs: 10_000 },
      ],
    },
  },
  // The CLOB's module moves the books; Gamma only lists the markets.
  catalog: (c) => ({ catalog: polymarketCatalog(c), instruments: [] }),
  create: (ctx, catalog) => ({ hosts: { main: gammaHost(ctx, catalog) } }),
});
