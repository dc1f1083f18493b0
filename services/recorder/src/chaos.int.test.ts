/**
 * Chaos (issue 27, item 2): recorders killed, restarted and cut from ClickHouse while the simulator's five feeds run;
 * at the end no gap attributable to the recorders (no venue fault is injected), no duplicated row through the history
 * API, every change and trade once, rule-7 books equal to the simulator's at random moments and around every hand-over
 * (src/testing/chaos.ts).
 *
 * - The short case (default suite, about 3 minutes): two recorders; one SIGKILL and restart, one rolling restart
 *   (SIGTERM one, wait for its /ready, then the other), one recorder cut from ClickHouse until its spool is full,
 *   then restored until its spool has replayed.
 * - The long case, opt-in: `CHAOS_MINUTES=30` (`./dev test --chaos`): SIGKILL one recorder every 2 minutes
 *   (alternating) and start it again, one rolling restart, one ClickHouse cut with the spool filled and replayed.
 * - The harness itself, on one recorder without Redis (today's solo recorder): a SIGKILL leaves exactly the
 *   `recorder_start` gaps it is documented to leave, and the checks say so.
 */
import { sleep } from './testing/harness';
import { Chaos, chaosSummary, type ChaosReport } from './testing/chaos';

const LONG_MINUTES = Number(process.env.CHAOS_MINUTES ?? 0);
jest.setTimeout(Math.max(15, LONG_MINUTES + 15) * 60_000);

/** The report's gap counts with the allowed `stream:reason`s left out. */
function unexpected(report: ChaosReport, allowed: readonly string[] = []): Record<string, number> {
  return Object.fromEntries(Object.entries(report.recorderGaps).filter(([k]) => !allowed.includes(k)));
}

/** What every chaos run must end with: no recorder gap, no duplicate, every check passed. */
function expectClean(report: ChaosReport): void {
  expect({
    gaps: report.recorderGaps,
    duplicates: report.duplicates,
    failures: report.failures,
  }).toEqual({ gaps: {}, duplicates: { deltas: 0, trades: 0, snapshots: 0 }, failures: [] });
  expect(report.readRows.deltas).toBeGreaterThan(0);
  expect(report.readRows.snapshots).toBeGreaterThan(0);
  expect(report.rule7Moments).toBeGreaterThan(0);
}

describe('chaos', () => {
  let chaos: Chaos | undefined;
  afterEach(async () => {
    await chaos?.close(process.env.CHAOS_KEEP_LOGS === '1');
    chaos = undefined;
  });

  it('the harness on one recorder (solo, no Redis): a SIGKILL leaves recorder_start gaps and nothing else, no duplicate', async () => {
    chaos = await Chaos.create({ recorders: 1 });
    expect(chaos.redisPrefix).toBeUndefined();
    await chaos.startAll();
    await sleep(8000);
    await chaos.killAndRestart(0, 2000);
    await sleep(8000);
    const end = await chaos.finish();
    const report = await chaos.check(end);
    process.stdout.write(`chaos (one recorder): ${chaosSummary(report)}\n`);
    // Every ticker of the five exchanges had its book gap at the restart; trades gaps only where the venue cannot give
    // the window's trades back.
    const tickers = chaos.h.sim.books.tickers;
    const all = ['venue_b', 'venue_c', 'venue_a_us', 'venue_a_clob', 'venue_d'] as const;
    expect(report.recorderGaps['book:recorder_start']).toBe(all.reduce((n, e) => n + tickers(e).length, 0));
    expect(unexpected(report, ['book:recorder_start', 'trades:no_backfill', 'trades:backfill_incomplete'])).toEqual({});
    expect(report.duplicates).toEqual({ deltas: 0, trades: 0, snapshots: 0 });
    expect(report.failures).toEqual([]);
    expect(report.handovers === undefined || report.handovers.rows === 0).toBe(true);
    expect(report.rule7Moments).toBeGreaterThan(100);
  });

  it('two recorders, short: a SIGKILL, a rolling restart and a ClickHouse cut that fills a spool leave no gap and no duplicate', async () => {
    chaos = await Chaos.create({ recorders: 2 });
    await chaos.startAll();
    await sleep(15_000);
    await chaos.killAndRestart(0, 3000);
    await sleep(15_000);
    await chaos.rollingRestart();
    await sleep(15_000);
    const peak = await chaos.cutUntilSpoolFull(await chaos.owner());
    expect(peak).toBeGreaterThan(0);
    await sleep(15_000);
    const end = await chaos.finish();
    const report = await chaos.check(end);
    process.stdout.write(`chaos (two recorders, short): ${chaosSummary(report)}\n`);
    expectClean(report);
    // Every kill, restart and release moved tickers: the hand-overs were checked.
    expect(report.handovers?.rows ?? 0).toBeGreaterThan(0);
  });

  (LONG_MINUTES > 0 ? it : it.skip)(
    `two recorders, CHAOS_MINUTES (${LONG_MINUTES || 'unset'}): SIGKILL every 2 minutes, a rolling restart, a spool filled and replayed`,
    async () => {
      const runMs = LONG_MINUTES * 60_000;
      chaos = await Chaos.create({
        recorders: 2,
        // The simulator keeps every event of the run: the checks compare the whole of it.
        sim: { historyRetentionMs: runMs + 10 * 60_000 },
      });
      await chaos.startAll();
      const started = Date.now();
      const rolling = started + runMs / 3;
      const cut = started + (2 * runMs) / 3;
      let rolled = false;
      let spooled = false;
      let kills = 0;
      let nextKill = started + 120_000;
      while (Date.now() < started + runMs) {
        if (!rolled && Date.now() >= rolling) {
          await chaos.rollingRestart();
          rolled = true;
        } else if (!spooled && Date.now() >= cut) {
          expect(await chaos.cutUntilSpoolFull(await chaos.owner())).toBeGreaterThan(0);
          spooled = true;
        } else if (Date.now() >= nextKill) {
          await chaos.killAndRestart(kills % 2, 3000);
          kills++;
          nextKill += 120_000;
        }
        await sleep(1000);
      }
      expect({ rolled, spooled, kills: kills >= Math.floor(LONG_MINUTES / 2) - 1 }).toEqual({
        rolled: true,
        spooled: true,
        kills: true,
      });
      const end = await chaos.finish();
      const report = await chaos.check(end, { moments: 1000 });
      process.stdout.write(`chaos (two recorders, ${LONG_MINUTES} minutes): ${chaosSummary(report)}\n`);
      expectClean(report);
      expect(report.handovers?.rows ?? 0).toBeGreaterThan(0);
    },
  );
});
