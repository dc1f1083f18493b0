// https://docs.polymarket.us/api/authentication
import { polymarketUsHeaders, polymarketUsKey, type PolymarketUsCredentials } from '@depthgate/service-kit';
import type { SignInput, SignedHeaders, SyncSigner } from './types';

// The signing itself is shared with the recorder's feed handshake (@depthgate/service-kit, upstream-auth.ts).
export { polymarketUsKey, polymarketUsMessage } from '@depthgate/service-kit';

/** Ed25519 over `timestamp + METHOD + path` (no query, no body). [V] */
export function polymarketUsSigner(credentials: PolymarketUsCredentials): SyncSigner {
  const key = polymarketUsKey(credentials.secretKeyBase64);
  return {
    name: 'polymarket-us-ed25519',
    headerNames: ['x-pm-access-key', 'x-pm-timestamp', 'x-pm-signature'],
    sign(input: SignInput, nowMs: number): SignedHeaders {
      return polymarketUsHeaders(credentials.accessKey, key, input.method, input.path, nowMs);
    },
  };
}
