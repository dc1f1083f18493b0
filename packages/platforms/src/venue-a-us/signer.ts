// https://docs.polymarket.us/api/authentication
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import type { SignInput, SignedHeaders, SyncSigner } from '../signing';

export interface PolymarketUsCredentials {
  accessKey: string;
  secretKeyBase64: string;
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

/** Ed25519 over `timestamp + METHOD + path` (no query, no body): REST on api.polymarket.us and the markets WebSocket. [V] */
export function polymarketUsSigner(credentials: PolymarketUsCredentials): SyncSigner {
  const key = polymarketUsKey(credentials.secretKeyBase64);
  return {
    name: 'polymarket-us-ed25519',
    headerNames: ['x-pm-access-key', 'x-pm-timestamp', 'x-pm-signature'],
    sign(input: SignInput, nowMs: number): SignedHeaders {
      const message = polymarketUsMessage(nowMs, input.method, input.path);
      return {
        'X-PM-Access-Key': credentials.accessKey,
        'X-PM-Timestamp': String(nowMs),
        'X-PM-Signature': sign(null, Buffer.from(message, 'utf8'), key).toString('base64'),
      };
    },
  };
}
