// https://docs.kalshi.com/getting_started/quick_start_authenticated_requests
import { constants, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { SignInput, SignedHeaders, SyncSigner } from '../signing';

export interface KalshiCredentials {
  accessKey: string;
  privateKeyPem: string;
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
 * Kalshi RSA-PSS for REST calls (full path without the query) and the WebSocket handshake (`GET` +
 * `/trade-api/ws/v2`) [V]. An RSA signature costs about a millisecond of CPU, so with `reuseMs` > 0 a signature is
 * reused for the same method and path while it is that young (Kalshi checks the timestamp's age, not its
 * uniqueness); 0 signs every request.
 */
export function kalshiSigner(credentials: KalshiCredentials, options: { reuseMs: number }): SyncSigner {
  const key = kalshiPrivateKey(credentials.privateKeyPem);
  const recent = new Map<string, { at: number; headers: SignedHeaders }>();
  return {
    name: 'kalshi-rsa-pss',
    headerNames: ['kalshi-access-key', 'kalshi-access-timestamp', 'kalshi-access-signature'],
    sign(input: SignInput, nowMs: number): SignedHeaders {
      const cacheKey = `${input.method} ${input.path}`;
      if (options.reuseMs > 0) {
        const hit = recent.get(cacheKey);
        if (hit && nowMs - hit.at < options.reuseMs && nowMs >= hit.at) return hit.headers;
      }
      const headers = {
        'KALSHI-ACCESS-KEY': credentials.accessKey,
        'KALSHI-ACCESS-TIMESTAMP': String(nowMs),
        'KALSHI-ACCESS-SIGNATURE': kalshiSignature(key, kalshiMessage(nowMs, input.method, input.path)),
      };
      if (options.reuseMs > 0) {
        recent.delete(cacheKey);
        recent.set(cacheKey, { at: nowMs, headers });
        if (recent.size > 1000) recent.delete(recent.keys().next().value as string);
      }
      return headers;
    },
  };
}
