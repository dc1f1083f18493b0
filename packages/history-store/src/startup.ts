/**
 * What a process does with the store before it serves or records: apply the migrations (the history API and its
 * migrate CLI), check the columns the RowBinary reader assumes (the history API), wait for the schema (the recorder,
 * which never migrates). Each retries an unreachable ClickHouse, which may start after us.
 */
import type { Exchanges } from '@depthgate/platforms';
import type { Logger } from '@depthgate/service-kit';
import { classifyClickHouseError } from './errors';
import { join, lit, sql } from './literals';
import {
  MigrationError,
  REQUIRED_SCHEMA_VERSION,
  enumMembers,
  runMigrations,
  type MigrationResult,
} from './migrations';
import { Querier } from './querier';
import { EXCHANGE_COLUMN, READ_COLUMNS } from './schema';
import { connectionOf, type HistoryStore } from './store';

/** Start-up reads are small; this bounds each of them. */
const STARTUP_QUERY_MS = 30_000;

/**
 * Applies the migrations, retrying while ClickHouse is unreachable (it may start after us) for up to `timeoutMs`.
 * A migration that fails for another reason (bad SQL, changed checksum, permissions) fails at once.
 */
export async function migrateWhenReachable(
  store: HistoryStore,
  options: { timeoutMs: number; logger?: Logger },
): Promise<MigrationResult> {
  const where = connectionOf(store).where;
  const deadline = Date.now() + options.timeoutMs;
  let delay = 250;
  let warned = false;
  for (;;) {
    try {
      return await runMigrations(store, { logger: options.logger });
    } catch (err) {
      const failure = classifyClickHouseError((err as MigrationError).cause ?? err);
      const retryable =
        failure.kind === 'unavailable' && !(err instanceof MigrationError && failure.code !== undefined);
      if (!retryable || Date.now() + delay > deadline) {
        throw new Error(
          retryable
            ? `ClickHouse at ${where} is not reachable (${failure.message}); gave up after ${options.timeoutMs} ms`
            : `could not apply the ClickHouse migrations at ${where} (database ${store.database}): ${(err as Error).message}`,
          { cause: err },
        );
      }
      if (!warned) {
        options.logger?.warn({ url: where }, 'waiting for ClickHouse');
        warned = true;
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }
}

/**
 * Checks that the columns window queries read in RowBinary have the types their decoder assumes
 * (schema.ts READ_COLUMNS). Throws, naming every difference, when they do not: a table altered by hand, or a
 * migration that changed a type without the decoder following, must stop the service rather than be misread.
 */
export async function verifyReadColumns(store: HistoryStore): Promise<void> {
  const tables = Object.values(READ_COLUMNS).map((k) => k.table);
  const columns = await new Querier(store).jsonWithin(
    STARTUP_QUERY_MS,
    'columns',
    sql`SELECT table, name, type FROM system.columns
WHERE database = ${lit.name(store.database)} AND table IN (${join(
      tables.map((t) => lit.name(t)),
      ', ',
    )})`,
    (r) => ({ table: String(r.table), name: String(r.name), type: String(r.type) }),
  );
  const found = new Map(columns.map((c) => [`${c.table}.${c.name}`, c.type]));
  const problems: string[] = [];
  for (const { table, columns, extra, tail } of Object.values(READ_COLUMNS)) {
    for (const [name, type] of [...columns, ...extra, ...tail]) {
      const actual = found.get(`${table}.${name}`);
      if (actual !== type) problems.push(`${table}.${name} is ${actual ?? 'missing'}, expected ${type}`);
    }
  }
  if (problems.length > 0)
    throw new Error(
      `the ClickHouse tables in ${store.database} do not match what the service reads: ${problems.join('; ')}`,
    );
}

/**
 * Checks that the stored `exchange` Enum8 of every table has each exchange of the registry under its code: an
 * exchange added to the registry without its migration line (docs/ADD_NEW_PLATFORM.md) stops the service or the
 * recorder at start-up, naming it, instead of failing every insert or read of that exchange later.
 */
export async function verifyExchanges(store: HistoryStore, exchanges: Exchanges): Promise<void> {
  const columns = await new Querier(store).jsonWithin(
    STARTUP_QUERY_MS,
    'exchange-columns',
    // Tables that hold rows (a materialized view keeps the column type it was created with; it only passes rows on
    // to its table, and nothing reads through it).
    sql`SELECT table, type FROM system.columns
WHERE database = ${lit.name(store.database)} AND name = ${lit.name(EXCHANGE_COLUMN)}
  AND table IN (SELECT name FROM system.tables WHERE database = ${lit.name(store.database)} AND engine NOT LIKE '%View')`,
    (r) => ({ table: String(r.table), type: String(r.type) }),
  );
  const problems: string[] = [];
  for (const { table, type } of columns) {
    const stored = enumMembers(type);
    const missing = exchanges.list.filter((e) => stored.get(e.key) !== e.code).map((e) => `${e.key} = ${e.code}`);
    if (missing.length > 0) problems.push(`${table}.${EXCHANGE_COLUMN} lacks ${missing.join(', ')}`);
  }
  if (problems.length > 0) {
    throw new Error(
      `the ClickHouse tables in ${store.database} do not store every recorded exchange (${problems.join('; ')}): ` +
        'a recorded exchange needs its migration line (exchangesMigration, docs/ADD_NEW_PLATFORM.md)',
    );
  }
}

/** The highest migration version recorded in the store's database, or -1 while the schema is not there. */
export async function schemaVersion(store: HistoryStore): Promise<number> {
  const q = new Querier(store);
  const [exists] = await q.jsonWithin(
    STARTUP_QUERY_MS,
    'schema-version',
    sql`SELECT count() AS n FROM system.tables WHERE database = ${lit.name(store.database)} AND name = 'schema_migrations'`,
    (r) => Number(r.n),
  );
  if (!exists) return -1;
  const [version] = await q.jsonWithin(
    STARTUP_QUERY_MS,
    'schema-version',
    sql`SELECT max(version) AS v FROM ${q.db}.schema_migrations`,
    (r) => Number(r.v),
  );
  return version ?? -1;
}

/**
 * Waits until ClickHouse answers and the store's database holds the schema this build needs (applied by the history
 * API or the migrate CLI; a process that only writes, like the recorder, never migrates). Gives up after
 * `timeoutMs`, naming what was missing.
 */
export async function waitForSchema(
  store: HistoryStore,
  options: { timeoutMs: number; logger?: Logger },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let warned = false;
  for (let delay = 250; ; delay = Math.min(delay * 2, 2000)) {
    let problem: string;
    try {
      const version = await schemaVersion(store);
      if (version >= REQUIRED_SCHEMA_VERSION) return;
      problem = `schema version ${version} < ${REQUIRED_SCHEMA_VERSION} (the history service or the migrate CLI applies the migrations)`;
    } catch (err) {
      problem = classifyClickHouseError(err).message;
    }
    if (Date.now() + delay > deadline) throw new Error(`ClickHouse does not hold the history schema: ${problem}`);
    if (!warned) {
      options.logger?.warn({ problem }, 'waiting for ClickHouse and the history schema');
      warned = true;
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}
