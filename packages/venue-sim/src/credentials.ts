import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import selfsigned from 'selfsigned';

/** Test credentials the simulator generates (or is given) and verifies against; never real ones. */
export interface SimCredentials {
  kalshi: { accessKey: string; privateKeyPem: string };
  /** `secretKeyBase64`: 64 bytes, Ed25519 seed (0–31) then public key (32–63), as Polymarket US issues them. */
  polymarketUs: { accessKey: string; secretKeyBase64: string };
  /** `secret`: url-safe base64 (padded), as the CLOB's L2 API keys. */
  polymarketClob: { address: string; apiKey: string; secret: string; passphrase: string };
  /** `secret`: standard base64. */
  coinbase: { key: string; secret: string; passphrase: string };
  /** CDP-style key for ES256 JWTs: `organizations/{org}/apiKeys/{key}` and an EC P-256 (SEC1) private key. */
  coinbaseJwt: { keyName: string; privateKeyPem: string };
  /** The IBKR portal's self-signed certificate, to trust as a CA. */
  ibkr: { certPem: string };
}

/** What verification needs, derived once from the credentials. */
export interface VerificationKeys {
  kalshiPublicKey: KeyObject;
  polymarketUsPublicKey: KeyObject;
  coinbaseJwtPublicKey: KeyObject;
  ibkrTls: { key: string; cert: string };
}

export type CredentialOverrides = Partial<Omit<SimCredentials, 'ibkr'>>;

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function ed25519KeyFromSecret(secretKeyBase64: string): KeyObject {
  const raw = Buffer.from(secretKeyBase64, 'base64');
  if (raw.length !== 64 && raw.length !== 32) throw new Error('Polymarket US secret key must be 32 or 64 bytes');
  return createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, raw.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
}

function urlSafePadded(buf: Buffer): string {
  return buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

export async function createCredentials(
  overrides: CredentialOverrides = {},
): Promise<{ credentials: SimCredentials; keys: VerificationKeys }> {
  const kalshi =
    overrides.kalshi ??
    (() => {
      const { privateKey } = generateKeyPairSync('rsa', {
        modulusLength: 2048,
        privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      });
      return { accessKey: randomUUID(), privateKeyPem: privateKey };
    })();

  const polymarketUs =
    overrides.polymarketUs ??
    (() => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url');
      const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
      return { accessKey: randomUUID(), secretKeyBase64: Buffer.concat([seed, pub]).toString('base64') };
    })();

  const polymarketClob = overrides.polymarketClob ?? {
    address: `0x${randomBytes(20).toString('hex')}`,
    apiKey: randomUUID(),
    secret: urlSafePadded(randomBytes(32)),
    passphrase: randomBytes(32).toString('hex'),
  };

  const coinbase = overrides.coinbase ?? {
    key: randomBytes(16).toString('hex'),
    secret: randomBytes(64).toString('base64'),
    passphrase: randomBytes(9).toString('base64url').toLowerCase(),
  };

  const coinbaseJwt =
    overrides.coinbaseJwt ??
    (() => {
      const { privateKey } = generateKeyPairSync('ec', {
        namedCurve: 'P-256',
        privateKeyEncoding: { type: 'sec1', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      });
      return { keyName: `organizations/${randomUUID()}/apiKeys/${randomUUID()}`, privateKeyPem: privateKey };
    })();

  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 365 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });

  const credentials: SimCredentials = {
    kalshi,
    polymarketUs,
    polymarketClob,
    coinbase,
    coinbaseJwt,
    ibkr: { certPem: pems.cert },
  };
  const keys: VerificationKeys = {
    kalshiPublicKey: createPublicKey(kalshi.privateKeyPem),
    polymarketUsPublicKey: createPublicKey(ed25519KeyFromSecret(polymarketUs.secretKeyBase64)),
    coinbaseJwtPublicKey: createPublicKey(coinbaseJwt.privateKeyPem),
    ibkrTls: { key: pems.private, cert: pems.cert },
  };
  return { credentials, keys };
}
