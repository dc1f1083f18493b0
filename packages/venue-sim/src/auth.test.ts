import type { IncomingHttpHeaders } from 'node:http';
import type { AuthInput } from './http/types';
import { verifyCoinbase } from './platforms/venue-d/auth';
import { verifyKalshi } from './platforms/venue-b/auth';
import { verifyClob } from './platforms/venue-a-clob/clob-auth';
import { verifyPmUs } from './platforms/venue-a-us/auth';
import {
  clobSignature,
  clobHeaders,
  coinbaseHeaders,
  coinbaseJwt,
  kalshiHeaders,
  polymarketUsHeaders,
} from './signers';
import { otherCredentials, testCredentials } from './testing/credentials';

const NOW = 1_774_000_000_000;
const lower = (h: Record<string, string>): IncomingHttpHeaders =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
const input = (method: string, path: string, headers: Record<string, string>, query = '', body = ''): AuthInput => ({
  method,
  path,
  query,
  headers: lower(headers),
  body: Buffer.from(body),
});

describe('Kalshi RSA-PSS', () => {
  const verifier = async () => {
    const { credentials, keys } = await testCredentials();
    return {
      credentials,
      v: {
        accessKey: credentials.kalshi.accessKey,
        publicKey: keys.kalshiPublicKey,
        toleranceMs: 30_000,
        now: () => NOW,
      },
    };
  };
  const path = '/trade-api/v2/portfolio/balance';

  test('accepts a correctly signed request, the query string not being signed', async () => {
    const { credentials, v } = await verifier();
    const h = kalshiHeaders(credentials.kalshi, 'GET', path, NOW);
    expect(verifyKalshi(input('GET', path, h, 'limit=5'), v)).toEqual({ state: 'valid' });
  });
  test('rejects a signature made with another key', async () => {
    const { v } = await verifier();
    const other = (await otherCredentials()).credentials.kalshi;
    const h = kalshiHeaders({ ...other, accessKey: v.accessKey }, 'GET', path, NOW);
    expect(verifyKalshi(input('GET', path, h), v)).toMatchObject({
      state: 'invalid',
      error: expect.stringMatching(/does not verify/),
    });
  });
  test('rejects a tampered path, a tampered method and a path signed without the /trade-api/v2 prefix', async () => {
    const { credentials, v } = await verifier();
    const h = kalshiHeaders(credentials.kalshi, 'GET', path, NOW);
    expect(verifyKalshi(input('GET', '/trade-api/v2/portfolio/positions', h), v).state).toBe('invalid');
    expect(verifyKalshi(input('POST', path, h), v).state).toBe('invalid');
    const short = kalshiHeaders(credentials.kalshi, 'GET', '/portfolio/balance', NOW);
    expect(verifyKalshi(input('GET', path, short), v).state).toBe('invalid');
  });
  test('rejects a stale timestamp and a timestamp in seconds', async () => {
    const { credentials, v } = await verifier();
    const stale = kalshiHeaders(credentials.kalshi, 'GET', path, NOW - 31_000);
    expect(verifyKalshi(input('GET', path, stale), v)).toMatchObject({
      state: 'invalid',
      error: expect.stringMatching(/stale/),
    });
    const seconds = kalshiHeaders(credentials.kalshi, 'GET', path, Math.floor(NOW / 1000));
    expect(verifyKalshi(input('GET', path, seconds), v).state).toBe('invalid');
  });
  test('an unknown key id and missing headers are invalid; no headers at all is absent', async () => {
    const { credentials, v } = await verifier();
    const h = kalshiHeaders({ ...credentials.kalshi, accessKey: 'not-the-key' }, 'GET', path, NOW);
    expect(verifyKalshi(input('GET', path, h), v).error).toMatch(/unknown KALSHI-ACCESS-KEY/);
    const { ['KALSHI-ACCESS-SIGNATURE']: _, ...partial } = kalshiHeaders(credentials.kalshi, 'GET', path, NOW);
    expect(verifyKalshi(input('GET', path, partial), v).state).toBe('invalid');
    expect(verifyKalshi(input('GET', path, {}), v).state).toBe('absent');
  });
});

describe('Polymarket US Ed25519', () => {
  const verifier = async () => {
    const { credentials, keys } = await testCredentials();
    return {
      credentials,
      v: {
        accessKey: credentials.polymarketUs.accessKey,
        publicKey: keys.polymarketUsPublicKey,
        toleranceMs: 30_000,
        now: () => NOW,
      },
    };
  };
  const path = '/v1/portfolio/positions';

  test('the secret is 64 bytes: seed then public key', async () => {
    const { credentials } = await verifier();
    expect(Buffer.from(credentials.polymarketUs.secretKeyBase64, 'base64')).toHaveLength(64);
  });
  test('accepts a correct signature (query not signed)', async () => {
    const { credentials, v } = await verifier();
    const h = polymarketUsHeaders(credentials.polymarketUs, 'GET', path, NOW);
    expect(verifyPmUs(input('GET', path, h, 'limit=2'), v).state).toBe('valid');
  });
  test('rejects another key, a tampered path and a stale timestamp', async () => {
    const { credentials, v } = await verifier();
    const other = (await otherCredentials()).credentials.polymarketUs;
    expect(
      verifyPmUs(input('GET', path, polymarketUsHeaders({ ...other, accessKey: v.accessKey }, 'GET', path, NOW)), v)
        .state,
    ).toBe('invalid');
    const h = polymarketUsHeaders(credentials.polymarketUs, 'GET', path, NOW);
    expect(verifyPmUs(input('GET', '/v1/portfolio/activities', h), v).state).toBe('invalid');
    const stale = polymarketUsHeaders(credentials.polymarketUs, 'GET', path, NOW - 30_001);
    expect(verifyPmUs(input('GET', path, stale), v).error).toMatch(/stale/);
  });
});

describe('Polymarket CLOB L2 HMAC', () => {
  test("matches py-clob-client's own test vector", () => {
    expect(
      clobSignature(
        'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        '1000000',
        'test-sign',
        '/orders',
        '{"hash": "0x123"}',
      ),
    ).toBe('ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=');
  });
  const verifier = async (signsQuery = false) => {
    const { credentials } = await testCredentials();
    return { credentials, v: { ...credentials.polymarketClob, signsQuery, toleranceSec: 30, now: () => NOW } };
  };
  const path = '/data/orders';
  const ts = NOW / 1000;

  test('accepts a correct signature; the query is not signed unless configured', async () => {
    const { credentials, v } = await verifier();
    const h = clobHeaders(credentials.polymarketClob, 'GET', path, '', ts);
    expect(verifyClob(input('GET', path, h, 'market=0xabc'), v).state).toBe('valid');
    const withQuery = await verifier(true);
    expect(verifyClob(input('GET', path, h, 'market=0xabc'), withQuery.v).state).toBe('invalid');
    const signedWithQuery = clobHeaders(credentials.polymarketClob, 'GET', `${path}?market=0xabc`, '', ts);
    expect(verifyClob(input('GET', path, signedWithQuery, 'market=0xabc'), withQuery.v).state).toBe('valid');
  });
  test('signs the body of a POST', async () => {
    const { credentials, v } = await verifier();
    const body = '{"token_id":"1"}';
    const h = clobHeaders(credentials.polymarketClob, 'POST', '/order', body, ts);
    expect(verifyClob(input('POST', '/order', h, '', body), v).state).toBe('valid');
    expect(verifyClob(input('POST', '/order', h, '', '{"token_id":"2"}'), v).state).toBe('invalid');
  });
  test('rejects another secret, a tampered path, a stale timestamp and a standard-base64 signature', async () => {
    const { credentials, v } = await verifier();
    const other = (await otherCredentials()).credentials.polymarketClob;
    const wrong = clobHeaders({ ...credentials.polymarketClob, secret: other.secret }, 'GET', path, '', ts);
    expect(verifyClob(input('GET', path, wrong), v).error).toMatch(/does not verify/);
    const h = clobHeaders(credentials.polymarketClob, 'GET', path, '', ts);
    expect(verifyClob(input('GET', '/data/trades', h), v).state).toBe('invalid');
    const stale = clobHeaders(credentials.polymarketClob, 'GET', path, '', ts - 31);
    expect(verifyClob(input('GET', path, stale), v).error).toMatch(/stale/);
    // A signature whose url-safe form differs from standard base64, sent in standard base64.
    let t = ts;
    let urlSafe = clobHeaders(credentials.polymarketClob, 'GET', path, '', t);
    while (!/[-_]/.test(urlSafe.POLY_SIGNATURE as string))
      urlSafe = clobHeaders(credentials.polymarketClob, 'GET', path, '', --t);
    const std = {
      ...urlSafe,
      POLY_SIGNATURE: (urlSafe.POLY_SIGNATURE as string).replace(/-/g, '+').replace(/_/g, '/'),
    };
    expect(verifyClob(input('GET', path, urlSafe), v).state).toBe('valid');
    expect(verifyClob(input('GET', path, std), v).state).toBe('invalid');
  });
});

describe('Coinbase Exchange HMAC and CDP JWT', () => {
  const verifier = async (signsQuery = true) => {
    const { credentials, keys } = await testCredentials();
    return {
      credentials,
      v: {
        ...credentials.coinbase,
        signsQuery,
        toleranceSec: 30,
        now: () => NOW,
        jwt: {
          keyName: credentials.coinbaseJwt.keyName,
          publicKey: keys.coinbaseJwtPublicKey,
          hosts: ['api.exchange.coinbase.com'],
        },
      },
    };
  };
  const ts = NOW / 1000;

  test('accepts a correct signature over the path with its query (default)', async () => {
    const { credentials, v } = await verifier();
    const h = coinbaseHeaders(credentials.coinbase, 'GET', '/fills?product_id=BTC-USD', '', ts);
    expect(verifyCoinbase(input('GET', '/fills', h, 'product_id=BTC-USD'), v).state).toBe('valid');
    const bare = coinbaseHeaders(credentials.coinbase, 'GET', '/fills', '', ts);
    expect(verifyCoinbase(input('GET', '/fills', bare, 'product_id=BTC-USD'), v).state).toBe('invalid');
    const noQuery = await verifier(false);
    expect(verifyCoinbase(input('GET', '/fills', bare, 'product_id=BTC-USD'), noQuery.v).state).toBe('valid');
  });
  test('rejects another secret, a tampered path and a stale timestamp, with Coinbase messages', async () => {
    const { credentials, v } = await verifier();
    const other = (await otherCredentials()).credentials.coinbase;
    const wrong = coinbaseHeaders({ ...credentials.coinbase, secret: other.secret }, 'GET', '/accounts', '', ts);
    expect(verifyCoinbase(input('GET', '/accounts', wrong), v)).toEqual({
      state: 'invalid',
      error: 'invalid signature',
    });
    const h = coinbaseHeaders(credentials.coinbase, 'GET', '/accounts', '', ts);
    expect(verifyCoinbase(input('GET', '/orders', h), v).error).toBe('invalid signature');
    const stale = coinbaseHeaders(credentials.coinbase, 'GET', '/accounts', '', ts - 31);
    expect(verifyCoinbase(input('GET', '/accounts', stale), v).error).toBe('request timestamp expired');
    const badKey = coinbaseHeaders({ ...credentials.coinbase, key: 'nope' }, 'GET', '/accounts', '', ts);
    expect(verifyCoinbase(input('GET', '/accounts', badKey), v).error).toBe('Invalid API Key');
  });
  test('accepts a CDP JWT for its uri and rejects another key, another path and an expired token', async () => {
    const { credentials, v } = await verifier();
    const host = '127.0.0.1:9999';
    const ok = coinbaseJwt(credentials.coinbaseJwt, 'GET', `${host}/accounts`, ts);
    const req = (token: string, path = '/accounts') => ({
      ...input('GET', path, {}),
      headers: { host, authorization: `Bearer ${token}` },
    });
    expect(verifyCoinbase(req(ok), v).state).toBe('valid');
    expect(
      verifyCoinbase(req(coinbaseJwt(credentials.coinbaseJwt, 'GET', `api.exchange.coinbase.com/accounts`, ts)), v)
        .state,
    ).toBe('valid');
    expect(verifyCoinbase(req(ok, '/orders'), v).error).toMatch(/uri/);
    const other = (await otherCredentials()).credentials.coinbaseJwt;
    expect(
      verifyCoinbase(
        req(coinbaseJwt({ ...other, keyName: credentials.coinbaseJwt.keyName }, 'GET', `${host}/accounts`, ts)),
        v,
      ).error,
    ).toMatch(/does not verify/);
    expect(
      verifyCoinbase(req(coinbaseJwt(credentials.coinbaseJwt, 'GET', `${host}/accounts`, ts - 200)), v).error,
    ).toMatch(/expired/);
    expect(
      verifyCoinbase(req(coinbaseJwt(credentials.coinbaseJwt, 'GET', `${host}/accounts`, ts, 600)), v).error,
    ).toMatch(/120/);
    // A header whose alg is an object (its toString no function) is refused by name, not by a thrown TypeError.
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    expect(verifyCoinbase(req(`${part({ alg: { toString: 0 } })}.${part({})}.x`), v).error).toBe(
      'unsupported JWT alg {"toString":0}',
    );
  });
});
