// https://docs.kalshi.com/api-reference
import { envInt } from '@depthgate/service-kit';
import { credential, definePlatform } from '../descriptor';
import { kalshiPrivateKey, kalshiSigner, type KalshiCredentials } from './signer';

/** `venue-b`: Kalshi Trade API v2 (upstreams.md §4). Every call RSA-PSS-signed when credentials are set. */
export const venueB = definePlatform({
  key: 'venue-b',
  title: 'Kalshi',
  covers: 'Markets, events, series, order books, historical data, portfolio, exchange information',
  docs: 'https://docs.kalshi.com/api-reference',
  aliases: ['kalshi'],
  exchange: { key: 'venue_b', code: 1, aliases: ['kalshi'] },
  hosts: {
    main: {
      env: 'UPSTREAM_VENUE_B_URL',
      default: 'https://api.elections.kalshi.com/trade-api/v2',
      description: 'Kalshi Trade API (demo: `https://demo-api.kalshi.co/trade-api/v2`)',
    },
  },
  feeds: {
    main: {
      env: 'FEED_VENUE_B_URL',
      default: 'wss://api.elections.kalshi.com/trade-api/ws/v2',
      description: 'Kalshi WebSocket (`orderbook_delta`, `ticker`, `trade`)',
      heartbeat: {
        kind: 'ping-frame',
        intervalMs: 10_000,
        source: 'ping frames every 10 s, body `heartbeat` [V] (docs.kalshi.com, Connection Keep-Alive)',
      },
    },
  },
  budget: { perSecond: 19, burst: 1, source: 'Kalshi Basic tier: 20 reads per second [V]' },
  credentials: {
    rsa: credential<KalshiCredentials>({
      name: 'Kalshi',
      vars: [
        { env: 'KALSHI_ACCESS_KEY', description: 'Kalshi API key id' },
        { env: 'KALSHI_PRIVATE_KEY', secret: true, description: 'its RSA private key (PEM)' },
      ],
      build(v) {
        const credentials = { accessKey: v.KALSHI_ACCESS_KEY ?? '', privateKeyPem: v.KALSHI_PRIVATE_KEY ?? '' };
        try {
          kalshiPrivateKey(credentials.privateKeyPem);
        } catch (err) {
          throw new Error(`KALSHI_PRIVATE_KEY: ${(err as Error).message.replace(/^KALSHI_PRIVATE_KEY /, '')}`, {
            cause: err,
          });
        }
        return credentials;
      },
    }),
  },
  settings: {
    /** Reuse a Kalshi RSA-PSS signature for the same method and path this long (0: sign every request). */
    KALSHI_SIGNATURE_REUSE_MS: envInt(0, { min: 0, max: 5_000 }),
  },
  signer: (c, s) => (c.rsa ? kalshiSigner(c.rsa, { reuseMs: s.KALSHI_SIGNATURE_REUSE_MS }) : undefined),
});
