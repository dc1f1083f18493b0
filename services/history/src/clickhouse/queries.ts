/**
 * Every query the history service (and the generator) runs, in one place. DDL lives in migrations.ts.
 *
 * Window queries return raw columns in `RowBinary`, the cheapest output of ClickHouse; the service renders the
 * JSON text (history/row-binary.ts, which also states the column layouts these SELECT lists must keep).
 *
 * Never sort or group by a Decimal128 column: on 18.16 sorting by one costs tens of microseconds per comparison
 * (169k snapshot rows: 107 s to insert with `price` in the sort key, 0.1 s with `toFloat64(price)`), and a GROUP BY
 * with a Decimal128 key crashed the server. Prices are ordered through `toFloat64(price)`; distinct prices of one
 * book are far apart enough for Float64 to keep them distinct, and the output carries the exact decimal.
 */
import type { ExchangeKey } from '@depthgate/auth';
import { join, lit, sql, type Sql } from './literals';
import { READ_COLUMNS, type RowKind } from './schema';

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
 * At most `limit` rows; the service asks for a few more than it needs and cuts at the end of a book itself
 * (routes.ts), falling back to `snapshotBookRestQuery` in the rare case that a book is longer than that slack.
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
 * catalogue only, never raw rows.
 */
export function catalogueEntryQuery(db: Sql, exchange: ExchangeKey, ticker: string): Sql {
  return sql`SELECT ticker, toString(kind) AS kind_name, minMerge(first_ts) AS min_ts, maxMerge(last_ts) AS max_ts,
  countMerge(row_count) AS n_rows
FROM ${db}.ticker_catalogue
WHERE exchange = ${lit.exchange(exchange)} AND lower(ticker) = ${lit.ticker(ticker.toLowerCase())}
GROUP BY ticker, kind
FORMAT JSONEachRow`;
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
ORDER BY ticker
FORMAT JSONEachRow`;
}

/** Whether a query is still running (tests and diagnostics). */
export function runningQueryCount(queryId: string): Sql {
  return sql`SELECT count() AS n FROM system.processes WHERE query_id = ${lit.queryId(queryId)} FORMAT JSONEachRow`;
}
