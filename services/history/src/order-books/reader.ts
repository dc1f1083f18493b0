/**
 * The one reader of order books: everything between "this caller may read these rows" and the bytes of the answer.
 *
 * - The catalogue: a ticker's entry (its stored name, first/last `ts` and row count per kind), cached briefly
 *   in-process; an exchange's ticker list.
 * - The window planner (history-store planner.ts): a range is read in ascending time windows sized from the ticker's row density,
 *   so a limited read costs about what it returns.
 * - The never-cut-a-book rule, with its slack: an answer of snapshots ends at the end of a book, whatever its limit
 *   (`cutAtBook` of row-binary.ts decides, for pages and for bulk streams alike).
 * - Where an answer was cut: the position its next page begins at (a cursor's), by a look-ahead row for deltas and
 *   the book after the last one for snapshots.
 * - Rendering: each window's RowBinary becomes JSON, NDJSON or CSV text (row-binary.ts), with gap markers among the
 *   rows, handed to the response as it arrives.
 * - Two ways to read rows: `read`, a page (at most MAX_LIMIT rows), streams each query's output to the caller as it
 *   comes, so a slow reader holds its ClickHouse query, within the query budget; `stream`, a bulk stream (as long as
 *   the range), reads bounded windows whole into memory, two at once and at most three ahead of the caller, so a
 *   slow reader holds no query at all and memory stays flat.
 * - The book at a moment (`book`): its snapshot and the deltas since in one read, the gaps around it, rule 7 applied.
 * - A ticker's coverage and gaps.
 *
 * Its reads are the store's OrderBookQueries, each under the request's QueryScope (gate, budget, cancellation).
 */
import type { ExchangeKey } from '@depthgate/auth';
import {
  BAR_LAYOUT,
  BOOK_FIRST_LOOK_BACK_MS,
  combinedSpan,
  expectedRows,
  storedTickerName,
  WindowPlanner,
  type KindSpan,
  type OrderBookQueries,
  type QueryScope,
  type GapStream,
  type ReadKind,
  type StoredGap,
  type TickerCoverage,
  type TickerSpan,
  type TimeWindow,
  type VerifiedAround,
  type WindowRead,
} from '@depthgate/history-store';
import type { Endpoint, HistoryMetrics } from '../metrics';
import { barsJson } from './bars';
import { bookRows, rebuildBook, type GapBounds, type RebuiltBook } from './book';
import type { Position } from './cursor';
import { gapLine, type Marker } from './gaps';
import {
  cutAtBook,
  RowChunks,
  rowKey,
  RowRenderer,
  type ColumnarSink,
  type Layout,
  type SeriesKind,
  type TextFormat,
} from './row-binary';

export interface CatalogueEntry {
  /** The ticker as stored (the request may have used another case). */
  ticker: string;
  spans: Partial<Record<ReadKind, KindSpan>>;
}

/** What the catalogue knows of a kind's rows (interleaved: the deltas' and the trades' together). */
export function spanOf(entry: CatalogueEntry, kind: SeriesKind): KindSpan | undefined {
  return kind === 'interleaved' ? combinedSpan(entry.spans.delta, entry.spans.trade) : entry.spans[kind];
}

/** What one answer asks for: rows of one kind of one ticker, from `start` to `to` (inclusive), at most `limit`. */
export interface BookRead {
  kind: SeriesKind;
  exchange: ExchangeKey;
  entry: CatalogueEntry;
  /** The first row to read (already clamped to what the caller may see); see Position. */
  start: Position;
  /** Inclusive, epoch ms; null: up to the newest row. */
  to: number | null;
  /** Rows wanted (Infinity: the whole range; bulk streams only). */
  limit: number;
  format: TextFormat;
  receivedTs: boolean;
  /** Trades: read (and render) `venue_side`. */
  venueSide?: boolean;
  /** Trades: render `sequence`. */
  sequence?: boolean;
  /** Read (and render) the venue's own sequence, `venue_seq`. */
  venueSeq?: boolean;
  /** The rows go to this columnar sink (Parquet) instead of being rendered as text (`format` is then `json`). */
  columnar?: ColumnarSink;
  /** Gap markers to place among the rows (by from_ts), when asked for. */
  gaps?: readonly Marker[];
}

/** How a read ended. */
export interface ReadResult {
  /** Rows written. */
  rows: number;
  /** Where the rest begins, when the limit (or a drain) cut the answer; null when it is complete. */
  next: Position | null;
  /** The gap markers placed (all of those given, when the answer is complete). */
  gaps: Marker[];
}

/**
 * Where the rendered rows go. `write` resolves when more may be written, with true when everything written so far
 * has left the process's buffers (the socket or the gzip stream took it): a buffer written before is then free.
 */
export interface RowsSink {
  write(text: Buffer): Promise<boolean>;
}

/** Windows expected to return at most this many rows run on one ClickHouse thread. */
const SINGLE_THREAD_ROWS = 5000;
/** Extra snapshot rows asked for, to find the end of the last book in the same read. */
const SNAPSHOT_SLACK_ROWS = 1000;
const CACHE_MAX_ENTRIES = 20_000;
/**
 * A page of bars reads a first window of at least this many bars, each next one twice as long: rendering one overlaps
 * the next one's aggregation, and few queries are sent (each costs a few ms on 18.16). Windows of one length (4,096
 * bars, up to 16 of them) made a month of 1-minute bars slower: 11 queries' fixed costs.
 */
const BAR_FIRST_WINDOW = 4096;
/**
 * ...and long enough to hold about this many trades (the ticker's density, from the catalogue): a sparse ticker's
 * month (4,000 trades) was four queries whose fixed costs were most of the answer's time; its aggregation costs less
 * than one query's overhead. A query's aggregation is about 1.4 µs a trade, so 16,384 trades outweigh its fixed cost.
 */
const BAR_FIRST_WINDOW_TRADES = 16_384;
/** After this many windows a page of bars reads the rest of its range at once (a sparse ticker's long range). */
const MAX_BAR_WINDOWS = 8;
/** Rows rendered at once from a bulk stream's window (bounds the rendering buffer). */
const STREAM_RENDER_ROWS = 4096;
/**
 * Rendered slices at least this long are Node buffers of their own (Buffer.allocUnsafe pools only those under 4 KiB),
 * so a bulk stream may render the next slice into one the response no longer holds.
 */
const REUSED_SLICE_BYTES = 8192;
/** Windows a bulk stream holds read (or being read) ahead of the one its caller is taking. */
const STREAM_HELD = 3;
/**
 * Windows a bulk stream reads at once. ClickHouse 18.16 sorts a window whole before it sends a row, and one query's
 * sort barely uses a second core: two windows read side by side keep it ahead of the rendering (docs/history.md).
 */
const STREAM_IN_FLIGHT = 2;
/**
 * A bulk stream's windows are sized (from the rows per ms seen so far) to hold this share of their row cap, so that
 * the cap seldom cuts one: a window it cuts is continued by a query that must wait for it, while whole windows are
 * planned, and read, ahead of each other.
 */
const STREAM_WINDOW_FILL = 0.8;
/**
 * A bulk stream's first window holds at most this many rows, each next one four times more up to its cap: the first
 * rows go out after a short read, and the pipeline (ClickHouse reading the next window while this one is rendered)
 * fills at once.
 */
const STREAM_FIRST_WINDOW_ROWS = 4096;
/**
 * A bulk stream over a whole range the catalogue expects to hold at most this many rows is read in one window (capped
 * as every window): three queries of 4,096, 16,384 and the rest made 20,000 trades 0.5–0.8× of ClickHouse's own
 * JSONEachRow of them.
 */
const STREAM_ONE_WINDOW_ROWS = 32_768;

const ENDPOINT: Record<SeriesKind, Endpoint> = {
  snapshot: 'snapshots',
  delta: 'deltas',
  trade: 'trades',
  interleaved: 'deltas',
};

/** One window of a bulk stream read: its rows, and where the rest of its range begins when its row cap cut it. */
interface WindowStep {
  rows: RowChunks;
  continueAt?: Position;
  more?: boolean;
}

interface CachedEntry {
  entry: CatalogueEntry | null;
  expires: number;
}

/** A book at a moment, as the reader finds it. */
export type BookAnswer =
  | { status: 'ok'; book: RebuiltBook; baseGap: StoredGap | null }
  | { status: 'in_gap'; gap: StoredGap }
  | { status: 'no_data' };

export class OrderBookReader {
  private readonly cache = new Map<string, CachedEntry>();

  constructor(
    private readonly queries: OrderBookQueries,
    private readonly metrics: HistoryMetrics,
    private readonly catalogueTtlMs: number,
  ) {}

  /**
   * The catalogue entry of a ticker, matched exactly or, failing that, case-insensitively when exactly one stored
   * ticker matches. null when the exchange has no such ticker.
   */
  async entry(scope: QueryScope, exchange: ExchangeKey, ticker: string): Promise<CatalogueEntry | null> {
    const key = `${exchange}\n${ticker}`;
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expires > now) {
      this.metrics.catalogueCache.inc({ result: 'hit' });
      return cached.entry;
    }
    this.metrics.catalogueCache.inc({ result: 'miss' });
    const spans = await this.queries.catalogue(scope, exchange, ticker);
    const name = storedTickerName(spans, ticker);
    let entry: CatalogueEntry | null = null;
    if (name !== undefined) {
      entry = { ticker: name, spans: {} };
      for (const r of spans) {
        if (r.ticker === name) entry.spans[r.kind] = { firstTs: r.firstTs, lastTs: r.lastTs, rows: r.rows };
      }
    }
    if (this.catalogueTtlMs > 0) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
      this.cache.set(key, { entry, expires: now + this.catalogueTtlMs });
    }
    return entry;
  }

  /** Tickers of an exchange passing both prefix filters, in byte order, with their data span. */
  tickers(
    scope: QueryScope,
    exchange: ExchangeKey,
    filters: { prefix?: string; allowedPrefixes?: readonly string[] | null },
  ): Promise<TickerSpan[]> {
    return this.queries.tickers(scope, exchange, filters);
  }

  /**
   * Gaps of a ticker overlapping [from, to] that start at or after `startingFrom`, by from_ts: of the book (default)
   * or of its trades.
   */
  gaps(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    range: { from: number; to: number | null; startingFrom?: number; stream?: GapStream },
  ): Promise<StoredGap[]> {
    return this.queries.gaps(scope, exchange, ticker, range);
  }

  /**
   * A page of bars: those starting at or after `from` (a bar's start) built from the trades up to `to` (inclusive;
   * null: the newest), at most `limit`, written to `out` as their JSON objects, comma-separated, window by window as
   * each window's aggregation answers; returns how many, and where the next page begins (the bar after the last, when
   * there is one). The range is read window by window from where the ticker's trades begin (the catalogue): the first
   * window of at least BAR_FIRST_WINDOW bars and BAR_FIRST_WINDOW_TRADES trades at the ticker's density (and no more
   * than `limit + 1` bars, which says whether the page was cut), each next twice as long, the rest at once after
   * MAX_BAR_WINDOWS; the last always runs to the end of the range (trades newer than the cached catalogue are not
   * missed). The next window's query is sent before this one's bars are rendered and written, so ClickHouse
   * aggregates while the service writes text (two cores: the two overlap). A window's failure is thrown as it is
   * found, after the windows before it were written (the route then cuts an answer that has started).
   */
  async bars(
    scope: QueryScope,
    q: {
      exchange: ExchangeKey;
      entry: CatalogueEntry;
      intervalMs: number;
      from: number;
      to: number | null;
      limit: number;
    },
    out: RowsSink,
  ): Promise<{ count: number; next: number | null }> {
    const { entry, intervalMs } = q;
    const span = entry.spans.trade;
    if (span === undefined || (q.to !== null && q.from > q.to)) return { count: 0, next: null };
    const want = q.limit + 1;
    const end = q.to === null ? null : q.to + 1;
    const horizon = q.to === null ? span.lastTs : Math.min(q.to, span.lastTs);
    let at = Math.max(q.from, Math.floor(span.firstTs / intervalMs) * intervalMs);
    // Trades a millisecond, over the ticker's whole span.
    const density = span.rows / Math.max(1, span.lastTs - span.firstTs + 1);
    const barsForTrades = Math.ceil(BAR_FIRST_WINDOW_TRADES / density / intervalMs);
    let length = Math.min(want, Math.max(BAR_FIRST_WINDOW, barsForTrades || 0)) * intervalMs;
    let planned = 0;
    const read = (): { raw: Promise<Buffer>; last: boolean } => {
      planned++;
      const windowEnd = at + length;
      const last = windowEnd > horizon || planned >= MAX_BAR_WINDOWS || !Number.isSafeInteger(windowEnd);
      const raw = this.queries.bars(scope, {
        exchange: q.exchange,
        ticker: entry.ticker,
        intervalMs,
        from: at,
        to: last ? end : windowEnd,
        limit: want,
      });
      at = windowEnd;
      length *= 2;
      return { raw, last };
    };
    let count = 0;
    let next: number | null = null;
    let current = read();
    for (;;) {
      const raw = await current.raw;
      // The next window is read while this one is rendered — unless this one fills the page (its bars are counted
      // from its length): a window read for nothing would cost at least all those before it.
      const full = count + raw.length / BAR_LAYOUT.size >= want;
      const ahead = current.last || full ? undefined : read();
      // Not awaited when this window's page fails: its failure must not go unhandled.
      ahead?.raw.catch(() => undefined);
      // One buffer per window, its first bar after a comma when bars went before (they are written as they are).
      const page = barsJson(raw, intervalMs, count > 0);
      const room = q.limit - count;
      if (page.ends.length > room) {
        // The page is full: the bar after its last is where the next begins (the window ahead is not needed).
        next = page.starts[room] as number;
        if (room > 0) await out.write(page.text.subarray(0, page.ends[room - 1]));
        count = q.limit;
        break;
      }
      if (page.ends.length > 0) await out.write(page.text);
      count += page.ends.length;
      if (ahead === undefined) break;
      current = ahead;
    }
    this.metrics.windows.observe({ endpoint: 'bars' }, planned);
    return { count, next };
  }

  /** What a ticker holds in [from, to], per kind, and its verification points there. */
  coverage(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    from: number,
    to: number | null,
  ): Promise<TickerCoverage> {
    return this.queries.coverage(scope, exchange, ticker, from, to);
  }

  /**
   * The verification points around `at` (docs/history.md, "Verified books"): the last at or before it, from `lower`
   * (the caller's window) on, and the first after it.
   */
  verifiedAround(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    lower: number,
    at: number,
  ): Promise<VerifiedAround> {
    return this.queries.verifiedAround(scope, exchange, ticker, lower, at);
  }

  /**
   * A page: reads the rows `read` asks for, window by window, and writes their text to `out` as it arrives (the next
   * chunk is read only once `out` took the last). Deltas read one row more than the limit, held back: present, the
   * answer was cut there. Snapshots end on a whole book; a book that follows in the slack says the answer was cut,
   * else a one-row query asks.
   */
  async read(scope: QueryScope, read: BookRead, out: RowsSink): Promise<ReadResult> {
    const { kind, exchange, entry, start, to, limit } = read;
    const endpoint = ENDPOINT[kind];
    const rows = this.renderer(read);
    const pass = async (chunk: Buffer) => {
      const text = rows.push(chunk);
      if (text) await out.write(text);
    };
    const span = spanOf(entry, kind);
    const keyed = kind !== 'snapshot';
    let windows = 0;
    /** Known that more rows follow the answer (true), that none do (false), or not yet known. */
    let more: boolean | undefined;
    if (span && (to === null || start.ts <= to)) {
      const lookAhead = keyed ? 1 : 0;
      if (lookAhead > 0) rows.holdFrom(limit);
      const planner = new WindowPlanner({ from: start.ts, to, span, limit: limit + lookAhead });
      for (let window = planner.next(); window !== null; window = planner.next()) {
        const receivedBefore = rows.received;
        const renderedBefore = rows.rows;
        const want = planner.remaining;
        const at = (asked: number): WindowRead => ({
          exchange,
          ticker: entry.ticker,
          window,
          limit: asked,
          singleThread: want <= SINGLE_THREAD_ROWS,
          receivedTs: read.receivedTs,
          venueSeq: read.venueSeq === true,
          resume: windows === 0 ? resumeOf(kind, start) : undefined,
        });
        if (keyed) {
          await this.windowQuery(scope, read, at(want), pass);
          rows.endOfQuery();
          planner.record(rows.received - receivedBefore);
        } else {
          const beyond = await this.snapshots(scope, at, want, rows, pass, out);
          if (beyond === 'another-book') more = true;
          // The range's last window (it runs to the range's end) answered in full: nothing follows its rows.
          else if (beyond === 'none' && window.toInclusive) more = false;
          planner.record(rows.rows - renderedBefore);
        }
        this.metrics.rowsStreamed.inc({ endpoint }, rows.rows - renderedBefore);
        windows++;
      }
      if (keyed) more = rows.takeHeld() !== undefined;
      else if (more === undefined && planner.remaining <= 0) {
        // The limit was met at the end of a window: does a book follow?
        const last = rows.lastKey();
        more =
          last !== undefined && (await this.queries.rowExists(scope, kind, exchange, entry.ticker, last.ts + 1, to));
      }
    }
    this.metrics.windows.observe({ endpoint }, windows);
    return this.ending(read, rows, more === true ? this.nextPosition(read, rows) : null, out);
  }

  /**
   * One window of snapshots, never cutting a book: ask for SNAPSHOT_SLACK_ROWS rows more than wanted, hold back the
   * received rows from the want-th on, and pass on only the rest of that row's book (cutAtBook) — one read, not
   * two. When that book is longer than the slack, read it to its end exactly (a second read, rarely). Returns what
   * the held rows showed beyond that book.
   */
  private async snapshots(
    scope: QueryScope,
    at: (asked: number) => WindowRead,
    want: number,
    rows: RowRenderer,
    pass: (chunk: Buffer) => Promise<void>,
    out: RowsSink,
  ): Promise<'another-book' | 'book-may-continue' | 'none'> {
    const asked = want + SNAPSHOT_SLACK_ROWS;
    const receivedBefore = rows.received;
    rows.holdFrom(receivedBefore + want - 1);
    await this.queries.snapshots(scope, at(asked), pass);
    rows.endOfQuery();
    const held = rows.takeHeld();
    if (held === undefined) return 'none';
    const cut = cutAtBook(held, rows.size, 1, rows.received - receivedBefore === asked);
    if (cut.beyond !== 'book-may-continue') {
      await out.write(rows.pass(held, cut.rows));
      return cut.beyond;
    }
    await this.queries.snapshotsToBookEnd(scope, at(want), want - 1, pass);
    rows.endOfQuery();
    return 'book-may-continue';
  }

  /**
   * A bulk stream: every row of the range (or `limit` of them), in windows of at most `windowRows` rows, each read
   * from ClickHouse whole (into memory, at ClickHouse's pace) before it is rendered, two at once, and at most
   * STREAM_HELD of them ahead of the caller: a slow caller holds no ClickHouse query, memory stays flat, and a fast
   * one finds the next windows read while it takes this one. `stop()` is asked before each window is started (the
   * service is draining): the stream then ends after the windows already started, with a cursor. Its first failure
   * ends it at once (see `fail`): what went out is a prefix of the rows, and the caller's abort ends the rest.
   */
  async stream(
    scope: QueryScope,
    read: BookRead,
    out: RowsSink,
    options: { windowRows: number; stop: () => boolean },
  ): Promise<ReadResult> {
    const { kind, entry, start, to } = read;
    const endpoint = ENDPOINT[kind];
    const rows = this.renderer(read);
    const queue: RowChunks[] = [];
    let wake: (() => void) | undefined;
    let producing = true;
    let failure: unknown;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const waitChange = () => new Promise<void>((resolve) => (wake = resolve));
    let onFailure!: () => void;
    const failed = new Promise<void>((resolve) => (onFailure = resolve));
    /**
     * The stream's first failure — a window's read (whether or not its turn has come), or a write to the caller —
     * ends it: nothing more is written, and the stream does not wait for the windows still being read nor for the
     * caller to take what it was given (the request's abort ends them).
     */
    const fail = (err: unknown) => {
      if (failure !== undefined) return;
      failure = err;
      onFailure();
      notify();
    };

    /** The stream stops before the end of its range (its limit, or a drain): it ends with a cursor. */
    let cut = false;
    let windows = 0;
    const produce = async () => {
      const span = spanOf(entry, kind);
      if (!span || (to !== null && start.ts > to)) return;
      const limit = read.limit;
      // Windows are read side by side only when the stream runs to the end of its range: with a limit, a window
      // could not start before those ahead of it said how many rows they hold.
      const inFlight = limit === Infinity ? STREAM_IN_FLIGHT : 1;
      // A whole range the catalogue expects to be small is read in one window: its rows come in one query, where a
      // pipeline of growing windows would cost each query's fixed part (the trades' deduplication makes it ~10 ms).
      const expected = expectedRows(span, start.ts, to);
      const oneWindow = limit === Infinity && expected <= STREAM_ONE_WINDOW_ROWS;
      let cap = oneWindow ? options.windowRows : Math.min(STREAM_FIRST_WINDOW_ROWS, options.windowRows);
      const planner = new WindowPlanner({
        from: start.ts,
        to,
        span,
        limit: Infinity,
        windowRows: cap,
        maxWindows: Infinity,
        margin: STREAM_WINDOW_FILL,
      });
      /** Windows started, in the order of their rows. */
      const jobs: { window: TimeWindow; result: Promise<WindowStep> }[] = [];
      const launch = (window: TimeWindow, from: Position, want: number) => {
        const at = (asked: number): WindowRead => ({
          exchange: read.exchange,
          ticker: entry.ticker,
          window,
          limit: asked,
          // A small range read as one window is still a small query.
          singleThread: Math.min(want, oneWindow ? expected : Infinity) <= SINGLE_THREAD_ROWS,
          receivedTs: read.receivedTs,
          venueSeq: read.venueSeq === true,
          resume: from.ts === window.from ? resumeOf(kind, from) : undefined,
        });
        const result =
          kind === 'snapshot'
            ? this.snapshotWindow(scope, at, want, rows.size)
            : this.keyedWindow(scope, read, rows.layout, at, want);
        // Awaited in turn, but its failure ends the stream when it happens (the windows ahead of it are not waited for).
        result.catch(fail);
        return { window, result };
      };
      let delivered = 0;
      /** Where the first window not yet started begins. */
      let position = start;
      let planned = planner.next();
      let stopping = false;
      for (;;) {
        // Start windows while there is room: `inFlight` read at once, STREAM_HELD held in all (read or being read,
        // and not yet taken by the caller).
        while (planned !== null && !stopping && jobs.length < inFlight && jobs.length + queue.length < STREAM_HELD) {
          if (options.stop()) {
            stopping = true;
            break;
          }
          jobs.push(launch(planned, position, Math.min(cap, limit - delivered)));
          position = { ts: planned.to ?? Number.MAX_SAFE_INTEGER, sequence: 0n, skip: 0 };
          cap = Math.min(cap * 4, options.windowRows);
          planner.capWindowRows(cap);
          planned = planner.next();
        }
        const job = jobs.shift();
        if (job === undefined) {
          if (planned === null) return;
          cut = stopping;
          if (stopping) return;
          // Every place is held by windows the caller has not taken yet.
          await waitChange();
          if (failure !== undefined) return;
          continue;
        }
        const step = await job.result;
        if (failure !== undefined) return;
        windows++;
        if (step.rows.rows > 0) {
          queue.push(step.rows);
          notify();
        }
        delivered += step.rows.rows;
        const { window } = job;
        if (step.continueAt !== undefined) {
          // Its row cap cut the window: the rest of its range comes next, before the windows started after it.
          planner.observe(step.rows.rows, step.continueAt.ts - window.from + 1);
          if (delivered >= limit) {
            cut = true;
            return;
          }
          if (planned === null && jobs.length === 0 && !stopping) {
            // The range's last window (or its only one, a range expected to be small): the rest is planned again
            // from the rows per ms it showed, instead of one query over all of it, which would sort that whole rest
            // again at each cut.
            planner.resume(step.continueAt.ts);
            position = step.continueAt;
            planned = planner.next();
            continue;
          }
          const rest: TimeWindow = { from: step.continueAt.ts, to: window.to, toInclusive: window.toInclusive };
          jobs.unshift(launch(rest, step.continueAt, Math.min(cap, limit - delivered)));
          continue;
        }
        if (window.to !== null) planner.observe(step.rows.rows, window.to - window.from);
        if (delivered >= limit) {
          // The limit is met at the end of a window: is there more? The window's own look-ahead says so when it saw
          // a row beyond; the last window of the range, read to its end, says no; else a one-row query asks.
          cut =
            step.more ??
            (window.toInclusive || window.to === null
              ? false
              : await this.queries.rowExists(scope, kind, read.exchange, entry.ticker, window.to, to));
          return;
        }
      }
    };
    // Rendered text goes out while the next slice is rendered (the socket, or the gzip stream on its thread, takes
    // one slice while this thread makes the next): two slices in flight at most. A slice's buffer is rendered into
    // again once a 'drain' said the response let go of it — a long stream then allocates its text a few times, not
    // once per slice (hundreds of MB that only the garbage collector would give back).
    const spare: Buffer[] = [];
    let sent: { written: Promise<boolean>; text: Buffer } | undefined;
    const settle = async () => {
      if (sent === undefined) return;
      const { written, text } = sent;
      sent = undefined;
      if ((await written) && text.length >= REUSED_SLICE_BYTES) spare.push(Buffer.from(text.buffer, text.byteOffset));
    };
    const consume = async () => {
      try {
        for (;;) {
          if (failure !== undefined) return;
          const item = queue.shift();
          if (item === undefined) {
            if (!producing) return;
            await waitChange();
            continue;
          }
          notify();
          // Rendered a few chunks at a time, about STREAM_RENDER_ROWS rows.
          const group: Buffer[] = [];
          let grouped = 0;
          for (let i = 0; i < item.chunks.length; i++) {
            const chunk = item.chunks[i] as Buffer;
            group.push(chunk);
            grouped += chunk.length;
            if (grouped < STREAM_RENDER_ROWS * item.size && i < item.chunks.length - 1) continue;
            const text = rows.push(group, spare.pop());
            group.length = 0;
            grouped = 0;
            if (text === undefined) continue;
            await settle();
            // A failed stream writes nothing more: the rows still queued are dropped with it.
            if (failure !== undefined) return;
            const written = out.write(text);
            // Awaited by the next settle(); until then (the consumer may wait for the next window first) a caller
            // gone meanwhile must not leave its rejection unhandled (that ends the process).
            written.catch(() => undefined);
            sent = { written, text };
          }
          rows.endOfQuery();
          this.metrics.rowsStreamed.inc({ endpoint }, item.rows);
        }
      } finally {
        await settle();
      }
    };
    const producer = produce()
      .catch(fail)
      .finally(() => {
        producing = false;
        notify();
      });
    await Promise.race([Promise.all([producer, consume().catch(fail)]), failed]);
    if (failure !== undefined) throw failure;
    this.metrics.windows.observe({ endpoint }, windows);
    // A cut stream continues after its last row, as a page does (not at the end of its last window: a gap marker
    // between the two would be placed by neither).
    return this.ending(read, rows, cut ? this.nextPosition(read, rows) : null, out);
  }

  /**
   * One window of a bulk stream's deltas (or trades, or the two interleaved): ask for one row more than wanted. All
   * of them there: the window stopped at its cap, and the next begins at the key of the last row kept (after the run
   * of rows that carried it). Fewer: the window is read to its end.
   */
  private async keyedWindow(
    scope: QueryScope,
    book: BookRead,
    layout: Layout,
    at: (asked: number) => WindowRead,
    want: number,
  ): Promise<WindowStep> {
    const read = at(want + 1);
    const raw = await this.collectRows(layout, (onChunk) => this.windowQuery(scope, book, read, onChunk));
    if (raw.rows <= want) return { rows: raw };
    const kept = raw.first(want);
    const lastRow = kept.row(want - 1);
    const last = rowKey(book.kind, lastRow, 0);
    let run = 1;
    while (run < want && kept.row(want - 1 - run).compare(lastRow, 0, 16, 0, 16) === 0) run++;
    const resume = read.resume;
    const sameAsResume = resume !== undefined && read.window.from === last.ts && resume.sequence === last.sequence;
    return {
      rows: kept,
      continueAt: {
        ts: last.ts,
        sequence: last.sequence,
        skip: run + (sameAsResume && run === want ? resume.skip : 0),
      },
      more: true,
    };
  }

  /**
   * One window of a bulk stream's snapshots: the never-cut-a-book rule as in pages (cutAtBook over the window's
   * rows from the want-th on). Another book after the want-th row's: the window stopped there, the next begins at
   * that book.
   */
  private async snapshotWindow(
    scope: QueryScope,
    at: (asked: number) => WindowRead,
    want: number,
    size: number,
  ): Promise<WindowStep> {
    const asked = want + SNAPSHOT_SLACK_ROWS;
    const read = at(asked);
    const raw = await this.collectRows(size, (onChunk) => this.queries.snapshots(scope, read, onChunk));
    if (raw.rows < want) return { rows: raw };
    // The want-th row and those after it (at most the slack): the rest of its book, and whether another follows.
    const cut = cutAtBook(raw.from(want - 1), size, 1, raw.rows === asked);
    if (cut.beyond === 'none') return { rows: raw };
    let kept = raw.first(want - 1 + cut.rows);
    if (cut.beyond === 'book-may-continue') {
      const rest = await this.collectRows(size, (onChunk) =>
        this.queries.snapshotsToBookEnd(scope, at(want), want - 1, onChunk),
      );
      kept = raw.first(want - 1).concat(rest);
    }
    const lastTs = rowKey('snapshot', kept.row(kept.rows - 1), 0).ts;
    return {
      rows: kept,
      continueAt: { ts: lastTs + 1, sequence: 0n, skip: 0 },
      more: cut.beyond === 'another-book' ? true : undefined,
    };
  }

  /** A whole query's RowBinary output in one buffer (bookRows checks its rows). */
  private async collect(run: (onChunk: (chunk: Buffer) => void) => Promise<void>): Promise<Buffer> {
    const chunks: Buffer[] = [];
    await run((chunk) => void chunks.push(chunk));
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  }

  /** The window query of a keyed kind: deltas, trades, or the two interleaved. */
  private windowQuery(
    scope: QueryScope,
    book: BookRead,
    read: WindowRead,
    onChunk: (chunk: Buffer) => Promise<void> | void,
  ): Promise<void> {
    switch (book.kind) {
      case 'trade':
        return this.queries.trades(scope, { ...read, venueSide: book.venueSide === true }, onChunk);
      case 'interleaved':
        return this.queries.interleaved(scope, read, onChunk);
      default:
        return this.queries.deltas(scope, read, onChunk);
    }
  }

  /** A whole query's RowBinary output, as the chunks it arrived in. */
  private async collectRows(
    layout: Layout | number,
    run: (onChunk: (chunk: Buffer) => void) => Promise<void>,
  ): Promise<RowChunks> {
    const rows = new RowChunks(layout);
    await run((chunk) => rows.add(chunk));
    return rows;
  }

  private renderer(read: BookRead): RowRenderer {
    const rows = new RowRenderer(read.kind, {
      format: read.format,
      receivedTs: read.receivedTs,
      venueSide: read.venueSide,
      sequence: read.sequence,
      venueSeq: read.venueSeq,
      columnar: read.columnar,
    });
    if (read.gaps && read.gaps.length > 0) {
      const lines =
        read.format === 'json' || read.columnar !== undefined
          ? undefined
          : read.gaps.map((g) => gapLine(read.format as 'ndjson' | 'csv', g));
      rows.setMarkers(
        read.gaps.map((g) => g.fromTs),
        lines,
      );
    }
    return rows;
  }

  /** The next page's first row, after what `rows` passed on. */
  private nextPosition(read: BookRead, rows: RowRenderer): Position | null {
    const last = rows.lastKey();
    if (last === undefined) return read.start;
    if (read.kind === 'snapshot') return { ts: last.ts + 1, sequence: 0n, skip: 0 };
    // Every row of the page carried the key it resumed at: the rows left out then are left out again.
    const continued = last.ts === read.start.ts && last.sequence === read.start.sequence && last.run === rows.rows;
    return { ts: last.ts, sequence: last.sequence, skip: last.run + (continued ? read.start.skip : 0) };
  }

  /** Places the markers a complete answer still owes (after its last row), and says how the read ended. */
  private async ending(read: BookRead, rows: RowRenderer, next: Position | null, out: RowsSink): Promise<ReadResult> {
    if (next === null) {
      const tail = rows.passRemainingMarkers();
      if (tail) await out.write(tail);
    }
    return { rows: rows.rows, next, gaps: (read.gaps ?? []).slice(0, rows.markersPassed) };
  }

  /**
   * The book of a ticker at `at`, rebuilt by rule 7 from what a caller whose window starts at `lower` may read: one
   * read of the last BOOK_FIRST_LOOK_BACK_MS (its snapshots, deltas and the gaps around `at`) from which the newest
   * snapshot and the deltas since apply; when that stretch holds no snapshot and no gap end, a second read finds
   * where the book starts in the whole window (bookBaseQuery) and a third reads from there. A gap that ended after
   * the snapshot (one closed by an empty book leaves no snapshot at its to_ts) restarts the book empty at its end.
   * Inside a gap there is no book.
   */
  async book(
    scope: QueryScope,
    exchange: ExchangeKey,
    entry: CatalogueEntry,
    at: number,
    lower: number,
  ): Promise<BookAnswer> {
    const ticker = entry.ticker;
    const read = async (from: number) =>
      bookRows(await this.collect((onChunk) => this.queries.book(scope, { exchange, ticker, from, at }, onChunk)), at);
    const first = Math.max(lower, at - BOOK_FIRST_LOOK_BACK_MS);
    let rows = await read(first);
    if (rows.covering !== undefined)
      return { status: 'in_gap', gap: await this.fullGap(scope, exchange, ticker, rows.covering) };
    const ended = (r: typeof rows) => (r.ended !== undefined && r.ended.toTs >= lower ? r.ended : undefined);
    if (rows.snapshotTs === null && ended(rows) === undefined && first > lower) {
      const base = await this.queries.bookBase(scope, exchange, ticker, lower, at);
      const from = Math.max(base.snapshotTs ?? -1, base.gapEnd ?? -1);
      if (from < 0) return { status: 'no_data' };
      rows = await read(from);
    }
    const restart = ended(rows);
    const book = rebuildBook(rows, restart?.toTs);
    if (book === undefined) return { status: 'no_data' };
    const baseGap =
      book.snapshotTs === null && restart !== undefined ? await this.fullGap(scope, exchange, ticker, restart) : null;
    return { status: 'ok', book, baseGap };
  }

  /** A gap as answers show it: its reason is read (a book read carries its bounds only). */
  private async fullGap(scope: QueryScope, exchange: ExchangeKey, ticker: string, g: GapBounds): Promise<StoredGap> {
    return (await this.queries.gap(scope, exchange, ticker, g.fromTs, g.toTs)) ?? { ...g, reason: 'unknown' };
  }
}

/** A delta (or trade) read resumes inside its first millisecond; a snapshot read never needs to. */
function resumeOf(kind: SeriesKind, position: Position): WindowRead['resume'] {
  if (kind === 'snapshot' || (position.sequence === 0n && position.skip === 0)) return undefined;
  return { sequence: position.sequence, skip: position.skip };
}
