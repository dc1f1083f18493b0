/**
 * Every query the history service (and the generator) runs, in one place. DDL lives in migrations.ts.
 *
 * Rows are rendered by ClickHouse as their final JSON text (`FORMAT TabSeparatedRaw`, one object per line), so the
 * service only moves bytes. The renderings are the canonical output forms (docs/history.md, "Formats"):
 *
 * - `ts`: UTC RFC 3339 with exactly three fractional digits, `2026-03-26T14:00:01.193Z`.
 * - decimals: plain decimal notation with trailing fractional zeros removed (and the point, when nothing is left
 *   after it): `0.48`, `150`, `-20.5`, `0`. ClickHouse 18.16 prints all 18 stored places and current releases trim
 *   them; `extract(toString(x), '^-?[0-9]+(?:[.][0-9]*[1-9])?')` keeps the sign, the integer part and the fraction
 *   up to its last non-zero digit, so both give the same text (and it costs a third of a replace-based trim).
 * - `sequence`: a JSON integer.
 *
 * Never sort or group by a Decimal128 column: on 18.16 sorting by one costs tens of microseconds per comparison
 * (169k snapshot rows: 107 s to insert with `price` in the sort key, 0.1 s with `toFloat64(price)`), and a GROUP BY
 * with a Decimal128 key crashed the server. Prices are ordered through `toFloat64(price)`; distinct prices of one
 * book are far apart enough for Float64 to keep them distinct, and the output prints the exact decimal.
 */
import type { ExchangeKey } from '@depthgate/auth';
import { join, lit, sql, type Sql } from './literals';

/** `ts` (Int64 epoch ms) → `"YYYY-MM-DDTHH:MM:SS.mmmZ"` (without the quotes). */
const TS_TEXT = sql`formatDateTime(toDateTime(intDiv(ts, 1000), 'UTC'), '%FT%T', 'UTC'), '.', substring(toString(1000 + ts % 1000), 2), 'Z'`;

function decimalText(column: Sql): Sql {
  return sql`extract(toString(${column}), '^-?[0-9]+(?:[.][0-9]*[1-9])?')`;
}

const SNAPSHOT_ROW_JSON = sql`concat('{"ts":"', ${TS_TEXT}, '","side":"', toString(side), '","price":"', ${decimalText(
  sql`price`,
)}, '","quantity":"', ${decimalText(sql`quantity`)}, '"}')`;

const DELTA_ROW_JSON = sql`concat('{"ts":"', ${TS_TEXT}, '","sequence":', toString(sequence), ',"side":"', toString(side), '","price":"', ${decimalText(
  sql`price`,
)}, '","quantity_delta":"', ${decimalText(sql`quantity_delta`)}, '"}')`;

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
 * Delta rows of one ticker in one time window as JSON lines, in (ts, sequence) order, at most `limit` of them.
 * The WHERE clause leads with the sort key (exchange, ticker, ts), so only this ticker's granules in this window
 * are read.
 *
 * Where rows are rendered is a trade-off, chosen per window (`renderAfterLimit`): rendering after the LIMIT (in an
 * outer query) turns only the rows sent into text, but on one thread; rendering before the sort does it for every
 * row of the window, but on all of the query's threads. Small windows run on one thread and render after the
 * limit; large ones render in parallel (measured: 0.6 s against 1.15 s for 862k rows on 2 cores). The outer ORDER BY
 * costs little on sorted rows and keeps the order whatever a server version's planner does with subqueries.
 */
export function deltaWindowQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  options: { renderAfterLimit: boolean },
): Sql {
  const where = sql`exchange = ${lit.exchange(exchange)} AND ticker = ${lit.ticker(ticker)} AND ${windowCondition(w)}`;
  if (!options.renderAfterLimit) {
    return sql`SELECT ${DELTA_ROW_JSON}
FROM ${db}.deltas
WHERE ${where}
ORDER BY ts, sequence
LIMIT ${lit.int(limit)}
FORMAT TabSeparatedRaw`;
  }
  return sql`SELECT ${DELTA_ROW_JSON}
FROM (
  SELECT ts, sequence, side, price, quantity_delta
  FROM ${db}.deltas
  WHERE ${where}
  ORDER BY ts, sequence
  LIMIT ${lit.int(limit)}
)
ORDER BY ts, sequence
FORMAT TabSeparatedRaw`;
}

/**
 * Snapshot rows of one ticker in one window, in (ts, side, price) order: bids, then asks, each by price ascending.
 * At most `limit` rows; the service asks for a few more than it needs and cuts at the end of a book itself
 * (routes.ts), falling back to `snapshotBookRestQuery` in the rare case that a book is longer than that slack.
 * `renderAfterLimit` as for deltas.
 */
export function snapshotWindowQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  options: { renderAfterLimit: boolean },
): Sql {
  const where = sql`exchange = ${lit.exchange(exchange)} AND ticker = ${lit.ticker(ticker)} AND ${windowCondition(w)}`;
  if (!options.renderAfterLimit) {
    return sql`SELECT ${SNAPSHOT_ROW_JSON}
FROM ${db}.snapshots
WHERE ${where}
ORDER BY ts, side, toFloat64(price), toFloat64(quantity)
LIMIT ${lit.int(limit)}
FORMAT TabSeparatedRaw`;
  }
  return sql`SELECT ${SNAPSHOT_ROW_JSON}
FROM (
  SELECT ts, side, price, quantity
  FROM ${db}.snapshots
  WHERE ${where}
  ORDER BY ts, side, toFloat64(price), toFloat64(quantity)
  LIMIT ${lit.int(limit)}
)
ORDER BY ts, side, toFloat64(price), toFloat64(quantity)
FORMAT TabSeparatedRaw`;
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
  return sql`SELECT ${SNAPSHOT_ROW_JSON}
FROM ${db}.snapshots
WHERE ${where}
  AND ts <= (SELECT max(ts) FROM (SELECT ts FROM ${db}.snapshots WHERE ${where} ORDER BY ts LIMIT ${lit.int(limit)}))
ORDER BY ts, side, toFloat64(price), toFloat64(quantity)
LIMIT ${lit.int(skip)}, 1000000000
FORMAT TabSeparatedRaw`;
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
