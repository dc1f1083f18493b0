import { OrderBook } from './order-book';
import { type BookEvent, type IntBook, NO_TRADES, type Side, type TimedTrade, type Trade } from './types';

interface Checkpoint {
  /** The book after every event up to and including `seq`. */
  seq: number;
  ts: number;
  book: IntBook;
}

/** Fields per retained trade in `TradeLog.t`: no, taker side, price, size, ts, seq. */
const TRADE_FIELDS = 6;

/**
 * Trades kept like the events (flat, in a growable Float64Array, 48 bytes each), in the order made: the trade
 * numbered `no` sits at index `no - base`. An event's trades are a contiguous run of it.
 */
class TradeLog {
  private t = new Float64Array(1024 * TRADE_FIELDS);
  begin = 0;
  end = 0;
  /** `no` of the trade at index 0 of the array. */
  private base = 1;

  get length(): number {
    return this.end - this.begin;
  }

  /** Number of the oldest retained trade (one past the last when none is retained). */
  get firstNo(): number {
    return this.base + this.begin;
  }

  push(ts: number, seq: number, trades: readonly Trade[]): void {
    if ((this.end + trades.length) * TRADE_FIELDS > this.t.length)
      this.t = growF64(this.t, Math.max(this.t.length * 2, (this.end + trades.length) * TRADE_FIELDS));
    for (const tr of trades) {
      const at = this.end * TRADE_FIELDS;
      this.t[at] = tr.no;
      this.t[at + 1] = tr.takerSide;
      this.t[at + 2] = tr.price;
      this.t[at + 3] = tr.size;
      this.t[at + 4] = ts;
      this.t[at + 5] = seq;
      this.end++;
    }
  }

  /** The trade at absolute array index `i` (begin <= i < end). */
  at(i: number): TimedTrade {
    const at = i * TRADE_FIELDS;
    const t = this.t;
    return {
      no: t[at] as number,
      takerSide: t[at + 1] as Side,
      price: t[at + 2] as number,
      size: t[at + 3] as number,
      ts: t[at + 4] as number,
      seq: t[at + 5] as number,
    };
  }

  tsAt(i: number): number {
    return this.t[i * TRADE_FIELDS + 4] as number;
  }

  /** Forgets the trades before absolute index `i` (the event log compacts both, `compact`). */
  dropTo(i: number): void {
    this.begin = Math.max(this.begin, Math.min(i, this.end));
  }

  /** Compacts, moving index `begin` to 0; returns the shift applied to absolute indexes. */
  compact(): number {
    const shift = this.begin;
    if (shift === 0) return 0;
    this.t.copyWithin(0, shift * TRADE_FIELDS, this.end * TRADE_FIELDS);
    this.base += shift;
    this.end -= shift;
    this.begin = 0;
    return shift;
  }
}

/**
 * Events kept in growable typed arrays rather than objects: about 16 bytes per event plus 32 per level change and
 * 48 per trade, so a minute of a 20k-updates-per-second run stays in the low hundreds of megabytes. Prices and
 * quantities are safe integers, which Float64Array holds exactly.
 */
class EventLog {
  private ts = new Float64Array(1024);
  /** off[i] = start of event i's changes in `ch`; off[i + 1] its end. */
  private off = new Uint32Array(1025);
  private ch = new Float64Array(8192);
  /** toff[i] = absolute index in `trades` of event i's first trade; toff[i + 1] one past its last. */
  private toff = new Uint32Array(1025);
  readonly trades = new TradeLog();
  private begin = 0;
  private end = 0;
  /** seq of the event at index 0 of the arrays. */
  private base = 1;

  get length(): number {
    return this.end - this.begin;
  }

  get firstSeq(): number {
    return this.base + this.begin;
  }

  push(ts: number, seq: number, changes: readonly number[], trades: readonly Trade[]): void {
    if (this.end + 1 >= this.ts.length) {
      this.ts = growF64(this.ts, this.ts.length * 2);
      this.off = growU32(this.off, this.off.length * 2);
      this.toff = growU32(this.toff, this.toff.length * 2);
    }
    const at = this.off[this.end] as number;
    if (at + changes.length > this.ch.length)
      this.ch = growF64(this.ch, Math.max(this.ch.length * 2, at + changes.length));
    this.ch.set(changes, at);
    this.ts[this.end] = ts;
    this.off[this.end + 1] = at + changes.length;
    if (trades.length > 0) this.trades.push(ts, seq, trades);
    this.toff[this.end + 1] = this.trades.end;
    this.end++;
  }

  /** Index (into the retained events, 0-based) of seq. */
  indexOfSeq(seq: number): number {
    return seq - this.firstSeq;
  }

  tsAt(i: number): number {
    return this.ts[this.begin + i] as number;
  }

  applyTo(book: OrderBook, i: number): void {
    const from = this.off[this.begin + i] as number;
    const to = this.off[this.begin + i + 1] as number;
    for (let k = from; k < to; k += 4) {
      book.sideOf(this.ch[k] as Side).set(this.ch[k + 1] as number, this.ch[k + 2] as number);
    }
  }

  event(i: number): BookEvent {
    const from = this.off[this.begin + i] as number;
    const to = this.off[this.begin + i + 1] as number;
    const tFrom = this.toff[this.begin + i] as number;
    const tTo = this.toff[this.begin + i + 1] as number;
    let trades: readonly Trade[] = NO_TRADES;
    if (tTo > tFrom) {
      const list: Trade[] = [];
      for (let k = tFrom; k < tTo; k++) {
        const { no, takerSide, price, size } = this.trades.at(k);
        list.push({ no, takerSide, price, size });
      }
      trades = list;
    }
    return { seq: this.firstSeq + i, ts: this.tsAt(i), changes: Array.from(this.ch.subarray(from, to)), trades };
  }

  /** First retained index whose ts >= `ts` (binary search; ts never decreases). */
  lowerBoundTs(ts: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tsAt(mid) < ts) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Forgets the first `n` retained events (and their trades); compacts the arrays once most of them are dead space. */
  drop(n: number): void {
    this.begin += Math.min(n, this.length);
    this.trades.dropTo(this.toff[this.begin] as number);
    if (this.begin > 4096 && this.begin > this.end / 2) {
      const chFrom = this.off[this.begin] as number;
      const chTo = this.off[this.end] as number;
      this.ch.copyWithin(0, chFrom, chTo);
      this.ts.copyWithin(0, this.begin, this.end);
      for (let i = this.begin; i <= this.end; i++) this.off[i - this.begin] = (this.off[i] as number) - chFrom;
      const shift = this.trades.compact();
      for (let i = this.begin; i <= this.end; i++) this.toff[i - this.begin] = (this.toff[i] as number) - shift;
      this.base += this.begin;
      this.end -= this.begin;
      this.begin = 0;
    }
  }
}

function growF64(a: Float64Array, size: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(size);
  b.set(a);
  return b;
}

function growU32(a: Uint32Array, size: number): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(size);
  b.set(a);
  return b;
}

/**
 * The retained past of one ticker: its emitted events and periodic full-book checkpoints, so that the book at any
 * retained moment can be rebuilt exactly (`at`). Memory is bounded by time (`prune`) and by a count (`maxEvents`).
 */
export class TickerHistory {
  private readonly checkpoints: Checkpoint[] = [];
  private readonly log = new EventLog();
  private sinceCheckpoint = 0;
  private lastCheckpointTs: number;

  constructor(
    initial: IntBook,
    startTs: number,
    private readonly checkpointEvery: number,
    private readonly checkpointEveryMs: number,
    private readonly maxEvents = Infinity,
  ) {
    this.checkpoints.push({ seq: 0, ts: startTs, book: initial });
    this.lastCheckpointTs = startTs;
  }

  /** Call after `book` has had `event` applied. */
  record(event: BookEvent, book: OrderBook): void {
    this.log.push(event.ts, event.seq, event.changes, event.trades);
    this.sinceCheckpoint++;
    if (this.sinceCheckpoint >= this.checkpointEvery || event.ts - this.lastCheckpointTs >= this.checkpointEveryMs) {
      this.checkpoints.push({ seq: event.seq, ts: event.ts, book: book.snapshot() });
      this.sinceCheckpoint = 0;
      this.lastCheckpointTs = event.ts;
      if (this.log.length > this.maxEvents) this.prune(this.log.tsAt(this.log.length - this.maxEvents));
    }
  }

  /** Forgets what lies before `cutoffTs`, keeping enough to rebuild the book at `cutoffTs` itself. */
  prune(cutoffTs: number): void {
    let keep = 0;
    for (let i = 0; i < this.checkpoints.length; i++) {
      if ((this.checkpoints[i] as Checkpoint).ts <= cutoffTs) keep = i;
      else break;
    }
    if (keep === 0) return;
    this.checkpoints.splice(0, keep);
    const oldest = (this.checkpoints[0] as Checkpoint).seq;
    this.log.drop(oldest - this.log.firstSeq + 1);
  }

  /** Earliest moment `at` can answer for. */
  get oldestTs(): number {
    return (this.checkpoints[0] as Checkpoint).ts;
  }

  /** The book as of `ts` (every event with ts <= `ts` applied), or undefined before the retained window. */
  at(ts: number): IntBook | undefined {
    let lo = 0;
    let hi = this.checkpoints.length - 1;
    if (hi < 0 || (this.checkpoints[0] as Checkpoint).ts > ts) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.checkpoints[mid] as Checkpoint).ts <= ts) lo = mid;
      else hi = mid - 1;
    }
    const cp = this.checkpoints[lo] as Checkpoint;
    const book = OrderBook.from(cp.book);
    for (let i = Math.max(0, this.log.indexOfSeq(cp.seq + 1)); i < this.log.length; i++) {
      if (this.log.tsAt(i) > ts) break;
      this.log.applyTo(book, i);
    }
    return book.snapshot();
  }

  /** Retained events with ts >= sinceTs, in order. */
  since(sinceTs = -Infinity): BookEvent[] {
    const out: BookEvent[] = [];
    for (let i = this.log.lowerBoundTs(sinceTs); i < this.log.length; i++) out.push(this.log.event(i));
    return out;
  }

  /** The last retained event, if any. */
  last(): BookEvent | undefined {
    return this.log.length ? this.log.event(this.log.length - 1) : undefined;
  }

  get retainedEvents(): number {
    return this.log.length;
  }

  /** Number of the oldest retained trade; `lastTradeNo` + 1 when none is retained. */
  get firstTradeNo(): number {
    return this.log.trades.firstNo;
  }

  /** Number of the newest retained trade (firstTradeNo − 1 when none is). */
  get lastTradeNo(): number {
    return this.log.trades.firstNo + this.log.trades.length - 1;
  }

  /** A retained trade by number. */
  trade(no: number): TimedTrade | undefined {
    const tl = this.log.trades;
    const i = tl.begin + (no - tl.firstNo);
    return i >= tl.begin && i < tl.end ? tl.at(i) : undefined;
  }

  /** Number of the first retained trade with ts >= `ts` (lastTradeNo + 1 when none). */
  tradeNoAtOrAfter(ts: number): number {
    const tl = this.log.trades;
    let lo = tl.begin;
    let hi = tl.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (tl.tsAt(mid) < ts) lo = mid + 1;
      else hi = mid;
    }
    return tl.firstNo + (lo - tl.begin);
  }

  /** Retained trades with ts >= sinceTs, oldest first. */
  trades(sinceTs = -Infinity): TimedTrade[] {
    const out: TimedTrade[] = [];
    for (let no = this.tradeNoAtOrAfter(sinceTs); no <= this.lastTradeNo; no++) out.push(this.trade(no) as TimedTrade);
    return out;
  }
}
