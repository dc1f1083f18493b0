// https://docs.polymarket.us/api-reference/authentication
import { type KeyObject, verify } from 'node:crypto';
import { type AuthCheck, type AuthInput, header } from '../../http/types';

export interface PmUsVerifier {
  accessKey: string;
  publicKey: KeyObject;
  toleranceMs: number;
  now: () => number;
}

/**
 * Polymarket US API keys [V]: `X-PM-Access-Key`, `X-PM-Timestamp` (epoch ms, within 30 s of server time) and
 * `X-PM-Signature`, base64 Ed25519 over `timestamp + METHOD + path` (the SDK signs `url.pathname`: no query, no body).
 */
export function verifyPmUs(input: AuthInput, v: PmUsVerifier): AuthCheck {
  const key = header(input, 'x-pm-access-key');
  const ts = header(input, 'x-pm-timestamp');
  const sig = header(input, 'x-pm-signature');
  if (key === undefined && ts === undefined && sig === undefined) return { state: 'absent' };
  if (!key) return { state: 'invalid', error: 'missing X-PM-Access-Key' };
  if (!ts) return { state: 'invalid', error: 'missing X-PM-Timestamp' };
  if (!sig) return { state: 'invalid', error: 'missing X-PM-Signature' };
  if (key !== v.accessKey) return { state: 'invalid', error: 'unknown X-PM-Access-Key' };
  if (!/^\d{13}$/.test(ts)) return { state: 'invalid', error: 'X-PM-Timestamp must be epoch milliseconds' };
  const skew = Math.abs(v.now() - Number(ts));
  if (skew > v.toleranceMs) return { state: 'invalid', error: `stale X-PM-Timestamp (${skew} ms off)` };
  let ok: boolean;
  try {
    ok = verify(null, Buffer.from(`${ts}${input.method}${input.path}`), v.publicKey, Buffer.from(sig, 'base64'));
  } catch {
    ok = false;
  }
  return ok
    ? { state: 'valid' }
    : { state: 'invalid', error: 'X-PM-Signature does not verify (Ed25519 over timestamp+METHOD+path)' };
}
