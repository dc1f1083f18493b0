/**
 * The standby's buffer (redundant recording, issue 27; /work/notes/redundant-design.md §3.3–3.4). A recorder that is
 * the standby for a ticker runs the ticker's whole pipeline, but its rows come here instead of going to the writer:
 * the buffer is a RowSink. When the recorder takes the ticker over from a splice point S (the first ms it becomes
 * responsible for), `splice` writes into the real sink what makes the stored series continue exactly:
 *
 *   0. on a venue clock, the rest of ms S − 1: the old owner's landed deltas at S − 1 (`deltasAtLast`) must be a
 *      prefix of the standby's own deltas there (side, price, quantity delta, in order; decimals by value), and the
 *      standby writes the others, sequences above the old owner's. Not a prefix: the books disagree (`diverged`), and a
 *      `divergence` gap from S − 1 to S is written instead. On a receive clock (Gemini) ms S − 1 is the old owner's own;
 *   1. the book at S — the book after every buffered row with ts < S (and a snapshot at S itself), as a snapshot at S
 *      (so whatever the two recorders saw around S, nothing is counted twice or missed in the book from S on);
 *      or, where that book is not known (the standby's own gap spans S, or the buffer no longer reaches back to S),
 *      a gap from S to the standby's next snapshot;
 *   2. the buffered rows with ts ≥ S, in the order they were produced, with the ticker's `sequence` renumbered by the
 *      recorder's hybrid logical clock (max(previous + 1, ts × 1000)) from the old owner's last sequence, so that it
 *      keeps strictly increasing per ticker; every buffered trade (copies are read once, by id).
 *
 * The buffer is a rule-7 reader of its own rows: `bookAt(S)` applies, in production order, the rows with ts < S (a
 * snapshot replaces the book; a gap whose `from` is before S makes the book unknown until a later snapshot; a delta
 * changes a level; a ticker's loss, told by `lost` before its gap row exists, makes it unknown from the loss on). It
 * keeps the rows of the last RECORDER_STANDBY_BUFFER_MS of production (`trim`) and at most `maxRows` rows (past it
 * the window shrinks: the oldest rows of every ticker are folded, as the trim does); older rows are folded into a base
 * book (the book at the buffer's start), so `bookAt` is one forward pass over the window. `handBack` writes a ticker's
 * rows back unchanged (an owner's own rows, routed here while it offered the ticker to a peer that did not take it).
 * Pure: no I/O, no clock of its own.
 *
 * Cost: one object per row (its production time inline), found by exchange then ticker (no key built per row); the
 * folded prefix is skipped by index. Measured (/work/notes/redundant-bench/sink-vs-buffer.mjs, 2 shared cores,
 * load 3–5): 0.9–1.35 µs CPU per row against the prototype's 1.35–1.77 µs and the owner's TsvSink's 0.58–0.86 µs;
 * the storage of design §3.3 (TSV slices, checkpoints) is what would bring it to the sink's.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { LocalBook, parseDecimal, type SideCode } from '@depthgate/feeds';
import type { GapStream, VerificationMethod } from '@depthgate/history-store';
import type { RecordedTrade, RowSink } from '../rows';
import { bookDigest } from './book-digest';

/** A buffered row, with `at`: its production time (the recorder's clock when it was buffered, what the window trims by). */
type BufferedRow =
  | {
      kind: 'delta';
      at: number;
      ts: number;
      sequence: number;
      side: SideCode;
      price: string;
      quantityDelta: string;
      receivedTs: number;
      venueSeq: string;
    }
  | { kind: 'snapshot'; at: number; ts: number; book: LocalBook; receivedTs: number; venueSeq: string }
  | {
      kind: 'gap';
      at: number;
      ts: number;
      fromTs: number;
      toTs: number;
      reason: string;
      detectedAt: number;
      stream: GapStream;
    }
  | { kind: 'verification'; at: number; ts: number; method: VerificationMethod; detectedAt: number }
  | { kind: 'trade'; at: number; ts: number; trade: RecordedTrade }
  /**
   * The ticker lost its book at `ts` (TickerRecorder's loss bound); its gap row comes when the fresh book arrives.
   * Not a row of the tables: it makes the book unknown from `ts` meanwhile (`bookAt`, `live`).
   */
  | { kind: 'loss'; at: number; ts: number; reason: string };

/** One landed delta of the old owner at ts = S − 1 (RecorderStore.landedEnds' `deltasAtLast`), in sequence order. */
export interface LandedDelta {
  side: SideCode;
  price: string;
  quantityDelta: string;
}

/** What the old owner left: where the new owner's responsibility starts, and its last sequence and trade. */
export interface SplicePoint {
  /** The first ms the new owner writes (its snapshot's ts). */
  s: number;
  /** The largest `sequence` the old owner stored for the ticker (0: none). */
  sequence: number;
  /**
   * The ts of the old owner's last stored trade of the ticker (-1: none). Not a filter: every buffered trade is written
   * again (trades are read once by id), because the old owner's trades are not a prefix of ours by ts — a chaos run
   * lost the one trade per exchange that the old owner had not received before a later one it had.
   */
  lastTradeTs: number;
  /**
   * The old owner's landed deltas at ts = S − 1, in sequence order (venue clocks: the new owner writes the rest of
   * that ms; absent or empty: the old owner landed none there). Ignored on a receive clock.
   */
  deltasAtLast?: readonly LandedDelta[];
  /**
   * The old owner's book when it stopped writing the ticker (bookDigest; a release only). On a receive clock (Gemini)
   * the two recorders stamp one venue message with different ms, so a split by time alone records the messages
   * received around S by both; with the digest the new owner splits where its own book was the old owner's last
   * (the nearest such point to S within 2 s, the book its window starts from included) and writes its rows after it,
   * their ts raised to S. Its own book gaps before that point are the old owner's time: one still open at S (its first
   * book arrived after the old owner's last row: a ticker quiet around a restart) is not written.
   */
  digest?: string;
}

export interface SpliceResult {
  /** The book at S was known and written as a snapshot at S (false: a gap from S was written instead). */
  continuous: boolean;
  /**
   * The old owner's landed deltas at S − 1 are not a prefix of the new owner's own deltas there: the two books
   * disagree, and a `divergence` gap from S − 1 to S was written instead of the completion of ms S − 1.
   */
  diverged: boolean;
  /** Deltas written to complete ms S − 1 (the new owner's deltas there beyond the landed prefix). */
  completed: number;
  /** The ticker's sequence after the spliced rows (the recorder's counter continues from here). */
  sequence: number;
  /** The largest ts of a row written (-1: none): the ticker's next rows must not go below it. */
  lastTs: number;
  /** Rows written (snapshot levels count one each). */
  rows: number;
  /**
   * S is older than the buffer's window (RECORDER_STANDBY_BUFFER_MS): the rows from S on were folded out, so a
   * `handover` gap from S was written instead of the book at S.
   */
  beyondWindow: boolean;
  /**
   * The book is still not known after the buffered rows (the standby has no snapshot since S): the ticker's recorder
   * owes a gap from `from` to its next snapshot (its `pendingGap`).
   */
  pendingGap?: { from: number; reason: string };
}

export interface StandbyBufferOptions {
  /**
   * At most this many rows are held over all tickers (a snapshot counts one): past it the oldest rows are folded into
   * their ticker's base book, as the window's trim does (default: no bound).
   */
  maxRows?: number;
  /** Whether an exchange stamps rows with the venue's clock (default: every one does; Gemini's receive clock does not). */
  venueClock?: (exchange: ExchangeKey) => boolean;
}

/** How far (ms of receive time) from the old owner's last row a receive-clock split looks for its book. */
const RECEIVE_MATCH_MS = 2000;

/** A copy of a book, its levels with canonical text (a snapshot row prints `s`, else the canonical quantity). */
function copyBook(book: LocalBook): LocalBook {
  const out = new LocalBook();
  for (const side of [1, 2] as const) {
    const to = out.side(side);
    for (const [price, level] of book.side(side)) to.set(price, { q: level.q, s: level.s, e: 0 });
  }
  return out;
}

/** Equal decimal texts (the store may print a value with other zeros than the recorder). */
function sameDecimal(a: string, b: string): boolean {
  return a === b || parseDecimal(a) === parseDecimal(b);
}

/** One ticker's buffered rows and the book at the buffer's start. */
export class TickerBuffer {
  /** The rows in production order; those before `head` are folded (the array is compacted now and then). */
  private held: BufferedRow[] = [];
  private head = 0;
  /** The book after every row folded out of the window (undefined: not known there). */
  private base: LocalBook | undefined;
  /** The largest ts of a row folded out of the window (-1: none): `bookAt(S)` needs S above it. */
  private foldedTs = -1;
  /** The smallest ts of a row folded out (for `handBack`: what the store would miss). */
  private firstFoldedTs = Number.POSITIVE_INFINITY;
  /** Whether the book is known after the last row buffered (a snapshot since the last gap or loss). */
  private known = false;

  constructor(
    readonly exchange: ExchangeKey,
    readonly ticker: string,
    private readonly venueClock = true,
    /** Told how many rows each trim folded (StandbyBuffer's count and row bound). */
    private readonly onTrim?: (rows: number) => void,
  ) {}

  /** Rows held (tests, metrics). */
  get size(): number {
    return this.held.length - this.head;
  }

  /** The book is known after everything buffered (the standby could take the ticker over now: Redis `live` set). */
  get live(): boolean {
    return this.known;
  }

  push(row: BufferedRow): void {
    this.held.push(row);
    switch (row.kind) {
      case 'snapshot':
        this.known = true;
        break;
      case 'gap':
        if (row.stream === 'book') this.known = false;
        break;
      case 'loss':
        this.known = false;
        break;
      default:
    }
  }

  /** The production time of the oldest row held (+∞: none). */
  oldestAt(): number {
    return this.head < this.held.length ? (this.held[this.head] as BufferedRow).at : Number.POSITIVE_INFINITY;
  }

  /** Folds the rows produced before `before` into the base book. */
  trim(before: number): void {
    const held = this.held;
    let i = this.head;
    while (i < held.length && (held[i] as BufferedRow).at < before) this.fold(held[i++] as BufferedRow);
    const n = i - this.head;
    this.advance(i);
    if (n > 0) this.onTrim?.(n);
  }

  /** How many held rows were produced at or after `at` (production times never go back: a binary search). */
  countFrom(at: number): number {
    const held = this.held;
    let lo = this.head;
    let hi = held.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((held[mid] as BufferedRow).at < at) lo = mid + 1;
      else hi = mid;
    }
    return held.length - lo;
  }

  private fold(row: BufferedRow): void {
    this.base = apply(this.base, row, Number.POSITIVE_INFINITY);
    if (row.ts > this.foldedTs) this.foldedTs = row.ts;
    if (row.ts < this.firstFoldedTs) this.firstFoldedTs = row.ts;
  }

  private advance(i: number): void {
    if (i === this.head) return;
    // Compact once the folded part is most of the array (amortised O(1) per row, no slice per trim).
    if (i === this.held.length) {
      this.held = [];
      this.head = 0;
    } else if (i > 1024 && i * 2 > this.held.length) {
      this.held = this.held.slice(i);
      this.head = 0;
    } else this.head = i;
  }

  private rows(): BufferedRow[] {
    return this.head === 0 ? this.held : this.held.slice(this.head);
  }

  /**
   * The book after every buffered row with ts < `s` (and a snapshot at `s`), as rule 7 would rebuild it from these
   * rows; `undefined` when it is not known there (inside the standby's own gap or loss, before its first snapshot) or
   * when the window no longer reaches back to `s`.
   */
  bookAt(s: number): LocalBook | undefined {
    if (s <= this.foldedTs) return undefined;
    let book = this.base === undefined ? undefined : copyBook(this.base);
    for (const row of this.rows()) book = apply(book, row, s);
    return book;
  }

  /**
   * Writes the takeover rows into `sink` (see the module comment): the rest of ms S − 1 beyond the old owner's
   * landed deltas there (venue clocks; or a `divergence` gap from S − 1 to S when those are not a prefix of ours),
   * the snapshot at S (or a gap from S), then the buffered rows from S on, renumbered from the old owner's sequence.
   */
  splice(point: SplicePoint, sink: RowSink, now: number): SpliceResult {
    const { s } = point;
    const rows = this.rows();
    let written = 0;
    let lastTs = -1;
    let sequence = point.sequence;
    const next = (ts: number) => {
      const floor = ts * 1000;
      sequence = sequence + 1 > floor ? sequence + 1 : floor;
      return sequence;
    };
    // Receive clock with the old owner's last book: split where ours was that book (from = the first row after it).
    const match = !this.venueClock && point.digest !== undefined ? this.matchDigest(point.digest, s) : undefined;
    const from = match?.index ?? -1;
    // The window no longer reaches S (on a venue clock S − 1: completing ms S − 1 needs every own delta there).
    const folded = s <= this.foldedTs || (this.venueClock && s - 1 <= this.foldedTs);
    const book = match?.book ?? (folded ? undefined : this.bookAt(s));
    const continuous = book !== undefined;
    const beyondWindow = !continuous && folded;
    let diverged = false;
    let completed = 0;
    /** A gap opened at S (the book is not known there), closed by the next buffered snapshot. */
    let openGapReason: string | undefined;
    if (book !== undefined) {
      if (this.venueClock) {
        const atLast = (r: BufferedRow): r is Extract<BufferedRow, { kind: 'delta' }> =>
          r.kind === 'delta' && r.ts === s - 1;
        const own = rows.filter(atLast);
        const landed = point.deltasAtLast ?? [];
        const prefix =
          landed.length <= own.length &&
          landed.every((d, i) => {
            const o = own[i] as (typeof own)[number];
            return o.side === d.side && sameDecimal(o.price, d.price) && sameDecimal(o.quantityDelta, d.quantityDelta);
          });
        // Not a prefix, because our book began inside ms S − 1 (a recorder that had just started): a release's digest
        // of the old owner's last book says where in our rows of that ms the two books were one; ours after it
        // complete the ms (two one-ms divergence gaps at a rolling restart in a 30-minute chaos run before this).
        const at = prefix || point.digest === undefined ? undefined : this.matchDigest(point.digest, s, 0, s - 1);
        const completion = prefix
          ? own.slice(landed.length)
          : at === undefined
            ? undefined
            : rows.slice(at.index).filter(atLast);
        if (completion !== undefined) {
          for (const d of completion) {
            sink.delta(
              this.exchange,
              this.ticker,
              d.ts,
              next(d.ts),
              d.side,
              d.price,
              d.quantityDelta,
              d.receivedTs,
              d.venueSeq,
            );
            completed++;
            written++;
          }
        } else {
          diverged = true;
          sink.gap(this.exchange, this.ticker, s - 1, s, 'divergence', now);
          written++;
        }
      }
      sink.snapshot(this.exchange, this.ticker, s, book, now, '');
      written += book.size;
      lastTs = s;
    } else {
      openGapReason = beyondWindow ? 'handover' : this.gapReasonAt(s);
    }
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as BufferedRow;
      if (row.kind === 'loss') continue;
      if (match !== undefined && row.kind !== 'trade' && !(row.kind === 'gap' && row.stream === 'trades')) {
        // Split by the book: the rows after the matching one are ours to write, at S at the earliest; our snapshots
        // and verification points before S repeat what the snapshot at S says. A book gap of ours before the matching
        // row closed at or before it: the old owner's time, even where it reaches past S (our first book arrived after
        // the old owner's last row: a ticker quiet around our start). Trades are split by id, not by the book.
        if (i < from || ((row.kind === 'snapshot' || row.kind === 'verification') && row.ts <= s)) continue;
        if (row.kind === 'delta') {
          const ts = Math.max(row.ts, s);
          sink.delta(
            this.exchange,
            this.ticker,
            ts,
            next(ts),
            row.side,
            row.price,
            row.quantityDelta,
            row.receivedTs,
            row.venueSeq,
          );
          written++;
          if (ts > lastTs) lastTs = ts;
          continue;
        }
      }
      if (row.kind === 'trade') {
        sink.trade({ ...row.trade, sequence: next(row.ts) });
        written++;
        continue;
      }
      if (row.kind === 'gap') {
        // A gap of the standby's own after S is a window both recorders missed; one reaching back before S starts at S.
        // One that ended by S is the old owner's time.
        if (row.toTs <= s) continue;
        const start = Math.max(row.fromTs, s);
        if (openGapReason !== undefined && row.stream === 'book') {
          // The gap opened at S already says the book is unknown from S: this one continues it.
          sink.gap(this.exchange, this.ticker, s, row.toTs, row.reason, row.detectedAt, row.stream);
          openGapReason = undefined;
        } else sink.gap(this.exchange, this.ticker, start, row.toTs, row.reason, row.detectedAt, row.stream);
        written++;
        if (row.stream === 'book' && row.toTs > lastTs) lastTs = row.toTs;
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
          written++;
          if (row.ts > lastTs) lastTs = row.ts;
          break;
        case 'snapshot':
          if (row.ts === s && !openGapReason) continue; // the snapshot at S was just written
          if (openGapReason !== undefined) {
            sink.gap(this.exchange, this.ticker, s, row.ts, openGapReason, now);
            written++;
            openGapReason = undefined;
          }
          sink.snapshot(this.exchange, this.ticker, row.ts, row.book, row.receivedTs, row.venueSeq);
          written += row.book.size;
          if (row.ts > lastTs) lastTs = row.ts;
          break;
        case 'verification':
          if (openGapReason !== undefined) continue;
          sink.verification(this.exchange, this.ticker, row.ts, row.method, row.detectedAt);
          written++;
          break;
      }
    }
    return {
      continuous,
      beyondWindow,
      diverged,
      completed,
      sequence,
      lastTs,
      rows: written,
      ...(openGapReason === undefined ? {} : { pendingGap: { from: s, reason: openGapReason } }),
    };
  }

  /**
   * Writes every held row into `sink` as it was produced (its own sequences: the rows of a ticker this recorder owned
   * and routed here while it offered the ticker to a peer that did not take it), so the stored stream is the one a
   * solo recorder would have written. Rows already folded out of the buffer are not there: if any were, a `handover`
   * gap from the first of them to the next held snapshot replaces them (and the rows before that snapshot), or is
   * owed (`pendingGap`) when none is held. Returns the rows written. The caller drops the buffer afterwards.
   */
  handBack(sink: RowSink, now: number): { rows: number; pendingGap?: { from: number; reason: string } } {
    let written = 0;
    let open = Number.isFinite(this.firstFoldedTs) ? this.firstFoldedTs : undefined;
    for (const row of this.rows()) {
      if (open !== undefined) {
        if (row.kind !== 'snapshot') continue;
        sink.gap(this.exchange, this.ticker, open, row.ts, 'handover', now);
        written++;
        open = undefined;
      }
      switch (row.kind) {
        case 'delta':
          sink.delta(
            this.exchange,
            this.ticker,
            row.ts,
            row.sequence,
            row.side,
            row.price,
            row.quantityDelta,
            row.receivedTs,
            row.venueSeq,
          );
          break;
        case 'snapshot':
          sink.snapshot(this.exchange, this.ticker, row.ts, row.book, row.receivedTs, row.venueSeq);
          break;
        case 'gap':
          sink.gap(this.exchange, this.ticker, row.fromTs, row.toTs, row.reason, row.detectedAt, row.stream);
          break;
        case 'verification':
          sink.verification(this.exchange, this.ticker, row.ts, row.method, row.detectedAt);
          break;
        case 'trade':
          sink.trade(row.trade);
          break;
        case 'loss':
          continue;
      }
      written++;
    }
    return { rows: written, ...(open === undefined ? {} : { pendingGap: { from: open, reason: 'handover' } }) };
  }

  /**
   * Where this buffer's book was the one with `digest`: the index of the first row after that point, and the book
   * there — of the points within `withinMs` of `s` − 1 (and not after `latestTs`), the one whose row's ts is nearest
   * to `s` − 1 (the old owner's last row; the later one on a tie). Undefined: no such point.
   */
  private matchDigest(
    digest: string,
    s: number,
    withinMs = RECEIVE_MATCH_MS,
    latestTs = Number.POSITIVE_INFINITY,
  ): { index: number; book: LocalBook } | undefined {
    const rows = this.rows();
    let book = this.base === undefined ? undefined : copyBook(this.base);
    let best: { index: number; book: LocalBook; distance: number } | undefined;
    // The book the window starts from is a candidate too: a ticker quiet since then has no row to match.
    if (book !== undefined && this.foldedTs <= latestTs) {
      const distance = Math.abs(this.foldedTs - (s - 1));
      if (distance <= withinMs && bookDigest(book) === digest) best = { index: 0, book: copyBook(book), distance };
    }
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as BufferedRow;
      book = apply(book, row, Number.POSITIVE_INFINITY);
      if (book === undefined || (row.kind !== 'delta' && row.kind !== 'snapshot') || row.ts > latestTs) continue;
      const distance = Math.abs(row.ts - (s - 1));
      if (distance > withinMs || (best !== undefined && distance > best.distance)) continue;
      if (bookDigest(book) === digest) best = { index: i + 1, book: copyBook(book), distance };
    }
    return best === undefined ? undefined : { index: best.index, book: best.book };
  }

  /** The reason of the standby's own gap or loss that spans `s` (its book is not known there), or 'handover'. */
  private gapReasonAt(s: number): string {
    let reason = 'handover';
    for (const row of this.rows()) {
      if (row.kind === 'gap' && row.stream === 'book' && row.fromTs < s && row.toTs > s) return row.reason;
      if (row.kind === 'loss' && row.ts < s) reason = row.reason;
      if (row.kind === 'snapshot' && row.ts <= s) reason = 'handover';
    }
    return reason;
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
    case 'loss':
      return row.ts < before ? undefined : book;
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
 * the RoutingSink in front sends its rows to the writer). `now` is the recorder's clock (production time).
 */
export class StandbyBuffer implements RowSink {
  private readonly exchanges = new Map<ExchangeKey, Map<string, TickerBuffer>>();
  private held = 0;
  private readonly maxRows: number;
  private readonly venueClock: (exchange: ExchangeKey) => boolean;
  /** The last ticker written (rows of one ticker tend to come together): saves the lookups. */
  private last: TickerBuffer | undefined;

  constructor(
    private readonly now: () => number,
    options: StandbyBufferOptions = {},
  ) {
    this.maxRows = options.maxRows ?? Number.POSITIVE_INFINITY;
    this.venueClock = options.venueClock ?? (() => true);
  }

  /** The buffer of one ticker (created empty when first asked). */
  of(exchange: ExchangeKey, ticker: string): TickerBuffer {
    const last = this.last;
    if (last !== undefined && last.ticker === ticker && last.exchange === exchange) return last;
    let byTicker = this.exchanges.get(exchange);
    if (byTicker === undefined) {
      byTicker = new Map();
      this.exchanges.set(exchange, byTicker);
    }
    let b = byTicker.get(ticker);
    if (b === undefined) {
      b = new TickerBuffer(exchange, ticker, this.venueClock(exchange), (n) => {
        this.held -= n;
      });
      byTicker.set(ticker, b);
    }
    this.last = b;
    return b;
  }

  /** Whether the standby's book of the ticker is known now (its Redis `live` set). */
  live(exchange: ExchangeKey, ticker: string): boolean {
    return this.exchanges.get(exchange)?.get(ticker)?.live ?? false;
  }

  /** Forgets a ticker's buffer (it was taken over, or left the recording). */
  drop(exchange: ExchangeKey, ticker: string): void {
    const b = this.exchanges.get(exchange)?.get(ticker);
    if (b === undefined) return;
    this.held -= b.size;
    this.exchanges.get(exchange)?.delete(ticker);
    if (this.last === b) this.last = undefined;
  }

  /** Folds every row produced before `before` (the sweep calls it with now − RECORDER_STANDBY_BUFFER_MS). */
  trim(before: number): void {
    for (const byTicker of this.exchanges.values()) {
      for (const b of byTicker.values()) b.trim(before);
    }
  }

  /** Rows held over all tickers. */
  get size(): number {
    return this.held;
  }

  private add(b: TickerBuffer, row: BufferedRow): void {
    b.push(row);
    if (++this.held > this.maxRows) this.shrink();
  }

  /**
   * Past the row bound: the window shrinks. The rows produced before a cutoff are folded, as the time trim does, the
   * cutoff the earliest production time that leaves at most 90 % of the bound held (so this runs once per tenth of
   * the bound, not per row; it costs a binary search over the production times of every ticker).
   */
  private shrink(): void {
    const target = Math.floor(this.maxRows * 0.9);
    const buffers: TickerBuffer[] = [];
    let lo = Number.POSITIVE_INFINITY;
    for (const byTicker of this.exchanges.values()) {
      for (const b of byTicker.values()) {
        buffers.push(b);
        lo = Math.min(lo, b.oldestAt());
      }
    }
    const count = (at: number) => buffers.reduce((n, b) => n + b.countFrom(at), 0);
    // The smallest cutoff in [lo, now + 1] whose rows from there on number at most the target.
    let hi = Math.max(lo, this.now()) + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (count(mid) <= target) hi = mid;
      else lo = mid + 1;
    }
    this.trim(lo);
  }

  delta(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    sequence: number,
    side: SideCode,
    price: string,
    quantityDelta: string,
    receivedTs: number,
    venueSeq: string,
  ): void {
    this.add(this.of(exchange, ticker), {
      kind: 'delta',
      at: this.now(),
      ts,
      sequence,
      side,
      price,
      quantityDelta,
      receivedTs,
      venueSeq,
    });
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
    this.add(this.of(exchange, ticker), {
      kind: 'snapshot',
      at: this.now(),
      ts,
      book: copyBook(book),
      receivedTs,
      venueSeq,
    });
  }

  trade(trade: RecordedTrade): void {
    this.add(this.of(trade.exchange, trade.ticker), { kind: 'trade', at: this.now(), ts: trade.ts, trade });
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
    this.add(this.of(exchange, ticker), {
      kind: 'gap',
      at: this.now(),
      ts: toTs,
      fromTs,
      toTs,
      reason,
      detectedAt,
      stream,
    });
  }

  verification(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    method: VerificationMethod,
    detectedAt: number,
  ): void {
    this.add(this.of(exchange, ticker), { kind: 'verification', at: this.now(), ts, method, detectedAt });
  }

  /** The ticker lost its book at `fromTs` (RowSink.lost): unknown from there until its next snapshot. */
  lost(exchange: ExchangeKey, ticker: string, fromTs: number, reason: string): void {
    this.add(this.of(exchange, ticker), { kind: 'loss', at: this.now(), ts: fromTs, reason });
  }
}
