/**
 * The queries of the history API's order-book endpoints: the ticker catalogue (one ticker's entry, an exchange's
 * list), the time-window reads of snapshot and delta rows, the book at a moment (its snapshot and the deltas since,
 * in one read, and the gaps around it), the gaps of a range and a ticker's coverage. OrderBookQueries runs them
 * through a querier (gate, budget, cancellation, tags `catalogue`, `tickers`, `window`, `exists`, `book`, `gaps`,
 * `coverage`).
 *
 * Window queries return raw columns in `RowBinary`, the cheapest output of ClickHouse; the history service renders
 * the JSON text (services/history/src/order-books/row-binary/ decodes the layouts these column lists fix:
 * READ_COLUMNS in schema.ts, checked against the live tables at start-up by verifyReadColumns).
 *
 * Never sort or group by a Decimal128 column: on 18.16 sorting by one costs tens of microseconds per comparison
 * (169k snapshot rows: 107 s to insert with `price` in the sort key, 0.1 s with `toFloat64(price)`), and a GROUP BY
 * with a Decimal128 key crashed the server. Prices are ordered through `toFloat64(price)`; distinct prices of one
 * book are far apart enough for Float64 to keep them distinct, and the output carries the exact decimal.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { join, lit, sql, type Sql } from '../literals';
import { Querier, type JsonRow, type QuerierOptions } from '../querier';
import {
  READ_COLUMNS,
  SIDE_ENUM,
  VERIFICATION_METHODS,
  VERIFICATION_METHOD_CODES,
  type GapStream,
  type ReadKind,
  type RowKind,
  type VerificationMethod,
} from '../schema';
import type { QueryScope } from '../scope';
import type { HistoryStore } from '../store';
import { readColumn, tickerCondition, windowCondition, type DeltaResume, type TimeWindow } from './conditions';
import {
  CATALOGUE_KINDS,
  barsQuery,
  interleavedWindowQuery,
  lastTradeQuery,
  receiveSpanQuery,
  tradeRowExistsQuery,
  tradeWindowQuery,
  type TradeReadOptions,
} from './trades';

export type { DeltaResume, TimeWindow } from './conditions';

/** The columns of a window read: the layout's, then `received_ts` and `venue_seq` when asked for. */
const columnList = (kind: RowKind, options: WindowQueryOptions): Sql => {
  const asked = READ_COLUMNS[kind].extra.filter(([name]) =>
    name === 'received_ts' ? options.receivedTs === true : options.venueSeq === true,
  );
  return join(
    [...READ_COLUMNS[kind].columns, ...asked].map(([name]) => readColumn(name)),
    ', ',
  );
};
const SNAPSHOT_ORDER = sql`ts, side, toFloat64(price), toFloat64(quantity)`;

/** The gaps of one stream (migration 3): the book's, or the trades'. */
const streamCondition = (stream: GapStream): Sql => sql`stream = ${lit.token(stream)}`;
/** The book stream's gaps (a trades gap leaves the book continuous). */
export const BOOK_GAPS = streamCondition('book');

export interface WindowQueryOptions {
  /** Add `received_ts` after the layout's columns. */
  receivedTs?: boolean;
  /** Add `venue_seq` (a FixedString(VENUE_SEQ_BYTES)) after them. */
  venueSeq?: boolean;
  /** Deltas: resume at this key of the window's first millisecond (see DeltaResume). */
  resume?: DeltaResume;
}

/**
 * Delta rows of one ticker in one time window, in (ts, sequence) order, at most `limit` of them. The WHERE clause
 * leads with the sort key (exchange, ticker, ts), so only this ticker's granules in this window are read.
 */
export function deltaWindowQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  options: WindowQueryOptions = {},
): Sql {
  const resume = options.resume;
  const after =
    resume === undefined ? sql`` : sql` AND (ts > ${lit.int(w.from)} OR sequence >= ${lit.int(resume.sequence)})`;
  const offset = resume !== undefined && resume.skip > 0 ? sql`${lit.int(resume.skip)}, ` : sql``;
  return sql`SELECT ${columnList('delta', options)}
FROM ${db}.deltas
WHERE ${tickerCondition(exchange, ticker)} AND ${windowCondition(w)}${after}
ORDER BY ts, sequence
LIMIT ${offset}${lit.int(limit)}
FORMAT RowBinary`;
}

/**
 * Snapshot rows of one ticker in one window, in (ts, side, price) order: bids, then asks, each by price ascending.
 * At most `limit` rows; the history API asks for a few more than it needs and cuts at the end of a book itself
 * (its order-book reader), falling back to `snapshotBookRestQuery` in the rare case that a book is longer than that
 * slack.
 */
function snapshotWindowQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  options: WindowQueryOptions = {},
): Sql {
  return sql`SELECT ${columnList('snapshot', options)}
FROM ${db}.snapshots
WHERE ${tickerCondition(exchange, ticker)} AND ${windowCondition(w)}
ORDER BY ${SNAPSHOT_ORDER}
LIMIT ${lit.int(limit)}
FORMAT RowBinary`;
}

/**
 * The first `limit` snapshot rows of a window rounded up to whole books (every row whose ts is at or before the
 * ts of the limit-th row), without the first `skip` of them: the exact, two-read form of the cut.
 */
function snapshotBookRestQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  skip: number,
  options: WindowQueryOptions = {},
): Sql {
  const where = sql`${tickerCondition(exchange, ticker)} AND ${windowCondition(w)}`;
  return sql`SELECT ${columnList('snapshot', options)}
FROM ${db}.snapshots
WHERE ${where}
  AND ts <= (SELECT max(ts) FROM (SELECT ts FROM ${db}.snapshots WHERE ${where} ORDER BY ts LIMIT ${lit.int(limit)}))
ORDER BY ${SNAPSHOT_ORDER}
LIMIT ${lit.int(skip)}, 1000000000
FORMAT RowBinary`;
}

/**
 * Whether a row of one kind of one ticker exists at or after `from` (and at or before `to`): `LIMIT 1` without a
 * sort, so ClickHouse stops at the first row it finds. Tells an answer that met its limit at the end of a window
 * whether more follows.
 */
function rowExistsQuery(
  db: Sql,
  kind: RowKind,
  exchange: ExchangeKey,
  ticker: string,
  from: number,
  to: number | null,
): Sql {
  const table = kind === 'delta' ? sql`deltas` : sql`snapshots`;
  return sql`SELECT ts FROM ${db}.${table}
WHERE ${tickerCondition(exchange, ticker)} AND ${windowCondition({ from, to, toInclusive: true })}
LIMIT 1`;
}

/**
 * The raw material of the book of one ticker at `at`, in one read (RowBinary, BOOK_LAYOUT rows, in no particular
 * order): every snapshot row in [from, at] (row kind 1), every delta in [from, at] (row kind 2), and every gap that
 * overlaps [from, at] (row kind 3): one that covers `at`, or ended in the range. A gap row carries from_ts as its
 * ts, to_ts as its sequence and detected_at as its price; its reason is read apart (gapQuery), only when an answer
 * shows the gap. (Three reads of a few granules each: on 18.16 every table read costs about 0.8 ms of CPU whatever
 * it returns, so the book reads nothing it does not need.)
 *
 * Rule 7 of the spec: the snapshot at S is the book after every delta with ts < S, so the book at T is the newest
 * snapshot at or before T plus the deltas with S ≤ ts ≤ T; a gap closed by an empty book (no snapshot at its to_ts)
 * restarts it empty at its end. `from` is a short look back (BOOK_FIRST_LOOK_BACK_MS: books come every few minutes,
 * so the newest is almost always in it, and reading a few books and the deltas since costs about what one book costs,
 * since ClickHouse reads whole granules) or, when that held none, the base bookBaseQuery found. Plain range reads on
 * the primary key: no subquery, no sort (the service orders the few deltas itself).
 *
 *   row_kind UInt8 | ts Int64 | row_sequence UInt64 | side Enum8 | price Decimal(38,18) | quantity Decimal(38,18)
 */
export function bookQuery(db: Sql, exchange: ExchangeKey, ticker: string, from: number, at: number): Sql {
  const { snapshots, deltas, gaps } = bookReads(db, exchange, ticker, from, at);
  return sql`${snapshots}
UNION ALL
${deltas}
UNION ALL
${gaps}
FORMAT RowBinary`;
}

/**
 * The three reads of bookQuery (its SELECTs, without a format): each is also run alone by the history benchmark, to
 * show what each table read of a book costs beside one page of deltas (bench/history, part `reads`).
 */
export function bookReads(db: Sql, exchange: ExchangeKey, ticker: string, from: number, at: number) {
  const key = tickerCondition(exchange, ticker);
  const range = sql`ts >= ${lit.int(from)} AND ts <= ${lit.int(at)}`;
  const gapColumns = sql`from_ts, toUInt64(to_ts), CAST('bid' AS ${SIDE_ENUM}), toDecimal128(detected_at, 18), toDecimal128(0, 18)`;
  return {
    snapshots: sql`SELECT toUInt8(1) AS row_kind, ts, toUInt64(0) AS row_sequence, side, price, quantity AS row_quantity
FROM ${db}.snapshots WHERE ${key} AND ${range}`,
    deltas: sql`SELECT toUInt8(2), ts, sequence, side, price, quantity_delta
FROM ${db}.deltas WHERE ${key} AND ${range}`,
    gaps: sql`SELECT toUInt8(3), ${gapColumns}
FROM ${db}.gaps WHERE ${key} AND ${BOOK_GAPS} AND from_ts <= ${lit.int(at)} AND to_ts >= ${lit.int(from)}`,
  };
}

/** The RowBinary layout of bookQuery's rows: offsets and size. */
export const BOOK_LAYOUT = { kind: 0, ts: 1, sequence: 9, side: 17, price: 18, quantity: 34, size: 50 } as const;

/** How far back the book's first read looks (bookQuery). */
export const BOOK_FIRST_LOOK_BACK_MS = 15 * 60_000;

/** How far back the last trade's first read looks on the venue clock (OrderBookQueries.lastTrade). */
export const LAST_TRADE_FIRST_LOOK_BACK_MS = 15 * 60_000;

/**
 * Where the book at `at` starts when its first read held none: the newest snapshot ts and the newest gap end in
 * [lower, at] (`snapshot_ts`, `gap_end`; 0 when there is none). Reads the ticker's snapshot keys and gaps only.
 */
export function bookBaseQuery(db: Sql, exchange: ExchangeKey, ticker: string, lower: number, at: number): Sql {
  const key = tickerCondition(exchange, ticker);
  const range = (column: Sql) => sql`${column} >= ${lit.int(lower)} AND ${column} <= ${lit.int(at)}`;
  return sql`SELECT (SELECT max(ts) FROM ${db}.snapshots WHERE ${key} AND ${range(sql`ts`)}) AS snapshot_ts,
  (SELECT max(to_ts) FROM ${db}.gaps WHERE ${key} AND ${BOOK_GAPS} AND ${range(sql`to_ts`)}) AS gap_end`;
}

/**
 * Where a ticker's book begins after `after` when it has none then (a window that starts before the ticker's first
 * snapshot): the first snapshot's ts in (after, to] (`snapshot_ts`; to null: open) and the earliest start of a book
 * gap that ends after `after` (`gap_from`: a gap before that snapshot opens the book instead); 0 when there is none.
 * Reads the ticker's snapshot keys and gaps only.
 */
export function bookStartQuery(db: Sql, exchange: ExchangeKey, ticker: string, after: number, to: number | null): Sql {
  const key = tickerCondition(exchange, ticker);
  const upper = to === null ? sql`` : sql` AND ts <= ${lit.int(to)}`;
  return sql`SELECT (SELECT min(ts) FROM ${db}.snapshots WHERE ${key} AND ts > ${lit.int(after)}${upper}) AS snapshot_ts,
  (SELECT min(from_ts) FROM ${db}.gaps WHERE ${key} AND ${BOOK_GAPS} AND to_ts > ${lit.int(after)}) AS gap_from`;
}

/** One recorded book gap of a ticker by its bounds (its reason and detected_at). */
function gapQuery(db: Sql, exchange: ExchangeKey, ticker: string, fromTs: number, toTs: number): Sql {
  return sql`SELECT from_ts, to_ts, reason, detected_at FROM ${db}.gaps
WHERE ${tickerCondition(exchange, ticker)} AND ${BOOK_GAPS} AND from_ts = ${lit.int(fromTs)} AND to_ts = ${lit.int(toTs)}
LIMIT 1`;
}

/**
 * Gaps of one ticker that overlap [from, to] (to null: open) and start at or after `startingFrom` (a page that
 * continues a walk leaves out the gaps the pages before it showed), ordered by from_ts.
 */
function gapsQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  range: { from: number; to: number | null; startingFrom?: number; stream?: GapStream },
): Sql {
  const conditions: Sql[] = [
    tickerCondition(exchange, ticker),
    streamCondition(range.stream ?? 'book'),
    sql`to_ts >= ${lit.int(range.from)}`,
  ];
  if (range.to !== null) conditions.push(sql`from_ts <= ${lit.int(range.to)}`);
  if (range.startingFrom !== undefined) conditions.push(sql`from_ts >= ${lit.int(range.startingFrom)}`);
  return sql`SELECT from_ts, to_ts, reason, detected_at FROM ${db}.gaps
WHERE ${join(conditions, ' AND ')}
ORDER BY from_ts, to_ts`;
}

/**
 * What one ticker holds in [from, to] (to null: open): per kind, rows, first and last ts, and for snapshots the
 * number of books (distinct ts); and per verification method (kind `verification:<method>`, a row per method that
 * has any), its verification points — distinct moments, so a point stored twice counts once — and the first and
 * last. Reads the `ts` column of the ticker's rows in the range only (and the verifications' `method`).
 */
function coverageQuery(db: Sql, exchange: ExchangeKey, ticker: string, from: number, to: number | null): Sql {
  const where = sql`${tickerCondition(exchange, ticker)} AND ${windowCondition({ from, to, toInclusive: true })}`;
  return sql`SELECT 'snapshot' AS kind_name, count() AS n_rows, min(ts) AS min_ts, max(ts) AS max_ts,
  uniqExact(ts) AS n_books
FROM ${db}.snapshots WHERE ${where}
UNION ALL
SELECT 'delta', count(), min(ts), max(ts), toUInt64(0)
FROM ${db}.deltas WHERE ${where}
UNION ALL
SELECT concat('verification:', toString(method)), uniqExact(ts), min(ts), max(ts), toUInt64(0)
FROM ${db}.verifications WHERE ${where}
GROUP BY method`;
}

/**
 * How far from `at` the verification points are looked for first. Points come every few seconds (checksums) to every
 * few minutes (a REST book within the budget), so nearly every answer is found inside it; a side with none there is
 * read again without the bound (rare: a ticker not reconciled, or recorded before points were kept), which keeps the
 * answer exact while a year of a busy ticker's points is never scanned for the common case.
 */
export const VERIFIED_NEAR_MS = 86_400_000;

/**
 * The verification points of one ticker around `at`: the last at or before it, not before `from` (the caller's
 * window, or the near bound: nothing before it is shown), and the first after it, not after `to` (null: no bound),
 * each with its method's code (n = 0: none; the method is read as its code, as an Enum8 aggregated over no rows is
 * not a member on 18.16). Primary-key range reads of the ticker's verification points, one row each (`before`, then
 * `after`; a side may be left out). Of two methods at the same moment the greater code is named (a tie is the same
 * moment confirmed twice).
 */
function verifiedAroundQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  at: number,
  sides: { before?: { from: number }; after?: { to: number | null } },
): Sql {
  const key = tickerCondition(exchange, ticker);
  const code = sql`CAST(method AS Int8)`;
  const parts: Sql[] = [];
  if (sides.before) {
    parts.push(sql`SELECT 'before' AS which, count() AS n, max(ts) AS point_ts, argMax(${code}, ts * 4 + ${code}) AS method_code
FROM ${db}.verifications WHERE ${key} AND ts >= ${lit.int(sides.before.from)} AND ts <= ${lit.int(at)}`);
  }
  if (sides.after) {
    const to = sides.after.to === null ? sql`` : sql` AND ts <= ${lit.int(sides.after.to)}`;
    parts.push(sql`SELECT 'after' AS which, count() AS n, min(ts) AS point_ts, argMin(${code}, ts * 4 - ${code}) AS method_code
FROM ${db}.verifications WHERE ${key} AND ts > ${lit.int(at)}${to}`);
  }
  return parts.reduce(
    (all, part) => sql`${all}
UNION ALL
${part}`,
  );
}

/**
 * Catalogue entries (per kind) of the tickers that equal one of `tickers` (at least one) ignoring case: the book's
 * catalogue per kind, and the trades' own (kind `trade`). (Result aliases never reuse a column's name: the analyzer of
 * current ClickHouse resolves such names differently from 18.16.) Reads the small aggregated catalogues only, never raw
 * rows. Ordered, so that every server (and a cluster's merge of its shards) answers alike.
 */
function catalogueEntryQuery(db: Sql, exchange: ExchangeKey, tickers: readonly string[]): Sql {
  const names = join(
    [...new Set(tickers.map((t) => t.toLowerCase()))].map((t) => lit.ticker(t)),
    ', ',
  );
  const where = sql`exchange = ${lit.exchange(exchange)} AND lower(ticker) IN (${names})`;
  return sql`SELECT ticker_name, kind_name, min_ts, max_ts, n_rows FROM (
  SELECT ticker AS ticker_name, toString(kind) AS kind_name, minMerge(first_ts) AS min_ts, maxMerge(last_ts) AS max_ts,
    countMerge(row_count) AS n_rows
  FROM ${db}.ticker_catalogue
  WHERE ${where}
  GROUP BY ticker, kind
  UNION ALL
  SELECT ticker, 'trade', minMerge(first_ts), maxMerge(last_ts), countMerge(row_count)
  FROM ${db}.trades_catalogue
  WHERE ${where}
  GROUP BY ticker
)
ORDER BY ticker_name, kind_name`;
}

/**
 * Tickers of an exchange with their data span, filtered by the request's `prefix` and the key's
 * `ticker_prefixes` (each case-insensitive; both must hold), in byte order. Prefixes are literal: `startsWith`, not
 * LIKE, so `_` and `%` mean themselves.
 */
export function tickersQuery(
  db: Sql,
  exchange: ExchangeKey,
  options: { prefix?: string; allowedPrefixes?: readonly string[] | null },
): Sql {
  const conditions: Sql[] = [sql`exchange = ${lit.exchange(exchange)}`];
  if (options.prefix) conditions.push(sql`startsWith(lower(ticker), ${lit.ticker(options.prefix.toLowerCase())})`);
  if (options.allowedPrefixes) {
    const any = options.allowedPrefixes.map((p) => sql`startsWith(lower(ticker), ${lit.ticker(p.toLowerCase())})`);
    conditions.push(any.length > 0 ? sql`(${join(any, ' OR ')})` : sql`0`);
  }
  return sql`SELECT ticker, minMerge(first_ts) AS min_ts, maxMerge(last_ts) AS max_ts
FROM ${db}.ticker_catalogue
WHERE ${join(conditions, ' AND ')}
GROUP BY ticker
ORDER BY ticker`;
}

/** A ticker's catalogue entry for one kind of rows: its stored name, its first and last `ts`, its row count. */
export interface CatalogueSpan {
  /** The ticker as stored (the lookup may have used another case). */
  ticker: string;
  kind: ReadKind;
  firstTs: number;
  lastTs: number;
  rows: number;
}

export interface TickerSpan {
  ticker: string;
  firstTs: number;
  lastTs: number;
}

/** One window read of one ticker. */
export interface WindowRead {
  exchange: ExchangeKey;
  /** The ticker as stored. */
  ticker: string;
  window: TimeWindow;
  /** Rows asked for (the query's LIMIT). */
  limit: number;
  /** Run on one ClickHouse thread (small windows). */
  singleThread?: boolean;
  /** Read `received_ts` too, after the layout's columns. */
  receivedTs?: boolean;
  /** Read `venue_seq` too (a FixedString(VENUE_SEQ_BYTES)), after `received_ts`. */
  venueSeq?: boolean;
  /** Deltas: resume inside the window's first millisecond (a cursor's position). */
  resume?: DeltaResume;
  /** Interleaved: only the rows received in (from, to] (with `receivedTs`). */
  received?: { from: number; to: number };
}

/** Where a receive-time window lies on the venue clock (receiveSpanQuery; undefined: none). */
export interface ReceiveSpan {
  /** The newest snapshot received at or before `from`. */
  snapshotTs: number | undefined;
  /** The newest delta received at or before `from`. */
  bookLastTs: number | undefined;
  /** The deltas and trades received in (from, to]: how many, their first and last ts. */
  rows: number;
  firstTs: number | undefined;
  lastTs: number | undefined;
}

/** A recorded gap of a ticker (epoch ms). */
export interface StoredGap {
  fromTs: number;
  toTs: number;
  reason: string;
  detectedAt: number;
}

/** What one ticker holds of one kind in a range. */
export interface KindCoverage {
  rows: number;
  /** null when there are no rows. */
  firstTs: number | null;
  lastTs: number | null;
  /** Snapshots: distinct books; deltas: 0. */
  books: number;
}

/** A ticker's verification points in a range: how many (per method), the first and the last. */
export interface VerificationCoverage {
  /** Distinct (moment, method) points. */
  count: number;
  /** null when there is none. */
  firstTs: number | null;
  lastTs: number | null;
  methods: Record<VerificationMethod, number>;
}

/** What one ticker holds in a range: per kind of book row, and its verification points. */
export type TickerCoverage = Record<RowKind, KindCoverage> & { verification: VerificationCoverage };

/** A moment the recorder found the book equal to the venue's, and how. */
export interface VerificationPoint {
  ts: number;
  method: VerificationMethod;
}

/** The verification points around a moment (null: none). */
export interface VerifiedAround {
  /** The last at or before the moment (inside the caller's window). */
  before: VerificationPoint | null;
  /** The first after it. */
  after: VerificationPoint | null;
}

/** A decimal as `toString` writes it, without trailing zeros (18.16 writes every place, current ClickHouse not). */
export const trimDecimal = (text: string): string => (text.includes('.') ? text.replace(/\.?0+$/, '') : text);

/** A trade as lastTrade reads it: price and size as decimal text without trailing zeros. */
export interface StoredTrade {
  ts: number;
  sequence: number;
  tradeId: string;
  price: string;
  size: string;
  side: 'buy' | 'sell';
  venueSide: string;
  receivedTs: number;
}

const gapOf = (r: JsonRow): StoredGap => ({
  fromTs: Number(r.from_ts),
  toTs: Number(r.to_ts),
  reason: String(r.reason),
  detectedAt: Number(r.detected_at),
});

/**
 * The stored name a request's ticker means, from its catalogue spans (`OrderBookQueries.catalogue`): the ticker
 * itself when stored so, else the one stored ticker equal to it ignoring case; undefined when none is (or several
 * are). One rule for every reader (the history API, the replay).
 */
export function storedTickerName(spans: readonly { ticker: string }[], requested: string): string | undefined {
  const names = [...new Set(spans.map((s) => s.ticker))];
  return names.includes(requested) ? requested : names.length === 1 ? names[0] : undefined;
}

/** The history API's reads, each under the request's QueryScope. */
export class OrderBookQueries {
  private readonly q: Querier;

  constructor(store: HistoryStore, options: QuerierOptions = {}) {
    this.q = new Querier(store, options);
  }

  /** Catalogue spans (per kind) of the tickers of `exchange` equal to `ticker` ignoring case. */
  catalogue(scope: QueryScope, exchange: ExchangeKey, ticker: string): Promise<CatalogueSpan[]> {
    return this.catalogues(scope, exchange, [ticker]);
  }

  /**
   * Catalogue spans (per kind) of the tickers of `exchange` equal to any of `tickers` ignoring case, in one query
   * (none for an empty list). Each name is at most 128 characters (TICKER_PATTERN), so a list of a few hundred keeps
   * the query well inside ClickHouse's `max_query_size` (256 KiB).
   */
  async catalogues(scope: QueryScope, exchange: ExchangeKey, tickers: readonly string[]): Promise<CatalogueSpan[]> {
    if (tickers.length === 0) return [];
    const rows = await this.q.json(scope, 'catalogue', catalogueEntryQuery(this.q.db, exchange, tickers), (r) => ({
      ticker: String(r.ticker_name),
      kind: String(r.kind_name),
      firstTs: Number(r.min_ts),
      lastTs: Number(r.max_ts),
      rows: Number(r.n_rows),
    }));
    return rows.filter((r): r is CatalogueSpan => CATALOGUE_KINDS.has(r.kind));
  }

  /** Tickers of an exchange passing both prefix filters, in byte order, with their data span. */
  tickers(
    scope: QueryScope,
    exchange: ExchangeKey,
    filters: { prefix?: string; allowedPrefixes?: readonly string[] | null },
  ): Promise<TickerSpan[]> {
    return this.q.json(scope, 'tickers', tickersQuery(this.q.db, exchange, filters), (r) => ({
      ticker: String(r.ticker),
      firstTs: Number(r.min_ts),
      lastTs: Number(r.max_ts),
    }));
  }

  /** Delta rows of a window in RowBinary (the delta layout), chunk by chunk. */
  deltas(scope: QueryScope, read: WindowRead, onChunk: (chunk: Buffer) => Promise<void> | void): Promise<void> {
    const query = deltaWindowQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit, read);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
  }

  /**
   * Trades of a window in RowBinary (the trade layout: `received_ts` and `venue_side` when asked for), one row per
   * trade, in (ts, sequence) order, chunk by chunk.
   */
  trades(
    scope: QueryScope,
    read: WindowRead & Pick<TradeReadOptions, 'venueSide'>,
    onChunk: (chunk: Buffer) => Promise<void> | void,
  ): Promise<void> {
    const query = tradeWindowQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit, read);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
  }

  /** Deltas and trades of a window interleaved by (ts, sequence), in RowBinary (the interleaved layout). */
  interleaved(scope: QueryScope, read: WindowRead, onChunk: (chunk: Buffer) => Promise<void> | void): Promise<void> {
    const query = interleavedWindowQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit, read);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
  }

  /**
   * The bars of the trades with `from` ≤ ts < `to` (null: open), at most `limit`, in RowBinary (BAR_LAYOUT), whole:
   * one window of a page of bars, rendered in one buffer and written before the next window's.
   */
  async bars(
    scope: QueryScope,
    read: { exchange: ExchangeKey; ticker: string; intervalMs: number; from: number; to: number | null; limit: number },
  ): Promise<Buffer> {
    const query = barsQuery(this.q.db, read.exchange, read.ticker, read.intervalMs, read.from, read.to, read.limit);
    const chunks: Buffer[] = [];
    await this.q.stream(scope, 'bars', query, (chunk) => void chunks.push(chunk));
    return Buffer.concat(chunks);
  }

  /** Snapshot rows of a window in RowBinary (the snapshot layout), in book order, chunk by chunk. */
  snapshots(scope: QueryScope, read: WindowRead, onChunk: (chunk: Buffer) => Promise<void> | void): Promise<void> {
    const query = snapshotWindowQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit, read);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
  }

  /** Whether a row of a kind (interleaved: a delta or a trade) exists in [from, to] (to null: open). */
  async rowExists(
    scope: QueryScope,
    kind: ReadKind | 'interleaved',
    exchange: ExchangeKey,
    ticker: string,
    from: number,
    to: number | null,
  ): Promise<boolean> {
    const query =
      kind === 'trade' || kind === 'interleaved'
        ? tradeRowExistsQuery(this.q.db, kind, exchange, ticker, from, to)
        : rowExistsQuery(this.q.db, kind, exchange, ticker, from, to);
    return (await this.q.json(scope, 'exists', query, () => 1)).length > 0;
  }

  /** The book's raw material at `at` from `from` on (bookQuery: BOOK_LAYOUT rows), chunk by chunk. */
  book(
    scope: QueryScope,
    read: { exchange: ExchangeKey; ticker: string; from: number; at: number },
    onChunk: (chunk: Buffer) => Promise<void> | void,
  ): Promise<void> {
    const query = bookQuery(this.q.db, read.exchange, read.ticker, read.from, read.at);
    return this.q.stream(scope, 'book', query, onChunk, { singleThread: true });
  }

  /** Where the book at `at` starts, from [lower, at]: the newest snapshot's ts and gap end (undefined: none). */
  async bookBase(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    lower: number,
    at: number,
  ): Promise<{ snapshotTs: number | undefined; gapEnd: number | undefined }> {
    const [row] = await this.q.json(scope, 'book', bookBaseQuery(this.q.db, exchange, ticker, lower, at), (r) => r);
    const some = (v: unknown) => (Number(v) > 0 ? Number(v) : undefined);
    return { snapshotTs: some(row?.snapshot_ts), gapEnd: some(row?.gap_end) };
  }

  /**
   * Where the book begins after `after` when there is none then (bookStartQuery): the first snapshot in (after, to]
   * and the earliest start of a gap ending after `after` (undefined: none).
   */
  async bookStart(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    after: number,
    to: number | null,
  ): Promise<{ snapshotTs: number | undefined; gapFrom: number | undefined }> {
    const [row] = await this.q.json(scope, 'book', bookStartQuery(this.q.db, exchange, ticker, after, to), (r) => r);
    const some = (v: unknown) => (Number(v) > 0 ? Number(v) : undefined);
    return { snapshotTs: some(row?.snapshot_ts), gapFrom: some(row?.gap_from) };
  }

  /** A recorded gap by its bounds. */
  async gap(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    fromTs: number,
    toTs: number,
  ): Promise<StoredGap | undefined> {
    const [gap] = await this.q.json(scope, 'gaps', gapQuery(this.q.db, exchange, ticker, fromTs, toTs), gapOf);
    return gap;
  }

  /** Gaps overlapping [from, to] that start at or after `startingFrom`, by from_ts. */
  gaps(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    /** `stream`: the book's gaps (default) or the trades'. */
    range: { from: number; to: number | null; startingFrom?: number; stream?: GapStream },
  ): Promise<StoredGap[]> {
    return this.q.json(scope, 'gaps', gapsQuery(this.q.db, exchange, ticker, range), gapOf);
  }

  /** Where the rows received in (from, to] lie on the venue clock, and the book received by `from` (one query). */
  async receiveSpan(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    from: number,
    to: number,
  ): Promise<ReceiveSpan> {
    const query = receiveSpanQuery(this.q.db, exchange, ticker, from, to);
    const [r] = await this.q.json(scope, 'book', query, (row) => row);
    const rows = Number(r?.n_rows ?? 0);
    const some = (v: unknown) => (Number(v) > 0 ? Number(v) : undefined);
    return {
      snapshotTs: some(r?.snapshot_ts),
      bookLastTs: some(r?.book_last_ts),
      rows,
      firstTs: rows > 0 ? Number(r?.first_ts) : undefined,
      lastTs: rows > 0 ? Number(r?.last_ts) : undefined,
    };
  }

  /**
   * The last trade at or before `at` on a clock (`ts`, or `received_ts`: the last one received by then) whose `ts` is
   * at or after `lower` (a caller's window: nothing older is shown); undefined when there is none. On the venue clock
   * the trades of LAST_TRADE_FIRST_LOOK_BACK_MS before `at` are read first (a traded ticker's last trade is there:
   * one short read), all of them from `lower` only when that held none. On the receive clock one read from `lower`:
   * a trade read back from the venue long after it happened may be the last one received, whatever its `ts`.
   */
  async lastTrade(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    lower: number,
    at: number,
    clock: 'ts' | 'received_ts' = 'ts',
  ): Promise<StoredTrade | undefined> {
    const near = clock === 'ts' ? Math.max(lower, at - LAST_TRADE_FIRST_LOOK_BACK_MS) : lower;
    const found = await this.lastTradeFrom(scope, exchange, ticker, near, at, clock);
    return found ?? (near > lower ? this.lastTradeFrom(scope, exchange, ticker, lower, at, clock) : undefined);
  }

  private async lastTradeFrom(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    lower: number,
    at: number,
    clock: 'ts' | 'received_ts',
  ): Promise<StoredTrade | undefined> {
    const query = lastTradeQuery(this.q.db, exchange, ticker, lower, at, clock);
    const [trade] = await this.q.json(scope, 'trades', query, (r) => ({
      ts: Number(r.ts),
      sequence: Number(r.sequence),
      tradeId: String(r.trade_id),
      price: trimDecimal(String(r.price_text)),
      size: trimDecimal(String(r.size_text)),
      side: String(r.side_name) === 'sell' ? ('sell' as const) : ('buy' as const),
      venueSide: String(r.venue_side),
      receivedTs: Number(r.received_ts),
    }));
    return trade;
  }

  /** Rows, first and last ts (and books) per kind in [from, to], and the verification points there. */
  async coverage(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    from: number,
    to: number | null,
  ): Promise<TickerCoverage> {
    const methods = Object.fromEntries(VERIFICATION_METHODS.map((m) => [m, 0])) as Record<VerificationMethod, number>;
    const out: TickerCoverage = {
      snapshot: { rows: 0, firstTs: null, lastTs: null, books: 0 },
      delta: { rows: 0, firstTs: null, lastTs: null, books: 0 },
      verification: { count: 0, firstTs: null, lastTs: null, methods },
    };
    const rows = await this.q.json(scope, 'coverage', coverageQuery(this.q.db, exchange, ticker, from, to), (r) => r);
    for (const r of rows) {
      const kind = String(r.kind_name);
      const n = Number(r.n_rows);
      const method = kind.startsWith('verification:') ? kind.slice('verification:'.length) : undefined;
      if (method !== undefined && n > 0 && (VERIFICATION_METHODS as readonly string[]).includes(method)) {
        const v = out.verification;
        v.methods[method as VerificationMethod] = n;
        v.count += n;
        v.firstTs = Math.min(v.firstTs ?? Infinity, Number(r.min_ts));
        v.lastTs = Math.max(v.lastTs ?? -Infinity, Number(r.max_ts));
        continue;
      }
      if (kind !== 'snapshot' && kind !== 'delta') continue;
      out[kind] = {
        rows: n,
        firstTs: n > 0 ? Number(r.min_ts) : null,
        lastTs: n > 0 ? Number(r.max_ts) : null,
        books: Number(r.n_books),
      };
    }
    return out;
  }

  /**
   * The verification points of a ticker around `at`: the last at or before it (not before `lower`, the caller's
   * window's start) and the first after it. Read within VERIFIED_NEAR_MS of `at` first; a side without a point there
   * is read again without that bound.
   */
  async verifiedAround(
    scope: QueryScope,
    exchange: ExchangeKey,
    ticker: string,
    lower: number,
    at: number,
  ): Promise<VerifiedAround> {
    const out: VerifiedAround = { before: null, after: null };
    const read = async (sides: Parameters<typeof verifiedAroundQuery>[4]) => {
      const query = verifiedAroundQuery(this.q.db, exchange, ticker, at, sides);
      for (const r of await this.q.json(scope, 'verified', query, (r) => r)) {
        const which = r.which === 'before' ? 'before' : r.which === 'after' ? 'after' : undefined;
        const method = VERIFICATION_METHODS.find((m) => VERIFICATION_METHOD_CODES[m] === Number(r.method_code));
        if (which === undefined || Number(r.n) === 0 || method === undefined) continue;
        out[which] = { ts: Number(r.point_ts), method };
      }
    };
    const nearFrom = Math.max(lower, at - VERIFIED_NEAR_MS);
    // No point lies in the future: near now (the newest book, the common case) the after side is read whole at once.
    const nearTo = at + VERIFIED_NEAR_MS >= Date.now() ? null : at + VERIFIED_NEAR_MS;
    await read({ before: { from: nearFrom }, after: { to: nearTo } });
    const again: Parameters<typeof verifiedAroundQuery>[4] = {};
    if (out.before === null && nearFrom > lower) again.before = { from: lower };
    if (out.after === null && nearTo !== null) again.after = { to: null };
    if (again.before || again.after) await read(again);
    return out;
  }

  /**
   * The first `read.limit` snapshot rows of a window rounded up to whole books, without the first `skip` of them:
   * the exact second read when a book is longer than what `snapshots` returned of it.
   */
  snapshotsToBookEnd(
    scope: QueryScope,
    read: WindowRead,
    skip: number,
    onChunk: (chunk: Buffer) => Promise<void> | void,
  ): Promise<void> {
    const query = snapshotBookRestQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit, skip, read);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
  }
}
