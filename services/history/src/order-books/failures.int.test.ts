/**
 * Failure paths against real servers: a caller that goes away (its query is killed), a query over its time budget
 * (503 query_timeout, query gone), the query gate (a slow reader holds no place), and ClickHouse stopped in the
 * middle of a streamed response (the response is cut, /ready turns red, requests get 503, and all recovers when it
 * is back). The querier's own cases — a queued query keeps its budget, the server's max_execution_time — are in
 * packages/history-store (querier.int.test.ts).
 */
import http from 'node:http';
import request from 'supertest';
import { startPrivateClickHouse, waitFor, type PrivateServer } from '@depthgate/test-utils';
import { createHarness, type Harness } from '../testing/harness';

const NOW = Date.UTC(2026, 5, 1, 12);
const BIG = 'KXBIG-26JUN01-T1';
const ROWS = 300_000;

/** ROWS delta rows for one ticker, made inside ClickHouse. */
async function fillBig(h: Harness): Promise<void> {
  await h.db.fillDeltas({ exchange: 'venue_b', ticker: BIG, fromTs: NOW - 3_600_000, stepMs: 10, rows: ROWS });
}

/** Running queries that touch the harness's database (other tests share the server). */
const running = (h: Harness): Promise<string[]> => h.db.runningQueries();

interface SlowReader {
  status: number;
  received: () => number;
  resume: () => void;
  destroy: () => void;
  /** Resolves with how the response ended. */
  ended: Promise<{ complete: boolean; body: string; error?: string }>;
}

/** A client that reads the first chunk of a response and then stops reading (back-pressure up to ClickHouse). */
function slowRead(url: string, key: string): Promise<SlowReader> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let settled = false;
      let finish!: (v: { complete: boolean; body: string; error?: string }) => void;
      const ended = new Promise<{ complete: boolean; body: string; error?: string }>((r) => (finish = r));
      const done = (error?: string) => {
        if (settled) return;
        settled = true;
        finish({ complete: res.complete, body: Buffer.concat(chunks).toString('utf8'), error });
      };
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        bytes += c.length;
        res.pause();
      });
      res.on('end', () => done());
      res.on('error', (e) => done(e.message));
      res.on('aborted', () => done('aborted'));
      res.on('close', () => done(res.complete ? undefined : 'closed'));
      resolve({
        status: res.statusCode ?? 0,
        received: () => bytes,
        resume: () => {
          res.removeAllListeners('data');
          res.on('data', (c: Buffer) => chunks.push(c));
          res.resume();
        },
        destroy: () => req.destroy(),
        ended,
      });
    });
    req.on('error', reject);
  });
}

describe('a caller that goes away', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ now: NOW });
    await fillBig(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('has its ClickHouse query cancelled: gone from system.processes, counted as a cancellation', async () => {
    const key = await h.key({});
    const { url } = await h.listen();
    const reader = await slowRead(`${url}/api/venue_b/deltas/${BIG}?limit=${ROWS}`, key);
    expect(reader.status).toBe(200);
    await waitFor(() => reader.received() > 0, { what: 'the first bytes' });
    // Nobody reads: the service stops reading ClickHouse, whose query waits on its socket (back-pressure all the
    // way: the service does not buffer the answer, so the query cannot finish while the caller does not read).
    await waitFor(async () => (await running(h)).length > 0, { what: 'the query to be running' });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await running(h)).length).toBe(1);
    expect(reader.received()).toBeLessThan(1_000_000);
    reader.destroy();
    await waitFor(async () => (await running(h)).length === 0, {
      timeoutMs: 15_000,
      what: 'the query to be gone from system.processes',
    });
    await waitFor(async () => (await h.metric('history_query_cancellations_total', { endpoint: 'deltas' })) === 1, {
      what: 'the cancellation to be counted',
    });
  });
});

describe('the time budget', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ now: NOW, env: { QUERY_TIMEOUT_MS: '1' } });
    await fillBig(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a query over budget before the response starts → 503 query_timeout, and the query is gone', async () => {
    const key = await h.key({});
    const res = await request(h.app).get(`/api/venue_b/deltas/${BIG}?limit=${ROWS}`).set('x-api-key', key);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'query_timeout',
      message: 'The query ran over its time budget of 1 ms and was cancelled; narrow the time range or lower the limit',
    });
    expect(await h.metric('history_query_timeouts_total', { endpoint: 'deltas' })).toBe(1);
    await waitFor(async () => (await running(h)).length === 0, {
      timeoutMs: 15_000,
      what: 'the query to be gone from system.processes',
    });
  });
});

describe('the ClickHouse query gate (CLICKHOUSE_QUERY_CONCURRENCY)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ now: NOW, env: { CLICKHOUSE_QUERY_CONCURRENCY: '1' } });
    await fillBig(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a caller that stops reading does not hold the place: the next request is answered meanwhile', async () => {
    const key = await h.key({});
    const { url } = await h.listen();
    const reader = await slowRead(`${url}/api/venue_b/deltas/${BIG}?limit=${ROWS}`, key);
    expect(reader.status).toBe(200);
    await waitFor(async () => (await running(h)).length > 0, { what: 'the query to be running' });
    const other = await request(h.app).get(`/api/venue_b/deltas/${BIG}?limit=5`).set('x-api-key', key);
    expect(other.status).toBe(200);
    expect(other.body.count).toBe(5);
    expect((await running(h)).length).toBe(1);
    reader.destroy();
    await waitFor(async () => (await running(h)).length === 0, {
      timeoutMs: 15_000,
      what: 'the slow reader’s query to be gone',
    });
  });
});

describe('ClickHouse stopped', () => {
  let server: PrivateServer;
  let h: Harness;
  beforeAll(async () => {
    server = await startPrivateClickHouse();
    h = await createHarness({ now: NOW, clickhouseUrl: server.url });
    await fillBig(h);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await server?.destroy();
  }, 60_000);

  it('mid-response: the response is cut (never a valid-looking JSON), /ready turns red, requests get 503, then recover', async () => {
    const key = await h.key({});
    const { url } = await h.listen();
    const reader = await slowRead(`${url}/api/venue_b/deltas/${BIG}?limit=${ROWS}`, key);
    expect(reader.status).toBe(200);
    await waitFor(async () => (await running(h)).length > 0, { what: 'the query to be running' });
    await server.stop();
    reader.resume();
    const end = await reader.ended;
    expect(end.complete).toBe(false);
    expect(() => JSON.parse(end.body)).toThrow();
    // The array and the object are never closed: no `],"count":N}` ending.
    expect(end.body).not.toMatch(/\],"count":\d+\}$/);
    expect(end.body.startsWith('{"exchange":"venue_b"')).toBe(true);

    const ready = await request(h.app).get('/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.clickhouse).toBe(false);
    const down = await request(h.app).get(`/api/venue_b/deltas/${BIG}?limit=1`).set('x-api-key', key);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({
      error: 'service_unavailable',
      message: 'The history store is unavailable; retry shortly',
    });
    expect(down.headers['retry-after']).toBe('5');
    const tickers = await request(h.app).get('/api/venue_b/tickers').set('x-api-key', key);
    expect(tickers.status).toBe(503);

    await server.start();
    await waitFor(async () => (await request(h.app).get('/ready')).status === 200, {
      timeoutMs: 20_000,
      what: 'ready again',
    });
    const back = await request(h.app).get(`/api/venue_b/deltas/${BIG}?limit=3`).set('x-api-key', key);
    expect(back.status).toBe(200);
    expect(back.body.count).toBe(3);
  }, 120_000);
});
