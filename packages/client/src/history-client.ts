/**
 * `HistoryClient`: the history service (`services/history`, docs/history.md) as typed calls and async iterators.
 *
 * - `tickers`, and `snapshots` / `deltas` / `trades` as async iterators over a whole range: they ask for the NDJSON
 *   stream and follow its `next_cursor` when it stops early; against a service that answers JSON only they page,
 *   following `next_cursor` where the page has one and `start_ts` otherwise (snapshots by whole books, deltas
 *   skipping the `sequence` values already seen at the last `ts`). `deltas` with `trades` interleaves the trades;
 *   `bars` walks the OHLCV bars' JSON pages.
 * - `coverage`, `book` (the service's book at a moment), and rule 7 on this side: `rebuild` (an `OrderBook` at a
 *   moment), `replay` (the book after each moment of a range, gaps reported, never papered over) and `events` (every
 *   change and every trade of a range in the order they arrived, the book kept current).
 *
 * Rows are checked as they are parsed; a malformed row, a cut stream or an error answer is a typed error
 * (errors.ts), never a short or wrong result.
 *
 * The class is the face: history-requests.ts makes the one-request calls and checks their answers,
 * history-series.ts reads a range's rows (streams and pages), history-replay.ts applies rule 7, and
 * history-types.ts holds the options and answers.
 */
import { Transport, type ClientOptions } from './http.js';
import { assertInterval, assertMoment, getBook, getCoverage, getPage, getTickers } from './history-requests.js';
import { rebuildAt, walk } from './history-replay.js';
import { flatten, series } from './history-series.js';
import type {
  BarPage,
  BarPageOptions,
  BarRangeOptions,
  Coverage,
  DeltaPage,
  DeltaPageOptions,
  DeltaRangeOptions,
  EventsOptions,
  MarketEvent,
  Page,
  PageOptions,
  RangeOptions,
  RangeWithGaps,
  ReplayEvent,
  ReplayOptions,
  ServiceBook,
  TradePageOptions,
  TradeRangeOptions,
} from './history-types.js';
import type { OrderBook } from './order-book.js';
import type {
  Bar,
  BarInterval,
  DeltaRow,
  GapMarker,
  SnapshotRow,
  TradeLine,
  TradeRow,
  TradesGapMarker,
} from './rows.js';
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

  /**
   * Every delta row of a range, in (ts, sequence) order. With `trades: true` the ticker's trades come among them
   * (`{type: 'trade', …}`) in the one order they arrived in (`include=trades`); with `gaps: true` too, the trades'
   * gaps as `{type: 'trades_gap', …}` beside the book's `{type: 'gap', …}`.
   */
  deltas(
    exchange: string,
    ticker: string,
    options: RangeWithGaps & { trades: true },
  ): AsyncGenerator<DeltaRow | TradeLine | GapMarker | TradesGapMarker>;
  deltas(
    exchange: string,
    ticker: string,
    options: RangeOptions & { trades: true },
  ): AsyncGenerator<DeltaRow | TradeLine>;
  deltas(exchange: string, ticker: string, options: RangeWithGaps): AsyncGenerator<DeltaRow | GapMarker>;
  deltas(exchange: string, ticker: string, options?: RangeOptions): AsyncGenerator<DeltaRow>;
  deltas(
    exchange: string,
    ticker: string,
    options: DeltaRangeOptions,
  ): AsyncGenerator<DeltaRow | TradeLine | GapMarker | TradesGapMarker>;
  deltas(exchange: string, ticker: string, options: DeltaRangeOptions = {}) {
    return flatten(series(this.http, 'delta', exchange, ticker, options));
  }

  /**
   * Every trade of a range, each once, in (ts, sequence) order; with `gaps: true` the trades' gaps (where trades may
   * be missing) as `{type: 'gap', …}` among them. `fields`: `received_ts`, `venue_side`, `sequence`.
   */
  trades(
    exchange: string,
    ticker: string,
    options: TradeRangeOptions & { gaps: true },
  ): AsyncGenerator<TradeRow | GapMarker>;
  trades(exchange: string, ticker: string, options?: TradeRangeOptions): AsyncGenerator<TradeRow>;
  trades(exchange: string, ticker: string, options: TradeRangeOptions = {}) {
    return flatten(series(this.http, 'trade', exchange, ticker, options));
  }

  /**
   * Every OHLCV bar of a range (`interval`: `1m`, `5m`, `1h`, `1d`), by `ts`, from the recorded trades: JSON pages,
   * `next_cursor` followed. Intervals without a trade have no bar; `start` rounds up to a bar's start.
   */
  bars(exchange: string, ticker: string, interval: BarInterval, options: BarRangeOptions = {}): AsyncGenerator<Bar> {
    assertInterval(interval);
    return flatten(series(this.http, 'bar', exchange, ticker, { ...options, interval }));
  }

  /** One JSON page of snapshot rows (whole books), with `next_cursor` (null: the walk is complete). */
  snapshotPage(exchange: string, ticker: string, options: PageOptions = {}): Promise<Page<SnapshotRow>> {
    return getPage(this.http, 'snapshot', exchange, ticker, options);
  }

  /**
   * One JSON page of delta rows, with `next_cursor`; with `trades: true` the trades among them (the limit counts both).
   */
  deltaPage(exchange: string, ticker: string, options: DeltaPageOptions & { trades: true }): Promise<DeltaPage>;
  deltaPage(exchange: string, ticker: string, options?: PageOptions): Promise<Page<DeltaRow>>;
  deltaPage(exchange: string, ticker: string, options: DeltaPageOptions): Promise<DeltaPage>;
  deltaPage(exchange: string, ticker: string, options: DeltaPageOptions = {}): Promise<DeltaPage> {
    return getPage(this.http, 'delta', exchange, ticker, options);
  }

  /** One JSON page of trades, with `next_cursor` (null: the walk is complete). */
  tradePage(exchange: string, ticker: string, options: TradePageOptions = {}): Promise<Page<TradeRow>> {
    return getPage(this.http, 'trade', exchange, ticker, options);
  }

  /** One JSON page of bars, with `next_cursor` (null: the walk is complete). */
  barPage(exchange: string, ticker: string, interval: BarInterval, options: BarPageOptions = {}): Promise<BarPage> {
    return getPage(this.http, 'bar', exchange, ticker, { ...options, interval });
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
    return walk(this.http, undefined, exchange, ticker, from, to, {
      ...options,
      mode: 'replay',
    }) as AsyncGenerator<ReplayEvent>;
  }

  /**
   * Every change of the book and every trade from `from` to `to`, merged in the order they arrived — (ts, sequence),
   * one stream from the service (`include=trades`) — with the book kept current: a `delta` event per change (the
   * book after it), a `trade` event per trade (the book current then; `null` inside a gap of the book). Starts, checks
   * snapshots and restarts after gaps as `replay` does (`snapshot` events); a gap of the book is a `gap` event, a gap
   * of the trades a `trades_gap` event (or, with `onGap: 'error'`, either is a `BookError` `in_gap`), never papered
   * over. The book is the same `OrderBook` each time: `clone()` what you keep.
   */
  events(exchange: string, ticker: string, options: EventsOptions): AsyncGenerator<MarketEvent> {
    const from = assertMoment(options.from, 'from') as number;
    const to = assertMoment(options.to, 'to');
    return walk(this.http, undefined, exchange, ticker, from, to, {
      ...options,
      mode: 'events',
    }) as AsyncGenerator<MarketEvent>;
  }
}
