/**
 * One ticker's recorded window read from the history tables (through @depthgate/history-store's named queries) as
 * the engine's input: `openWindow` gives a `PagedWindow` (the book at `from`, the last trade before it, then the rows
 * page by page), `readWindow` the same read whole (`RecordedWindow`, for tests and small tools).
 *
 * - **The book at `from`**, by the spec's rule 7: the newest snapshot at or before `from` plus the deltas with
 *   S ≤ ts ≤ `from` in (ts, sequence) order; a book gap that ended after that snapshot (one closed by an empty book
 *   leaves no snapshot at its end) restarts the book empty at the gap's end. When `from` falls inside a book gap
 *   (from_ts ≤ `from` < to_ts) there is no book: `start` is undefined and the gap is the window's first. When `from`
 *   is before the ticker's first book, `start` is undefined and `firstBook` is its first snapshot in the window
 *   (firstBookIn): the recorder writes no gap before it, the replay starts the book there as at a gap's end.
 * - **The last trade at or before `from`** (`lastTrade`: Coinbase's `last_match`, the CLOB's `last_trade_price`) of
 *   those the caller may see (`ts` ≥ `visibleFrom`), read by history-store `lastTrade`.
 * - **The rows of (`from`, `to`]**: deltas and trades interleaved by (ts, sequence), with their `received_ts`, read
 *   `pageRows` at a time (one read per page, resumed inside a millisecond where a read ends); a trade is read once
 *   whatever copies are stored. A page never splits a millisecond: the rows of the last millisecond a read reached
 *   wait for the next page (so a group of deltas, or a gap's reset before the rows at its end, stays whole). A page
 *   is read when the engine starts playing the one before it (replayPaged), so a replay holds at most two pages.
 *   `venue_side` is not part of that read: '' (the encoders fall back on `side`).
 * - **The book gaps**, page by page: each page lists the gaps that overlap its stretch, each that closes in it with
 *   the snapshot that closes it (the snapshot rows at its `to`; none: the empty book) and that snapshot's receive
 *   time, one that closes after `to` without one.
 */
import { canonicalDecimal, formatDecimal, parseDecimal } from '@depthgate/feeds';
import {
  BOOK_FIRST_LOOK_BACK_MS,
  BOOK_LAYOUT,
  combinedSpan,
  WindowPlanner,
  type KindSpan,
  type OrderBookQueries,
  type QueryScope,
  type ReceiveSpan,
  type StoredTrade,
} from '@depthgate/history-store';
import type { ExchangeKey } from '@depthgate/platforms';
import type {
  BookLevels,
  ClockField,
  Level,
  PagedWindow,
  RecordedDelta,
  RecordedGap,
  RecordedTrade,
  RecordedWindow,
  WindowPage,
} from './engine';

export interface WindowSpec {
  exchange: ExchangeKey;
  ticker: string;
  /** Epoch ms: the book at `from`, then the rows of (`from`, `to`]. */
  from: number;
  to: number;
  /** Rows per read, a page (default DEFAULT_PAGE_ROWS); a page holds more only when one millisecond does. */
  pageRows?: number;
  /** The clock `from` and `to` are on: the venue's (`ts`, the default) or the recorder's receive clock. */
  clock?: ClockField;
  /**
   * The start of the caller's window for the ticker (packages/auth `windowStart`, epoch ms on `ts`): nothing older is
   * read that the replay would show as such (the last trade before `from`).
   */
  visibleFrom: number;
}

export const DEFAULT_PAGE_ROWS = 10_000;

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

/** The book at `at` by rule 7: its levels, or why there is none ('gap': inside a gap; 'none': before any book). */
async function bookAt(
  queries: OrderBookQueries,
  scope: QueryScope,
  s: WindowSpec,
  at: number,
): Promise<BookLevels | 'gap' | 'none'> {
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
    if (from < 0) return 'none';
    rows = await read(from);
  }
  const gaps = rows.filter((r) => r.kind === 3).map((r) => ({ from: r.ts, to: Number(r.sequence) }));
  if (gaps.some((g) => g.from <= at && g.to > at)) return 'gap';
  const snapshotTs = Math.max(-1, ...rows.filter((r) => r.kind === 1).map((r) => r.ts));
  const restart = Math.max(-1, ...gaps.filter((g) => g.to <= at).map((g) => g.to));
  const startFrom = restart > snapshotTs ? restart : snapshotTs;
  if (startFrom < 0) return 'none';
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

/** The snapshot layout with `received_ts`: ts, side, price, quantity, received_ts. */
const SNAPSHOT_ROW = 8 + 1 + 16 + 16 + 8;

/**
 * The snapshot written at exactly `ts` (the one that closes a gap; the empty book when there is none), and when its
 * newest message was received (the empty book: `ts`).
 */
async function snapshotAt(
  queries: OrderBookQueries,
  scope: QueryScope,
  s: WindowSpec,
  ts: number,
): Promise<{ book: BookLevels; received: number }> {
  const raw = await collect((onChunk) =>
    queries.snapshots(
      scope,
      {
        exchange: s.exchange,
        ticker: s.ticker,
        window: { from: ts, to: ts, toInclusive: true },
        limit: 1_000_000_000,
        receivedTs: true,
      },
      onChunk,
    ),
  );
  if (raw.length % SNAPSHOT_ROW !== 0) throw new SourceError('the snapshot read ended in the middle of a row');
  const bids: Level[] = [];
  const asks: Level[] = [];
  let received = Number.NEGATIVE_INFINITY;
  for (let o = 0; o < raw.length; o += SNAPSHOT_ROW) {
    const side = raw[o + 8];
    if (side !== 1 && side !== 2) throw new SourceError('unexpected data in the snapshot read');
    (side === 1 ? bids : asks).push([decimal(raw, o + 9), decimal(raw, o + 25)]);
    received = Math.max(received, Number(raw.readBigInt64LE(o + 41)));
  }
  return { book: { bids, asks }, received: raw.length === 0 ? ts : received };
}

/**
 * The ticker's first book when the window starts before it (no book at `from`, not inside a gap): its first snapshot
 * in the window — venue clock: with `from` < ts ≤ `to`; receive clock: received in (`from`, `to`] — unless a book gap
 * starts before it (that gap's end then opens the book, as any gap's). The recorder writes no gap before a ticker's
 * first snapshot, so without this a window starting before it would never send a book.
 */
async function firstBookIn(
  queries: OrderBookQueries,
  scope: QueryScope,
  s: WindowSpec,
): Promise<RecordedWindow['firstBook']> {
  const received = s.clock === 'received_ts';
  // (Receive clock: no snapshot was received by `from`, so the first one of all is the first received after it.)
  const found = await queries.bookStart(scope, s.exchange, s.ticker, received ? 0 : s.from, received ? null : s.to);
  if (found.snapshotTs === undefined || (found.gapFrom !== undefined && found.gapFrom < found.snapshotTs))
    return undefined;
  const first = await snapshotAt(queries, scope, s, found.snapshotTs);
  if (received && first.received > s.to) return undefined;
  return { ts: found.snapshotTs, received_ts: first.received, book: first.book };
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

type Row = { kind: 'delta'; row: RecordedDelta } | { kind: 'trade'; row: RecordedTrade };

/** Decodes one read of the interleaved layout; `last` is the last row's key and how many rows before it share it. */
function decodeRows(raw: Buffer): { rows: Row[]; last?: { ts: number; sequence: bigint; same: number } } {
  const rows: Row[] = [];
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
      rows.push({
        kind: 'delta',
        row: {
          ts,
          received_ts: received,
          sequence: Number(sequence),
          side: side === 1 ? 'bid' : 'ask',
          price,
          quantity_delta: amount,
        },
      });
    else
      rows.push({
        kind: 'trade',
        row: {
          ts,
          received_ts: received,
          sequence: Number(sequence),
          trade_id: tradeId,
          price,
          size: amount,
          side: side === 1 ? 'buy' : 'sell',
          venue_side: '',
        },
      });
    last =
      last && last.ts === ts && last.sequence === sequence
        ? { ...last, same: last.same + 1 }
        : { ts, sequence, same: 1 };
  }
  return { rows, last };
}

/**
 * What a PageReader reads: rows with `tsFrom` ≤ ts ≤ `tsTo` (those received in `received`, when given), where its
 * pages' gaps start (`gapsFrom`), and what is known of the rows' density (`span`: their count over a span of `ts`;
 * none: the range is read as one part).
 */
interface RowRange {
  tsFrom: number;
  tsTo: number;
  received?: { from: number; to: number };
  gapsFrom: number;
  span: KindSpan | undefined;
}

/**
 * A window's rows page by page, each page with its gaps (see the module comment). ClickHouse 18.16 cannot stop a
 * `ORDER BY … LIMIT n` read early: a read over the rest of the window would read all of it for every page. So the
 * window is read in parts of `ts` sized from the rows per ms (WindowPlanner, the history's reads' planner) to hold a
 * few more rows than a read asks for, each read with the row cap (so a read is mostly one query, cut by the cap and
 * planned again from there), and a read costs about what it returns wherever it is in the window.
 */
class PageReader {
  private readonly limit: number;
  /** The parts of `ts` the window is read in, each sized from the rows per ms. */
  private readonly planner: WindowPlanner;
  /** Where the row cap cut the last read: the last row's key, and the rows of that key already read. */
  private resume: { ts: number; sequence: bigint; skip: number } | undefined;
  /** The rows of the last millisecond read, held for the next page. */
  private carry: Row[] = [];
  /** The start of the next page's stretch (the last page's `until`). */
  private stretchFrom: number;
  private ended = false;

  constructor(
    private readonly queries: OrderBookQueries,
    private readonly scope: QueryScope,
    private readonly s: WindowSpec,
    private readonly range: RowRange,
  ) {
    this.limit = s.pageRows ?? DEFAULT_PAGE_ROWS;
    this.stretchFrom = range.gapsFrom;
    this.planner = new WindowPlanner({
      from: range.tsFrom,
      to: range.tsTo,
      // Without a count, one part over the whole range (planned again from where the row cap cuts it).
      span: range.span ?? { firstTs: range.tsFrom, lastTs: range.tsTo, rows: 0 },
      limit: Infinity,
      windowRows: this.limit,
      maxWindows: Infinity,
    });
  }

  /**
   * At most `limit` rows from where the last read ended, read part by part; `more`: the window may hold more (a part
   * was cut by the row cap: the next read goes on from its last row).
   */
  async read(): Promise<{ rows: Row[]; more: boolean }> {
    const { s, range } = this;
    let rows: Row[] = [];
    for (;;) {
      const part = this.planner.next();
      if (part === null) return { rows, more: false };
      const asked = this.limit - rows.length;
      const resume = this.resume?.ts === part.from ? this.resume : undefined;
      const raw = await collect((onChunk) =>
        this.queries.interleaved(
          this.scope,
          {
            exchange: s.exchange,
            ticker: s.ticker,
            window: part,
            limit: asked,
            receivedTs: true,
            ...(resume ? { resume: { sequence: resume.sequence, skip: resume.skip } } : {}),
            ...(range.received ? { received: range.received } : {}),
          },
          onChunk,
        ),
      );
      const got = decodeRows(raw);
      rows = rows.length === 0 ? got.rows : rows.concat(got.rows);
      const last = got.last;
      if (got.rows.length < asked || last === undefined) {
        // The part is read to its end: the next one is sized from the rows per ms it held.
        if (part.to !== null && !part.toInclusive) this.planner.observe(got.rows.length, part.to - part.from);
        continue;
      }
      // The row cap cut it: the rest is planned again from its last row's millisecond, past the rows of its
      // (ts, sequence) already read, from the rows per ms it showed.
      const skip =
        resume !== undefined && part.from === last.ts && resume.sequence === last.sequence
          ? resume.skip + last.same
          : last.same;
      this.resume = { ts: last.ts, sequence: last.sequence, skip };
      this.planner.observe(got.rows.length, last.ts - part.from + 1);
      this.planner.resume(last.ts);
      return { rows, more: true };
    }
  }

  async next(): Promise<WindowPage> {
    if (this.ended) throw new Error('the window has no page after its last');
    let rows = this.carry;
    let until = Infinity;
    for (;;) {
      const got = await this.read();
      rows = rows.length === 0 ? got.rows : rows.concat(got.rows);
      if (!got.more) {
        this.carry = [];
        break;
      }
      // Hold back the last millisecond's rows: the page ends before it (one millisecond holds them all: read on).
      const lastTs = (rows[rows.length - 1] as Row).row.ts;
      let cut = rows.length;
      while (cut > 0 && (rows[cut - 1] as Row).row.ts === lastTs) cut--;
      if (cut === 0) continue;
      this.carry = rows.slice(cut);
      rows = rows.slice(0, cut);
      until = lastTs;
      break;
    }
    this.ended = until === Infinity;
    const gaps = await this.gaps(until);
    this.stretchFrom = until;
    const deltas: RecordedDelta[] = [];
    const trades: RecordedTrade[] = [];
    for (const r of rows) {
      if (r.kind === 'delta') deltas.push(r.row);
      else trades.push(r.row);
    }
    return { deltas, trades, gaps, until };
  }

  /**
   * The gaps overlapping the stretch [stretchFrom, until) (the last page: up to `to`; on the receive clock, every
   * later one), each that closes in it with its closing book when that book was received by the window's end.
   * A gap whose closing book is in the start's book is left out (venue clock: it ended at or before `from`; receive
   * clock: its closing book was received by `from`).
   */
  private async gaps(until: number): Promise<RecordedGap[]> {
    const { s } = this;
    const received = s.clock === 'received_ts';
    const last = until === Infinity;
    const stored = await this.queries.gaps(this.scope, s.exchange, s.ticker, {
      from: this.stretchFrom,
      to: last ? (received ? null : s.to) : until,
    });
    const gaps: RecordedGap[] = [];
    for (const g of stored) {
      if (!received && g.toTs <= s.from) continue;
      // (Receive clock: a gap the recorder had not detected by the window's end is not in it.)
      if (received && g.detectedAt > s.to) continue;
      const gap: RecordedGap = { from: g.fromTs, to: g.toTs, reason: g.reason };
      // Closing in this stretch: its book, at the time the recorder received it (the reset's `received_ts`).
      if (g.toTs < until && (received || g.toTs <= s.to)) {
        const reset = await snapshotAt(this.queries, this.scope, s, g.toTs);
        if (received && reset.received <= s.from) continue;
        if (!received || reset.received <= s.to) {
          gap.book = reset.book;
          gap.received_ts = reset.received;
        }
      }
      gaps.push(gap);
    }
    return gaps.sort((a, b) => a.to - b.to);
  }
}

function tradeOf(t: StoredTrade): RecordedTrade {
  return {
    ts: t.ts,
    received_ts: t.receivedTs,
    sequence: t.sequence,
    trade_id: t.tradeId,
    price: canonicalDecimal(t.price),
    size: canonicalDecimal(t.size),
    side: t.side,
    venue_side: t.venueSide,
  };
}

/**
 * The book at `from` on the receive clock: the book the recorder had received by `from` — rule 7 over the rows
 * received by then: the newest snapshot received at or before `from` (S), or the end of a gap closed by an empty book
 * received by then when later, plus the deltas with ts ≥ that base received by `from`, in (ts, sequence) order.
 * Undefined inside a gap (detected by `from`, its closing book not received by then), 'none' before any book. Its
 * `ts`: the venue time it reflects (the base, or the last delta applied).
 */
async function bookReceivedBy(
  queries: OrderBookQueries,
  scope: QueryScope,
  s: WindowSpec,
  span: ReceiveSpan,
): Promise<{ start: RecordedWindow['start'] | 'none'; gapsFrom: number }> {
  const snapshotTs = span.snapshotTs ?? -1;
  const lookTo = Math.max(snapshotTs, span.bookLastTs ?? -1, span.firstTs ?? -1);
  let restart = -1;
  if (lookTo >= 0) {
    for (const g of await queries.gaps(scope, s.exchange, s.ticker, { from: Math.max(0, snapshotTs), to: lookTo })) {
      if (g.detectedAt > s.from) continue;
      const reset = g.toTs <= snapshotTs ? undefined : await snapshotAt(queries, scope, s, g.toTs);
      // Detected by `from`, its closing book received after: the book is lost at `from`.
      if (reset && reset.received > s.from) return { start: undefined, gapsFrom: g.fromTs };
      if (reset && g.toTs > restart) restart = g.toTs;
    }
  }
  const base = Math.max(snapshotTs, restart);
  if (base < 0) return { start: 'none', gapsFrom: span.firstTs ?? s.from };
  const levels = new Map<string, bigint>();
  const key = (side: 'bid' | 'ask', price: string) => `${side}:${formatDecimal(parseDecimal(price))}`;
  if (restart < snapshotTs) {
    const { book } = await snapshotAt(queries, scope, s, snapshotTs);
    for (const [p, q] of book.bids) levels.set(key('bid', p), parseDecimal(q));
    for (const [p, q] of book.asks) levels.set(key('ask', p), parseDecimal(q));
  }
  let ts = base;
  // (At most about a snapshot interval of rows: one part, unless the row cap cuts it.)
  const reader = new PageReader(queries, scope, s, {
    tsFrom: base,
    tsTo: span.bookLastTs ?? -1,
    received: { from: -1, to: s.from },
    gapsFrom: base,
    span: undefined,
  });
  for (let more = true; more;) {
    const got = await reader.read();
    more = got.more;
    for (const r of got.rows) {
      if (r.kind !== 'delta') continue;
      const k = key(r.row.side, r.row.price);
      const q = (levels.get(k) ?? 0n) + parseDecimal(r.row.quantity_delta);
      if (q === 0n) levels.delete(k);
      else levels.set(k, q);
      ts = Math.max(ts, r.row.ts);
    }
  }
  const side = (name: 'bid' | 'ask') =>
    [...levels].filter(([k]) => k.startsWith(`${name}:`)).map(([k, q]) => [k.slice(4), formatDecimal(q)] as const);
  return { start: { ts, received_ts: s.from, book: { bids: side('bid'), asks: side('ask') } }, gapsFrom: ts };
}

/**
 * One ticker's window as the engine reads it, page by page: the book at `from`, the last trade at or before it and
 * the first page are read here (so a window that cannot be read fails before anything is sent), each later page when
 * the engine asks for it. The reads run under `scope` (it must outlive the replay).
 *
 * On the receive clock (`clock: 'received_ts'`) the window is the rows received in (`from`, `to`], in the venue's
 * order (ts, sequence) as on the venue clock; the book at `from` the book received by then (bookReceivedBy); the last
 * trade the last one received by `from`; a gap's reset is in it when its closing book was received in it, at that
 * receive time. Where those rows lie on the venue clock is found first (one query: receiveSpan).
 */
export async function openWindow(queries: OrderBookQueries, scope: QueryScope, s: WindowSpec): Promise<PagedWindow> {
  let start: RecordedWindow['start'] | 'none';
  let range: RowRange;
  if (s.clock === 'received_ts') {
    const span = await queries.receiveSpan(scope, s.exchange, s.ticker, s.from, s.to);
    const opened = await bookReceivedBy(queries, scope, s, span);
    start = opened.start;
    range = {
      tsFrom: span.firstTs ?? 0,
      tsTo: span.rows > 0 ? (span.lastTs as number) : -1,
      received: { from: s.from, to: s.to },
      gapsFrom: opened.gapsFrom,
      span:
        span.rows > 0 ? { firstTs: span.firstTs as number, lastTs: span.lastTs as number, rows: span.rows } : undefined,
    };
  } else {
    const startBook = await bookAt(queries, scope, s, s.from);
    start = startBook === 'gap' ? undefined : startBook === 'none' ? 'none' : { ts: s.from, book: startBook };
    // The rows' density: the ticker's deltas and trades as the catalogue counts them.
    const spans = (await queries.catalogue(scope, s.exchange, s.ticker)).filter((c) => c.ticker === s.ticker);
    const of = (kind: 'delta' | 'trade') => spans.find((c) => c.kind === kind);
    range = { tsFrom: s.from + 1, tsTo: s.to, gapsFrom: s.from, span: combinedSpan(of('delta'), of('trade')) };
  }
  // Before the ticker's first book: the book starts at its first snapshot in the window.
  const firstBook = start === 'none' ? await firstBookIn(queries, scope, s) : undefined;
  const last = await queries.lastTrade(scope, s.exchange, s.ticker, s.visibleFrom, s.from, s.clock ?? 'ts');
  const reader = new PageReader(queries, scope, s, range);
  let first: WindowPage | undefined = await reader.next();
  const window: PagedWindow = {
    ticker: s.ticker,
    start: start === 'none' ? undefined : start,
    // Without a book at `from`, what names the last trade goes out at `from` (receive clock: at the trade's venue time).
    opening: { ts: s.clock === 'received_ts' ? (last?.ts ?? s.from) : s.from, received_ts: s.from },
    nextPage: () => {
      if (first === undefined) return reader.next();
      const page = first;
      first = undefined;
      return page;
    },
  };
  if (firstBook) window.firstBook = firstBook;
  if (last) window.lastTrade = tradeOf(last);
  return window;
}

/** One ticker's window read whole (every page, in memory): for tests and tools; a server replays `openWindow`. */
export async function readWindow(queries: OrderBookQueries, scope: QueryScope, s: WindowSpec): Promise<RecordedWindow> {
  const paged = await openWindow(queries, scope, s);
  const deltas: RecordedDelta[] = [];
  const trades: RecordedTrade[] = [];
  const gaps = new Map<number, RecordedGap>();
  for (let page: WindowPage | undefined; page === undefined || page.until !== Infinity;) {
    page = await paged.nextPage();
    deltas.push(...page.deltas);
    trades.push(...page.trades);
    // A gap listed by several pages: the listing that has its book (the page it closes in) wins.
    for (const g of page.gaps) if (g.book !== undefined || !gaps.has(g.to)) gaps.set(g.to, g);
  }
  const window: RecordedWindow = {
    ticker: s.ticker,
    start: paged.start,
    opening: paged.opening,
    deltas,
    trades,
    gaps: [...gaps.values()].sort((a, b) => a.to - b.to),
  };
  if (paged.firstBook) window.firstBook = paged.firstBook;
  if (paged.lastTrade) window.lastTrade = paged.lastTrade;
  return window;
}
