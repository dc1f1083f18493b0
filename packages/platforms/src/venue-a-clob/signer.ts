// https://docs.polymarket.com/developers/CLOB/authentication
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { base64UrlKeepPadding, withQuery, type SignInput, type SignedHeaders, type SyncSigner } from '../signing';

export interface PolymarketClobCredentials {
  address: string;
  apiKey: string;
  secret: string;
  passphrase: string;
}

/** The HMAC key of a CLOB API secret (base64 or url-safe base64, as issued); a signer makes it once (signing.ts). */
export function polymarketClobSecretKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
}

/**
 * L2 HMAC: url-safe base64 of HMAC-SHA256, keyed with the base64(url)-decoded secret, over
 * seconds timestamp + METHOD + request path + body. [V] headers; [3P] message; [U] whether the path carries the
 * query string (`signQuery`, default no, as the official clients sign the endpoint path). `secret` is the secret as
 * issued or its key from polymarketClobSecretKey.
 */
export function polymarketClobSignature(
  secret: string | KeyObject,
  timestampS: number,
  method: string,
  requestPath: string,
  body: string,
): string {
  const key = typeof secret === 'string' ? polymarketClobSecretKey(secret) : secret;
  return base64UrlKeepPadding(createHmac('sha256', key).update(`${timestampS}${method}${requestPath}${body}`).digest());
}

export function polymarketClobSigner(
  credentials: PolymarketClobCredentials,
  options: { signQuery: boolean },
): SyncSigner {
  const secret = polymarketClobSecretKey(credentials.secret);
  return {
    name: 'polymarket-clob-l2',
    headerNames: ['poly_address', 'poly_signature', 'poly_timestamp', 'poly_api_key', 'poly_passphrase'],
    sign(input: SignInput, nowMs: number): SignedHeaders {
      const ts = Math.floor(nowMs / 1000);
      const requestPath = options.signQuery ? withQuery(input.path, input.query) : input.path;
      return {
        POLY_ADDRESS: credentials.address,
        POLY_SIGNATURE: polymarketClobSignature(secret, ts, input.method.toUpperCase(), requestPath, input.body),
        POLY_TIMESTAMP: String(ts),
        POLY_API_KEY: credentials.apiKey,
        POLY_PASSPHRASE: credentials.passphrase,
      };
    },
  };
}
