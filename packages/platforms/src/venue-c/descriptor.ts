// https://docs.gemini.com/rest-api/
import { definePlatform } from '../descriptor';

/**
 * `venue-c`: Gemini (upstreams.md §5): prediction-market categories and events (`/v1/prediction-markets/...`) and
 * market data (`/v1/book/{symbol}`, `/v2/ticker/{symbol}`, ...). Public GETs need no signing. [V]
 */
export const venueC = definePlatform({
  key: 'venue-c',
  title: 'Gemini',
  covers: 'Prediction-market categories, events, market data',
  docs: 'https://docs.gemini.com/rest-api/',
  aliases: ['gemini'],
  exchange: { key: 'venue_c', code: 2, aliases: ['gemini'] },
  hosts: {
    main: {
      env: 'UPSTREAM_VENUE_C_URL',
      default: 'https://api.gemini.com',
      description: 'Gemini (sandbox: `https://api.sandbox.gemini.com`)',
    },
  },
  feeds: {
    main: {
      env: 'FEED_VENUE_C_URL',
      default: 'wss://api.gemini.com/v2/marketdata',
      description: 'Gemini market data v2 WebSocket (`l2`)',
      // Gemini documents 5 s heartbeats for market data v1 (`heartbeat=true`) [V]; v2's `{"type":"heartbeat"}`
      // interval is not documented [U]: assumed the same.
      heartbeat: {
        kind: 'message',
        intervalMs: 5_000,
        source:
          '`{"type":"heartbeat","timestamp"}` [U]; every 5 s as documented for market data v1 [V]: assumed for v2',
      },
    },
  },
  budget: { perSecond: 1.9, burst: 6, source: 'Gemini public: 120 per minute [V]' },
  credentials: {},
  settings: {},
});
