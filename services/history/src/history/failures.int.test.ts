/**
 * Failure paths against real servers: a caller that goes away (its query is killed), a query over its time budget
 * (503 query_timeout, query gone), the server's own max_execution_time, the query gate (a slow reader holds no
 * place; a queued request keeps its budget), and ClickHouse stopped in the middle of a streamed response (the
 * response is cut, /ready turns red, requests get 503, and all recovers when it is back).
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { Response } from 'express';
import request from 'supertest';
import { createRegistry } from '@depthgate/service-kit';
import { startPrivateClickHouse, waitFor, type PrivateServer } from '@depthgate/test-utils';
import { createClickHouse, type ClickHouse } from '../clickhouse/client';
import { classifyClickHouseError } from '../clickhouse/errors';
import { lit, sql } from '../clickhouse/literals';
import { createHarness, type Harness } from '../test-harness';
import { HistoryMetrics } from './metrics';
import { GateClosedError, QueryGate } from './query-gate';
import { QueryScope } from './scope';
import { HistoryStore } from './store';

const NOW = Date.UTC(2026, 5, 1, 12);
const BIG = 'KXBIG-26JUN01-T1';
const ROWS = 300_000;

/** ROWS delta rows for one ticker, made inside ClickHouse. */
async function fillBig(h: Harness): Promise<void> {
  await h.ch.data.command({
    query: sql`INSERT INTO ${h.ch.db}.deltas
SELECT 'venue_b', ${lit.ticker(BIG)}, ${lit.int(NOW - 3_600_000)} + number * 10, number, if(number % 2 = 0, 'bid', 'ask'),
  toDecimal128('0.4800', 18), toDecimal128('150.25', 18)
FROM system.numbers LIMIT ${lit.int(ROWS)}`.text,
  });
}

/** Running queries that touch the harness's database (other tests share the server). */
async function running(ch: ClickHouse, database: string): Promise<string[]> {
  const rs = await ch.control.query({
    query: sql`SELECT query_id FROM system.processes
WHERE position(query, ${lit.name(database)}) > 0 AND position(query, 'system.processes') = 0`.text,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ query_id: string }>()).map((r) => r.query_id);
}

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
    await waitFor(async () => (await running(h.ch, h.ch.database)).length > 0, { what: 'the query to be running' });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await running(h.ch, h.ch.database)).length).toBe(1);
    expect(reader.received()).toBeLessThan(1_000_000);
    reader.destroy();
    await waitFor(async () => (await running(h.ch, h.ch.database)).length === 0, {
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
    await waitFor(async () => (await running(h.ch, h.ch.database)).length === 0, {
      timeoutMs: 15_000,
      what: 'the query to be gone from system.processes',
    });
  });

  it('ClickHouse’s own max_execution_time ends a query, and is recognised as a timeout', async () => {
    const started = Date.now();
    const err = await h.ch.data
      .exec({
        query: 'SELECT sum(sipHash64(number)) FROM system.numbers FORMAT TabSeparated',
        clickhouse_settings: { max_execution_time: 1 },
      })
      .then(async (r) => {
        for await (const _ of r.stream) void _;
        return undefined;
      })
      .catch((e: unknown) => e);
    expect(classifyClickHouseError(err).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(30_000);
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
    await waitFor(async () => (await running(h.ch, h.ch.database)).length > 0, { what: 'the query to be running' });
    const other = await request(h.app).get(`/api/venue_b/deltas/${BIG}?limit=5`).set('x-api-key', key);
    expect(other.status).toBe(200);
    expect(other.body.count).toBe(5);
    expect((await running(h.ch, h.ch.database)).length).toBe(1);
    reader.destroy();
    await waitFor(async () => (await running(h.ch, h.ch.database)).length === 0, {
      timeoutMs: 15_000,
      what: 'the slow reader’s query to be gone',
    });
  });

  it('a request waiting for a place keeps its time budget: 503 query_timeout, nothing sent to ClickHouse', async () => {
    const gate = new QueryGate(1);
    const metrics = new HistoryMetrics(createRegistry('gate-test', { defaultMetrics: false }));
    const store = new HistoryStore(h.ch, metrics, 0, gate);
    const held = await gate.acquire(new AbortController().signal);
    const res = new EventEmitter() as EventEmitter & { writableFinished: boolean };
    res.writableFinished = false;
    const scope = new QueryScope(h.ch, 200, res as unknown as Response);
    const started = Date.now();
    try {
      await expect(store.streamQuery(sql`SELECT 1 FORMAT RowBinary`, scope, () => undefined)).rejects.toBeInstanceOf(
        GateClosedError,
      );
      expect(scope.reason).toBe('timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      expect(gate.waiting).toBe(0);
      expect((await metrics.queueWaiting.get()).values[0]?.value).toBe(0);
    } finally {
      scope.dispose();
      held();
    }
    // With the place free again, the same store answers.
    const scope2 = new QueryScope(h.ch, 5000, res as unknown as Response);
    const chunks: Buffer[] = [];
    await store.streamQuery(sql`SELECT toUInt8(7) FORMAT RowBinary`, scope2, (c) => void chunks.push(c));
    scope2.dispose();
    expect(Buffer.concat(chunks)).toEqual(Buffer.from([7]));
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
    const probe = createClickHouse({ url: server.url, database: h.ch.database });
    try {
      await waitFor(async () => (await running(probe, h.ch.database)).length > 0, { what: 'the query to be running' });
    } finally {
      await probe.close();
    }
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
