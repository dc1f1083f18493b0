// https://docs.cdp.coinbase.com/exchange/reference
import { envBool } from '@depthgate/service-kit';
import { credential, definePlatform } from '../descriptor';
import {
  coinbaseHmacSigner,
  coinbaseJwtAlgorithm,
  coinbaseJwtSigner,
  type CoinbaseHmacCredentials,
  type CoinbaseJwtCredentials,
} from './signer';

/**
 * `venue-d`: Coinbase Exchange (upstreams.md §6). Public market data unsigned; anything else HMAC-signed
 * (`CB-ACCESS-*`), or with a CDP JWT when JWT credentials are configured instead.
 */
export const venueD = definePlatform({
  key: 'venue-d',
  title: 'Coinbase Exchange',
  covers: 'Spot exchange market data: products, tickers, order books, candles, currencies, server time',
  docs: 'https://docs.cdp.coinbase.com/exchange/reference',
  aliases: ['coinbase'],
  exchange: { key: 'venue_d', code: 5, aliases: ['coinbase'] },
  hosts: {
    main: {
      env: 'UPSTREAM_VENUE_D_URL',
      default: 'https://api.exchange.coinbase.com',
      description: 'Coinbase Exchange',
    },
  },
  feeds: {
    main: {
      env: 'FEED_VENUE_D_URL',
      default: 'wss://ws-feed.exchange.coinbase.com',
      description: 'Coinbase Exchange WebSocket feed (`level2`, `ticker`, `heartbeat`, `matches`)',
      heartbeat: {
        kind: 'channel',
        intervalMs: 1_000,
        source: 'the `heartbeat` channel: one message per product every second [V]',
      },
    },
  },
  budget: { perSecond: 10, burst: 15, source: 'Coinbase public: token bucket, 10/s with bursts of 15 [V]' },
  credentials: {
    hmac: credential<CoinbaseHmacCredentials>({
      name: 'Coinbase',
      vars: [
        { env: 'COINBASE_API_KEY', description: 'Coinbase Exchange API key' },
        { env: 'COINBASE_API_SECRET', secret: true, description: 'its secret (base64)' },
        { env: 'COINBASE_API_PASSPHRASE', secret: true, description: 'its passphrase' },
      ],
      build: (v) => ({
        key: v.COINBASE_API_KEY ?? '',
        secret: v.COINBASE_API_SECRET ?? '',
        passphrase: v.COINBASE_API_PASSPHRASE ?? '',
      }),
    }),
    jwt: credential<CoinbaseJwtCredentials>({
      name: 'Coinbase JWT',
      vars: [
        {
          env: 'COINBASE_JWT_KEY_NAME',
          description: 'CDP key name (`organizations/…/apiKeys/…`); used instead of HMAC',
        },
        { env: 'COINBASE_JWT_PRIVATE_KEY', secret: true, description: 'its EC P-256 or Ed25519 private key (PEM)' },
      ],
      build(v) {
        const credentials = {
          keyName: v.COINBASE_JWT_KEY_NAME ?? '',
          privateKeyPem: v.COINBASE_JWT_PRIVATE_KEY ?? '',
        };
        coinbaseJwtAlgorithm(credentials.privateKeyPem);
        return credentials;
      },
    }),
  },
  settings: {
    /** [3P]/[U] whether the Coinbase Exchange signature covers the query string (believed yes). */
    COINBASE_SIGN_QUERY: envBool(true),
  },
  signer: (c, s) =>
    c.jwt
      ? coinbaseJwtSigner(c.jwt)
      : c.hmac
        ? coinbaseHmacSigner(c.hmac, { signQuery: s.COINBASE_SIGN_QUERY })
        : undefined,
});
