/**
 * The queries of the history API's order-book endpoints: the ticker catalogue (one ticker's entry, an exchange's
 * list) and the time-window reads of snapshot and delta rows. OrderBookQueries runs them through a querier (gate,
 * budget, cancellation, tags `catalogue`, `tickers`, `window`).
 *
 * Window queries return raw columns in `RowBinary`, the cheapest output of ClickHouse; the history service renders
 * the JSON text (services/history/src/order-books/row-binary.ts decodes the layouts these column lists fix:
 * READ_COLUMNS in schema.ts, checked against the live tables at start-up by verifyReadColumns).
 *
 * Never sort or group by a Decimal128 column: on 18.16 sorting by one costs tens of microseconds per comparison
 * (169k snapshot rows: 107 s to insert with `price` in the sort key, 0.1 s with `toFloat64(price)`), and a GROUP BY
 * with a Decimal128 key crashed the server. Prices are ordered through `toFloat64(price)`; distinct prices of one
 * book are far apart enough for Float64 to keep them distinct, and the output carries the exact decimal.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { join, lit, sql, type Sql } from '../literals';
import { Querier, type QuerierOptions } from '../querier';
import { READ_COLUMNS, type RowKind } from '../schema';
import type { QueryScope } from '../scope';
import type { HistoryStore } from '../store';

const columnList = (kind: RowKind): Sql =>
  join(
    READ_COLUMNS[kind].columns.map(([name]) => lit.identifier(name)),
    ', ',
  );
const DELTA_COLUMNS = columnList('delta');
const SNAPSHOT_COLUMNS = columnList('snapshot');
const SNAPSHOT_ORDER = sql`ts, side, toFloat64(price), toFloat64(quantity)`;

export interface TimeWindow {
  /** Inclusive lower bound, epoch ms. */
  from: number;
  /** Upper bound, epoch ms; inclusive when `toInclusive`, else exclusive. `null`: unbounded. */
  to: number | null;
  toInclusive: boolean;
}

function windowCondition(w: TimeWindow): Sql {
  const lower = sql`ts >= ${lit.int(w.from)}`;
  if (w.to === null) return lower;
  return w.toInclusive ? sql`${lower} AND ts <= ${lit.int(w.to)}` : sql`${lower} AND ts < ${lit.int(w.to)}`;
}

/**
 * Delta rows of one ticker in one time window, in (ts, sequence) order, at most `limit` of them. The WHERE clause
 * leads with the sort key (exchange, ticker, ts), so only this ticker's granules in this window are read.
 */
export function deltaWindowQuery(db: Sql, exchange: ExchangeKey, ticker: string, w: TimeWindow, limit: number): Sql {
  const where = sql`exchange = ${lit.exchange(exchange)} AND ticker = ${lit.ticker(ticker)} AND ${windowCondition(w)}`;
  return sql`SELECT ${DELTA_COLUMNS}
FROM ${db}.deltas
WHERE ${where}
ORDER BY ts, sequence
LIMIT ${lit.int(limit)}
FORMAT RowBinary`;
}

/**
 * Snapshot rows of one ticker in one window, in (ts, side, price) order: bids, then asks, each by price ascending.
 * At most `limit` rows; the history API asks for a few more than it needs and cuts at the end of a book itself
 * (its order-book reader), falling back to `snapshotBookRestQuery` in the rare case that a book is longer than that
 * slack.
 */
export function snapshotWindowQuery(db: Sql, exchange: ExchangeKey, ticker: string, w: TimeWindow, limit: number): Sql {
  const where = sql`exchange = ${lit.exchange(exchange)} AND ticker = ${lit.ticker(ticker)} AND ${windowCondition(w)}`;
  return sql`SELECT ${SNAPSHOT_COLUMNS}
FROM ${db}.snapshots
WHERE ${where}
ORDER BY ${SNAPSHOT_ORDER}
LIMIT ${lit.int(limit)}
FORMAT RowBinary`;
}

/**
 * The first `limit` snapshot rows of a window rounded up to whole books (every row whose ts is at or before the
 * ts of the limit-th row), without the first `skip` of them: the exact, two-read form of the cut.
 */
export function snapshotBookRestQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  skip: number,
): Sql {
  const where = sql`exchange = ${lit.exchange(exchange)} AND ticker = ${lit.ticker(ticker)} AND ${windowCondition(w)}`;
  return sql`SELECT ${SNAPSHOT_COLUMNS}
FROM ${db}.snapshots
WHERE ${where}
  AND ts <= (SELECT max(ts) FROM (SELECT ts FROM ${db}.snapshots WHERE ${where} ORDER BY ts LIMIT ${lit.int(limit)}))
ORDER BY ${SNAPSHOT_ORDER}
LIMIT ${lit.int(skip)}, 1000000000
FORMAT RowBinary`;
}

/**
 * Catalogue entries (per kind) of the tickers that equal `ticker` ignoring case. (Result aliases never reuse a
 * column's name: the analyzer of current ClickHouse resolves such names differently from 18.16.) Reads the small aggregated
 * catalogue only, never raw rows. Ordered, so that every server (and a cluster's merge of its shards) answers alike.
 */
export function catalogueEntryQuery(db: Sql, exchange: ExchangeKey, ticker: string): Sql {
  return sql`SELECT ticker, toString(kind) AS kind_name, minMerge(first_ts) AS min_ts, maxMerge(last_ts) AS max_ts,
  countMerge(row_count) AS n_rows
FROM ${db}.ticker_catalogue
WHERE exchange = ${lit.exchange(exchange)} AND lower(ticker) = ${lit.ticker(ticker.toLowerCase())}
GROUP BY ticker, kind
ORDER BY ticker, kind`;
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
  kind: RowKind;
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
}

const KINDS: ReadonlySet<string> = new Set<RowKind>(['snapshot', 'delta']);

/** The history API's reads, each under the request's QueryScope. */
export class OrderBookQueries {
  private readonly q: Querier;

  constructor(store: HistoryStore, options: QuerierOptions = {}) {
    this.q = new Querier(store, options);
  }

  /** Catalogue spans (per kind) of the tickers of `exchange` equal to `ticker` ignoring case. */
  async catalogue(scope: QueryScope, exchange: ExchangeKey, ticker: string): Promise<CatalogueSpan[]> {
    const rows = await this.q.json(scope, 'catalogue', catalogueEntryQuery(this.q.db, exchange, ticker), (r) => ({
      ticker: String(r.ticker),
      kind: String(r.kind_name),
      firstTs: Number(r.min_ts),
      lastTs: Number(r.max_ts),
      rows: Number(r.n_rows),
    }));
    return rows.filter((r): r is CatalogueSpan => KINDS.has(r.kind));
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
    const query = deltaWindowQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
  }

  /** Snapshot rows of a window in RowBinary (the snapshot layout), in book order, chunk by chunk. */
  snapshots(scope: QueryScope, read: WindowRead, onChunk: (chunk: Buffer) => Promise<void> | void): Promise<void> {
    const query = snapshotWindowQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
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
    const query = snapshotBookRestQuery(this.q.db, read.exchange, read.ticker, read.window, read.limit, skip);
    return this.q.stream(scope, 'window', query, onChunk, { singleThread: read.singleThread });
  }
}
