/**
 * One ticker's recorded window read from the history tables (through @depthgate/history-store's named queries) as
 * the engine's input (`RecordedWindow`).
 *
 * - **The book at `from`**, by the spec's rule 7: the newest snapshot at or before `from` plus the deltas with
 *   S ≤ ts ≤ `from` in (ts, sequence) order; a book gap that ended after that snapshot (one closed by an empty book
 *   leaves no snapshot at its end) restarts the book empty at the gap's end. When `from` falls inside a book gap
 *   (from_ts ≤ `from` < to_ts) there is no book: `start` is undefined and the gap is the window's first.
 * - **The rows of (`from`, `to`]**: deltas and trades interleaved by (ts, sequence) (one read per page of `pageRows`,
 *   resumed inside a millisecond where a page ends), with their `received_ts`; a trade is read once whatever copies
 *   are stored. `venue_side` is not part of that read: '' (the encoders fall back on `side`).
 * - **The book gaps** overlapping the window, each with the snapshot that closes it (the snapshot rows at its `to`;
 *   none: the empty book), or without one when it closes after `to`.
 *
 * A first slice: the window is read whole into memory before it is replayed (`maxRows` bounds it; a server will read
 * it page by page).
 */
import { formatDecimal } from '@depthgate/feeds';
import { BOOK_FIRST_LOOK_BACK_MS, BOOK_LAYOUT, type OrderBookQueries, type QueryScope } from '@depthgate/history-store';
import type { ExchangeKey } from '@depthgate/platforms';
import type { BookLevels, Level, RecordedDelta, RecordedGap, RecordedTrade, RecordedWindow } from './engine';

export interface WindowSpec {
  exchange: ExchangeKey;
  ticker: string;
  /** Epoch ms: the book at `from`, then the rows of (`from`, `to`]. */
  from: number;
  to: number;
  /** Rows per interleaved read (default 50,000). */
  pageRows?: number;
  /** Most deltas and trades the window may hold (the window is read whole): more is `WindowTooLargeError`. */
  maxRows?: number;
}

/** The window holds more rows than `maxRows`: it is refused rather than read into memory. */
export class WindowTooLargeError extends Error {
  constructor(readonly maxRows: number) {
    super(`the window holds more than ${maxRows} rows`);
    this.name = 'WindowTooLargeError';
  }
}

/** The recorded data cannot be read as the layout says (a truncated or foreign stream). */
export class SourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceError';
  }
}

const L = BOOK_LAYOUT;

function int128(src: Buffer, o: number): bigint {
  return (src.readBigInt64LE(o + 8) << 64n) | src.readBigUInt64LE(o);
}

const decimal = (src: Buffer, o: number) => formatDecimal(int128(src, o));

async function collect(run: (onChunk: (chunk: Buffer) => void) => Promise<void>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await run((chunk) => void chunks.push(chunk));
  return Buffer.concat(chunks);
}

interface BookRow {
  kind: 1 | 2 | 3;
  ts: number;
  /** Deltas: the row's sequence; gaps: their to_ts. */
  sequence: bigint;
  side: 'bid' | 'ask';
  price: bigint;
  quantity: bigint;
}

function bookRows(raw: Buffer): BookRow[] {
  if (raw.length % L.size !== 0) throw new SourceError('the book read ended in the middle of a row');
  const out: BookRow[] = [];
  for (let o = 0; o < raw.length; o += L.size) {
    const kind = raw[o + L.kind];
    const side = raw[o + L.side];
    if ((kind !== 1 && kind !== 2 && kind !== 3) || (side !== 1 && side !== 2))
      throw new SourceError('unexpected data in the book read');
    out.push({
      kind,
      ts: Number(raw.readBigInt64LE(o + L.ts)),
      sequence: raw.readBigUInt64LE(o + L.sequence),
      side: side === 1 ? 'bid' : 'ask',
      price: int128(raw, o + L.price),
      quantity: int128(raw, o + L.quantity),
    });
  }
  return out;
}

function levelsOf(map: Map<string, bigint>): Level[] {
  return [...map].map(([key, q]) => [key.slice(4), formatDecimal(q)] as const);
}

/** The book at `at` by rule 7 (undefined inside a gap or before any book). */
async function bookAt(
  queries: OrderBookQueries,
  scope: QueryScope,
  s: WindowSpec,
  at: number,
): Promise<BookLevels | undefined> {
  const read = async (from: number) =>
    bookRows(
      await collect((onChunk) => queries.book(scope, { exchange: s.exchange, ticker: s.ticker, from, at }, onChunk)),
    );
  // As the history's /book: a short look back first (books come every few minutes), the whole past only when that
  // held no snapshot and no gap end.
  let rows = await read(at - BOOK_FIRST_LOOK_BACK_MS);
  if (!rows.some((r) => r.kind === 1 || r.kind === 3)) {
    const base = await queries.bookBase(scope, s.exchange, s.ticker, 0, at);
    const from = Math.max(base.snapshotTs ?? -1, base.gapEnd ?? -1);
    if (from < 0) return undefined;
    rows = await read(from);
  }
  const gaps = rows.filter((r) => r.kind === 3).map((r) => ({ from: r.ts, to: Number(r.sequence) }));
  if (gaps.some((g) => g.from <= at && g.to > at)) return undefined;
  const snapshotTs = Math.max(-1, ...rows.filter((r) => r.kind === 1).map((r) => r.ts));
  const restart = Math.max(-1, ...gaps.filter((g) => g.to <= at).map((g) => g.to));
  const startFrom = restart > snapshotTs ? restart : snapshotTs;
  if (startFrom < 0) return undefined;
  // `side:price` → quantity; the price kept as canonical text after the 4-character side prefix.
  const book = new Map<string, bigint>();
  const key = (r: BookRow) => `${r.side}:${formatDecimal(r.price)}`;
  if (restart <= snapshotTs)
    for (const r of rows) if (r.kind === 1 && r.ts === snapshotTs) book.set(key(r), r.quantity);
  const deltas = rows
    .filter((r) => r.kind === 2 && r.ts >= startFrom)
    .sort((a, b) => a.ts - b.ts || (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
  for (const d of deltas) {
    const q = (book.get(key(d)) ?? 0n) + d.quantity;
    if (q === 0n) book.delete(key(d));
    else book.set(key(d), q);
  }
  const side = (name: 'bid' | 'ask') => new Map([...book].filter(([k]) => k.startsWith(`${name}:`)));
  return { bids: levelsOf(side('bid')), asks: levelsOf(side('ask')) };
}

/** The snapshot written at exactly `ts` (the one that closes a gap); the empty book when there is none. */
async function snapshotAt(
  queries: OrderBookQueries,
  scope: QueryScope,
  s: WindowSpec,
  ts: number,
): Promise<BookLevels> {
  const rows = bookRows(
    await collect((onChunk) =>
      queries.book(scope, { exchange: s.exchange, ticker: s.ticker, from: ts, at: ts }, onChunk),
    ),
  );
  const level = (r: BookRow): Level => [formatDecimal(r.price), formatDecimal(r.quantity)];
  const snapshot = rows.filter((r) => r.kind === 1 && r.ts === ts);
  return {
    bids: snapshot.filter((r) => r.side === 'bid').map(level),
    asks: snapshot.filter((r) => r.side === 'ask').map(level),
  };
}

/** Reads an unsigned LEB128 length. */
function varint(src: Buffer, o: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  for (let i = o; i < src.length && shift < 35; i++) {
    const byte = src[i] as number;
    value |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, i + 1];
    shift += 7;
  }
  throw new SourceError('a string length runs past the read');
}

/** The interleaved layout with `received_ts`: ts, sequence, kind, side, price, amount, received_ts, trade_id. */
const FIXED = 8 + 8 + 1 + 1 + 16 + 16 + 8;

async function readRows(
  queries: OrderBookQueries,
  scope: QueryScope,
  s: WindowSpec,
): Promise<{ deltas: RecordedDelta[]; trades: RecordedTrade[] }> {
  const limit = s.pageRows ?? 50_000;
  const deltas: RecordedDelta[] = [];
  const trades: RecordedTrade[] = [];
  let windowFrom = s.from + 1;
  let resume: { sequence: bigint; skip: number } | undefined;
  for (;;) {
    const raw = await collect((onChunk) =>
      queries.interleaved(
        scope,
        {
          exchange: s.exchange,
          ticker: s.ticker,
          window: { from: windowFrom, to: s.to, toInclusive: true },
          limit,
          receivedTs: true,
          ...(resume ? { resume } : {}),
        },
        onChunk,
      ),
    );
    let count = 0;
    let last: { ts: number; sequence: bigint; same: number } | undefined;
    for (let o = 0; o < raw.length;) {
      if (o + FIXED > raw.length) throw new SourceError('the rows read ended in the middle of a row');
      const ts = Number(raw.readBigInt64LE(o));
      const sequence = raw.readBigUInt64LE(o + 8);
      const kind = raw[o + 16];
      const side = raw[o + 17];
      const price = decimal(raw, o + 18);
      const amount = decimal(raw, o + 34);
      const received = Number(raw.readBigInt64LE(o + 50));
      const [length, start] = varint(raw, o + FIXED);
      if (start + length > raw.length) throw new SourceError('a trade id runs past the read');
      const tradeId = raw.toString('utf8', start, start + length);
      o = start + length;
      if ((kind !== 1 && kind !== 2) || (side !== 1 && side !== 2)) throw new SourceError('unexpected data in a row');
      if (kind === 1)
        deltas.push({
          ts,
          received_ts: received,
          sequence: Number(sequence),
          side: side === 1 ? 'bid' : 'ask',
          price,
          quantity_delta: amount,
        });
      else
        trades.push({
          ts,
          received_ts: received,
          sequence: Number(sequence),
          trade_id: tradeId,
          price,
          size: amount,
          side: side === 1 ? 'buy' : 'sell',
          venue_side: '',
        });
      count++;
      last =
        last && last.ts === ts && last.sequence === sequence
          ? { ...last, same: last.same + 1 }
          : { ts, sequence, same: 1 };
    }
    if (s.maxRows !== undefined && deltas.length + trades.length > s.maxRows) throw new WindowTooLargeError(s.maxRows);
    if (count < limit || last === undefined) return { deltas, trades };
    // The next page: from the last row's millisecond, past the rows of its (ts, sequence) already read.
    const skip = windowFrom === last.ts && resume?.sequence === last.sequence ? resume.skip + last.same : last.same;
    windowFrom = last.ts;
    resume = { sequence: last.sequence, skip };
  }
}

/** One ticker's window as the engine reads it. */
export async function readWindow(queries: OrderBookQueries, scope: QueryScope, s: WindowSpec): Promise<RecordedWindow> {
  const startBook = await bookAt(queries, scope, s, s.from);
  const { deltas, trades } = await readRows(queries, scope, s);
  const stored = await queries.gaps(scope, s.exchange, s.ticker, { from: s.from, to: s.to });
  const gaps: RecordedGap[] = [];
  for (const g of stored) {
    // A gap that ended at or before `from` is already in the start's book.
    if (g.toTs <= s.from) continue;
    const gap: RecordedGap = { from: g.fromTs, to: g.toTs, reason: g.reason };
    if (g.toTs <= s.to) gap.book = await snapshotAt(queries, scope, s, g.toTs);
    gaps.push(gap);
  }
  gaps.sort((a, b) => a.to - b.to);
  return {
    ticker: s.ticker,
    start: startBook === undefined ? undefined : { ts: s.from, book: startBook },
    deltas,
    trades,
    gaps,
  };
}
