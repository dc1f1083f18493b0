/**
 * The fence on a deposed writer's spool (redundant recording, /work/notes/redundant-design.md §3.6). A recorder that
 * lost tickers to another recorder while rows of them waited in its spool replays that spool without the rows the new
 * owner is responsible for: of each ticker handed over at S (the `handovers` row of the term the rows were produced
 * under), the rows at or after S (or, when the ticker came back to the term later, in [S, S') — a list of intervals). A gap that starts before S ends at S (the new owner's snapshot at S closes it); one
 * that starts at or after S goes. Trades are kept whatever their ts: a trade is read once by its id however many
 * copies are stored, and the old writer's copy may be one the new owner never saw (a REST backfill).
 *
 * Works on the TabSeparated lines of any row format (1–4): every table's lines start with `exchange`, `ticker`, then
 * `ts` (a gap: `from_ts`, `to_ts`).
 *
 * A record the fence changes is no longer the block it was: if it had landed before the term died (a spool file is
 * deleted only once all its records are in, so a restart replays records that landed), a cluster's block
 * deduplication would not recognise the changed block and its kept rows would be stored twice. So on a cluster the
 * writer first asks, per ticker, whether the record's last line of that ticker is stored (one ticker's rows are on one
 * shard, and a record lands on a shard whole or not at all), and leaves those tickers out (`stored`). On one server
 * the probe by the kept rows' last line already says whether the record (one part) landed.
 */
import type { InsertTable } from '@depthgate/history-store';

/** Where a ticker was handed over from the spool's term: rows from this ms on are not its writer's any more. */
export type HandoverCut = (exchange: string, ticker: string) => number | undefined;

/** Rows with `from <= ts < until` are not the term's any more (`until` Infinity: from `from` on). */
export interface FenceInterval {
  from: number;
  until: number;
}

/**
 * The fence of one term: per (exchange, ticker), the intervals (sorted, disjoint) in which its rows are another
 * term's — from a hand-over away from the term to the hand-over back to it, if any. A bare number is one cut
 * ([cut, ∞), a HandoverCut).
 */
export type Fence = (exchange: string, ticker: string) => number | readonly FenceInterval[] | undefined;

/** Builds a Fence from a map keyed `exchange\tticker` (intervals sorted by `from` here). */
export function fenceOf(intervals: ReadonlyMap<string, readonly FenceInterval[]>): Fence {
  const sorted = new Map([...intervals].map(([k, v]) => [k, [...v].sort((a, b) => a.from - b.from)]));
  return (exchange, ticker) => sorted.get(`${exchange}\t${ticker}`);
}

/** The interval `ts` falls in, or the first one after it (undefined: none). */
function intervalAtOrAfter(fence: number | readonly FenceInterval[], ts: number): FenceInterval | undefined {
  if (typeof fence === 'number') return { from: fence, until: Infinity };
  for (const i of fence) if (i.until > ts) return i;
  return undefined;
}

export interface FencedRows {
  /** The kept lines, each ending in a newline. */
  text: string;
  rows: number;
  dropped: number;
  /** Lines of the tickers in `stored` (fenceRows): already in the table. */
  stored: number;
  /** Gaps whose end was moved back to the hand-over point. */
  clipped: number;
  /** The last kept line, split (the batch's probe key is taken from it), or undefined when nothing is kept. */
  last: string[] | undefined;
}

/**
 * The lines of `text` the term still writes. `stored`: tickers (`exchange\tticker`) whose lines of this record are in
 * the table already (the record landed on their shard before the term died: see lastLineOfEachTicker); they are left
 * out whole.
 */
export function fenceRows(
  table: InsertTable,
  text: string,
  cut: Fence,
  stored: ReadonlySet<string> = new Set(),
): FencedRows {
  const out: string[] = [];
  let dropped = 0;
  let clipped = 0;
  let storedLines = 0;
  let last: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const f = line.split('\t');
    if (stored.size > 0 && stored.has(`${f[0]}\t${f[1]}`)) {
      storedLines++;
      continue;
    }
    const fence = table === 'trades' ? undefined : cut(f[0] as string, f[1] as string);
    if (fence !== undefined) {
      const ts = Number(f[2]);
      const i = intervalAtOrAfter(fence, ts);
      if (i !== undefined && ts >= i.from) {
        dropped++;
        continue;
      }
      if (i !== undefined && table === 'gaps' && Number(f[3]) > i.from) {
        f[3] = String(i.from);
        clipped++;
      }
    }
    out.push(`${f.join('\t')}\n`);
    last = f;
  }
  return { text: out.join(''), rows: out.length, dropped, clipped, stored: storedLines, last };
}

/** The last line of each ticker (`exchange\tticker`) in `text`, split. */
export function lastLineOfEachTicker(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const f = line.split('\t');
    out.set(`${f[0]}\t${f[1]}`, f);
  }
  return out;
}
