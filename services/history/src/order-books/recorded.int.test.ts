/**
 * The book endpoint on recorded data: the venue simulator (in-process) → the recorder (its built entrypoint, as
 * deployed: services/recorder/dist/main.js, started as a process — a service never imports another) → ClickHouse →
 * the history API. For random moments and event times outside the recorded gaps, the book endpoint equals the
 * simulator's own book at that moment and the book rebuilt from the row endpoints; inside a gap it says so. Gemini
 * is stamped on receipt, so it is compared at a quiet moment. Rows carry the recorder's receive clock.
 */
import { EXCHANGE_KEYS } from '@depthgate/auth';
import { Rng } from '@depthgate/service-kit';
import { waitFor } from '@depthgate/test-utils';
import { startSimulator, type Simulator } from '@depthgate/venue-sim';
import request from 'supertest';
import { Decimal, HistoryClient, OrderBook } from '@depthgate/client';
import { createHarness, type Harness } from '../testing/harness';
import { startRecorder, type Recorder } from '../testing/recorder';

jest.setTimeout(120_000);

const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Flat = Record<string, string>;
const flatOf = (bids: [string, string][], asks: [string, string][]): Flat => {
  const out: Flat = {};
  for (const [p, q] of bids) if (!Decimal.parse(q).isZero()) out[`bid ${Decimal.parse(p)}`] = String(Decimal.parse(q));
  for (const [p, q] of asks) if (!Decimal.parse(q).isZero()) out[`ask ${Decimal.parse(p)}`] = String(Decimal.parse(q));
  return out;
};

interface Gap {
  from_ts: string;
  to_ts: string;
}

let sim: Simulator;
let h: Harness;
let recorder: Recorder | undefined;
let key: string;
let client: HistoryClient;

beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_DEFAULT_RPM: '1000000', MAX_LIMIT: '1000000' } });
  key = await h.key({});
  client = new HistoryClient({ baseUrl: (await h.listen()).url, apiKey: key });
  sim = await startSimulator({
    seed: 13,
    updatesPerSecond: 150,
    heartbeatIntervalMs: 200,
    rateLimits: false,
    recordRequests: false,
    historyRetentionMs: 600_000,
    changesPerUpdate: { gemini: 3, 'venue-a-us': 2 },
  });
  recorder = await startRecorder(h, sim);
});

afterAll(async () => {
  await recorder?.stop();
  await sim?.stop();
  await h?.close();
});

const get = (p: string) => request(h.app).get(p).set('x-api-key', key);

/** Every ticker of every exchange has its first snapshot stored. */
async function recording(): Promise<void> {
  await waitFor(
    async () => {
      for (const exchange of EXCHANGE_KEYS) {
        for (const ticker of sim.books.tickers(exchange)) {
          const res = await get(`/api/${exchange}/coverage/${ticker}`);
          if (res.status !== 200 || res.body.snapshots.rows === 0) return false;
        }
      }
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: 'every ticker recorded' },
  );
}

/** Books at rest, everything in flight written: a moment to compare receive-stamped books at. */
async function quiet(): Promise<number> {
  sim.books.pause();
  await sleep(500);
  const at = Date.now();
  await sleep(600);
  return at;
}

describe('the book endpoint on what the recorder recorded', () => {
  let end: number;
  let geminiQuiet: number;
  const geminiBooks = new Map<string, Flat>();

  beforeAll(async () => {
    await recording();
    await sleep(2000);
    // Gaps: a disconnect of every feed, then a stall of Kalshi's.
    sim.feedFaults.disconnect('kalshi');
    sim.feedFaults.disconnect('venue-a-us');
    sim.feedFaults.disconnect('gemini');
    await sleep(1500);
    sim.feedFaults.stall('kalshi', 2500);
    await sleep(4000);
    geminiQuiet = await quiet();
    for (const t of sim.books.tickers('venue_c')) {
      const b = sim.books.bookAt('gemini', t, geminiQuiet);
      geminiBooks.set(t, flatOf(b.bids, b.asks));
    }
    sim.books.resume();
    await sleep(1500);
    end = await quiet();
  });

  it.each(['venue_b', 'venue_a_us'] as const)(
    '%s: = the simulator’s book and = rule 7 over the row endpoints at random moments and event times; gaps say so',
    async (exchange) => {
      const rng = new Rng('recorded', exchange);
      let compared = 0;
      let inGaps = 0;
      for (const ticker of sim.books.tickers(exchange)) {
        const coverage = (await get(`/api/${exchange}/coverage/${ticker}`)).body as {
          snapshots: { first_ts: string };
          gaps: Gap[];
        };
        const start = Date.parse(coverage.snapshots.first_ts);
        const gaps = coverage.gaps.map((g) => ({ from: Date.parse(g.from_ts), to: Date.parse(g.to_ts) }));
        expect(gaps.length).toBeGreaterThan(0);
        const events = sim.books.events(exchange, ticker).filter((e) => e.ts > start && e.ts <= end);
        const moments = new Set<number>();
        for (let i = 0; i < 10; i++) moments.add(start + Math.floor(rng.float() * (end - start)));
        for (let i = 0; i < 6 && events.length > 0; i++) {
          const e = events[Math.floor(rng.float() * events.length)];
          if (e) moments.add(e.ts).add(e.ts - 1);
        }
        for (const g of gaps)
          moments
            .add(g.from)
            .add(Math.floor((g.from + g.to) / 2))
            .add(g.to);
        for (const t of moments) {
          if (t < start || t > end) continue;
          const body = (await get(`/api/${exchange}/book/${ticker}?at=${iso(t)}`)).body as {
            status: string;
            snapshot_ts: string | null;
            bids: { price: string; quantity: string }[] | null;
            asks: { price: string; quantity: string }[] | null;
            gap: Gap | null;
          };
          if (gaps.some((g) => t >= g.from && t < g.to)) {
            expect([ticker, iso(t), body.status]).toEqual([ticker, iso(t), 'in_gap']);
            inGaps++;
            continue;
          }
          expect([ticker, iso(t), body.status]).toEqual([ticker, iso(t), 'ok']);
          const got = flatOf(
            (body.bids ?? []).map((l) => [l.price, l.quantity]),
            (body.asks ?? []).map((l) => [l.price, l.quantity]),
          );
          const truth = sim.books.bookAt(exchange, ticker, t);
          if (JSON.stringify(got) !== JSON.stringify(flatOf(truth.bids, truth.asks))) {
            const near = sim.books
              .events(exchange, ticker)
              .filter((e) => Math.abs(e.ts - t) < 50)
              .map((e) => `${e.ts}:${e.changes.map((c) => `${c.side}${c.price}/${c.delta}`).join(',')}`);
            throw new Error(
              `${ticker} at ${iso(t)} (${t}): book ${JSON.stringify(body)}\nsimulator ${JSON.stringify(flatOf(truth.bids, truth.asks))}\ngaps ${JSON.stringify(gaps)}\nevents near ${near.join(' ')}`,
            );
          }
          // The same by rule 7 over the row endpoints, from the snapshot the book endpoint used, with
          // @depthgate/client's OrderBook doing the arithmetic (independent of the service's code).
          const snapshotTs = body.snapshot_ts as string;
          const snap = (await client.snapshotPage(exchange, ticker, { start: snapshotTs, limit: 1 })).rows;
          const deltas = (await client.deltaPage(exchange, ticker, { start: snapshotTs, end: t, limit: 1_000_000 }))
            .rows;
          const book = OrderBook.fromRows(snap, deltas);
          expect(got).toEqual(
            flatOf(
              book.bids().map((l) => [l.price, l.quantity]),
              book.asks().map((l) => [l.price, l.quantity]),
            ),
          );
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(20);
      expect(inGaps).toBeGreaterThan(0);
    },
  );

  it('venue_c (stamped on receipt): = the simulator’s book at a quiet moment', async () => {
    for (const [ticker, want] of geminiBooks) {
      const body = (await get(`/api/venue_c/book/${ticker}?at=${iso(geminiQuiet)}`)).body as {
        status: string;
        bids: { price: string; quantity: string }[];
        asks: { price: string; quantity: string }[];
      };
      expect(body.status).toBe('ok');
      const got = flatOf(
        body.bids.map((l) => [l.price, l.quantity]),
        body.asks.map((l) => [l.price, l.quantity]),
      );
      expect([ticker, got]).toEqual([ticker, want]);
    }
  });

  it('rows carry the recorder’s receive clock: present, never going backwards along a ticker’s deltas', async () => {
    for (const exchange of EXCHANGE_KEYS) {
      for (const ticker of sim.books.tickers(exchange)) {
        const res = await get(`/api/${exchange}/deltas/${ticker}?fields=received_ts&format=ndjson`);
        const rows = res.text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { type?: string; received_ts: string; ts: string; sequence: number })
          .filter((r) => r.type === undefined)
          .sort((a, b) => a.sequence - b.sequence); // the order the recorder made them in
        expect(rows.length).toBeGreaterThan(0);
        let last = '';
        for (const r of rows) {
          expect(r.received_ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
          expect(r.received_ts >= last).toBe(true);
          last = r.received_ts;
        }
        // Gemini has no event times: its ts is the receive time itself.
        if (exchange === 'venue_c') expect(rows.every((r) => r.received_ts === r.ts)).toBe(true);
      }
    }
  });
});
