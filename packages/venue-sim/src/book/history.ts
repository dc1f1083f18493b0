import { OrderBook } from './order-book';
import type { BookEvent, IntBook } from './types';

interface Checkpoint {
  /** The book after every event up to and including `seq`. */
  seq: number;
  ts: number;
  book: IntBook;
}

/**
 * The retained past of one ticker: its emitted events and periodic full-book checkpoints, so that the book at any
 * retained moment can be rebuilt exactly (`at`). Memory is bounded by time (`retentionMs`).
 */
export class TickerHistory {
  private readonly checkpoints: Checkpoint[] = [];
  private events: BookEvent[] = [];
  private sinceCheckpoint = 0;
  private lastCheckpointTs: number;

  constructor(
    initial: IntBook,
    startTs: number,
    private readonly checkpointEvery: number,
    private readonly checkpointEveryMs: number,
  ) {
    this.checkpoints.push({ seq: 0, ts: startTs, book: initial });
    this.lastCheckpointTs = startTs;
  }

  /** Call after `book` has had `event` applied. */
  record(event: BookEvent, book: OrderBook): void {
    this.events.push(event);
    this.sinceCheckpoint++;
    if (this.sinceCheckpoint >= this.checkpointEvery || event.ts - this.lastCheckpointTs >= this.checkpointEveryMs) {
      this.checkpoints.push({ seq: event.seq, ts: event.ts, book: book.snapshot() });
      this.sinceCheckpoint = 0;
      this.lastCheckpointTs = event.ts;
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
    const drop = this.indexAfterSeq(oldest);
    if (drop > 0) this.events = this.events.slice(drop);
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
    for (let i = this.indexAfterSeq(cp.seq); i < this.events.length; i++) {
      const ev = this.events[i] as BookEvent;
      if (ev.ts > ts) break;
      book.applyChanges(ev.changes);
    }
    return book.snapshot();
  }

  /** Retained events with ts >= sinceTs, in order. */
  since(sinceTs = -Infinity): BookEvent[] {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.events[mid] as BookEvent).ts < sinceTs) lo = mid + 1;
      else hi = mid;
    }
    return this.events.slice(lo);
  }

  get retainedEvents(): number {
    return this.events.length;
  }

  /** Index of the first retained event with seq > `seq` (events are kept in seq order without gaps). */
  private indexAfterSeq(seq: number): number {
    const first = this.events[0];
    if (!first) return 0;
    return Math.max(0, Math.min(this.events.length, seq - first.seq + 1));
  }
}
