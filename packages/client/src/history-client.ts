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
  parseLine,
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

/** How much is recorded for a ticker in a window: first and last `ts` and row counts per kind, and the gaps. */
export interface Coverage {
  exchange: string;
  ticker: string;
  [field: string]: unknown;
  gaps: Gap[];
}

/** The service's book at a moment (`GET /api/{exchange}/book/{ticker}?at=&depth=`). */
export interface ServiceBook {
  exchange: string;
  ticker: string;
  [field: string]: unknown;
  bids: Level[];
  asks: Level[];
}

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
  /** Yield a `book` event per moment only from here on (default: `from`). */
  pageSize?: number;
  /** How far back to look for the starting snapshot (default 1 day; the recorder writes one every 5 minutes). */
  lookbackMs?: number;
  /** Gaps as `gap` events (default) or as a `BookError` (`in_gap`) that ends the replay. */
  onGap?: 'event' | 'error';
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
    return this.series('snapshot', exchange, ticker, options);
  }

  /** Every delta row of a range, in (ts, sequence) order. */
  deltas(exchange: string, ticker: string, options?: RangeOptions): AsyncGenerator<DeltaRow>;
  deltas(exchange: string, ticker: string, options: RangeWithGaps): AsyncGenerator<DeltaRow | GapMarker>;
  deltas(exchange: string, ticker: string, options: RangeOptions & { gaps?: boolean } = {}) {
    return this.series('delta', exchange, ticker, options);
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
    )) as Coverage;
    if (!Array.isArray(body.gaps)) throw new DataError('malformed_body', 'a coverage answer without "gaps"');
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
    )) as ServiceBook;
    for (const side of ['bids', 'asks'] as const) {
      const levels = body[side];
      if (!Array.isArray(levels)) throw new DataError('malformed_body', `a book answer without "${side}"`);
      levels.forEach((l, i) => {
        if (typeof l?.price !== 'string' || typeof l?.quantity !== 'string') {
          throw new DataError('malformed_body', `${side}[${i}] is not {price, quantity}`, { text: JSON.stringify(l) });
        }
      });
    }
    return body;
  }

  /**
   * Rule 7 here: the latest snapshot at or before `at` (looked for up to `lookbackMs` back, default 1 day), then
   * every delta from its `ts` up to `at` inclusive. The book is settled (cross-checked). Throws `no_snapshot` when
   * none is found, and `in_gap` when `at` lies in a recorded gap (found through `coverage`, when the service has it).
   */
  async rebuild(
    exchange: string,
    ticker: string,
    at: Moment,
    options: { lookbackMs?: number; signal?: AbortSignal } = {},
  ): Promise<OrderBook> {
    const t = assertMoment(at, 'at') as number;
    const gaps = await this.gapsIn(exchange, ticker, t, t, options.signal);
    const inside = gaps.find((g) => parseTimestamp(g.from_ts) <= t && t < parseTimestamp(g.to_ts));
    if (inside) {
      throw new BookError(
        'in_gap',
        `${formatTimestamp(t)} lies in a recorded gap (${inside.reason}, ${inside.from_ts} – ${inside.to_ts})`,
        {
          exchange,
          ticker,
          ts: t,
        },
      );
    }
    const book = await this.startingBook(exchange, ticker, t, options.lookbackMs, options.signal);
    for await (const d of this.deltas(exchange, ticker, { start: book.snapshotTs, end: t, signal: options.signal })) {
      book.apply(d);
    }
    book.settle();
    return book;
  }

  /**
   * The book after each moment from `from` to `to`: starts from the latest snapshot at or before `from`, applies
   * the deltas in order and yields a `book` event after each `ts` from `from` on; checks the replayed book against
   * every later snapshot (a difference outside a gap is a `BookError`); at a recorded gap yields a `gap` event (or
   * throws `in_gap`) and resumes from the snapshot that ends it.
   */
  async *replay(exchange: string, ticker: string, options: ReplayOptions): AsyncGenerator<ReplayEvent> {
    const from = assertMoment(options.from, 'from') as number;
    const to = assertMoment(options.to, 'to');
    const signal = options.signal;
    const book = await this.startingBook(exchange, ticker, from, options.lookbackMs, signal);
    const start = book.snapshotTs as number;
    const gaps = (await this.gapsIn(exchange, ticker, start, to, signal))
      .map((g) => ({ gap: g, from: parseTimestamp(g.from_ts), to: parseTimestamp(g.to_ts) }))
      .filter((g) => g.to > start)
      .sort((a, b) => a.from - b.from);
    const range = { end: to, pageSize: options.pageSize, signal };
    const deltas = this.deltas(exchange, ticker, { ...range, start })[Symbol.asyncIterator]();
    const books = this.books(exchange, ticker, { ...range, start: start + 1 })[Symbol.asyncIterator]();
    let nextDelta = await deltas.next();
    let nextBook = await books.next();
    let gapIndex = 0;
    /** Inside a gap: deltas are skipped until the snapshot that ends it. */
    let skipping = false;
    let pendingTs: number | undefined;
    try {
      for (;;) {
        const deltaTs = nextDelta.done ? Infinity : parseTimestamp(nextDelta.value.ts);
        const bookTs = nextBook.done ? Infinity : nextBook.value.ts;
        const gap = gaps[gapIndex];
        const gapTs = gap ? gap.from : Infinity;
        const next = Math.min(deltaTs, bookTs, gapTs);
        // A moment is complete when the next event is later: yield the book after it.
        if (pendingTs !== undefined && next > pendingTs) {
          book.settle();
          if (pendingTs >= from) yield { type: 'book', ts: pendingTs, book };
          pendingTs = undefined;
        }
        if (next === Infinity) break;
        if (gap && gapTs === next && gapTs <= bookTs && gapTs <= deltaTs) {
          gapIndex++;
          if (options.onGap === 'error') {
            throw new BookError(
              'in_gap',
              `the series has a recorded gap (${gap.gap.reason}, ${gap.gap.from_ts} – ${gap.gap.to_ts})`,
              {
                exchange,
                ticker,
                ts: gap.from,
              },
            );
          }
          yield { type: 'gap', gap: gap.gap };
          skipping = true;
          continue;
        }
        if (bookTs === next && bookTs <= deltaTs) {
          // A snapshot at S is the book after every delta with ts < S: compare (or restart after a gap) before
          // the deltas at S.
          const snap = OrderBook.fromSnapshot(nextBook.value.rows, { exchange, ticker });
          const restarted = skipping;
          if (!skipping && !snap.equals(book)) {
            throw new BookError(
              'snapshot_mismatch',
              'the replayed book differs from the recorded snapshot at the same moment, outside any recorded gap',
              { exchange, ticker, ts: bookTs },
            );
          }
          book.loadSnapshot(nextBook.value.rows);
          skipping = false;
          yield { type: 'snapshot', ts: bookTs, book, restarted };
          nextBook = await books.next();
          continue;
        }
        const d = nextDelta.value as DeltaRow;
        if (!skipping) {
          book.apply(d);
          pendingTs = deltaTs;
        }
        nextDelta = await deltas.next();
      }
    } finally {
      await deltas.return?.(undefined);
      await books.return?.(undefined);
    }
  }

  // -------------------------------------------------------------------------------------------------------------

  /** Snapshot rows grouped into books (one per `ts`). */
  private async *books(
    exchange: string,
    ticker: string,
    options: RangeOptions,
  ): AsyncGenerator<{ ts: number; rows: SnapshotRow[] }> {
    let rows: SnapshotRow[] = [];
    let text: string | undefined;
    let ts = 0;
    for await (const row of this.snapshots(exchange, ticker, options)) {
      if (row.ts !== text) {
        if (rows.length) yield { ts, rows };
        rows = [];
        text = row.ts;
        ts = parseTimestamp(row.ts);
      }
      rows.push(row);
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

  private async *series<K extends RowKind>(
    kind: K,
    exchange: string,
    ticker: string,
    options: RangeOptions & { gaps?: boolean },
  ): AsyncGenerator<RowOf<K> | GapMarker> {
    const limit = options.pageSize ?? DEFAULT_PAGE;
    if (!(Number.isInteger(limit) && limit > 0)) throw new InvalidArgumentError('pageSize must be a positive integer');
    let start = assertMoment(options.start, 'start');
    const end = assertMoment(options.end, 'end');
    const path = this.path(exchange, kind === 'delta' ? 'deltas' : 'snapshots', ticker);
    const stream = (options.transport ?? 'stream') === 'stream';
    let cursor: string | undefined;
    /** Paging by start_ts: the deltas already given at the last ts. */
    let seen: { ts: string; sequence: number } | undefined;
    let pageLimit = limit;
    for (;;) {
      const url = this.http.url(path, {
        start_ts: cursor === undefined ? iso(start) : undefined,
        end_ts: iso(end),
        limit: pageLimit,
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
      let given = 0;
      for (const row of rows) {
        while (gaps.length && parseTimestamp((gaps[0] as Gap).from_ts) < parseTimestamp(row.ts)) {
          yield { ...(gaps.shift() as Gap), type: 'gap' };
        }
        if (kind === 'delta' && seen && row.ts === seen.ts && (row as DeltaRow).sequence <= seen.sequence) continue;
        given++;
        yield row;
      }
      for (const g of gaps) yield { ...g, type: 'gap' };
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

  /** Reads one NDJSON answer; returns its end line's `next_cursor` (null: the range is done). */
  private async *ndjson<K extends RowKind>(
    kind: K,
    answer: Answer,
  ): AsyncGenerator<RowOf<K> | GapMarker, string | null> {
    const source = splitLines(answer.chunks(), { url: answer.url, requestId: answer.requestId });
    let line = 0;
    let end: EndLine | undefined;
    let count = 0;
    for await (const text of source.lines) {
      line++;
      if (end !== undefined) {
        throw new DataError('malformed_body', 'a line after the end line', {
          url: answer.url,
          requestId: answer.requestId,
          line,
          text,
        });
      }
      if (text === '') continue;
      const item = parseLine(kind, text, { url: answer.url, requestId: answer.requestId, line });
      if ('type' in item) {
        if (item.type === 'end') {
          end = item;
          continue;
        }
        yield item;
        continue;
      }
      count++;
      yield item;
    }
    if (end === undefined) {
      throw new DataError(
        'stream_cut',
        source.complete() ? 'the stream ended without its end line' : 'the stream ended inside a line',
        { url: answer.url, requestId: answer.requestId, line },
      );
    }
    if (end.count !== count) {
      throw new DataError('stream_cut', `the end line counts ${end.count} rows, the stream had ${count}`, {
        url: answer.url,
        requestId: answer.requestId,
        line,
      });
    }
    return end.next_cursor;
  }
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
