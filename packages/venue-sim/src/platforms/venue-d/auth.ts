// https://docs.cdp.coinbase.com/exchange/rest-api/authentication
import { createHmac, type KeyObject, timingSafeEqual, verify } from 'node:crypto';
import { valueText } from '@depthgate/feeds';
import { type AuthCheck, type AuthInput, header, hmacKey } from '../../http/types';

export interface CoinbaseVerifier {
  key: string;
  /** Standard base64, as issued. */
  secret: string;
  passphrase: string;
  signsQuery: boolean;
  toleranceSec: number;
  now: () => number;
  jwt: { keyName: string; publicKey: KeyObject; hosts: readonly string[] };
}

/**
 * Coinbase Exchange [V]: `CB-ACCESS-KEY`, `CB-ACCESS-SIGN`, `CB-ACCESS-TIMESTAMP` (seconds) and
 * `CB-ACCESS-PASSPHRASE`; the sign is `base64(HMAC-SHA256(base64decode(secret), timestamp + METHOD + requestPath +
 * body))`. Whether requestPath carries the query string is [3P]/[U] (`coinbaseSignsQuery`, default yes); the ±30 s
 * window is [U]. Errors carry Coinbase's `{"message": ...}` texts ([3P]).
 *
 * Also accepted: a CDP-style ES256 JWT in `Authorization: Bearer` ([U] for Exchange): header kid = key name, claims
 * iss "cdp", sub = key name, nbf/exp at most 120 s apart, uri "METHOD host/path".
 */
export function verifyCoinbase(input: AuthInput, v: CoinbaseVerifier): AuthCheck {
  const authz = header(input, 'authorization');
  if (authz !== undefined && /^Bearer /i.test(authz)) return verifyJwt(input, authz.slice(7).trim(), v);
  const requestPath = v.signsQuery && input.query ? `${input.path}?${input.query}` : input.path;
  return verifySigned(
    {
      key: header(input, 'cb-access-key'),
      sign: header(input, 'cb-access-sign'),
      ts: header(input, 'cb-access-timestamp'),
      pass: header(input, 'cb-access-passphrase'),
    },
    (ts) => `${ts}${input.method}${requestPath}${input.body.toString('utf8')}`,
    v,
  );
}

/** The key, passphrase, timestamp window and HMAC signature of `prehash(timestamp)`, wherever they were carried. */
function verifySigned(
  f: { key: string | undefined; sign: string | undefined; ts: string | undefined; pass: string | undefined },
  prehash: (ts: string) => string,
  v: CoinbaseVerifier,
): AuthCheck {
  const { key, sign, ts, pass } = f;
  if (key === undefined && sign === undefined && ts === undefined && pass === undefined) return { state: 'absent' };
  if (!key || key !== v.key) return { state: 'invalid', error: 'Invalid API Key' };
  if (!pass || pass !== v.passphrase) return { state: 'invalid', error: 'Invalid Passphrase' };
  if (!ts || !/^\d+(\.\d+)?$/.test(ts)) return { state: 'invalid', error: 'invalid timestamp' };
  if (Math.abs(v.now() / 1000 - Number(ts)) > v.toleranceSec)
    return { state: 'invalid', error: 'request timestamp expired' };
  if (!sign || !signatureMatches(v.secret, prehash(ts), sign)) return { state: 'invalid', error: 'invalid signature' };
  return { state: 'valid' };
}

function signatureMatches(secret: string, prehash: string, sign: string): boolean {
  const expected = createHmac('sha256', hmacKey(secret)).update(prehash).digest();
  const given = Buffer.from(sign, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The WebSocket feed's authenticated subscribe [3P] (Coinbase's help pages and ccxt's `authenticate`): the message
 * carries `key`, `passphrase`, `timestamp` (seconds) and `signature`, signed as a REST `GET /users/self/verify` with an
 * empty body, within the same timestamp window.
 */
export function verifyCoinbaseSubscribe(m: Record<string, unknown>, v: CoinbaseVerifier): AuthCheck {
  const str = (x: unknown) => (typeof x === 'string' ? x : typeof x === 'number' ? String(x) : undefined);
  return verifySigned(
    { key: str(m.key), sign: str(m.signature), ts: str(m.timestamp), pass: str(m.passphrase) },
    (ts) => `${ts}GET/users/self/verify`,
    v,
  );
}

function decodePart(part: string | undefined): Record<string, unknown> | undefined {
  if (!part) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function verifyJwt(input: AuthInput, token: string, v: CoinbaseVerifier): AuthCheck {
  const fail = (error: string): AuthCheck => ({ state: 'invalid', error });
  const parts = token.split('.');
  if (parts.length !== 3) return fail('malformed JWT');
  const head = decodePart(parts[0]);
  const claims = decodePart(parts[1]);
  if (!head || !claims) return fail('malformed JWT');
  if (head.alg !== 'ES256') return fail(`unsupported JWT alg ${valueText(head.alg)}`);
  if (head.kid !== v.jwt.keyName) return fail('JWT kid is not the key name');
  const ok = verify(
    'sha256',
    Buffer.from(`${parts[0]}.${parts[1]}`),
    { key: v.jwt.publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(parts[2] as string, 'base64url'),
  );
  if (!ok) return fail('JWT signature does not verify');
  if (claims.iss !== 'cdp') return fail('JWT iss must be "cdp"');
  if (claims.sub !== v.jwt.keyName) return fail('JWT sub is not the key name');
  const now = Math.floor(v.now() / 1000);
  const nbf = Number(claims.nbf);
  const exp = Number(claims.exp);
  if (!Number.isFinite(nbf) || !Number.isFinite(exp)) return fail('JWT nbf/exp missing');
  if (exp - nbf > 120) return fail('JWT lifetime exceeds 120 s');
  if (nbf > now + 5) return fail('JWT not yet valid');
  if (exp <= now) return fail('JWT expired');
  const hosts = [header(input, 'host'), ...v.jwt.hosts].filter((h): h is string => !!h);
  const uris = hosts.map((h) => `${input.method} ${h}${input.path}`);
  if (!uris.includes(String(claims.uri))) return fail(`JWT uri must be "${uris[0] ?? ''}"`);
  return { state: 'valid' };
}
