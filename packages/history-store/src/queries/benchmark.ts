/**
 * The SQL of the benchmarks (bench/history, bench/client, bench/recorder), which talk to ClickHouse over plain HTTP and import this from
 * the package's build: ClickHouse answering the service's reads by itself (the anchors the service is measured
 * against, in ClickHouse's own text formats), what the benchmark needs to choose its ranges, and the upkeep of its
 * data set. Kept here so that ClickHouse SQL lives in this package only; where the benchmark sends the service's own
 * reads to ClickHouse (the book at a moment), it uses the builders of order-books.ts unchanged.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { INSERT_COLUMNS } from '../inserts';
import { LOCAL_SUFFIX, onCluster } from '../layout';
import { join, lit, sql, type Sql } from '../literals';
import { READ_COLUMNS, TABLES, type ReadKind, type RowKind } from '../schema';
import { bookBaseQuery, bookQuery, bookReads, deltaWindowQuery, type TimeWindow } from './order-books';
import { barsQuery } from './trades';

/** The text formats ClickHouse renders the anchors in. */
export type AnchorFormat = 'JSONEachRow' | 'CSVWithNames';

const TABLE_OF: Record<ReadKind, Sql> = {
  snapshot: lit.identifier(TABLES.snapshots),
  delta: lit.identifier(TABLES.deltas),
  trade: lit.identifier(TABLES.trades),
};
const ORDER_OF: Record<ReadKind, Sql> = {
  snapshot: sql`ts, side, toFloat64(price)`,
  delta: sql`ts, sequence`,
  trade: sql`ts, sequence, trade_id`,
};
/** Trades are read one row per trade, as the service reads them (trades.ts). */
const ONE_PER_TRADE = sql` LIMIT 1 BY ts, trade_id`;
const dedupe = (kind: ReadKind): Sql => (kind === 'trade' ? ONE_PER_TRADE : sql``);
/** The columns the service's rows show, in its order (trades: the wire's, ts, trade_id, price, size, side). */
const TRADE_WIRE_COLUMNS = ['ts', 'trade_id', 'price', 'size', 'side'];

function inWindow(exchange: ExchangeKey, ticker: string, w: TimeWindow): Sql {
  const upper =
    w.to === null ? sql`` : w.toInclusive ? sql` AND ts <= ${lit.int(w.to)}` : sql` AND ts < ${lit.int(w.to)}`;
  return sql`exchange = ${lit.exchange(exchange)} AND ticker = ${lit.ticker(ticker)} AND ts >= ${lit.int(w.from)}${upper}`;
}

/**
 * The benchmark's queries on one database, as SQL text. With `cluster` (cluster mode, layout.ts), reads go through
 * the Distributed tables as the service's do, while the upkeep (merging, sizes) addresses each shard's `_local`
 * tables: `optimize` and `syncReplica` are then sent to the servers themselves (one replica of each shard merges,
 * every replica syncs).
 */
export function benchmarkSql(database: string, cluster?: string) {
  const db = lit.identifier(database);
  const name = lit.name(database);
  const table = (kind: ReadKind) => sql`${db}.${TABLE_OF[kind]}`;
  const local = (kind: ReadKind) =>
    cluster === undefined ? TABLES[`${kind}s`] : `${TABLES[`${kind}s`]}${LOCAL_SUFFIX}`;
  const deltaColumns = join(
    INSERT_COLUMNS.deltas.map((c) => lit.bare(c)),
    ', ',
  );
  const columns = (kind: ReadKind, receivedTs: boolean) =>
    kind === 'trade'
      ? [...TRADE_WIRE_COLUMNS, ...(receivedTs ? ['received_ts'] : [])].join(', ')
      : [...READ_COLUMNS[kind].columns, ...(receivedTs ? READ_COLUMNS[kind].extra : [])].map(([c]) => c).join(', ');
  return {
    /** Tickers holding rows of a kind, the busiest first: `ex`, `ticker`, `n` rows, `f` first ts, `l` last ts. */
    spans: (kind: ReadKind): string =>
      kind === 'trade'
        ? sql`SELECT toString(exchange) AS ex, ticker, countMerge(row_count) AS n, minMerge(first_ts) AS f, maxMerge(last_ts) AS l
FROM ${db}.trades_catalogue GROUP BY exchange, ticker ORDER BY n DESC, ticker`.text
        : sql`SELECT toString(exchange) AS ex, ticker, countMerge(row_count) AS n, minMerge(first_ts) AS f, maxMerge(last_ts) AS l
FROM ${db}.ticker_catalogue WHERE kind = ${lit.token(kind)} GROUP BY exchange, ticker ORDER BY n DESC, ticker`.text,

    /** `ts`: the ts of a ticker's n-th row (1-based) of a kind at or after `from`. */
    nthTs: (kind: ReadKind, exchange: ExchangeKey, ticker: string, from: number, n: number): string =>
      sql`SELECT ts FROM ${table(kind)} WHERE ${inWindow(exchange, ticker, { from, to: null, toInclusive: true })}
ORDER BY ${ORDER_OF[kind]}${dedupe(kind)} LIMIT ${lit.int(n - 1)}, 1`.text,

    /**
     * The rows the service returns for a range — the same columns (`received_ts` too when asked), in its order,
     * the first `limit` of them (none: all) — rendered by ClickHouse itself in `format`: the throughput anchor.
     */
    rows: (
      kind: ReadKind,
      exchange: ExchangeKey,
      ticker: string,
      window: TimeWindow,
      options: { limit?: number; format: AnchorFormat; receivedTs?: boolean },
    ): string => {
      const limit = options.limit === undefined ? sql`` : sql` LIMIT ${lit.int(options.limit)}`;
      const format = options.format === 'CSVWithNames' ? sql`CSVWithNames` : sql`JSONEachRow`;
      return `SELECT ${columns(kind, options.receivedTs ?? false)} FROM ${table(kind).text} WHERE ${inWindow(exchange, ticker, window).text}
ORDER BY ${ORDER_OF[kind].text}${dedupe(kind).text}${limit.text} FORMAT ${format.text}`;
    },

    /** `n`: how many rows `rows` returns for the same arguments. */
    count: (kind: ReadKind, exchange: ExchangeKey, ticker: string, window: TimeWindow, limit?: number): string =>
      limit === undefined && kind !== 'trade'
        ? sql`SELECT count() AS n FROM ${table(kind)} WHERE ${inWindow(exchange, ticker, window)}`.text
        : sql`SELECT count() AS n FROM (SELECT ts FROM ${table(kind)} WHERE ${inWindow(exchange, ticker, window)}
ORDER BY ${ORDER_OF[kind]}${dedupe(kind)}${limit === undefined ? sql`` : sql` LIMIT ${lit.int(limit)}`})`.text,

    /**
     * The service's bars query (trades.ts barsQuery, unchanged) over [from, to) — the aggregation the bars endpoint
     * has ClickHouse run — in `format`: RowBinary as the service reads it, or JSONEachRow, ClickHouse rendering it
     * (the anchor of the bars benchmark).
     */
    bars: (
      exchange: ExchangeKey,
      ticker: string,
      intervalMs: number,
      from: number,
      to: number,
      format: 'RowBinary' | 'JSONEachRow',
    ): string =>
      barsQuery(
        db,
        exchange,
        ticker,
        intervalMs,
        from,
        to,
        10_000_000,
        format === 'JSONEachRow' ? 'JSONEachRow' : 'RowBinary',
      ).text,

    /** The service's book read (order-books.ts bookQuery), unchanged. */
    book: (exchange: ExchangeKey, ticker: string, from: number, at: number): string =>
      bookQuery(db, exchange, ticker, from, at).text,

    /** One of the book read's three table reads (order-books.ts bookReads) alone, in RowBinary. */
    bookPart: (
      part: 'snapshots' | 'deltas' | 'gaps',
      exchange: ExchangeKey,
      ticker: string,
      from: number,
      at: number,
    ): string =>
      sql`${bookReads(db, exchange, ticker, from, at)[part]}
FORMAT RowBinary`.text,

    /**
     * The service's read of one page of deltas (order-books.ts deltaWindowQuery, unchanged) over [from, to]: 1,000
     * rows and the one more it holds back to know whether the page was cut.
     */
    deltaPage: (exchange: ExchangeKey, ticker: string, from: number, to: number): string =>
      deltaWindowQuery(db, exchange, ticker, { from, to, toInclusive: true }, 1001).text,

    /** The service's read of where a book starts when its first read held none (bookBaseQuery), unchanged. */
    bookBase: (exchange: ExchangeKey, ticker: string, lower: number, at: number): string =>
      bookBaseQuery(db, exchange, ticker, lower, at).text,

    /** `n`: 1 when the data set's tables exist. */
    exists: (): string =>
      sql`SELECT count() AS n FROM system.tables WHERE database = ${name} AND name = ${lit.name(TABLES.deltas)}`.text,

    dropDatabase: (): string => sql`DROP DATABASE IF EXISTS ${db}${onCluster(cluster)}`.text,

    /**
     * Merges each partition of a table into one part, so every run reads the same layout (in cluster mode: the
     * shard's table, sent to one replica of each shard).
     */
    optimize: (kind: ReadKind): string => sql`OPTIMIZE TABLE ${db}.${lit.identifier(local(kind))} FINAL`.text,

    /** Cluster mode: waits until this replica holds what its shard's other replicas wrote and merged. */
    syncReplica: (kind: ReadKind): string => sql`SYSTEM SYNC REPLICA ${db}.${lit.identifier(local(kind))}`.text,

    /** `n`: merges running on the database. */
    merges: (): string => sql`SELECT count() AS n FROM system.merges WHERE database = ${name}`.text,

    /** Per table: `name` (snapshots, deltas, trades), `rows`, `bytes` on disk, `parts` (active). */
    tableSizes: (): string =>
      sql`SELECT replaceOne(table, ${lit.name(LOCAL_SUFFIX)}, '') AS name, sum(rows) AS rows, sum(bytes_on_disk) AS bytes, count() AS parts
FROM ${cluster === undefined ? sql`system.parts` : sql`cluster(${lit.name(cluster)}, system, parts)`}
WHERE database = ${name} AND active AND table IN (${lit.name(local('snapshot'))}, ${lit.name(local('delta'))}, ${lit.name(local('trade'))})
GROUP BY name ORDER BY name`.text,

    /** `n`: the rows of a kind. */
    rowCount: (kind: RowKind): string => sql`SELECT count() AS n FROM ${table(kind)}`.text,

    /** `ts`: the newest ts of a kind (0 when there is none). */
    maxTs: (kind: RowKind): string => sql`SELECT max(ts) AS ts FROM ${table(kind)}`.text,

    /**
     * The recorder benchmark's anchor: the delta rows of a window (`after` < ts ≤ `upTo`) exactly as the recorder
     * inserted them (its columns, TabSeparated), to be inserted again by `insertAnchor` into `anchor`, a table like
     * `deltas` that `createAnchor` makes and `truncateAnchor` empties.
     */
    exportDeltas: (after: number, upTo: number): string =>
      sql`SELECT ${deltaColumns} FROM ${table('delta')}
WHERE ts > ${lit.int(after)} AND ts <= ${lit.int(upTo)} FORMAT TabSeparated`.text,
    createAnchor: (): string => sql`CREATE TABLE IF NOT EXISTS ${db}.anchor AS ${table('delta')}`.text,
    truncateAnchor: (): string => sql`TRUNCATE TABLE ${db}.anchor`.text,
    insertAnchor: (): string => sql`INSERT INTO ${db}.anchor (${deltaColumns}) FORMAT TabSeparated`.text,

    /**
     * The recorder benchmark's reconciliation count: every stored trade row as `ex`, `ticker`, `id`, `ts`, `px`, `sz`
     * (price and size, decimal text), `sd` (side), `vs` (venue side); a trade stored twice and not merged yet is two
     * rows. (Not grouped: 18.16 crashes grouping by a Decimal(38, 18) column.)
     */
    storedTrades: (): string =>
      sql`SELECT toString(exchange) AS ex, ticker, trade_id AS id, ts, toString(price) AS px, toString(size) AS sz,
toString(side) AS sd, venue_side AS vs FROM ${db}.trades FORMAT JSONEachRow`.text,

    /** The trades gaps: `ex`, `ticker`, `f` (from_ts), `t` (to_ts), `reason`. */
    tradeGaps: (): string =>
      sql`SELECT toString(exchange) AS ex, ticker, from_ts AS f, to_ts AS t, reason FROM ${db}.gaps
WHERE stream = 'trades' FORMAT JSONEachRow`.text,

    /**
     * The recorder benchmark's book check: a ticker's snapshot rows (`k` 's') and delta rows (`k` 'd') with `ts`, `sq`
     * (sequence; 0 on snapshots), `sd` (side), `px` (price), `q` (quantity, or quantity_delta), decimals as text.
     */
    bookRows: (exchange: ExchangeKey, ticker: string): string => {
      const where = inWindow(exchange, ticker, { from: 0, to: null, toInclusive: true });
      return sql`SELECT 's' AS k, ts, toUInt64(0) AS sq, toString(side) AS sd, toString(price) AS px, toString(quantity) AS q
FROM ${table('snapshot')} WHERE ${where}
UNION ALL
SELECT 'd' AS k, ts, sequence AS sq, toString(side) AS sd, toString(price) AS px, toString(quantity_delta) AS q
FROM ${table('delta')} WHERE ${where} FORMAT JSONEachRow`.text;
    },

    /** The book gaps: `ex`, `ticker`, `f` (from_ts), `t` (to_ts), `reason`, `d` (detected_at). */
    bookGaps: (): string =>
      sql`SELECT toString(exchange) AS ex, ticker, from_ts AS f, to_ts AS t, reason, detected_at AS d FROM ${db}.gaps
WHERE stream = 'book' FORMAT JSONEachRow`.text,

    /** `v`: the server's version. */
    version: (): string => sql`SELECT version() AS v`.text,
  };
}

export type BenchmarkSql = ReturnType<typeof benchmarkSql>;
