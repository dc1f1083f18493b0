/**
 * The book at a moment, rebuilt by the spec's rule 7 from one read of @depthgate/history-store's bookQuery: the rows
 * of the newest snapshot at or before T (row kind 1) and the deltas from that snapshot's ts to T (row kind 2), in
 * RowBinary (BOOK_LAYOUT). The conventions are the recorder's and the generator's (docs/history.md, "Writing"):
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

/** Checks every row (kind, side, ts: an exception text appended by ClickHouse is never taken for rows). */
function check(raw: Buffer): number {
  if (raw.length % L.size !== 0) throw new CorruptStreamError('the book read ended in the middle of a row');
  const n = raw.length / L.size;
  for (let i = 0, o = 0; i < n; i++, o += L.size) {
    const kind = raw[o + L.kind];
    const side = raw[o + L.side];
    const ts = raw.readBigInt64LE(o + L.ts);
    if ((kind !== 1 && kind !== 2) || (side !== 1 && side !== 2) || ts < 0n || ts > BigInt(MAX_TS)) {
      throw new CorruptStreamError('unexpected data in the book read');
    }
  }
  return n;
}

/**
 * The book from a bookQuery result; `restartAt`: the end of the last gap that ended at or before T (when the caller
 * may see it). Undefined when there is nothing to start from: no snapshot, and no gap end after which to start empty.
 */
export function rebuildBook(raw: Buffer, restartAt?: number): RebuiltBook | undefined {
  const n = check(raw);
  let snapshotTs: number | null = null;
  const deltas: number[] = [];
  for (let i = 0; i < n; i++) {
    const o = i * L.size;
    if (raw[o + L.kind] === 1) snapshotTs = Number(raw.readBigInt64LE(o + L.ts));
    else deltas.push(o);
  }
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
  if (snapshotTs !== null) {
    for (let i = 0; i < n; i++) {
      const o = i * L.size;
      if (raw[o + L.kind] === 1) sideOf(o).set(int128(raw, o + L.price), int128(raw, o + L.quantity));
    }
  }
  // (ts, sequence) order: the query's ORDER BY; checked, and restored if a ClickHouse release ever interleaved.
  const key = (o: number) => [raw.readBigInt64LE(o + L.ts), raw.readBigUInt64LE(o + L.sequence)] as const;
  let ordered = true;
  for (let i = 1; i < deltas.length && ordered; i++) {
    const [a, b] = [key(deltas[i - 1] as number), key(deltas[i] as number)];
    if (a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])) ordered = false;
  }
  if (!ordered) {
    deltas.sort((x, y) => {
      const [a, b] = [key(x), key(y)];
      return a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
    });
  }
  for (const o of deltas) {
    const [ts, sequence] = key(o);
    if (Number(ts) < from) continue;
    const levels = sideOf(o);
    const price = int128(raw, o + L.price);
    const quantity = (levels.get(price) ?? 0n) + int128(raw, o + L.quantity);
    if (quantity === 0n) levels.delete(price);
    else levels.set(price, quantity);
    book.lastDelta = { ts: Number(ts), sequence };
  }
  return book;
}

/** Whether a bookQuery result holds snapshot rows (the snapshot was found in the range it searched). */
export function hasSnapshot(raw: Buffer): boolean {
  for (let o = 0; o + L.size <= raw.length; o += L.size) if (raw[o + L.kind] === 1) return true;
  return false;
}

/** A side's levels, best first (bids by price descending, asks ascending), the first `depth`, as decimal text. */
export function levels(side: Map<bigint, bigint>, bestFirst: 'descending' | 'ascending', depth?: number) {
  const prices = [...side.keys()].sort((a, b) => (a === b ? 0 : a < b === (bestFirst === 'ascending') ? -1 : 1));
  return prices.slice(0, depth).map((p) => ({ price: decimalText(p), quantity: decimalText(side.get(p) as bigint) }));
}
