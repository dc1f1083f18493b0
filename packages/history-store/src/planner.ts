/**
 * Walks a time range in ascending windows so that a limited query reads about as many rows as it returns: the
 * history's reads (services/history reader.ts) and the replay's pages (services/replay source.ts).
 *
 * ClickHouse 18.16 cannot stop reading early for `ORDER BY ts LIMIT n` (no read-in-order optimisation): it reads
 * every row of the range, sorts, then cuts. Over months of one ticker that is millions of rows for a 1,000-row
 * answer. So the range is cut into windows sized from the ticker's row density (from the catalogue): the first is
 * expected to hold `limit` rows with a margin, and each next one grows geometrically (at least ×2) from the density
 * observed so far. Windows are disjoint and ascending, so their outputs concatenate in global order, and a book
 * (rows of one `ts`) never straddles two windows. The walk stops as soon as `limit` rows are out; the last window
 * always runs to the end of the requested range, so rows written after the catalogue was read are not missed.
 *
 * A bulk stream walks an unbounded range with a cap of `windowRows` rows per query (each query's result is held in
 * memory whole, docs/history.md, "Bulk streams"): there is no cap on the number of windows, each is sized from the
 * density seen so far (`observe`) to hold `margin` of its cap rather than grown, and windows are planned before the
 * results of those ahead of them (a stream reads two at once). A window its cap cut short is continued by the
 * stream itself, over the rest of that window's range.
 */
import type { TimeWindow } from './queries/conditions';

export interface KindSpan {
  firstTs: number;
  lastTs: number;
  rows: number;
}

export interface PlanInput {
  /** Inclusive lower bound of the caller's range (already clamped to their window). */
  from: number;
  /** Inclusive upper bound, or null for "up to the newest row". */
  to: number | null;
  /** What the catalogue knows of this ticker's rows of this kind (may be a few seconds stale). */
  span: KindSpan;
  /** Rows wanted in all (Infinity: the whole range). */
  limit: number;
  /** Rows one window is sized for at most (default: no cap, windows are sized for what is still wanted). */
  windowRows?: number;
  /** After this many windows the next one takes the whole rest of the range (default 12; Infinity: never). */
  maxWindows?: number;
  /** Rows a window is expected to hold, relative to those it is sized for (default 1.25: a few more). */
  margin?: number;
}

/** The span of two kinds read together (a ticker's deltas and trades, interleaved), from each one's (either absent). */
export function combinedSpan(a: KindSpan | undefined, b: KindSpan | undefined): KindSpan | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return { firstTs: Math.min(a.firstTs, b.firstTs), lastTs: Math.max(a.lastTs, b.lastTs), rows: a.rows + b.rows };
}

/** Rows of a kind the catalogue's span expects in [from, to] (to null: its newest), at the span's average density. */
export function expectedRows(span: KindSpan, from: number, to: number | null): number {
  const first = Math.max(from, span.firstTs);
  const last = to === null ? span.lastTs : Math.min(to, span.lastTs);
  if (last < first) return 0;
  return (span.rows * (last - first + 1)) / Math.max(1, span.lastTs - span.firstTs + 1);
}

/** Expected rows in the first window, relative to the limit. */
const MARGIN = 1.25;
const MIN_SPAN_MS = 1000;
const MIN_GROWTH = 2;
const MAX_GROWTH = 64;
/** After this many windows the next one takes the whole rest of the range. */
const MAX_WINDOWS = 12;

export class WindowPlanner {
  /** Rows still wanted. */
  remaining: number;
  windows = 0;
  private cursor: number;
  private spanMs: number;
  private done = false;
  private last: TimeWindow | undefined;
  /** Beyond this the catalogue knows no rows; the window reaching it is the last. */
  private readonly horizon: number;
  private windowRows: number;
  private readonly maxWindows: number;
  private readonly margin: number;

  constructor(private readonly input: PlanInput) {
    this.margin = input.margin ?? MARGIN;
    this.remaining = input.limit;
    this.windowRows = input.windowRows ?? Infinity;
    this.maxWindows = input.maxWindows ?? MAX_WINDOWS;
    this.cursor = Math.max(input.from, input.span.firstTs);
    this.horizon = input.to === null ? input.span.lastTs : Math.min(input.to, input.span.lastTs);
    const density = input.span.rows / Math.max(1, input.span.lastTs - input.span.firstTs + 1);
    this.spanMs = this.spanFor(density);
    if (input.to !== null && this.cursor > input.to) this.done = true;
  }

  /** Rows the next window should hold. */
  private get target(): number {
    return Math.min(this.remaining, this.windowRows);
  }

  private spanFor(density: number): number {
    return Math.max(MIN_SPAN_MS, Math.ceil((this.target * this.margin) / Math.max(density, 1e-12)));
  }

  /** The next window to query, or null when the answer is complete. */
  next(): TimeWindow | null {
    if (this.done) return null;
    const end = this.cursor + this.spanMs;
    this.windows++;
    if (end > this.horizon || this.windows >= this.maxWindows || !Number.isSafeInteger(end)) {
      this.last = { from: this.cursor, to: this.input.to, toInclusive: true };
      this.done = true;
    } else {
      this.last = { from: this.cursor, to: end, toInclusive: false };
      this.cursor = end;
    }
    return this.last;
  }

  /**
   * Plans again from `from` (a bulk stream's last window, cut by its row cap): the rest of the range is walked in
   * windows sized from the density seen (`observe`), not read as one query that would sort all of it again each time.
   */
  resume(from: number): void {
    this.cursor = from;
    this.done = this.input.to !== null && from > this.input.to;
  }

  /** Changes the cap of the windows to come (a stream starts with small windows, so its first rows go out soon). */
  capWindowRows(rows: number): void {
    // The span planned so far was sized for the old cap: scaled with it.
    if (Number.isFinite(this.windowRows) && rows !== this.windowRows)
      this.spanMs = Math.max(MIN_SPAN_MS, Math.ceil((this.spanMs * rows) / this.windowRows));
    this.windowRows = rows;
  }

  /** Reports how many rows the last window returned (read to its end). */
  record(rows: number): void {
    this.remaining -= rows;
    if (this.remaining <= 0) {
      this.done = true;
      return;
    }
    if (this.done) return;
    // Grow from the density this window showed (rows per ms), at least ×2, at most ×64.
    const needed = rows > 0 ? Math.ceil((this.target * this.margin * this.spanMs) / rows) : Infinity;
    this.spanMs = Math.min(this.spanMs * MAX_GROWTH, Math.max(this.spanMs * MIN_GROWTH, needed));
  }

  /**
   * A bulk stream's window held `rows` rows over `ms` milliseconds: the windows still to be planned are sized from
   * that density, for their row cap (a stream plans its windows ahead of their results, and sizes them for a number
   * of rows rather than growing them to find the rows; one that held none is followed by one 64 times longer).
   */
  observe(rows: number, ms: number): void {
    this.spanMs = rows > 0 ? this.spanFor(rows / Math.max(1, ms)) : this.spanMs * MAX_GROWTH;
  }
}
