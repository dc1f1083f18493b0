/**
 * `@depthgate/history-store/testing`: what tests of other packages need from the tables beyond the named
 * operations of the main entry — a migrated database of their own, rows generated inside ClickHouse, the stored rows
 * read back as ClickHouse prints them, running queries, and dropping it all. The SQL of these helpers lives here, in
 * the package that owns the schema. Not part of the build (src/testing/ is excluded): only tests import it, mapped
 * by jest.config.js and tsconfig.check.json.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { Readable } from 'node:stream';
import {
  INSERT_COLUMNS,
  encodeDeltaRow,
  type DeltaRow,
  type GapRow,
  type SnapshotRow,
  type TradeRow,
  type VerificationRow,
} from '../inserts';
import type { GapStream, TradeSide, VerificationMethod } from '../schema';
import { join, lit, sql, type Side, type Sql } from '../literals';
import { LOCAL_SUFFIX, Layout, SHARDING_KEY } from '../layout';
import type { InsertTable } from '../inserts';
import { runMigrations, type Migration } from '../migrations';
import { HistoryStore, connectionOf, type HistoryStoreOptions } from '../store';

export { runMigrations };

/** A database of a test's own on the test ClickHouse, with a store on it. */
export class TestDatabase {
  constructor(readonly store: HistoryStore) {}

  get database(): string {
    return this.store.database;
  }

  /**
   * `rows` delta rows of one ticker made inside ClickHouse (fast, whatever the count): from `fromTs`, `stepMs`
   * apart, sequence 0, 1, …, sides alternating bid/ask, price 0.48, quantity_delta 150.25 (received_ts: their ts).
   */
  async fillDeltas(o: { exchange: ExchangeKey; ticker: string; fromTs: number; stepMs: number; rows: number }) {
    const ch = connectionOf(this.store);
    await ch.data.command({
      query: sql`INSERT INTO ${ch.db}.deltas (exchange, ticker, ts, sequence, side, price, quantity_delta)
SELECT ${lit.exchange(o.exchange)}, ${lit.ticker(o.ticker)}, ${lit.int(o.fromTs)} + number * ${lit.int(o.stepMs)}, number,
  if(number % 2 = 0, 'bid', 'ask'), toDecimal128('0.4800', 18), toDecimal128('150.25', 18)
FROM system.numbers LIMIT ${lit.int(o.rows)}`.text,
    });
  }

  /** Ids of the running queries that mention this database (other tests share the server), on the control client. */
  async runningQueries(): Promise<string[]> {
    const ch = connectionOf(this.store);
    const rs = await ch.control.query({
      query: sql`SELECT query_id FROM system.processes
WHERE position(query, ${lit.name(this.database)}) > 0 AND position(query, 'system.processes') = 0`.text,
      format: 'JSONEachRow',
    });
    return (await rs.json<{ query_id: string }>()).map((r) => r.query_id);
  }

  /**
   * Every stored row, optionally of one exchange and one ticker, in the shapes rows are inserted in; decimals as
   * ClickHouse prints a Decimal(38, 18) (18.16: every place; current releases: trimmed), gaps ordered by exchange,
   * ticker and from_ts; trades as stored (a trade written twice and not merged yet is two rows); verification points
   * ordered by exchange, ticker and ts.
   */
  async storedRows(filter: { exchange?: ExchangeKey; ticker?: string } = {}): Promise<{
    deltas: DeltaRow[];
    snapshots: SnapshotRow[];
    gaps: GapRow[];
    trades: TradeRow[];
    verifications: VerificationRow[];
  }> {
    const ch = connectionOf(this.store);
    const conditions: Sql[] = [sql`1`];
    if (filter.exchange !== undefined) conditions.push(sql`exchange = ${lit.exchange(filter.exchange)}`);
    if (filter.ticker !== undefined) conditions.push(sql`ticker = ${lit.ticker(filter.ticker)}`);
    const where = conditions.reduce((a, b) => sql`${a} AND ${b}`);
    const lines = async (query: Sql): Promise<string[][]> => {
      const rs = await ch.data.query({ query: query.text, format: 'TabSeparated' });
      return (await rs.text())
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split('\t'));
    };
    const deltas = (
      await lines(
        sql`SELECT exchange, ticker, ts, sequence, side, toString(price), toString(quantity_delta), venue_seq FROM ${ch.db}.deltas WHERE ${where}`,
      )
    ).map(([exchange, ticker, ts, sequence, side, price, quantityDelta, venueSeq]): DeltaRow => ({
      exchange: exchange as ExchangeKey,
      ticker: ticker ?? '',
      ts: Number(ts),
      sequence: Number(sequence),
      side: side as Side,
      price: price ?? '',
      quantity_delta: quantityDelta ?? '',
      venue_seq: venueSeq ?? '',
    }));
    const snapshots = (
      await lines(
        sql`SELECT exchange, ticker, ts, side, toString(price), toString(quantity), venue_seq FROM ${ch.db}.snapshots WHERE ${where}`,
      )
    ).map(([exchange, ticker, ts, side, price, quantity, venueSeq]): SnapshotRow => ({
      exchange: exchange as ExchangeKey,
      ticker: ticker ?? '',
      ts: Number(ts),
      side: side as Side,
      price: price ?? '',
      quantity: quantity ?? '',
      venue_seq: venueSeq ?? '',
    }));
    const gaps = (
      await lines(
        sql`SELECT exchange, ticker, from_ts, to_ts, reason, detected_at, stream FROM ${ch.db}.gaps WHERE ${where}
ORDER BY exchange, ticker, from_ts`,
      )
    ).map(([exchange, ticker, fromTs, toTs, reason, detectedAt, stream]): GapRow => ({
      exchange: exchange as ExchangeKey,
      ticker: ticker ?? '',
      from_ts: Number(fromTs),
      to_ts: Number(toTs),
      reason: reason ?? '',
      detected_at: Number(detectedAt),
      stream: stream as GapStream,
    }));
    const trades = (
      await lines(
        sql`SELECT exchange, ticker, ts, sequence, trade_id, toString(price), toString(size), side, venue_side, received_ts,
  venue_seq FROM ${ch.db}.trades WHERE ${where}`,
      )
    ).map(
      ([exchange, ticker, ts, sequence, tradeId, price, size, side, venueSide, receivedTs, venueSeq]): TradeRow => ({
        exchange: exchange as ExchangeKey,
        ticker: ticker ?? '',
        ts: Number(ts),
        sequence: Number(sequence),
        trade_id: tradeId ?? '',
        price: price ?? '',
        size: size ?? '',
        side: side as TradeSide,
        venue_side: venueSide ?? '',
        received_ts: Number(receivedTs),
        venue_seq: venueSeq ?? '',
      }),
    );
    const verifications = (
      await lines(
        sql`SELECT exchange, ticker, ts, method, detected_at FROM ${ch.db}.verifications WHERE ${where}
ORDER BY exchange, ticker, ts`,
      )
    ).map(([exchange, ticker, ts, method, detectedAt]): VerificationRow => ({
      exchange: exchange as ExchangeKey,
      ticker: ticker ?? '',
      ts: Number(ts),
      method: method as VerificationMethod,
      detected_at: Number(detectedAt),
    }));
    return { deltas, snapshots, gaps, trades, verifications };
  }

  /** Rows of a table, and how many distinct natural keys they have (fewer keys than rows: something was doubled). */
  async distinctKeys(table: 'deltas' | 'snapshots'): Promise<{ rows: number; keys: number }> {
    const key =
      table === 'deltas'
        ? sql`uniqExact(exchange, ticker, ts, sequence)`
        : sql`uniqExact(exchange, ticker, ts, side, toString(price))`;
    const row = await this.one(sql`SELECT count() AS n, ${key} AS k FROM ${this.table(table)}`);
    return { rows: Number(row.n ?? 0), keys: Number(row.k ?? 0) };
  }

  /** Rows of a table. */
  async rowCount(table: 'deltas' | 'snapshots' | 'gaps'): Promise<number> {
    return Number((await this.one(sql`SELECT count() AS n FROM ${this.table(table)}`)).n ?? 0);
  }

  /**
   * Stops (or starts again) the background merges of a table on this server, so that rows written twice stay two
   * rows until `merge` (a replacing table keeps one of them when it merges: when depends on the server).
   */
  async merges(table: 'trades' | 'deltas' | 'snapshots', running: boolean): Promise<void> {
    const verb = running ? sql`START` : sql`STOP`;
    await connectionOf(this.store).data.command({ query: sql`SYSTEM ${verb} MERGES ${this.table(table)}`.text });
  }

  /** Merges every part of a table now (`OPTIMIZE … FINAL`; merges must be running). */
  async merge(table: 'trades' | 'deltas' | 'snapshots'): Promise<void> {
    await connectionOf(this.store).data.command({ query: sql`OPTIMIZE TABLE ${this.table(table)} FINAL`.text });
  }

  /**
   * The `handovers` rows (issue 27's redundant recording: where a ticker moved from one recorder's term to another's),
   * ordered by exchange, ticker and ts; undefined when the database has no such table (a schema from before it).
   */
  async handovers(): Promise<
    | {
        exchange: ExchangeKey;
        ticker: string;
        ts: number;
        from_term: string;
        to_term: string;
        kind: string;
        detected_at: number;
      }[]
    | undefined
  > {
    const ch = connectionOf(this.store);
    const exists = await this.one(
      sql`SELECT count() AS n FROM system.tables WHERE database = ${lit.name(this.database)} AND name = 'handovers'`,
    );
    if (Number(exists.n ?? 0) === 0) return undefined;
    const rs = await ch.data.query({
      query: sql`SELECT toString(exchange) AS exchange, ticker, ts, toString(from_term) AS from_term,
  toString(to_term) AS to_term, toString(kind) AS kind, detected_at
FROM ${this.table('handovers')} ORDER BY exchange, ticker, ts`.text,
      format: 'JSONEachRow',
    });
    return (await rs.json<Record<string, string | number>>()).map((r) => ({
      exchange: r.exchange as ExchangeKey,
      ticker: String(r.ticker),
      ts: Number(r.ts),
      from_term: String(r.from_term),
      to_term: String(r.to_term),
      kind: String(r.kind),
      detected_at: Number(r.detected_at),
    }));
  }

  /** Drops the database, on every server of a cluster (never throws: a test's cleanup must not hide its failure). */
  async drop(): Promise<void> {
    const ch = connectionOf(this.store);
    const layout = new Layout(ch.db, ch.database, ch.cluster);
    await ch.data.command({ query: layout.dropDatabase().text }).catch(() => undefined);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private table(name: string): Sql {
    return sql`${connectionOf(this.store).db}.${lit.identifier(name)}`;
  }

  /** The one row of an aggregate query. */
  private async one(query: Sql): Promise<Record<string, string | number | undefined>> {
    const rs = await connectionOf(this.store).data.query({ query: query.text, format: 'JSONEachRow' });
    const [row] = await rs.json<Record<string, string | number>>();
    return row ?? {};
  }
}

/**
 * A store on `options.database` of the ClickHouse at `options.url`, migrated unless `migrate` is false. Give each
 * test its own database (`uniqueName` of @depthgate/test-utils) and drop it at the end.
 */
export async function createTestDatabase(
  options: HistoryStoreOptions & { migrate?: boolean; migrations?: readonly Migration[] },
): Promise<TestDatabase> {
  const { migrate = true, migrations, ...storeOptions } = options;
  const db = new TestDatabase(new HistoryStore(storeOptions));
  if (migrate) await runMigrations(db.store, { migrations });
  return db;
}

export { chdbDir, startCurrentClickHouse, type CurrentClickHouse } from './current-clickhouse';

/** One server of a cluster, seen on its own: its tables, its shard's rows, its replication. */
export class ClusterNodeView {
  private readonly store: HistoryStore;

  constructor(url: string, database: string) {
    this.store = new HistoryStore({ url, database });
  }

  /** The tables of the database on this server, with their engines, by name. */
  async tables(): Promise<Record<string, string>> {
    const ch = connectionOf(this.store);
    const rs = await ch.data.query({
      query: sql`SELECT name, engine FROM system.tables WHERE database = ${lit.name(ch.database)}`.text,
      format: 'JSONEachRow',
    });
    return Object.fromEntries((await rs.json<{ name: string; engine: string }>()).map((r) => [r.name, r.engine]));
  }

  /** Rows this server holds of a table (its shard's replicated `<table>_local`). */
  async localRows(table: InsertTable): Promise<number> {
    const ch = connectionOf(this.store);
    const rs = await ch.data.query({
      query: sql`SELECT count() AS n FROM ${ch.db}.${lit.identifier(`${table}${LOCAL_SUFFIX}`)}`.text,
      format: 'JSONEachRow',
    });
    return Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
  }

  /** The distinct tickers this server holds of a table (its shard's replicated `<table>_local`), in order. */
  async localTickers(table: 'snapshots' | 'deltas' | 'gaps'): Promise<string[]> {
    const ch = connectionOf(this.store);
    const rs = await ch.data.query({
      query: sql`SELECT DISTINCT ticker FROM ${ch.db}.${lit.identifier(`${table}${LOCAL_SUFFIX}`)} ORDER BY ticker`
        .text,
      format: 'JSONEachRow',
    });
    return (await rs.json<{ ticker: string }>()).map((r) => r.ticker);
  }

  /** The tables of the database on this server that have a column, with its type and default, by table name. */
  async column(name: string): Promise<{ table: string; type: string; default_expression: string }[]> {
    const ch = connectionOf(this.store);
    const rs = await ch.data.query({
      query: sql`SELECT table, type, default_expression FROM system.columns
WHERE database = ${lit.name(ch.database)} AND name = ${lit.name(name)} ORDER BY table`.text,
      format: 'JSONEachRow',
    });
    return rs.json();
  }

  /** Inserts delta rows into this server's shard table directly (`deltas_local`), bypassing the Distributed table. */
  async insertLocalDeltas(rows: readonly DeltaRow[]): Promise<void> {
    const ch = connectionOf(this.store);
    await ch.data.insert({
      table: sql`${ch.db}.${lit.identifier(`deltas${LOCAL_SUFFIX}`)}`.text,
      format: 'TabSeparated',
      values: Readable.from([rows.map((r) => encodeDeltaRow(r)).join('')], { objectMode: false }),
      columns: [...INSERT_COLUMNS.deltas],
    });
  }

  /** The shard (1-based, shards of equal weight) the Distributed tables send a ticker's rows to. */
  async shardOf(exchange: ExchangeKey, ticker: string, shards: number): Promise<number> {
    const ch = connectionOf(this.store);
    const rs = await ch.data.query({
      query: sql`SELECT ${SHARDING_KEY} % ${lit.int(shards)} AS slot
FROM (SELECT ${lit.exchange(exchange)} AS exchange, ${lit.ticker(ticker)} AS ticker)`.text,
      format: 'JSONEachRow',
    });
    return Number((await rs.json<{ slot: string | number }>())[0]?.slot) + 1;
  }

  /**
   * The insert deduplication log of this server's shard of `table` (its replicated `<table>_local`): how many block
   * checksums ZooKeeper holds, and how many the table keeps (`replicated_deduplication_window`: the table's own
   * setting, else the server's default). The shard's leader trims the log to the window every 30 to 40 s.
   */
  async deduplicationLog(table: InsertTable): Promise<{ blocks: number; window: number }> {
    const ch = connectionOf(this.store);
    const name = lit.name(`${table}${LOCAL_SUFFIX}`);
    const of = await ch.data.query({
      query: sql`SELECT r.zookeeper_path AS zk, t.engine_full AS engine,
  (SELECT value FROM system.merge_tree_settings WHERE name = 'replicated_deduplication_window') AS server_window
FROM system.replicas AS r ANY INNER JOIN system.tables AS t ON r.database = t.database AND r.table = t.name
WHERE r.database = ${lit.name(ch.database)} AND r.table = ${name}`.text,
      format: 'JSONEachRow',
    });
    const [found] = await of.json<{ zk: string; engine: string; server_window: string }>();
    if (!found) throw new Error(`no replicated table ${table}${LOCAL_SUFFIX} on this server`);
    // (system.zookeeper takes only a literal path.)
    const rs = await ch.data.query({
      query: sql`SELECT count() AS n FROM system.zookeeper WHERE path = ${lit.zooKeeperPath(`${found.zk}/blocks`)}`
        .text,
      format: 'JSONEachRow',
    });
    const own = /\breplicated_deduplication_window = (\d+)/.exec(found.engine)?.[1];
    return { blocks: Number((await rs.json<{ n: string }>())[0]?.n), window: Number(own ?? found.server_window) };
  }

  /** Waits until this replica has fetched every part its shard's other replicas hold (SYSTEM SYNC REPLICA). */
  async sync(): Promise<void> {
    const ch = connectionOf(this.store);
    // Every replicated table of the database, as the server lists them: a list written here missed the trades (a
    // replica killed mid-recording was then compared before it had fetched its trades).
    const rs = await ch.data.query({
      query: sql`SELECT name FROM system.tables
WHERE database = ${lit.name(ch.database)} AND startsWith(engine, 'Replicated') ORDER BY name`.text,
      format: 'JSONEachRow',
    });
    for (const { name } of await rs.json<{ name: string }>()) {
      await ch.data.command({ query: sql`SYSTEM SYNC REPLICA ${ch.db}.${lit.identifier(name)}`.text });
    }
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/**
 * Step 4 of docs/operations.md, "Moving to a ClickHouse cluster": copies a table's rows from the old server's
 * database (`remote()`, its native port; the `default` user) into the cluster through the Distributed table — every
 * row older than the first row the cluster already holds of its ticker (what the cluster's own recorder began with),
 * all rows of a ticker it does not hold. The statements are the document's.
 */
export async function copyOlderRows(
  target: HistoryStore,
  table: 'deltas' | 'snapshots' | 'gaps',
  from: { address: string; database: string },
): Promise<void> {
  const ch = connectionOf(target);
  const columns = join(
    INSERT_COLUMNS[table].map((c) => lit.bare(c)),
    ', ',
  );
  const ts = lit.bare(table === 'gaps' ? 'from_ts' : 'ts');
  await ch.data.command({
    query: sql`CREATE TABLE IF NOT EXISTS ${ch.db}.cut ENGINE = Memory AS
SELECT exchange, ticker, minMerge(first_ts) AS first_ts FROM ${ch.db}.ticker_catalogue GROUP BY exchange, ticker`.text,
  });
  await ch.data.command({
    query: sql`INSERT INTO ${ch.db}.${lit.bare(table)}
SELECT ${columns} FROM remote(${lit.address(from.address)}, ${lit.identifier(from.database)}.${lit.bare(table)})
ANY LEFT JOIN (SELECT exchange, ticker, first_ts FROM ${ch.db}.cut) USING (exchange, ticker)
WHERE first_ts = 0 OR ${ts} < first_ts`.text,
  });
}
