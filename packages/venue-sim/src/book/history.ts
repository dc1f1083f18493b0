import { OrderBook } from './order-book';
import type { BookEvent, IntBook, Side } from './types';

interface Checkpoint {
  /** The book after every event up to and including `seq`. */
  seq: number;
  ts: number;
  book: IntBook;
}

/**
 * Events kept in growable typed arrays rather than objects: about 12 bytes per event plus 32 per level change, so
 * a minute of a 20k-updates-per-second run stays in the low hundreds of megabytes. Prices and quantities are safe
 * integers, which Float64Array holds exactly.
 */
class EventLog {
  private ts = new Float64Array(1024);
  /** off[i] = start of event i's changes in `ch`; off[i + 1] its end. */
  private off = new Uint32Array(1025);
  private ch = new Float64Array(8192);
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

  push(ts: number, changes: readonly number[]): void {
    if (this.end + 1 >= this.ts.length) {
      this.ts = growF64(this.ts, this.ts.length * 2);
      const off = new Uint32Array(this.off.length * 2);
      off.set(this.off);
      this.off = off;
    }
    const at = this.off[this.end] as number;
    if (at + changes.length > this.ch.length)
      this.ch = growF64(this.ch, Math.max(this.ch.length * 2, at + changes.length));
    this.ch.set(changes, at);
    this.ts[this.end] = ts;
    this.off[this.end + 1] = at + changes.length;
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
    return { seq: this.firstSeq + i, ts: this.tsAt(i), changes: Array.from(this.ch.subarray(from, to)) };
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

  /** Forgets the first `n` retained events; compacts the arrays once most of them are dead space. */
  drop(n: number): void {
    this.begin += Math.min(n, this.length);
    if (this.begin > 4096 && this.begin > this.end / 2) {
      const chFrom = this.off[this.begin] as number;
      const chTo = this.off[this.end] as number;
      this.ch.copyWithin(0, chFrom, chTo);
      this.ts.copyWithin(0, this.begin, this.end);
      for (let i = this.begin; i <= this.end; i++) this.off[i - this.begin] = (this.off[i] as number) - chFrom;
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
    this.log.push(event.ts, event.changes);
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
}
