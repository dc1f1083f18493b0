// https://docs.polymarket.com/developers/CLOB/introduction
import { envBool } from '@depthgate/service-kit';
import { credential, definePlatform } from '../descriptor';
import { polymarketClobSigner, type PolymarketClobCredentials } from './signer';

/**
 * `venue-a-clob`: Polymarket CLOB (order book, prices, spreads) plus the market-statistics routes the spec files under
 * it, which the Data API serves (upstreams.md §2). Private CLOB routes carry L2 HMAC headers when credentials are set.
 */
export const venueAClob = definePlatform({
  key: 'venue-a-clob',
  title: 'Polymarket CLOB',
  covers: 'Order book, prices, spreads, profiles',
  docs: 'https://docs.polymarket.com/developers/CLOB/introduction',
  aliases: ['polymarket-clob'],
  exchange: { key: 'venue_a_clob', code: 4, aliases: ['polymarket', 'polymarket_clob', 'polymarket-clob'] },
  hosts: {
    main: { env: 'UPSTREAM_VENUE_A_CLOB_URL', default: 'https://clob.polymarket.com', description: 'Polymarket CLOB' },
    data: {
      env: 'UPSTREAM_VENUE_A_DATA_URL',
      default: 'https://data-api.polymarket.com',
      description: 'Polymarket Data API (CLOB market statistics routes)',
    },
  },
  feeds: {
    main: {
      env: 'FEED_VENUE_A_CLOB_URL',
      default: 'wss://ws-subscriptions-clob.polymarket.com/ws/market',
      description: 'Polymarket CLOB market channel WebSocket (`book`, `price_change`, `last_trade_price`)',
      heartbeat: {
        kind: 'answer',
        intervalMs: 10_000,
        source:
          'the client sends the text `PING` every 10 s, the server answers `PONG` [V] (docs.polymarket.com, market channel; upstreams.md: [3P]); no heartbeat of its own',
      },
    },
  },
  budget: { perSecond: 142.5, burst: 75, source: 'CLOB /book: 1,500 per 10 s [V]' },
  credentials: {
    l2: credential<PolymarketClobCredentials>({
      name: 'Polymarket CLOB',
      vars: [
        { env: 'POLYMARKET_CLOB_ADDRESS', description: 'wallet address of the L2 API key' },
        { env: 'POLYMARKET_CLOB_API_KEY', description: 'L2 API key' },
        { env: 'POLYMARKET_CLOB_SECRET', secret: true, description: 'its secret (url-safe base64)' },
        { env: 'POLYMARKET_CLOB_PASSPHRASE', secret: true, description: 'its passphrase' },
      ],
      build: (v) => ({
        address: v.POLYMARKET_CLOB_ADDRESS ?? '',
        apiKey: v.POLYMARKET_CLOB_API_KEY ?? '',
        secret: v.POLYMARKET_CLOB_SECRET ?? '',
        passphrase: v.POLYMARKET_CLOB_PASSPHRASE ?? '',
      }),
    }),
  },
  settings: {
    /** [U] whether the CLOB L2 signature covers the query string; upstreams.md leaves it open. */
    POLYMARKET_CLOB_SIGN_QUERY: envBool(false),
  },
  signer: (c, s) => (c.l2 ? polymarketClobSigner(c.l2, { signQuery: s.POLYMARKET_CLOB_SIGN_QUERY }) : undefined),
});
