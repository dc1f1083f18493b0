/**
 * `HistoryClient`: the history service (`services/history`, docs/history.md) as typed calls and async iterators.
 *
 * - `tickers`, and `snapshots` / `deltas` as async iterators over a whole range: they ask for the NDJSON stream
 *   and follow its `next_cursor` when it stops early; against a service that answers JSON only they page, following
 *   `next_cursor` where the page has one and `start_ts` otherwise (snapshots by whole books, deltas skipping the
 *   `sequence` values already seen at the last `ts`).
 * - `coverage`, `book` (the service's book at a moment), and rule 7 on this side: `rebuild` (an `OrderBook` at a
 *   moment) and `replay` (the book after each moment of a range, gaps reported, never papered over).
 *
 * Rows are checked as they are parsed; a malformed row, a cut stream or an error answer is a typed error
 * (errors.ts), never a short or wrong result.
 *
 * The class is the face: history-requests.ts makes the one-request calls and checks their answers,
 * history-series.ts reads a range's rows (streams and pages), history-replay.ts applies rule 7, and
 * history-types.ts holds the options and answers.
 */
import { Transport, type ClientOptions } from './http.js';
import { assertMoment, getBook, getCoverage, getPage, getTickers } from './history-requests.js';
import { rebuildAt, walk } from './history-replay.js';
import { flatten, series } from './history-series.js';
import type {
  Coverage,
  Page,
  PageOptions,
  RangeOptions,
  RangeWithGaps,
  ReplayEvent,
  ReplayOptions,
  ServiceBook,
} from './history-types.js';
import type { OrderBook } from './order-book.js';
import type { DeltaRow, GapMarker, SnapshotRow } from './rows.js';
import type { Moment } from './timestamps.js';

export type { ClientOptions } from './http.js';

export class HistoryClient {
  private readonly http: Transport;

  constructor(options: ClientOptions) {
    this.http = new Transport(options);
  }

  /** Tickers of an exchange with data in the caller's window, sorted; `prefix` filters case-insensitively. */
  tickers(exchange: string, options: { prefix?: string; signal?: AbortSignal } = {}): Promise<string[]> {
    return getTickers(this.http, exchange, options);
  }

  /** Every snapshot row of a range, in order (books whole, bids then asks by price). */
  snapshots(exchange: string, ticker: string, options?: RangeOptions): AsyncGenerator<SnapshotRow>;
  snapshots(exchange: string, ticker: string, options: RangeWithGaps): AsyncGenerator<SnapshotRow | GapMarker>;
  snapshots(exchange: string, ticker: string, options: RangeOptions & { gaps?: boolean } = {}) {
    return flatten(series(this.http, 'snapshot', exchange, ticker, options));
  }

  /** Every delta row of a range, in (ts, sequence) order. */
  deltas(exchange: string, ticker: string, options?: RangeOptions): AsyncGenerator<DeltaRow>;
  deltas(exchange: string, ticker: string, options: RangeWithGaps): AsyncGenerator<DeltaRow | GapMarker>;
  deltas(exchange: string, ticker: string, options: RangeOptions & { gaps?: boolean } = {}) {
    return flatten(series(this.http, 'delta', exchange, ticker, options));
  }

  /** One JSON page of snapshot rows (the spec's endpoint as it answers). */
  snapshotPage(exchange: string, ticker: string, options: PageOptions = {}): Promise<Page<SnapshotRow>> {
    return getPage(this.http, 'snapshot', exchange, ticker, options);
  }

  /** One JSON page of delta rows. */
  deltaPage(exchange: string, ticker: string, options: PageOptions = {}): Promise<Page<DeltaRow>> {
    return getPage(this.http, 'delta', exchange, ticker, options);
  }

  /** What is recorded for a ticker in a window, and every gap overlapping it. */
  coverage(
    exchange: string,
    ticker: string,
    options: { start?: Moment; end?: Moment; signal?: AbortSignal } = {},
  ): Promise<Coverage> {
    return getCoverage(this.http, exchange, ticker, options);
  }

  /** The service's own book at a moment (rule 7 on the server); `at` omitted: the newest state. */
  book(
    exchange: string,
    ticker: string,
    options: { at?: Moment; depth?: number; signal?: AbortSignal } = {},
  ): Promise<ServiceBook> {
    return getBook(this.http, exchange, ticker, options);
  }

  /**
   * Rule 7 here, as the service applies it: the latest snapshot at or before `at` (looked for up to `lookbackMs`
   * back, default 1 day) and every delta from its `ts` up to `at` inclusive — or, when a recorded gap ended after
   * that snapshot without one (a gap closed by an empty book), an empty book at the gap's end and the deltas from
   * there. The book is settled (cross-checked). Throws `in_gap` when `at` lies in a recorded gap (known through
   * `coverage`) and `no_snapshot` when there is nothing to start from.
   */
  rebuild(
    exchange: string,
    ticker: string,
    at: Moment,
    options: { lookbackMs?: number; signal?: AbortSignal } = {},
  ): Promise<OrderBook> {
    return rebuildAt(this.http, exchange, ticker, at, options);
  }

  /**
   * The book after each moment from `from` to `to`: starts from the latest snapshot at or before `from` and
   * applies the deltas in order, yielding a `book` event after each `ts` from `from` on. Every later snapshot is
   * checked against the replayed book (a difference outside a gap is a `snapshot_mismatch` error). A recorded gap
   * yields a `gap` event (or throws `in_gap` with `onGap: 'error'`): no book is given inside it, and the replay
   * restarts from the snapshot at its end (an empty book when the gap left none), with a `snapshot` event saying so.
   */
  replay(exchange: string, ticker: string, options: ReplayOptions): AsyncGenerator<ReplayEvent> {
    const from = assertMoment(options.from, 'from') as number;
    const to = assertMoment(options.to, 'to');
    return walk(this.http, undefined, exchange, ticker, from, to, options);
  }
}
