/**
 * How the official client libraries reach the platforms through the gateway (issue 12), against the simulator and
 * Redis: read-only POSTs (forwarded byte for byte, signed with their body, budgeted, shared only when identical),
 * the platform root, the key as HTTP Basic, routing by host; and what attacking the gateway turned up (headers named
 * in Connection, bodies cut short and the circuit, mapped CLOB parameters, errors of Node's HTTP layer).
 */
import http from 'node:http';
import net from 'node:net';
import type { Simulator } from '@depthgate/venue-sim';
import type { RunningGateway } from './server';
import { call, simSecrets, startGatewayHarness, type Answer, type GatewayHarness } from './testing/harness';

let h: GatewayHarness;
let sim: Simulator;
let gw: RunningGateway;
let key: string;
let token: string;

const JSON_TYPE = { 'Content-Type': 'application/json' };
const basic = (user: string, password = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

beforeAll(async () => {
  h = await startGatewayHarness();
  sim = h.sim;
  key = await h.newKey();
  gw = await h.gateway();
  const [first] = sim.books.tickers('venue-a-clob');
  if (!first) throw new Error('the simulator lists no CLOB token');
  token = first;
});

afterAll(async () => {
  await h.close();
  const logs = h.logs();
  expect(logs).not.toContain(key);
  expect(logs).not.toContain(Buffer.from(`${key}:`).toString('base64'));
  for (const secret of simSecrets(sim)) expect(logs).not.toContain(secret);
});

beforeEach(() => {
  sim.clearRequests();
  sim.faults.clear();
});

const post = (port: number, path: string, body: string | Buffer, headers: Record<string, string> = JSON_TYPE) =>
  call(port, path, { 'X-API-Key': key, ...headers }, 'POST', body);

describe('read-only POSTs, by each platform’s allowlist', () => {
  it('POST /books reaches the CLOB with the same bytes and Content-Type, and answers its array of books', async () => {
    const body = JSON.stringify([{ token_id: token }, { token_id: token, side: 'BUY' }]);
    const res = await post(gw.port, '/api/v1/venue-a-clob/books', body);
    expect(res.status).toBe(200);
    expect(res.headers['x-cache']).toBe('MISS');
    const books = res.json() as { asset_id: string; bids: unknown[]; asks: unknown[] }[];
    expect(books.map((b) => b.asset_id)).toEqual([token, token]);
    const seen = h.last({ platform: 'venue-a-clob' });
    expect(seen).toMatchObject({ method: 'POST', path: '/books', query: '', status: 200 });
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    // A public route: no L2 headers; never the caller's key.
    expect(seen?.headers.poly_signature).toBeUndefined();
    expect(JSON.stringify(seen?.headers)).not.toContain(key);
  });

  it('a body the CLOB signs (L2 over timestamp + method + path + body) is signed with it: the simulator verifies it', async () => {
    const res = await post(gw.port, '/api/v1/venue-a-clob/orders-scoring', '["0xA","0xB"]');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ '0xA': false, '0xB': false });
    expect(h.last({ platform: 'venue-a-clob' })).toMatchObject({
      method: 'POST',
      path: '/orders-scoring',
      auth: 'valid',
    });
  });

  it('the upstream receives the body byte for byte, with the caller’s Content-Type, and nothing of the caller’s key', async () => {
    const received: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
    const upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[]');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as { port: number }).port;
    try {
      const g = await h.gateway({ UPSTREAM_VENUE_A_CLOB_URL: `http://127.0.0.1:${port}` });
      const body = Buffer.from(' [ {"token_id" : "1", "note":"é\\u00e9 \\n"} ,\n{"token_id":"2"}]\r\n ', 'utf8');
      const res = await call(
        g.port,
        '/api/v1/polymarket-clob/midpoints?geo_block_token=x',
        { Authorization: basic(key), 'Content-Type': 'application/json; charset=UTF-8', 'X-Extra': 'no' },
        'POST',
        body,
      );
      expect(res.status).toBe(200);
      expect(received).toHaveLength(1);
      const [got] = received;
      expect(got?.method).toBe('POST');
      expect(got?.url).toBe('/midpoints?geo_block_token=x');
      expect(got?.body.equals(body)).toBe(true);
      expect(got?.headers['content-type']).toBe('application/json; charset=UTF-8');
      expect(got?.headers['content-length']).toBe(String(body.length));
      expect(got?.headers.authorization).toBeUndefined();
      expect(got?.headers['x-api-key']).toBeUndefined();
      expect(got?.headers['x-extra']).toBeUndefined();
    } finally {
      upstream.closeAllConnections();
      await new Promise((r) => upstream.close(r));
    }
  });

  it('GET and HEAD still forward on a POST route; other methods and other paths get 405 with exactly their Allow', async () => {
    const auth = { 'X-API-Key': key };
    expect((await call(gw.port, `/api/v1/venue-a-clob/book?token_id=${token}`, auth)).status).toBe(200);
    const cases: [string, string, string][] = [
      ['PUT', '/api/v1/venue-a-clob/books', 'GET, HEAD, POST'],
      ['DELETE', '/api/v1/venue-a-clob/books', 'GET, HEAD, POST'],
      ['PATCH', '/api/v1/venue-a-clob/midpoints', 'GET, HEAD, POST'],
      ['POST', '/api/v1/venue-a-clob/book', 'GET, HEAD'],
      ['POST', '/api/v1/venue-a-clob/order', 'GET, HEAD'],
      ['POST', '/api/v1/venue-a-clob/books/', 'GET, HEAD'],
      ['POST', '/api/v1/venue-a-clob/markets/0x1/open-interest', 'GET, HEAD'],
      ['POST', '/api/v1/venue-b/markets', 'GET, HEAD'],
      ['POST', '/api/v1/venue-a/books', 'GET, HEAD'],
      ['OPTIONS', '/api/v1/venue-a-clob/books', 'GET, HEAD, POST'],
    ];
    sim.clearRequests();
    for (const [method, path, allow] of cases) {
      const res = await call(gw.port, path, { ...auth, ...JSON_TYPE }, method, '[]');
      expect([method, path, res.status, res.headers.allow]).toEqual([method, path, 405, allow]);
      expect(res.json()).toEqual({ error: 'method_not_allowed', message: expect.stringContaining(allow) });
    }
    expect(sim.requests()).toHaveLength(0);
  });

  it('a body over GATEWAY_MAX_BODY_BYTES → 413, declared or chunked, without reaching the upstream', async () => {
    const fits = JSON.stringify([{ token_id: token }]);
    const limit = Buffer.byteLength(fits);
    const small = await h.gateway({ GATEWAY_MAX_BODY_BYTES: String(limit) });
    expect((await post(small.port, '/api/v1/venue-a-clob/books', fits)).status).toBe(200);
    sim.clearRequests();
    const big = `${fits} `;
    const declared = await post(small.port, '/api/v1/venue-a-clob/books', big);
    expect(declared.status).toBe(413);
    expect(declared.headers.connection).toBe('close');
    expect(declared.json()).toEqual({
      error: 'payload_too_large',
      message: expect.stringContaining(`${limit} bytes`),
    });
    // Chunked, no Content-Length: refused once the 65th byte arrives, while the caller is still sending.
    const chunked = await new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: small.port,
          path: '/api/v1/venue-a-clob/books',
          method: 'POST',
          headers: { 'X-API-Key': key, ...JSON_TYPE, 'Transfer-Encoding': 'chunked' },
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.from(text),
              text,
              json: () => JSON.parse(text),
            });
          });
        },
      );
      req.on('error', reject);
      req.write('['.padEnd(limit, ' '));
      req.write(' '.repeat(limit)); // never ended: the answer must not wait for the rest
    });
    expect(chunked.status).toBe(413);
    expect(chunked.json()).toMatchObject({ error: 'payload_too_large' });
    expect(sim.requests()).toHaveLength(0);
  });

  it('Expect: 100-continue (curl, for bodies over 1 KiB) gets its 100 and the body is forwarded', async () => {
    const body = JSON.stringify(Array.from({ length: 40 }, () => ({ token_id: token })));
    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1',
        port: gw.port,
        path: '/api/v1/venue-a-clob/books',
        method: 'POST',
        headers: { 'X-API-Key': key, ...JSON_TYPE, Expect: '100-continue', 'Content-Length': Buffer.byteLength(body) },
        agent: false,
      });
      req.on('continue', () => req.end(body));
      req.on('response', (r) => (r.resume(), resolve(r.statusCode ?? 0)));
      req.on('error', reject);
    });
    expect(res).toBe(200);
    expect(h.last({ platform: 'venue-a-clob' })?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  });

  it('a body that is not JSON → 415, without reaching the upstream', async () => {
    const cases: [Record<string, string>, string | Buffer][] = [
      [{ 'Content-Type': 'text/plain' }, '[]'],
      [{ 'Content-Type': 'application/x-www-form-urlencoded' }, 'token_id=1'],
      [{}, '[]'],
      [{ 'Content-Type': 'application/json; charset=iso-8859-1' }, '[]'],
      [JSON_TYPE, '[{"token_id":'],
      [JSON_TYPE, ''],
      [JSON_TYPE, Buffer.from([0x5b, 0x22, 0xc3, 0x28, 0x22, 0x5d])], // ["<invalid UTF-8>"]
    ];
    for (const [headers, body] of cases) {
      const res = await post(gw.port, '/api/v1/venue-a-clob/books', body, headers);
      expect(res.status).toBe(415);
      expect(res.json()).toEqual({ error: 'unsupported_media_type', message: expect.any(String) });
    }
    const vendor = await post(gw.port, '/api/v1/venue-a-clob/books', '[]', {
      'Content-Type': 'application/vnd.polymarket+json',
    });
    expect(vendor.status).toBe(200);
    expect(sim.requests()).toHaveLength(1);
  });

  it('identical concurrent POSTs share one upstream call; different bodies never do', async () => {
    sim.faults.inject({ platform: 'venue-a-clob', route: '/books', kind: 'latency', ms: 300, times: 3 });
    const one = JSON.stringify([{ token_id: token }]);
    const other = JSON.stringify([{ token_id: token, side: 'SELL' }]);
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => post(gw.port, '/api/v1/venue-a-clob/books', one)),
      post(gw.port, '/api/v1/venue-a-clob/books', other),
    ]);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(sim.requests({ platform: 'venue-a-clob', pathPrefix: '/books' })).toHaveLength(2);
    const caches = answers.slice(0, 5).map((a) => a.headers['x-cache']);
    expect(caches.filter((c) => c === 'COALESCED')).toHaveLength(4);
    expect(answers[5]?.headers['x-cache']).toBe('MISS');
  });

  it('a micro-cached POST route answers identical bodies from the cache only', async () => {
    const cached = await h.gateway({ CACHE_ROUTES: 'venue-a-clob:/books=60000' });
    const one = JSON.stringify([{ token_id: token }]);
    expect((await post(cached.port, '/api/v1/venue-a-clob/books', one)).headers['x-cache']).toBe('MISS');
    expect((await post(cached.port, '/api/v1/venue-a-clob/books', one)).headers['x-cache']).toBe('HIT');
    expect((await post(cached.port, '/api/v1/venue-a-clob/books', `${one} `)).headers['x-cache']).toBe('MISS');
    expect(sim.requests({ platform: 'venue-a-clob', pathPrefix: '/books' })).toHaveLength(2);
  });

  it('each POST takes a slot of the upstream budget like any call', async () => {
    // The only gateway of this suite with a CLOB budget: its bucket starts full (one slot, then one per 2 s).
    const budgeted = await h.gateway({ UPSTREAM_BUDGETS: 'venue-a-clob=0.5/1', UPSTREAM_BUDGET_MAX_WAIT_MS: '0' });
    const send = (body: string) => post(budgeted.port, '/api/v1/venue-a-clob/books', body);
    expect((await send('[]')).status).toBe(200);
    const refused = await send('[ ]');
    expect(refused.status).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'upstream_rate_limited' });
    expect(sim.requests({ platform: 'venue-a-clob' })).toHaveLength(1);
  });
});

describe('the platform root forwards', () => {
  it.each(['/api/v1/venue-a-clob/', '/api/v1/venue-a-clob', '/api/v1/polymarket-clob/?geo_block_token=t'])(
    'GET %s → the upstream root',
    async (path) => {
      const res = await call(gw.port, path, { 'X-API-Key': key });
      expect(res.status).toBe(200);
      expect(res.json()).toBe('OK');
      expect(h.last({ platform: 'venue-a-clob' })).toMatchObject({ method: 'GET', path: '/' });
    },
  );
});

describe('base URLs for clients that address a platform’s other hosts', () => {
  it('/api/v1/venue-a-clob/data-api/… is the Polymarket Data API (ccxt’s urls.api.data)', async () => {
    const res = await call(gw.port, '/api/v1/venue-a-clob/data-api/oi?market=0x5f', { 'X-API-Key': key });
    expect(res.status).toBe(200);
    expect(h.last({ platform: 'venue-a-clob/data' })).toMatchObject({
      method: 'GET',
      path: '/oi',
      query: 'market=0x5f',
    });
  });

  it('/api/v1/venue-b/v1/… is the /v1 API of Kalshi’s host (series search), unsigned', async () => {
    await call(gw.port, '/api/v1/venue-b/v1/search/series?query=btc', { 'X-API-Key': key });
    const seen = h.last({ platform: 'kalshi' });
    expect(seen).toMatchObject({ method: 'GET', path: '/v1/search/series', query: 'query=btc' });
    expect(seen?.headers['kalshi-access-signature']).toBeUndefined();
  });
});

describe('the key as HTTP Basic (user name), for clients that cannot set a header', () => {
  it('is accepted, never forwarded upstream, and X-API-Key wins when both are present', async () => {
    // What axios makes of http://KEY@host/…: the user name, an empty password.
    const viaUrl = await new Promise<number>((resolve, reject) => {
      http
        .get(
          {
            host: '127.0.0.1',
            port: gw.port,
            path: '/api/v1/venue-b/exchange/announcements',
            auth: `${key}:`,
            agent: false,
          },
          (r) => (r.resume(), resolve(r.statusCode ?? 0)),
        )
        .on('error', reject);
    });
    expect(viaUrl).toBe(200);
    const seen = h.last({ platform: 'kalshi' });
    expect(seen?.auth).toBe('valid');
    expect(seen?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen?.headers)).not.toContain(key);
    expect((await call(gw.port, '/api/v1/venue-d/currencies', { Authorization: basic(key, 'ignored') })).status).toBe(
      200,
    );
    const wrongHeader = await call(gw.port, '/api/v1/venue-d/currencies', {
      'X-API-Key': 'dg_wrong',
      Authorization: basic(key),
    });
    expect(wrongHeader.status).toBe(401);
  });

  it('a bad key in Basic gets the same 401 as in the header', async () => {
    for (const authorization of [basic('dg_000000000000000000000000000000000000000'), basic(''), 'Basic %%%']) {
      const res = await call(gw.port, '/api/v1/venue-d/currencies', { Authorization: authorization });
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized', message: 'Invalid API key' });
    }
    expect(sim.requests()).toHaveLength(0);
  });
});

describe('routing by host (GATEWAY_BASE_DOMAIN)', () => {
  let hosted: RunningGateway;
  beforeAll(async () => {
    hosted = await h.gateway({ GATEWAY_BASE_DOMAIN: 'localhost' });
  });
  const at = (host: string, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string) =>
    call(hosted.port, path, { Host: host, 'X-API-Key': key, ...headers }, method, body);

  it('{platform}.{domain} sends the path as given to that platform, through the whole pipeline', async () => {
    const events = await at(`venue-a-us.localhost:${hosted.port}`, '/v1/events?limit=2');
    expect(events.status).toBe(200);
    expect(events.json()).toHaveProperty('events');
    expect(h.last({ platform: 'venue-a-us' })).toMatchObject({ path: '/v1/events', query: 'limit=2' });
    // The private host, signed by the gateway, as for /api/v1/venue-a-us/…
    expect((await at('polymarket-us.localhost', '/v1/portfolio/positions')).status).toBe(200);
    expect(h.last({ platform: 'venue-a-us/auth' })).toMatchObject({ path: '/v1/portfolio/positions', auth: 'valid' });
    // Aliases, the base path of the platform, the root and read-only POSTs.
    expect((await at('Kalshi.LOCALHOST', '/exchange/announcements')).status).toBe(200);
    expect(h.last({ platform: 'kalshi' })).toMatchObject({
      path: '/trade-api/v2/exchange/announcements',
      auth: 'valid',
    });
    expect((await at('venue-a-clob.localhost', '/')).json()).toBe('OK');
    const books = await at(
      'venue-a-clob.localhost',
      '/books',
      JSON_TYPE,
      'POST',
      JSON.stringify([{ token_id: token }]),
    );
    expect(books.status).toBe(200);
    expect(h.last({ platform: 'venue-a-clob' })).toMatchObject({ method: 'POST', path: '/books' });
  });

  it('the same checks apply: key, path, method', async () => {
    const noKey = await call(hosted.port, '/v1/events', { Host: 'venue-a-us.localhost' });
    expect(noKey.status).toBe(401);
    const escape = await at('venue-a-us.localhost', '/v1/..;/admin');
    expect(escape.status).toBe(400);
    expect(escape.json()).toMatchObject({ error: 'invalid_path' });
    const put = await at('venue-a-us.localhost', '/v1/events', {}, 'PUT');
    expect(put.status).toBe(405);
    expect(sim.requests()).toHaveLength(0);
  });

  it('the bare domain and any other host keep the gateway’s own paths; a platform host has none of them', async () => {
    for (const host of ['localhost', `localhost:${hosted.port}`, 'nope.localhost', '127.0.0.1']) {
      expect((await call(hosted.port, '/health', { Host: host })).json()).toEqual({ status: 'ok' });
      expect((await at(host, '/api/v1/venue-d/currencies')).status).toBe(200);
    }
    sim.clearRequests();
    await at('venue-d.localhost', '/health');
    expect(h.last({ platform: 'coinbase' })).toMatchObject({ path: '/health' });
    // Off unless configured: the same Host on the default gateway is just a host.
    expect((await call(gw.port, '/v1/events', { Host: 'venue-a-us.localhost', 'X-API-Key': key })).status).toBe(404);
  });
});

describe('hygiene found while attacking the gateway', () => {
  it('a header the caller names in Connection is hop-by-hop: not forwarded even when allowlisted', async () => {
    const res = await call(gw.port, '/api/v1/venue-b/exchange/announcements', {
      'X-API-Key': key,
      Connection: 'keep-alive, Accept-Language',
      'Accept-Language': 'en',
      Accept: 'application/json',
    });
    expect(res.status).toBe(200);
    const seen = h.last({ platform: 'kalshi' });
    expect(seen?.headers['accept-language']).toBeUndefined();
    expect(seen?.headers.accept).toBe('application/json');
  });

  it('on mapped CLOB routes the caller’s own address=/market=/id= never reaches the upstream', async () => {
    await call(gw.port, '/api/v1/venue-a-clob/markets/0x5f/open-interest?market=0xevil&limit=1', { 'X-API-Key': key });
    expect(h.last({ platform: 'venue-a-clob/data' })).toMatchObject({ path: '/oi', query: 'limit=1&market=0x5f' });
    await call(gw.port, '/api/v1/venue-a-clob/events/42/live-volume?%69d=7', { 'X-API-Key': key });
    expect(h.last({ platform: 'venue-a-clob/data' })).toMatchObject({ path: '/live-volume', query: 'id=42' });
  });

  it('a truncated body counts against the circuit like any failure', async () => {
    const guarded = await h.gateway({ CIRCUIT_FAILURE_THRESHOLD: '2', CIRCUIT_OPEN_MS: '60000' });
    sim.faults.inject({ platform: 'coinbase', route: '/currencies', kind: 'truncate', times: 2 });
    for (let i = 0; i < 2; i++) {
      await call(guarded.port, '/api/v1/venue-d/currencies', { 'X-API-Key': key }).then(
        (r) => expect(() => JSON.parse(r.text)).toThrow(),
        (err: Error) => expect(err.message).toMatch(/aborted|socket hang up|ECONNRESET|premature/i),
      );
    }
    const before = sim.requests({ platform: 'coinbase' }).length;
    const open = await call(guarded.port, '/api/v1/venue-d/currencies', { 'X-API-Key': key });
    expect(open.status).toBe(503);
    expect(open.json()).toMatchObject({ error: 'upstream_unavailable' });
    expect(sim.requests({ platform: 'coinbase' })).toHaveLength(before);
  });

  it('a stalled body counts against the circuit like any failure', async () => {
    const upstream = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":'); // then nothing
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as { port: number }).port;
    try {
      const guarded = await h.gateway({
        UPSTREAM_VENUE_C_URL: `http://127.0.0.1:${port}`,
        UPSTREAM_BODY_TIMEOUT_MS: '200',
        CIRCUIT_FAILURE_THRESHOLD: '2',
        CIRCUIT_OPEN_MS: '60000',
      });
      for (let i = 0; i < 2; i++) {
        await call(guarded.port, '/api/v1/venue-c/v1/symbols', { 'X-API-Key': key }).then(
          (r) => expect(r.text).toBe('{"partial":'),
          (err: Error) => expect(err.message).toMatch(/aborted|socket hang up|ECONNRESET|premature/i),
        );
      }
      const open = await call(guarded.port, '/api/v1/venue-c/v1/symbols', { 'X-API-Key': key });
      expect(open.status).toBe(503);
      expect(open.json()).toMatchObject({ error: 'upstream_unavailable' });
    } finally {
      upstream.closeAllConnections();
      await new Promise((r) => upstream.close(r));
    }
  });

  it('errors of Node’s HTTP layer are the documented JSON on the gateway too', async () => {
    const raw = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(gw.port, '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('error', reject);
        socket.on('end', () => {
          socket.end();
          resolve(Buffer.concat(chunks).toString());
        });
        socket.write(bytes);
      });
    const bad = await raw('GET /api/v1/venue-b/markets HTTP/1.1 x\r\nHost: a\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    expect(bad).toContain('\r\n\r\n{"error":"invalid_request","message":');
    const noHost = await raw(`GET /api/v1/venue-b/markets HTTP/1.1\r\nX-API-Key: ${key}\r\n\r\n`);
    expect(noHost).toMatch(/^HTTP\/1\.1 400 [\s\S]*\{"error":"invalid_request"/);
    const expect417 = await raw('GET /health HTTP/1.1\r\nHost: a\r\nExpect: x\r\n\r\n');
    expect(expect417).toMatch(/^HTTP\/1\.1 417 [\s\S]*\{"error":"expectation_failed"/);
    expect(sim.requests()).toHaveLength(0);
  });
});
