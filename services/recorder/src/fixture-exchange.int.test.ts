/**
 * docs/ADD_NEW_PLATFORM.md, "Recording it", proven: a recorded exchange defined only by the steps it lists — an
 * `exchange` in the descriptor, its migration line, the recorder's adapter, the simulator's module with moving books
 * and a feed — is recorded from the simulator's feed into ClickHouse, served by the history API (the book at random
 * moments equals the simulator's own), and present in every list derived from the registry.
 *
 * The one test that runs the history service in-process beside the recorder: the fixture exists only in this test's
 * registry, which a built service started as a process could not know (docs/architecture.md, "Rules of the house").
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import {
  EXCHANGES,
  PLATFORMS,
  definePlatform,
  exchangesOf,
  type Exchanges,
  renderClientExchanges,
  type ExchangeKey,
} from '@depthgate/platforms';
import {
  HistoryStore,
  MIGRATIONS,
  REQUIRED_SCHEMA_VERSION,
  exchangesMigration,
  storeOptions,
  verifyExchanges,
} from '@depthgate/history-store';
import { createTestDatabase } from '@depthgate/history-store/testing';
import { createAuth } from '@depthgate/auth';
import { createApp, loadConfig } from '@depthgate/history';
import { Lifecycle, createLogger, createRegistry } from '@depthgate/service-kit';
import { formatDecimal, parseDecimal, parseObject } from '@depthgate/feeds';
import { testRedisUrl, uniqueName, waitFor } from '@depthgate/test-utils';
import {
  BID,
  FeedHub,
  Router,
  formatScaled,
  json,
  parseJsonObject,
  simPlatform,
  type BookEngine,
  type BookEvent,
  type FeedConnection,
  type Instrument,
} from '@depthgate/venue-sim';
import { recorderEnvNames } from './config';
import { defineAdapter } from './venues/adapter';
import { ADAPTERS } from './venues/registry';
import { chunk, type RestBook, type SessionContext, type FeedProtocol, type VenueSession } from './venues/types';
import { createRecorderHarness, type RecorderHarness } from './testing/harness';

jest.setTimeout(120_000);

// Step 4: the descriptor declares the exchange (history key, aliases, a stored code never used before).
const venueF = definePlatform({
  key: 'venue-f',
  title: 'Fixture Exchange',
  covers: 'Fixture order books',
  docs: 'https://docs.fixture.example',
  aliases: ['fixture'],
  exchange: { key: 'venue_f', code: 99, aliases: ['fixture'] },
  hosts: { main: { env: 'UPSTREAM_VENUE_F_URL', default: 'https://api.fixture.example', description: 'Fixture REST' } },
  feeds: {
    main: {
      env: 'FEED_VENUE_F_URL',
      default: 'wss://ws.fixture.example/feed',
      description: 'Fixture feed',
      heartbeat: { kind: 'message', intervalMs: 1_000, source: 'the fixture feed [V]' },
    },
  },
  budget: { perSecond: 10, burst: 1, source: 'fixture: 10 per second' },
  credentials: {},
  settings: {},
});
const registry = { ...PLATFORMS, 'venue-f': venueF };
const exchanges = exchangesOf(registry) as Exchanges<ExchangeKey>;
const VENUE_F = 'venue_f' as ExchangeKey;

// Step 5: its migration line.
const migrations = [...MIGRATIONS, exchangesMigration(REQUIRED_SCHEMA_VERSION + 1, [VENUE_F], exchanges.codes)];

/*
 * The fixture's feed protocol, spoken by both sides below: `{"op":"subscribe","markets":[…]}`; per market a `book`
 * (the whole book), then `change`s carrying each changed level's new size, all with the event's `ts` and a `seq` per
 * market (a skipped one is a loss). REST: `GET /markets`, `GET /book/{market}`.
 */

// Step 6: the recorder's adapter.
class FixtureSession implements VenueSession {
  private readonly seqs = new Map<string, number>();
  private mark = -1;
  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
  ) {}
  subscribe(tickers: readonly string[]): void {
    for (const part of chunk(tickers, this.batch)) this.ctx.send(JSON.stringify({ op: 'subscribe', markets: part }));
  }
  unsubscribe(tickers: readonly string[]): void {
    this.ctx.send(JSON.stringify({ op: 'unsubscribe', markets: tickers }));
  }
  resync(tickers: readonly string[]): void {
    this.subscribe(tickers);
  }
  watermark(): number {
    return this.mark;
  }
  onMessage(text: string, receivedAt: number): void {
    const m = parseObject(text);
    const market = typeof m?.market === 'string' ? m.market : '';
    const rec = this.ctx.ticker(market);
    if (!m || rec === undefined || typeof m.seq !== 'number' || typeof m.ts !== 'number') return;
    if (m.ts > this.mark) this.mark = m.ts;
    if (m.type === 'book') {
      this.seqs.set(market, m.seq);
      rec.venueSnapshot(m.bids as [string, string][], m.asks as [string, string][], { ts: m.ts, receivedAt });
      return;
    }
    const last = this.seqs.get(market);
    this.seqs.set(market, m.seq);
    if (last !== undefined && m.seq !== last + 1) {
      rec.lose('sequence_gap');
      this.resync([market]);
      return;
    }
    const t = rec.beginEvent(m.ts, receivedAt);
    if (t < 0) return;
    for (const [side, price, size] of m.changes as [string, string, string][])
      rec.applyLevel(t, side === 'bid' ? 1 : 2, price, size);
  }
  close(): void {
    this.seqs.clear();
  }
}

const fixtureRecorder = defineAdapter({
  restRate: 5,
  reconcile: true, // it has a REST book
  trades: { cannot: 'the fixture feed publishes no trades' },
  settings: {},
  protocol: (ctx): FeedProtocol => ({
    venueClock: true,
    provesContinuity: true, // its `seq` shows a lost message
    signedHandshake: false,
    createSession: (session) => new FixtureSession(session, ctx.subscribeBatch),
    async listActive(rest) {
      return ((await rest.json('/markets')) as { markets: string[] }).markets;
    },
    async restBook(rest, ticker): Promise<RestBook> {
      return (await rest.json(`/book/${encodeURIComponent(ticker)}`)) as RestBook;
    },
    normalizeTicker: (t) => t,
  }),
});
const adapters = { ...ADAPTERS, [VENUE_F]: fixtureRecorder };

// Step 7: the simulator's module: moving books and the feed above.
const fixtureInstrument = (ticker: string): Instrument => ({
  platform: 'venue-f',
  ticker,
  priceDecimals: 2,
  qtyDecimals: 0,
  tick: 1,
  minPrice: 1,
  maxPrice: 99,
  initialMid: 50,
  maxLevels: 10,
  initialLevels: 5,
  window: 8,
  unit: 1,
  minUnits: 1,
  maxUnits: 500,
  fractionalPercent: 0,
});

class FixtureFeed {
  readonly hub: FeedHub;
  constructor(
    private readonly engine: BookEngine,
    private readonly byTicker: Map<string, Instrument>,
    clock: () => number,
  ) {
    this.hub = new FeedHub(clock);
    engine.on('venue-f', (inst, event) => this.onEvent(inst, event));
  }
  accept(conn: FeedConnection): void {
    conn.ws.on('message', (data) => {
      const m = parseJsonObject(data);
      if (!m || !Array.isArray(m.markets)) return;
      for (const market of m.markets as unknown[]) {
        const inst = typeof market === 'string' ? this.byTicker.get(market) : undefined;
        if (!inst) continue;
        if (m.op === 'unsubscribe') conn.tickers.delete(inst.ticker);
        else {
          conn.tickers.add(inst.ticker);
          this.hub.send(conn, JSON.stringify({ type: 'book', ...this.book(inst) }));
        }
      }
    });
  }
  book(inst: Instrument) {
    const book = this.engine.book('venue-f', inst.ticker);
    const side = (levels: Iterable<[number, number]>) =>
      [...levels].map(([p, q]) => [formatScaled(p, inst.priceDecimals), formatScaled(q, inst.qtyDecimals)]);
    return {
      market: inst.ticker,
      seq: this.engine.lastSeq('venue-f', inst.ticker),
      ts: this.engine.lastTs('venue-f', inst.ticker),
      bids: side(book?.bids.levels() ?? []),
      asks: side(book?.asks.levels() ?? []),
    };
  }
  private onEvent(inst: Instrument, event: BookEvent): void {
    if (this.hub.shouldDrop(inst.ticker)) return;
    const changes: string[][] = [];
    for (let i = 0; i < event.changes.length; i += 4) {
      const [side, price, size] = event.changes.slice(i, i + 3) as [number, number, number];
      changes.push([side === BID ? 'bid' : 'ask', formatScaled(price, 2), formatScaled(size, 0)]);
    }
    const msg = JSON.stringify({ type: 'change', market: inst.ticker, seq: event.seq, ts: event.ts, changes });
    for (const conn of this.hub.connections) if (conn.tickers.has(inst.ticker)) this.hub.send(conn, msg);
  }
}

const fixtureSim = simPlatform({
  book: { tickers: 3 },
  rateLimits: { main: null },
  catalog: (c) => {
    const instruments = Array.from({ length: c.tickers('venue-f') }, (_, i) => fixtureInstrument(`FIX-${i + 1}`));
    return { catalog: new Map(instruments.map((i) => [i.ticker, i])), instruments };
  },
  create(ctx, byTicker) {
    const feed = new FixtureFeed(ctx.engine, byTicker, ctx.clock);
    const router = new Router()
      .get('/markets', () => json(200, { markets: [...byTicker.keys()] }))
      .get('/book/:market', (req) => {
        const inst = byTicker.get(req.pathParams.market ?? '');
        return inst ? json(200, feed.book(inst)) : json(404, { error: 'no such market' });
      });
    return {
      hosts: {
        main: {
          router,
          errors: {
            notFound: () => json(404, { error: 'not found' }),
            unauthorized: () => json(401, { error: 'unauthorized' }),
            rateLimited: () => json(429, { error: 'slow down' }),
            serverError: (status) => json(status, { error: 'broken' }),
          },
          upgrade: (req, socket, head, record) => feed.hub.accept(req, socket, head, record, (c) => feed.accept(c)),
        },
      },
      feeds: { main: { host: 'main', path: '/feed', hub: feed.hub } },
      close: () => feed.hub.close(),
    };
  },
});

let h: RecorderHarness;
let history: { url: string; server: http.Server; close(): Promise<void> };

async function startHistory(database: string): Promise<typeof history> {
  const silent = new Writable({ write: (_c, _e, cb) => cb() });
  const logger = createLogger({ name: 'fixture-history', level: 'silent', destination: silent });
  const config = loadConfig({
    REDIS_URL: testRedisUrl(),
    REDIS_KEY_PREFIX: `${uniqueName('fx')}:`,
    CLICKHOUSE_URL: h.env.CLICKHOUSE_URL as string,
    CLICKHOUSE_DATABASE: database,
    CATALOGUE_CACHE_TTL_MS: '0',
    RATE_LIMIT_ANONYMOUS_RPM: '100000',
    ACCESS_LOG: 'false',
    LOG_LEVEL: 'silent',
  });
  const metrics = createRegistry('fixture-history', { defaultMetrics: false });
  const store = new HistoryStore({ ...storeOptions(config), logger });
  await verifyExchanges(store, exchanges);
  const auth = createAuth(config, { logger, registry: metrics, name: 'fixture-history' });
  const app = createApp({ config, logger, auth, store, registry: metrics, lifecycle: new Lifecycle(), exchanges });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    async close() {
      await new Promise((r) => server.close(r));
      await auth.close();
      await store.close();
    },
  };
}

beforeAll(async () => {
  h = await createRecorderHarness({
    sim: { extraPlatforms: { 'venue-f': { descriptor: venueF, sim: fixtureSim } }, platforms: ['venue-f'] },
    migrations,
    registry,
    adapters,
    env: { RECORDER_EXCHANGES: VENUE_F },
  });
  await h.startInProcess();
  await h.waitLive();
  history = await startHistory(h.database);
});

afterAll(async () => {
  await history?.close();
  await h?.close();
});

const get = async (path: string) => {
  const res = await fetch(`${history.url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('a recorded exchange defined by the four steps', () => {
  it('is in every list derived from the registry', async () => {
    expect(h.sim.recordedTickers()[VENUE_F]).toEqual(['FIX-1', 'FIX-2', 'FIX-3']);
    expect(h.sim.books.platforms()).toContain('venue-f');
    expect(exchanges.canonical('FIXTURE')).toBe(VENUE_F);
    expect(EXCHANGES.has(VENUE_F)).toBe(false); // the product's registry is untouched
    expect(recorderEnvNames(registry, adapters)).toEqual(
      expect.arrayContaining([
        'RECORDER_VENUE_F_TICKERS',
        'RECORDER_VENUE_F_PREFIXES',
        'RECORDER_VENUE_F_SERIES',
        'FEED_VENUE_F_URL',
      ]),
    );
    expect(renderClientExchanges(exchanges)).toContain(
      `{ key: 'venue_f', name: 'Fixture Exchange', aliases: ['fixture'] }`,
    );
    const unknown = await get('/api/venue_x/tickers');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('venue_f (fixture)');
  });

  it('is stored under its code by its migration line, and a database without it is refused at start-up', async () => {
    const bare = await createTestDatabase({ url: h.env.CLICKHOUSE_URL as string, database: uniqueName('fxbare') });
    try {
      await expect(verifyExchanges(bare.store, exchanges)).rejects.toThrow(/lacks venue_f = 99/);
      await expect(verifyExchanges(bare.store, EXCHANGES)).resolves.toBeUndefined();
    } finally {
      await bare.drop();
      await bare.close();
    }
  });

  it('is recorded from the simulator and served: the book at random moments equals the simulator’s', async () => {
    const tickers = h.sim.recordedTickers()[VENUE_F] as string[];
    const start = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    // Every row of the moments compared (up to start + 1400) is in ClickHouse once each ticker has a later one stored
    // (a ticker's rows land in their order; another ticker's later row says nothing of this one's).
    await waitFor(
      async () => {
        const later = new Set(
          (await h.rows(VENUE_F)).filter((r) => r.kind === 'delta' && r.ts > start + 1500).map((r) => r.ticker),
        );
        return tickers.every((t) => later.has(t));
      },
      { timeoutMs: 20_000, what: 'a delta after the compared moments stored for every ticker' },
    );
    const listed = await get('/api/fixture/tickers');
    expect(listed.body).toMatchObject({ exchange: VENUE_F, tickers });
    let compared = 0;
    for (let i = 0; i < 12; i++) {
      const ticker = tickers[i % tickers.length] as string;
      const at = start + 100 + Math.floor(Math.random() * 1300);
      const answer = await get(`/api/fixture/book/${ticker}?at=${new Date(at).toISOString()}`);
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('ok');
      const truth = h.sim.books.bookAt('venue-f', ticker, at);
      const levels = (side: unknown) =>
        (side as { price: string; quantity: string }[]).map((l) => [l.price, l.quantity]);
      const canonical = (d: string) => formatDecimal(parseDecimal(d));
      const norm = (ls: string[][]) => ls.map(([p, q]) => [canonical(p as string), canonical(q as string)]);
      expect(norm(levels(answer.body.bids))).toEqual(norm(truth.bids));
      expect(norm(levels(answer.body.asks))).toEqual(norm(truth.asks));
      compared++;
    }
    expect(compared).toBe(12);
  });
});
