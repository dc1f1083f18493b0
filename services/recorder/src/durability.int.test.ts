/**
 * The recorder's durability end to end: ClickHouse stopped and restarted under it (the spool fills and drains),
 * SIGTERM while ClickHouse is away (the spool replays at the next start), a restart of the built entrypoint (a gap
 * and a snapshot at the seam). The simulator's books are the truth, as in recorder.int.test.ts.
 */
import { startPrivateClickHouse, waitFor, type PrivateServer } from '@depthgate/test-utils';
import { createRecorderHarness, deltaKey, simChanges, sleep, type RecorderHarness } from './testing/harness';
import {
  ALL,
  VENUE_CLOCK,
  expectEveryChangeOnce,
  expectEveryTradeOnce,
  expectNoDuplicates,
  expectRule7,
  expectTradesProducedOnce,
  gapsOf,
  quietMoment,
  tradesAuditedPast,
  type Gap,
} from './testing/checks';

// The first two tests took 52-68 s each on a shared machine (a private ClickHouse started, stopped and started, a
// spool drained: their own waits allow up to 60 s and 30 s more); 120 s left a loaded machine little room.
jest.setTimeout(300_000);

/**
 * The tests below count every gap, and none is about a stall or a divergence: those detectors get far longer than
 * the tests' steps (FAST_ENV's 1.5 s and 800 ms), so that a loaded machine — the simulator's process held off the
 * CPU, a recorder behind the REST books — does not write a `stall` or `divergence` gap the counts would find.
 */
const CALM = { RECORDER_STALL_TIMEOUT_MS: '15000', RECORDER_RECONCILE_GRACE_MS: '15000' };

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
      env: { ...CALM, RECORDER_BUFFER_MAX_BYTES: String(128 * 1024), RECORDER_BATCH_MAX_ROWS: '2000' },
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
    await tradesAuditedPast(recorder, end.at);
    await waitFor(() => recorder.writer.idle && recorder.sink.openRows().every((n) => n === 0), {
      timeoutMs: 30_000,
      what: 'everything written',
    });
    await h.stopInProcess();

    for (const exchange of ALL) {
      expect(gapsOf(await h.rows(exchange))).toEqual([]);
      expect(gapsOf(await h.rows(exchange), 'trades')).toEqual([]);
      // The trades went through the spool too, each stored once.
      expect((await expectEveryTradeOnce(h, exchange, end.at, { gaps: false })).stored).toBeGreaterThan(0);
    }
    await expectTradesProducedOnce(h, recorder);
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
      env: { ...CALM, RECORDER_SHUTDOWN_FLUSH_MS: '500' },
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
    await tradesAuditedPast(second, end.at);
    await h.stopInProcess();

    // The first run's changes up to the pause are all there, once; the restart seam is a gap.
    await expectNoDuplicates(h);
    // Its trades too; those of the seam are read back where the venue keeps them, else lie in a trades gap.
    for (const exchange of ['venue_b', 'venue_c'] as const) {
      expect((await expectEveryTradeOnce(h, exchange, end.at, { gaps: false })).stored).toBeGreaterThan(0);
      expect(gapsOf(await h.rows(exchange), 'trades')).toEqual([]);
    }
    await expectEveryTradeOnce(h, 'venue_a_us', end.at, { gaps: true });
    for (const ticker of h.sim.books.tickers('venue_a_us')) {
      const rows = await h.rows('venue_a_us', ticker);
      const [seam] = gapsOf(rows) as [Gap];
      // From RECORDER_SNAPSHOT_QUIET_MS (500 here) before the stored trades' end (the first run's last trade; a
      // venue's trades may arrive that far out of time order), at most 60 s before the last stored row and not before
      // that margin before the first (the ticker's recording began there).
      const tradesEnd = Math.max(-1, ...rows.filter((r) => r.kind === 'trade' && r.ts <= pausedAt).map((r) => r.ts));
      const lastStored = Math.max(seam.from, tradesEnd);
      const firstStored = Math.min(...rows.map((r) => (r.kind === 'gap' ? (r.fromTs as number) : r.ts)));
      expect(gapsOf(rows, 'trades')).toEqual([
        { from: Math.max(tradesEnd - 500, lastStored - 60_000, firstStored - 500), to: seam.to, reason: 'no_backfill' },
      ]);
    }
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

  it('a SIGTERM while a venue still discovers stops the recorder, flushing what the others recorded (exit 0)', async () => {
    h = await createRecorderHarness({ sim: { updatesPerSecond: 150 } });
    // Kalshi's listing never answers (within a minute's REST timeout): its venue is still discovering.
    h.sim.faults.inject({ platform: 'venue-b', route: '/trade-api/v2/markets', kind: 'hang' });
    const child = await h.spawnChild({ RECORDER_REST_TIMEOUT_MS: '60000' }, { ready: false });
    const gemini = h.sim.books.tickers('venue_c');
    await waitFor(async () => (await h?.rows('venue_c'))?.some((r) => r.kind === 'delta') ?? false, {
      timeoutMs: 30_000,
      what: 'Gemini rows in ClickHouse while Kalshi still discovers',
    });
    expect(gemini.length).toBeGreaterThan(0);
    const lines = h.logs.lines.length;
    expect(await h.terminateChild(child)).toBe(0);
    // The recorder's own stop ran (the feeds closed, the rows flushed), not just the process's exit.
    const after = h.logs.lines.slice(lines).join('\n');
    expect(after).toContain('recorder stopping: closing the feeds, flushing buffered rows');
    expect(after).toContain('recorder stopped');
    expect(await h.rows('venue_b')).toEqual([]);
  });

  it('flushes on SIGTERM and resumes after a restart of the built entrypoint: a gap and a snapshot at the seam', async () => {
    h = await createRecorderHarness({ sim: { updatesPerSecond: 150, changesPerUpdate: { gemini: 2 } }, env: CALM });
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
      expect(value('recorder_rows_total', `exchange="${exchange}",table="trades"`)).toBeGreaterThan(0);
      expect(value('recorder_rows_produced_total', `exchange="${exchange}",table="trades"`)).toBeGreaterThan(0);
      expect(value('recorder_trade_gaps_total', `exchange="${exchange}",reason="no_backfill"`)).toBe(0);
      expect(value('recorder_trades_deduplicated_total', `exchange="${exchange}"`)).toBeGreaterThanOrEqual(0);
      expect(value('recorder_trades_backfilled_total', `exchange="${exchange}"`)).toBeGreaterThanOrEqual(0);
      expect(value('recorder_lag_seconds_count', `exchange="${exchange}"`)).toBeGreaterThan(0);
      expect(value('recorder_spool_bytes', `exchange="${exchange}"`)).toBe(0);
      expect(value('recorder_buffer_rows', `exchange="${exchange}"`)).toBeGreaterThanOrEqual(0);
      expect(value('recorder_gaps_total', `exchange="${exchange}",reason="disconnect"`)).toBe(0);
    }
    // The writer's memory, against RECORDER_BUFFER_MAX_BYTES (64 MiB by default): far below it here.
    const heldBytes = value('recorder_buffer_bytes', 'service=');
    expect(heldBytes).toBeGreaterThanOrEqual(0);
    expect(heldBytes).toBeLessThan(64 * 1024 * 1024);
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
    // The trades of the seam: read back from REST by Kalshi and Gemini, a trades gap on Polymarket US.
    for (const exchange of ['venue_b', 'venue_c'] as const) {
      await expectEveryTradeOnce(h, exchange, end.at, { gaps: false });
    }
    expect((await expectEveryTradeOnce(h, 'venue_a_us', end.at, { gaps: true })).stored).toBeGreaterThan(0);
  });
});
