/**
 * The generator end to end: generated rows served by the API reconstruct every book exactly (spec rule 7), each
 * series ends with a seed_end gap, and the CLI reads its tickers from the simulator's control API.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { storeOptions } from '@depthgate/history-store';
import { HistoryClient, OrderBook, type SnapshotRow } from '@depthgate/client';
import { createHarness, type Harness } from './testing/harness';
import { planGeneration, runGeneration, tickersFrom } from '@depthgate/history-tools';

const run = promisify(execFile);
const SEED_CLI = path.resolve(__dirname, '../../../packages/history-tools/dist/cli/seed.js');
const FROM = Date.UTC(2026, 4, 1);
const TO = FROM + 6 * 3_600_000;

describe('generated history through the API', () => {
  let h: Harness;
  let key: string;
  let client: HistoryClient;
  const tickers = [
    { exchange: 'venue_b' as const, ticker: 'KXBTCD-26MAY01-T95000' },
    { exchange: 'venue_c' as const, ticker: 'BTCUSD' },
    { exchange: 'venue_a_us' as const, ticker: 'will-bitcoin-close-above-100k-on-may-31' },
  ];

  beforeAll(async () => {
    h = await createHarness({ now: TO + 60_000 });
    key = await h.key({});
    client = new HistoryClient({ baseUrl: (await h.listen()).url, apiKey: key });
    const { plan } = planGeneration({
      tickers,
      from: FROM,
      to: TO,
      snapshotIntervalMs: 300_000,
      seed: 'int',
      batchRows: 5000,
      eventsPerMinute: 20,
    });
    await runGeneration(h.ch, plan, { workers: 0, store: storeOptions(h.config) });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it.each([0, 1, 2])('every book of ticker %i is the previous one plus the deltas in between (rule 7)', async (i) => {
    const { exchange, ticker } = tickers[i] as (typeof tickers)[number];
    // The client's replay checks every snapshot against the book it rebuilt from the previous one and the deltas
    // in between, exactly (a difference is a snapshot_mismatch error); the seed_end gap ends the series.
    let books = 1;
    let changes = 0;
    for await (const e of client.replay(exchange, ticker, { from: FROM + 300_000, to: TO - 1 })) {
      if (e.type === 'snapshot') {
        expect(e.restarted).toBe(false);
        books++;
      } else if (e.type === 'book') changes++;
      else expect(e.gap.reason).toBe('seed_end');
    }
    expect(books).toBe(72);
    expect(changes).toBeGreaterThan(500);
  });

  it('rule 7 literally: a snapshot, then the deltas from its ts, give the next snapshot', async () => {
    const { exchange, ticker } = tickers[1] as (typeof tickers)[number];
    const T = FROM + 2 * 3_600_000 + 123_456;
    const first = (await client.snapshotPage(exchange, ticker, { start: T, limit: 1 })).rows;
    const ts = Date.parse((first[0] as SnapshotRow).ts);
    expect(new Set(first.map((r) => r.ts)).size).toBe(1);
    const nextBook = (await client.snapshotPage(exchange, ticker, { start: ts + 1, limit: 1 })).rows;
    const nextTs = Date.parse((nextBook[0] as SnapshotRow).ts);
    const between = (await client.deltaPage(exchange, ticker, { start: ts, end: nextTs - 1, limit: 1_000_000 })).rows;
    expect(between.length).toBeGreaterThan(0);
    expect(OrderBook.fromRows(first, between).equals(OrderBook.fromSnapshot(nextBook))).toBe(true);
  });

  it.each([0, 1, 2])(
    'ticker %i: the generated trades are served, each followed by the delta that took its size from its level',
    async (i) => {
      const { exchange, ticker } = tickers[i] as (typeof tickers)[number];
      const res = await request(h.app)
        .get(`/api/${exchange}/deltas/${ticker}?format=ndjson&include=trades`)
        .set('x-api-key', key);
      const lines = (res.text.trim().split('\n') as string[]).map((l) => JSON.parse(l) as Record<string, unknown>);
      const trades = lines.flatMap((l, at) => (l.type === 'trade' ? [at] : []));
      expect(trades.length).toBeGreaterThan(20);
      for (const at of trades) {
        const trade = lines[at] as Record<string, string>;
        const next = lines[at + 1] as Record<string, string>;
        expect([next.ts, next.side, next.price, next.quantity_delta]).toEqual([
          trade.ts,
          trade.side === 'buy' ? 'ask' : 'bid',
          trade.price,
          `-${trade.size}`,
        ]);
      }
      const bars = await request(h.app).get(`/api/${exchange}/bars/${ticker}?interval=1h`).set('x-api-key', key);
      const rows = (bars.body as { rows: { trades: number }[] }).rows;
      expect(rows.reduce((n, b) => n + b.trades, 0)).toBe(trades.length);
    },
  );

  it('marks the end of each generated series with a seed_end gap', async () => {
    const { gaps, deltas } = await h.db.storedRows();
    expect(gaps.map((g) => g.ticker).sort()).toEqual(tickers.map((t) => t.ticker).sort());
    for (const g of gaps) {
      expect(g.reason).toBe('seed_end');
      expect(g.to_ts).toBe(TO);
      const last = deltas.filter((d) => d.ticker === g.ticker).reduce((m, d) => Math.max(m, d.ts), -1);
      expect(last).toBeGreaterThan(0);
      expect(g.from_ts).toBeGreaterThanOrEqual(last);
      expect(g.from_ts).toBeLessThan(TO);
    }
  });
});

describe('seed CLI with --tickers-from', () => {
  let h: Harness;
  let stub: http.Server;
  let stubUrl: string;
  const served = {
    venue_b: ['KXSIM-26MAY01-T1', 'not a ticker!'],
    venue_c: ['BTCUSD', 'GEMI-SIM-1'],
    venue_a_us: ['sim-market-one'],
    venue_x: ['ignored'],
  };

  beforeAll(async () => {
    h = await createHarness();
    stub = http.createServer((req, res) => {
      if (req.url === '/control/tickers') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(served));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => stub?.close(r));
    await h?.close();
  });

  it('reads the simulator’s ticker lists, skipping what is not a ticker', async () => {
    const warnings: string[] = [];
    const list = await tickersFrom(`${stubUrl}/`, { warn: (m) => warnings.push(m) });
    expect(list).toEqual([
      { exchange: 'venue_b', ticker: 'KXSIM-26MAY01-T1' },
      { exchange: 'venue_c', ticker: 'BTCUSD' },
      { exchange: 'venue_c', ticker: 'GEMI-SIM-1' },
      { exchange: 'venue_a_us', ticker: 'sim-market-one' },
    ]);
    expect(warnings.join('\n')).toMatch(/not a ticker[\s\S]*venue_x/);
    await expect(tickersFrom('http://127.0.0.1:1')).rejects.toThrow(/could not read the ticker list/);
  });

  it('`seed --days N --tickers-from URL` (as ./dev up --sim runs it) seeds every ticker once', async () => {
    if (!existsSync(SEED_CLI)) throw new Error(`${SEED_CLI} is missing: build first (pnpm build; ./dev test does)`);
    const env = { ...process.env, CLICKHOUSE_URL: h.config.CLICKHOUSE_URL, CLICKHOUSE_DATABASE: h.ch.database };
    const args = [SEED_CLI, '--days', '0.25', '--tickers-from', stubUrl, '--events-per-minute', '4'];
    const first = await run(process.execPath, args, { env });
    expect(first.stderr).toMatch(/generating 4 tickers/);
    expect(first.stderr).toMatch(/seed_end/);

    const key = await h.key({});
    h.clock.now = Date.now();
    const venueC = await request(h.app).get('/api/venue_c/tickers').set('x-api-key', key);
    expect(venueC.body.tickers).toEqual(['BTCUSD', 'GEMI-SIM-1']);
    const anonymous = await request(h.app).get('/api/venue_b/tickers');
    expect(anonymous.body.tickers).toEqual(['KXSIM-26MAY01-T1']);

    const count = () => h.db.rowCount('deltas');
    const before = await count();
    expect(before).toBeGreaterThan(0);
    const second = await run(process.execPath, args, { env });
    expect(second.stderr).toMatch(/skipping 4 ticker\(s\) that already hold rows/);
    expect(await count()).toBe(before);

    const bad = await run(process.execPath, [SEED_CLI, '--days', 'x'], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(/--days must be a positive number/);
  }, 60_000);
});
