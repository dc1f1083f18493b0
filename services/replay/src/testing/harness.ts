/**
 * The replay's integration harness, on the test Redis and ClickHouse: the replay service served as main.ts serves it
 * (HTTP and the WebSocket replay's upgrades), and the history service as deployed (its built entrypoint,
 * services/history/dist/main.js, started as a process on the same database and key prefix — a service never imports
 * another) as the reference. For each recorded exchange a random recorded history (history.ts: books, changes in
 * messages of 1–3 rows, trades, gaps closed by fresh books) is stored under `TICKERS[exchange]`.
 *
 * What a test compares against: `historyBook(exchange, at)` (the history's `/book?at=`, exact) and
 * `historyTrades(venue, from, to)` (its `/trades` of (from, to], keyed as the venue's reference client keys them).
 */
import { Writable } from 'node:stream';
import {
  RedisKeyStore,
  createAuth,
  createRedisClient,
  redisTarget,
  waitForRedis,
  type Auth,
  type NewKeyInput,
  type Redis,
} from '@depthgate/auth';
import { formatDecimal, parseDecimal } from '@depthgate/feeds';
import {
  insertDeltaRows,
  insertGapRows,
  insertSnapshotRows,
  insertTradeRows,
  type SnapshotRow,
} from '@depthgate/history-store';
import { createTestDatabase, type TestDatabase } from '@depthgate/history-store/testing';
import type { ExchangeKey } from '@depthgate/platforms';
import {
  Lifecycle,
  createLogger,
  createRegistry,
  serve,
  type Registry,
  type RunningServer,
} from '@depthgate/service-kit';
import { startServiceProcess, testClickHouseUrl, testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { createReplayService } from '../app';
import { loadConfig } from '../config';
import type { BookLevels, RecordedTrade, RecordedWindow } from '../engine';
import { randomWindow, type ExactBook } from './history';
import { VENUES, type Venue } from './venues';
import type { ReplaySockets } from '../ws/server';

export const TICKERS: Record<ExchangeKey, string> = {
  venue_b: 'KXREPLAY-26MAR07-T100',
  venue_c: 'BTCUSD',
  venue_a_us: 'replay-will-it-rain',
  venue_a_clob: '71321045679252212594626385532706912750332728571942532289631379312455583992563',
  venue_d: 'BTC-USD',
};

const quiet = () =>
  createLogger({ name: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

/** Stores a generated window under `ticker` as the recorder would have. */
export async function storeWindow(
  db: TestDatabase,
  exchange: ExchangeKey,
  ticker: string,
  w: RecordedWindow,
): Promise<void> {
  const snapshot = (ts: number, book: BookLevels): SnapshotRow[] => [
    ...book.bids.map(([price, quantity]) => ({ exchange, ticker, ts, side: 'bid' as const, price, quantity })),
    ...book.asks.map(([price, quantity]) => ({ exchange, ticker, ts, side: 'ask' as const, price, quantity })),
  ];
  const snapshots = [
    ...(w.start ? snapshot(w.start.ts, w.start.book) : []),
    ...(w.firstBook ? snapshot(w.firstBook.ts, w.firstBook.book) : []),
    ...w.gaps.flatMap((g) => (g.book ? snapshot(g.to, g.book) : [])),
  ];
  if (snapshots.length > 0) await insertSnapshotRows(db.store, snapshots);
  await insertDeltaRows(
    db.store,
    w.deltas.map((d) => ({ exchange, ticker, ...d })),
  );
  await insertTradeRows(
    db.store,
    w.trades.map((t) => ({ exchange, ticker, ...t })),
  );
  await insertGapRows(
    db.store,
    w.gaps.map((g) => ({ exchange, ticker, from_ts: g.from, to_ts: g.to, reason: g.reason, detected_at: g.to })),
  );
}

/** An HTTP replay's answer: the NDJSON lines, and the native messages' texts cut out of them as sent. */
export interface Replayed {
  status: number;
  type: string | null;
  lines: string[];
  /** Cut out of the lines as sent (a JSON parser would round Gemini's large ids). */
  texts: string[];
  body: string;
}

export interface HarnessOptions {
  /** Events per venue's random history (default 400). */
  events?: number;
  /** Gap rate of the random histories (default 0.02). */
  gapRate?: number;
  /** Seed prefix of the random histories (default 'http'). */
  seed?: string;
  /** Replay settings over the defaults (REPLAY_PAGE_ROWS 1000: windows of several pages, …). */
  env?: Record<string, string>;
}

export interface Harness {
  db: TestDatabase;
  auth: Auth;
  registry: Registry;
  /** The replay service's base URL (http://…); `wsUrl` for its sockets. */
  url: string;
  /** The service's WebSocket side (its shutdown: `closeAll`). */
  sockets: ReplaySockets;
  historyUrl: string;
  /** The service's clock (the harness's fixed "now"). */
  now: number;
  /** A key of the default entitlements. */
  key: string;
  issue(input?: Omit<NewKeyInput, 'name'>): Promise<string>;
  /** Each exchange's stored random history. */
  windows: Map<ExchangeKey, RecordedWindow>;
  /** The first and last recorded moments of an exchange's history. */
  span(exchange: ExchangeKey): { first: number; last: number };
  /** `ws://…/ws/replay/v1/{platform}?{query}`. */
  wsUrl(platform: string, query: string): string;
  replayed(pathAndQuery: string, headers?: Record<string, string>): Promise<Replayed>;
  historyJson<T>(pathAndQuery: string): Promise<T>;
  historyBook(exchange: ExchangeKey, at: number, ticker?: string): Promise<ExactBook | undefined>;
  historyTrades(v: Venue, from: number, to: number, ticker?: string): Promise<string[]>;
  close(): Promise<void>;
}

const canon = (text: string) => formatDecimal(parseDecimal(text));

export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const prefix = `${uniqueName('t')}:`;
  const now = Date.UTC(2026, 2, 20);
  const db = await createTestDatabase({ url: testClickHouseUrl(), database: uniqueName('replay') });
  const config = loadConfig({
    REDIS_URL: testRedisUrl(),
    REDIS_KEY_PREFIX: prefix,
    CLICKHOUSE_URL: testClickHouseUrl(),
    CLICKHOUSE_DATABASE: db.database,
    ACCESS_LOG: 'false',
    LOG_LEVEL: 'silent',
    REPLAY_PAGE_ROWS: '1000',
    REPLAY_SUBSCRIBE_SETTLE_MS: '50',
    ...o.env,
  });
  const logger = quiet();
  const registry = createRegistry('replay-test', { defaultMetrics: false });
  const auth = createAuth(config, { logger, registry, name: 'replay-test' });
  await waitForRedis(auth.redis, 5000);
  const admin: Redis = createRedisClient(redisTarget(config), { name: 'test-admin', offlineQueue: true });
  await waitForRedis(admin, 10_000);
  const keys = new RedisKeyStore(admin, prefix);
  const issue = async (input: Omit<NewKeyInput, 'name'> = {}) => (await keys.create({ name: 'test', ...input })).key;
  // The tests read the history hundreds of times a minute: the key's budget is not what they test.
  const key = await issue({ requests_per_minute: 1_000_000 });
  const lifecycle = new Lifecycle();
  const { app, sockets } = createReplayService({
    config,
    logger,
    auth,
    store: db.store,
    registry,
    lifecycle,
    now: () => now,
  });
  const running: RunningServer = await serve(app, {
    port: 0,
    host: '127.0.0.1',
    logger,
    lifecycle,
    shutdownDelayMs: 0,
    drainTimeoutMs: 1000,
    exit: false,
  });
  running.server.on('upgrade', sockets.upgrade);
  const url = `http://127.0.0.1:${running.port}`;
  const windows = new Map<ExchangeKey, RecordedWindow>();
  for (const v of VENUES) {
    const w = randomWindow(`${o.seed ?? 'http'}|${v.exchange}`, v.grid, {
      events: o.events ?? 400,
      gapRate: o.gapRate ?? 0.02,
      ...(v.tradeId ? { tradeId: v.tradeId } : {}),
    });
    windows.set(v.exchange, w);
    await storeWindow(db, v.exchange, TICKERS[v.exchange], w);
  }
  const history = await startServiceProcess({
    entry: 'services/history/dist/main.js',
    portVariable: 'HISTORY_PORT',
    what: 'the history service',
    env: {
      ...process.env,
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: prefix,
      CLICKHOUSE_URL: testClickHouseUrl(),
      CLICKHOUSE_DATABASE: db.database,
      HISTORY_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ACCESS_LOG: 'false',
      EXPLORER_ENABLED: 'false',
    },
  });
  const historyUrl = history.url;

  async function historyJson<T>(pathAndQuery: string): Promise<T> {
    const res = await fetch(`${historyUrl}${pathAndQuery}`, { headers: { 'X-API-Key': key } });
    if (res.status !== 200) throw new Error(`history ${pathAndQuery}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  return {
    db,
    auth,
    registry,
    url,
    historyUrl,
    sockets,
    now,
    key,
    issue,
    windows,
    span(exchange) {
      const w = windows.get(exchange) as RecordedWindow;
      const times = [...w.deltas.map((d) => d.ts), ...w.trades.map((t) => t.ts), ...w.gaps.map((g) => g.to)];
      return { first: w.start?.ts ?? Math.min(...times), last: Math.max(...times) };
    },
    wsUrl: (platform, query) => `${url.replace('http:', 'ws:')}/ws/replay/v1/${platform}?${query}`,
    async replayed(pathAndQuery, headers = { 'X-API-Key': key }) {
      const res = await fetch(`${url}${pathAndQuery}`, { headers });
      const body = await res.text();
      const lines = body.split('\n').filter((l) => l !== '');
      const texts =
        res.status === 200
          ? lines.slice(0, -1).map((l) => {
              const at = l.indexOf(',"message":');
              if (at <= 0 || !l.endsWith('}')) throw new Error(`not a replay line: ${l.slice(0, 200)}`);
              return l.slice(at + ',"message":'.length, -1);
            })
          : [];
      return { status: res.status, lines, texts, body, type: res.headers.get('content-type') };
    },
    historyJson,
    async historyBook(exchange, at, ticker = TICKERS[exchange]) {
      type Levels = { price: string; quantity: string }[];
      const b = await historyJson<{ status: string; bids: Levels | null; asks: Levels | null }>(
        `/api/${exchange}/book/${ticker}?at=${at}`,
      );
      if (b.status !== 'ok') return undefined;
      const side = (l: Levels | null) => new Map((l ?? []).map((x) => [canon(x.price), parseDecimal(x.quantity)]));
      return { bids: side(b.bids), asks: side(b.asks) };
    },
    async historyTrades(v, from, to, ticker = TICKERS[v.exchange]) {
      const t = await historyJson<{
        rows: { ts: string; trade_id: string; price: string; size: string; side: string }[];
      }>(`/api/${v.exchange}/trades/${ticker}?start_ts=${from + 1}&end_ts=${to}&limit=100000`);
      return t.rows.map((r) =>
        v.tradeKey({
          ts: Date.parse(r.ts),
          trade_id: r.trade_id,
          price: r.price,
          size: r.size,
          side: r.side as RecordedTrade['side'],
        } as RecordedTrade),
      );
    },
    async close() {
      await history.stop();
      await running.shutdown('test');
      await db.drop();
      await Promise.allSettled([auth.close(), db.close()]);
      admin.disconnect();
    },
  };
}
