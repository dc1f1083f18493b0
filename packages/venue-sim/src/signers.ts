/**
 * Reference signers: the headers each platform expects, built exactly the way the simulator verifies them. For
 * tests of code that talks to the simulator (and as executable documentation of each scheme); production code
 * should carry its own signer and test it against the simulator.
 */
import { constants, createHmac, createPrivateKey, randomBytes, sign } from 'node:crypto';
import { ed25519KeyFromSecret, type SimCredentials } from './credentials';

export type Headers = Record<string, string>;

/** Kalshi: RSA-PSS-SHA256 (salt = digest length) over `tsMs + METHOD + path` (path without query). */
export function kalshiHeaders(
  creds: SimCredentials['kalshi'],
  method: string,
  path: string,
  tsMs = Date.now(),
): Headers {
  const signature = sign('sha256', Buffer.from(`${tsMs}${method}${path.split('?')[0]}`), {
    key: createPrivateKey(creds.privateKeyPem),
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
  return {
    'KALSHI-ACCESS-KEY': creds.accessKey,
    'KALSHI-ACCESS-TIMESTAMP': String(tsMs),
    'KALSHI-ACCESS-SIGNATURE': signature.toString('base64'),
  };
}

/** Polymarket US: Ed25519 over `tsMs + METHOD + path` (no query, no body), base64. */
export function polymarketUsHeaders(
  creds: SimCredentials['polymarketUs'],
  method: string,
  path: string,
  tsMs = Date.now(),
): Headers {
  const signature = sign(
    null,
    Buffer.from(`${tsMs}${method}${path.split('?')[0]}`),
    ed25519KeyFromSecret(creds.secretKeyBase64),
  );
  return {
    'X-PM-Access-Key': creds.accessKey,
    'X-PM-Timestamp': String(tsMs),
    'X-PM-Signature': signature.toString('base64'),
  };
}

/** The CLOB L2 signature (py-clob-client's build_hmac_signature). */
export function clobSignature(
  secret: string,
  timestampSec: string,
  method: string,
  requestPath: string,
  body = '',
): string {
  return createHmac('sha256', Buffer.from(secret, 'base64url'))
    .update(`${timestampSec}${method}${requestPath}${body}`)
    .digest('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}

/** Polymarket CLOB L2 headers; `requestPath` is signed as given (no query by default, like the SDK). */
export function clobHeaders(
  creds: SimCredentials['polymarketClob'],
  method: string,
  requestPath: string,
  body = '',
  tsSec = Math.floor(Date.now() / 1000),
): Headers {
  return {
    POLY_ADDRESS: creds.address,
    POLY_SIGNATURE: clobSignature(creds.secret, String(tsSec), method, requestPath, body),
    POLY_TIMESTAMP: String(tsSec),
    POLY_API_KEY: creds.apiKey,
    POLY_PASSPHRASE: creds.passphrase,
  };
}

/** Coinbase Exchange: base64 HMAC-SHA256 (base64-decoded secret) over `ts + METHOD + requestPath + body`. */
export function coinbaseHeaders(
  creds: SimCredentials['coinbase'],
  method: string,
  requestPath: string,
  body = '',
  tsSec = Math.floor(Date.now() / 1000),
): Headers {
  const signature = createHmac('sha256', Buffer.from(creds.secret, 'base64'))
    .update(`${tsSec}${method}${requestPath}${body}`)
    .digest('base64');
  return {
    'CB-ACCESS-KEY': creds.key,
    'CB-ACCESS-SIGN': signature,
    'CB-ACCESS-TIMESTAMP': String(tsSec),
    'CB-ACCESS-PASSPHRASE': creds.passphrase,
  };
}

/** A CDP-style ES256 JWT for `Authorization: Bearer`; `uri` is `METHOD host/path`. */
export function coinbaseJwt(
  creds: SimCredentials['coinbaseJwt'],
  method: string,
  hostAndPath: string,
  nowSec = Math.floor(Date.now() / 1000),
  lifetimeSec = 120,
): string {
  const enc = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = enc({ alg: 'ES256', kid: creds.keyName, nonce: randomBytes(16).toString('hex'), typ: 'JWT' });
  const claims = enc({
    iss: 'cdp',
    sub: creds.keyName,
    nbf: nowSec,
    exp: nowSec + lifetimeSec,
    uri: `${method} ${hostAndPath}`,
  });
  const sig = sign('sha256', Buffer.from(`${head}.${claims}`), {
    key: createPrivateKey(creds.privateKeyPem),
    dsaEncoding: 'ieee-p1363',
  });
  return `${head}.${claims}.${sig.toString('base64url')}`;
}
