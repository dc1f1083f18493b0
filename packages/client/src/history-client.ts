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
 */
import { BookError, DataError, InvalidArgumentError } from './errors.js';
import { Transport, type Answer, type ClientOptions } from './http.js';
import { splitLines } from './lines.js';
import { OrderBook } from './order-book.js';
import type { Level } from './checksum.js';
import {
  checkGap,
  checkRow,
  lastParsedTs,
  parseLineAt,
  type DeltaRow,
  type EndLine,
  type Gap,
  type GapMarker,
  type RowKind,
  type RowOf,
  type SnapshotRow,
} from './rows.js';
import { formatTimestamp, momentMs, parseTimestamp, type Moment } from './timestamps.js';

export type { ClientOptions } from './http.js';

/** Extra row fields the service adds when asked (`fields=`). */
export type ExtraField = 'received_ts';

export interface RangeOptions {
  /** Inclusive lower bound (clamped by the service to the caller's window). */
  start?: Moment;
  /** Inclusive upper bound; omitted: up to the newest row. */
  end?: Moment;
  /** Rows per request (default 100,000; the service's `MAX_LIMIT` is the most it takes). */
  pageSize?: number;
  /** `['received_ts']`: rows carry when the recorder received them. */
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

/** What `replay` yields: the book after a moment's deltas, a snapshot it passed, or a gap it had to skip. */
export type ReplayEvent =
  /** The book after every delta with this `ts` (the same `OrderBook` each time: copy what you keep). */
  | { type: 'book'; ts: number; book: OrderBook }
  /** A recorded gap: no book is given for `[from_ts, to_ts)`; the replay resumes from the next snapshot. */
  | { type: 'gap'; gap: Gap }
  /** A snapshot inside the range: the replayed book was checked against it (or restarted from it after a gap). */
  | { type: 'snapshot'; ts: number; book: OrderBook; restarted: boolean };

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

const DEFAULT_PAGE = 100_000;
const EXCHANGE = /^[A-Za-z0-9_]{1,32}$/;

function assertMoment(value: Moment | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = momentMs(value);
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`${name} is not a moment (epoch ms, Date or RFC 3339)`);
  return ms;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : formatTimestamp(ms));

export class HistoryClient {
  private readonly http: Transport;

  constructor(options: ClientOptions) {
    this.http = new Transport(options);
  }

  /** Tickers of an exchange with data in the caller's window, sorted; `prefix` filters case-insensitively. */
  async tickers(exchange: string, options: { prefix?: string; signal?: AbortSignal } = {}): Promise<string[]> {
    const body = await this.json(this.path(exchange, 'tickers'), { prefix: options.prefix }, options.signal);
    const tickers = (body as { tickers?: unknown }).tickers;
    if (!Array.isArray(tickers) || !tickers.every((t) => typeof t === 'string')) {
      throw new DataError('malformed_body', 'a tickers answer without a "tickers" list of strings');
    }
    return tickers as string[];
  }

  /** Every snapshot row of a range, in order (books whole, bids then asks by price). */
  snapshots(exchange: string, ticker: string, options?: RangeOptions): AsyncGenerator<SnapshotRow>;
  snapshots(exchange: string, ticker: string, options: RangeWithGaps): AsyncGenerator<SnapshotRow | GapMarker>;
  snapshots(exchange: string, ticker: string, options: RangeOptions & { gaps?: boolean } = {}) {
    return flatten(this.series('snapshot', exchange, ticker, options));
  }

  /** Every delta row of a range, in (ts, sequence) order. */
  deltas(exchange: string, ticker: string, options?: RangeOptions): AsyncGenerator<DeltaRow>;
  deltas(exchange: string, ticker: string, options: RangeWithGaps): AsyncGenerator<DeltaRow | GapMarker>;
  deltas(exchange: string, ticker: string, options: RangeOptions & { gaps?: boolean } = {}) {
    return flatten(this.series('delta', exchange, ticker, options));
  }

  /** One JSON page of snapshot rows (the spec's endpoint as it answers). */
  snapshotPage(exchange: string, ticker: string, options: PageOptions = {}): Promise<Page<SnapshotRow>> {
    return this.page('snapshot', exchange, ticker, options);
  }

  /** One JSON page of delta rows. */
  deltaPage(exchange: string, ticker: string, options: PageOptions = {}): Promise<Page<DeltaRow>> {
    return this.page('delta', exchange, ticker, options);
  }

  /** What is recorded for a ticker in a window, and every gap overlapping it. */
  async coverage(
    exchange: string,
    ticker: string,
    options: { start?: Moment; end?: Moment; signal?: AbortSignal } = {},
  ): Promise<Coverage> {
    const body = (await this.json(
      this.path(exchange, 'coverage', ticker),
      { start_ts: iso(assertMoment(options.start, 'start')), end_ts: iso(assertMoment(options.end, 'end')) },
      options.signal,
    )) as unknown as Coverage;
    if (!Array.isArray(body.gaps) || typeof body.snapshots !== 'object' || typeof body.deltas !== 'object') {
      throw new DataError('malformed_body', 'a coverage answer without "snapshots", "deltas" and "gaps"');
    }
    body.gaps.forEach((g, i) => checkGap(g, { line: i + 1 }));
    return body;
  }

  /** The service's own book at a moment (rule 7 on the server); `at` omitted: the newest state. */
  async book(
    exchange: string,
    ticker: string,
    options: { at?: Moment; depth?: number; signal?: AbortSignal } = {},
  ): Promise<ServiceBook> {
    if (options.depth !== undefined && !(Number.isInteger(options.depth) && options.depth > 0)) {
      throw new InvalidArgumentError('depth must be a positive integer');
    }
    const body = (await this.json(
      this.path(exchange, 'book', ticker),
      { at: iso(assertMoment(options.at, 'at')), depth: options.depth },
      options.signal,
    )) as unknown as ServiceBook;
    if (body.status === 'in_gap') checkGap(body.gap, {});
    if (body.status !== 'ok') {
      const status: unknown = body.status;
      if (status !== 'in_gap' && status !== 'no_data') {
        throw new DataError('malformed_body', `a book answer with status ${JSON.stringify(status)}`);
      }
      return body;
    }
    for (const side of ['bids', 'asks'] as const) {
      const levels: unknown = body[side];
      if (!Array.isArray(levels)) throw new DataError('malformed_body', `a book answer without "${side}"`);
      levels.forEach((l: { price?: unknown; quantity?: unknown } | null, i) => {
        if (typeof l?.price !== 'string' || typeof l?.quantity !== 'string') {
          throw new DataError('malformed_body', `${side}[${i}] is not {price, quantity}`, { text: JSON.stringify(l) });
        }
      });
    }
    return body;
  }

  /**
   * Rule 7 here, as the service applies it: the latest snapshot at or before `at` (looked for up to `lookbackMs`
   * back, default 1 day) and every delta from its `ts` up to `at` inclusive — or, when a recorded gap ended after
   * that snapshot without one (a gap closed by an empty book), an empty book at the gap's end and the deltas from
   * there. The book is settled (cross-checked). Throws `in_gap` when `at` lies in a recorded gap (known through
   * `coverage`) and `no_snapshot` when there is nothing to start from.
   */
  async rebuild(
    exchange: string,
    ticker: string,
    at: Moment,
    options: { lookbackMs?: number; signal?: AbortSignal } = {},
  ): Promise<OrderBook> {
    const t = assertMoment(at, 'at') as number;
    const book = await this.startingBook(exchange, ticker, t, options.lookbackMs, options.signal);
    let open: Gap | undefined;
    for await (const event of this.walk(book, exchange, ticker, t, t, { signal: options.signal })) {
      if (event.type === 'gap') open = event.gap;
      else if (event.type === 'snapshot' && event.restarted) open = undefined;
    }
    if (open !== undefined && t < parseTimestamp(open.to_ts)) {
      throw new BookError(
        'in_gap',
        `${formatTimestamp(t)} lies in a recorded gap (${open.reason}, ${open.from_ts} – ${open.to_ts})`,
        { exchange, ticker, ts: t },
      );
    }
    return book;
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
    return this.walk(undefined, exchange, ticker, from, to, options);
  }

  // -------------------------------------------------------------------------------------------------------------

  /**
   * The one replay loop (rebuild and replay): from `book` (at its snapshot) through every delta, later snapshot
   * and gap up to `to`, in time order; at equal `ts` a gap's start comes first, then a snapshot (the book after
   * every delta before it), then a restart at a gap's end, then the deltas. Yields `book` events for moments
   * ≥ `from`, snapshots ≥ `from`, and gaps that end after `from`.
   */
  private async *walk(
    start: OrderBook | undefined,
    exchange: string,
    ticker: string,
    from: number,
    to: number | undefined,
    options: {
      pageSize?: number;
      lookbackMs?: number;
      signal?: AbortSignal;
      onGap?: 'event' | 'error';
      verifySnapshots?: boolean;
    },
  ): AsyncGenerator<ReplayEvent> {
    const signal = options.signal;
    // The book to walk from (`rebuild` gives it), else the latest snapshot at or before `from`.
    const book = start ?? (await this.startingBook(exchange, ticker, from, options.lookbackMs, signal));
    const begin = book.ts as number;
    const gaps = (await this.gapsIn(exchange, ticker, begin, to, signal))
      .map((g) => ({ gap: g, from: parseTimestamp(g.from_ts), to: parseTimestamp(g.to_ts) }))
      .filter((g) => g.to > begin && (to === undefined || g.from <= to))
      .sort((a, b) => a.from - b.from);
    const range = { end: to, pageSize: options.pageSize, signal };
    // Deltas come in batches (one per received chunk) and are walked synchronously inside a batch.
    const deltas = new BatchCursor(
      this.series('delta', exchange, ticker, { ...range, start: begin }) as AsyncGenerator<Batch<DeltaRow>>,
    );
    // Later snapshots (a range of one moment has none: the service refuses start_ts after end_ts).
    const books = (
      (to !== undefined && begin + 1 > to) || options.verifySnapshots === false
        ? none<{ ts: number; rows: SnapshotRow[] }>()
        : this.books(exchange, ticker, { ...range, start: begin + 1 })
    )[Symbol.asyncIterator]();
    try {
      await deltas.fill();
      let nextBook = await books.next();
      let gapIndex = 0;
      /** Inside a gap until this moment (-Infinity: not in one). */
      let skipUntil = -Infinity;
      let pending: number | undefined;
      for (;;) {
        const delta = deltas.current();
        const deltaTs = deltas.currentTs();
        const bookTs = nextBook.done ? Infinity : nextBook.value.ts;
        const gap = gaps[gapIndex];
        const gapTs = gap ? gap.from : Infinity;
        const restartTs = skipUntil === -Infinity || (to !== undefined && skipUntil > to) ? Infinity : skipUntil;
        const next = Math.min(deltaTs, bookTs, gapTs, restartTs);
        // A moment is complete when the next event is later: the book after it.
        if (pending !== undefined && next > pending) {
          book.settle();
          if (pending >= from) yield { type: 'book', ts: pending, book };
          pending = undefined;
        }
        if (next === Infinity) break;
        if (gap && gapTs === next) {
          gapIndex++;
          skipUntil = Math.max(skipUntil, gap.to);
          if (gap.to > from) {
            if (options.onGap === 'error') {
              const g = gap.gap;
              throw new BookError('in_gap', `the series has a recorded gap (${g.reason}, ${g.from_ts} – ${g.to_ts})`, {
                exchange,
                ticker,
                ts: gap.from,
              });
            }
            yield { type: 'gap', gap: gap.gap };
          }
          continue;
        }
        if (bookTs === next) {
          const rows = nextBook.value.rows;
          nextBook = await books.next();
          if (bookTs < skipUntil) continue; // inside a gap: the gap's end decides where the book restarts
          const restarted = skipUntil !== -Infinity;
          if (restarted) book.loadSnapshot(rows);
          // A snapshot at S is the book after every delta with ts < S: it must equal the replayed book.
          else if (book.equalsSnapshot(rows)) book.passSnapshot(bookTs);
          else {
            throw new BookError(
              'snapshot_mismatch',
              'the replayed book differs from the recorded snapshot of the same moment, outside any recorded gap',
              { exchange, ticker, ts: bookTs },
            );
          }
          skipUntil = -Infinity;
          if (bookTs >= from) yield { type: 'snapshot', ts: bookTs, book, restarted };
          continue;
        }
        if (restartTs === next) {
          // The gap ended without a snapshot (the book was empty then): it restarts empty. Without the snapshots'
          // stream, the snapshot at the gap's end (if any) is read here.
          const rows: SnapshotRow[] = [];
          if (options.verifySnapshots === false) {
            for await (const batch of this.series('snapshot', exchange, ticker, {
              start: restartTs,
              end: restartTs,
              signal,
            })) {
              for (const r of batch) if (!('type' in r)) rows.push(r);
            }
          }
          book.loadSnapshot(rows, restartTs);
          skipUntil = -Infinity;
          if (restartTs >= from) yield { type: 'snapshot', ts: restartTs, book, restarted: true };
          continue;
        }
        if (deltaTs >= skipUntil) {
          book.applyAt(delta as DeltaRow, deltaTs);
          pending = deltaTs;
        }
        if (!deltas.advance()) await deltas.fill();
      }
    } finally {
      await deltas.close();
      await books.return?.(undefined);
    }
  }

  /** Snapshot rows grouped into books (one per `ts`). */
  private async *books(
    exchange: string,
    ticker: string,
    options: RangeOptions,
  ): AsyncGenerator<{ ts: number; rows: SnapshotRow[] }> {
    let rows: SnapshotRow[] = [];
    let text: string | undefined;
    let ts = 0;
    const done: { ts: number; rows: SnapshotRow[] }[] = [];
    for await (const batch of this.series('snapshot', exchange, ticker, options) as AsyncGenerator<SnapshotRow[]>) {
      for (const row of batch) {
        if (row.ts !== text) {
          if (rows.length) done.push({ ts, rows });
          rows = [];
          text = row.ts;
          ts = parseTimestamp(row.ts);
        }
        rows.push(row);
      }
      // The books completed by this batch (the last one may go on in the next).
      for (const book of done) yield book;
      done.length = 0;
    }
    if (rows.length) yield { ts, rows };
  }

  /** The latest snapshot at or before `at`, as a book: windows growing backwards from `at`. */
  private async startingBook(
    exchange: string,
    ticker: string,
    at: number,
    lookbackMs = 86_400_000,
    signal?: AbortSignal,
  ): Promise<OrderBook> {
    for (let span = 15 * 60_000; ; span *= 4) {
      const w = Math.min(span, lookbackMs);
      let last: { ts: number; rows: SnapshotRow[] } | undefined;
      for await (const b of this.books(exchange, ticker, { start: at - w, end: at, signal })) last = b;
      if (last) return OrderBook.fromSnapshot(last.rows, { exchange, ticker });
      if (w >= lookbackMs) {
        // No snapshot: a gap that ended (closed by an empty book, which writes no rows) is where the book starts.
        const ended = (await this.gapsIn(exchange, ticker, at - w, at, signal))
          .map((g) => parseTimestamp(g.to_ts))
          .filter((t) => t <= at);
        if (ended.length) {
          const book = new OrderBook({ exchange, ticker });
          book.loadSnapshot([], Math.max(...ended));
          return book;
        }
        throw new BookError('no_snapshot', `no snapshot within ${lookbackMs} ms before ${formatTimestamp(at)}`, {
          exchange,
          ticker,
          ts: at,
        });
      }
    }
  }

  /** Gaps overlapping [from, to] from `coverage`; none when the service has no coverage endpoint (404 not_found). */
  private async gapsIn(exchange: string, ticker: string, from: number, to: number | undefined, signal?: AbortSignal) {
    try {
      return (await this.coverage(exchange, ticker, { start: from, end: to, signal })).gaps;
    } catch (err) {
      if ((err as { error?: string }).error === 'not_found') return [];
      throw err;
    }
  }

  private path(exchange: string, endpoint: string, ticker?: string): string {
    if (!EXCHANGE.test(exchange)) throw new InvalidArgumentError(`not an exchange key: ${JSON.stringify(exchange)}`);
    return `/api/${exchange}/${endpoint}${ticker === undefined ? '' : `/${encodeURIComponent(ticker)}`}`;
  }

  private async json(path: string, query: Record<string, string | number | undefined>, signal?: AbortSignal) {
    const answer = await this.http.request(this.http.url(path, query), {
      signal,
      headers: { Accept: 'application/json' },
    });
    return parseJsonBody(answer, await answer.text());
  }

  private async page<K extends RowKind>(
    kind: K,
    exchange: string,
    ticker: string,
    options: PageOptions,
  ): Promise<Page<RowOf<K>>> {
    const answer = await this.http.request(
      this.http.url(this.path(exchange, kind === 'delta' ? 'deltas' : 'snapshots', ticker), {
        start_ts: iso(assertMoment(options.start, 'start')),
        end_ts: iso(assertMoment(options.end, 'end')),
        limit: options.limit,
        cursor: options.cursor,
        fields: options.fields?.length ? options.fields.join(',') : undefined,
        include: options.gaps ? 'gaps' : undefined,
      }),
      { signal: options.signal, headers: { Accept: 'application/json' } },
    );
    return checkPage(kind, answer, await answer.text());
  }

  /**
   * A range's rows (and gap markers) in batches — one per received chunk of a stream, or per page — so that readers
   * iterate arrays and await once per batch, not once per row.
   */
  private async *series<K extends RowKind>(
    kind: K,
    exchange: string,
    ticker: string,
    options: RangeOptions & { gaps?: boolean },
  ): AsyncGenerator<Batch<RowOf<K> | GapMarker>> {
    if (options.pageSize !== undefined && !(Number.isInteger(options.pageSize) && options.pageSize > 0)) {
      throw new InvalidArgumentError('pageSize must be a positive integer');
    }
    let start = assertMoment(options.start, 'start');
    const end = assertMoment(options.end, 'end');
    const path = this.path(exchange, kind === 'delta' ? 'deltas' : 'snapshots', ticker);
    let stream = (options.transport ?? 'stream') === 'stream';
    let cursor: string | undefined;
    /** Paging by start_ts: the deltas already given at the last ts. */
    let seen: { ts: string; sequence: number } | undefined;
    // A stream has no default limit (the whole range, with a cursor if the service stops early); pages do.
    let pageLimit = options.pageSize ?? DEFAULT_PAGE;
    for (;;) {
      const url = this.http.url(path, {
        // A cursor carries the range it walks (the service refuses both).
        start_ts: cursor === undefined ? iso(start) : undefined,
        end_ts: cursor === undefined ? iso(end) : undefined,
        limit: stream && options.pageSize === undefined ? undefined : pageLimit,
        cursor,
        fields: options.fields?.length ? options.fields.join(',') : undefined,
        include: options.gaps ? 'gaps' : undefined,
        format: stream ? 'ndjson' : undefined,
      });
      const answer = await this.http.request(url, {
        signal: options.signal,
        headers: { Accept: stream ? 'application/x-ndjson' : 'application/json' },
      });
      const type = answer.response.headers.get('content-type') ?? '';
      if (/^application\/(x-)?ndjson/i.test(type)) {
        const next = yield* this.ndjson(kind, answer);
        if (next === null) return;
        cursor = next;
        continue;
      }
      if (stream && /^application\/json/i.test(type) && options.pageSize === undefined) {
        // A service without streams answered a page of its default size: ask again, in pages of a known size.
        answer.cancel();
        stream = false;
        continue;
      }
      if (!/^application\/json/i.test(type)) {
        answer.cancel();
        throw new DataError('malformed_body', `a rows answer of type ${JSON.stringify(type)}`, {
          url: answer.url,
          requestId: answer.requestId,
        });
      }
      const page = checkPage(kind, answer, await answer.text());
      const rows = page.rows as RowOf<K>[];
      const gaps = options.gaps ? [...(page.gaps ?? [])] : [];
      const batch: (RowOf<K> | GapMarker)[] = [];
      let given = 0;
      for (const row of rows) {
        while (gaps.length && parseTimestamp((gaps[0] as Gap).from_ts) < parseTimestamp(row.ts)) {
          batch.push({ ...(gaps.shift() as Gap), type: 'gap' });
        }
        if (kind === 'delta' && seen && row.ts === seen.ts && (row as DeltaRow).sequence <= seen.sequence) continue;
        given++;
        batch.push(row);
      }
      for (const g of gaps) batch.push({ ...g, type: 'gap' });
      if (batch.length) yield batch;
      if (page.next_cursor !== undefined) {
        // A service with cursors says where to go on (null: nothing left).
        if (page.next_cursor === null) return;
        cursor = page.next_cursor;
        continue;
      }
      // The spec's paging: a page shorter than asked for is the last.
      if (rows.length < pageLimit) return;
      const last = rows[rows.length - 1] as RowOf<K>;
      if (kind === 'snapshot') {
        // Pages never cut a book: the next one starts after the last book's ts.
        start = parseTimestamp(last.ts) + 1;
        continue;
      }
      const lastDelta = last as DeltaRow;
      if (given === 0) {
        // Every row of the page shares the ts we started at and was given already: ask for more at once.
        pageLimit *= 2;
      }
      seen = { ts: lastDelta.ts, sequence: lastDelta.sequence };
      start = parseTimestamp(lastDelta.ts);
    }
  }

  /** Reads one NDJSON answer, a batch per chunk; returns its end line's `next_cursor` (null: the range is done). */
  private async *ndjson<K extends RowKind>(
    kind: K,
    answer: Answer,
  ): AsyncGenerator<Batch<RowOf<K> | GapMarker>, string | null> {
    const source = splitLines(answer.chunks(), { url: answer.url, requestId: answer.requestId });
    const where = { url: answer.url, requestId: answer.requestId, line: 0 };
    let end: EndLine | undefined;
    let count = 0;
    for await (const { text, bounds } of source.batches) {
      const batch: Batch<RowOf<K> | GapMarker> = [];
      const ms: number[] = [];
      batch.ms = ms;
      for (let i = 0; i < bounds.length; i += 2) {
        const from = bounds[i] as number;
        const to = bounds[i + 1] as number;
        where.line++;
        if (end !== undefined) {
          throw new DataError('malformed_body', 'a line after the end line', { ...where, text: text.slice(from, to) });
        }
        if (from === to) continue;
        const item = parseLineAt(kind, text, from, to, where);
        if ('type' in item) {
          if (item.type === 'end') end = item;
          else {
            batch.push(item);
            ms.push(lastParsedTs());
          }
          continue;
        }
        count++;
        batch.push(item);
        ms.push(lastParsedTs());
      }
      if (batch.length) yield batch;
    }
    if (end === undefined) {
      throw new DataError(
        'stream_cut',
        source.complete() ? 'the stream ended without its end line' : 'the stream ended inside a line',
        { ...where },
      );
    }
    if (end.count !== count) {
      throw new DataError('stream_cut', `the end line counts ${end.count} rows, the stream had ${count}`, { ...where });
    }
    return end.next_cursor;
  }
}

/** Items of a stream as they arrived; from NDJSON, with each item's `ts` in epoch ms (read once, by the parser). */
type Batch<T> = T[] & { ms?: number[] };

/** Reads batches one item at a time, awaiting only when a batch is used up. */
class BatchCursor<T extends { ts: string }> {
  private batch: Batch<T> = [];
  private i = 0;
  constructor(private readonly source: AsyncGenerator<Batch<T>>) {}

  /** The `ts` of the item at hand in epoch ms (Infinity once the source has ended). */
  currentTs(): number {
    const item = this.batch[this.i];
    if (item === undefined) return Infinity;
    return this.batch.ms?.[this.i] ?? parseTimestamp(item.ts);
  }

  /** Moves to the next item within the batch; false when the batch is used up (then `fill`). */
  advance(): boolean {
    return ++this.i < this.batch.length;
  }

  /** Loads batches until one has an item left, or the source ends. */
  async fill(): Promise<void> {
    while (this.i >= this.batch.length) {
      const r = await this.source.next();
      if (r.done) return;
      this.batch = r.value;
      this.i = 0;
    }
  }

  /** The item at hand; undefined once the source has ended. */
  current(): T | undefined {
    return this.batch[this.i];
  }

  async close(): Promise<void> {
    await this.source.return(undefined);
  }
}

/** One item at a time from batches (the public iterators). */
async function* flatten<T>(batches: AsyncIterable<T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}

// eslint-disable-next-line require-yield
async function* none<T>(): AsyncGenerator<T> {
  return;
}

function parseJsonBody(answer: Answer, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const cut = text.startsWith('{') && !text.trimEnd().endsWith('}');
    throw new DataError(
      cut ? 'stream_cut' : 'malformed_body',
      cut ? 'the JSON body ends early' : 'the body is not JSON',
      {
        url: answer.url,
        requestId: answer.requestId,
        text: text.slice(0, 200),
      },
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DataError('malformed_body', 'the body is not a JSON object', {
      url: answer.url,
      requestId: answer.requestId,
    });
  }
  return value as Record<string, unknown>;
}

function checkPage<K extends RowKind>(kind: K, answer: Answer, text: string): Page<RowOf<K>> {
  const body = parseJsonBody(answer, text);
  const where = { url: answer.url, requestId: answer.requestId };
  if (!Array.isArray(body.rows) || typeof body.count !== 'number') {
    throw new DataError('malformed_body', 'a rows answer without "rows" and "count"', where);
  }
  if (body.count !== body.rows.length) {
    throw new DataError('malformed_body', `"count" is ${body.count} but ${body.rows.length} rows came`, where);
  }
  body.rows.forEach((r, i) => checkRow(kind, r, { ...where, line: i + 1 }));
  if (body.gaps !== undefined) {
    if (!Array.isArray(body.gaps)) throw new DataError('malformed_body', '"gaps" is not a list', where);
    body.gaps.forEach((g, i) => checkGap(g, { ...where, line: i + 1 }));
  }
  if (body.next_cursor !== undefined && body.next_cursor !== null && typeof body.next_cursor !== 'string') {
    throw new DataError('malformed_body', '"next_cursor" is neither a string nor null', where);
  }
  return body as unknown as Page<RowOf<K>>;
}
