/**
 * Cluster mode on the local cluster of `./dev test --cluster` (2 shards × 2 replicas of the test ClickHouse build and a
 * ZooKeeper, infra/local/clickhouse-cluster.sh): the migrations on an empty cluster and again, a migration that adds
 * a column (as a later migration will), where rows go, and the shards' deduplication of a batch sent again.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { testCluster, uniqueName, waitFor } from '@depthgate/test-utils';
import { insertDeltaRows, insertVerificationRows, type DeltaRow } from './inserts';
import { lit, sql } from './literals';
import {
  MIGRATIONS,
  REQUIRED_SCHEMA_VERSION,
  enumMembers,
  exchangesMigration,
  runMigrations,
  type Migration,
} from './migrations';
import { OrderBookQueries } from './queries/order-books';
import { HistoryStore, connectionOf } from './store';
import { ClusterNodeView, copyOlderRows, createTestDatabase, type TestDatabase } from './testing';

jest.setTimeout(120_000);

const cluster = testCluster();
const entry = cluster.node('s1r1');

function deltas(tickers: string[], perTicker: number, from = Date.UTC(2026, 2, 10)): DeltaRow[] {
  return tickers.flatMap((ticker) =>
    Array.from({ length: perTicker }, (_, i) => ({
      exchange: 'venue_b' as ExchangeKey,
      ticker,
      ts: from + i * 1000,
      sequence: i + 1,
      side: i % 2 ? ('ask' as const) : ('bid' as const),
      price: '0.5100',
      quantity_delta: '-12.50',
    })),
  );
}

async function views<T>(database: string, fn: (view: ClusterNodeView, name: string) => Promise<T>) {
  const out: Record<string, T> = {};
  for (const node of cluster.nodes) {
    const view = new ClusterNodeView(node.url, database);
    try {
      out[node.name] = await fn(view, node.name);
    } finally {
      await view.close();
    }
  }
  return out;
}

const syncAll = (database: string) => views(database, (v) => v.sync());
/** Migration 1 alone: the cluster as a build before migration 2 left it. */
const FIRST = MIGRATIONS.slice(0, 1);

describe('migrations on a cluster', () => {
  const database = uniqueName('clmig');
  const store = new HistoryStore({ url: entry.url, database, cluster: cluster.name });
  const elsewhere = new HistoryStore({ url: cluster.node('s2r2').url, database, cluster: cluster.name });

  afterAll(async () => {
    await connectionOf(store)
      .data.command({
        query: sql`DROP DATABASE IF EXISTS ${lit.identifier(database)} ON CLUSTER ${lit.cluster(cluster.name)}`.text,
      })
      .catch(() => undefined);
    await Promise.all([store.close(), elsewhere.close()]);
  });

  it('create every table on every server: replicated per shard, Distributed over them, views per shard', async () => {
    expect(await runMigrations(store, { migrations: FIRST })).toEqual({ applied: [1], version: 1 });
    const tables = await views(database, (v) => v.tables());
    for (const node of cluster.nodes) {
      expect(tables[node.name]).toEqual({
        schema_migrations: 'ReplicatedMergeTree',
        snapshots: 'Distributed',
        snapshots_local: 'ReplicatedMergeTree',
        deltas: 'Distributed',
        deltas_local: 'ReplicatedMergeTree',
        gaps: 'Distributed',
        gaps_local: 'ReplicatedMergeTree',
        ticker_catalogue: 'Distributed',
        ticker_catalogue_local: 'ReplicatedAggregatingMergeTree',
        snapshots_catalogue_mv: 'MaterializedView',
        deltas_catalogue_mv: 'MaterializedView',
      });
    }
  });

  it('run again, from any server, apply nothing: the record of migrations is replicated to every server', async () => {
    await waitFor(async () => (await runMigrations(elsewhere, { migrations: FIRST })).version === 1, {
      timeoutMs: 20_000,
    });
    expect(await runMigrations(elsewhere, { migrations: FIRST })).toEqual({ applied: [], version: 1 });
    expect(await runMigrations(store, { migrations: FIRST })).toEqual({ applied: [], version: 1 });
  });

  it('take migration 2 (received_ts) on a migrated cluster: a column on every shard and Distributed table, idempotently', async () => {
    const migrations = MIGRATIONS.slice(0, 2);
    expect(migrations.map((m) => m.version)).toEqual([1, 2]);
    expect(await runMigrations(store, { migrations })).toEqual({ applied: [2], version: 2 });
    await insertDeltaRows(store, deltas(['KXRECV-1'], 3), { rowFormat: 2 }); // as a recorder of that schema writes
    const columns = await views(database, (v) => v.column('received_ts'));
    for (const node of cluster.nodes) {
      expect(columns[node.name]).toEqual(
        ['deltas', 'deltas_local', 'snapshots', 'snapshots_local'].map((table) => ({
          table,
          type: 'Int64',
          default_expression: 'ts',
        })),
      );
    }
    await waitFor(async () => (await runMigrations(elsewhere, { migrations })).version === 2, { timeoutMs: 20_000 });
    expect(await runMigrations(elsewhere, { migrations })).toEqual({ applied: [], version: 2 });
  });

  it('take migration 3 (trades): a replicated trades table per shard and its Distributed table, its catalogue view, gaps.stream', async () => {
    expect(await runMigrations(store, { migrations: MIGRATIONS.slice(0, 3) })).toEqual({ applied: [3], version: 3 });
    const tables = await views(database, (v) => v.tables());
    const streams = await views(database, (v) => v.column('stream'));
    for (const node of cluster.nodes) {
      expect(tables[node.name]).toMatchObject({
        trades: 'Distributed',
        trades_local: 'ReplicatedReplacingMergeTree',
        trades_catalogue_mv: 'MaterializedView',
      });
      // The default reads `CAST('book', 'Enum8(…)')` on the server: what matters is the type and that it is book.
      expect((streams[node.name] ?? []).map((c) => [c.table, c.type, c.default_expression.includes("'book'")])).toEqual(
        ['gaps', 'gaps_local'].map((table) => [table, "Enum8('book' = 1, 'trades' = 2)", true]),
      );
    }
  });

  it('take migration 4 (venue sequences, verification points): venue_seq on every shard and Distributed table, a replicated verifications table and its Distributed table', async () => {
    expect(await runMigrations(store, { migrations: MIGRATIONS.slice(0, 4) })).toEqual({ applied: [4], version: 4 });
    const tables = await views(database, (v) => v.tables());
    const venueSeqs = await views(database, (v) => v.column('venue_seq'));
    for (const node of cluster.nodes) {
      expect(tables[node.name]).toMatchObject({
        verifications: 'Distributed',
        verifications_local: 'ReplicatedMergeTree',
      });
      expect((venueSeqs[node.name] ?? []).map((c) => [c.table, c.type, c.default_expression])).toEqual(
        ['deltas', 'deltas_local', 'snapshots', 'snapshots_local', 'trades', 'trades_local'].map((table) => [
          table,
          'String',
          "''",
        ]),
      );
    }
    // A verification point written through the Distributed table is read back around a moment from another server.
    await insertVerificationRows(store, [
      { exchange: 'venue_b', ticker: 'KXVER-1', ts: 5000, method: 'rest_book', detected_at: 5100 },
    ]);
    await syncAll(database);
    const q = new OrderBookQueries(elsewhere);
    const scope = elsewhere.scope(10_000);
    try {
      expect(await q.verifiedAround(scope, 'venue_b', 'KXVER-1', 0, 6000)).toEqual({
        before: { ts: 5000, method: 'rest_book' },
        after: null,
      });
    } finally {
      scope.dispose();
    }
    await waitFor(async () => (await runMigrations(elsewhere, { migrations: MIGRATIONS.slice(0, 4) })).version === 4, {
      timeoutMs: 20_000,
    });
    expect(await runMigrations(elsewhere, { migrations: MIGRATIONS.slice(0, 4) })).toEqual({ applied: [], version: 4 });
  });

  it('take an exchange’s migration line: every shard’s table and every Distributed table store it, idempotently', async () => {
    const migrations = [
      ...MIGRATIONS,
      exchangesMigration(REQUIRED_SCHEMA_VERSION + 1, ['venue_f' as ExchangeKey], { venue_f: 99 }),
    ];
    const line = REQUIRED_SCHEMA_VERSION + 1;
    // The product's migrations after 4 (the test before took it; its exchange lines among them) come first.
    const after4 = MIGRATIONS.filter((m) => m.version > 4).map((m) => m.version);
    expect(await runMigrations(store, { migrations })).toEqual({ applied: [...after4, line], version: line });
    const types = await views(database, (v) => v.column('exchange'));
    for (const node of cluster.nodes) {
      for (const { table, type } of types[node.name] ?? []) {
        if (table.endsWith('_mv')) continue; // a view keeps the type it was created with: it only passes rows on
        expect([table, enumMembers(type).get('venue_f')]).toEqual([table, 99]);
      }
    }
    await insertDeltaRows(
      store,
      deltas(['FIX-1'], 3).map((r) => ({ ...r, exchange: 'venue_f' as ExchangeKey })),
    );
    await syncAll(database);
    const byNode = await views(database, (v) => v.localTickers('deltas'));
    expect(Object.values(byNode).filter((tickers) => tickers.includes('FIX-1'))).toHaveLength(2); // one shard, 2 replicas
    await waitFor(async () => (await runMigrations(elsewhere, { migrations })).version === line, {
      timeoutMs: 20_000,
    });
    expect(await runMigrations(elsewhere, { migrations })).toEqual({ applied: [], version: line });
  });

  it('refuse a raw SQL step on a cluster, naming the migration', async () => {
    const raw: Migration = {
      version: 9,
      name: 'raw step',
      steps: (db) => [sql`ALTER TABLE ${db}.deltas DELETE WHERE 1`],
    };
    await expect(runMigrations(store, { migrations: [...MIGRATIONS, raw] })).rejects.toThrow(
      /migration 9 \(raw step\) failed: a raw SQL step cannot run on a cluster/,
    );
  });
});

describe('inserts through the Distributed tables', () => {
  let db: TestDatabase;
  let single: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ url: entry.url, database: uniqueName('clins'), cluster: cluster.name });
    single = await createTestDatabase({ url: entry.url, database: uniqueName('clone') });
  });

  afterAll(async () => {
    await Promise.all([db.drop(), single.drop()]);
    await Promise.allSettled([db.close(), single.close()]);
  });

  const tickers = Array.from({ length: 12 }, (_, i) => `KXSHARD-${i}`);

  it("keep one ticker's rows on one shard, and use both shards", async () => {
    await insertDeltaRows(db.store, deltas(tickers, 50));
    await syncAll(db.database);
    const byNode = await views(db.database, (v) => v.localTickers('deltas'));
    const shard1 = byNode.s1r1 ?? [];
    const shard2 = byNode.s2r1 ?? [];
    expect(byNode.s1r2).toEqual(shard1);
    expect(byNode.s2r2).toEqual(shard2);
    expect(shard1.length).toBeGreaterThan(0);
    expect(shard2.length).toBeGreaterThan(0);
    expect([...shard1, ...shard2].sort()).toEqual([...tickers].sort());
    expect(await db.rowCount('deltas')).toBe(600);
  });

  it('store a batch sent twice once, and count it once in the catalogue (one server: twice)', async () => {
    const batch = deltas(['KXTWICE-A', 'KXTWICE-B', 'KXTWICE-C', 'KXTWICE-D'], 100, Date.UTC(2026, 2, 11));
    for (const target of [db, single]) {
      await insertDeltaRows(target.store, batch);
      await insertDeltaRows(target.store, batch);
    }
    const scope = db.store.scope(10_000);
    const count = async (t: TestDatabase) =>
      (await new OrderBookQueries(t.store).catalogue(scope, 'venue_b', 'KXTWICE-A')).map((s) => s.rows);
    expect(await count(db)).toEqual([100]);
    expect(await count(single)).toEqual([200]);
    expect(await db.distinctKeys('deltas')).toEqual({ rows: 1000, keys: 1000 });
    scope.dispose();
  });

  it('complete a batch that reached only one shard before failing, without doubling that shard', async () => {
    const batch = deltas(
      tickers.map((t) => `${t}-P`),
      20,
      Date.UTC(2026, 2, 12),
    );
    // The first shard's part of the batch, as the Distributed table would have sent it, lands there alone.
    const view = new ClusterNodeView(entry.url, db.database);
    const firstShard = new Set<string>();
    for (const ticker of new Set(batch.map((r) => r.ticker))) {
      if ((await view.shardOf('venue_b', ticker, 2)) === 1) firstShard.add(ticker);
    }
    const part = batch.filter((r) => firstShard.has(r.ticker));
    await view.insertLocalDeltas(part);
    await view.close();
    expect(part.length).toBeGreaterThan(0);
    expect(part.length).toBeLessThan(batch.length);
    await insertDeltaRows(db.store, batch);
    expect(await db.distinctKeys('deltas')).toEqual({ rows: 1000 + batch.length, keys: 1000 + batch.length });
  });
});

describe('moving from one server to the cluster (docs/operations.md)', () => {
  let old: TestDatabase;
  let db: TestDatabase;

  beforeAll(async () => {
    old = await createTestDatabase({ url: entry.url, database: uniqueName('clold') });
    db = await createTestDatabase({ url: entry.url, database: uniqueName('clnew'), cluster: cluster.name });
  });

  afterAll(async () => {
    await Promise.all([old.drop(), db.drop()]);
    await Promise.allSettled([old.close(), db.close()]);
  });

  it("copies every row below the new recorder's first row, per ticker, and the result equals the old server", async () => {
    const tickers = ['KXMOVE-A', 'KXMOVE-B', 'KXMOVE-C', 'KXMOVE-D'];
    const from = Date.UTC(2026, 2, 31, 23, 0, 0);
    const rows = deltas(tickers, 400, from);
    await insertDeltaRows(old.store, rows);
    // The cluster's own recorder began at a different moment for each ticker (and not at all for one of them).
    const cuts = new Map(tickers.slice(0, 3).map((t, i) => [t, from + (100 + 100 * i) * 1000]));
    await insertDeltaRows(
      db.store,
      rows.filter((r) => cuts.has(r.ticker) && r.ts >= (cuts.get(r.ticker) as number)),
    );
    await copyOlderRows(db.store, 'deltas', { address: entry.native, database: old.database });
    expect(await db.distinctKeys('deltas')).toEqual(await old.distinctKeys('deltas'));
    expect(await db.rowCount('deltas')).toBe(rows.length);
  });
});
