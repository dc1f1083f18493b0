/**
 * The recorder end to end: the venue simulator's three feeds → the recorder → the real ClickHouse, checked against
 * the simulator's own books (rule 7 of the spec) and its list of emitted events.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExchangeKey } from '@depthgate/platforms';
import { Rng } from '@depthgate/service-kit';
import { startPrivateClickHouse, waitFor, type PrivateServer } from '@depthgate/test-utils';
import { rebuild, type FlatBook, type Row } from './testing/support';
import {
  createRecorderHarness,
  deltaKey,
  simBookAt,
  simBookNow,
  simChanges,
  sleep,
  type RecorderHarness,
} from './testing/harness';

jest.setTimeout(120_000);

const VENUE_CLOCK: ExchangeKey[] = ['venue_b', 'venue_a_us'];
const ALL: ExchangeKey[] = ['venue_b', 'venue_c', 'venue_a_us'];

interface Gap {
  from: number;
  to: number;
  reason: string;
}

function gapsOf(rows: readonly Row[]): Gap[] {
  return rows
    .filter((r) => r.kind === 'gap')
    .map((r) => ({ from: r.fromTs as number, to: r.toTs as number, reason: r.reason as string }));
}

function firstSnapshot(rows: readonly Row[]): number {
  return Math.min(...rows.filter((r) => r.kind === 'snapshot').map((r) => r.ts));
}

/** Rule 7 equals the simulator's book at random moments (and at event times) outside the ticker's gaps. */
async function expectRule7(h: RecorderHarness, exchange: ExchangeKey, end: number, seed: number): Promise<number> {
  const rng = new Rng(seed, 'rule-7 moments');
  let checked = 0;
  for (const ticker of h.sim.books.tickers(exchange)) {
    const rows = await h.rows(exchange, ticker);
    const gaps = gapsOf(rows);
    const start = firstSnapshot(rows);
    expect(Number.isFinite(start)).toBe(true);
    const events = h.sim.books.events(exchange, ticker).filter((e) => e.ts > start && e.ts <= end);
    const moments = new Set<number>();
    for (let i = 0; i < 12; i++) moments.add(start + Math.floor(rng.float() * (end - start)));
    for (let i = 0; i < 8 && events.length > 0; i++) {
      const e = events[Math.floor(rng.float() * events.length)];
      if (e) moments.add(e.ts).add(e.ts - 1);
    }
    for (const t of moments) {
      if (t < start || gaps.some((g) => t >= g.from && t < g.to)) continue;
      const got = rebuild(rows, t);
      const want = simBookAt(h.sim, exchange, ticker, t);
      if (JSON.stringify(sorted(got)) !== JSON.stringify(sorted(want))) {
        throw new Error(
          `${exchange} ${ticker} at ${t}: rebuilt ${JSON.stringify(sorted(got))}\n  simulator ${JSON.stringify(sorted(want))}\n  gaps ${JSON.stringify(gaps)}`,
        );
      }
      checked++;
    }
  }
  return checked;
}

function sorted(book: FlatBook | undefined): [string, string][] {
  return Object.entries(book ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
}

/**
 * Every change the simulator emitted after the ticker's first snapshot (and up to `end`) is recorded exactly once,
 * unless it falls inside a recorded gap; nothing is recorded that the simulator did not emit.
 */
async function expectEveryChangeOnce(
  h: RecorderHarness,
  exchange: ExchangeKey,
  end: number,
): Promise<{ recorded: number; inGaps: number }> {
  let recorded = 0;
  let inGaps = 0;
  for (const ticker of h.sim.books.tickers(exchange)) {
    const rows = await h.rows(exchange, ticker);
    const gaps = gapsOf(rows);
    const start = firstSnapshot(rows);
    const counts = new Map<string, number>();
    for (const r of rows) {
      if (r.kind !== 'delta') continue;
      const k = `${r.ts} ${deltaKey(r)}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    for (const c of simChanges(h.sim, exchange, ticker)) {
      if (c.ts <= start || c.ts > end) continue;
      const k = `${c.ts} ${c.key}`;
      const n = counts.get(k) ?? 0;
      if (n > 0) {
        counts.set(k, n - 1);
        recorded++;
        continue;
      }
      if (!gaps.some((g) => c.ts >= g.from && c.ts <= g.to)) {
        throw new Error(
          `${exchange} ${ticker}: change ${k} is neither recorded nor inside a gap ${JSON.stringify(gaps)}`,
        );
      }
      inGaps++;
    }
    const phantoms = [...counts].filter(([k, n]) => n > 0 && Number(k.split(' ')[0]) > start);
    expect(phantoms).toEqual([]);
  }
  return { recorded, inGaps };
}

/** No (ticker, ts, sequence) twice, and sequences increase with ts per ticker. */
async function expectNoDuplicates(h: RecorderHarness): Promise<void> {
  const deltas = await h.db.distinctKeys('deltas');
  expect(deltas.rows).toBeGreaterThan(0);
  expect(deltas.keys).toBe(deltas.rows);
  const snapshots = await h.db.distinctKeys('snapshots');
  expect(snapshots.keys).toBe(snapshots.rows);
  for (const exchange of ALL) {
    const rows = (await h.rows(exchange)).filter((r) => r.kind === 'delta');
    const byTicker = new Map<string, Row[]>();
    for (const r of rows) byTicker.set(r.ticker, [...(byTicker.get(r.ticker) ?? []), r]);
    for (const list of byTicker.values()) {
      list.sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
      for (let i = 1; i < list.length; i++) {
        expect((list[i] as Row).ts).toBeGreaterThanOrEqual((list[i - 1] as Row).ts);
      }
    }
  }
}

/** Pauses the books, lets everything in flight arrive and be written, returns the quiet moment. */
async function quietMoment(h: RecorderHarness): Promise<{ at: number; gemini: Map<string, FlatBook> }> {
  h.sim.books.pause();
  await sleep(400);
  const at = Date.now();
  const gemini = new Map(h.sim.books.tickers('venue_c').map((t) => [t, simBookNow(h.sim, 'venue_c', t)]));
  await sleep(300);
  return { at, gemini };
}

function expectGeminiAt(rows: Map<string, Row[]>, q: { at: number; gemini: Map<string, FlatBook> }): void {
  for (const [ticker, want] of q.gemini) {
    const list = rows.get(ticker) ?? [];
    const gaps = gapsOf(list);
    if (gaps.some((g) => q.at >= g.from && q.at < g.to)) continue;
    expect([ticker, sorted(rebuild(list, q.at))]).toEqual([ticker, sorted(want)]);
  }
}

async function geminiRows(h: RecorderHarness): Promise<Map<string, Row[]>> {
  const out = new Map<string, Row[]>();
  for (const r of await h.rows('venue_c')) out.set(r.ticker, [...(out.get(r.ticker) ?? []), r]);
  return out;
}

describe('recorder against the simulator and ClickHouse', () => {
  let h: RecorderHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('rebuilds every book by rule 7 as the simulator had it, through drops, disconnects and stalls on every feed', async () => {
    h = await createRecorderHarness({
      sim: { updatesPerSecond: 150, changesPerUpdate: { gemini: 3, 'venue-a-us': 2 } },
    });
    const sim = h.sim;
    await h.startInProcess();
    await h.waitLive();
    await sleep(1500);
    const q1 = await quietMoment(h);

    // A Gemini message lost while the books stand still: only the reconciliation with the REST book can see it.
    const g0 = sim.books.tickers('venue_c')[0] as string;
    sim.feedFaults.dropNext('gemini', { ticker: g0, count: 1 });
    for (let i = 0; i < 500 && sim.feedFaults.stats('gemini').pendingDrops > 0; i++) sim.books.step(1);
    expect(sim.feedFaults.stats('gemini').pendingDrops).toBe(0);
    await waitFor(async () => (await h!.rows('venue_c', g0)).some((r) => r.kind === 'gap'), {
      timeoutMs: 15_000,
      what: 'the Gemini reconciliation gap',
    });
    sim.books.resume();

    // A Kalshi message lost: its seq gap.
    const k0 = sim.books.tickers('venue_b')[0] as string;
    sim.feedFaults.dropNext('kalshi', { ticker: k0, count: 1 });
    await sleep(1000);
    // Connections cut; then stalled longer than RECORDER_STALL_TIMEOUT_MS.
    sim.feedFaults.disconnect('kalshi');
    sim.feedFaults.disconnect('venue-a-us');
    sim.feedFaults.disconnect('gemini');
    await sleep(1000);
    await h.waitLive();
    sim.feedFaults.stall('kalshi', 2500);
    sim.feedFaults.stall('gemini', 2500);
    sim.feedFaults.stall('venue-a-us', 2500);
    await sleep(3500);
    await h.waitLive();
    await sleep(1000);
    const q2 = await quietMoment(h);
    sim.books.resume();
    await sleep(1000);
    const end = await quietMoment(h);
    await h.stopInProcess();

    // Rule 7 at random moments and at event times, Kalshi and Polymarket US (venue timestamps).
    for (const [i, exchange] of VENUE_CLOCK.entries()) {
      expect(await expectRule7(h, exchange, end.at, 100 + i)).toBeGreaterThan(50);
    }
    // Gemini is stamped on receipt: compare at the quiet moments.
    const gRows = await geminiRows(h);
    for (const q of [q1, q2, end]) expectGeminiAt(gRows, q);

    // Every Kalshi and Polymarket US change is recorded once, or lies inside a recorded gap.
    const kalshi = await expectEveryChangeOnce(h, 'venue_b', end.at);
    expect(kalshi.recorded).toBeGreaterThan(100);
    expect(kalshi.inGaps).toBeGreaterThan(0);
    await expectEveryChangeOnce(h, 'venue_a_us', end.at);
    await expectNoDuplicates(h);

    // The gaps say what happened.
    const reasons = async (exchange: ExchangeKey, ticker?: string) =>
      new Set(gapsOf(await h!.rows(exchange, ticker)).map((g) => g.reason));
    expect(await reasons('venue_b', k0)).toEqual(new Set(['sequence_gap', 'disconnect', 'stall']));
    for (const t of sim.books.tickers('venue_b')) expect(await reasons('venue_b', t)).toContain('stall');
    for (const t of sim.books.tickers('venue_a_us'))
      expect(await reasons('venue_a_us', t)).toEqual(new Set(['disconnect', 'stall']));
    expect(await reasons('venue_c', g0)).toContain('reconcile_mismatch');
    // A stalled Gemini feed is seen either by the stall timeout or, first, by the reconciliation (the REST book moves
    // on while the feed is silent): either way a gap.
    for (const t of sim.books.tickers('venue_c')) {
      const found = await reasons('venue_c', t);
      expect(found).toContain('disconnect');
      expect([...found].some((r) => r === 'stall' || r === 'reconcile_mismatch')).toBe(true);
    }
    // The lost Kalshi change lies inside its gap, and after each gap comes a snapshot at its end.
    for (const exchange of ALL) {
      const rows = await h.rows(exchange);
      const snapshotTs = new Set(rows.filter((r) => r.kind === 'snapshot').map((r) => `${r.ticker}@${r.ts}`));
      for (const g of rows.filter((r) => r.kind === 'gap')) {
        expect(g.fromTs).toBeLessThanOrEqual(g.toTs as number);
        expect(snapshotTs.has(`${g.ticker}@${g.toTs}`)).toBe(true);
      }
    }
  });
});

describe('recorder durability', () => {
  let h: RecorderHarness | undefined;
  let ch: PrivateServer | undefined;
  afterEach(async () => {
    await h?.close();
    await ch?.destroy();
    h = undefined;
    ch = undefined;
  });

  it('loses and duplicates nothing while ClickHouse is stopped and restarted; the spool fills and drains', async () => {
    ch = await startPrivateClickHouse();
    h = await createRecorderHarness({
      clickhouseUrl: ch.url,
      sim: { updatesPerSecond: 300, changesPerUpdate: { gemini: 4, 'venue-a-us': 3 } },
      env: { RECORDER_BUFFER_MAX_BYTES: String(128 * 1024), RECORDER_BATCH_MAX_ROWS: '2000' },
    });
    const recorder = await h.startInProcess();
    await h.waitLive();
    await sleep(1500);
    await ch.stop();
    let spooled = 0;
    const started = Date.now();
    while (Date.now() - started < 6000) {
      spooled = Math.max(spooled, recorder.writer.spoolBytes());
      await sleep(100);
    }
    expect(spooled).toBeGreaterThan(0);
    await ch.start();
    await waitFor(() => recorder.writer.spoolEmpty, { timeoutMs: 60_000, what: 'the spool to drain' });
    const end = await quietMoment(h);
    await waitFor(() => recorder.writer.idle && recorder.sink.openRows().every((n) => n === 0), {
      timeoutMs: 30_000,
      what: 'everything written',
    });
    await h.stopInProcess();

    for (const exchange of ALL) expect(gapsOf(await h.rows(exchange))).toEqual([]);
    const kalshi = await expectEveryChangeOnce(h, 'venue_b', end.at);
    expect(kalshi.inGaps).toBe(0);
    expect((await expectEveryChangeOnce(h, 'venue_a_us', end.at)).inGaps).toBe(0);
    // Gemini: the recorded deltas, in sequence order, are the simulator's changes after the first book.
    for (const ticker of h.sim.books.tickers('venue_c')) {
      const deltas = (await h.rows('venue_c', ticker))
        .filter((r) => r.kind === 'delta')
        .sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0))
        .map(deltaKey);
      const emitted = simChanges(h.sim, 'venue_c', ticker).map((c) => c.key);
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas).toEqual(emitted.slice(emitted.length - deltas.length));
    }
    await expectNoDuplicates(h);
    for (const [i, exchange] of VENUE_CLOCK.entries()) await expectRule7(h, exchange, end.at, 200 + i);
  });

  it('spools at SIGTERM while ClickHouse is down and replays the spool at the next start, exactly once', async () => {
    ch = await startPrivateClickHouse();
    h = await createRecorderHarness({
      clickhouseUrl: ch.url,
      sim: { updatesPerSecond: 200, changesPerUpdate: { gemini: 2 } },
      env: { RECORDER_SHUTDOWN_FLUSH_MS: '500' },
    });
    await h.startInProcess();
    await h.waitLive();
    await sleep(1000);
    await ch.stop();
    await sleep(1500);
    h.sim.books.pause();
    await sleep(300);
    const pausedAt = Date.now();
    await h.stopInProcess(); // cannot reach ClickHouse: everything buffered goes to the spool
    await ch.start();
    h.sim.books.resume();
    const second = await h.startInProcess(); // replays the spool before recording
    await h.waitLive(second);
    await sleep(1000);
    const end = await quietMoment(h);
    await h.stopInProcess();

    // The first run's changes up to the pause are all there, once; the restart seam is a gap.
    await expectNoDuplicates(h);
    const kalshi = await expectEveryChangeOnce(h, 'venue_b', end.at);
    expect(kalshi.recorded).toBeGreaterThan(50);
    for (const exchange of ALL) {
      for (const ticker of h.sim.books.tickers(exchange)) {
        const gaps = gapsOf(await h.rows(exchange, ticker));
        expect(gaps.map((g) => g.reason)).toEqual(['recorder_start']);
        expect(gaps[0]?.from).toBeLessThanOrEqual(pausedAt);
      }
    }
    for (const [i, exchange] of VENUE_CLOCK.entries()) await expectRule7(h, exchange, end.at, 300 + i);
  });

  it('flushes on SIGTERM and resumes after a restart of the built entrypoint: a gap and a snapshot at the seam', async () => {
    h = await createRecorderHarness({ sim: { updatesPerSecond: 150, changesPerUpdate: { gemini: 2 } } });
    const first = await h.spawnChild();
    await sleep(2500);
    // Operations: liveness, and the metrics the issue names, per platform.
    expect(await (await fetch(`${first.url}/health`)).json()).toEqual({ status: 'ok' });
    const metrics = await (await fetch(`${first.url}/metrics`)).text();
    // The sample of `name` whose labels include every given pair (in any order); NaN when there is none.
    const value = (name: string, labels: string) => {
      const line = metrics
        .split('\n')
        .find((l) => l.startsWith(`${name}{`) && labels.split(',').every((pair) => l.includes(pair)));
      return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? NaN);
    };
    for (const exchange of ALL) {
      expect(value('recorder_messages_total', `exchange="${exchange}"`)).toBeGreaterThan(0);
      expect(value('recorder_rows_total', `exchange="${exchange}",table="deltas"`)).toBeGreaterThan(0);
      expect(value('recorder_lag_seconds_count', `exchange="${exchange}"`)).toBeGreaterThan(0);
      expect(value('recorder_spool_bytes', `exchange="${exchange}"`)).toBe(0);
      expect(value('recorder_buffer_rows', `exchange="${exchange}"`)).toBeGreaterThanOrEqual(0);
      expect(value('recorder_gaps_total', `exchange="${exchange}",reason="disconnect"`)).toBe(0);
    }
    expect(await h.terminateChild(first)).toBe(0);
    const before = new Map<string, number>();
    for (const exchange of ALL) {
      for (const r of await h.rows(exchange))
        before.set(`${exchange} ${r.ticker}`, Math.max(before.get(`${exchange} ${r.ticker}`) ?? -1, r.ts));
    }
    await sleep(800);
    const second = await h.spawnChild();
    await sleep(2500);
    const end = await quietMoment(h);
    expect(await h.terminateChild(second)).toBe(0);

    await expectNoDuplicates(h);
    for (const exchange of ALL) {
      for (const ticker of h.sim.books.tickers(exchange)) {
        const rows = await h.rows(exchange, ticker);
        const gaps = gapsOf(rows);
        expect(gaps.map((g) => g.reason)).toEqual(['recorder_start']);
        const gap = gaps[0] as Gap;
        // From where the first run's rows end to the first snapshot of the second run.
        expect(gap.from).toBe(before.get(`${exchange} ${ticker}`));
        expect(rows.some((r) => r.kind === 'snapshot' && r.ts === gap.to)).toBe(true);
        expect(rows.some((r) => r.kind === 'delta' && r.ts > gap.to)).toBe(true);
      }
    }
    const kalshi = await expectEveryChangeOnce(h, 'venue_b', end.at);
    expect(kalshi.inGaps).toBeGreaterThan(0);
    await expectEveryChangeOnce(h, 'venue_a_us', end.at);
    for (const [i, exchange] of VENUE_CLOCK.entries()) await expectRule7(h, exchange, end.at, 400 + i);
  });
});

describe('recorder ticker selection', () => {
  let h: RecorderHarness | undefined;
  let listing: Server | undefined;
  afterEach(async () => {
    await h?.close();
    await new Promise((r) => listing?.close(r));
    h = undefined;
    listing = undefined;
  });

  it('records configured tickers, listed ones by prefix and series up to the cap, and follows the listing', async () => {
    h = await createRecorderHarness({ sim: { updatesPerSecond: 150 } });
    // Kalshi's REST host as the recorder sees it: the simulator's, with markets we "close" left out of the listing.
    const upstream = h.env.UPSTREAM_VENUE_B_URL as string;
    const closed = new Set<string>();
    listing = createServer((req, res) => {
      void (async () => {
        const r = await fetch(`${upstream}${(req.url ?? '/').replace(/^\/trade-api\/v2/, '')}`);
        const body = (await r.json()) as { markets?: { ticker: string }[] };
        if (body.markets) body.markets = body.markets.filter((m) => !closed.has(m.ticker));
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      })().catch(() => res.writeHead(502).end());
    });
    await new Promise<void>((r) => listing!.listen(0, '127.0.0.1', r));
    const port = (listing.address() as AddressInfo).port;
    const recorder = await h.startInProcess({
      RECORDER_EXCHANGES: 'venue_b',
      UPSTREAM_VENUE_B_URL: `http://127.0.0.1:${port}/trade-api/v2`,
      RECORDER_VENUE_B_TICKERS: 'KXHIGHNY-26MAR07-T58',
      RECORDER_VENUE_B_PREFIXES: 'kxbtcd', // case-insensitive
      RECORDER_VENUE_B_SERIES: 'KXFED',
      RECORDER_MAX_TICKERS: '6',
      RECORDER_DISCOVERY_INTERVAL_MS: '300',
    });
    const recorded = () => [...(recorder.venues.get('venue_b')?.recorders.keys() ?? [])].sort();
    // Configured first, then the listing in order (4 KXBTCD, then KXFED): the cap leaves KXFED-26MAR-T4.50 out, and
    // KXHIGHNY-26MAR07-B56.5 is selected by nothing.
    const first = [
      'KXBTCD-26MAR07-T100000',
      'KXBTCD-26MAR07-T102500',
      'KXBTCD-26MAR07-T105000',
      'KXBTCD-26MAR07-T97500',
      'KXFED-26MAR-T4.25',
      'KXHIGHNY-26MAR07-T58',
    ];
    // (A ticker joins once its resume point is read from ClickHouse.)
    await waitFor(() => recorded().length >= first.length, { what: 'the first selection' });
    expect(recorded()).toEqual(first);
    expect(h.sim.books.tickers('venue_b')).toEqual(expect.arrayContaining([...first, 'KXFED-26MAR-T4.50']));
    await h.waitLive();
    await sleep(500);
    const tickersWithRows = async () => new Set((await h!.rows('venue_b')).map((r) => r.ticker));
    await waitFor(async () => (await tickersWithRows()).size === first.length, { what: 'rows for every ticker' });
    expect([...(await tickersWithRows())].sort()).toEqual(first);

    // A market leaves the listing (closed): it is dropped, and the freed place goes to the next listed market.
    closed.add('KXBTCD-26MAR07-T100000');
    await waitFor(() => !recorded().includes('KXBTCD-26MAR07-T100000'), { what: 'the closed market dropped' });
    // Dropping is immediate; the newcomer joins once its resume point is read from ClickHouse.
    await waitFor(() => recorded().includes('KXFED-26MAR-T4.50'), { what: 'the next listed market admitted' });
    await waitFor(async () => (await tickersWithRows()).has('KXFED-26MAR-T4.50'), { what: 'the newcomer recorded' });

    // It is listed again: it comes back after a gap `resubscribe`, and the cap pushes the last listed one out.
    closed.clear();
    await waitFor(() => JSON.stringify(recorded()) === JSON.stringify(first), { what: 'the first selection again' });
    await waitFor(
      async () => gapsOf(await h!.rows('venue_b', 'KXBTCD-26MAR07-T100000')).some((g) => g.reason === 'resubscribe'),
      { what: 'the resubscribe gap' },
    );
    await h.stopInProcess();
  });
});
