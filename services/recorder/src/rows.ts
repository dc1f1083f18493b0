import type { ExchangeKey } from '@depthgate/platforms';
import type { LocalBook, SideCode } from '@depthgate/feeds';
import type { GapStream } from '@depthgate/history-store';

/**
 * Where a ticker's rows go (the writer's batches, or a list in tests). Calls arrive in the order the rows must
 * take effect: a gap, then the snapshot that closes it, then deltas. Every value is already validated: tickers match
 * the ticker grammar, timestamps and sequences are safe non-negative integers, decimals are exact decimal text.
 * `receivedTs` is the recorder's receive clock (epoch ms, never going backwards): for a delta, when its message
 * arrived; for a snapshot, when the newest message it reflects arrived.
 */
export interface RowSink {
  delta(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    sequence: number,
    side: SideCode,
    price: string,
    quantityDelta: string,
    receivedTs: number,
  ): void;
  /** Every level of `book` as one snapshot at `ts` (the book after every delta with ts < `ts`). */
  snapshot(exchange: ExchangeKey, ticker: string, ts: number, book: LocalBook, receivedTs: number): void;
  /** A gap of the book (default) or of the trades (`stream`). */
  gap(
    exchange: ExchangeKey,
    ticker: string,
    fromTs: number,
    toTs: number,
    reason: string,
    detectedAt: number,
    stream?: GapStream,
  ): void;
}

/** Why a series stopped being continuous; the `reason` of a gap row and the label of `recorder_gaps_total`. */
export const GAP_REASONS = [
  /** The feed connection closed or failed. */
  'disconnect',
  /** Nothing arrived (not even a heartbeat) within RECORDER_STALL_TIMEOUT_MS; the connection was replaced. */
  'stall',
  /** Kalshi: a `seq` was skipped on the ticker's subscription, and the fresh snapshot differed from our book. */
  'sequence_gap',
  /** The venue's REST book did not match ours (Gemini, whose feed has neither sequence nor timestamps). */
  'reconcile_mismatch',
  /** A delta would have made a level negative: our book had missed something. */
  'book_inconsistent',
  /** A fresh venue snapshot differed from our book without any other sign of loss. */
  'snapshot_mismatch',
  /** The recorder (re)started on a ticker that already had rows: the time it was not running. */
  'recorder_start',
  /** The ticker left the recording (its market closed or left the configuration) and came back. */
  'resubscribe',
] as const;
export type GapReason = (typeof GAP_REASONS)[number];
