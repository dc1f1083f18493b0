import { constants, generateKeyPairSync, verify } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import type { SignInput } from './signing';
import { polymarketClobSignature, polymarketClobSigner } from './venue-a-clob/signer';
import { polymarketUsKey, polymarketUsSigner } from './venue-a-us/signer';
import { kalshiMessage, kalshiSigner } from './venue-b/signer';
import { coinbaseHmacSigner, coinbaseJwtSigner, coinbaseSignature } from './venue-d/signer';

const get = (path: string, query = '', host = 'example.test'): SignInput => ({
  method: 'GET',
  path,
  query,
  body: '',
  host,
});

describe('Kalshi RSA-PSS', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const credentials = { accessKey: 'a952bcbe-ec3b-4b5b-b8f9-11dae589608c', privateKeyPem: pem };

  it('signs timestamp + METHOD + full path without the query (docs example)', () => {
    expect(kalshiMessage(1703123456789, 'get', '/trade-api/v2/portfolio/balance')).toBe(
      '1703123456789GET/trade-api/v2/portfolio/balance',
    );
    const headers = kalshiSigner(credentials, { reuseMs: 0 }).sign(
      get('/trade-api/v2/portfolio/orders', 'limit=5'),
      1703123456789,
    );
    expect(headers['KALSHI-ACCESS-KEY']).toBe(credentials.accessKey);
    expect(headers['KALSHI-ACCESS-TIMESTAMP']).toBe('1703123456789');
    const signature = Buffer.from(headers['KALSHI-ACCESS-SIGNATURE'] ?? '', 'base64');
    const opts = {
      key: publicKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
    };
    expect(verify('sha256', Buffer.from('1703123456789GET/trade-api/v2/portfolio/orders'), opts, signature)).toBe(true);
    expect(
      verify('sha256', Buffer.from('1703123456789GET/trade-api/v2/portfolio/orders?limit=5'), opts, signature),
    ).toBe(false);
    expect(verify('sha256', Buffer.from('1703123456790GET/trade-api/v2/portfolio/orders'), opts, signature)).toBe(
      false,
    );
  });

  it('accepts PKCS#8 keys and refuses non-RSA keys', () => {
    const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => kalshiSigner({ ...credentials, privateKeyPem: pkcs8 }, { reuseMs: 0 })).not.toThrow();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(() => kalshiSigner({ ...credentials, privateKeyPem: ec }, { reuseMs: 0 })).toThrow(/RSA/);
  });

  it('reuses a young signature for the same path only when asked to', () => {
    const reusing = kalshiSigner(credentials, { reuseMs: 500 });
    const a = reusing.sign(get('/trade-api/v2/markets'), 1000);
    expect(reusing.sign(get('/trade-api/v2/markets'), 1499)).toBe(a);
    expect(reusing.sign(get('/trade-api/v2/markets'), 1500)['KALSHI-ACCESS-TIMESTAMP']).toBe('1500');
    expect(reusing.sign(get('/trade-api/v2/events'), 1200)['KALSHI-ACCESS-TIMESTAMP']).toBe('1200');
    const fresh = kalshiSigner(credentials, { reuseMs: 0 });
    expect(fresh.sign(get('/trade-api/v2/markets'), 1000)).not.toBe(fresh.sign(get('/trade-api/v2/markets'), 1000));
  });
});

describe('Polymarket US Ed25519', () => {
  // RFC 8032 test vector 1: seed || public key, as the 64-byte secret the SDK expects.
  const seed = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
  const pub = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
  const secretKeyBase64 = Buffer.from(seed + pub, 'hex').toString('base64');

  it('produces the known signature over timestamp + METHOD + path (computed independently with openssl)', () => {
    const headers = polymarketUsSigner({ accessKey: 'k-uuid', secretKeyBase64 }).sign(
      get('/v1/portfolio/positions', 'limit=5'),
      1705420800000,
    );
    expect(headers).toEqual({
      'X-PM-Access-Key': 'k-uuid',
      'X-PM-Timestamp': '1705420800000',
      'X-PM-Signature': 'J+6zCHrZ1oeV5eDsoroD9aTVlN6mFfN3xQ+6+Wo0lfRprJUu5lRGAw/thsGiswFZ8ppYYJ6Y0alnDrsWVQ03Cg==',
    });
  });

  it('refuses secrets of the wrong size or with a mismatched public half', () => {
    expect(() => polymarketUsKey(Buffer.alloc(48).toString('base64'))).toThrow(/64/);
    expect(() => polymarketUsKey(Buffer.from(seed + '00'.repeat(32), 'hex').toString('base64'))).toThrow(/public half/);
    expect(() => polymarketUsKey(Buffer.from(seed, 'hex').toString('base64'))).not.toThrow();
  });
});

describe('Polymarket CLOB L2 HMAC', () => {
  it("matches the official clients' known answer", () => {
    expect(
      polymarketClobSignature(
        'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        1000000,
        'test-sign',
        '/orders',
        '{"hash": "0x123"}',
      ),
    ).toBe('ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=');
  });

  it('sets the five POLY_ headers, seconds timestamp, query signed only when configured', () => {
    const credentials = {
      address: '0xabc',
      apiKey: 'api',
      secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      passphrase: 'pp',
    };
    const plain = polymarketClobSigner(credentials, { signQuery: false }).sign(
      get('/data/orders', 'market=1'),
      1000000999,
    );
    expect(plain).toEqual({
      POLY_ADDRESS: '0xabc',
      POLY_SIGNATURE: polymarketClobSignature(credentials.secret, 1000000, 'GET', '/data/orders', ''),
      POLY_TIMESTAMP: '1000000',
      POLY_API_KEY: 'api',
      POLY_PASSPHRASE: 'pp',
    });
    const withQuery = polymarketClobSigner(credentials, { signQuery: true }).sign(
      get('/data/orders', 'market=1'),
      1000000999,
    );
    expect(withQuery.POLY_SIGNATURE).toBe(
      polymarketClobSignature(credentials.secret, 1000000, 'GET', '/data/orders?market=1', ''),
    );
    expect(withQuery.POLY_SIGNATURE).not.toBe(plain.POLY_SIGNATURE);
  });
});

describe('Coinbase Exchange HMAC', () => {
  const credentials = { key: 'cb-key', secret: 'AQIDBAUGBwAACgsMDQ4PEBESExQVFhcYGRobHB0eHyA=', passphrase: 'cb-pass' };

  it('produces the known signatures (computed independently with openssl)', () => {
    expect(coinbaseSignature(credentials.secret, 1420674445, 'GET', '/products/BTC-USD/book?level=2', '')).toBe(
      'ooXPlq1Ci7Kenm0RQYzS60IJi89J1lHhyzH40+xMLz0=',
    );
    const headers = coinbaseHmacSigner(credentials, { signQuery: true }).sign(get('/accounts'), 1420674445201);
    expect(headers).toEqual({
      'CB-ACCESS-KEY': 'cb-key',
      'CB-ACCESS-SIGN': 'y8LZwF+TX9dSqtnmOTabKZuKrFvwAylgOXCr8dNGfBk=',
      'CB-ACCESS-TIMESTAMP': '1420674445',
      'CB-ACCESS-PASSPHRASE': 'cb-pass',
    });
  });

  it('signs the query string unless told not to', () => {
    const input = get('/products/BTC-USD/book', 'level=2');
    expect(coinbaseHmacSigner(credentials, { signQuery: true }).sign(input, 1420674445000)['CB-ACCESS-SIGN']).toBe(
      'ooXPlq1Ci7Kenm0RQYzS60IJi89J1lHhyzH40+xMLz0=',
    );
    expect(coinbaseHmacSigner(credentials, { signQuery: false }).sign(input, 1420674445000)['CB-ACCESS-SIGN']).toBe(
      coinbaseSignature(credentials.secret, 1420674445, 'GET', '/products/BTC-USD/book', ''),
    );
  });
});

describe('Coinbase CDP JWT', () => {
  it('signs an ES256 JWT with kid, nonce and the documented claims', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    const signer = coinbaseJwtSigner(
      { keyName: 'organizations/o/apiKeys/k', privateKeyPem: pem },
      { nonce: () => 'abc123' },
    );
    const nowMs = Date.now();
    const headers = await signer.sign(get('/api/v3/brokerage/accounts', 'limit=1', 'api.coinbase.com'), nowMs);
    const jwt = (headers.Authorization ?? '').replace(/^Bearer /, '');
    expect(decodeProtectedHeader(jwt)).toEqual({
      alg: 'ES256',
      kid: 'organizations/o/apiKeys/k',
      nonce: 'abc123',
      typ: 'JWT',
    });
    const spki = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const { payload } = await jwtVerify(jwt, await importSPKI(spki, 'ES256'), {
      issuer: 'cdp',
      subject: 'organizations/o/apiKeys/k',
    });
    const now = Math.floor(nowMs / 1000);
    expect(payload).toEqual({
      iss: 'cdp',
      sub: 'organizations/o/apiKeys/k',
      nbf: now,
      exp: now + 120,
      uri: 'GET api.coinbase.com/api/v3/brokerage/accounts',
    });
    // A different key does not verify it.
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    await expect(jwtVerify(jwt, other)).rejects.toThrow(/signature verification failed/);
  });

  it('uses EdDSA for Ed25519 keys and refuses RSA keys', async () => {
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const headers = await coinbaseJwtSigner({ keyName: 'k', privateKeyPem: ed }).sign(get('/x'), Date.now());
    expect(decodeProtectedHeader((headers.Authorization ?? '').slice(7)).alg).toBe('EdDSA');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(() => coinbaseJwtSigner({ keyName: 'k', privateKeyPem: rsa })).toThrow(/EC P-256 or Ed25519/);
  });
});
