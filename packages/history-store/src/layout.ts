/**
 * Where the history tables live and how their DDL reads for it: one ClickHouse server (`CLICKHOUSE_CLUSTER` unset),
 * or a ClickHouse cluster (`CLICKHOUSE_CLUSTER` names it in the servers' `remote_servers`). Migrations declare their
 * tables and views once (migrations.ts); this module renders each declaration for the layout in force.
 *
 * Single server: the declaration as written, `CREATE TABLE db.deltas … ENGINE = MergeTree()`.
 *
 * Cluster (docs/history-internals.md, "Cluster mode"):
 * - the rows live in `<table>_local`, a `Replicated*` table created `ON CLUSTER` on every server, replicated among
 *   the servers of a shard through ZooKeeper (`/clickhouse/tables/{shard}/<database>/<table>`, replica `{replica}`:
 *   the servers' macros);
 * - `<table>` is a `Distributed` table over them, on every server, with the same columns. Rows go to the shard
 *   chosen by `cityHash64(toString(exchange), ticker)`, so one ticker's rows stay on one shard. Every query and
 *   insert of this package names `<table>`, so it reads and writes through the Distributed table unchanged;
 * - a materialized view reads the `_local` table of its shard and writes into the `_local` table it feeds, so
 *   aggregates are built per shard (where one ticker's rows all are) and read through the Distributed table;
 * - `schema_migrations` is one replicated table with a replica on every server (not sharded): any server answers
 *   what the cluster's schema is.
 */
import { join, lit, sql, type Sql } from './literals';

/** The MergeTree engines a declared table may use; on a cluster each becomes its `Replicated` form. */
type MergeTreeEngine = 'MergeTree' | 'AggregatingMergeTree' | 'ReplacingMergeTree' | 'SummingMergeTree';

/** A table of the history, declared once for both layouts. */
export interface TableSpec {
  name: string;
  /** Columns in order: name and type (with any DEFAULT), as written in `CREATE TABLE`. */
  columns: ReadonlyArray<readonly [name: string, type: Sql]>;
  engine: MergeTreeEngine;
  partitionBy?: Sql;
  orderBy: Sql;
  settings: Sql;
}

/** A materialized view feeding one table from another. */
export interface ViewSpec {
  name: string;
  /** The table it writes into. */
  to: string;
  /** Its SELECT; `table(name)` names a table as the view must read it (on a cluster: the shard's own rows). */
  select: (table: (name: string) => Sql) => Sql;
}

/** How the rows of a sharded table are spread: one ticker's rows on one shard, its reads on one shard. */
export const SHARDING_KEY = sql`cityHash64(toString(exchange), ticker)`;

/** Suffix of the tables that hold a shard's rows on a cluster. */
export const LOCAL_SUFFIX = '_local';

/**
 * The insert deduplication every replicated table of the history keeps (its `SETTINGS`, cluster only), the same on
 * 18.16 and current releases: the checksums of its last 10,000 blocks, for up to 7 days. The recorder sends a batch
 * whose insert failed ambiguously again, the same bytes, and counts on the shard to drop it if it has it
 * (queries/recorder.ts, `retriesDeduplicated`); sent again after more newer blocks of its shard than the window, it
 * is stored twice. Those blocks come from the other recorder (up to one batch per table every
 * RECORDER_BATCH_MAX_DELAY_MS, 500 ms, at most one block per shard) while the resend waits: a backoff, a restart
 * replaying the spool, an outage of its own link. 18.16's default, 100 blocks, is 25 to 50 s of that; 10,000 is at
 * least 40 minutes, and the count is what binds (current releases keep 10,000 blocks by default, for 1 hour only).
 * The cost is ZooKeeper's: a node per block, shard and table (a few hundred bytes of its memory), listed by the
 * shard's cleanup every 30 to 40 s — 10,000 names of at most 48 bytes, half of its default 1 MB packet limit, which
 * is why the window is not larger. docs/history-internals.md, "Idempotence".
 */
const DEDUPLICATION_SETTINGS = sql`replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 604800`;

/** ZooKeeper path of a sharded table's replicas; `{shard}` and `{replica}` are every server's macros. */
function replicaPath(database: string, table: string): string {
  return `/clickhouse/tables/{shard}/${database}/${table}`;
}

const columnList = (columns: TableSpec['columns']): Sql =>
  join(
    columns.map(([name, type]) => sql`${lit.bare(name)} ${type}`),
    ',\n  ',
  );

/**
 * ` ON CLUSTER '<cluster>'` on a cluster (a statement every server of it runs, through the distributed DDL queue);
 * nothing on one server.
 */
export function onCluster(cluster: string | undefined): Sql {
  return cluster === undefined ? sql`` : sql` ON CLUSTER ${lit.cluster(cluster)}`;
}

/** The DDL of the history tables for one database, on one server or a cluster. */
export class Layout {
  private readonly on: Sql;

  constructor(
    /** The database, as an identifier. */
    readonly db: Sql,
    readonly database: string,
    /** The cluster's name, or undefined on a single server. */
    readonly cluster: string | undefined,
  ) {
    this.on = onCluster(cluster);
  }

  /** The table holding this server's rows of `name`: `db.name`, or `db.name_local` on a cluster. */
  local(name: string): Sql {
    return sql`${this.db}.${lit.bare(this.cluster === undefined ? name : `${name}${LOCAL_SUFFIX}`)}`;
  }

  createDatabase(): Sql {
    return sql`CREATE DATABASE IF NOT EXISTS ${this.db}${this.on}`;
  }

  dropDatabase(): Sql {
    return sql`DROP DATABASE IF EXISTS ${this.db}${this.on}`;
  }

  /** The record of applied migrations; on a cluster, one replica on every server. */
  migrationsTable(): Sql {
    const engine =
      this.cluster === undefined
        ? sql`MergeTree()`
        : sql`ReplicatedMergeTree(${lit.zooKeeperPath(`/clickhouse/tables/all/${this.database}/schema_migrations`)}, ${lit.replicaName('{shard}-{replica}')})`;
    return sql`CREATE TABLE IF NOT EXISTS ${this.db}.schema_migrations${this.on} (
  version UInt32,
  name String,
  checksum String,
  applied_at DateTime
) ENGINE = ${engine}
ORDER BY version`;
  }

  /** A declared table: one statement on a server; the replicated table and its Distributed table on a cluster. */
  createTable(spec: TableSpec): Sql[] {
    const engine =
      this.cluster === undefined
        ? sql`${lit.bare(spec.engine)}()`
        : sql`${lit.bare(`Replicated${spec.engine}`)}(${lit.zooKeeperPath(replicaPath(this.database, spec.name))}, ${lit.replicaName('{replica}')})`;
    const partition = spec.partitionBy ? sql`PARTITION BY ${spec.partitionBy}\n` : sql``;
    const settings = this.cluster === undefined ? spec.settings : sql`${spec.settings}, ${DEDUPLICATION_SETTINGS}`;
    const table = sql`CREATE TABLE IF NOT EXISTS ${this.local(spec.name)}${this.on} (
  ${columnList(spec.columns)}
) ENGINE = ${engine}
${partition}ORDER BY ${spec.orderBy}
SETTINGS ${settings}`;
    return this.cluster === undefined ? [table] : [table, this.createDistributed(spec.name, spec.columns)];
  }

  /**
   * The Distributed table over a declared table's shards, with `columns` (those declared so far: a Distributed
   * table is re-created when a migration adds a column, see migrations.ts). Cluster only.
   */
  createDistributed(name: string, columns: TableSpec['columns']): Sql {
    const cluster = this.requireCluster();
    return sql`CREATE TABLE IF NOT EXISTS ${this.db}.${lit.bare(name)}${this.on} (
  ${columnList(columns)}
) ENGINE = Distributed(${lit.cluster(cluster)}, ${lit.name(this.database)}, ${lit.name(`${name}${LOCAL_SUFFIX}`)}, ${SHARDING_KEY})`;
  }

  /** Drops a Distributed table (it holds no rows: inserts through it are synchronous). Cluster only. */
  dropDistributed(name: string): Sql {
    this.requireCluster();
    return sql`DROP TABLE IF EXISTS ${this.db}.${lit.bare(name)}${this.on}`;
  }

  createView(spec: ViewSpec): Sql {
    return sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${this.db}.${lit.bare(spec.name)}${this.on} TO ${this.local(spec.to)} AS
${spec.select((name) => this.local(name))}`;
  }

  /** Changes a column's type in the table holding the rows (on a cluster: every shard's replicated table). */
  modifyColumn(table: string, column: string, type: Sql): Sql {
    return sql`ALTER TABLE ${this.local(table)}${this.on} MODIFY COLUMN ${lit.identifier(column)} ${type}`;
  }

  /** Adds a column to the table holding the rows (on a cluster: every shard's replicated table). */
  addColumn(table: string, column: string, type: Sql): Sql {
    return sql`ALTER TABLE ${this.local(table)}${this.on} ADD COLUMN ${lit.identifier(column)} ${type}`;
  }

  private requireCluster(): string {
    if (this.cluster === undefined) throw new Error('a Distributed table exists on a cluster only');
    return this.cluster;
  }
}
