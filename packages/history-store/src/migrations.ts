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
 * - Steps are declarations (`createTable`, `createMaterializedView`, `addColumnIfMissing`), rendered by layout.ts
 *   for one server or for a cluster (`CLICKHOUSE_CLUSTER`): there a table becomes a Replicated table `ON CLUSTER`
 *   plus a Distributed table, a view reads and feeds the shards' own tables, an added column reaches both. A raw
 *   `Sql` step still runs on one server, and stops a cluster's migration with a message naming it. The checksum is
 *   taken over the single-server text, so it is the same in both layouts (and migration 1's never changed).
 *
 * Why the tables look like this: docs/history-internals.md ("Schema").
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@depthgate/service-kit';
import type { Connection } from './connection';
import { LOCAL_SUFFIX, Layout, type TableSpec, type ViewSpec } from './layout';
import { Sql, lit, sql } from './literals';
import { EXCHANGES, type ExchangeKey } from '@depthgate/platforms';
import {
  DECIMAL_TYPE,
  EXCHANGE_COLUMN,
  FIRST_EXCHANGES,
  FIRST_KINDS,
  HANDOVER_KIND_ENUM,
  SIDE_ENUM,
  STREAM_ENUM,
  TRADE_SIDE_ENUM,
  VERIFICATION_METHOD_ENUM,
} from './schema';
import { connectionOf, type HistoryStore } from './store';

/**
 * One step of a migration. The declared kinds run on a single server and on a cluster (layout.ts renders them for
 * each); a raw statement (`Sql`) runs on a single server only — on a cluster the runner refuses it, naming the
 * migration, because it cannot know which of the tables it means.
 */
type MigrationStep =
  | Sql
  | { createTable: TableSpec }
  | { createMaterializedView: ViewSpec }
  | { addColumnIfMissing: { table: string; column: string; type: Sql } }
  /**
   * The Enum8 `column` of every table declared so far gains these members (name → stored code): the `exchange`
   * column a recorded exchange's migration line extends, or another enum. No data is rewritten.
   */
  | { extendEnum: { column: string; members: Readonly<Record<string, number>> } };

export interface Migration {
  version: number;
  name: string;
  /** The steps, in order; `db` is the database as an identifier (for raw statements). */
  steps: (db: Sql) => MigrationStep[];
}

/** Migration 1's `exchange` type: `Enum8('venue_b' = 1, 'venue_c' = 2, 'venue_a_us' = 3)`. */
const EXCHANGE_ENUM = lit.enum8(FIRST_EXCHANGES);
/** Migration 1's `kind` type of the catalogue: `Enum8('snapshot' = 1, 'delta' = 2)`. */
const KIND_ENUM = lit.enum8(FIRST_KINDS);

/** Millisecond epoch → month partition, in UTC whatever the server's time zone. */
const MONTH_OF_TS = sql`toYYYYMM(toDateTime(intDiv(ts, 1000), 'UTC'))`;
const GRANULARITY = sql`index_granularity = 8192`;

/** The catalogue rows (per ticker and kind) of one block of `table`'s rows. */
const catalogueOf =
  (table: string, kind: 'snapshot' | 'delta') =>
  (t: (name: string) => Sql): Sql =>
    sql`SELECT exchange, ticker, CAST(${lit.token(kind)} AS ${KIND_ENUM}) AS kind,
  minState(ts) AS first_ts, maxState(ts) AS last_ts, countState() AS row_count
FROM ${t(table)}
GROUP BY exchange, ticker`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'order-book history: snapshots, deltas, gaps, ticker catalogue',
    steps: () => [
      {
        createTable: {
          name: 'snapshots',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['ts', sql`Int64`],
            ['side', SIDE_ENUM],
            ['price', DECIMAL_TYPE],
            ['quantity', DECIMAL_TYPE],
          ],
          engine: 'MergeTree',
          partitionBy: MONTH_OF_TS,
          orderBy: sql`(exchange, ticker, ts, side, toFloat64(price))`,
          settings: GRANULARITY,
        },
      },
      {
        createTable: {
          name: 'deltas',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['ts', sql`Int64`],
            ['sequence', sql`UInt64`],
            ['side', SIDE_ENUM],
            ['price', DECIMAL_TYPE],
            ['quantity_delta', DECIMAL_TYPE],
          ],
          engine: 'MergeTree',
          partitionBy: MONTH_OF_TS,
          orderBy: sql`(exchange, ticker, ts, sequence)`,
          settings: GRANULARITY,
        },
      },
      {
        createTable: {
          name: 'gaps',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['from_ts', sql`Int64`],
            ['to_ts', sql`Int64`],
            ['reason', sql`String`],
            ['detected_at', sql`Int64`],
          ],
          engine: 'MergeTree',
          orderBy: sql`(exchange, ticker, from_ts)`,
          settings: GRANULARITY,
        },
      },
      {
        createTable: {
          name: 'ticker_catalogue',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['kind', KIND_ENUM],
            ['first_ts', sql`AggregateFunction(min, Int64)`],
            ['last_ts', sql`AggregateFunction(max, Int64)`],
            ['row_count', sql`AggregateFunction(count)`],
          ],
          engine: 'AggregatingMergeTree',
          orderBy: sql`(exchange, ticker, kind)`,
          settings: GRANULARITY,
        },
      },
      {
        createMaterializedView: {
          name: 'snapshots_catalogue_mv',
          to: 'ticker_catalogue',
          select: catalogueOf('snapshots', 'snapshot'),
        },
      },
      {
        createMaterializedView: {
          name: 'deltas_catalogue_mv',
          to: 'ticker_catalogue',
          select: catalogueOf('deltas', 'delta'),
        },
      },
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
      { addColumnIfMissing: { table: 'snapshots', column: 'received_ts', type: sql`Int64 DEFAULT ts` } },
      { addColumnIfMissing: { table: 'deltas', column: 'received_ts', type: sql`Int64 DEFAULT ts` } },
    ],
  },
  {
    version: 3,
    name: 'trades: the trades table and its catalogue; gaps say what they cover',
    // Trades of every recorded exchange (docs/history-internals.md, "Schema"): the venue's trade id, exact price and
    // size, the taker's side normalised beside the venue's own, the venue's time and our receive time, and the ticker's
    // sequence shared with its deltas (so the two interleave in arrival order). Stored once: the recorder drops a
    // trade id it already wrote, the key (… ts, trade_id) of a replacing engine merges what still arrives twice, and
    // every read takes one row per (ts, trade_id). The trades have a catalogue of their own (first and last ts, rows
    // written, per ticker): the book's catalogue cannot take a third kind, since 18.16 refuses its views' rows once
    // their `kind` Enum8 differs from the table's. A gap says which stream it interrupts: the book, or the trades
    // (rows written before say nothing and are book gaps).
    steps: () => [
      {
        createTable: {
          name: 'trades',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['ts', sql`Int64`],
            ['sequence', sql`UInt64`],
            ['trade_id', sql`String`],
            ['price', DECIMAL_TYPE],
            ['size', DECIMAL_TYPE],
            ['side', TRADE_SIDE_ENUM],
            ['venue_side', sql`String`],
            ['received_ts', sql`Int64`],
          ],
          engine: 'ReplacingMergeTree',
          partitionBy: MONTH_OF_TS,
          orderBy: sql`(exchange, ticker, ts, trade_id)`,
          settings: GRANULARITY,
        },
      },
      {
        createTable: {
          name: 'trades_catalogue',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['first_ts', sql`AggregateFunction(min, Int64)`],
            ['last_ts', sql`AggregateFunction(max, Int64)`],
            ['row_count', sql`AggregateFunction(count)`],
          ],
          engine: 'AggregatingMergeTree',
          orderBy: sql`(exchange, ticker)`,
          settings: GRANULARITY,
        },
      },
      {
        createMaterializedView: {
          name: 'trades_catalogue_mv',
          to: 'trades_catalogue',
          select: (
            t,
          ) => sql`SELECT exchange, ticker, minState(ts) AS first_ts, maxState(ts) AS last_ts, countState() AS row_count
FROM ${t('trades')}
GROUP BY exchange, ticker`,
        },
      },
      { addColumnIfMissing: { table: 'gaps', column: 'stream', type: sql`${STREAM_ENUM} DEFAULT 'book'` } },
    ],
  },
  {
    version: 4,
    name: 'venue sequences on the rows; verification points',
    // The venue's own ordering of the message each row came from (docs/history.md, "Venue sequences"): Kalshi's
    // `sid:seq`, Coinbase's `sequence`, Gemini's socket sequence where the socket carries one, '' where the protocol
    // has none — beside the synthesized `sequence`, never instead of it. Rows written before read ''; so do inserts
    // that do not name the column (row formats 1–3).
    //
    // Verification points (docs/history.md#verified-books): each moment the recorder found its book equal to the
    // venue's — a REST book, a venue checksum, a resubscription's snapshot — so that the history can say, for any
    // moment, the last agreement before it and the next after it. `ts` is the moment the book agreed (the venue's
    // time of the state compared, epoch ms), `detected_at` when the recorder established it. Sorted like the other
    // tables by (exchange, ticker, ts): a moment's neighbours are a primary-key range read.
    steps: () => [
      { addColumnIfMissing: { table: 'snapshots', column: 'venue_seq', type: sql`String DEFAULT ''` } },
      { addColumnIfMissing: { table: 'deltas', column: 'venue_seq', type: sql`String DEFAULT ''` } },
      { addColumnIfMissing: { table: 'trades', column: 'venue_seq', type: sql`String DEFAULT ''` } },
      {
        createTable: {
          name: 'verifications',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['ts', sql`Int64`],
            ['method', VERIFICATION_METHOD_ENUM],
            ['detected_at', sql`Int64`],
          ],
          engine: 'MergeTree',
          partitionBy: MONTH_OF_TS,
          orderBy: sql`(exchange, ticker, ts)`,
          settings: GRANULARITY,
        },
      },
    ],
  },
  // Polymarket's CLOB and Coinbase Exchange recorded (docs/ADD_NEW_PLATFORM.md, "Recording it").
  exchangesMigration(5, ['venue_a_clob', 'venue_d']),
  {
    version: 6,
    name: 'redundant recording: hand-overs',
    // Each move of a ticker from one recorder's term to another's (docs/history-internals.md, "Schema": `handovers`):
    // from `ts` (the splice point S) on, the ticker's rows are `to_term`'s; `from_term`'s rows end before it. The new
    // owner writes the row before any row of its own for the ticker; a deposed recorder reads the rows of its term
    // before it replays its spool, and drops what it had spooled from S − 1 on. Sorted like the other tables.
    steps: () => [
      {
        createTable: {
          name: 'handovers',
          columns: [
            ['exchange', EXCHANGE_ENUM],
            ['ticker', sql`String`],
            ['ts', sql`Int64`],
            ['from_term', sql`UInt64`],
            ['to_term', sql`UInt64`],
            ['kind', HANDOVER_KIND_ENUM],
            ['detected_at', sql`Int64`],
          ],
          engine: 'MergeTree',
          partitionBy: MONTH_OF_TS,
          orderBy: sql`(exchange, ticker, ts)`,
          settings: GRANULARITY,
        },
      },
    ],
  },
];

/**
 * A recorded exchange's migration line (docs/ADD_NEW_PLATFORM.md, "Recording it"): the stored `exchange` columns gain
 * the exchanges' keys, under their descriptors' codes. `codes` defaults to the product's registry; a test with a
 * fixture exchange passes its own.
 */
export function exchangesMigration(
  version: number,
  keys: readonly ExchangeKey[],
  codes: Readonly<Record<string, number>> = EXCHANGES.codes,
): Migration {
  const members = Object.fromEntries(
    keys.map((k) => {
      const code = codes[k];
      if (code === undefined) throw new Error(`exchangesMigration: ${k} is not a recorded exchange of the registry`);
      return [k, code];
    }),
  );
  return {
    version,
    name: `exchanges: ${keys.join(', ')}`,
    steps: () => [{ extendEnum: { column: EXCHANGE_COLUMN, members } }],
  };
}

/** Every exchange the stored `exchange` Enum8 has once these migrations ran (key → code). */
export function storedExchanges(migrations: readonly Migration[] = MIGRATIONS): Record<string, number> {
  const out: Record<string, number> = { ...FIRST_EXCHANGES };
  const db = lit.identifier('db');
  for (const m of migrations)
    for (const step of m.steps(db)) {
      if (isStep(step, 'extendEnum') && step.extendEnum.column === EXCHANGE_COLUMN) {
        Object.assign(out, step.extendEnum.members);
      }
    }
  return out;
}

/** The schema version this build reads and writes: the highest migration it knows. */
export const REQUIRED_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/**
 * What the schema looks like after the steps seen so far: each declared table (its declaration, plus the columns
 * added and the column types changed since) and the members of the `exchange` Enum8.
 */
interface Declared {
  tables: Map<string, TableSpec>;
  /** The members of each Enum8 column a migration extended (or declared): column name → member → code. */
  enums: Map<string, Record<string, number>>;
}

function isStep<K extends 'createTable' | 'createMaterializedView' | 'addColumnIfMissing' | 'extendEnum'>(
  step: MigrationStep,
  kind: K,
): step is Extract<MigrationStep, Record<K, unknown>> {
  return !(step instanceof Sql) && kind in step;
}

/** An Enum8's members once `added` join `current`; a name or code that would change a stored member is an error. */
function withMembers(current: Record<string, number>, added: Readonly<Record<string, number>>): Record<string, number> {
  const next = { ...current };
  for (const [key, code] of Object.entries(added)) {
    const holder = Object.entries(next).find(([, c]) => c === code)?.[0];
    if ((holder !== undefined && holder !== key) || (next[key] !== undefined && next[key] !== code)) {
      throw new MigrationError(
        `extendEnum: ${key} = ${code} conflicts with the stored ${holder ?? key} = ${next[holder ?? key]}`,
      );
    }
    next[key] = code;
  }
  return next;
}

/**
 * A declared table as it is created now: each of its Enum8 columns that a migration extended (the `exchange` column
 * of every table) has the members declared so far, whatever the declaration wrote — so a table created after a
 * recorded exchange's migration line has that exchange too. (The checksum stays over the text as written.)
 */
function withDeclaredEnums(spec: TableSpec, enums: Declared['enums']): TableSpec {
  return {
    ...spec,
    columns: spec.columns.map(([c, t]) => {
      const members = enums.get(c);
      return members === undefined ? ([c, t] as const) : ([c, lit.enum8(members)] as const);
    }),
  };
}

function declare(declared: Declared, step: MigrationStep): void {
  const { tables } = declared;
  if (isStep(step, 'createTable')) {
    const { name } = step.createTable;
    if (!tables.has(name)) tables.set(name, withDeclaredEnums(step.createTable, declared.enums));
  } else if (isStep(step, 'addColumnIfMissing')) {
    const { table, column, type } = step.addColumnIfMissing;
    const spec = tables.get(table);
    if (spec && !spec.columns.some(([name]) => name === column))
      tables.set(table, { ...spec, columns: [...spec.columns, [column, type]] });
  } else if (isStep(step, 'extendEnum')) {
    const { column, members } = step.extendEnum;
    const next = withMembers(declared.enums.get(column) ?? {}, members);
    declared.enums.set(column, next);
    const type = lit.enum8(next);
    for (const [name, spec] of tables) {
      if (!spec.columns.some(([c]) => c === column)) continue;
      tables.set(name, {
        ...spec,
        columns: spec.columns.map(([c, t]) => (c === column ? ([c, type] as const) : ([c, t] as const))),
      });
    }
  }
}

/** A step's text for the checksum: its single-server form, so the checksum is the same in both layouts. */
function stepText(step: MigrationStep, layout: Layout): string {
  if (isStep(step, 'addColumnIfMissing')) {
    const { table, column, type } = step.addColumnIfMissing;
    return `addColumnIfMissing ${table}.${column} ${type.text}`;
  }
  if (isStep(step, 'extendEnum')) {
    const members = Object.entries(step.extendEnum.members).map(([k, c]) => `${k}=${c}`);
    // A recorded exchange's line keeps the text it was first checksummed with.
    return step.extendEnum.column === EXCHANGE_COLUMN
      ? `addExchanges ${members.join(',')}`
      : `extendEnum ${step.extendEnum.column} ${members.join(',')}`;
  }
  if ('createTable' in step)
    return layout
      .createTable(step.createTable)
      .map((s) => s.text)
      .join('\n;\n');
  if ('createMaterializedView' in step) return layout.createView(step.createMaterializedView).text;
  return step.text;
}

/** Checksum of a migration's SQL, independent of the database it is applied to and of the layout. */
export function migrationChecksum(migration: Migration): string {
  const db = lit.identifier('db');
  const layout = new Layout(db, 'db', undefined);
  const hash = createHash('sha256');
  for (const step of migration.steps(db)) hash.update(`${stepText(step, layout)}\n;\n`);
  return hash.digest('hex').slice(0, 32);
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

async function columnType(ch: Connection, table: string, column: string): Promise<string | undefined> {
  const rs = await ch.data.query({
    query: sql`SELECT type FROM system.columns
WHERE database = ${lit.name(ch.database)} AND table = ${lit.name(table)} AND name = ${lit.name(column)}`.text,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ type: string }>();
  return rows[0]?.type;
}

/** The members of an `Enum8(…)` type as system.columns spells it (`Enum8('venue_b' = 1, …)`). */
export function enumMembers(type: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of (type ?? '').matchAll(/'((?:[^'\\]|\\.)*)' = (-?\d+)/g)) out.set(m[1] as string, Number(m[2]));
  return out;
}

/** Whether a stored Enum8 has every member (with its code). */
function enumCovers(type: string | undefined, members: Readonly<Record<string, number>>): boolean {
  const stored = enumMembers(type);
  return Object.entries(members).every(([k, c]) => stored.get(k) === c);
}

async function hasColumn(ch: Connection, table: string, column: string): Promise<boolean> {
  const rs = await ch.data.query({
    query: sql`SELECT count() AS n FROM system.columns
WHERE database = ${lit.name(ch.database)} AND table = ${lit.name(table)} AND name = ${lit.name(column)}`.text,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ n: string | number }>();
  return Number(rows[0]?.n ?? 0) > 0;
}

async function run(ch: Connection, statements: Sql | Sql[]): Promise<void> {
  for (const statement of Array.isArray(statements) ? statements : [statements]) {
    await ch.data.command({ query: statement.text });
  }
}

/** Runs one step in the store's layout; `declared` is the schema as declared up to and including this step. */
async function runStep(ch: Connection, layout: Layout, step: MigrationStep, declared: Declared): Promise<void> {
  const { tables } = declared;
  if (isStep(step, 'createTable'))
    return run(ch, layout.createTable(tables.get(step.createTable.name) ?? step.createTable));
  if (isStep(step, 'createMaterializedView')) return run(ch, layout.createView(step.createMaterializedView));
  if (isStep(step, 'extendEnum')) {
    // Adding members to an Enum8 rewrites no data (a metadata change, allowed on a key column, 18.16 and current).
    // Idempotent: a table whose column already has every member is left alone.
    const { column } = step.extendEnum;
    const members = declared.enums.get(column) ?? {};
    const type = lit.enum8(members);
    for (const [name, spec] of tables) {
      if (!spec.columns.some(([c]) => c === column)) continue;
      const holder = layout.cluster === undefined ? name : `${name}${LOCAL_SUFFIX}`;
      if (!enumCovers(await columnType(ch, holder, column), members)) {
        await run(ch, layout.modifyColumn(name, column, type));
      }
      // A Distributed table takes no ALTER ON CLUSTER on 18.16: it holds no rows, so it is re-created (as below).
      if (layout.cluster !== undefined && !enumCovers(await columnType(ch, name, column), members)) {
        await run(ch, [layout.dropDistributed(name), layout.createDistributed(name, spec.columns)]);
      }
    }
    return;
  }
  if (isStep(step, 'addColumnIfMissing')) {
    const { table, column, type } = step.addColumnIfMissing;
    if (layout.cluster === undefined) {
      if (!(await hasColumn(ch, table, column))) await run(ch, layout.addColumn(table, column, type));
      return;
    }
    const spec = tables.get(table);
    if (!spec) throw new Error(`addColumnIfMissing: ${table} is not a table declared by a migration (createTable)`);
    if (!(await hasColumn(ch, `${table}${LOCAL_SUFFIX}`, column))) await run(ch, layout.addColumn(table, column, type));
    // A Distributed table takes no ALTER ON CLUSTER on 18.16 (its shards are replicated, it is not): it holds no
    // rows, so it is re-created with the columns declared so far. Reads through it fail for that moment.
    if (!(await hasColumn(ch, table, column))) {
      await run(ch, [layout.dropDistributed(table), layout.createDistributed(table, spec.columns)]);
    }
    return;
  }
  if (layout.cluster !== undefined) {
    throw new Error(
      `a raw SQL step cannot run on a cluster (CLICKHOUSE_CLUSTER=${layout.cluster}): declare it as createTable, ` +
        'createMaterializedView or addColumnIfMissing (packages/history-store/src/migrations.ts)',
    );
  }
  await run(ch, step as Sql);
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
  const layout = new Layout(ch.db, ch.database, ch.cluster);
  const db = ch.db;
  await run(ch, [layout.createDatabase(), layout.migrationsTable()]);
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
  const declared: Declared = {
    tables: new Map(),
    enums: new Map([[EXCHANGE_COLUMN, { ...FIRST_EXCHANGES }]]),
  };
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    const checksum = migrationChecksum(migration);
    const seen = recorded.get(migration.version);
    const steps = migration.steps(db);
    if (seen !== undefined) {
      if (seen !== checksum) {
        throw new MigrationError(
          `migration ${migration.version} (${migration.name}) was applied with different SQL ` +
            `(recorded checksum ${seen}, this build ${checksum}); add a new migration instead of editing it`,
        );
      }
      for (const step of steps) declare(declared, step);
      continue;
    }
    options.logger?.info(
      { version: migration.version, name: migration.name, cluster: layout.cluster },
      'applying migration',
    );
    for (const step of steps) {
      declare(declared, step);
      try {
        await runStep(ch, layout, step, declared);
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
