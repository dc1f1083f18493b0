import type { TimeWindow } from './queries/conditions';
import { expectedRows, WindowPlanner, type PlanInput } from './planner';

/** Runs a plan against rows at the given timestamps (sorted), as the service would. */
function simulate(input: PlanInput, rows: number[]) {
  const planner = new WindowPlanner(input);
  const windows: TimeWindow[] = [];
  const out: number[] = [];
  for (let w = planner.next(); w !== null; w = planner.next()) {
    windows.push(w);
    const inWindow = rows.filter((ts) => ts >= w.from && (w.to === null || (w.toInclusive ? ts <= w.to : ts < w.to)));
    const taken = inWindow.slice(0, planner.remaining);
    out.push(...taken);
    planner.record(taken.length);
  }
  return { windows, out };
}

function expected(rows: number[], from: number, to: number | null, limit: number) {
  return rows.filter((ts) => ts >= from && (to === null || ts <= to)).slice(0, limit);
}

describe('WindowPlanner', () => {
  const uniform = Array.from({ length: 100_000 }, (_, i) => 1_000_000 + i * 100);
  const span = { firstTs: uniform[0] as number, lastTs: uniform[uniform.length - 1] as number, rows: uniform.length };

  it('answers a limited query from uniform data in one window', () => {
    const { windows, out } = simulate({ from: 0, to: null, span, limit: 1000 }, uniform);
    expect(out).toEqual(expected(uniform, 0, null, 1000));
    expect(windows.length).toBe(1);
    // Sized for the limit plus 25 %: about 1250 rows of one every 100 ms.
    expect(windows[0]).toMatchObject({ from: span.firstTs, toInclusive: false });
    expect(((windows[0] as TimeWindow).to as number) - span.firstTs).toBeGreaterThanOrEqual(124_000);
    expect(((windows[0] as TimeWindow).to as number) - span.firstTs).toBeLessThanOrEqual(126_000);
  });

  it('windows are disjoint, ascending and cover the range: the result equals a global sort + limit', () => {
    // Bursty data: dense at the start, a long gap, sparse at the end, and rows after the catalogue's lastTs.
    const rows = [
      ...Array.from({ length: 5000 }, (_, i) => 2_000_000 + i),
      ...Array.from({ length: 50 }, (_, i) => 900_000_000 + i * 1_000_000),
      ...Array.from({ length: 10 }, (_, i) => 2_000_000_000 + i),
    ];
    const stale = { firstTs: 2_000_000, lastTs: 949_000_000, rows: 5050 };
    for (const limit of [1, 7, 1000, 5000, 5001, 5055, 100_000]) {
      for (const [from, to] of [
        [0, null],
        [2_000_500, null],
        [0, 950_000_000],
        [2_000_000_000, 2_000_000_005],
        [3_000_000_000, null],
      ] as [number, number | null][]) {
        const { windows, out } = simulate({ from, to, span: stale, limit }, rows);
        expect(out).toEqual(expected(rows, from, to, limit));
        expect(windows.length).toBeLessThanOrEqual(12);
        for (let i = 1; i < windows.length; i++) {
          const prev = windows[i - 1] as TimeWindow;
          expect(prev.toInclusive).toBe(false);
          expect((windows[i] as TimeWindow).from).toBe(prev.to);
        }
        const last = windows[windows.length - 1];
        if (last && out.length < limit) expect(last).toMatchObject({ to, toInclusive: true });
      }
    }
  });

  it('queries nothing when the range ends before the first row', () => {
    const { windows } = simulate({ from: 0, to: span.firstTs - 1, span, limit: 10 }, uniform);
    expect(windows).toEqual([]);
  });

  it('still looks after the catalogue’s last row (the catalogue may be a few seconds old)', () => {
    const { windows } = simulate({ from: span.lastTs + 1, to: null, span, limit: 10 }, uniform);
    expect(windows).toEqual([{ from: span.lastTs + 1, to: null, toInclusive: true }]);
  });

  it('grows windows geometrically through sparse stretches', () => {
    const rows = [1_000_000, ...Array.from({ length: 1000 }, (_, i) => 10_000_000_000 + i)];
    const { windows, out } = simulate(
      { from: 0, to: null, span: { firstTs: 1_000_000, lastTs: 10_000_000_999, rows: 1001 }, limit: 500 },
      rows,
    );
    expect(out).toEqual(expected(rows, 0, null, 500));
    expect(windows.length).toBeLessThanOrEqual(12);
  });
});

describe('WindowPlanner for bulk streams (windowRows, observe)', () => {
  const rows = [
    ...Array.from({ length: 30_000 }, (_, i) => 1_000_000 + i * 10),
    ...Array.from({ length: 5000 }, () => 1_400_000), // 5,000 rows at one ms
    ...Array.from({ length: 2000 }, (_, i) => 9_000_000 + i * 1000),
  ];
  const within = (ts: number, w: TimeWindow) =>
    ts >= w.from && (w.to === null || (w.toInclusive ? ts <= w.to : ts < w.to));

  /**
   * Reads as a stream does: windows planned `ahead` at a time, before the results of those before them; at most
   * `windowRows` rows per query; a window its cap cut is continued over the rest of its range (leaving out the rows
   * at its last ts already read) before the next window's rows.
   */
  function stream(windowRows: number, ahead: number, data = rows) {
    const planner = new WindowPlanner({
      from: 0,
      to: null,
      span: { firstTs: data[0] as number, lastTs: data[data.length - 1] as number, rows: data.length },
      limit: Infinity,
      windowRows,
      maxWindows: Infinity,
      margin: 0.8,
    });
    const out: number[] = [];
    let queries = 0;
    let cut = 0;
    const planned: TimeWindow[] = [];
    const plan = () => {
      for (let w: TimeWindow | null; planned.length < ahead && (w = planner.next()) !== null;) planned.push(w);
    };
    plan();
    for (let w = planned.shift(); w !== undefined; w = planned.shift()) {
      let from = w.from;
      let skip = 0;
      for (;;) {
        queries++;
        const fresh = data.filter((ts) => ts >= from && within(ts, w)).slice(skip);
        const taken = fresh.slice(0, windowRows);
        out.push(...taken);
        if (fresh.length <= windowRows) {
          if (w.to !== null) planner.observe(taken.length, w.to - w.from);
          break;
        }
        cut++;
        const last = taken[taken.length - 1] as number;
        skip = taken.filter((ts) => ts === last).length + (last === from ? skip : 0);
        planner.observe(taken.length, last - w.from + 1);
        from = last;
      }
      plan();
    }
    return { out, queries, cut };
  }

  it('reads every row once, in order, in windows of at most windowRows rows, without a cap on their number', () => {
    for (const windowRows of [1000, 4096, 7000])
      for (const ahead of [1, 2, 3]) {
        const { out, queries } = stream(windowRows, ahead);
        expect(out).toEqual(rows);
        expect(queries).toBeGreaterThanOrEqual(Math.ceil(rows.length / windowRows));
        expect(queries).toBeLessThan((rows.length / windowRows) * 2 + 40);
      }
  });

  it('sizes windows to hold less than their cap where the rows are even, so the cap seldom cuts one', () => {
    // Even rows, with a jitter of ±40 % in the gaps between them.
    let ts = 1_000_000;
    const even = Array.from({ length: 50_000 }, (_, i) => (ts += 6 + ((i * 7919) % 9)));
    const { out, queries, cut } = stream(1000, 2, even);
    expect(out).toEqual(even);
    expect(queries).toBeLessThan((even.length / 1000) * 1.5);
    expect(cut / queries).toBeLessThan(0.1);
  });
});

describe('expectedRows', () => {
  const span = { firstTs: 1_000, lastTs: 100_999, rows: 10_000 };
  it('is the span’s rows over the part of the range it covers, at its average density', () => {
    expect(expectedRows(span, 0, null)).toBe(10_000);
    expect(expectedRows(span, 1_000, 50_999)).toBe(5_000);
    expect(expectedRows(span, 90_000, 200_000)).toBeCloseTo(1_100, 6);
  });
  it('is 0 for a range outside the span', () => {
    expect(expectedRows(span, 200_000, null)).toBe(0);
    expect(expectedRows(span, 0, 999)).toBe(0);
  });
});

describe('WindowPlanner.resume', () => {
  it('plans the rest of the range again from where a cut window stopped, sized from the density observed', () => {
    const planner = new WindowPlanner({
      from: 0,
      to: null,
      span: { firstTs: 0, lastTs: 1_000_000_000, rows: 100 },
      limit: Infinity,
      windowRows: 1_000,
      maxWindows: Infinity,
      margin: 0.8,
    });
    // At the average density the whole range is one window.
    expect(planner.next()).toEqual({ from: 0, to: null, toInclusive: true });
    expect(planner.next()).toBeNull();
    // Its cap cut it after 1,000 rows in its first 100 s: the rest comes in windows sized for that density (80 % of
    // the cap each).
    planner.observe(1_000, 100_000);
    planner.resume(100_000);
    expect(planner.next()).toEqual({ from: 100_000, to: 180_000, toInclusive: false });
    expect(planner.next()).toEqual({ from: 180_000, to: 260_000, toInclusive: false });
  });
});
