import http from 'node:http';
import net from 'node:net';
import { gunzipSync } from 'node:zlib';
import { RedisKeyStore, type Redis } from '@depthgate/auth';
import {
  halfOpenExchange,
  rawExchange,
  refusedPort,
  uniqueName,
  waitFor,
  webSocketHandshake,
} from '@depthgate/test-utils';
import { GatewayClient, HttpError, type Platform } from '@depthgate/client';
import type { Simulator } from '@depthgate/venue-sim';
import type { RunningGateway } from './server';
import { call, simSecrets, startGatewayHarness, type GatewayHarness } from './testing/harness';

let h: GatewayHarness;
let sim: Simulator;
let admin: Redis;
let gw: RunningGateway;
let key: string;
const gateway: GatewayHarness['gateway'] = (overrides, withCredentials, now) =>
  h.gateway(overrides, withCredentials, now);
const newKey: GatewayHarness['newKey'] = (input) => h.newKey(input);
const last: GatewayHarness['last'] = (filter) => h.last(filter);
/** The project's own client on a gateway of this suite (no retries unless asked: the statuses are the point). */
const clientOf = (
  g: RunningGateway,
  apiKey = key,
  options: Partial<ConstructorParameters<typeof GatewayClient>[0]> = {},
) => new GatewayClient({ baseUrl: `http://127.0.0.1:${g.port}`, apiKey, retry: { retries: 0 }, ...options });

beforeAll(async () => {
  h = await startGatewayHarness();
  ({ sim, admin } = h);
  key = await newKey();
  gw = await gateway();
});

afterAll(async () => {
  await h.close();
  // No caller key, upstream secret or signature ever reaches a log line.
  const logs = h.logs();
  expect(logs).not.toContain(key);
  for (const secret of simSecrets(sim)) expect(logs).not.toContain(secret);
  expect(logs).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY/);
});

beforeEach(() => {
  sim.clearRequests();
  sim.faults.clear();
});

describe('the spec’s gateway table, against the simulator', () => {
  const auth = () => ({ 'X-API-Key': key });

  it.each([
    ['venue-b', 'search/filters', 'kalshi', '/trade-api/v2/search/filters_by_sport'],
    ['venue-b', 'historical/cutoff-timestamps', 'kalshi', '/trade-api/v2/historical/cutoff'],
    ['venue-b', 'exchange/announcements', 'kalshi', '/trade-api/v2/exchange/announcements'],
    ['venue-b', 'events/multivariate', 'kalshi', '/trade-api/v2/events/multivariate'],
    ['venue-b', 'structured-targets', 'kalshi', '/trade-api/v2/structured_targets'],
    ['venue-b', 'incentive-programs', 'kalshi', '/trade-api/v2/incentive_programs'],
    ['venue-a-us', 'sports', 'venue-a-us', '/v1/sports'],
    ['venue-a-us', 'sports/teams', 'venue-a-us', '/v1/sports/teams'],
    ['venue-d', 'time', 'coinbase', '/time'],
    ['venue-e', 'trsrv/event/category-tree', 'venue-e/portal', '/v1/api/trsrv/event/category-tree'],
  ] as [Platform, string, string, string][])(
    '/api/v1/%s/%s → %s %s (200 JSON object, Kalshi signature verified)',
    async (platform, resource, upstream, upstreamPath) => {
      const res = await clientOf(gw).get(platform, resource);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(typeof res.data).toBe('object');
      expect(Array.isArray(res.data)).toBe(false);
      const seen = last({ platform: upstream });
      expect(seen).toMatchObject({ method: 'GET', path: upstreamPath, query: '' });
      if (upstream === 'kalshi') expect(seen?.auth).toBe('valid');
    },
  );

  it('/venue-d/currencies is a JSON array and /venue-d/time is {iso, epoch}', async () => {
    const client = clientOf(gw);
    const currencies = (await client.get<object[]>('venue-d', 'currencies')).data;
    expect(Array.isArray(currencies)).toBe(true);
    expect(currencies.length).toBeGreaterThan(0);
    const time = (
      await client.get<{ iso: string; epoch: number }>(
        'venue-d',
        'time',
        {},
        { headers: { 'Cache-Control': 'no-cache' } },
      )
    ).data;
    expect(time.iso).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(typeof time.epoch).toBe('number');
  });

  it('/venue-a-us/events passes every filter byte for byte and returns the paginated object', async () => {
    const query =
      'limit=5&offset=0&active=true&closed=false&archived=false&featured=false&slug=a-b&slug=c-d&tagSlug=sports' +
      '&categories=sports&categories=politics&seriesId=1&seriesId=2&startDateMin=2026-01-01&startDateMax=2027-01-01' +
      '&endDateMin=2026-01-01&endDateMax=2028-01-01&liquidityMin=0&liquidityMax=1000000000&volumeMin=0&volumeMax=1000000000' +
      '&live=false&orderBy=volume&orderDirection=desc';
    const res = await call(gw.port, `/api/v1/venue-a-us/events?${query}`, auth());
    expect(res.status).toBe(200);
    expect(res.json()).toHaveProperty('events');
    expect(last({ platform: 'venue-a-us' })).toMatchObject({ path: '/v1/events', query });
    const all = (
      await call(gw.port, '/api/v1/venue-a-us/events?limit=2&orderBy=volume&orderDirection=asc', auth())
    ).json() as { events: unknown[] };
    expect(all.events.length).toBeLessThanOrEqual(2);
  });

  it('accepts real platform names as aliases', async () => {
    const client = clientOf(gw);
    expect((await client.get('kalshi', 'exchange/announcements')).status).toBe(200);
    expect((await client.get('coinbase', 'time', {}, { headers: { 'Cache-Control': 'no-cache' } })).status).toBe(200);
  });

  it('HEAD is forwarded as HEAD', async () => {
    const res = await call(gw.port, '/api/v1/venue-d/currencies', auth(), 'HEAD');
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(0);
    expect(last({ platform: 'coinbase' })?.method).toBe('HEAD');
  });
});

describe('upstream signatures, verified by the simulator', () => {
  it.each([
    ['Kalshi RSA-PSS', '/api/v1/venue-b/portfolio/balance', 'kalshi', '/trade-api/v2/portfolio/balance'],
    ['Polymarket US Ed25519', '/api/v1/venue-a-us/portfolio/positions', 'venue-a-us/auth', '/v1/portfolio/positions'],
    ['Polymarket CLOB L2 HMAC', '/api/v1/venue-a-clob/data/orders', 'venue-a-clob', '/data/orders'],
    ['Coinbase Exchange HMAC', '/api/v1/venue-d/accounts', 'coinbase', '/accounts'],
  ])('%s', async (_name, path, platform, upstreamPath) => {
    const [, , , target, ...resource] = path.split('/');
    const res = await clientOf(gw).get(target as Platform, resource.join('/'), { limit: 3 });
    expect(res.status).toBe(200);
    const seen = last({ platform });
    expect(seen).toMatchObject({ path: upstreamPath, query: 'limit=3', auth: 'valid' });
  });

  it('Coinbase CDP JWT', async () => {
    const jwtGateway = await gateway({
      COINBASE_API_KEY: '',
      COINBASE_API_SECRET_FILE: '',
      COINBASE_API_PASSPHRASE_FILE: '',
      COINBASE_JWT_KEY_NAME: sim.credentials.coinbaseJwt.keyName,
      COINBASE_JWT_PRIVATE_KEY: sim.credentials.coinbaseJwt.privateKeyPem,
    });
    const res = await call(jwtGateway.port, '/api/v1/venue-d/accounts', { 'X-API-Key': key });
    expect(res.status).toBe(200);
    const seen = last({ platform: 'coinbase' });
    expect(seen?.auth).toBe('valid');
    expect(String(seen?.headers.authorization)).toMatch(/^Bearer ey/);
  });

  it('without credentials: public data unsigned, private routes get the upstream’s own 401', async () => {
    const open = await gateway({}, false);
    expect((await call(open.port, '/api/v1/venue-b/exchange/announcements', { 'X-API-Key': key })).status).toBe(200);
    expect(last({ platform: 'kalshi' })?.headers['kalshi-access-signature']).toBeUndefined();
    const denied = await call(open.port, '/api/v1/venue-b/portfolio/balance', { 'X-API-Key': key });
    expect(denied.status).toBe(401);
    expect(last({ platform: 'kalshi' })?.auth).toBe('absent');
  });
});

describe('caller side', () => {
  it('401 with the spec body for missing and invalid keys; /health needs none', async () => {
    for (const headers of [{}, { 'X-API-Key': 'dg_wrong' }] as Record<string, string>[]) {
      const res = await call(gw.port, '/api/v1/venue-d/time', headers);
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized', message: 'Invalid API key' });
    }
    expect((await call(gw.port, '/health')).json()).toEqual({ status: 'ok' });
    expect(sim.requests()).toHaveLength(0);
  });

  it('an Upgrade other than WebSocket is answered as the request it also is; every handshake answer has X-Request-Id', async () => {
    const raw = (text: string) => rawExchange(gw.port, text);
    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n';
    const health = await raw(`GET /health HTTP/1.1\r\nHost: gw\r\n${h2c}\r\n`);
    expect(health.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    const time = await raw(`GET /api/v1/venue-d/time HTTP/1.1\r\nHost: gw\r\nX-API-Key: ${key}\r\n${h2c}\r\n`);
    expect(time.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(time.body)).toHaveProperty('iso');
    const ws =
      'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    const refused = await raw(`GET /ws/v1/kalshi HTTP/1.1\r\nHost: gw\r\nX-Request-Id: ws-refused-1\r\n${ws}\r\n`);
    expect(refused.head).toMatch(/^HTTP\/1\.1 401 /);
    expect(refused.head).toMatch(/\r\nX-Request-Id: ws-refused-1(\r\n|$)/i);
    // A handshake the WebSocket library refuses (here a malformed Sec-WebSocket-Key): the JSON form too.
    const badKey = await raw(
      `GET /ws/v1/kalshi HTTP/1.1\r\nHost: gw\r\nX-API-Key: ${key}\r\nX-Request-Id: ws-bad-key\r\n` +
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n',
    );
    expect(badKey.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(badKey.head).toMatch(/\r\nX-Request-Id: ws-bad-key(\r\n|$)/i);
    expect(JSON.parse(badKey.body)).toEqual({
      error: 'invalid_request',
      message: 'Missing or invalid Sec-WebSocket-Key header',
    });
    const opened = await raw(
      `GET /ws/v1/kalshi HTTP/1.1\r\nHost: gw\r\nX-API-Key: ${key}\r\nX-Request-Id: ws-open-1\r\n${ws}\r\n`,
    );
    expect(opened.head).toMatch(/^HTTP\/1\.1 101 /);
    expect(opened.head).toMatch(/\r\nX-Request-Id: ws-open-1(\r\n|$)/i);
  });

  it('a refused handshake is answered, and its connection closed even when the client keeps its side open', async () => {
    let serverSide: net.Socket | undefined;
    gw.server.prependOnceListener('upgrade', (_req, socket: net.Socket) => (serverSide = socket));
    const { client, answer } = halfOpenExchange(gw.port, webSocketHandshake('/ws/v1/kalshi'));
    try {
      expect(await answer).toMatch(/^HTTP\/1\.1 401 /);
      // The client holds its side open; the server does not wait for it.
      await waitFor(() => serverSide?.destroyed, { timeoutMs: 10_000, what: 'the gateway to close the connection' });
    } finally {
      client.destroy();
    }
  });

  it('unknown platform: 404 listing the valid keys with their real-name aliases', async () => {
    const res = await call(gw.port, '/api/v1/venue-z/markets', { 'X-API-Key': key });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({
      error: 'unknown_platform',
      message:
        'Unknown platform "venue-z"; valid platforms: venue-a (polymarket, polymarket-gamma), venue-a-clob (polymarket-clob), venue-a-us (polymarket-us), venue-b (kalshi), venue-c (gemini), venue-d (coinbase), venue-e (forecastex, ibkr)',
    });
    expect(sim.requests()).toHaveLength(0);
  });

  it('a history exchange key in a gateway path: 404 saying the gateway spells its keys with "-"', async () => {
    const cases: [string, string][] = [
      ['venue_b', 'venue-b'],
      ['polymarket_us', 'venue-a-us'],
      ['VENUE_A_US', 'venue-a-us'], // the path's platform is read in lower case
    ];
    for (const [given, key2] of cases) {
      const res = await call(gw.port, `/api/v1/${given}/markets`, { 'X-API-Key': key });
      expect([given, res.status]).toEqual([given, 404]);
      expect((res.json() as { message: string }).message).toMatch(
        new RegExp(
          `^Unknown platform "${given.toLowerCase()}" \\("_" spells the history service's exchange keys; the gateway's platform keys use "-": ${key2}\\); valid platforms: venue-a \\(`,
        ),
      );
    }
  });

  it('only GET and HEAD: 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const res = await call(gw.port, '/api/v1/venue-d/time', { 'X-API-Key': key }, method);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.json()).toMatchObject({ error: 'method_not_allowed' });
    }
    expect(sim.requests()).toHaveLength(0);
  });

  it("a key's platform allowlist: 403 elsewhere", async () => {
    const limited = clientOf(gw, await newKey({ platforms: ['venue-b'] }));
    expect((await limited.get('venue-b', 'exchange/announcements')).status).toBe(200);
    await expect(limited.get('venue-d', 'currencies')).rejects.toMatchObject({ status: 403, error: 'forbidden' });
  });

  it('per-key rate limits with their headers', async () => {
    const three = await newKey({ requests_per_minute: 3 });
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push(await call(gw.port, '/api/v1/venue-d/currencies', { 'X-API-Key': three }));
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(statuses[0]?.headers['ratelimit-policy']).toBe('3;w=60');
    expect(statuses[3]?.json()).toMatchObject({ error: 'rate_limited' });
    expect(Number(statuses[3]?.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('X-Request-Id on every response, the caller’s when well-formed', async () => {
    for (const path of ['/health', '/api/v1/venue-d/currencies', '/api/v1/nope/x', '/nowhere']) {
      const res = await call(gw.port, path, { 'X-API-Key': key, 'X-Request-Id': 'req-123' });
      expect(res.headers['x-request-id']).toBe('req-123');
    }
    expect((await call(gw.port, '/api/v1/venue-d/currencies')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('paths cannot escape their platform', () => {
  it.each([
    '/api/v1/venue-b/../../admin',
    '/api/v1/venue-b/markets/%2e%2e/%2e%2e/x',
    '/api/v1/venue-b/markets/%2E%2E%2Fx',
    '/api/v1/venue-b/a%2fb',
    '/api/v1/venue-b/a%5cb',
    '/api/v1/venue-b/a\\b',
    '/api/v1/venue-b//evil.example/x',
    '/api/v1/venue-b/%252e%252e/x',
    '/api/v1/venue-b/x%00',
    '/api/v1/venue-b/..;/admin',
    '/api/v1/venue-b/markets/..;x/..;/portfolio/balance',
    '/api/v1/venue-b/.;/x',
  ])('%s → 400 and no upstream request', async (path) => {
    const res = await call(gw.port, path, { 'X-API-Key': key });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_path' });
    expect(sim.requests()).toHaveLength(0);
  });

  it('an absolute-form request target is refused', async () => {
    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: gw.port,
          path: 'http://evil.example/api/v1/venue-b/markets',
          headers: { 'X-API-Key': key },
          agent: false,
        },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(res).toBe(400);
    expect(sim.requests()).toHaveLength(0);
  });
});

describe('header hygiene, both ways', () => {
  it('caller credentials, cookies, hop-by-hop and forwarding headers never reach the upstream', async () => {
    const res = await call(gw.port, '/api/v1/venue-b/exchange/announcements', {
      'X-API-Key': key,
      Authorization: 'Bearer caller-token',
      Cookie: 'session=caller',
      Connection: 'keep-alive, X-Hop',
      'X-Hop': 'hop',
      'Proxy-Authorization': 'Basic x',
      'X-Forwarded-For': '6.6.6.6',
      Forwarded: 'for=6.6.6.6',
      TE: 'trailers',
      Accept: 'application/json',
      'Accept-Language': 'en',
    });
    expect(res.status).toBe(200);
    const seen = last({ platform: 'kalshi' });
    const names = Object.keys(seen?.headers ?? {});
    for (const banned of [
      'x-api-key',
      'authorization',
      'cookie',
      'x-hop',
      'proxy-authorization',
      'x-forwarded-for',
      'forwarded',
      'te',
    ]) {
      expect(names).not.toContain(banned);
    }
    expect(JSON.stringify(seen?.headers)).not.toContain(key);
    expect(seen?.headers.accept).toBe('application/json');
    expect(seen?.headers['accept-language']).toBe('en');
    expect(seen?.headers['kalshi-access-key']).toBe(sim.credentials.kalshi.accessKey);
  });

  it('a key in the query, path or POST body never reaches the upstream: 400 however it is written, beside a valid header or not', async () => {
    const path = '/api/v1/venue-b/exchange/announcements';
    const control = await call(gw.port, `${path}?limit=5`, { 'X-API-Key': key });
    expect(control.status).toBe(200);
    expect(sim.requests({ platform: 'kalshi' }).map((r) => r.query)).toEqual(['limit=5']);
    const encoded = `dg%5F${key.slice(3)}`;
    for (const query of [`api_key=${key}`, `api%5Fkey=${encoded}`, `x-api-key=${key}`, `limit=5&q=${encoded}`, key]) {
      const res = await call(gw.port, `${path}?${query}`, { 'X-API-Key': key });
      expect([query, res.status, res.json()]).toEqual([
        query,
        400,
        {
          error: 'invalid_request',
          message:
            "The request's query string carries an API key, which would be forwarded upstream; send the key as X-API-Key or HTTP Basic only",
        },
      ]);
    }
    // In the path, however encoded, and in a read-only POST's JSON (as written, or in an escape its parser decodes).
    const refused = (where: string) => ({
      error: 'invalid_request',
      message: `The request's ${where} carries an API key, which would be forwarded upstream; send the key as X-API-Key or HTTP Basic only`,
    });
    for (const resource of [`exchange/${key}`, `exchange/${encoded}`, `markets/x%2D${encoded}.json`]) {
      const res = await call(gw.port, `/api/v1/venue-b/${resource}`, { 'X-API-Key': key });
      expect([resource, res.status, res.json()]).toEqual([resource, 400, refused('path')]);
    }
    const json = { 'Content-Type': 'application/json', 'X-API-Key': key };
    const escaped = `\\u0064g_${key.slice(3)}`;
    for (const body of [`[{"token_id":"${key}"}]`, `[{"token_id":"${escaped}"}]`, `{"${escaped}":1}`]) {
      const res = await call(gw.port, '/api/v1/venue-a-clob/books', json, 'POST', body);
      expect([body, res.status, res.json()]).toEqual([body, 400, refused('body')]);
    }
    expect(sim.requests({ platform: 'venue-a-clob' })).toHaveLength(0);
    // A key in the query alone authenticates nothing.
    expect((await call(gw.port, `${path}?x-api-key=${key}`)).status).toBe(401);
    expect(sim.requests({ platform: 'kalshi' })).toHaveLength(1);
    // The access log (written every ACCESS_LOG_FLUSH_MS) shows each of those requests with the key masked.
    await waitFor(() => h.logs().includes(`"url":"${path}?x-api-key=[redacted]","status":401`), {
      what: 'the access log line of the 401',
    });
    expect(h.logs()).toContain('api%5Fkey=[redacted]');
    expect(h.logs()).not.toContain(key.slice(3));
  });

  it('upstream Set-Cookie and internal headers never reach the caller', async () => {
    // The simulator, like the CDN in front of the real hosts, sends them:
    const direct = await new Promise<http.IncomingHttpHeaders>((resolve, reject) =>
      http
        .get(`${sim.urls['venue-d']}/currencies`, { agent: false }, (r) => (r.resume(), resolve(r.headers)))
        .on('error', reject),
    );
    expect(direct['set-cookie']).toBeDefined();
    expect(direct.server).toBe('cloudflare');
    const res = await call(gw.port, '/api/v1/venue-d/currencies', { 'X-API-Key': key });
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    for (const name of Object.keys(res.headers))
      expect(name).not.toMatch(/^(server|x-powered-by|cf-|x-envoy|x-ratelimit)/);
  });

  it('Accept-Encoding passes, and a compressed upstream body streams through untouched', async () => {
    const res = await call(gw.port, '/api/v1/venue-d/currencies', { 'X-API-Key': key, 'Accept-Encoding': 'gzip' });
    expect(last({ platform: 'coinbase' })?.headers['accept-encoding']).toBe('gzip');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(Array.isArray(JSON.parse(gunzipSync(res.body).toString()))).toBe(true);
  });
});

describe('upstream failures, mapped as documented', () => {
  const get = (path: string, headers: Record<string, string> = {}) =>
    call(gw.port, path, { 'X-API-Key': key, ...headers });

  it('an upstream 4xx/5xx passes through with its status and body', async () => {
    sim.faults.inject({ platform: 'gemini', kind: 'status', status: 500, times: 1 });
    const res = await get('/api/v1/venue-c/prediction-markets/categories');
    expect(res.status).toBe(500);
    expect(res.headers['x-request-id']).toBeDefined();
    const unknown = await get('/api/v1/venue-b/markets/KXNOPE-00XXX00-T0');
    expect(unknown.status).toBe(404);
    expect(unknown.text).not.toContain('unknown_platform');
  });

  it('an HTML error page passes through as it is', async () => {
    sim.faults.inject({ platform: 'gemini', kind: 'html', status: 502, times: 1 });
    const res = await get('/api/v1/venue-c/prediction-markets/categories');
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });

  it('a reset connection → 502 bad_gateway', async () => {
    sim.faults.inject({ platform: 'gemini', kind: 'reset', times: 1 });
    const res = await get('/api/v1/venue-c/prediction-markets/categories');
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({ error: 'bad_gateway' });
  });

  it('a hang → 502 after the timeout; latency within it is fine', async () => {
    sim.faults.inject({ platform: 'gemini', kind: 'hang', ms: 5000, times: 1 });
    const res = await get('/api/v1/venue-c/prediction-markets/categories');
    expect(res.status).toBe(502);
    expect((res.json() as { message: string }).message).toContain('did not answer within 1000 ms');
    sim.faults.inject({ platform: 'gemini', kind: 'latency', ms: 200, times: 1 });
    expect((await get('/api/v1/venue-c/prediction-markets/categories')).status).toBe(200);
  });

  it('a request still waiting on its upstream at the end of the drain gets a JSON 503, not a reset', async () => {
    const draining = await gateway({ UPSTREAM_TIMEOUT_MS: '5000', SHUTDOWN_DELAY_MS: '0', DRAIN_TIMEOUT_MS: '300' });
    sim.faults.inject({ platform: 'gemini', kind: 'hang', ms: 5000, times: 1 });
    const before = sim.requests({ platform: 'gemini' }).length;
    const answer = call(draining.port, '/api/v1/venue-c/prediction-markets/categories', { 'X-API-Key': key });
    await waitFor(() => sim.requests({ platform: 'gemini' }).length > before, { what: 'the upstream call' });
    await draining.shutdown('test');
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.json()).toMatchObject({ error: 'service_unavailable' });
  });

  it('a truncated body is cut short for the caller too, never completed', async () => {
    sim.faults.inject({ platform: 'coinbase', kind: 'truncate', times: 1 });
    const outcome = await call(gw.port, '/api/v1/venue-d/currencies', { 'X-API-Key': key }).then(
      (r) => ({ ok: true, r }),
      (err: Error) => ({ ok: false, err }),
    );
    if (outcome.ok && 'r' in outcome) {
      // Headers arrived; the body must then fail to parse (it was cut), not be a complete answer.
      expect(() => JSON.parse(outcome.r.text)).toThrow();
    } else {
      expect('err' in outcome && outcome.err.message).toMatch(/aborted|socket hang up|ECONNRESET|premature/i);
    }
  });

  it('refused connections and DNS failures → 502; the IBKR portal down → 502 saying how to start it', async () => {
    const closed = await refusedPort();
    const broken = await gateway({
      UPSTREAM_VENUE_C_URL: `http://127.0.0.1:${closed}`,
      UPSTREAM_VENUE_D_URL: 'http://nonexistent.invalid',
      UPSTREAM_VENUE_E_PORTAL_URL: `https://127.0.0.1:${closed}/v1/api`,
    });
    const refused = await call(broken.port, '/api/v1/venue-c/prediction-markets/categories', { 'X-API-Key': key });
    expect(refused.status).toBe(502);
    expect(refused.json()).toMatchObject({ error: 'bad_gateway', message: expect.stringContaining('refused') });
    const dns = await call(broken.port, '/api/v1/venue-d/currencies', { 'X-API-Key': key });
    expect(dns.status).toBe(502);
    expect(dns.json()).toMatchObject({ error: 'bad_gateway' });
    const portal = await call(broken.port, '/api/v1/venue-e/trsrv/event/category-tree', { 'X-API-Key': key });
    expect(portal.status).toBe(502);
    expect(portal.json()).toEqual({
      error: 'bad_gateway',
      message: `The IBKR Client Portal gateway is not reachable at https://127.0.0.1:${closed}; start it (bin/run.sh root/conf.yaml) and log in`,
    });
  });

  it('a disabled platform → 503 without an upstream call', async () => {
    const partial = await gateway({ DISABLED_PLATFORMS: 'venue-c' });
    const res = await call(partial.port, '/api/v1/venue-c/prediction-markets/categories', { 'X-API-Key': key });
    expect(res.status).toBe(503);
    expect(res.json()).toMatchObject({ error: 'upstream_unavailable' });
    expect(sim.requests({ platform: 'gemini' })).toHaveLength(0);
  });

  it('repeated failures open the circuit (503 without calling), a probe after the pause closes it', async () => {
    // The gateway's clock stands still until the test moves it past the pause (CIRCUIT_OPEN_MS, 400 ms): a slow step
    // between two requests cannot end the pause early.
    let clock = Date.now();
    const guarded = await gateway({ CIRCUIT_FAILURE_THRESHOLD: '3' }, true, () => clock);
    const get = (path: string) => call(guarded.port, path, { 'X-API-Key': key });
    sim.faults.inject({ platform: 'gemini', kind: 'status', status: 503, times: 3 });
    for (let i = 0; i < 3; i++) expect((await get('/api/v1/venue-c/v1/symbols')).status).toBe(503);
    const before = sim.requests({ platform: 'gemini' }).length;
    const open = await get('/api/v1/venue-c/v1/symbols');
    expect(open.status).toBe(503);
    expect(open.json()).toMatchObject({ error: 'upstream_unavailable' });
    expect(Number(open.headers['retry-after'])).toBeGreaterThan(0);
    expect(sim.requests({ platform: 'gemini' })).toHaveLength(before);
    clock += 450;
    expect((await get('/api/v1/venue-c/v1/symbols')).status).toBe(200);
    expect((await get('/api/v1/venue-c/v1/symbols')).status).toBe(200);
  });

  it('a caller that disconnects aborts its upstream request', async () => {
    // An upstream in Coinbase's place that never answers, and a gateway that would wait 60 s for it: only the abort
    // closes the upstream request within the wait.
    let arrived = false;
    let closed = false;
    const silent = http.createServer((req) => {
      arrived = true;
      req.socket.once('close', () => (closed = true));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const patient = await gateway({
        UPSTREAM_VENUE_D_URL: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`,
        UPSTREAM_TIMEOUT_MS: '60000',
      });
      const req = http.request({
        host: '127.0.0.1',
        port: patient.port,
        path: '/api/v1/venue-d/products',
        headers: { 'X-API-Key': key },
        agent: false,
      });
      req.on('error', () => undefined);
      req.end();
      await waitFor(() => arrived, { timeoutMs: 20_000, what: 'the upstream request to arrive' });
      req.destroy();
      await waitFor(() => closed, { timeoutMs: 20_000, what: 'the upstream request to be aborted' });
      expect((await patient.registry.getSingleMetric('gateway_upstream_inflight')?.get())?.values[0]?.value).toBe(0);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('coalescing and the micro-cache', () => {
  it('identical concurrent GETs share one upstream call', async () => {
    sim.faults.inject({ platform: 'coinbase', route: '/products', kind: 'latency', ms: 300, times: 1 });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call(gw.port, '/api/v1/venue-d/products', { 'X-API-Key': key })),
    );
    expect(sim.requests({ platform: 'coinbase', pathPrefix: '/products' })).toHaveLength(1);
    expect(answers.every((a) => a.status === 200 && a.text === answers[0]?.text)).toBe(true);
    const caches = answers.map((a) => a.headers['x-cache']).sort();
    expect(caches.filter((c) => c === 'MISS')).toHaveLength(1);
    expect(caches.filter((c) => c === 'COALESCED')).toHaveLength(9);
  });

  it('different queries or conditional requests are not merged', async () => {
    sim.faults.inject({ platform: 'coinbase', route: '/products', kind: 'latency', ms: 200, times: 3 });
    await Promise.all([
      call(gw.port, '/api/v1/venue-d/products?a=1', { 'X-API-Key': key }),
      call(gw.port, '/api/v1/venue-d/products?a=2', { 'X-API-Key': key }),
      call(gw.port, '/api/v1/venue-d/products?a=1', { 'X-API-Key': key, 'If-None-Match': '"x"' }),
    ]);
    expect(sim.requests({ platform: 'coinbase', pathPrefix: '/products' })).toHaveLength(3);
  });

  it('an opt-in cached route answers HIT until its TTL, and Cache-Control: no-cache bypasses it', async () => {
    // The gateway's clock stands still until the test moves it (the TTL is 400 ms): a slow request cannot outlive it.
    let clock = Date.now();
    const cached = await gateway({}, true, () => clock);
    const first = await call(cached.port, '/api/v1/venue-d/time', { 'X-API-Key': key, 'Cache-Control': 'no-cache' });
    clock += 100;
    const second = await call(cached.port, '/api/v1/venue-d/time', { 'X-API-Key': key });
    expect(first.headers['x-cache']).toBe('MISS');
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(second.headers['x-cache-age-ms']).toBe('100');
    expect(sim.requests({ platform: 'coinbase', pathPrefix: '/time' })).toHaveLength(1);
    const bypass = await call(cached.port, '/api/v1/venue-d/time', { 'X-API-Key': key, 'Cache-Control': 'no-cache' });
    expect(bypass.headers['x-cache']).toBe('MISS');
    clock += 450;
    expect((await call(cached.port, '/api/v1/venue-d/time', { 'X-API-Key': key })).headers['x-cache']).toBe('MISS');
    expect(sim.requests({ platform: 'coinbase', pathPrefix: '/time' })).toHaveLength(3);
  });
});

describe('the upstream budget is shared by all gateway replicas', () => {
  it('two gateways together never exceed the budget, and refuse what cannot wait', async () => {
    const budgetPrefix = `${uniqueName('budget')}:`;
    const limits = {
      // One slot every 2 s and 3 s of patience: the requests may take up to 1 s to arrive (a loaded machine) and
      // the count below is still exact.
      UPSTREAM_BUDGETS: 'venue-c=0.5/1',
      UPSTREAM_BUDGET_MAX_WAIT_MS: '3000',
      COALESCE: 'false',
      REDIS_KEY_PREFIX: budgetPrefix,
    };
    const a = await gateway(limits);
    const b = await gateway(limits);
    const k = (await new RedisKeyStore(admin, budgetPrefix).create({ name: 'budget', requests_per_minute: 100_000 }))
      .key;
    sim.rateLimits.set('gemini', { limit: 5, windowMs: 1000 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          call((i % 2 ? a : b).port, `/api/v1/venue-c/v1/symbols?i=${i}`, { 'X-API-Key': k }),
        ),
      );
      const ok = answers.filter((r) => r.status === 200).length;
      const refused = answers.filter((r) => r.status === 429);
      expect(ok + refused.length).toBe(16);
      // 0.5/s with burst 1 and 3 s of patience: the first, then the one the slot 2 s later serves; the slot after it
      // (4 s) is further than any request arrived within 1 s may wait → exactly 2 get through.
      expect(ok).toBe(2);
      for (const r of refused) expect(r.json()).toMatchObject({ error: 'upstream_rate_limited' });
      // The simulator's own limit (5/s) never fired.
      expect(sim.requests({ platform: 'gemini' }).every((r) => r.status !== 429)).toBe(true);
      // Each replica says the budget it enforces (a dashboard's budget use: the calls' rate over it).
      const metrics = await call(a.port, '/metrics');
      expect(metrics.text).toContain(
        'gateway_upstream_budget_per_second{platform="venue-c",target="venue-c",service="gateway"} 0.5',
      );
    } finally {
      sim.rateLimits.set('gemini', null);
    }
  });
});

describe('an upstream origin has one budget', () => {
  it('Kalshi’s Trade API and its /v1 (one origin, two targets) take slots of the same budget', async () => {
    const prefix = `${uniqueName('origin-budget')}:`;
    // One call every 5 s, and none may wait: the second call is refused however soon it follows the first.
    const g = await gateway({
      UPSTREAM_BUDGETS: 'venue-b=0.2/1',
      UPSTREAM_BUDGET_MAX_WAIT_MS: '0',
      COALESCE: 'false',
      REDIS_KEY_PREFIX: prefix,
    });
    const k = (await new RedisKeyStore(admin, prefix).create({ name: 'origin', requests_per_minute: 100_000 })).key;
    const before = sim.requests({ platform: 'kalshi' }).length;
    const first = await call(g.port, '/api/v1/venue-b/markets?limit=1', { 'X-API-Key': k });
    const second = await call(g.port, '/api/v1/venue-b/v1/search/series?query=btc', { 'X-API-Key': k });
    expect(first.status).toBe(200);
    expect(second.status).toBe(429);
    expect(second.json()).toMatchObject({ error: 'upstream_rate_limited' });
    expect(sim.requests({ platform: 'kalshi' })).toHaveLength(before + 1);
  });
});

/**
 * An upstream in Coinbase's place: `/big` answers a body of `total` bytes (byte i is i mod 251) written only as fast
 * as the gateway reads it; any other path `{"ok":true}`. `sent()`: the bytes of `/big` written so far.
 */
async function pacedUpstream(total: number) {
  const CHUNK = 64 * 1024;
  let sent = 0;
  const server = http.createServer((req, res) => {
    if (req.url !== '/big') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"ok":true}');
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
    let at = 0;
    const pump = () => {
      while (at < total) {
        const n = Math.min(CHUNK, total - at);
        const chunk = Buffer.allocUnsafe(n);
        for (let i = 0; i < n; i++) chunk[i] = (at + i) % 251;
        at += n;
        sent += n;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    sent: () => sent,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** `p`, or 'no answer' if it has not settled within `ms` (a bound for failing, not a timing assertion). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<'no answer'>((r) => (timer = setTimeout(() => r('no answer'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

describe('streaming a large upstream body', () => {
  it('a caller that stops reading holds the upstream back; resumed, it gets every byte in order', async () => {
    const TOTAL = 48 * 1024 * 1024;
    const upstream = await pacedUpstream(TOTAL);
    const g = await gateway({ UPSTREAM_VENUE_D_URL: upstream.url });
    try {
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = http.get(
          { host: '127.0.0.1', port: g.port, path: '/api/v1/venue-d/big', headers: { 'X-API-Key': key }, agent: false },
          resolve,
        );
        req.on('error', reject);
      });
      expect(res.statusCode).toBe(200);
      res.pause();
      // Held back: what left the upstream stops growing (the same over 500 ms; waited for, since a loaded machine
      // takes longer to fill the buffers), and it is what fits in the socket buffers and one shared-response window,
      // not the body (without the hold it would stop only at the body's end).
      const heldAt = await waitFor(
        async () => {
          const before = upstream.sent();
          await new Promise((r) => setTimeout(r, 500));
          return upstream.sent() === before ? before : false;
        },
        { timeoutMs: 30_000, intervalMs: 0, what: 'the upstream to be held back' },
      );
      expect(heldAt).toBeLessThan(TOTAL / 2);
      let received = 0;
      let wrong = -1;
      res.on('data', (c: Buffer) => {
        for (let i = 0; i < c.length && wrong < 0; i++) if (c[i] !== (received + i) % 251) wrong = received + i;
        received += c.length;
      });
      const ended = new Promise((r) => res.on('end', r));
      res.resume();
      await ended;
      expect(wrong).toBe(-1);
      expect(received).toBe(TOTAL);
    } finally {
      await upstream.close();
    }
  });

  /**
   * A gateway (`env`) with one upstream connection, held by a caller that asked for 48 MB of `/big` and reads nothing
   * of it. `readRest()` has that caller read what it was sent until its connection ends: the bytes it got.
   * `small()`: another request's answer, or 'no answer'.
   */
  async function poolHeldByNonReader(env: Record<string, string>) {
    const TOTAL = 48 * 1024 * 1024;
    const upstream = await pacedUpstream(TOTAL);
    const g = await gateway({ UPSTREAM_VENUE_D_URL: upstream.url, UPSTREAM_CONNECTIONS: '1', ...env });
    const socket = net.connect(g.port, '127.0.0.1', () => {
      socket.write(`GET /api/v1/venue-d/big HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n\r\n`);
      socket.pause();
    });
    socket.on('error', () => undefined);
    let bytes = 0;
    socket.on('data', (c: Buffer) => (bytes += c.length));
    await waitFor(async () => upstream.sent() > 0, { timeoutMs: 5000, what: 'the body to start' });
    return {
      g,
      TOTAL,
      small: () => within(call(g.port, '/api/v1/venue-d/small', { 'X-API-Key': key }), 8000),
      readRest: () =>
        within(
          new Promise<number>((resolve) => {
            socket.once('close', () => resolve(bytes));
            socket.resume();
          }),
          8000,
        ),
      async close() {
        socket.destroy();
        await upstream.close();
      },
    };
  }

  it('a request waiting for a pool connection held by a caller that reads nothing still gets 502 within UPSTREAM_TIMEOUT_MS', async () => {
    // No cut of the caller that does not read before the test ends.
    const held = await poolHeldByNonReader({ UPSTREAM_BODY_TIMEOUT_MS: '600000' });
    try {
      const queued = await held.small();
      expect(queued).not.toBe('no answer');
      expect(queued !== 'no answer' && queued.status).toBe(502);
      expect(queued !== 'no answer' && queued.json()).toEqual({
        error: 'bad_gateway',
        message: expect.stringMatching(/^Upstream \S+ did not answer within 1000 ms$/),
      });
      // The gateway's own reads (the WebSocket proxy's reconciliation) have the same deadline.
      const target = held.g.platforms.byKey['venue-d']?.targets[0];
      if (!target) throw new Error('venue-d has no target');
      const own = held.g.forwarder.readJson(target, '/small', '').catch((err: Error) => err.name);
      expect(await within(own, 8000)).toBe('TimeoutError');
    } finally {
      await held.close();
    }
  });

  it('a caller that reads nothing for UPSTREAM_BODY_TIMEOUT_MS is cut; the pool connection it held serves the next', async () => {
    const held = await poolHeldByNonReader({ UPSTREAM_TIMEOUT_MS: '30000', UPSTREAM_BODY_TIMEOUT_MS: '300' });
    try {
      const next = await held.small();
      expect(next !== 'no answer' && [next.status, next.text]).toEqual([200, '{"ok":true}']);
      // It was cut: its connection ends with the body short.
      const got = await held.readRest();
      expect(got !== 'no answer' && got < held.TOTAL).toBe(true);
    } finally {
      await held.close();
    }
  });
});

describe('the project’s GatewayClient against the gateway', () => {
  it('sends the key as HTTP Basic; the same answers', async () => {
    const basic = clientOf(gw, key, { keyIn: 'basic' });
    expect((await basic.get('venue-d', 'currencies')).status).toBe(200);
    expect(last({ platform: 'coinbase' })?.headers.authorization).toBeUndefined();
    await expect(clientOf(gw, 'dg_wrong', { keyIn: 'basic' }).get('venue-d', 'currencies')).rejects.toMatchObject({
      status: 401,
      error: 'unauthorized',
    });
  });

  it('a read-only POST reaches the upstream with its JSON body; other POSTs do not compile', async () => {
    const [token] = sim.books.tickers('venue-a-clob');
    const books = await clientOf(gw).post<{ asset_id: string }[]>('venue-a-clob', 'books', [{ token_id: token }]);
    expect(books.status).toBe(200);
    expect(books.data.map((b) => b.asset_id)).toEqual([token]);
    expect(last({ platform: 'venue-a-clob' })).toMatchObject({ method: 'POST', path: '/books', status: 200 });
    // @ts-expect-error: the gateway answers 405 for a POST that is not a read-only one
    await expect(clientOf(gw).post('venue-b', 'portfolio/orders', {})).rejects.toMatchObject({ status: 405 });
  });

  it('429 from the key’s rate limit: retried within the bound, and past it an HttpError with Retry-After and request id', async () => {
    const one = await newKey({ requests_per_minute: 1 });
    const client = clientOf(gw, one, { retry: { retries: 3, maxDelayMs: 2000 } });
    expect((await client.get('venue-d', 'currencies')).status).toBe(200);
    const started = sim.requests().length;
    const err = (await client.get('venue-d', 'currencies').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 429, error: 'rate_limited' });
    expect(err.retryAfterMs).toBeGreaterThan(2000);
    expect(err.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sim.requests().length).toBe(started);
  });

  it('an upstream’s own error body passes through as the error’s json', async () => {
    const open = await gateway({}, false);
    const err = (await clientOf(open)
      .get('venue-b', 'portfolio/balance')
      .catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(401);
    expect(err.json).toEqual(expect.any(Object));
  });
});
