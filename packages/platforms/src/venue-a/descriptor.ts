// https://docs.polymarket.com/developers/gamma-markets-api/overview
import { definePlatform } from '../descriptor';

/** `venue-a`: Polymarket Gamma (markets, events, tags, series, search). Public; no signing. [V] (upstreams.md §1) */
export const venueA = definePlatform({
  key: 'venue-a',
  title: 'Polymarket Gamma',
  covers: 'Markets, events, tags, series, search',
  docs: 'https://docs.polymarket.com/developers/gamma-markets-api/overview',
  aliases: ['polymarket', 'polymarket-gamma'],
  hosts: {
    main: { env: 'UPSTREAM_VENUE_A_URL', default: 'https://gamma-api.polymarket.com', description: 'Polymarket Gamma' },
  },
  budget: { perSecond: 380, burst: 200, source: 'Gamma: 4,000 per 10 s [V]' },
  credentials: {},
  settings: {},
});
