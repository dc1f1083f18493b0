// https://docs.polymarket.com/developers/CLOB/authentication
import { createHmac } from 'node:crypto';
import { type AuthCheck, type AuthInput, header, hmacKey } from '../../http/types';

export interface ClobVerifier {
  address: string;
  apiKey: string;
  /** url-safe base64, as issued. */
  secret: string;
  passphrase: string;
  signsQuery: boolean;
  toleranceSec: number;
  now: () => number;
}

/** url-safe base64 with padding, like Python's `base64.urlsafe_b64encode`. */
function urlSafeBase64(buf: Buffer): string {
  return buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * CLOB L2 [V] headers `POLY_ADDRESS`, `POLY_SIGNATURE`, `POLY_TIMESTAMP`, `POLY_API_KEY`, `POLY_PASSPHRASE`.
 * upstreams.md tags the signed string [3P] and the algorithm [U]; the official py-clob-client
 * (signing/hmac.py and its test vector, headers/headers.py) settles both: HMAC-SHA256 keyed with the
 * base64url-decoded secret over `timestamp + METHOD + requestPath + body`, url-safe base64 (padded) output, epoch
 * seconds. The SDK signs the endpoint path without its query string; `clobSignsQuery` flips that. The allowed skew
 * (`clobTimestampToleranceSec`) is not documented ([U]).
 */
export function verifyClob(input: AuthInput, v: ClobVerifier): AuthCheck {
  const address = header(input, 'poly_address');
  const sig = header(input, 'poly_signature');
  const ts = header(input, 'poly_timestamp');
  const key = header(input, 'poly_api_key');
  const pass = header(input, 'poly_passphrase');
  if ([address, sig, ts, key, pass].every((x) => x === undefined)) return { state: 'absent' };
  if (!key || key !== v.apiKey) return { state: 'invalid', error: 'unknown POLY_API_KEY' };
  if (!pass || pass !== v.passphrase) return { state: 'invalid', error: 'wrong POLY_PASSPHRASE' };
  if (!address || address.toLowerCase() !== v.address.toLowerCase()) {
    return { state: 'invalid', error: 'POLY_ADDRESS does not own the API key' };
  }
  if (!ts || !/^\d{1,11}$/.test(ts)) return { state: 'invalid', error: 'POLY_TIMESTAMP must be epoch seconds' };
  const skew = Math.abs(Math.floor(v.now() / 1000) - Number(ts));
  if (v.toleranceSec > 0 && skew > v.toleranceSec)
    return { state: 'invalid', error: `stale POLY_TIMESTAMP (${skew} s off)` };
  if (!sig) return { state: 'invalid', error: 'missing POLY_SIGNATURE' };
  const requestPath = v.signsQuery && input.query ? `${input.path}?${input.query}` : input.path;
  const expected = urlSafeBase64(
    createHmac('sha256', hmacKey(v.secret))
      .update(`${ts}${input.method}${requestPath}${input.body.toString('utf8')}`)
      .digest(),
  );
  return sig === expected
    ? { state: 'valid' }
    : {
        state: 'invalid',
        error: 'POLY_SIGNATURE does not verify (HMAC-SHA256 over timestamp+METHOD+requestPath+body)',
      };
}
