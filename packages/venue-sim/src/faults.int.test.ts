import http from 'node:http';
import { signers, startSimulator, type Simulator } from './index';
import { get } from './testing/clients';

function rawGet(url: string): Promise<{ status: number; declared: number; received: number; aborted: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      let received = 0;
      let aborted = false;
      res.on('data', (c: Buffer) => (received += c.length));
      res.on('aborted', () => (aborted = true));
      res.on('error', () => (aborted = true));
      res.on('close', () =>
        resolve({
          status: res.statusCode ?? 0,
          declared: Number(res.headers['content-length']),
          received,
          aborted: aborted || !res.complete,
        }),
      );
    });
    req.on('error', reject);
  });
}

describe('injected faults do what they say', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 4, updatesPerSecond: 0, rateLimits: false });
  });
  afterAll(() => sim.stop());
  afterEach(() => {
    sim.faults.clear();
    sim.clearRequests();
  });

  test('latency: the answer comes at least `ms` later, and is the normal answer', async () => {
    sim.faults.inject({ platform: 'coinbase', route: '/time', kind: 'latency', ms: 300 });
    const t0 = Date.now();
    const res = await get(`${sim.urls['venue-d']}/time`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(res.status).toBe(200);
    expect(sim.requests().at(-1)).toMatchObject({ fault: 'latency', status: 200 });
  });

  test('status: a 5xx in the platform error format, only `times` times and only on its route', async () => {
    sim.faults.inject({ platform: 'venue-b', route: '/trade-api/v2/markets', kind: 'status', status: 503, times: 2 });
    const a = await get(`${sim.urls['venue-b']}/markets`);
    expect(a.status).toBe(503);
    expect(a.json).toMatchObject({ error: { code: 'internal_server_error' } });
    expect((await get(`${sim.urls['venue-b']}/exchange/status`)).status).toBe(200);
    expect((await get(`${sim.urls['venue-b']}/markets`)).status).toBe(503);
    expect((await get(`${sim.urls['venue-b']}/markets`)).status).toBe(200);
    expect(sim.faults.list()).toEqual([]);
  });

  test('reset: the connection is reset without an answer', async () => {
    sim.faults.inject({ platform: 'gemini', kind: 'reset' });
    const err = (await get(`${sim.urls['venue-c']}/v1/symbols`).catch((e: unknown) => e)) as Error & {
      cause?: { code?: string };
    };
    expect(err.message).toMatch(/fetch failed/);
    expect(String(err.cause?.code)).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
    expect(sim.requests().at(-1)).toMatchObject({ fault: 'reset', status: 0 });
  });

  test('truncate: headers promise the whole body, half arrives, the connection closes', async () => {
    sim.faults.inject({ platform: 'coinbase', route: '/currencies', kind: 'truncate' });
    const r = await rawGet(`${sim.urls['venue-d']}/currencies`);
    expect(r.status).toBe(200);
    expect(r.received).toBeLessThan(r.declared);
    expect(r.received).toBeGreaterThan(0);
    expect(r.aborted).toBe(true);
  });

  test('html: an HTML error page instead of JSON', async () => {
    sim.faults.inject({ platform: 'venue-a-us', kind: 'html' });
    const res = await get(`${sim.urls['venue-a-us']}/v1/events`);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toMatch(/<html/);
    expect(res.json).toBeUndefined();
  });

  test('hang: no answer at all (the client gives up); with ms, the connection drops after that long', async () => {
    const id = sim.faults.inject({ platform: 'venue-a', kind: 'hang' });
    const err = await get(`${sim.urls['venue-a']}/events`, {}, { signal: AbortSignal.timeout(300) }).catch(
      (e: Error) => e,
    );
    expect((err as Error).name).toMatch(/TimeoutError|AbortError/);
    expect(sim.requests().at(-1)).toMatchObject({ fault: 'hang', status: 0 });
    sim.faults.remove(id);
    sim.faults.inject({ platform: 'venue-a', kind: 'hang', ms: 100 });
    const dropped = (await get(`${sim.urls['venue-a']}/events`).catch((e: unknown) => e)) as Error;
    expect(dropped.message).toMatch(/fetch failed/);
  });

  test('faults can be injected and cleared through the control endpoint', async () => {
    const res = await get(
      `${sim.urls.control}/control/faults`,
      { 'content-type': 'application/json' },
      {
        method: 'POST',
        body: JSON.stringify({ platform: 'venue-a-clob/data', route: '/oi', kind: 'status', status: 500 }),
      },
    );
    expect(res.status).toBe(201);
    expect((await get(`${sim.urls['venue-a-clob/data']}/oi?market=0x1`)).status).toBe(500);
    const bad = await get(
      `${sim.urls.control}/control/faults`,
      { 'content-type': 'application/json' },
      {
        method: 'POST',
        body: JSON.stringify({ platform: 'venue-a-clob/data', kind: 'explode' }),
      },
    );
    expect(bad.status).toBe(400);
    await get(`${sim.urls.control}/control/faults`, {}, { method: 'DELETE' });
    expect((await get(`${sim.urls['venue-a-clob/data']}/oi?market=0x1`)).status).toBe(200);
  });
});

describe('rate limits answer 429 in each platform format', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 4, updatesPerSecond: 0 });
  });
  afterAll(() => sim.stop());

  const burst = async (url: string, n: number) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await get(url));
    return out;
  };

  test('defaults come from upstreams.md', () => {
    expect(sim.rateLimits.get('kalshi')).toEqual({ limit: 20, windowMs: 1000 });
    expect(sim.rateLimits.get('coinbase')).toMatchObject({ limit: 10, windowMs: 1000, burst: 15 });
    expect(sim.rateLimits.get('coinbase')?.authenticated).toMatchObject({
      limit: 15,
      burst: 30,
      routes: [{ burst: 20 }],
    });
    expect(sim.rateLimits.get('venue_a_us')).toEqual({ limit: 20, windowMs: 1000 });
    expect(sim.rateLimits.get('gemini')).toMatchObject({ limit: 120, windowMs: 60_000, queue: 5 });
    expect(sim.rateLimits.get('venue-a')).toMatchObject({ limit: 4000, windowMs: 10_000, overflow: 'delay' });
    expect(sim.rateLimits.get('venue-e/portal')).toMatchObject({ limit: 10, windowMs: 1000 });
    expect(sim.rateLimits.get('forecastex')).toBeNull();
  });

  test.each([
    [
      'kalshi',
      (s: Simulator) => `${s.urls['venue-b']}/exchange/status`,
      { error: { code: 'too_many_requests', message: 'too many requests' } },
    ],
    ['coinbase', (s: Simulator) => `${s.urls['venue-d']}/time`, { message: 'Public rate limit exceeded' }],
    [
      'venue-a-us',
      (s: Simulator) => `${s.urls['venue-a-us']}/v1/sports`,
      { status: 429, message: 'Too Many Requests' },
    ],
  ])('%s', async (platform, url, body) => {
    sim.rateLimits.set(platform, { limit: 3, windowMs: 60_000 });
    const res = await burst(url(sim), 4);
    expect(res.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(res[3]?.json).toEqual(body);
    sim.rateLimits.set(platform, null);
    expect((await get(url(sim))).status).toBe(200);
  });

  test('Coinbase: signed routes take their own (private) budget, not the public one', async () => {
    sim.rateLimits.set('coinbase', {
      limit: 2,
      windowMs: 60_000,
      authenticated: { limit: 3, windowMs: 60_000 },
    });
    const signed = (path: string) =>
      get(`${sim.urls['venue-d']}${path}`, signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', path));
    const publicRes = await burst(`${sim.urls['venue-d']}/time`, 3);
    expect(publicRes.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(publicRes[2]?.json).toEqual({ message: 'Public rate limit exceeded' });
    // The public budget is spent; the private one is whole.
    const privateRes = [];
    for (let i = 0; i < 4; i++) privateRes.push(await signed('/accounts'));
    expect(privateRes.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(privateRes[3]?.json).toEqual({ message: 'Private rate limit exceeded' });
    sim.rateLimits.set('coinbase', null);
  });

  test('Gemini queues a few requests over the limit, then answers 429 RateLimit', async () => {
    sim.rateLimits.set('gemini', { limit: 2, windowMs: 60_000, overflow: 'queue', queue: 1 });
    const results = await Promise.all(
      [0, 1, 2, 3].map(() =>
        get(`${sim.urls['venue-c']}/v1/symbols`, {}, { signal: AbortSignal.timeout(500) }).catch(
          (e: unknown) => e as Error,
        ),
      ),
    );
    const statuses = results.map((r) => ('status' in r ? r.status : 'waiting'));
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    expect(statuses.filter((s) => s === 'waiting')).toHaveLength(1);
    const limited = results.find((r) => 'status' in r && r.status === 429) as { json: unknown };
    expect(limited.json).toMatchObject({ result: 'error', reason: 'RateLimit' });
    sim.rateLimits.set('gemini', null);
  });

  test('Polymarket (Cloudflare) delays instead of refusing', async () => {
    sim.rateLimits.set('venue-a', { limit: 2, windowMs: 1000, overflow: 'delay' });
    const t0 = Date.now();
    const res = await Promise.all([0, 1, 2].map(() => get(`${sim.urls['venue-a']}/tags`)));
    expect(res.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    sim.rateLimits.set('venue-a', null);
  });

  test('limits are settable through the control endpoint', async () => {
    const put = await get(
      `${sim.urls.control}/control/rate-limits/venue-b`,
      { 'content-type': 'application/json' },
      {
        method: 'PUT',
        body: JSON.stringify({ limit: 1, windowMs: 60_000 }),
      },
    );
    expect(put.status).toBe(200);
    expect((await burst(`${sim.urls['venue-b']}/exchange/status`, 2)).map((r) => r.status)).toEqual([200, 429]);
    await get(`${sim.urls.control}/control/rate-limits/venue-b`, {}, { method: 'DELETE' });
    expect((await get(`${sim.urls['venue-b']}/exchange/status`)).status).toBe(200);
  });
});
