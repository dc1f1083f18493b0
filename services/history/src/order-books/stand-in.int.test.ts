/**
 * Failures a real ClickHouse cannot be made to show on cue, against a stand-in that answers the service's queries
 * (its catalogue, a bars window in RowBinary) and then fails: a failed request must end its other queries (the
 * window read ahead is aborted and killed), and their failures must never go unhandled (that would end the process).
 * The service runs as in production, with Redis for its auth; only ClickHouse is the stand-in.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createAuth } from '@depthgate/auth';
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
 * Answers the catalogue; the first bars window with a bar and then the exception text ClickHouse appends to a 200 it
 * had started (a memory limit hit mid-answer); every later bars window, after `failAfterMs`, with a 500.
 */
async function standIn(failAfterMs: number): Promise<StandIn> {
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
            min_ts: NOW - 2 * 86_400_000,
            max_ts: NOW,
            n_rows: rows,
          });
        res.end(`${row('delta', 50_000_000)}\n${row('trade', 100_000)}\n`);
        return;
      }
      if (/trade_count/.test(query)) {
        const n = state.bars++;
        const from = Number(/ts >= (\d+)/.exec(query)?.[1] ?? NOW);
        if (n === 0) {
          res.writeHead(200);
          const failed = Buffer.from('Code: 241. DB::Exception: Memory limit (for query) exceeded\n');
          res.end(Buffer.concat([oneBar(from), failed]));
          state.ended++;
          return;
        }
        const timer = setTimeout(() => {
          res.statusCode = 500;
          res.end('Code: 241. DB::Exception: Memory limit (for query) exceeded');
        }, failAfterMs);
        res.on('close', () => {
          clearTimeout(timer);
          if (!res.writableFinished) state.abandoned++;
          state.ended++;
        });
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

describe('history service over a ClickHouse stand-in', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => process.off('unhandledRejection', onUnhandled));

  /** The service over the stand-in (its own Redis prefix), for `run`; everything closed after. */
  async function withService(ch: StandIn, run: (app: ReturnType<typeof createApp>) => Promise<void>): Promise<void> {
    const config = loadConfig({
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: `${uniqueName('t')}:`,
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
      await run(createApp({ config, logger, auth, store, registry, lifecycle: new Lifecycle(), now: () => NOW }));
    } finally {
      await store.close();
      await auth.close();
      await ch.close();
    }
  }

  it('a bars answer that fails: the window read ahead ends with it, and its failure is not left unhandled', async () => {
    const ch = await standIn(60_000);
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
});
