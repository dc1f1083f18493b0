/**
 * The book at a moment, rebuilt by the spec's rule 7 from one read of @depthgate/history-store's bookQuery: the
 * snapshots and deltas of a short stretch before T (row kinds 1 and 2) and the gaps around T (3, 4), in RowBinary
 * (BOOK_LAYOUT). The conventions are the recorder's and the generator's (docs/history-internals.md, "Writing: formats and idempotence"):
 *
 * - a snapshot at S is the book after every delta with ts < S, so deltas at ts = S apply after it: the book at T is
 *   the snapshot plus every delta with S ≤ ts ≤ T, in (ts, sequence) order;
 * - a delta adds `quantity_delta` to the level at (side, price); a level whose quantity reaches exactly zero is
 *   removed (rule 7 literally: a level driven below zero stays, as the row endpoints would rebuild it);
 * - a gap closed by an empty book has no snapshot at its to_ts: when such a gap ended after the snapshot, the book
 *   restarts empty at the gap's end and only the deltas from there apply.
 *
 * Amounts stay exact: scaled BigInt (units of 1e-18, as stored), compared and added as integers, written as the
 * canonical decimal text of every answer.
 */
import { BOOK_LAYOUT } from '@depthgate/history-store';
import { CorruptStreamError, decimalText } from './row-binary';

const L = BOOK_LAYOUT;
/** 9999-12-31T23:59:59.999Z, as for rows. */
const MAX_TS = 253_402_300_799_999;

/** A gap's bounds as a book read carries them. */
export interface GapBounds {
  fromTs: number;
  toTs: number;
  detectedAt: number;
}

/** What one bookQuery read holds, sorted out. */
export interface BookRows {
  raw: Buffer;
  /** The newest snapshot's ts in the read; null when it held none. */
  snapshotTs: number | null;
  /** Offsets of that snapshot's rows, and of every delta. */
  snapshot: number[];
  deltas: number[];
  /**
   * Of the gaps the read holds (row kind 3): one covering the moment (from_ts ≤ T < to_ts; the earliest-starting
   * when gaps overlap), and the last that ended at or before it.
   */
  covering: GapBounds | undefined;
  ended: GapBounds | undefined;
}

export interface RebuiltBook {
  /** The ts of the snapshot the book started from; null when it restarted empty at a gap's end. */
  snapshotTs: number | null;
  /** The last delta applied; undefined when none was. */
  lastDelta: { ts: number; sequence: bigint } | undefined;
  /** price → quantity (scaled), per side. */
  bids: Map<bigint, bigint>;
  asks: Map<bigint, bigint>;
}

function int128(src: Buffer, o: number): bigint {
  return (src.readBigInt64LE(o + 8) << 64n) | src.readBigUInt64LE(o);
}

const E18 = 10n ** 18n;

/**
 * Sorts a bookQuery result at `at` out, checking every row (an exception text appended by ClickHouse is never a
 * row).
 */
export function bookRows(raw: Buffer, at: number): BookRows {
  if (raw.length % L.size !== 0) throw new CorruptStreamError('the book read ended in the middle of a row');
  const out: BookRows = { raw, snapshotTs: null, snapshot: [], deltas: [], covering: undefined, ended: undefined };
  const snapshots: number[] = [];
  for (let o = 0; o < raw.length; o += L.size) {
    const kind = raw[o + L.kind];
    const side = raw[o + L.side];
    const ts = raw.readBigInt64LE(o + L.ts);
    if (kind === undefined || kind < 1 || kind > 3 || (side !== 1 && side !== 2) || ts < 0n || ts > BigInt(MAX_TS)) {
      throw new CorruptStreamError('unexpected data in the book read');
    }
    if (kind === 1) {
      snapshots.push(o);
      if (out.snapshotTs === null || Number(ts) > out.snapshotTs) out.snapshotTs = Number(ts);
    } else if (kind === 2) out.deltas.push(o);
    else {
      const gap = {
        fromTs: Number(ts),
        toTs: Number(raw.readBigUInt64LE(o + L.sequence)),
        detectedAt: Number(int128(raw, o + L.price) / E18),
      };
      if (gap.toTs > at) {
        if (gap.fromTs <= at && (out.covering === undefined || gap.fromTs < out.covering.fromTs)) out.covering = gap;
      } else if (out.ended === undefined || gap.toTs > out.ended.toTs) out.ended = gap;
    }
  }
  out.snapshot = snapshots.filter((o) => Number(raw.readBigInt64LE(o + L.ts)) === out.snapshotTs);
  return out;
}

/**
 * The book from a bookQuery read; `restartAt`: the end of the last gap that ended at or before T (when the caller
 * may see it). Undefined when there is nothing to start from: no snapshot, and no gap end after which to start empty.
 */
export function rebuildBook(rows: BookRows, restartAt?: number): RebuiltBook | undefined {
  const { raw } = rows;
  let snapshotTs = rows.snapshotTs;
  let from: number;
  if (restartAt !== undefined && (snapshotTs === null || restartAt > snapshotTs)) {
    snapshotTs = null;
    from = restartAt;
  } else if (snapshotTs !== null) {
    from = snapshotTs;
  } else {
    return undefined;
  }
  const book: RebuiltBook = { snapshotTs, lastDelta: undefined, bids: new Map(), asks: new Map() };
  const sideOf = (o: number) => (raw[o + L.side] === 1 ? book.bids : book.asks);
  if (snapshotTs !== null)
    for (const o of rows.snapshot) sideOf(o).set(int128(raw, o + L.price), int128(raw, o + L.quantity));
  // (ts, sequence) order; the read does not sort (the few deltas are put in order here).
  const key = (o: number) => [raw.readBigInt64LE(o + L.ts), raw.readBigUInt64LE(o + L.sequence)] as const;
  const deltas = rows.deltas
    .filter((o) => Number(raw.readBigInt64LE(o + L.ts)) >= from)
    .sort((x, y) => {
      const [a, b] = [key(x), key(y)];
      return a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
    });
  for (const o of deltas) {
    const [ts, sequence] = key(o);
    const levels = sideOf(o);
    const price = int128(raw, o + L.price);
    const quantity = (levels.get(price) ?? 0n) + int128(raw, o + L.quantity);
    if (quantity === 0n) levels.delete(price);
    else levels.set(price, quantity);
    book.lastDelta = { ts: Number(ts), sequence };
  }
  return book;
}

/** A side's levels, best first (bids by price descending, asks ascending), the first `depth`, as decimal text. */
export function levels(side: Map<bigint, bigint>, bestFirst: 'descending' | 'ascending', depth?: number) {
  const prices = [...side.keys()].sort((a, b) => (a === b ? 0 : a < b === (bestFirst === 'ascending') ? -1 : 1));
  return prices.slice(0, depth).map((p) => ({ price: decimalText(p), quantity: decimalText(side.get(p) as bigint) }));
}
