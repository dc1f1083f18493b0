// https://docs.polymarket.us/api/introduction
import { credential, definePlatform } from '../descriptor';
import { polymarketUsKey, polymarketUsSigner, type PolymarketUsCredentials } from './signer';

/**
 * `venue-a-us`: Polymarket US (upstreams.md §3). Public data from the public gateway host, unsigned; orders,
 * portfolio and account from the authenticated host, Ed25519-signed. [V] (SDK: authenticated ? api : gateway)
 */
export const venueAUs = definePlatform({
  key: 'venue-a-us',
  title: 'Polymarket US',
  covers: 'Events, markets, series, sports, search',
  docs: 'https://docs.polymarket.us/api/introduction',
  aliases: ['polymarket-us'],
  exchange: { key: 'venue_a_us', code: 3, aliases: ['polymarket_us', 'polymarket-us'] },
  hosts: {
    main: {
      env: 'UPSTREAM_VENUE_A_US_URL',
      default: 'https://gateway.polymarket.us',
      description: 'Polymarket US public host',
    },
    auth: {
      env: 'UPSTREAM_VENUE_A_US_AUTH_URL',
      default: 'https://api.polymarket.us',
      description: 'Polymarket US authenticated host',
    },
  },
  feeds: {
    main: {
      env: 'FEED_VENUE_A_US_URL',
      default: 'wss://api.polymarket.us/v1/ws/markets',
      description: 'Polymarket US markets WebSocket',
      // The heartbeat message is documented [V]; its interval is not [U]. Assumed 10 s: if the venue beats less often,
      // idle markets are resubscribed at every threshold (gateway_ws_resyncs_total{reason="upstream_stall"});
      // WS_UPSTREAM_STALL_MS / RECORDER_STALL_TIMEOUT_MS override the threshold meanwhile.
      heartbeat: {
        kind: 'message',
        intervalMs: 10_000,
        source: '`{"heartbeat":{}}` [V]; its interval is not documented [U]: assumed 10 s',
      },
    },
  },
  budget: { perSecond: 19, burst: 1, source: '20 per second, per key and per IP [V]' },
  credentials: {
    ed25519: credential<PolymarketUsCredentials>({
      name: 'Polymarket US',
      vars: [
        { env: 'POLYMARKET_US_ACCESS_KEY', description: 'Polymarket US API key id' },
        { env: 'POLYMARKET_US_SECRET_KEY', secret: true, description: 'its Ed25519 secret (base64 of 64 bytes)' },
      ],
      build(v) {
        const credentials = {
          accessKey: v.POLYMARKET_US_ACCESS_KEY ?? '',
          secretKeyBase64: v.POLYMARKET_US_SECRET_KEY ?? '',
        };
        polymarketUsKey(credentials.secretKeyBase64);
        return credentials;
      },
    }),
  },
  settings: {},
  signer: (c) => (c.ed25519 ? polymarketUsSigner(c.ed25519) : undefined),
});
