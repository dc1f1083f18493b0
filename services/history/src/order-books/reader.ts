/**
 * The one reader of order books: everything between "this caller may read these rows" and the bytes of the answer.
 *
 * - The catalogue: a ticker's entry (its stored name, first/last `ts` and row count per kind), cached briefly
 *   in-process; an exchange's ticker list.
 * - The window planner (planner.ts): a range is read in ascending time windows sized from the ticker's row density,
 *   so a limited read costs about what it returns.
 * - The never-cut-a-book rule, with its slack: an answer of snapshots ends at the end of a book, whatever its limit.
 * - Rendering: each window's RowBinary becomes JSON text (row-binary.ts), handed to the response as it arrives.
 *
 * Its reads are the store's OrderBookQueries, each under the request's QueryScope (gate, budget, cancellation).
 */
import type { ExchangeKey } from '@depthgate/auth';
import type { OrderBookQueries, QueryScope, RowKind, TickerSpan, WindowRead } from '@depthgate/history-store';
import type { Endpoint, HistoryMetrics } from '../metrics';
import { WindowPlanner, type KindSpan } from './planner';
import { RowBinaryToJson } from './row-binary';

export interface CatalogueEntry {
  /** The ticker as stored (the request may have used another case). */
  ticker: string;
  spans: Partial<Record<RowKind, KindSpan>>;
}

/** What one answer asks for: rows of one kind of one ticker, from `from` to `to` (inclusive), at most `limit`. */
export interface BookRead {
  kind: RowKind;
  exchange: ExchangeKey;
  entry: CatalogueEntry;
  /** Inclusive, epoch ms (already clamped to what the caller may see). */
  from: number;
  /** Inclusive, epoch ms; null: up to the newest row. */
  to: number | null;
  limit: number;
}

/** Where the rendered rows go: JSON text of array members, comma-separated; resolves when more may be written. */
export interface RowsSink {
  write(text: Buffer): Promise<void>;
}

/** Windows expected to return at most this many rows run on one ClickHouse thread. */
const SINGLE_THREAD_ROWS = 5000;
/** Extra snapshot rows asked for, to find the end of the last book in the same read. */
export const SNAPSHOT_SLACK_ROWS = 1000;
const CACHE_MAX_ENTRIES = 20_000;

const ENDPOINT: Record<RowKind, Endpoint> = { snapshot: 'snapshots', delta: 'deltas' };

/**
 * The never-cut-a-book rule, applied to the rows a snapshot window held back from the limit-th row on: pass on that
 * row's book and drop the rest. When every held row belongs to that book and the read stopped at its LIMIT
 * (`mayHaveMore`), the book may go on beyond what was received: nothing is passed on, `complete` is false, and the
 * book's end must be read exactly. No held rows (the window returned fewer than the limit): nothing to cut.
 */
export function releaseHeldBook(
  rows: RowBinaryToJson,
  mayHaveMore: boolean,
): { complete: boolean; out: Buffer | undefined } {
  const held = rows.takeHeld();
  if (held === undefined) return { complete: true, out: undefined };
  const book = rows.firstBook(held);
  const anotherBookFollows = book.rows < book.of;
  if (!anotherBookFollows && mayHaveMore) return { complete: false, out: undefined };
  return { complete: true, out: rows.pass(held, book.rows) };
}

interface CachedEntry {
  entry: CatalogueEntry | null;
  expires: number;
}

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
    const names = [...new Set(spans.map((r) => r.ticker))];
    const name = names.includes(ticker) ? ticker : names.length === 1 ? names[0] : undefined;
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
   * Reads the rows `read` asks for, window by window, and writes their JSON text to `out` as it arrives (the next
   * chunk is read only once `out` took the last). Resolves with the number of rows written.
   */
  async read(scope: QueryScope, read: BookRead, out: RowsSink): Promise<number> {
    const { kind, exchange, entry, from, to, limit } = read;
    const endpoint = ENDPOINT[kind];
    const rows = new RowBinaryToJson(kind);
    const pass = async (chunk: Buffer) => {
      const text = rows.push(chunk);
      if (text) await out.write(text);
    };
    const span = entry.spans[kind];
    let windows = 0;
    if (span && (to === null || from <= to)) {
      const planner = new WindowPlanner({ from, to, span, limit });
      for (let window = planner.next(); window !== null; window = planner.next()) {
        const before = rows.rows;
        const want = planner.remaining;
        const at = (asked: number): WindowRead => ({
          exchange,
          ticker: entry.ticker,
          window,
          limit: asked,
          singleThread: want <= SINGLE_THREAD_ROWS,
        });
        if (kind === 'delta') {
          await this.queries.deltas(scope, at(want), pass);
          rows.endOfQuery();
        } else {
          await this.snapshots(scope, at, want, rows, pass, out);
        }
        this.metrics.rowsStreamed.inc({ endpoint }, rows.rows - before);
        planner.record(rows.rows - before);
        windows++;
      }
    }
    this.metrics.windows.observe({ endpoint }, windows);
    return rows.rows;
  }

  /**
   * One window of snapshots, never cutting a book: ask for SNAPSHOT_SLACK_ROWS rows more than wanted, hold back the
   * received rows from the want-th on, and pass on only the rest of that row's book (releaseHeldBook) — one read,
   * not two. When that book is longer than the slack, read it to its end exactly (a second read, rarely).
   */
  private async snapshots(
    scope: QueryScope,
    at: (asked: number) => WindowRead,
    want: number,
    rows: RowBinaryToJson,
    pass: (chunk: Buffer) => Promise<void>,
    out: RowsSink,
  ): Promise<void> {
    const asked = want + SNAPSHOT_SLACK_ROWS;
    const receivedBefore = rows.received;
    rows.holdFrom(receivedBefore + want - 1);
    await this.queries.snapshots(scope, at(asked), pass);
    rows.endOfQuery();
    const { complete, out: book } = releaseHeldBook(rows, rows.received - receivedBefore === asked);
    if (book) await out.write(book);
    if (complete) return;
    await this.queries.snapshotsToBookEnd(scope, at(want), want - 1, pass);
    rows.endOfQuery();
  }
}
