/**
 * The trades a feed missed, read back (docs/history-internals.md, "Recorder", "Trades"). When a ticker's feed carries its
 * trades again after a window it missed (a disconnect, a stall, a resubscription, a restart), or its periodic audit
 * is due (trades a feed without sequence numbers may lose silently), the window comes here: one exchange's windows are read one at a time from the venue's REST trades, after a short delay (a
 * venue's REST may lag its feed), through the exchange's RestClient (so within its REST rate, shared with discovery
 * and reconciliation) and at most RECORDER_TRADES_BACKFILL_MAX_PAGES requests each. What cannot be read back is a
 * trades gap: where the venue has no trade history, the window from where the feed stopped (`no_backfill`); the whole
 * window when the read failed three times or the recorder stopped first (`backfill_failed`; an audit the stop cut
 * short is left undone instead); the part older than the venue's history or beyond the page budget
 * (`backfill_incomplete`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExchangeKey } from '@depthgate/platforms';
import type { Logger } from '@depthgate/service-kit';
import type { RecorderMetrics } from '../metrics';
import type { OpenTradeWindow, TickerRecorder } from '../ticker';
import type { RestClient } from './rest';
import { canBackfill, type TradeBackfill, type TradeHistory, type TradeWindow } from './trades';

/** Attempts of one window's read (1 s, then 2 s between them) before it is a gap `backfill_failed`. */
export const BACKFILL_ATTEMPTS = 3;

export interface BackfillerOptions {
  exchange: ExchangeKey;
  history: TradeHistory;
  rest: RestClient;
  metrics: Pick<RecorderMetrics, 'backfills' | 'tradesBackfilled'>;
  logger: Logger;
  now: () => number;
  /** Requests one window may make. */
  maxPages: number;
  /** A window is read this long after it closed. */
  delayMs: number;
  /**
   * Whether its windows are still ours to write: the recorder is the one recording its ticker, or its ticker left the
   * recording and has not come back (a comeback's recorder resumes after what this one wrote). Asked before a window is
   * read and again before what was read is written.
   */
  current: (rec: TickerRecorder) => boolean;
  /** A window of the recorder was written (read back, or a gap). */
  settled?: (rec: TickerRecorder) => void;
  /** Base of the pause between attempts (ms; tests shorten it). */
  retryMs?: number;
}

export class TradeBackfiller {
  private readonly queue: { rec: TickerRecorder; window: OpenTradeWindow; notBefore: number }[] = [];
  private running: Promise<void> | undefined;
  private paused = false;
  private stopped = false;
  private readonly stopping = new AbortController();

  constructor(private readonly o: BackfillerOptions) {}

  /** A window the feed missed, now closed: read it back (queued), or record it as a gap. */
  add(rec: TickerRecorder, w: OpenTradeWindow): void {
    const history = this.o.history;
    if (!canBackfill(history)) {
      this.complete(rec, w, [], [{ from: w.gapFrom, to: w.to }], 'no_backfill');
      this.o.metrics.backfills.inc({ exchange: this.o.exchange, kind: w.kind, outcome: 'none' });
      return;
    }
    if (this.stopped) return this.failed(rec, w);
    this.queue.push({ rec, window: w, notBefore: this.o.now() + this.o.delayMs });
    this.running ??= this.run(history).finally(() => {
      this.running = undefined;
    });
  }

  /** Windows waiting or being read. */
  get pending(): number {
    return this.queue.length + (this.running ? 1 : 0);
  }

  /** While the feeds are paused (the spool is full), no window is read. */
  pause(paused: boolean): void {
    this.paused = paused;
  }

  /**
   * Stops reading: the missed windows being read or waiting become gaps `backfill_failed` (after a restart only what
   * follows the stored end is read back); audits waiting are left undone.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await this.running;
    for (const { rec, window } of this.queue.splice(0)) this.failed(rec, window);
  }

  private async run(history: TradeBackfill): Promise<void> {
    const signal = this.stopping.signal;
    for (;;) {
      const job = this.queue[0];
      if (job === undefined || this.stopped) return;
      const wait = this.paused ? 200 : job.notBefore - this.o.now();
      if (wait > 0) {
        // In short steps: a pause or a resume is seen within 200 ms.
        await sleep(Math.min(wait, 200), undefined, { signal }).catch(() => undefined);
        continue;
      }
      this.queue.shift();
      await this.read(job.rec, job.window, history);
    }
  }

  /** TickerRecorder.completeTradeWindow, and `settled`. */
  private complete(
    rec: TickerRecorder,
    ...args: Parameters<TickerRecorder['completeTradeWindow']>
  ): ReturnType<TickerRecorder['completeTradeWindow']> {
    const done = rec.completeTradeWindow(...args);
    this.o.settled?.(rec);
    return done;
  }

  private failed(rec: TickerRecorder, w: OpenTradeWindow, err?: unknown): void {
    if (this.stopped && w.kind === 'audit') {
      // An audit cut short by a stop is left undone, as the window still open is: the feed carried those trades.
      this.complete(rec, w, []);
      this.o.metrics.backfills.inc({ exchange: this.o.exchange, kind: w.kind, outcome: 'abandoned' });
      return;
    }
    this.complete(rec, w, [], [{ from: w.from, to: w.to }], 'backfill_failed');
    this.o.metrics.backfills.inc({ exchange: this.o.exchange, kind: w.kind, outcome: 'failed' });
    this.o.logger.warn(
      { ticker: rec.ticker, from: w.gapFrom, to: w.to, err: err ? { message: (err as Error).message } : undefined },
      'trades backfill failed; the window is a trades gap',
    );
  }

  private async read(rec: TickerRecorder, w: OpenTradeWindow, history: TradeBackfill): Promise<void> {
    const exchange = this.o.exchange;
    if (this.stopped || !this.o.current(rec)) return this.failed(rec, w);
    const missing: { from: number; to: number }[] = [];
    let window: TradeWindow = { from: w.from, to: w.to, last: w.last };
    if (history.reachMs !== undefined) {
      const reach = this.o.now() - history.reachMs;
      if (window.from < reach) {
        // Older than the venue's history: that part is a gap; the rest is read by time.
        missing.push({ from: window.from, to: Math.min(reach, window.to) });
        window = { from: Math.min(reach, window.to), to: window.to };
      }
    }
    if (window.from >= window.to && missing.length > 0) {
      // Nothing left the venue still keeps.
      this.complete(rec, w, [], missing, 'backfill_incomplete');
      this.o.metrics.backfills.inc({ exchange, kind: w.kind, outcome: 'incomplete' });
      return;
    }
    const signal = this.stopping.signal;
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await history.fetch(this.o.rest, rec.ticker, window, { maxPages: this.o.maxPages, signal });
        // Its ticker came back while the window was read (a new recorder resumed from this one's end): not ours now.
        if (!this.o.current(rec)) return this.failed(rec, w);
        if (result.missing) missing.push(result.missing);
        const { recorded, unread } = this.complete(rec, w, result.trades, missing, 'backfill_incomplete');
        this.o.metrics.tradesBackfilled.inc({ exchange }, recorded);
        // A trade the tables cannot hold is a backfill_incomplete gap too: the window is not complete.
        const incomplete = missing.length > 0 || unread > 0;
        this.o.metrics.backfills.inc({ exchange, kind: w.kind, outcome: incomplete ? 'incomplete' : 'complete' });
        if (incomplete) {
          this.o.logger.warn(
            { ticker: rec.ticker, missing, unread },
            'trades backfill could not record the whole window',
          );
        }
        return;
      } catch (err) {
        if (this.stopped || attempt >= BACKFILL_ATTEMPTS) return this.failed(rec, w, err);
        this.o.logger.debug({ ticker: rec.ticker, err: { message: (err as Error).message } }, 'backfill failed');
        await sleep((this.o.retryMs ?? 1000) * 2 ** (attempt - 1), undefined, { signal }).catch(() => undefined);
      }
    }
  }
}
