/**
 * Versioned, idempotent schema migrations, applied at start-up by the history API and by its `migrate` CLI
 * (migrateWhenReachable, startup.ts). They run on the store's connection directly, not through the querier: DDL at
 * start-up, before anything is served, needs neither the gate nor a request's budget.
 *
 * - Each migration has a version (1, 2, …), a name and steps. Applied versions are recorded in
 *   `schema_migrations` with a checksum of their SQL; a recorded migration whose SQL changed is an error
 *   (write a new migration instead of editing an old one).
 * - Every step is idempotent on its own (`CREATE … IF NOT EXISTS`, `addColumnIfMissing`), so a run that died half
 *   way, or two replicas starting at once, converge on the same schema. Duplicate records are harmless.
 * - The SQL runs on ClickHouse 18.16 and on current releases: no codecs, no `IF NOT EXISTS` on columns (checked
 *   through system.columns instead), no DateTime64.
 *
 * Why the tables look like this: docs/history.md ("Schema").
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@depthgate/service-kit';
import type { Connection } from './connection';
import { lit, sql, type Sql } from './literals';
import { DECIMAL_TYPE, EXCHANGE_ENUM, KIND_ENUM, SIDE_ENUM } from './schema';
import { connectionOf, type HistoryStore } from './store';

/**
 * One step of a migration, as data: a statement (`CREATE … IF NOT EXISTS`), or a column to add when it is missing
 * (with an optional `DEFAULT` expression, which old parts also read the column as). Steps stay declarative so that
 * each can be rendered for another topology (a cluster renders them `ON CLUSTER`, for its local and distributed
 * tables) without rewriting the migration.
 */
export type MigrationStep = Sql | { addColumnIfMissing: { table: string; column: string; type: Sql; default?: Sql } };

export interface Migration {
  version: number;
  name: string;
  steps: (db: Sql) => MigrationStep[];
}

/** Millisecond epoch → month partition, in UTC whatever the server's time zone. */
const MONTH_OF_TS = sql`toYYYYMM(toDateTime(intDiv(ts, 1000), 'UTC'))`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'order-book history: snapshots, deltas, gaps, ticker catalogue',
    steps: (db) => [
      sql`CREATE TABLE IF NOT EXISTS ${db}.snapshots (
  exchange ${EXCHANGE_ENUM},
  ticker String,
  ts Int64,
  side ${SIDE_ENUM},
  price ${DECIMAL_TYPE},
  quantity ${DECIMAL_TYPE}
) ENGINE = MergeTree()
PARTITION BY ${MONTH_OF_TS}
ORDER BY (exchange, ticker, ts, side, toFloat64(price))
SETTINGS index_granularity = 8192`,
      sql`CREATE TABLE IF NOT EXISTS ${db}.deltas (
  exchange ${EXCHANGE_ENUM},
  ticker String,
  ts Int64,
  sequence UInt64,
  side ${SIDE_ENUM},
  price ${DECIMAL_TYPE},
  quantity_delta ${DECIMAL_TYPE}
) ENGINE = MergeTree()
PARTITION BY ${MONTH_OF_TS}
ORDER BY (exchange, ticker, ts, sequence)
SETTINGS index_granularity = 8192`,
      sql`CREATE TABLE IF NOT EXISTS ${db}.gaps (
  exchange ${EXCHANGE_ENUM},
  ticker String,
  from_ts Int64,
  to_ts Int64,
  reason String,
  detected_at Int64
) ENGINE = MergeTree()
ORDER BY (exchange, ticker, from_ts)
SETTINGS index_granularity = 8192`,
      sql`CREATE TABLE IF NOT EXISTS ${db}.ticker_catalogue (
  exchange ${EXCHANGE_ENUM},
  ticker String,
  kind ${KIND_ENUM},
  first_ts AggregateFunction(min, Int64),
  last_ts AggregateFunction(max, Int64),
  row_count AggregateFunction(count)
) ENGINE = AggregatingMergeTree()
ORDER BY (exchange, ticker, kind)
SETTINGS index_granularity = 8192`,
      sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.snapshots_catalogue_mv TO ${db}.ticker_catalogue AS
SELECT exchange, ticker, CAST('snapshot' AS ${KIND_ENUM}) AS kind,
  minState(ts) AS first_ts, maxState(ts) AS last_ts, countState() AS row_count
FROM ${db}.snapshots
GROUP BY exchange, ticker`,
      sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.deltas_catalogue_mv TO ${db}.ticker_catalogue AS
SELECT exchange, ticker, CAST('delta' AS ${KIND_ENUM}) AS kind,
  minState(ts) AS first_ts, maxState(ts) AS last_ts, countState() AS row_count
FROM ${db}.deltas
GROUP BY exchange, ticker`,
    ],
  },
  {
    version: 2,
    name: 'receive times: received_ts on snapshots and deltas',
    // When the recorder received each row's message (epoch ms, its monotone clock), beside the venue's ts. Rows
    // written before read it as their ts (the column's DEFAULT, computed for parts that do not have it); inserts
    // that do not name the column (a spool written by an older recorder) get the same. Plain declarative steps, so
    // a cluster renders them ON CLUSTER for its local and distributed tables.
    steps: () => [
      { addColumnIfMissing: { table: 'snapshots', column: 'received_ts', type: sql`Int64`, default: sql`ts` } },
      { addColumnIfMissing: { table: 'deltas', column: 'received_ts', type: sql`Int64`, default: sql`ts` } },
    ],
  },
];

/** The schema version this build reads and writes: the highest migration it knows. */
export const REQUIRED_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** What `addColumnIfMissing` adds: the column's type and, when it has one, its default. */
function columnDefinition(step: { type: Sql; default?: Sql }): Sql {
  return step.default === undefined ? step.type : sql`${step.type} DEFAULT ${step.default}`;
}

function stepText(step: MigrationStep): string {
  if (step instanceof Object && 'addColumnIfMissing' in step) {
    const { table, column } = step.addColumnIfMissing;
    return `addColumnIfMissing ${table}.${column} ${columnDefinition(step.addColumnIfMissing).text}`;
  }
  return (step as Sql).text;
}

/** Checksum of a migration's SQL, independent of the database it is applied to. */
export function migrationChecksum(migration: Migration): string {
  const hash = createHash('sha256');
  for (const step of migration.steps(lit.identifier('db'))) hash.update(`${stepText(step)}\n;\n`);
  return hash.digest('hex').slice(0, 32);
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

async function runStep(ch: Connection, db: Sql, step: MigrationStep): Promise<void> {
  if (step instanceof Object && 'addColumnIfMissing' in step) {
    const { table, column } = step.addColumnIfMissing;
    const rs = await ch.data.query({
      query: sql`SELECT count() AS n FROM system.columns
WHERE database = ${lit.name(ch.database)} AND table = ${lit.name(table)} AND name = ${lit.name(column)}`.text,
      format: 'JSONEachRow',
    });
    const rows = await rs.json<{ n: string | number }>();
    if (Number(rows[0]?.n ?? 0) > 0) return;
    await ch.data.command({
      query:
        sql`ALTER TABLE ${db}.${lit.identifier(table)} ADD COLUMN ${lit.identifier(column)} ${columnDefinition(step.addColumnIfMissing)}`
          .text,
    });
    return;
  }
  await ch.data.command({ query: (step as Sql).text });
}

export interface MigrationResult {
  /** Versions applied by this run. */
  applied: number[];
  /** Highest version now recorded. */
  version: number;
}

/** Creates the database if needed and applies every migration not yet recorded, in order. */
export async function runMigrations(
  store: HistoryStore,
  options: { logger?: Logger; migrations?: readonly Migration[] } = {},
): Promise<MigrationResult> {
  const ch = connectionOf(store);
  const migrations = options.migrations ?? MIGRATIONS;
  const db = ch.db;
  await ch.data.command({ query: sql`CREATE DATABASE IF NOT EXISTS ${db}`.text });
  await ch.data.command({
    query: sql`CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (
  version UInt32,
  name String,
  checksum String,
  applied_at DateTime
) ENGINE = MergeTree()
ORDER BY version`.text,
  });
  const rs = await ch.data.query({
    query: sql`SELECT version, any(checksum) AS recorded FROM ${db}.schema_migrations GROUP BY version ORDER BY version`
      .text,
    format: 'JSONEachRow',
  });
  const recorded = new Map(
    (await rs.json<{ version: number | string; recorded: string }>()).map((r) => [Number(r.version), r.recorded]),
  );
  const known = new Set(migrations.map((m) => m.version));
  const unknown = [...recorded.keys()].filter((v) => !known.has(v));
  if (unknown.length > 0) {
    options.logger?.warn(
      { versions: unknown },
      'the database records migrations this build does not know (a newer build ran here); continuing',
    );
  }
  const applied: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    const checksum = migrationChecksum(migration);
    const seen = recorded.get(migration.version);
    if (seen !== undefined) {
      if (seen !== checksum) {
        throw new MigrationError(
          `migration ${migration.version} (${migration.name}) was applied with different SQL ` +
            `(recorded checksum ${seen}, this build ${checksum}); add a new migration instead of editing it`,
        );
      }
      continue;
    }
    options.logger?.info({ version: migration.version, name: migration.name }, 'applying migration');
    for (const step of migration.steps(db)) {
      try {
        await runStep(ch, db, step);
      } catch (err) {
        throw new MigrationError(
          `migration ${migration.version} (${migration.name}) failed: ${(err as Error).message}`,
          { cause: err },
        );
      }
    }
    await ch.data.command({
      query: sql`INSERT INTO ${db}.schema_migrations (version, name, checksum, applied_at)
SELECT ${lit.int(migration.version)}, ${lit.token(migrationSlug(migration))}, ${lit.token(checksum)}, now()`.text,
    });
    applied.push(migration.version);
  }
  const version = Math.max(0, ...recorded.keys(), ...applied);
  return { applied, version };
}

/** The migration's name reduced to the ticker grammar, so it goes through a validated literal. */
function migrationSlug(migration: Migration): string {
  return (
    migration.name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 64) || `migration-${migration.version}`
  );
}
