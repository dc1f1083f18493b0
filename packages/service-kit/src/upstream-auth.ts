/**
 * Upstream request signing shared by the deployables that authenticate to a platform themselves: the gateway (every
 * forwarded REST call) and the recorder (the WebSocket handshakes of the Kalshi and Polymarket US feeds, and its REST
 * listings). Pure functions of (credentials, method, path, clock); nothing here sends anything.
 *
 * Kalshi: https://docs.kalshi.com/getting_started/quick_start_authenticated_requests
 * Polymarket US: https://docs.polymarket.us/api/authentication
 */
import { constants, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { envOptionalString, group, secret } from './env';

export interface KalshiCredentials {
  accessKey: string;
  privateKeyPem: string;
}

export interface PolymarketUsCredentials {
  accessKey: string;
  secretKeyBase64: string;
}

/** The signed string: ms timestamp + METHOD + full path (with `/trade-api/v2`, without the query). [V] */
export function kalshiMessage(timestampMs: number, method: string, path: string): string {
  return `${timestampMs}${method.toUpperCase()}${path}`;
}

/** The RSA private key of a Kalshi API key (PEM, PKCS#1 or PKCS#8); anything else is refused. */
export function kalshiPrivateKey(privateKeyPem: string): KeyObject {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'rsa') throw new Error('KALSHI_PRIVATE_KEY is not an RSA private key');
  return key;
}

/** RSA-PSS with SHA-256, MGF1-SHA256, salt length = digest length; base64. [V] */
export function kalshiSignature(key: KeyObject, message: string): string {
  return sign('sha256', Buffer.from(message, 'utf8'), {
    key,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  }).toString('base64');
}

/**
 * The three Kalshi headers for one request. The WebSocket handshake signs `timestamp + GET + /trade-api/ws/v2` [V],
 * REST calls their full path without the query.
 */
export function kalshiHeaders(
  accessKey: string,
  key: KeyObject,
  method: string,
  path: string,
  nowMs: number,
): Record<string, string> {
  return {
    'KALSHI-ACCESS-KEY': accessKey,
    'KALSHI-ACCESS-TIMESTAMP': String(nowMs),
    'KALSHI-ACCESS-SIGNATURE': kalshiSignature(key, kalshiMessage(nowMs, method, path)),
  };
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The secret is base64 of 64 bytes: a 32-byte Ed25519 seed followed by the public key (the official SDK signs with
 * the first 32 bytes). A 32-byte seed alone is accepted too. [V]
 */
export function polymarketUsKey(secretKeyBase64: string): KeyObject {
  const raw = Buffer.from(secretKeyBase64, 'base64');
  if (raw.length !== 64 && raw.length !== 32) {
    throw new Error(`POLYMARKET_US_SECRET_KEY must be base64 of 64 (or 32) bytes, got ${raw.length}`);
  }
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, raw.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
  if (raw.length === 64) {
    const publicRaw = createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-32);
    if (!publicRaw.equals(raw.subarray(32)))
      throw new Error('POLYMARKET_US_SECRET_KEY: the public half does not match the seed');
  }
  return key;
}

/** Signed string: ms timestamp + METHOD + path (the SDK signs `url.pathname`: no query, no body). [V] */
export function polymarketUsMessage(timestampMs: number, method: string, path: string): string {
  return `${timestampMs}${method.toUpperCase()}${path}`;
}

/** The three Polymarket US headers for one request (REST on api.polymarket.us, and the markets WebSocket). [V] */
export function polymarketUsHeaders(
  accessKey: string,
  key: KeyObject,
  method: string,
  path: string,
  nowMs: number,
): Record<string, string> {
  const message = polymarketUsMessage(nowMs, method, path);
  return {
    'X-PM-Access-Key': accessKey,
    'X-PM-Timestamp': String(nowMs),
    'X-PM-Signature': sign(null, Buffer.from(message, 'utf8'), key).toString('base64'),
  };
}

/**
 * The environment variables of the Kalshi and Polymarket US credentials, for the zod schema of every deployable
 * that signs for them (gateway, recorder): spread into the schema's shape.
 */
export const signedVenueEnvShape = {
  KALSHI_ACCESS_KEY: envOptionalString(),
  KALSHI_PRIVATE_KEY: envOptionalString(),
  KALSHI_PRIVATE_KEY_FILE: envOptionalString(),
  POLYMARKET_US_ACCESS_KEY: envOptionalString(),
  POLYMARKET_US_SECRET_KEY: envOptionalString(),
  POLYMARKET_US_SECRET_KEY_FILE: envOptionalString(),
};

/** The Kalshi and Polymarket US credentials of a parsed environment: each all or none (a partial set is an issue). */
export function signedVenueCredentials(
  env: Readonly<Record<string, unknown>> & { KALSHI_ACCESS_KEY?: string; POLYMARKET_US_ACCESS_KEY?: string },
  issues: string[],
): { kalshi?: KalshiCredentials; polymarketUs?: PolymarketUsCredentials } {
  const kalshi = group(
    'Kalshi',
    { KALSHI_ACCESS_KEY: env.KALSHI_ACCESS_KEY, KALSHI_PRIVATE_KEY: secret(env, 'KALSHI_PRIVATE_KEY', issues) },
    (p) => ({ accessKey: p.KALSHI_ACCESS_KEY ?? '', privateKeyPem: p.KALSHI_PRIVATE_KEY ?? '' }),
    issues,
  );
  const polymarketUs = group(
    'Polymarket US',
    {
      POLYMARKET_US_ACCESS_KEY: env.POLYMARKET_US_ACCESS_KEY,
      POLYMARKET_US_SECRET_KEY: secret(env, 'POLYMARKET_US_SECRET_KEY', issues),
    },
    (p) => ({ accessKey: p.POLYMARKET_US_ACCESS_KEY ?? '', secretKeyBase64: p.POLYMARKET_US_SECRET_KEY ?? '' }),
    issues,
  );
  return { ...(kalshi ? { kalshi } : {}), ...(polymarketUs ? { polymarketUs } : {}) };
}
