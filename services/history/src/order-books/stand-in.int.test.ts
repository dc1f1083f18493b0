/**
 * What a real ClickHouse cannot be made to show on cue, against a stand-in that answers the service's queries (its
 * catalogue, bars windows in RowBinary) as each test says: a failed request must end its other queries (the window
 * read ahead is aborted and killed), and their failures must never go unhandled (that would end the process); a long
 * page of bars goes out as its windows answer, and a window that fails after it started cuts it. The service runs as
 * in production, with Redis for its auth; only ClickHouse is the stand-in.
 */
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createAuth, RedisKeyStore, waitForRedis } from '@depthgate/auth';
import { HistoryStore, storeOptions } from '@depthgate/history-store';
import { Lifecycle, createRegistry } from '@depthgate/service-kit';
import { testRedisUrl, uniqueName, waitFor } from '@depthgate/test-utils';
import { createApp } from '../app';
import { loadConfig } from '../config';
import { quietLogger } from '../testing/harness';

const NOW = Date.UTC(2026, 5, 1, 12);

/** One one-minute bar in the bars query's RowBinary (its minute, open/high/low/close/volume 1, one trade). */
function oneBar(ts: number): Buffer {
  const bar = Buffer.alloc(144);
  bar.writeBigInt64LE(BigInt(ts), 0);
  for (const o of [8, 24, 40, 56, 72]) bar.writeBigUInt64LE(10n ** 18n, o);
  bar.writeBigInt64LE(1n, 88);
  return bar;
}

/** Bars `from` ≤ ts < `to` (null: open) of a bars query, as its WHERE says. */
interface BarsWindow {
  from: number;
  to: number | null;
}

interface StandIn {
  url: string;
  /** Bars queries received, in order. */
  bars: number;
  /** Query ids a KILL QUERY named. */
  killed: string[];
  /** Bars queries whose connection the service closed before their answer. */
  abandoned: number;
  /** Bars queries that ended (answered or abandoned). */
  ended: number;
  close(): Promise<void>;
}

/**
 * Answers the catalogue — a ticker T1 whose 100,000 trades span the `days` before NOW — and the `n`-th bars query
 * (from 0) as `answer` does.
 */
async function standIn(
  answer: (n: number, window: BarsWindow, res: http.ServerResponse) => void,
  days = 2,
): Promise<StandIn> {
  const state = { bars: 0, killed: [] as string[], abandoned: 0, ended: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const query = (new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '') + body;
      const killed = /KILL QUERY[\s\S]*query_id\s*=\s*'([^']+)'/.exec(query);
      if (killed) {
        state.killed.push(killed[1] as string);
        res.end('');
        return;
      }
      if (/ticker_catalogue/.test(query)) {
        const row = (kind: string, rows: number) =>
          JSON.stringify({
            ticker_name: 'T1',
            kind_name: kind,
            min_ts: NOW - days * 86_400_000,
            max_ts: NOW,
            n_rows: rows,
          });
        res.end(`${row('delta', 50_000_000)}\n${row('trade', 100_000)}\n`);
        return;
      }
      if (/trade_count/.test(query)) {
        const to = /ts < (\d+)/.exec(query)?.[1];
        const window = {
          from: Number(/ts >= (\d+)/.exec(query)?.[1] ?? NOW),
          to: to === undefined ? null : Number(to),
        };
        res.on('close', () => {
          if (!res.writableFinished) state.abandoned++;
          state.ended++;
        });
        answer(state.bars++, window, res);
        return;
      }
      // Start-up and readiness probes, settings: an empty answer.
      res.end('');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  });
}

/** A bar each minute of a window (up to NOW). */
function minuteBars(w: BarsWindow): Buffer {
  const bars: Buffer[] = [];
  for (let ts = w.from; ts < Math.min(w.to ?? NOW, NOW); ts += 60_000) bars.push(oneBar(ts));
  return Buffer.concat(bars);
}

const MEMORY_LIMIT = 'Code: 241. DB::Exception: Memory limit (for query) exceeded';

describe('history service over a ClickHouse stand-in', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => process.off('unhandledRejection', onUnhandled));

  /**
   * The service over the stand-in (its own Redis prefix), for `run`, with a key of full history; everything closed
   * after.
   */
  async function withService(
    ch: StandIn,
    run: (app: ReturnType<typeof createApp>, key: string) => Promise<void>,
  ): Promise<void> {
    const prefix = `${uniqueName('t')}:`;
    const config = loadConfig({
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: prefix,
      CLICKHOUSE_URL: ch.url,
      CATALOGUE_CACHE_TTL_MS: '0',
      ACCESS_LOG: 'false',
      LOG_LEVEL: 'silent',
    });
    const logger = quietLogger();
    const registry = createRegistry('history-test', { defaultMetrics: false });
    const auth = createAuth(config, { logger, registry, name: 'history-test' });
    const store = new HistoryStore({ ...storeOptions(config), requestTimeoutMs: 30_000, logger });
    try {
      await waitForRedis(auth.redis, 5000);
      const { key } = await new RedisKeyStore(auth.redis, prefix).create({ name: 'stand-in' });
      await run(createApp({ config, logger, auth, store, registry, lifecycle: new Lifecycle(), now: () => NOW }), key);
    } finally {
      await store.close();
      await auth.close();
      await ch.close();
    }
  }

  it('a bars answer that fails: the window read ahead ends with it, and its failure is not left unhandled', async () => {
    // The first window: a bar and then the exception text ClickHouse appends to a 200 it had started (a memory limit
    // hit mid-answer); every later one, after a minute, a 500.
    const ch = await standIn((n, window, res) => {
      if (n === 0) {
        res.writeHead(200);
        res.end(Buffer.concat([oneBar(window.from), Buffer.from(`${MEMORY_LIMIT}\n`)]));
        return;
      }
      const timer = setTimeout(() => {
        res.statusCode = 500;
        res.end(MEMORY_LIMIT);
      }, 60_000);
      res.on('close', () => clearTimeout(timer));
    });
    await withService(ch, async (app) => {
      const res = await request(app).get('/api/venue_b/bars/T1?interval=1m');
      expect([res.status, res.body.error]).toEqual([500, 'internal_error']);
      // The window read ahead (asked for as the first one's answer came) went with the request: never sent, or its
      // connection closed before its answer (the stand-in would hold it for a minute) — none is left running.
      await waitFor(() => ch.ended === ch.bars, { what: 'every bars query to end' });
      expect(ch.bars - ch.abandoned).toBe(1);
      // Its failure (the abort) was handled.
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    });
  });

  /** A request to the app on a loopback port, its body taken as it comes. */
  async function served(app: ReturnType<typeof createApp>, path: string, key: string) {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const chunks: Buffer[] = [];
    let received = 0;
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port: (server.address() as AddressInfo).port, path, headers: { 'x-api-key': key } },
        resolve,
      );
      req.on('error', reject);
    });
    /** Whether the body came whole (false: the connection was cut). */
    const ended = response.then(
      (res) =>
        new Promise<boolean>((resolve) => {
          res.on('data', (c: Buffer) => {
            chunks.push(c);
            received += c.length;
          });
          res.on('error', () => undefined);
          res.on('close', () => resolve(res.complete));
        }),
    );
    return {
      response,
      ended,
      received: () => received,
      body: () => Buffer.concat(chunks).toString('utf8'),
      close: () => {
        server.closeAllConnections();
        return new Promise((r) => server.close(r));
      },
    };
  }

  /**
   * 100,000 trades over 60 days: a page of 20,000 one-minute bars reads a first window of 14,156 minutes (16,384
   * trades at that rate), 1.5 MB of JSON — more than the 1 MiB held before the headers go out — and a second of twice
   * that, which fills the page.
   */
  const LONG_PAGE = '/api/venue_b/bars/T1?interval=1m&limit=20000';

  it('a page of bars over 1 MiB goes out as its windows answer: its first bars reach the caller before its last window is read', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The second window is answered only once released.
    const ch = await standIn((n, window, res) => {
      if (n === 0) res.end(minuteBars(window));
      else void released.then(() => res.end(minuteBars(window)));
    }, 60);
    await withService(ch, async (app, key) => {
      const answer = await served(app, LONG_PAGE, key);
      try {
        const res = await answer.response;
        expect(res.statusCode).toBe(200);
        // The first MiB and more came while the last window's aggregation had not answered.
        await waitFor(() => answer.received() > 1024 * 1024, { what: 'the first MiB of the page' });
        expect([ch.bars, ch.ended]).toEqual([2, 1]);
        expect(answer.body().startsWith('{"exchange":"venue_b","ticker":"T1","interval":"1m","rows":[{"ts":')).toBe(
          true,
        );
        release();
        expect(await answer.ended).toBe(true);
        // Its headers went before its end: no Link, no length; the body says where the next page begins.
        expect(res.headers.link).toBeUndefined();
        expect(res.headers['content-length']).toBeUndefined();
        const page = JSON.parse(answer.body()) as { rows: { ts: string }[]; count: number; next_cursor: string | null };
        expect(page.count).toBe(20_000);
        expect(page.rows).toHaveLength(20_000);
        const first = Date.parse(page.rows[0]?.ts as string);
        expect(page.rows.every((bar, i) => Date.parse(bar.ts) === first + i * 60_000)).toBe(true);
        expect(typeof page.next_cursor).toBe('string');
      } finally {
        release();
        await answer.close();
      }
    });
  });

  it('a page of bars whose later window fails after its first MiB went out is cut, as the rows pages are', async () => {
    const ch = await standIn((n, window, res) => {
      if (n === 0) res.end(minuteBars(window));
      else {
        res.statusCode = 500;
        res.end(MEMORY_LIMIT);
      }
    }, 60);
    await withService(ch, async (app, key) => {
      const answer = await served(app, LONG_PAGE, key);
      try {
        expect((await answer.response).statusCode).toBe(200);
        // The connection is cut: the body ends short of its end, never a well-formed JSON with bars missing.
        expect(await answer.ended).toBe(false);
        expect(answer.received()).toBeGreaterThan(1024 * 1024);
        expect(() => JSON.parse(answer.body()) as unknown).toThrow(SyntaxError);
      } finally {
        await answer.close();
      }
    });
  });
});
