/**
 * The standby's buffer (redundant recording, issue 27; /work/notes/redundant-design.md §3.3–3.4). A recorder that is
 * the standby for a ticker runs the ticker's whole pipeline, but its rows come here instead of going to the writer:
 * the buffer is a RowSink. When the recorder takes the ticker over from a splice point S (the first ms it becomes
 * responsible for), `splice` writes into the real sink what makes the stored series continue exactly:
 *
 *   1. the book at S — the book after every buffered row with ts < S (and a snapshot at S itself), as a snapshot at S
 *      (so whatever the two recorders saw around S, nothing is counted twice or missed in the book from S on);
 *      or, where that book is not known (the standby's own gap spans S, or the buffer no longer reaches back to S),
 *      a gap from S to the standby's next snapshot;
 *   2. the buffered rows with ts ≥ S, in the order they were produced, with the ticker's `sequence` renumbered by the
 *      recorder's hybrid logical clock (max(previous + 1, ts × 1000)) from the old owner's last sequence, so that it
 *      keeps strictly increasing per ticker; trades from the old owner's last trade ts (copies are read once, by id).
 *
 * The buffer is a rule-7 reader of its own rows: `bookAt(S)` applies, in production order, the rows with ts < S (a
 * snapshot replaces the book; a gap whose `from` is before S makes the book unknown until a later snapshot; a delta
 * changes a level). It keeps the rows of the last `windowMs` of production; older rows are folded into a base book (the
 * book at the buffer's start), so `bookAt` is one forward pass over the window. Pure: no I/O, no clock of its own.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { LocalBook, parseDecimal, type SideCode } from '@depthgate/feeds';
import type { GapStream, VerificationMethod } from '@depthgate/history-store';
import type { RecordedTrade, RowSink } from '../rows';

type BufferedRow =
  | {
      kind: 'delta';
      ts: number;
      side: SideCode;
      price: string;
      quantityDelta: string;
      receivedTs: number;
      venueSeq: string;
    }
  | { kind: 'snapshot'; ts: number; book: LocalBook; receivedTs: number; venueSeq: string }
  | { kind: 'gap'; ts: number; fromTs: number; toTs: number; reason: string; detectedAt: number; stream: GapStream }
  | { kind: 'verification'; ts: number; method: VerificationMethod; detectedAt: number }
  | { kind: 'trade'; ts: number; trade: RecordedTrade };

interface Held {
  /** Production time (the recorder's clock when the row was buffered): what the window trims by. */
  at: number;
  row: BufferedRow;
}

/** What the old owner left: where the new owner's responsibility starts, and its last sequence and trade. */
export interface SplicePoint {
  /** The first ms the new owner writes (its snapshot's ts). */
  s: number;
  /** The largest `sequence` the old owner stored for the ticker (0: none). */
  sequence: number;
  /** The ts of the old owner's last stored trade of the ticker (-1: none): trades from there are written again. */
  lastTradeTs: number;
}

export interface SpliceResult {
  /** The book at S was known and written as a snapshot at S (false: a gap from S was written instead). */
  continuous: boolean;
  /** The ticker's sequence after the spliced rows (the recorder's counter continues from here). */
  sequence: number;
  /** Rows written (snapshot levels count one each). */
  rows: number;
  /**
   * The book is still not known after the buffered rows (the standby has no snapshot since S): the ticker's recorder
   * owes a gap from `from` to its next snapshot (its `pendingGap`).
   */
  pendingGap?: { from: number; reason: string };
}

/** A copy of a book, its levels with canonical text (a snapshot row prints `s`, else the canonical quantity). */
function copyBook(book: LocalBook): LocalBook {
  const out = new LocalBook();
  for (const side of [1, 2] as const) {
    const to = out.side(side);
    for (const [price, level] of book.side(side)) to.set(price, { q: level.q, s: level.s, e: 0 });
  }
  return out;
}

/** One ticker's buffered rows and the book at the buffer's start. */
export class TickerBuffer {
  private held: Held[] = [];
  /** The book after every row folded out of the window (undefined: not known there). */
  private base: LocalBook | undefined;
  /** The largest ts of a row folded out of the window (-1: none): `bookAt(S)` needs S above it. */
  private foldedTs = -1;
  private bytes = 0;

  constructor(
    readonly exchange: ExchangeKey,
    readonly ticker: string,
  ) {}

  /** Rows held (tests, metrics). */
  get size(): number {
    return this.held.length;
  }

  /** A rough size of what is held, for the buffer's byte bound (structured rows, not their TSV). */
  get heldBytes(): number {
    return this.bytes;
  }

  push(at: number, row: BufferedRow): void {
    this.held.push({ at, row });
    this.bytes += row.kind === 'snapshot' ? 64 + 48 * row.book.size : 96;
  }

  /** Folds the rows produced before `before` into the base book. */
  trim(before: number): void {
    let i = 0;
    for (; i < this.held.length && (this.held[i] as Held).at < before; i++) {
      const { row } = this.held[i] as Held;
      this.base = apply(this.base, row, Number.POSITIVE_INFINITY);
      if (row.ts > this.foldedTs) this.foldedTs = row.ts;
      this.bytes -= row.kind === 'snapshot' ? 64 + 48 * row.book.size : 96;
    }
    if (i > 0) this.held = this.held.slice(i);
  }

  /**
   * The book after every buffered row with ts < `s` (and a snapshot at `s`), as rule 7 would rebuild it from these
   * rows; `undefined` when it is not known there (inside the standby's own gap, before its first snapshot) or when
   * the window no longer reaches back to `s`.
   */
  bookAt(s: number): LocalBook | undefined {
    if (s <= this.foldedTs) return undefined;
    let book = this.base === undefined ? undefined : copyBook(this.base);
    for (const { row } of this.held) book = apply(book, row, s);
    return book;
  }

  /** Writes the takeover rows into `sink` (see the module comment). */
  splice(point: SplicePoint, sink: RowSink, now: number): SpliceResult {
    const { s } = point;
    let rows = 0;
    let sequence = point.sequence;
    const next = (ts: number) => {
      const floor = ts * 1000;
      sequence = sequence + 1 > floor ? sequence + 1 : floor;
      return sequence;
    };
    const book = this.bookAt(s);
    const continuous = book !== undefined;
    /** A gap opened at S (the book is not known there), closed by the next buffered snapshot. */
    let openGapReason: string | undefined;
    if (book !== undefined) {
      sink.snapshot(this.exchange, this.ticker, s, book, now, '');
      rows += book.size;
    } else {
      openGapReason = s <= this.foldedTs ? 'handover' : this.gapReasonAt(s);
    }
    for (const { row } of this.held) {
      if (row.kind === 'trade') {
        if (row.ts < point.lastTradeTs) continue;
        sink.trade({ ...row.trade, sequence: next(row.ts) });
        rows++;
        continue;
      }
      if (row.kind === 'gap') {
        // A gap of the standby's own after S is a window both recorders missed; one reaching back before S starts at S.
        // One that ended by S is the old owner's time.
        if (row.toTs <= s) continue;
        const from = Math.max(row.fromTs, s);
        if (openGapReason !== undefined && row.stream === 'book') {
          // The gap opened at S already says the book is unknown from S: this one continues it.
          sink.gap(this.exchange, this.ticker, s, row.toTs, row.reason, row.detectedAt, row.stream);
          openGapReason = undefined;
        } else sink.gap(this.exchange, this.ticker, from, row.toTs, row.reason, row.detectedAt, row.stream);
        rows++;
        continue;
      }
      if (row.ts < s) continue;
      switch (row.kind) {
        case 'delta':
          if (openGapReason !== undefined) continue; // not known yet: nothing to apply it to
          sink.delta(
            this.exchange,
            this.ticker,
            row.ts,
            next(row.ts),
            row.side,
            row.price,
            row.quantityDelta,
            row.receivedTs,
            row.venueSeq,
          );
          rows++;
          break;
        case 'snapshot':
          if (row.ts === s && !openGapReason) continue; // the snapshot at S was just written
          if (openGapReason !== undefined) {
            sink.gap(this.exchange, this.ticker, s, row.ts, openGapReason, now);
            rows++;
            openGapReason = undefined;
          }
          sink.snapshot(this.exchange, this.ticker, row.ts, row.book, row.receivedTs, row.venueSeq);
          rows += row.book.size;
          break;
        case 'verification':
          if (openGapReason !== undefined) continue;
          sink.verification(this.exchange, this.ticker, row.ts, row.method, row.detectedAt);
          rows++;
          break;
      }
    }
    return {
      continuous,
      sequence,
      rows,
      ...(openGapReason === undefined ? {} : { pendingGap: { from: s, reason: openGapReason } }),
    };
  }

  /** The reason of the standby's own gap that spans `s` (its book is not known there), or 'handover'. */
  private gapReasonAt(s: number): string {
    for (const { row } of this.held) {
      if (row.kind === 'gap' && row.stream === 'book' && row.fromTs < s && row.toTs > s) return row.reason;
    }
    return 'handover';
  }
}

/** The book after `row` (rows with ts ≥ `before` are left out; a snapshot at `before` counts). */
function apply(book: LocalBook | undefined, row: BufferedRow, before: number): LocalBook | undefined {
  switch (row.kind) {
    case 'snapshot':
      return row.ts <= before ? copyBook(row.book) : book;
    case 'gap':
      // Book gaps only: a gap that starts before `before` says the book was not known from there (it is written when
      // the loss is closed, after rows it may cover). A trades gap says nothing of the book.
      return row.stream === 'book' && row.fromTs < before ? undefined : book;
    case 'delta': {
      if (row.ts >= before || book === undefined) return book;
      const levels = book.side(row.side);
      const q = (levels.get(row.price)?.q ?? 0n) + parseDecimal(row.quantityDelta);
      if (q < 0n) throw new RangeError(`buffered delta makes ${row.price} negative`);
      if (q === 0n) levels.delete(row.price);
      else levels.set(row.price, { q, s: '', e: 0 });
      return book;
    }
    default:
      return book;
  }
}

/**
 * The standby's RowSink: every ticker's rows into its TickerBuffer (a ticker the recorder owns does not write here:
 * the routing sink in front sends its rows to the writer). `now` is the recorder's clock (production time).
 */
export class StandbyBuffer implements RowSink {
  private readonly tickers = new Map<string, TickerBuffer>();

  constructor(private readonly now: () => number) {}

  /** The buffer of one ticker (created empty when first asked). */
  of(exchange: ExchangeKey, ticker: string): TickerBuffer {
    const key = `${exchange}\t${ticker}`;
    let b = this.tickers.get(key);
    if (b === undefined) {
      b = new TickerBuffer(exchange, ticker);
      this.tickers.set(key, b);
    }
    return b;
  }

  /** Forgets a ticker's buffer (it was taken over, or left the recording). */
  drop(exchange: ExchangeKey, ticker: string): void {
    this.tickers.delete(`${exchange}\t${ticker}`);
  }

  /** Folds every row produced before `before` (the sweep calls it with now − RECORDER_STANDBY_BUFFER_MS). */
  trim(before: number): void {
    for (const b of this.tickers.values()) b.trim(before);
  }

  get heldBytes(): number {
    let n = 0;
    for (const b of this.tickers.values()) n += b.heldBytes;
    return n;
  }

  delta(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    _sequence: number,
    side: SideCode,
    price: string,
    quantityDelta: string,
    receivedTs: number,
    venueSeq: string,
  ): void {
    this.of(exchange, ticker).push(this.now(), { kind: 'delta', ts, side, price, quantityDelta, receivedTs, venueSeq });
  }

  snapshot(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    book: LocalBook,
    receivedTs: number,
    venueSeq: string,
  ): void {
    // The recorder keeps changing its book: the buffer holds a copy.
    this.of(exchange, ticker).push(this.now(), { kind: 'snapshot', ts, book: copyBook(book), receivedTs, venueSeq });
  }

  trade(trade: RecordedTrade): void {
    this.of(trade.exchange, trade.ticker).push(this.now(), { kind: 'trade', ts: trade.ts, trade });
  }

  gap(
    exchange: ExchangeKey,
    ticker: string,
    fromTs: number,
    toTs: number,
    reason: string,
    detectedAt: number,
    stream: GapStream = 'book',
  ): void {
    this.of(exchange, ticker).push(this.now(), { kind: 'gap', ts: toTs, fromTs, toTs, reason, detectedAt, stream });
  }

  verification(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    method: VerificationMethod,
    detectedAt: number,
  ): void {
    this.of(exchange, ticker).push(this.now(), { kind: 'verification', ts, method, detectedAt });
  }
}
