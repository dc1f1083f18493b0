import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SimCredentials } from './credentials';

export interface SimUrls {
  control: string;
  gamma: string;
  clob: string;
  data: string;
  pmUsPublic: string;
  pmUsAuth: string;
  /** `http://127.0.0.1:p/trade-api/v2` */
  kalshi: string;
  gemini: string;
  coinbase: string;
  /** `https://127.0.0.1:p/v1/api` */
  ibkrPortal: string;
  /** `http://127.0.0.1:p/api` */
  forecastex: string;
}

export interface SimFeeds {
  /** `ws://127.0.0.1:p/trade-api/ws/v2` */
  kalshi: string;
  /** `ws://127.0.0.1:p/v2/marketdata` */
  gemini: string;
  /** `ws://127.0.0.1:p/v1/ws/markets` */
  polymarketUs: string;
}

/** Secret files written next to an env file (or into the simulator's temp dir), mode 0600. */
const SECRET_FILES = {
  KALSHI_PRIVATE_KEY_FILE: { name: 'kalshi-private-key.pem', value: (c: SimCredentials) => c.kalshi.privateKeyPem },
  POLYMARKET_US_SECRET_KEY_FILE: {
    name: 'polymarket-us-secret-key',
    value: (c: SimCredentials) => c.polymarketUs.secretKeyBase64,
  },
  POLYMARKET_CLOB_SECRET_FILE: {
    name: 'polymarket-clob-secret',
    value: (c: SimCredentials) => c.polymarketClob.secret,
  },
  POLYMARKET_CLOB_PASSPHRASE_FILE: {
    name: 'polymarket-clob-passphrase',
    value: (c: SimCredentials) => c.polymarketClob.passphrase,
  },
  COINBASE_API_SECRET_FILE: { name: 'coinbase-api-secret', value: (c: SimCredentials) => c.coinbase.secret },
  COINBASE_API_PASSPHRASE_FILE: {
    name: 'coinbase-api-passphrase',
    value: (c: SimCredentials) => c.coinbase.passphrase,
  },
  IBKR_PORTAL_CA_FILE: { name: 'ibkr-portal-ca.pem', value: (c: SimCredentials) => c.ibkr.certPem },
} as const;

/** The variables, in the order they are written. */
export const ENV_NAMES = [
  'UPSTREAM_VENUE_A_URL',
  'UPSTREAM_VENUE_A_CLOB_URL',
  'UPSTREAM_VENUE_A_DATA_URL',
  'UPSTREAM_VENUE_A_US_URL',
  'UPSTREAM_VENUE_A_US_AUTH_URL',
  'UPSTREAM_VENUE_B_URL',
  'UPSTREAM_VENUE_C_URL',
  'UPSTREAM_VENUE_D_URL',
  'UPSTREAM_VENUE_E_URL',
  'UPSTREAM_VENUE_E_PORTAL_URL',
  'IBKR_PORTAL_CA_FILE',
  'KALSHI_ACCESS_KEY',
  'KALSHI_PRIVATE_KEY_FILE',
  'POLYMARKET_US_ACCESS_KEY',
  'POLYMARKET_US_SECRET_KEY_FILE',
  'POLYMARKET_CLOB_ADDRESS',
  'POLYMARKET_CLOB_API_KEY',
  'POLYMARKET_CLOB_SECRET_FILE',
  'POLYMARKET_CLOB_PASSPHRASE_FILE',
  'COINBASE_API_KEY',
  'COINBASE_API_SECRET_FILE',
  'COINBASE_API_PASSPHRASE_FILE',
  'FEED_VENUE_B_URL',
  'FEED_VENUE_C_URL',
  'FEED_VENUE_A_US_URL',
] as const;

/** Writes the secret files into `dir` (mode 0600) and returns the full variable set pointing at them. */
export function writeSecretsAndBuildEnv(
  dir: string,
  urls: SimUrls,
  feeds: SimFeeds,
  credentials: SimCredentials,
): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {};
  for (const [variable, spec] of Object.entries(SECRET_FILES)) {
    const file = path.join(dir, spec.name);
    writeFileSync(file, spec.value(credentials), { mode: 0o600 });
    chmodSync(file, 0o600);
    files[variable] = file;
  }
  const env: Record<string, string> = {
    UPSTREAM_VENUE_A_URL: urls.gamma,
    UPSTREAM_VENUE_A_CLOB_URL: urls.clob,
    UPSTREAM_VENUE_A_DATA_URL: urls.data,
    UPSTREAM_VENUE_A_US_URL: urls.pmUsPublic,
    UPSTREAM_VENUE_A_US_AUTH_URL: urls.pmUsAuth,
    UPSTREAM_VENUE_B_URL: urls.kalshi,
    UPSTREAM_VENUE_C_URL: urls.gemini,
    UPSTREAM_VENUE_D_URL: urls.coinbase,
    UPSTREAM_VENUE_E_URL: urls.forecastex,
    UPSTREAM_VENUE_E_PORTAL_URL: urls.ibkrPortal,
    KALSHI_ACCESS_KEY: credentials.kalshi.accessKey,
    POLYMARKET_US_ACCESS_KEY: credentials.polymarketUs.accessKey,
    POLYMARKET_CLOB_ADDRESS: credentials.polymarketClob.address,
    POLYMARKET_CLOB_API_KEY: credentials.polymarketClob.apiKey,
    COINBASE_API_KEY: credentials.coinbase.key,
    FEED_VENUE_B_URL: feeds.kalshi,
    FEED_VENUE_C_URL: feeds.gemini,
    FEED_VENUE_A_US_URL: feeds.polymarketUs,
    ...files,
  };
  const ordered: Record<string, string> = {};
  for (const name of ENV_NAMES) ordered[name] = env[name] as string;
  return ordered;
}

/** `KEY=value` lines (values here never contain spaces or quotes). */
export function formatEnvFile(env: Record<string, string>): string {
  return (
    '# Written by the venue simulator (packages/venue-sim): upstream URLs and test credentials.\n' +
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') +
    '\n'
  );
}

/** Writes `file` (mode 0600) and its secret files next to it; returns the variables. */
export function writeEnvFile(
  file: string,
  urls: SimUrls,
  feeds: SimFeeds,
  credentials: SimCredentials,
): Record<string, string> {
  const env = writeSecretsAndBuildEnv(path.dirname(path.resolve(file)), urls, feeds, credentials);
  writeFileSync(file, formatEnvFile(env), { mode: 0o600 });
  chmodSync(file, 0o600);
  return env;
}
