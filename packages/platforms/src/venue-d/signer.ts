// https://docs.cdp.coinbase.com/exchange/rest-api/authentication
import { createHmac, createPrivateKey, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { withQuery, type SignInput, type Signer, type SignedHeaders, type SyncSigner } from '../signing';

export interface CoinbaseHmacCredentials {
  key: string;
  secret: string;
  passphrase: string;
}
export interface CoinbaseJwtCredentials {
  keyName: string;
  privateKeyPem: string;
}

/** The HMAC key of a Coinbase Exchange secret (standard base64, as issued); a signer makes it once (signing.ts). */
export function coinbaseSecretKey(secretBase64: string): KeyObject {
  return createSecretKey(Buffer.from(secretBase64, 'base64'));
}

/**
 * Coinbase Exchange: base64(HMAC-SHA256(base64decode(secret), seconds + METHOD + requestPath + body)). [V]
 * The request path includes the query string by default ([3P]/[U]: `signQuery`). `secret` is the secret as issued
 * or its key from coinbaseSecretKey.
 */
export function coinbaseSignature(
  secret: string | KeyObject,
  timestampS: number,
  method: string,
  requestPath: string,
  body: string,
): string {
  return createHmac('sha256', typeof secret === 'string' ? coinbaseSecretKey(secret) : secret)
    .update(`${timestampS}${method.toUpperCase()}${requestPath}${body}`)
    .digest('base64');
}

export function coinbaseHmacSigner(credentials: CoinbaseHmacCredentials, options: { signQuery: boolean }): SyncSigner {
  const secret = coinbaseSecretKey(credentials.secret);
  return {
    name: 'coinbase-exchange-hmac',
    headerNames: ['cb-access-key', 'cb-access-sign', 'cb-access-timestamp', 'cb-access-passphrase'],
    sign(input: SignInput, nowMs: number): SignedHeaders {
      const ts = Math.floor(nowMs / 1000);
      const requestPath = options.signQuery ? withQuery(input.path, input.query) : input.path;
      return {
        'CB-ACCESS-KEY': credentials.key,
        'CB-ACCESS-SIGN': coinbaseSignature(secret, ts, input.method, requestPath, input.body),
        'CB-ACCESS-TIMESTAMP': String(ts),
        'CB-ACCESS-PASSPHRASE': credentials.passphrase,
      };
    },
  };
}

/** The JWT algorithm for a CDP private key: ES256 (EC P-256) or EdDSA (Ed25519); anything else is refused. */
export function coinbaseJwtAlgorithm(privateKeyPem: string): 'ES256' | 'EdDSA' {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec') return 'ES256';
  throw new Error('COINBASE_JWT_PRIVATE_KEY must be an EC P-256 or Ed25519 private key');
}

/**
 * Coinbase CDP keys (Advanced Trade and newer APIs): a JWT per request, ES256 for EC keys or EdDSA for Ed25519 keys,
 * `kid` = key name, a random `nonce`, claims iss "cdp", sub = key name, nbf = now, exp = now + 120 s and
 * `uri` = "METHOD host/path" (no scheme, no query). [U] for Coinbase Exchange, which uses HMAC keys.
 */
export function coinbaseJwtSigner(credentials: CoinbaseJwtCredentials, options: { nonce?: () => string } = {}): Signer {
  const alg = coinbaseJwtAlgorithm(credentials.privateKeyPem);
  const key = createPrivateKey(credentials.privateKeyPem);
  const nonce = options.nonce ?? (() => randomBytes(16).toString('hex'));
  return {
    name: 'coinbase-cdp-jwt',
    headerNames: ['authorization'],
    async sign(input: SignInput, nowMs: number): Promise<SignedHeaders> {
      const now = Math.floor(nowMs / 1000);
      const jwt = await new SignJWT({ uri: `${input.method.toUpperCase()} ${input.host}${input.path}` })
        .setProtectedHeader({ alg, kid: credentials.keyName, nonce: nonce(), typ: 'JWT' })
        .setIssuer('cdp')
        .setSubject(credentials.keyName)
        .setNotBefore(now)
        .setExpirationTime(now + 120)
        .sign(key);
      return { Authorization: `Bearer ${jwt}` };
    },
  };
}
