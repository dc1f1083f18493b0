/**
 * Failure paths against real servers: a caller that goes away (its query is killed), a query over its time budget
 * (503 query_timeout, query gone), the query gate (a slow reader holds no place), and ClickHouse stopped in the
 * middle of a streamed response (the response is cut, /ready turns red, requests get 503, and all recovers when it
 * is back), and a bulk stream's later window failing (through a proxy in front of the test ClickHouse: the stream
 * ends at once, with nothing it had queued sent after). The querier's own cases — a queued query keeps its budget, the server's max_execution_time — are in
 * packages/history-store (querier.int.test.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startPrivateClickHouse, testClickHouseUrl, waitFor, type PrivateServer } from '@depthgate/test-utils';
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

interface WindowProxy {
  url: string;
  /** Where the window queries it failed began (epoch ms). */
  failed: number[];
  /** Held window queries the service closed before their answer. */
  abandoned: number;
  /** Passes on the held answers. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A proxy in front of the test ClickHouse that fails a bulk stream's later windows: a deltas window query (its
 * `ts >= from`, ordered and limited) that begins at or after `failFrom` is answered with ClickHouse's memory-limit
 * error; one that begins at or after `holdFrom` (and before `failFrom`) is run, but its answer held until `release()`.
 * Every other request passes through.
 */
async function windowProxy(target: string, rule: { failFrom: number; holdFrom?: number }): Promise<WindowProxy> {
  const upstream = new URL(target);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const state = { failed: [] as number[], abandoned: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const window = /\.deltas\nWHERE [^\n]*\bts >= (\d+)[^\n]*\nORDER BY ts, sequence\nLIMIT /.exec(body.toString());
      const from = window ? Number(window[1]) : undefined;
      if (from !== undefined && from >= rule.failFrom) {
        state.failed.push(from);
        res.statusCode = 500;
        res.end('Code: 241. DB::Exception: Memory limit (for query) exceeded');
        return;
      }
      const held = from !== undefined && rule.holdFrom !== undefined && from >= rule.holdFrom;
      const { hostname, port } = upstream;
      const forward = http.request({ hostname, port, path: req.url, method: req.method, headers: req.headers });
      forward.on('response', (answer) => {
        void (held ? released : Promise.resolve()).then(() => {
          if (res.destroyed) return;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
      });
      forward.on('error', () => res.destroy());
      res.on('close', () => {
        if (res.writableFinished) return;
        if (held) state.abandoned++;
        forward.destroy();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release,
    close: async () => {
      release();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  });
}

describe('a bulk stream whose later window fails', () => {
  const T0 = NOW - 7_200_000;
  let proxy: WindowProxy | undefined;
  let h: Harness | undefined;
  /** The service over a proxy failing (and holding) windows by `rule`, with `rows` deltas of BIG from T0 every 10 ms. */
  async function start(rule: { failFrom: number; holdFrom?: number }, rows: number): Promise<Harness> {
    proxy = await windowProxy(testClickHouseUrl(), rule);
    h = await createHarness({ now: NOW, clickhouseUrl: proxy.url });
    await h.db.fillDeltas({ exchange: 'venue_b', ticker: BIG, fromTs: T0, stepMs: 10, rows });
    return h;
  }
  afterEach(async () => {
    await h?.close();
    await proxy?.close();
    h = proxy = undefined;
  });

  it('before the answer started: an error answer, not the windows queued before the failed one and a cut', async () => {
    // The first window (at most 4,096 rows, some 400 kB of NDJSON) stays within the 1 MiB held before the headers;
    // the second (about 13,000 rows) would pass it. The second is held while the third, read beside it, fails.
    const h = await start({ holdFrom: T0 + 1, failFrom: T0 + 60_000 }, 100_000);
    const p = proxy as WindowProxy;
    const key = await h.key({});
    const { url } = await h.listen();
    const reader = slowRead(`${url}/api/venue_b/deltas/${BIG}?format=ndjson`, key);
    await waitFor(() => p.failed.length > 0, { what: 'the third window to fail' });
    // The stream knows it failed; the window ahead of the failed one answers later (the code before this fix waited
    // for it, and then sent its rows and cut the answer it had started).
    const passOn = setTimeout(() => p.release(), 2000);
    const answer = await reader;
    answer.resume();
    const end = await answer.ended;
    clearTimeout(passOn);
    expect(answer.status).toBe(503);
    expect(JSON.parse(end.body)).toEqual({
      error: 'service_unavailable',
      message: 'The history store is unavailable; retry shortly',
    });
    // The window held was abandoned with the request, not waited for.
    await waitFor(() => p.abandoned === 1, { what: 'the held window to be abandoned' });
    await waitFor(async () => (await running(h)).length === 0, { what: 'no query left running' });
  });

  it('a slow caller: the answer is cut at once, the rows queued are not sent, and what went out is a prefix', async () => {
    // Windows of about 3,300, 13,000, 52,000 and 210,000 rows begin before T0 + 1,000 s; the fifth fails. The rows
    // queued ahead of it (some 25 MB of NDJSON) are more than the sockets hold while the caller reads nothing.
    const rows = 600_000;
    const h = await start({ failFrom: T0 + 1_000_000 }, rows);
    const p = proxy as WindowProxy;
    const key = await h.key({});
    const { url } = await h.listen();
    const reader = await slowRead(`${url}/api/venue_b/deltas/${BIG}?format=ndjson`, key);
    expect(reader.status).toBe(200);
    await waitFor(() => p.failed.length > 0, { what: 'a later window to fail' });
    // Cut while the caller still reads nothing (before this fix: only once it had taken every queued row).
    await waitFor(async () => (await h.metric('history_cut_streams_total', { endpoint: 'deltas' })) === 1, {
      what: 'the stream to be cut',
    });
    await waitFor(async () => (await running(h)).length === 0, { what: 'no query left running' });
    reader.resume();
    const end = await reader.ended;
    expect(end.complete).toBe(false);
    const lines = end.body.split('\n').slice(0, -1); // the last piece: a line the cut ended, or nothing
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(rows);
    // The rows in order from the first, none skipped, and no end line.
    const wrong = lines.findIndex((line, i) => {
      const row = JSON.parse(line) as { ts?: string; sequence?: number };
      return row.ts !== new Date(T0 + 10 * i).toISOString() || row.sequence !== i;
    });
    expect(wrong).toBe(-1);
  }, 60_000);
});
