// https://docs.kalshi.com/getting_started/quick_start_authenticated_requests
import { kalshiHeaders, kalshiPrivateKey, type KalshiCredentials } from '@depthgate/service-kit';
import type { SignInput, SignedHeaders, SyncSigner } from './types';

// The signing itself is shared with the recorder's feed handshake (@depthgate/service-kit, upstream-auth.ts).
export { kalshiMessage, kalshiSignature } from '@depthgate/service-kit';

/**
 * Kalshi RSA-PSS (SHA-256, MGF1-SHA256, salt = digest length). An RSA signature costs about a millisecond of CPU,
 * so with `reuseMs` > 0 a signature is reused for the same method and path while it is that young (Kalshi checks
 * the timestamp's age, not its uniqueness); 0 signs every request.
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
      const headers = kalshiHeaders(credentials.accessKey, key, input.method, input.path, nowMs);
      if (options.reuseMs > 0) {
        recent.delete(cacheKey);
        recent.set(cacheKey, { at: nowMs, headers });
        if (recent.size > 1000) recent.delete(recent.keys().next().value as string);
      }
      return headers;
    },
  };
}
