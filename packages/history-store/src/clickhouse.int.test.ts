/**
 * The ClickHouse layer against the real server of `./dev test` (18.16 locally, a current release in CI):
 * migrations, the literal helper read back by the server, the inserts and the catalogue that follows them, the
 * column check of start-up, and the recorder's operations. (The window queries' RowBinary is checked through the
 * history API's renderer, in services/history.)
 */
import net from 'node:net';
import { Readable } from 'node:stream';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { Rng } from '@depthgate/service-kit';
import { testClickHouseUrl, uniqueName, waitFor } from '@depthgate/test-utils';
import type { Connection } from './connection';
import {
  insertDeltaRows,
  insertGapRows,
  insertSnapshotRows,
  insertTradeRows,
  insertTsv,
  insertVerificationRows,
  LATEST_ROW_FORMAT,
  recorderQueryId,
} from './inserts';
import { TICKER_PATTERN, join, lit, quoteString, sql, type Sql } from './literals';
import { MIGRATIONS, MigrationError, exchangesMigration, runMigrations, type Migration } from './migrations';
import { OrderBookQueries, tickersQuery } from './queries/order-books';
import { RecorderStore } from './queries/recorder';
import { schemaVersion, verifyReadColumns } from './startup';
import { HistoryStore, connectionOf } from './store';
import { createTestDatabase, type TestDatabase } from './testing';

let db: TestDatabase;
let ch: Connection;

beforeAll(async () => {
  db = await createTestDatabase({ url: testClickHouseUrl(), database: uniqueName('chl') });
  ch = connectionOf(db.store);
});

afterAll(async () => {
  await db.drop();
  await db.close();
});

/** Rows of a query as objects. */
async function rows<T>(query: Sql): Promise<T[]> {
  const r = await ch.data.exec({ query: sql`${query} FORMAT JSONEachRow`.text });
  const chunks: Buffer[] = [];
  for await (const c of r.stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as T);
}

describe('migrations', () => {
  it('are applied once, then find nothing to do', async () => {
    const again = await runMigrations(db.store);
    expect(again).toEqual({ applied: [], version: MIGRATIONS.length });
    const tables = await rows<{ name: string }>(
      sql`SELECT name FROM system.tables WHERE database = ${lit.name(ch.database)} ORDER BY name`,
    );
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining(['deltas', 'gaps', 'schema_migrations', 'snapshots', 'ticker_catalogue']),
    );
  });

  it('refuse a recorded migration whose SQL changed, and add columns idempotently', async () => {
    const scratch = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('mig') });
    const raw = connectionOf(scratch);
    try {
      const v1: Migration = {
        version: 1,
        name: 'scratch',
        steps: (db) => [sql`CREATE TABLE IF NOT EXISTS ${db}.t (a UInt8) ENGINE = MergeTree() ORDER BY a`],
      };
      const v2: Migration = {
        version: 2,
        name: 'add b',
        steps: () => [{ addColumnIfMissing: { table: 't', column: 'b', type: sql`String` } }],
      };
      expect(await runMigrations(scratch, { migrations: [v1] })).toEqual({ applied: [1], version: 1 });
      // As if migration 2 died after its ALTER and before its record: the column exists, the record does not.
      await raw.data.command({ query: sql`ALTER TABLE ${raw.db}.t ADD COLUMN b String`.text });
      expect(await runMigrations(scratch, { migrations: [v1, v2] })).toEqual({ applied: [2], version: 2 });
      expect(await runMigrations(scratch, { migrations: [v1, v2] })).toEqual({ applied: [], version: 2 });
      const edited: Migration = {
        ...v1,
        steps: (db) => [sql`CREATE TABLE IF NOT EXISTS ${db}.t (a UInt16) ENGINE = MergeTree() ORDER BY a`],
      };
      await expect(runMigrations(scratch, { migrations: [edited, v2] })).rejects.toThrow(MigrationError);
      await expect(runMigrations(scratch, { migrations: [edited, v2] })).rejects.toThrow(/applied with different SQL/);
    } finally {
      await raw.data.command({ query: sql`DROP DATABASE IF EXISTS ${raw.db}`.text });
      await scratch.close();
    }
  });
});

describe('migration 2: receive times', () => {
  it('adds received_ts to a database of migration 1, where rows written before read it as their ts', async () => {
    const old = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('mig2') });
    const raw = connectionOf(old);
    try {
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 1) })).toEqual({ applied: [1], version: 1 });
      // As the recorder and the generator wrote before: six and seven columns.
      await insertTsv(old, 'snapshots', ['venue_b\tOLD-1\t1000\tbid\t0.5\t2\n'], { rowFormat: 1 });
      await insertTsv(old, 'deltas', ['venue_b\tOLD-1\t1500\t1\tbid\t0.5\t-1\n'], { rowFormat: 1 });
      const two = { migrations: MIGRATIONS.slice(0, 2) };
      expect(await runMigrations(old, two)).toEqual({ applied: [2], version: 2 });
      expect(await runMigrations(old, two)).toEqual({ applied: [], version: 2 });
      await insertDeltaRows(
        old,
        [
          {
            exchange: 'venue_b',
            ticker: 'OLD-1',
            ts: 2000,
            sequence: 2,
            side: 'ask',
            price: '0.6',
            quantity_delta: '1',
            received_ts: 2040,
          },
          // (Written as a build of migration 2 wrote it.)
        ],
        { rowFormat: 2 },
      );
      const read = async (query: Sql) => {
        const r = await raw.data.query({ query: query.text, format: 'JSONEachRow' });
        return (await r.json<{ ts: string; received_ts: string }>()).map((x) => [Number(x.ts), Number(x.received_ts)]);
      };
      expect(await read(sql`SELECT ts, received_ts FROM ${raw.db}.snapshots`)).toEqual([[1000, 1000]]);
      expect(await read(sql`SELECT ts, received_ts FROM ${raw.db}.deltas ORDER BY ts`)).toEqual([
        [1500, 1500],
        [2000, 2040],
      ]);
      // Merged into one part, the old rows keep their value.
      await raw.data.command({ query: sql`OPTIMIZE TABLE ${raw.db}.deltas FINAL`.text });
      expect(await read(sql`SELECT ts, received_ts FROM ${raw.db}.deltas ORDER BY ts`)).toEqual([
        [1500, 1500],
        [2000, 2040],
      ]);
      // Migrated to the current version (the service reads trades too, since migration 3), it reads as the service
      // expects.
      await runMigrations(old);
      await expect(verifyReadColumns(old)).resolves.toBeUndefined();
    } finally {
      await raw.data.command({ query: sql`DROP DATABASE IF EXISTS ${raw.db}`.text });
      await old.close();
    }
  });
});

describe('migration 3: trades', () => {
  it('adds the trades table (one row per trade id when read), its catalogue rows and gaps.stream to a database of migration 2', async () => {
    const old = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('mig3') });
    const raw = connectionOf(old);
    try {
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 2) })).toEqual({ applied: [1, 2], version: 2 });
      // A gap as a recorder before migration 3 spooled it: six columns.
      await insertTsv(old, 'gaps', ['venue_b\tOLD-1\t1000\t2000\tdisconnect\t2100\n'], { rowFormat: 2 });
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 3) })).toEqual({ applied: [3], version: 3 });
      const trade = {
        exchange: 'venue_b' as const,
        ticker: 'OLD-1',
        ts: 3000,
        sequence: 3_000_000,
        trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
        price: '0.3600',
        size: '136.00',
        side: 'sell' as const,
        venue_side: 'no',
        received_ts: 3004,
      };
      // The same trade written twice (a retried batch, a second writer) and a second trade at the same ms.
      // (Written as a build of migration 3 wrote them.)
      const three = { rowFormat: 3 } as const;
      await insertTradeRows(old, [trade], three);
      await insertTradeRows(
        old,
        [
          { ...trade, sequence: 3_000_007, received_ts: 3010 },
          { ...trade, trade_id: 'other' },
        ],
        three,
      );
      await insertGapRows(
        old,
        [
          {
            exchange: 'venue_b',
            ticker: 'OLD-1',
            from_ts: 2500,
            to_ts: 2600,
            reason: 'disconnect',
            detected_at: 2700,
            stream: 'trades',
          },
        ],
        three,
      );
      const rows = async (query: Sql) =>
        (await raw.data.query({ query: query.text, format: 'JSONEachRow' })).json<Record<string, string>>();
      const read = sql`SELECT trade_id, toString(price) AS p, toString(size) AS s, side, venue_side FROM ${raw.db}.trades
WHERE exchange = 'venue_b' AND ticker = 'OLD-1' ORDER BY ts, trade_id LIMIT 1 BY ts, trade_id`;
      const expected = [
        { trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed', p: '0.36', s: '136', side: 'sell', venue_side: 'no' },
        { trade_id: 'other', p: '0.36', s: '136', side: 'sell', venue_side: 'no' },
      ];
      const canonical = (list: Record<string, string>[]) =>
        list.map((r) => ({ ...r, p: String(Number(r.p)), s: String(Number(r.s)) }));
      expect(canonical(await rows(read))).toEqual(expected);
      await raw.data.command({ query: sql`OPTIMIZE TABLE ${raw.db}.trades FINAL`.text });
      expect(canonical(await rows(read))).toEqual(expected);
      expect(await rows(sql`SELECT count() AS n FROM ${raw.db}.trades`)).toEqual([{ n: '2' }]);
      expect(
        await rows(
          sql`SELECT ticker, toString(minMerge(first_ts)) AS first, toString(maxMerge(last_ts)) AS last FROM ${raw.db}.trades_catalogue GROUP BY ticker`,
        ),
      ).toEqual([{ ticker: 'OLD-1', first: '3000', last: '3000' }]);
      expect(await rows(sql`SELECT from_ts, toString(stream) AS st FROM ${raw.db}.gaps ORDER BY from_ts`)).toEqual([
        { from_ts: '1000', st: 'book' },
        { from_ts: '2500', st: 'trades' },
      ]);
      expect(
        await new RecorderStore(old).probeBatch({
          table: 'trades',
          exchange: 'venue_b',
          ticker: 'OLD-1',
          ts: 3000,
          tradeId: 'other',
        }),
      ).toBe(true);
      expect(
        await new RecorderStore(old).probeBatch({
          table: 'trades',
          exchange: 'venue_b',
          ticker: 'OLD-1',
          ts: 3001,
          tradeId: 'other',
        }),
      ).toBe(false);
    } finally {
      await raw.data.command({ query: sql`DROP DATABASE IF EXISTS ${raw.db}`.text });
      await old.close();
    }
  });
});

describe('migration 4: venue sequences and verification points', () => {
  it('adds venue_seq to a database of migration 3, where rows written before (and format-3 lines) read it as empty', async () => {
    const old = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('mig4') });
    const raw = connectionOf(old);
    try {
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 3) })).toEqual({
        applied: [1, 2, 3],
        version: 3,
      });
      // As the recorder writes before migration 4 (row format 3).
      await insertTsv(old, 'snapshots', ['venue_b\tOLD-4\t1000\tbid\t0.5\t2\t1001\n'], { rowFormat: 3 });
      await insertTsv(old, 'deltas', ['venue_b\tOLD-4\t1500\t1\tbid\t0.5\t-1\t1502\n'], { rowFormat: 3 });
      await insertTsv(old, 'trades', ['venue_b\tOLD-4\t1600\t2\tt-1\t0.5\t1\tsell\tno\t1603\n'], { rowFormat: 3 });
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 4) })).toEqual({ applied: [4], version: 4 });
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 4) })).toEqual({ applied: [], version: 4 });
      // After it: format 3 still inserts (a recorder not yet moved), and format 4 carries the venue's sequence.
      await insertTsv(old, 'deltas', ['venue_b\tOLD-4\t1700\t3\task\t0.6\t1\t1701\n'], { rowFormat: 3 });
      await insertDeltaRows(old, [
        {
          exchange: 'venue_b',
          ticker: 'OLD-4',
          ts: 1800,
          sequence: 4,
          side: 'ask',
          price: '0.6',
          quantity_delta: '-1',
          venue_seq: '7:1042',
        },
      ]);
      await insertSnapshotRows(old, [
        {
          exchange: 'venue_b',
          ticker: 'OLD-4',
          ts: 1900,
          side: 'ask',
          price: '0.6',
          quantity: '1',
          venue_seq: '7:1043',
        },
      ]);
      await insertTradeRows(old, [
        {
          exchange: 'venue_b',
          ticker: 'OLD-4',
          ts: 2000,
          sequence: 5,
          trade_id: 't-2',
          price: '0.6',
          size: '1',
          side: 'buy',
          venue_side: 'yes',
          venue_seq: '7:1044',
        },
      ]);
      const read = async (table: string) => {
        const r = await raw.data.query({
          query: sql`SELECT ts, venue_seq FROM ${raw.db}.${lit.identifier(table)} ORDER BY ts`.text,
          format: 'JSONEachRow',
        });
        return (await r.json<{ ts: string; venue_seq: string }>()).map((x) => [Number(x.ts), x.venue_seq]);
      };
      const expected = {
        snapshots: [
          [1000, ''],
          [1900, '7:1043'],
        ],
        deltas: [
          [1500, ''],
          [1700, ''],
          [1800, '7:1042'],
        ],
        trades: [
          [1600, ''],
          [2000, '7:1044'],
        ],
      };
      for (const [table, rows] of Object.entries(expected)) expect([table, await read(table)]).toEqual([table, rows]);
      // Merged into one part, the old rows keep their empty value.
      for (const table of Object.keys(expected)) {
        await raw.data.command({ query: sql`OPTIMIZE TABLE ${raw.db}.${lit.identifier(table)} FINAL`.text });
        expect([table, await read(table)]).toEqual([table, expected[table as keyof typeof expected]]);
      }
      await expect(verifyReadColumns(old)).resolves.toBeUndefined();
    } finally {
      await raw.data.command({ query: sql`DROP DATABASE IF EXISTS ${raw.db}`.text });
      await old.close();
    }
  });

  it('a table created after a recorded exchange’s line has that exchange (the declared members, not the written ones)', async () => {
    const scratch = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('mig4x') });
    const raw = connectionOf(scratch);
    try {
      // The exchange line before migration 4 (renumbered after it): verifications is created with venue_f.
      const fixture = exchangesMigration(4, ['venue_f' as never], { venue_f: 99 });
      const migrations = [...MIGRATIONS.slice(0, 3), fixture, { ...(MIGRATIONS[3] as Migration), version: 5 }];
      expect(await runMigrations(scratch, { migrations })).toEqual({ applied: [1, 2, 3, 4, 5], version: 5 });
      const types = await raw.data.query({
        query:
          sql`SELECT table, type FROM system.columns WHERE database = ${lit.name(raw.database)} AND name = 'exchange'
ORDER BY table`.text,
        format: 'JSONEachRow',
      });
      const found = await types.json<{ table: string; type: string }>();
      expect(found.map((c) => c.table)).toContain('verifications');
      // (The catalogue views keep their own columns: an exchange line alters tables.)
      for (const { table, type } of found.filter((c) => !c.table.endsWith('_mv')))
        expect([table, type]).toEqual([table, expect.stringContaining("'venue_f' = 99")]);
      await insertTsv(scratch, 'verifications', ['venue_f\tF-1\t1000\trest_book\t1100\n'], { rowFormat: 4 });
    } finally {
      await raw.data.command({ query: sql`DROP DATABASE IF EXISTS ${raw.db}`.text });
      await scratch.close();
    }
  });

  it('verification points: the last at or before a moment (inside the window) and the first after it, and per method in a range', async () => {
    const point = (ts: number, method: 'rest_book' | 'checksum' | 'snapshot') => ({
      exchange: 'venue_c' as const,
      ticker: 'VER-1',
      ts,
      method,
      detected_at: ts + 250,
    });
    await insertVerificationRows(db.store, [
      point(10_000, 'rest_book'),
      point(20_000, 'checksum'),
      point(30_000, 'snapshot'),
    ]);
    // The same point stored twice (a retried batch) counts once; another ticker is never seen.
    await insertVerificationRows(db.store, [
      point(20_000, 'checksum'),
      { ...point(25_000, 'rest_book'), ticker: 'VER-2' },
    ]);
    const q = new OrderBookQueries(db.store);
    const scope = db.store.scope(10_000);
    try {
      const around = (at: number, lower = 0) => q.verifiedAround(scope, 'venue_c', 'VER-1', lower, at);
      const p10 = { ts: 10_000, method: 'rest_book' };
      const p20 = { ts: 20_000, method: 'checksum' };
      const p30 = { ts: 30_000, method: 'snapshot' };
      expect(await around(20_000)).toEqual({ before: p20, after: p30 });
      expect(await around(25_000)).toEqual({ before: p20, after: p30 });
      expect(await around(9_999)).toEqual({ before: null, after: p10 });
      expect(await around(30_000)).toEqual({ before: p30, after: null });
      expect(await around(40_000)).toEqual({ before: p30, after: null });
      // The caller's window starts after the last one before: it is not shown.
      expect(await around(25_000, 20_001)).toEqual({ before: null, after: p30 });
      expect(await q.verifiedAround(scope, 'venue_c', 'NONE', 0, 25_000)).toEqual({ before: null, after: null });
      const coverage = await q.coverage(scope, 'venue_c', 'VER-1', 0, null);
      expect(coverage.verification).toEqual({
        count: 3,
        firstTs: 10_000,
        lastTs: 30_000,
        methods: { rest_book: 1, checksum: 1, snapshot: 1 },
      });
      expect((await q.coverage(scope, 'venue_c', 'VER-1', 15_000, 25_000)).verification).toEqual({
        count: 1,
        firstTs: 20_000,
        lastTs: 20_000,
        methods: { rest_book: 0, checksum: 1, snapshot: 0 },
      });
      expect((await q.coverage(scope, 'venue_c', 'VER-1', 31_000, null)).verification).toEqual({
        count: 0,
        firstTs: null,
        lastTs: null,
        methods: { rest_book: 0, checksum: 0, snapshot: 0 },
      });
    } finally {
      scope.dispose();
    }
    const recorder = new RecorderStore(db.store);
    const key = { table: 'verifications' as const, exchange: 'venue_c' as const, ticker: 'VER-1', ts: 30_000 };
    expect(await recorder.probeBatch({ ...key, method: 'snapshot', detectedAt: 30_250 })).toBe(true);
    expect(await recorder.probeBatch({ ...key, method: 'rest_book', detectedAt: 30_250 })).toBe(false);
  });
});

describe('literals read back by the server', () => {
  it('quoteString: 2,000 hostile strings come back byte for byte', async () => {
    const rng = new Rng('server-fuzz');
    const alphabet = [
      "'",
      '\\',
      '"',
      '`',
      '%',
      '_',
      '\0',
      '\n',
      '\t',
      ';',
      '-',
      'A',
      'é',
      '🙂',
      '\u0001',
      '\u007f',
      '?',
      '{',
    ];
    const strings: string[] = ["'; DROP TABLE snapshots; --", '\\', "\\'", '\0', 'x'.repeat(5000)];
    while (strings.length < 2000) {
      let s = '';
      const n = rng.range(0, 30);
      for (let i = 0; i < n; i++)
        s += rng.chance(0.15) ? String.fromCodePoint(rng.range(0x20, 0xd7ff)) : rng.pick(alphabet);
      strings.push(s);
    }
    for (let i = 0; i < strings.length; i += 200) {
      const batch = strings.slice(i, i + 200);
      const select = batch.map((s, j) => `hex(${quoteString(s)}) AS c${j}`).join(', ');
      // quoteString is the escaper under test; the statement is assembled here on purpose.
      const r = await ch.data.query({ query: `SELECT ${select}`, format: 'JSONEachRow' });
      const [row] = await r.json<Record<string, string>>();
      batch.forEach((s, j) => expect(row?.[`c${j}`]).toBe(Buffer.from(s, 'utf8').toString('hex').toUpperCase()));
    }
  });

  it('hostile tickers and prefixes never reach the server; valid ones match literally (startsWith, no LIKE)', async () => {
    await insertDeltaRows(db.store, [
      { exchange: 'venue_b', ticker: 'KX_A', ts: 1, sequence: 1, side: 'bid', price: '1', quantity_delta: '1' },
      { exchange: 'venue_b', ticker: 'KXBA', ts: 1, sequence: 2, side: 'bid', price: '1', quantity_delta: '1' },
    ]);
    const list = async (prefix: string) =>
      (await rows<{ ticker: string }>(tickersQuery(ch.db, 'venue_b', { prefix }))).map((r) => r.ticker);
    expect(await list('kx_')).toEqual(['KX_A']);
    expect(await list('k_')).toEqual([]);
    expect(await list('KX')).toEqual(['KXBA', 'KX_A']);
    const rng = new Rng('prefix-fuzz');
    for (let i = 0; i < 500; i++) {
      const p = Array.from({ length: rng.range(1, 6) }, () =>
        rng.pick(["'", '%', '_', 'K', 'X', '\\', '-', '.', ' ', 'a']),
      ).join('');
      if (TICKER_PATTERN.test(p)) {
        const expected = ['KXBA', 'KX_A'].filter((t) => t.toLowerCase().startsWith(p.toLowerCase()));
        expect(await list(p)).toEqual(expected);
      } else {
        expect(() => tickersQuery(ch.db, 'venue_b', { prefix: p })).toThrow(TypeError);
      }
    }
  });
});

describe('the columns the service reads in RowBinary', () => {
  it('match what the migrations create, and a drifted type stops the service instead of being misread', async () => {
    await expect(verifyReadColumns(db.store)).resolves.toBeUndefined();
    const drifted = await createTestDatabase({ url: testClickHouseUrl(), database: uniqueName('drift') });
    try {
      const raw = connectionOf(drifted.store);
      await raw.data.command({
        query: sql`ALTER TABLE ${raw.db}.snapshots MODIFY COLUMN quantity Float64`.text,
      });
      await expect(verifyReadColumns(drifted.store)).rejects.toThrow(
        /snapshots\.quantity is Float64, expected Decimal\(38, 18\)/,
      );
    } finally {
      await drifted.drop();
      await drifted.close();
    }
  });
});

describe('inserts and the catalogue', () => {
  it('keep decimals exact and keep first/last ts and row counts per ticker without the writer’s help', async () => {
    await insertSnapshotRows(db.store, [
      { exchange: 'venue_a_us', ticker: 'cat-test', ts: 5000, side: 'bid', price: '0.555', quantity: '0.50' },
      { exchange: 'venue_a_us', ticker: 'cat-test', ts: 5000, side: 'ask', price: '0.560', quantity: '0.80' },
    ]);
    await insertSnapshotRows(db.store, [
      { exchange: 'venue_a_us', ticker: 'cat-test', ts: 9000, side: 'bid', price: '0.556', quantity: '1' },
    ]);
    await insertDeltaRows(db.store, [
      {
        exchange: 'venue_a_us',
        ticker: 'cat-test',
        ts: 7000,
        sequence: 1n,
        side: 'bid',
        price: '0.555',
        quantity_delta: '-0.50',
      },
    ]);
    await insertGapRows(db.store, [
      {
        exchange: 'venue_a_us',
        ticker: 'cat-test',
        from_ts: 9000,
        to_ts: 12000,
        reason: 'seed_end',
        detected_at: 13000,
      },
    ]);
    const scope = db.store.scope(10_000);
    const queries = new OrderBookQueries(db.store);
    const entries = await queries.catalogue(scope, 'venue_a_us', 'CAT-TEST');
    // Several tickers in one query: each that exists, whatever the case asked; none for an empty list.
    const several = await queries.catalogues(scope, 'venue_a_us', ['nope', 'Cat-Test', 'cat-test', 'cat']);
    expect(await queries.catalogues(scope, 'venue_a_us', [])).toEqual([]);
    scope.dispose();
    const byKind = Object.fromEntries(entries.map((e) => [e.kind, [e.firstTs, e.lastTs, e.rows]]));
    expect(byKind).toEqual({ snapshot: [5000, 9000, 3], delta: [7000, 7000, 1] });
    expect(entries.every((e) => e.ticker === 'cat-test')).toBe(true);
    expect(several).toEqual(entries);
    const stored = await rows<{ p: string; q: string }>(
      sql`SELECT toString(price) AS p, toString(quantity) AS q FROM ${ch.db}.snapshots WHERE ticker = ${lit.ticker('cat-test')} ORDER BY ts, side, toFloat64(price)`,
    );
    // 18.16 prints every stored place, current releases trim: compare without trailing fractional zeros.
    const trim = (d: string) => (d.includes('.') ? d.replace(/\.?0+$/, '') : d);
    expect(stored.map((r) => [trim(r.p), trim(r.q)])).toEqual([
      ['0.555', '0.5'],
      ['0.56', '0.8'],
      ['0.556', '1'],
    ]);
    const gaps = await rows<{ reason: string; from_ts: string; to_ts: string }>(
      sql`SELECT reason, from_ts, to_ts FROM ${ch.db}.gaps WHERE ticker = ${lit.ticker('cat-test')}`,
    );
    expect(gaps).toEqual([{ reason: 'seed_end', from_ts: '9000', to_ts: '12000' }]);
  });

  it('an insert with a malformed row fails before anything is written', async () => {
    await expect(
      insertSnapshotRows(db.store, [
        { exchange: 'venue_b', ticker: 'BAD-1', ts: 1, side: 'bid', price: '0.5', quantity: '1' },
        { exchange: 'venue_b', ticker: 'BAD-1', ts: 2, side: 'bid', price: '1e3', quantity: '1' },
      ]),
    ).rejects.toThrow(/bad price/);
    const n = await rows<{ n: string }>(
      sql`SELECT count() AS n FROM ${ch.db}.snapshots WHERE ticker = ${lit.ticker('BAD-1')}`,
    );
    expect(Number(n[0]?.n)).toBe(0);
  });

  it('an insert whose body stops short (the client killed or aborting) stores nothing; a plain body stores what came', async () => {
    // Through a proxy that counts the bytes it passes to ClickHouse. Each insert's source sends 20,000 rows (about
    // 1.5 MB, in whole lines) and then waits: once the proxy has passed them, the insert is aborted (its socket
    // destroyed, as a killed recorder's is). The one difference between the two inserts is our connection's gzip.
    let passed = 0;
    const chUrl = new URL(testClickHouseUrl());
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(chUrl.port), chUrl.hostname);
      client.on('data', (chunk: Buffer) => {
        passed += chunk.length;
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      client.on('close', () => upstream.end());
      for (const s of [client, upstream]) s.on('error', () => s.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = new URL(chUrl);
    url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const ROWS = 20_000;
    const line = (ticker: string, i: number) =>
      `venue_b\t${ticker}\t${1000 + i}\t${1000 + i}\tbid\t0.5\t1\t${1000 + i}\t\n`;
    const bytes = Array.from({ length: ROWS }, (_, i) => line('CUT-PLAIN', i)).join('').length;
    async function* stalled(ticker: string, signal: AbortSignal): AsyncGenerator<string> {
      for (let i = 0; i < ROWS; i += 500) {
        yield Array.from({ length: 500 }, (_, k) => line(ticker, i + k)).join('');
      }
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    }
    /** Runs `insert` until the proxy has passed all but the deflater's last window of the rows, then aborts it. */
    async function cutShort(insert: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
      passed = 0;
      const abort = new AbortController();
      const done = insert(abort.signal).then(
        () => 'committed',
        () => 'failed',
      );
      await waitFor(() => passed >= bytes - 64 * 1024, { timeoutMs: 20_000, what: 'the rows to reach ClickHouse' });
      abort.abort();
      expect(await done).toBe('failed');
    }
    const count = async (ticker: string) =>
      Number(
        (
          await rows<{ n: string }>(sql`SELECT count() AS n FROM ${ch.db}.deltas WHERE ticker = ${lit.ticker(ticker)}`)
        )[0]?.n,
      );
    try {
      // The same client without the gzip: ClickHouse inserts the rows that came (the hazard).
      // (Its own logger off: the abort is the point, not an error to print.)
      const plain = createClient({
        url: url.origin,
        username: url.username || 'default',
        password: url.password,
        log: { level: ClickHouseLogLevel.OFF },
      });
      try {
        await cutShort((signal) =>
          plain.insert({
            table: sql`${ch.db}.deltas`.text,
            values: Readable.from(stalled('CUT-PLAIN', signal), { objectMode: false }),
            format: 'TabSeparated',
            abort_signal: signal,
          }),
        );
      } finally {
        await plain.close();
      }
      await waitFor(async () => (await count('CUT-PLAIN')) === ROWS, {
        timeoutMs: 10_000,
        what: 'the plain body’s rows to land',
      });
      // Ours: the gzip stream that stops short does not inflate.
      const store = new HistoryStore({ url: url.toString(), database: db.database });
      try {
        await cutShort((signal) =>
          insertTsv(store, 'deltas', stalled('CUT-OURS', signal), { signal, rowFormat: LATEST_ROW_FORMAT }),
        );
      } finally {
        await store.close();
      }
      // Anything that was to land has landed by the time a later insert on the same server is visible.
      await insertTsv(db.store, 'deltas', [line('CUT-AFTER', 0)], { rowFormat: LATEST_ROW_FORMAT });
      await waitFor(async () => (await count('CUT-AFTER')) === 1, { timeoutMs: 10_000, what: 'a later insert' });
      expect(await count('CUT-OURS')).toBe(0);
    } finally {
      proxy.close();
    }
  });

  it('joins lists of literals', () => {
    expect(join([lit.ticker('A'), lit.ticker('B')], ', ').text).toBe("'A', 'B'");
  });
});

describe('the recorder’s operations', () => {
  const recorder = () => new RecorderStore(db.store);

  it('probe a batch by the natural key of its last row, in each table', async () => {
    const gap = {
      exchange: 'venue_c' as const,
      ticker: 'PROBE',
      fromTs: 10,
      toTs: 20,
      reason: 'stall',
      detectedAt: 30,
    };
    await recorder().insert('deltas', ['venue_c\tPROBE\t1000\t7\tbid\t1.5\t-2\t1004\n']);
    await recorder().insert('snapshots', ['venue_c\tPROBE\t1000\task\t1.6\t3\t1002\n']);
    await recorder().insert('gaps', ['venue_c\tPROBE\t10\t20\tstall\t30\tbook\n']);
    const probe = (key: Parameters<RecorderStore['probeBatch']>[0]) => recorder().probeBatch(key);
    expect(await probe({ table: 'deltas', exchange: 'venue_c', ticker: 'PROBE', ts: 1000, sequence: 7 })).toBe(true);
    expect(await probe({ table: 'deltas', exchange: 'venue_c', ticker: 'PROBE', ts: 1000, sequence: 8 })).toBe(false);
    expect(await probe({ table: 'snapshots', exchange: 'venue_c', ticker: 'PROBE', ts: 1000 })).toBe(true);
    expect(await probe({ table: 'snapshots', exchange: 'venue_b', ticker: 'PROBE', ts: 1000 })).toBe(false);
    expect(await probe({ table: 'gaps', ...gap })).toBe(true);
    expect(await probe({ table: 'gaps', ...gap, reason: 'disconnect' })).toBe(false);
  });

  it('read where each ticker’s stored series ends (snapshots, deltas and gaps) and its last sequence', async () => {
    await recorder().insert('deltas', [
      'venue_b\tEND-1\t5000\t41\tbid\t0.5\t1\t5001\n',
      'venue_b\tEND-1\t5000\t42\task\t0.6\t1\t5001\n',
      'venue_b\tEND-1\t4000\t40\tbid\t0.5\t1\t4003\n',
    ]);
    await recorder().insert('snapshots', ['venue_b\tEND-2\t7000\tbid\t0.5\t1\t7000\n']);
    await recorder().insert('gaps', ['venue_b\tEND-2\t7000\t9000\tdisconnect\t9001\ttrades\n']);
    const stored = await recorder().storedTickers('venue_b', ['END-1', 'END-2', 'END-3']);
    expect(Object.fromEntries(stored)).toEqual({
      'END-1': { lastTs: 5000, sequence: 42, bookTs: 5000, tradesTs: -1, firstTs: 4000, tradesAtEnd: [] },
      // A snapshot, then a trades gap (not the book's).
      'END-2': { lastTs: 9000, sequence: 0, bookTs: 7000, tradesTs: 9000, firstTs: 7000, tradesAtEnd: [] },
    });
  });

  it('read where each ticker’s landed book ends: its last ts, sequence, last trade and the deltas at its last ms', async () => {
    await recorder().insert('deltas', [
      // Two deltas at the last ms (landed in another order than their sequence), one before.
      'venue_c\tLAND-1\t5000\t42\task\t0.6000\t-1.25\t5001\n',
      'venue_c\tLAND-1\t5000\t41\tbid\t0.5\t10\t5001\n',
      'venue_c\tLAND-1\t4000\t40\tbid\t0.5\t1\t4003\n',
      // A cadence snapshot's ms with deltas at it.
      'venue_c\tLAND-3\t9000\t7\tbid\t100\t0.00000001\t9000\n',
      'venue_c\tLAND-3\t8000\t6\tbid\t100\t2\t8000\n',
    ]);
    await recorder().insert('snapshots', [
      'venue_c\tLAND-1\t3000\tbid\t0.5\t1\t3000\n',
      // Only a gap and the snapshot that closes it.
      'venue_c\tLAND-2\t8000\tbid\t0.5\t1\t8000\n',
      'venue_c\tLAND-3\t9000\tbid\t100\t2.00000001\t9000\n',
    ]);
    // A trade after the book's last row; a trades gap after it (neither is the book).
    await recorder().insert('trades', ['venue_c\tLAND-1\t5200\t43\tt-1\t0.6\t1\tbuy\tbuy\t5201\n']);
    await recorder().insert('gaps', [
      'venue_c\tLAND-2\t6000\t8000\thandover\t8001\tbook\n',
      'venue_c\tLAND-2\t6000\t9500\tbackfill_failed\t9501\ttrades\n',
    ]);
    const tickers = ['LAND-1', 'LAND-2', 'LAND-3', 'LAND-4'];
    const landed = await recorder().landedEnds('venue_c', tickers);
    expect(Object.fromEntries(landed)).toEqual({
      'LAND-1': {
        lastTs: 5000,
        sequence: 43,
        lastTradeTs: 5200,
        deltasAtLast: [
          { side: 'bid', price: '0.5', quantityDelta: '10', sequence: 41 },
          { side: 'ask', price: '0.6', quantityDelta: '-1.25', sequence: 42 },
        ],
      },
      'LAND-2': { lastTs: 8000, sequence: 0, lastTradeTs: -1, deltasAtLast: [] },
      'LAND-3': {
        lastTs: 9000,
        sequence: 7,
        lastTradeTs: -1,
        deltasAtLast: [{ side: 'bid', price: '100', quantityDelta: '0.00000001', sequence: 7 }],
      },
    });
    // The start-up view of the same ends: every table's last ts (trades and trades gaps too).
    expect(Object.fromEntries(await recorder().storedTickers('venue_c', tickers))).toEqual({
      'LAND-1': {
        lastTs: 5200,
        sequence: 43,
        bookTs: 5000,
        tradesTs: 5200,
        firstTs: 3000,
        tradesAtEnd: [{ id: 't-1', ts: 5200 }],
      },
      // Its first row: the gaps' from_ts.
      'LAND-2': { lastTs: 9500, sequence: 0, bookTs: 8000, tradesTs: 9500, firstTs: 6000, tradesAtEnd: [] },
      'LAND-3': { lastTs: 9000, sequence: 7, bookTs: 9000, tradesTs: -1, firstTs: 8000, tradesAtEnd: [] },
    });
    // The stored trades up to `tradesBackMs` before the last (what a restarted recorder's trade window knows).
    await recorder().insert('trades', [
      'venue_c\tLAND-1\t4300\t44\tt-0\t0.6\t1\tbuy\tbuy\t4301\n',
      'venue_c\tLAND-1\t4100\t45\tt-old\t0.6\t1\tbuy\tbuy\t4101\n',
    ]);
    const near = await recorder().storedTickers('venue_c', ['LAND-1'], undefined, { tradesBackMs: 1000 });
    expect(near.get('LAND-1')?.tradesAtEnd.sort((a, b) => a.ts - b.ts)).toEqual([
      { id: 't-0', ts: 4300 },
      { id: 't-1', ts: 5200 },
    ]);
    // Another exchange's rows of the same names are not read.
    expect((await recorder().landedEnds('venue_b', tickers)).size).toBe(0);
  });

  it('read the book a ticker’s landed rows end with: the newest snapshot and the deltas from its ms, unless a book gap follows', async () => {
    await recorder().insert('snapshots', [
      'venue_c\tBOOK-1\t1000\tbid\t0.4\t9\t1000\n',
      'venue_c\tBOOK-1\t3000\tbid\t0.5\t1.50\t3000\n',
      'venue_c\tBOOK-1\t3000\task\t0.6\t2\t3000\n',
      'venue_c\tBOOK-2\t3000\tbid\t0.5\t1\t3000\n',
      'venue_c\tBOOK-4\t3000\tbid\t0.5\t1\t3000\n',
    ]);
    await recorder().insert('deltas', [
      // Before the snapshot (in it already), at its ms (after it), after it, and after `at`.
      'venue_c\tBOOK-1\t2000\t1\tbid\t0.4\t-9\t2000\n',
      'venue_c\tBOOK-1\t3000\t3\task\t0.6\t-2\t3000\n',
      'venue_c\tBOOK-1\t3000\t2\tbid\t0.5\t0.5\t3000\n',
      'venue_c\tBOOK-1\t4000\t4\tbid\t0.55\t3\t4000\n',
      'venue_c\tBOOK-1\t6000\t5\tbid\t0.55\t-3\t6000\n',
    ]);
    await recorder().insert('gaps', [
      'venue_c\tBOOK-2\t3500\t4500\tdisconnect\t4501\tbook\n',
      'venue_c\tBOOK-4\t3500\t4500\tbackfill_failed\t4501\ttrades\n',
    ]);
    expect(await recorder().landedBook('venue_c', 'BOOK-1', 5000)).toEqual({
      // In (side, price) order: bids first.
      levels: [
        { side: 'bid', price: '0.5', quantity: '1.5' },
        { side: 'ask', price: '0.6', quantity: '2' },
      ],
      deltas: [
        { side: 'bid', price: '0.5', quantityDelta: '0.5' },
        { side: 'ask', price: '0.6', quantityDelta: '-2' },
        { side: 'bid', price: '0.55', quantityDelta: '3' },
      ],
    });
    // Before the newer snapshot: the older one.
    expect(await recorder().landedBook('venue_c', 'BOOK-1', 2500)).toEqual({
      levels: [{ side: 'bid', price: '0.4', quantity: '9' }],
      deltas: [{ side: 'bid', price: '0.4', quantityDelta: '-9' }],
    });
    // A book gap after the snapshot: the book is not known; a trades gap leaves it known; no snapshot: not known.
    expect(await recorder().landedBook('venue_c', 'BOOK-2', 5000)).toBeUndefined();
    expect(await recorder().landedBook('venue_c', 'BOOK-4', 5000)).toEqual({
      levels: [{ side: 'bid', price: '0.5', quantity: '1' }],
      deltas: [],
    });
    expect(await recorder().landedBook('venue_c', 'BOOK-3', 5000)).toBeUndefined();
    expect(await recorder().landedBook('venue_b', 'BOOK-1', 5000)).toBeUndefined();
  });

  it('record hand-overs and read those from or to a term, in (exchange, ticker, ts) order', async () => {
    const term = 1_000_000 + Math.floor(Math.random() * 1_000_000);
    const row = (ticker: string, ts: number, from: number, to: number, kind: 'release' | 'takeover' | 'offer') => ({
      exchange: 'venue_b' as const,
      ticker,
      ts,
      from_term: from,
      to_term: to,
      kind,
      detected_at: ts + 5,
    });
    await recorder().insertHandovers([
      row('HO-B', 2000, term, term + 1, 'takeover'),
      row('HO-A', 3000, term + 1, term, 'offer'),
      row('HO-A', 1000, term, term + 1, 'release'),
      row('HO-C', 1000, term + 2, term + 3, 'takeover'),
    ]);
    expect(await recorder().handoversOf(term)).toEqual([
      row('HO-A', 1000, term, term + 1, 'release'),
      row('HO-A', 3000, term + 1, term, 'offer'),
      row('HO-B', 2000, term, term + 1, 'takeover'),
    ]);
    expect(await recorder().handoversOf(term + 3)).toEqual([row('HO-C', 1000, term + 2, term + 3, 'takeover')]);
    expect(await recorder().handoversOf(term + 4)).toEqual([]);
    await expect(
      recorder().insertHandovers([{ ...row('HO-D', 1, term, term + 1, 'takeover'), kind: 'other' as 'offer' }]),
    ).rejects.toThrow(/bad kind/);
    expect(await recorder().handoversOf(term + 10)).toEqual([]);
  });

  it('end every running query of a writer’s term, and none of another term or of no term', async () => {
    // Terms no other test on the shared server uses.
    const term = 9_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
    const slow = sql`SELECT sleepEachRow(0.5) FROM numbers(1000)`;
    const start = (queryId: string) =>
      ch.data
        .query({
          query: slow.text,
          query_id: queryId,
          format: 'TabSeparated',
          clickhouse_settings: { max_block_size: '1' },
        })
        .then((rs) => rs.text());
    const ids = {
      mine: recorderQueryId(term, 'deltas'),
      mineToo: recorderQueryId(term, 'snapshots'),
      other: recorderQueryId(term * 10, 'deltas'),
      solo: recorderQueryId(0, 'deltas'),
    };
    expect(ids.mine).toMatch(new RegExp(`^rec-${term}-deltas-[0-9a-f-]{36}$`));
    expect(ids.solo).toMatch(/^dg-insert-deltas-[0-9a-f-]{36}$/);
    const runs = Object.fromEntries(
      Object.entries(ids).map(([k, id]) => [
        k,
        start(id).then(
          () => 'ended',
          () => 'failed',
        ),
      ]),
    );
    const running = async () =>
      (
        await rows<{ query_id: string }>(
          sql`SELECT query_id FROM system.processes WHERE query_id IN (${join(
            Object.values(ids).map((id) => lit.queryId(id)),
            ', ',
          )})`,
        )
      ).map((r) => r.query_id);
    try {
      await waitFor(async () => (await running()).length === 4, { what: 'the four queries running' });
      await recorder().killWriter(term);
      // SYNC: they have ended when it returns.
      expect((await running()).sort()).toEqual([ids.other, ids.solo].sort());
      expect(await runs.mine).toBe('failed');
      expect(await runs.mineToo).toBe('failed');
    } finally {
      for (const id of Object.values(ids)) await ch.kill(id);
      await Promise.all(Object.values(runs));
    }
  });

  it('insert lines of row format 1 (a spool of a recorder older than migration 2): received_ts reads their ts', async () => {
    await recorder().insert('deltas', ['venue_b\tFMT-1\t9000\t1\tbid\t0.5\t1\n'], { rowFormat: 1 });
    await recorder().insert('snapshots', ['venue_b\tFMT-1\t9000\tbid\t0.5\t1\n'], { rowFormat: 1 });
    await recorder().insert('deltas', ['venue_b\tFMT-1\t9001\t2\tbid\t0.5\t1\t9017\n']);
    const got = await rows<{ ts: string; received_ts: string }>(
      sql`SELECT ts, received_ts FROM ${ch.db}.deltas WHERE ticker = ${lit.ticker('FMT-1')} ORDER BY ts
UNION ALL SELECT ts, received_ts FROM ${ch.db}.snapshots WHERE ticker = ${lit.ticker('FMT-1')}`,
    );
    expect(
      got
        .map((r) => [Number(r.ts), Number(r.received_ts)])
        .sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number)),
    ).toEqual([
      [9000, 9000],
      [9000, 9000],
      [9001, 9017],
    ]);
  });

  it('make sure a query has ended (one that never ran has)', async () => {
    await expect(recorder().ensureQueryEnded('dg-insert-deltas-never-sent', 2000)).resolves.toBeUndefined();
  });

  it('see the schema version of a database, and none where there is no schema', async () => {
    expect(await schemaVersion(db.store)).toBe(MIGRATIONS.length);
    const empty = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('none') });
    try {
      expect(await schemaVersion(empty)).toBe(-1);
    } finally {
      await empty.close();
    }
  });
});

describe('migration 5: Polymarket CLOB and Coinbase', () => {
  it("extends every table's exchange Enum8 (migration 4's verifications too) of a database of migration 3, idempotently, and their rows go through", async () => {
    const old = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('mig5') });
    const raw = connectionOf(old);
    try {
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 3) })).toEqual({
        applied: [1, 2, 3],
        version: 3,
      });
      const five = { migrations: MIGRATIONS.slice(0, 5) };
      expect(await runMigrations(old, five)).toEqual({ applied: [4, 5], version: 5 });
      expect(await runMigrations(old, five)).toEqual({ applied: [], version: 5 });
      const token = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
      await insertDeltaRows(old, [
        {
          exchange: 'venue_a_clob',
          ticker: token,
          ts: 1000,
          sequence: 1,
          side: 'bid',
          price: '0.5',
          quantity_delta: '7',
        },
        {
          exchange: 'venue_d',
          ticker: 'BTC-USD',
          ts: 1000,
          sequence: 1,
          side: 'ask',
          price: '90000.01',
          quantity_delta: '0.5',
        },
      ]);
      await insertTradeRows(old, [
        {
          exchange: 'venue_d',
          ticker: 'BTC-USD',
          ts: 1001,
          sequence: 2,
          trade_id: '86327327',
          price: '90000.01',
          size: '0.06469797',
          side: 'buy',
          venue_side: 'sell',
          received_ts: 1002,
        },
      ]);
      await insertGapRows(old, [
        { exchange: 'venue_a_clob', ticker: token, from_ts: 900, to_ts: 950, reason: 'divergence', detected_at: 960 },
      ]);
      const rows = async (query: Sql) =>
        (await raw.data.query({ query: query.text, format: 'JSONEachRow' })).json<Record<string, string>>();
      expect(await rows(sql`SELECT toString(exchange) AS e, ticker FROM ${raw.db}.deltas ORDER BY exchange`)).toEqual([
        { e: 'venue_a_clob', ticker: token },
        { e: 'venue_d', ticker: 'BTC-USD' },
      ]);
      expect(await rows(sql`SELECT toString(exchange) AS e FROM ${raw.db}.trades`)).toEqual([{ e: 'venue_d' }]);
      expect(await rows(sql`SELECT toString(exchange) AS e, reason FROM ${raw.db}.gaps`)).toEqual([
        { e: 'venue_a_clob', reason: 'divergence' },
      ]);
      const types = await rows(
        sql`SELECT table, type FROM system.columns WHERE database = ${lit.name(raw.database)} AND name = 'exchange' ORDER BY table`,
      );
      // Every table (the catalogue views keep the type they were created with; they only pass rows on).
      const tables = types.filter((t) => !(t.table as string).endsWith('_mv'));
      expect(tables.length).toBeGreaterThanOrEqual(6);
      for (const t of tables) expect([t.table, t.type]).toEqual([t.table, expect.stringContaining("'venue_d' = 5")]);
    } finally {
      await raw.data.command({ query: sql`DROP DATABASE IF EXISTS ${raw.db}`.text });
      await old.close();
    }
  });
});

describe('migration 6: hand-overs', () => {
  it('adds the handovers table to a database of migration 5, with every exchange, and its rows go through', async () => {
    const old = new HistoryStore({ url: testClickHouseUrl(), database: uniqueName('mig6') });
    const raw = connectionOf(old);
    try {
      expect(await runMigrations(old, { migrations: MIGRATIONS.slice(0, 5) })).toEqual({
        applied: [1, 2, 3, 4, 5],
        version: 5,
      });
      expect(await runMigrations(old)).toEqual({ applied: [6], version: 6 });
      expect(await runMigrations(old)).toEqual({ applied: [], version: 6 });
      const types = await (
        await raw.data.query({
          query:
            sql`SELECT name, type FROM system.columns WHERE database = ${lit.name(raw.database)} AND table = 'handovers'
ORDER BY name`.text,
          format: 'JSONEachRow',
        })
      ).json<{ name: string; type: string }>();
      const type = Object.fromEntries(types.map((t) => [t.name, t.type]));
      expect(type).toEqual({
        exchange: expect.stringContaining("'venue_d' = 5"),
        ticker: 'String',
        ts: 'Int64',
        from_term: 'UInt64',
        to_term: 'UInt64',
        kind: "Enum8('release' = 1, 'takeover' = 2, 'offer' = 3)",
        detected_at: 'Int64',
      });
      const handover = {
        exchange: 'venue_d' as const,
        ticker: 'BTC-USD',
        ts: 1000,
        from_term: 2 ** 40,
        to_term: 2 ** 40 + 1,
        kind: 'takeover' as const,
        detected_at: 1001,
      };
      await new RecorderStore(old).insertHandovers([handover]);
      expect(await new RecorderStore(old).handoversOf(2 ** 40 + 1)).toEqual([handover]);
    } finally {
      await raw.data.command({ query: sql`DROP DATABASE IF EXISTS ${raw.db}`.text });
      await old.close();
    }
  });
});
