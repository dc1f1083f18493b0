// https://docs.kalshi.com/getting_started/quick_start_authenticated_requests
import { constants, type KeyObject, verify } from 'node:crypto';
import { type AuthCheck, type AuthInput, header } from '../../http/types';

export interface KalshiVerifier {
  accessKey: string;
  publicKey: KeyObject;
  toleranceMs: number;
  now: () => number;
}

/**
 * Kalshi API keys [V]: `KALSHI-ACCESS-KEY` (key id), `KALSHI-ACCESS-TIMESTAMP` (epoch ms) and
 * `KALSHI-ACCESS-SIGNATURE`, base64 RSA-PSS-SHA256 (MGF1-SHA256, salt length = digest length) over
 * `timestamp + METHOD + path`, the full path including `/trade-api/v2` and without the query string. The allowed
 * clock skew is not documented ([U], `kalshiTimestampToleranceMs`).
 */
export function verifyKalshi(input: AuthInput, v: KalshiVerifier): AuthCheck {
  const key = header(input, 'kalshi-access-key');
  const ts = header(input, 'kalshi-access-timestamp');
  const sig = header(input, 'kalshi-access-signature');
  if (key === undefined && ts === undefined && sig === undefined) return { state: 'absent' };
  if (!key) return { state: 'invalid', error: 'missing KALSHI-ACCESS-KEY' };
  if (!ts) return { state: 'invalid', error: 'missing KALSHI-ACCESS-TIMESTAMP' };
  if (!sig) return { state: 'invalid', error: 'missing KALSHI-ACCESS-SIGNATURE' };
  if (key !== v.accessKey) return { state: 'invalid', error: 'unknown KALSHI-ACCESS-KEY' };
  if (!/^\d{13}$/.test(ts)) return { state: 'invalid', error: 'KALSHI-ACCESS-TIMESTAMP must be epoch milliseconds' };
  const skew = Math.abs(v.now() - Number(ts));
  if (skew > v.toleranceMs) return { state: 'invalid', error: `stale KALSHI-ACCESS-TIMESTAMP (${skew} ms off)` };
  const message = Buffer.from(`${ts}${input.method}${input.path}`);
  let ok: boolean;
  try {
    ok = verify(
      'sha256',
      message,
      { key: v.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
      Buffer.from(sig, 'base64'),
    );
  } catch {
    ok = false;
  }
  return ok
    ? { state: 'valid' }
    : {
        state: 'invalid',
        error: 'KALSHI-ACCESS-SIGNATURE does not verify (RSA-PSS-SHA256 over timestamp+METHOD+path)',
      };
}
