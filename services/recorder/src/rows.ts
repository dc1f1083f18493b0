import type { ExchangeKey } from '@depthgate/platforms';
import type { LocalBook, SideCode } from '@depthgate/feeds';
import type { GapStream, TradeSide, VerificationMethod } from '@depthgate/history-store';

/**
 * Where a ticker's rows go (the writer's batches, or a list in tests). Calls arrive in the order the rows must
 * take effect: a gap, then the snapshot that closes it, then deltas. Every value is already validated: tickers match
 * the ticker grammar, timestamps and sequences are safe non-negative integers, decimals are exact decimal text.
 * `receivedTs` is the recorder's receive clock (epoch ms, never going backwards): for a delta, when its message
 * arrived; for a snapshot, when the newest message it reflects arrived. `venueSeq` is the venue's own ordering of the
 * message a row came from (Kalshi `sid:seq`, Coinbase `sequence`; history-store VENUE_SEQ_PATTERN), '' where the
 * protocol has none or the row is the recorder's own (a cadence snapshot of our book).
 */
/**
 * One trade at the venue's `ts` (the same whichever path brought it), `sequence` from the ticker's counter shared with
 * its deltas; `price` and `size` canonical decimal text (price on the book's scale), `side` the taker's side
 * normalised to the book, `venueSide` the venue's own side field as sent, `tradeId` the venue's id or a deterministic
 * one (both printable ASCII without tab or backslash, at most 128 characters).
 */
export interface RecordedTrade {
  exchange: ExchangeKey;
  ticker: string;
  ts: number;
  sequence: number;
  tradeId: string;
  price: string;
  size: string;
  side: TradeSide;
  venueSide: string;
  receivedTs: number;
  /** The venue's ordering of the message that brought it ('' for none, and for trades read back from REST). */
  venueSeq: string;
}

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
    venueSeq: string,
  ): void;
  /** Every level of `book` as one snapshot at `ts` (the book after every delta with ts < `ts`). */
  snapshot(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    book: LocalBook,
    receivedTs: number,
    venueSeq: string,
  ): void;
  /** One trade (RecordedTrade). */
  trade(trade: RecordedTrade): void;
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
  /**
   * A verification point: the recorder's book equalled the venue's at `ts` (`method`: a venue snapshot or whole book,
   * a matching REST book, a matching venue checksum), established at `detectedAt` (TickerRecorder coalesces them).
   */
  verification(exchange: ExchangeKey, ticker: string, ts: number, method: VerificationMethod, detectedAt: number): void;
  /**
   * Redundant recording only (TickerEnv.onLost set): the ticker lost its book at `fromTs` (its gap row follows when
   * the fresh book arrives). Not a row: the standby's buffer marks its book unknown from there meanwhile.
   */
  lost?(exchange: ExchangeKey, ticker: string, fromTs: number, reason: GapReason): void;
}

/** 9999-12-31T23:59:59.999Z: the last moment RFC 3339 text (and so the history API) can name. */
export const LAST_ROW_TS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A venue time a row can carry: integer epoch ms from 1970 to 9999 (RFC 3339's four-digit years). */
export function isRowTs(ts: unknown): ts is number {
  return typeof ts === 'number' && Number.isSafeInteger(ts) && ts >= 0 && ts <= LAST_ROW_TS;
}

/** `ts` when a row can carry it (`isRowTs`); throws RangeError on another (a malformed message). */
export function checkedRowTs(ts: number, what: string): number {
  if (!isRowTs(ts)) throw new RangeError(`${what} ${String(ts)} is not a time a row can carry`);
  return ts;
}

/** Why a series stopped being continuous; the `reason` of a gap row and the label of `recorder_gaps_total`. */
export const GAP_REASONS = [
  /** The feed connection closed or failed. */
  'disconnect',
  /** Nothing arrived (not even a heartbeat) within RECORDER_STALL_TIMEOUT_MS; the connection was replaced. */
  'stall',
  /** Kalshi: a `seq` was skipped on the ticker's subscription, and the fresh snapshot differed from our book. */
  'sequence_gap',
  /**
   * The venue's own book — a checksum (Polymarket CLOB's `hash`) that a REST book confirmed, a REST book on the
   * reconciliation schedule, a resubscription's snapshot — differed from ours: from the last verified moment (a
   * `verifications` point) to the detection; the book re-bases on the venue's. (Rows stored before it was used carry
   * `reconcile_mismatch` for a REST book and `snapshot_mismatch` for a snapshot: still read, no longer written.)
   */
  'divergence',
  /** A delta would have made a level negative: our book had missed something. */
  'book_inconsistent',
  /** The recorder (re)started on a ticker that already had rows: the time it was not running. */
  'recorder_start',
  /** The ticker left the recording (its market closed or left the configuration) and came back. */
  'resubscribe',
  /**
   * A venue message could not be read (not JSON, cut short, a field its kind needs missing or malformed): the books
   * it may have changed — its ticker's, or every ticker of the connection when it names none readably — are in doubt
   * from the last verified moment until the venue's fresh book (counted in `recorder_malformed_messages_total`).
   */
  'malformed_message',
  /**
   * Redundant recording: the new owner of a ticker could not continue the series at the splice point: neither
   * recorder has the book there (the new owner's buffer was not live at the splice point or does not reach back to
   * it); from the splice point to the new owner's next snapshot.
   */
  'handover',
] as const;
export type GapReason = (typeof GAP_REASONS)[number];

/**
 * Why trades may be missing in a window (a gap with `stream` `trades`; the label of `recorder_trade_gaps_total`).
 * A window opens when the feed stops carrying a ticker's trades (a disconnect, a stall, a resubscription, a restart:
 * the book's gap says which) and closes when it carries them again; the recorder reads the window's trades back from
 * the venue's REST API where it has one, and records a trades gap for what it could not read. The trade count audit
 * records one for trades a venue counts that its feed never brought (`missed_trades`).
 */
export const TRADE_GAP_REASONS = [
  /** The venue publishes no trade history (Polymarket US): the window's trades cannot be read back. */
  'no_backfill',
  /** Reading the window back failed (REST errors after retries, or the recorder stopped first). */
  'backfill_failed',
  /**
   * The venue's history did not reach back far enough, or the window needed more requests than its budget, or a trade
   * it gave back could not be read (a gap at that trade's moment).
   */
  'backfill_incomplete',
  /**
   * The venue's book messages count more traded quantity than the feed's trades brought (Polymarket US
   * `stats.sharesTraded`): trade messages were lost silently between two book messages (the trade count audit).
   */
  'missed_trades',
] as const;
export type TradeGapReason = (typeof TRADE_GAP_REASONS)[number];
