/**
 * The shapes of `HistoryClient`'s calls: the options each takes and the answers of the history service
 * (docs/history.md) as they are returned.
 */
import type { Level } from './checksum.js';
import type { OrderBook } from './order-book.js';
import type { Bar, BarInterval, DeltaRow, Gap, TradeLine } from './rows.js';
import type { Moment } from './timestamps.js';

/**
 * Extra row fields the service adds when asked (`fields=`): when the recorder received the row, and the venue's own
 * ordering of its message (`venue_seq`: Kalshi `sid:seq`, Coinbase `sequence`, …; empty where the venue has none).
 */
export type ExtraField = 'received_ts' | 'venue_seq';
/**
 * Extra fields of trades: `received_ts`, the venue's own side, the ticker's counter shared with the deltas, and the
 * venue's own ordering of the trade's message.
 */
export type TradeField = 'received_ts' | 'venue_side' | 'sequence' | 'venue_seq';

export interface RangeOptions {
  /** Inclusive lower bound (clamped by the service to the caller's window). */
  start?: Moment;
  /** Inclusive upper bound; omitted: up to the newest row. */
  end?: Moment;
  /** Rows per request (default 100,000; the service's `MAX_LIMIT` is the most it takes). */
  pageSize?: number;
  /** `['received_ts']`: rows carry when the recorder received them; `venue_seq`: the venue's own ordering. */
  fields?: readonly ExtraField[];
  /**
   * `stream` (default): ask for NDJSON and read it as it arrives (a service without streams answers JSON, which is
   * read instead); `pages`: JSON pages of `pageSize` rows.
   */
  transport?: 'stream' | 'pages';
  signal?: AbortSignal;
}

export interface RangeWithGaps extends RangeOptions {
  /** Interleave the recorded gaps overlapping the range as `{type: 'gap', …}` items, in time order. */
  gaps: true;
}

/** `deltas()`'s options: with `trades`, the ticker's trades interleaved (`include=trades`). */
export interface DeltaRangeOptions extends RangeOptions {
  gaps?: boolean;
  /**
   * Interleave the ticker's trades with the deltas in one (`ts`, `sequence`) order, the order they arrived in, as
   * `{type: 'trade', …}` items; with `gaps` also the trades' gaps as `{type: 'trades_gap', …}` items.
   */
  trades?: boolean;
}

/** `trades()`'s options. */
export interface TradeRangeOptions extends Omit<RangeOptions, 'fields'> {
  /** `received_ts`, `venue_side`, `sequence`, `venue_seq`: fields added to every trade. */
  fields?: readonly TradeField[];
  /** Interleave the trades' gaps (where trades may be missing) as `{type: 'gap', …}` items, in time order. */
  gaps?: boolean;
}

/** `bars()`'s options (bars come in JSON pages: no `transport` or `fields`). */
export interface BarRangeOptions {
  /** Inclusive lower bound, rounded up by the service to a bar's start. */
  start?: Moment;
  /** Inclusive upper bound (it cuts the last bar). */
  end?: Moment;
  /** Bars per request (default 100,000). */
  pageSize?: number;
  signal?: AbortSignal;
}

/** One page of rows as the JSON endpoint answers it. */
export interface Page<R> {
  exchange: string;
  ticker: string;
  rows: R[];
  count: number;
  /** Where the next page starts when `limit` cut this one (a service with cursors); null when nothing is left. */
  next_cursor?: string | null;
  /** With `include=gaps`: the gaps among these rows. */
  gaps?: Gap[];
}

export interface PageOptions {
  start?: Moment;
  end?: Moment;
  limit?: number;
  cursor?: string;
  fields?: readonly ExtraField[];
  gaps?: boolean;
  signal?: AbortSignal;
}

/** `deltaPage()`'s options: `trades` interleaves the ticker's trades among the rows (`include=trades`). */
export interface DeltaPageOptions extends PageOptions {
  trades?: boolean;
}

/** `tradePage()`'s options. */
export interface TradePageOptions extends Omit<PageOptions, 'fields'> {
  fields?: readonly TradeField[];
}

/** `barPage()`'s options. */
export interface BarPageOptions {
  start?: Moment;
  end?: Moment;
  limit?: number;
  cursor?: string;
  signal?: AbortSignal;
}

/**
 * A JSON page of deltas with `trades: true`: trade lines among the delta rows (the limit and `count` count both),
 * and with `gaps: true` the trades' gaps in `trades_gaps` beside the book's in `gaps`.
 */
export interface DeltaPage extends Page<DeltaRow | TradeLine> {
  trades_gaps?: Gap[];
}

/** A JSON page of bars (`GET /api/{exchange}/bars/{ticker}`). */
export interface BarPage {
  exchange: string;
  ticker: string;
  interval: BarInterval;
  /** By `ts`; intervals without trades have no bar. */
  rows: Bar[];
  count: number;
  /** Where the next page begins; null: the walk is complete. */
  next_cursor: string | null;
}

/** Rows of one kind inside a coverage window. */
export interface KindCoverage {
  rows: number;
  /** Snapshots only: whole books. */
  books?: number;
  /** First and last `ts` inside the window; null when there is none. */
  first_ts: string | null;
  last_ts: string | null;
}

/**
 * What is recorded for a ticker inside the caller's window (`GET /api/{exchange}/coverage/{ticker}`): first and
 * last `ts` and row counts per kind, and every gap overlapping the window — so "no rows" (recorded, nothing
 * happened) is told apart from "not recorded" (a gap).
 */
export interface Coverage {
  exchange: string;
  ticker: string;
  /** The window actually covered (the request's, clamped to the caller's). */
  start_ts: string;
  end_ts: string | null;
  snapshots: KindCoverage;
  deltas: KindCoverage;
  gaps: Gap[];
  /** The caller's window for the ticker and why it starts there (a service older than the field leaves it out). */
  window?: CallerWindow;
  /** The moments the recorder confirmed its book equal to the venue's, inside the window (a service older than the field leaves it out). */
  verifications?: VerificationCoverage;
}

/** How a recorded book was confirmed equal to the venue's: its REST book, a venue checksum, a venue snapshot. */
export type VerificationMethod = 'rest_book' | 'checksum' | 'snapshot';

/** The verification points inside a coverage window. */
export interface VerificationCoverage {
  count: number;
  first_ts: string | null;
  /** The newest moment the recorded book was confirmed; null: none inside the window. */
  last_ts: string | null;
  methods: Record<VerificationMethod, number>;
}

/**
 * The confirmations around a book's moment: the last at or before it (inside the caller's window) and the first
 * after it, each with its method; null: none. Both set and no gap between them: the book was confirmed on both sides.
 */
export interface BookVerified {
  before: string | null;
  before_method: VerificationMethod | null;
  after: string | null;
  after_method: VerificationMethod | null;
}

/**
 * The caller's window for a ticker and the rule that sets it: `anonymous` (no key: the last day),
 * `max_data_age_days` (the key's limit), `full_history_prefix` (the key's `full_history_prefixes` match the ticker),
 * `full_history` (a key without a limit).
 */
export interface CallerWindow {
  /** The earliest `ts` the caller may read. */
  start_ts: string;
  rule: 'anonymous' | 'max_data_age_days' | 'full_history_prefix' | 'full_history';
  /** Days the rule allows; null for full history. */
  days: number | null;
}

export interface ServiceBookHead {
  exchange: string;
  ticker: string;
  /** The moment asked for (now when none was). */
  at: string;
  /** The confirmations around `at` (docs/history.md, "Verified books"). */
  verified: BookVerified;
}

/**
 * The service's book at a moment (`GET /api/{exchange}/book/{ticker}?at=&depth=`): rule 7 on the server.
 * `in_gap`: the moment lies in a recorded gap, so there is no book; `no_data`: nothing to start from.
 */
export type ServiceBook = ServiceBookHead &
  (
    | {
        status: 'ok';
        /** The snapshot the book was built from; null when it restarted empty at the end of `base_gap`. */
        snapshot_ts: string | null;
        /** The last delta applied (null: none since the snapshot). */
        last_delta: { ts: string; sequence: number } | null;
        gap: null;
        base_gap: Gap | null;
        bids: Level[];
        asks: Level[];
      }
    | {
        status: 'in_gap';
        snapshot_ts: null;
        last_delta: null;
        gap: Gap;
        base_gap: null;
        bids: null;
        asks: null;
      }
    | {
        status: 'no_data';
        snapshot_ts: null;
        last_delta: null;
        gap: null;
        base_gap: null;
        bids: null;
        asks: null;
      }
  );

/**
 * What `replay()` yields. `ts` is the moment as the rows spell it (UTC RFC 3339 with milliseconds, the same text as
 * the rows' `ts`), `at` the same moment in epoch milliseconds (for arithmetic).
 */
export type ReplayEvent =
  /** The book after every delta with this `ts` (the same `OrderBook` each time: copy what you keep). */
  | { type: 'book'; ts: string; at: number; book: OrderBook }
  /** A recorded gap: no book is given for `[from_ts, to_ts)`; the replay resumes from the next snapshot. */
  | { type: 'gap'; gap: Gap }
  /** A snapshot inside the range: the replayed book was checked against it (or restarted from it after a gap). */
  | { type: 'snapshot'; ts: string; at: number; book: OrderBook; restarted: boolean };

/**
 * What `events()` yields, in (`ts`, `sequence`) order — the order the book's changes and the trades arrived in. `ts`
 * is the moment as the rows spell it, `at` the same moment in epoch milliseconds. The book is the same `OrderBook`
 * each time, kept current: copy (`clone()`) what you keep.
 */
export type MarketEvent =
  /**
   * One change of the book, applied: `book` is the book after it. Changes sharing a `ts` come one by one, and the
   * book may cross between two of them (a venue's whole-book update is recorded level by level): the cross check
   * runs once the moment is complete, before the next event of a later `ts`.
   */
  | { type: 'delta'; ts: string; at: number; delta: DeltaRow; book: OrderBook }
  /**
   * A trade, in the order it arrived among the changes: `book` is the book current then (a trade changes nothing by
   * itself: the changes the venue sent for it follow). `null` inside a recorded gap of the book, where there is no
   * book: the trade is still given.
   */
  | { type: 'trade'; ts: string; at: number; trade: TradeLine; book: OrderBook | null }
  /** A recorded snapshot: the book was checked against it (or restarted from it after a gap). */
  | { type: 'snapshot'; ts: string; at: number; book: OrderBook; restarted: boolean }
  /** A recorded gap of the book: no book for `[from_ts, to_ts)`; it resumes from the next snapshot. */
  | { type: 'gap'; gap: Gap }
  /** A recorded gap of the trades: trades of `[from_ts, to_ts)` may be missing (the book is not affected). */
  | { type: 'trades_gap'; gap: Gap };

export interface ReplayOptions {
  /** First moment of interest (the replay starts from the latest snapshot at or before it). */
  from: Moment;
  /** Last moment (inclusive); omitted: up to the newest row. */
  to?: Moment;
  /** Rows per request of the underlying streams (see `RangeOptions.pageSize`). */
  pageSize?: number;
  /** How far back to look for the starting snapshot (default 1 day; the recorder writes one every 5 minutes). */
  lookbackMs?: number;
  /** Gaps as `gap` events (default) or as a `BookError` (`in_gap`) that ends the replay. */
  onGap?: 'event' | 'error';
  /**
   * Check the replayed book against every recorded snapshot of the range (default true; a difference outside a gap
   * is a `snapshot_mismatch` error). `false` reads only the deltas (and the snapshot that ends a gap): about half
   * the work where a ticker's snapshots hold as many rows as its deltas.
   */
  verifySnapshots?: boolean;
  signal?: AbortSignal;
}

/** `events()`'s options: `replay()`'s, and receive times. */
export interface EventsOptions extends ReplayOptions {
  /** `['received_ts']`: deltas and trades carry when the recorder received them. */
  fields?: readonly ExtraField[];
  /** Gaps (of the book and of the trades) as events (default) or as a `BookError` (`in_gap`) that ends the walk. */
  onGap?: 'event' | 'error';
}
