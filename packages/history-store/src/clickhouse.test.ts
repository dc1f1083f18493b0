import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { classifyClickHouseError, serverErrorCode } from './errors';
import {
  CURRENT_ROW_FORMAT,
  INSERT_COLUMNS,
  LATEST_ROW_FORMAT,
  encodeDeltaRow,
  encodeGapRow,
  encodeHandoverRow,
  encodeSnapshotRow,
  encodeTradeRow,
  encodeVerificationRow,
  insertColumns,
  recorderQueryId,
  RowFormatError,
} from './inserts';
import { MIGRATIONS, migrationChecksum, storedExchanges, type Migration } from './migrations';
import {
  conditionalSettings,
  createConnection,
  KILL_BATCH_IDS,
  killInBatches,
  loggableClickHouseUrl,
  newQueryId,
  parseClickHouseUrl,
} from './connection';
import { Layout } from './layout';
import { RecorderStore } from './queries/recorder';
import { HistoryStore } from './store';
import { LiteralError, lit, sql } from './literals';

describe('classifyClickHouseError', () => {
  it('reads codes from 18.16 and current messages', () => {
    expect(serverErrorCode('Code: 159, e.displayText() = DB::Exception: Timeout exceeded')).toBe(159);
    expect(serverErrorCode('Code: 159. DB::Exception: Timeout exceeded. (TIMEOUT_EXCEEDED)')).toBe(159);
    expect(serverErrorCode('no code')).toBeUndefined();
  });

  it.each([
    [new Error('Code: 159, e.displayText() = DB::Exception: Timeout exceeded'), 'timeout'],
    [new Error('Code: 160. DB::Exception: Estimated query execution time is too slow'), 'timeout'],
    [new Error('Code: 394. DB::Exception: Query was cancelled'), 'cancelled'],
    [new Error('Code: 202. DB::Exception: Too many simultaneous queries'), 'unavailable'],
    [new Error('Code: 516. DB::Exception: depthgate: Authentication failed'), 'unavailable'],
    [new Error('Code: 60. DB::Exception: Table depthgate.snapshots does not exist'), 'error'],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7123'), { code: 'ECONNREFUSED' }), 'unavailable'],
    [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'unavailable'],
    [new Error('socket hang up'), 'unavailable'],
    [new Error('Timeout error.'), 'unavailable'],
    [new Error('The user aborted a request.'), 'cancelled'],
    [Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }), 'cancelled'],
    [new Error('something else'), 'error'],
    ['a string', 'error'],
  ])('%s → %s', (err, kind) => {
    expect(classifyClickHouseError(err).kind).toBe(kind);
  });
});

describe('row encoders', () => {
  it('encode valid rows as TabSeparated lines', () => {
    expect(
      encodeSnapshotRow({
        exchange: 'venue_b',
        ticker: 'KXBTCD-26MAR07-T100000',
        ts: 1774533601193,
        side: 'bid',
        price: '0.4800',
        quantity: '150.00',
      }),
    ).toBe('venue_b\tKXBTCD-26MAR07-T100000\t1774533601193\tbid\t0.4800\t150.00\t1774533601193\t\n');
    expect(
      encodeDeltaRow({
        exchange: 'venue_c',
        ticker: 'BTCUSD',
        ts: 1774533601193,
        sequence: 18446744073709551615n,
        side: 'ask',
        price: '90123.45',
        quantity_delta: '-0.00121425',
        received_ts: 1774533601215,
      }),
    ).toBe('venue_c\tBTCUSD\t1774533601193\t18446744073709551615\task\t90123.45\t-0.00121425\t1774533601215\t\n');
    expect(
      encodeGapRow({
        exchange: 'venue_a_us',
        ticker: 'fed-cuts',
        from_ts: 1,
        to_ts: 2,
        reason: 'seed_end',
        detected_at: 3,
      }),
    ).toBe('venue_a_us\tfed-cuts\t1\t2\tseed_end\t3\tbook\n');
  });

  const snapshot = {
    exchange: 'venue_b' as const,
    ticker: 'KX',
    ts: 1,
    side: 'bid' as const,
    price: '0.48',
    quantity: '1',
  };
  it.each([
    { exchange: 'venue-b' },
    { exchange: "venue_b'" },
    { ticker: 'KX\tinjected' },
    { ticker: 'KX\nvenue_b' },
    { ticker: '' },
    { ts: 1.5 },
    { ts: -1 },
    { ts: Number.MAX_SAFE_INTEGER + 2 },
    { side: 'buy' },
    { price: '1e3' },
    { price: '.5' },
    { price: '0.5000000000000000001' },
    { price: '123456789012345678901' },
    { price: 0.5 },
    { price: '0,5' },
    { quantity: '-1' },
    { quantity: 'NaN' },
    { received_ts: -5 },
    { received_ts: 1.5 },
    { venue_seq: 'a\tb' },
    { venue_seq: 'a b' },
    { venue_seq: 'a,b' },
    { venue_seq: 'a"b' },
    { venue_seq: 'x'.repeat(49) },
    { venue_seq: 7 },
  ])('rejects a snapshot row with %j', (override) => {
    expect(() => encodeSnapshotRow({ ...snapshot, ...(override as object) })).toThrow(RowFormatError);
  });

  it('encode trades with the venue’s id and side kept, the taker’s side normalised', () => {
    const trade = {
      exchange: 'venue_b' as const,
      ticker: 'KXBTCD-26MAR07-T100000',
      ts: 1774533601193,
      sequence: 1774533601193000,
      trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
      price: '0.3600',
      size: '136.00',
      side: 'sell' as const,
      venue_side: 'no',
      received_ts: 1774533601200,
    };
    expect(encodeTradeRow(trade)).toBe(
      'venue_b\tKXBTCD-26MAR07-T100000\t1774533601193\t1774533601193000\td91bc706-ee49-470d-82d8-11418bda6fed\t0.3600\t136.00\tsell\tno\t1774533601200\t\n',
    );
    expect(encodeTradeRow({ ...trade, venue_side: '', received_ts: undefined })).toMatch(
      /\tsell\t\t1774533601193\t\n$/,
    );
    expect(encodeTradeRow({ ...trade, venue_seq: '88213' })).toMatch(/\tno\t1774533601200\t88213\n$/);
    for (const bad of [
      { trade_id: '' },
      { trade_id: 'a\tb' },
      { trade_id: 'a\\b' },
      { trade_id: 'x'.repeat(129) },
      { side: 'yes' },
      { size: '0' },
      { size: '0.000' },
      { size: '-1' },
      { price: '1e3' },
      { venue_side: 'b\nx' },
      { venue_seq: 'b\nx' },
    ]) {
      expect(() => encodeTradeRow({ ...trade, ...(bad as object) })).toThrow(RowFormatError);
    }
  });

  it('encode gaps with the stream they interrupt (the book by default)', () => {
    const gap = {
      exchange: 'venue_b' as const,
      ticker: 'KX',
      from_ts: 1,
      to_ts: 2,
      reason: 'disconnect',
      detected_at: 3,
    };
    expect(encodeGapRow(gap)).toBe('venue_b\tKX\t1\t2\tdisconnect\t3\tbook\n');
    expect(encodeGapRow({ ...gap, stream: 'trades' })).toBe('venue_b\tKX\t1\t2\tdisconnect\t3\ttrades\n');
    expect(() => encodeGapRow({ ...gap, stream: 'bars' as never })).toThrow(RowFormatError);
  });

  it('keep the venue’s own ordering of a row (venue_seq, format 4), empty where it has none', () => {
    const delta = {
      exchange: 'venue_b' as const,
      ticker: 'KX',
      ts: 5,
      sequence: 9,
      side: 'ask' as const,
      price: '0.5',
      quantity_delta: '1',
    };
    expect(encodeDeltaRow({ ...delta, venue_seq: '2:18446744073709551615' })).toBe(
      'venue_b\tKX\t5\t9\task\t0.5\t1\t5\t2:18446744073709551615\n',
    );
    // A CLOB hash (40 hex digits) and the longest text kept, 48 characters.
    const hash = '56621a121a47ed9333273e21c83b660cff37ae50';
    expect(encodeDeltaRow({ ...delta, venue_seq: hash })).toMatch(new RegExp(`\\t${hash}\\n$`));
    expect(encodeSnapshotRow({ ...snapshot, venue_seq: 'a'.repeat(48) })).toMatch(/\ta{48}\n$/);
    expect(encodeSnapshotRow({ ...snapshot, venue_seq: 'x/y+z=1.2_3-4' })).toMatch(/\tx\/y\+z=1\.2_3-4\n$/);
    expect(encodeDeltaRow(delta)).toMatch(/\t5\t\n$/);
  });

  it('write an older row format when told (its fields only), never losing a venue sequence', () => {
    const delta = {
      exchange: 'venue_b' as const,
      ticker: 'KX',
      ts: 5,
      sequence: 9,
      side: 'ask' as const,
      price: '0.5',
      quantity_delta: '1',
      received_ts: 6,
    };
    expect(encodeDeltaRow(delta, 3)).toBe('venue_b\tKX\t5\t9\task\t0.5\t1\t6\n');
    expect(encodeDeltaRow(delta, 1)).toBe('venue_b\tKX\t5\t9\task\t0.5\t1\n');
    expect(() => encodeDeltaRow({ ...delta, venue_seq: '7:1' }, 3)).toThrow(/row format 3 has no venue_seq/);
    const gap = { exchange: 'venue_b' as const, ticker: 'KX', from_ts: 1, to_ts: 2, reason: 'stall', detected_at: 3 };
    expect(encodeGapRow(gap, 2)).toBe('venue_b\tKX\t1\t2\tstall\t3\n');
    expect(() => encodeGapRow({ ...gap, stream: 'trades' }, 2)).toThrow(RowFormatError);
    const point = { exchange: 'venue_b' as const, ticker: 'KX', ts: 1, method: 'rest_book' as const, detected_at: 2 };
    expect(() => encodeVerificationRow(point, 3)).toThrow(/no verifications/);
    // An array index passed by map() is no row format.
    expect(() => [delta].map(encodeDeltaRow as (r: typeof delta, i: number) => string)).toThrow(/no row format 0/);
  });

  it('encode verification points by method, and refuse another method or a bad moment', () => {
    const point = {
      exchange: 'venue_c' as const,
      ticker: 'BTCUSD',
      ts: 1774533601193,
      method: 'rest_book' as const,
      detected_at: 1774533601400,
    };
    expect(encodeVerificationRow(point)).toBe('venue_c\tBTCUSD\t1774533601193\trest_book\t1774533601400\n');
    expect(encodeVerificationRow({ ...point, method: 'checksum' })).toContain('\tchecksum\t');
    expect(encodeVerificationRow({ ...point, method: 'snapshot' })).toContain('\tsnapshot\t');
    for (const bad of [
      { method: 'hash' },
      { method: 'REST' },
      { ts: -1 },
      { ts: 1.5 },
      { detected_at: Number.NaN },
      { ticker: 'x'.repeat(129) },
      { exchange: 'venue-c' },
    ]) {
      expect(() => encodeVerificationRow({ ...point, ...(bad as object) })).toThrow(RowFormatError);
    }
  });

  it('encode hand-overs (format 4 columns, never an older format), and refuse another kind or a bad term', () => {
    const handover = {
      exchange: 'venue_d' as const,
      ticker: 'BTC-USD',
      ts: 1774533601194,
      from_term: 41,
      to_term: 42,
      kind: 'takeover' as const,
      detected_at: 1774533601400,
    };
    expect(encodeHandoverRow(handover)).toBe('venue_d\tBTC-USD\t1774533601194\t41\t42\ttakeover\t1774533601400\n');
    expect(encodeHandoverRow(handover).split('\t')).toHaveLength(insertColumns('handovers', 4).length);
    expect(() => encodeHandoverRow(handover, 3)).toThrow(/no handovers/);
    expect(() => insertColumns('handovers', 3)).toThrow(/no handovers/);
    for (const bad of [
      { kind: 'handover' },
      { from_term: -1 },
      { to_term: 1.5 },
      { to_term: 2 ** 53 },
      { ts: -1 },
      { ticker: '' },
    ]) {
      expect(() => encodeHandoverRow({ ...handover, ...(bad as object) })).toThrow(RowFormatError);
    }
  });

  it('give a recorder’s inserts query ids that carry its term (term 0: the usual ids)', () => {
    expect(recorderQueryId(17, 'deltas')).toMatch(
      /^rec-17-deltas-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    expect(recorderQueryId(17, 'deltas')).not.toBe(recorderQueryId(17, 'deltas'));
    expect(recorderQueryId(0, 'gaps')).toMatch(/^dg-insert-gaps-[0-9a-f-]{36}$/);
    for (const term of [-1, 1.5, Number.NaN]) expect(() => recorderQueryId(term, 'deltas')).toThrow(TypeError);
    // A place instead of the uuid: the same id at every call (a spooled record's inserts).
    expect(recorderQueryId(17, 'deltas', 'spool-000000000003-512')).toBe('rec-17-deltas-spool-000000000003-512');
    expect(recorderQueryId(0, 'gaps', 'spool-000000000003-0')).toBe('dg-insert-gaps-spool-000000000003-0');
    expect(() => recorderQueryId(0, 'gaps', "x' OR 1")).toThrow(TypeError);
  });

  it('rejects bad sequences and gap reasons', () => {
    const delta = { ...snapshot, sequence: 1, quantity_delta: '-1' };
    for (const sequence of [-1, 1.5, 2n ** 64n, -1n]) {
      expect(() => encodeDeltaRow({ ...delta, sequence })).toThrow(RowFormatError);
    }
    const gap = { exchange: 'venue_b' as const, ticker: 'KX', from_ts: 5, to_ts: 6, reason: 'x', detected_at: 7 };
    for (const reason of ['', 'Seed End', 'a\tb', 'x'.repeat(65)]) {
      expect(() => encodeGapRow({ ...gap, reason })).toThrow(RowFormatError);
    }
    expect(() => encodeGapRow({ ...gap, to_ts: 4 })).toThrow(RowFormatError);
  });
});

describe('migrations', () => {
  it('are numbered 1, 2, … and their checksums do not depend on the database', () => {
    MIGRATIONS.forEach((m, i) => expect(m.version).toBe(i + 1));
    for (const m of MIGRATIONS) expect(migrationChecksum(m)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('migration 1 is frozen (edit it and every deployed database refuses to start: add a migration instead)', () => {
    expect(migrationChecksum(MIGRATIONS[0] as (typeof MIGRATIONS)[number])).toBe('18cdce82c1f4882c6df27d9a1f2e83ea');
  });

  it('migration 2 adds received_ts (default ts) to the row tables, declaratively', () => {
    const m = MIGRATIONS[1] as (typeof MIGRATIONS)[number];
    const steps = m.steps(lit.identifier('db')).map((s) => {
      if (!('addColumnIfMissing' in s)) throw new Error(`migration 2 has an undeclared step: ${JSON.stringify(s)}`);
      return { ...s.addColumnIfMissing, type: s.addColumnIfMissing.type.text };
    });
    expect(steps).toEqual([
      { table: 'snapshots', column: 'received_ts', type: 'Int64 DEFAULT ts' },
      { table: 'deltas', column: 'received_ts', type: 'Int64 DEFAULT ts' },
    ]);
    expect(migrationChecksum(m)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('lines of row format 1 have no received_ts', () => {
    expect(insertColumns('deltas', 1)).toEqual([
      'exchange',
      'ticker',
      'ts',
      'sequence',
      'side',
      'price',
      'quantity_delta',
    ]);
    expect(insertColumns('deltas', LATEST_ROW_FORMAT)).toEqual([...INSERT_COLUMNS.deltas]);
    expect(insertColumns('gaps', 1)).toEqual(['exchange', 'ticker', 'from_ts', 'to_ts', 'reason', 'detected_at']);
  });

  it('lines of row format 2 have no gap stream and no trades; format 3 has both', () => {
    expect(insertColumns('gaps', 2)).toEqual(['exchange', 'ticker', 'from_ts', 'to_ts', 'reason', 'detected_at']);
    expect(insertColumns('gaps', 3)).toEqual([...INSERT_COLUMNS.gaps]);
    expect(insertColumns('gaps')).toContain('stream');
    expect(() => insertColumns('trades', 2)).toThrow(RowFormatError);
    expect(insertColumns('trades', LATEST_ROW_FORMAT)).toEqual([...INSERT_COLUMNS.trades]);
  });

  it('lines of row format 3 have no venue_seq and no verifications; format 4 has both (what the encoders write)', () => {
    expect(CURRENT_ROW_FORMAT).toBe(3);
    expect(LATEST_ROW_FORMAT).toBe(4);
    for (const table of ['snapshots', 'deltas', 'trades'] as const) {
      expect(insertColumns(table)).toEqual(INSERT_COLUMNS[table].filter((c) => c !== 'venue_seq'));
      expect(insertColumns(table, 4).at(-1)).toBe('venue_seq');
    }
    expect(insertColumns('gaps', 4)).toEqual(insertColumns('gaps', 3));
    expect(() => insertColumns('verifications', 3)).toThrow(RowFormatError);
    expect(insertColumns('verifications', 4)).toEqual(['exchange', 'ticker', 'ts', 'method', 'detected_at']);
    // Each encoder writes one field per column of format 4.
    const fields = (line: string) => line.replace(/\n$/, '').split('\t').length;
    const snapshot = {
      exchange: 'venue_b' as const,
      ticker: 'KX',
      ts: 1,
      side: 'bid' as const,
      price: '1',
      quantity: '1',
    };
    expect(fields(encodeSnapshotRow(snapshot))).toBe(insertColumns('snapshots', 4).length);
    const delta = { ...snapshot, sequence: 1, quantity_delta: '1' };
    expect(fields(encodeDeltaRow(delta))).toBe(insertColumns('deltas', 4).length);
    expect(
      fields(encodeVerificationRow({ exchange: 'venue_b', ticker: 'KX', ts: 1, method: 'rest_book', detected_at: 2 })),
    ).toBe(5);
  });

  it('migration 4 adds venue_seq (default empty) to the row tables and the verifications table, declaratively', () => {
    const m = MIGRATIONS[3] as (typeof MIGRATIONS)[number];
    const steps = m.steps(lit.identifier('db'));
    const added = steps.flatMap((s) =>
      'addColumnIfMissing' in s ? [{ ...s.addColumnIfMissing, type: s.addColumnIfMissing.type.text }] : [],
    );
    expect(added).toEqual(
      ['snapshots', 'deltas', 'trades'].map((table) => ({ table, column: 'venue_seq', type: "String DEFAULT ''" })),
    );
    const created = steps.flatMap((s) => ('createTable' in s ? [s.createTable] : []));
    expect(
      created.map((t) => [t.name, t.engine, t.orderBy.text, t.columns.map(([c, ty]) => `${c} ${ty.text}`)]),
    ).toEqual([
      [
        'verifications',
        'MergeTree',
        '(exchange, ticker, ts)',
        [
          "exchange Enum8('venue_b' = 1, 'venue_c' = 2, 'venue_a_us' = 3)",
          'ticker String',
          'ts Int64',
          "method Enum8('rest_book' = 1, 'checksum' = 2, 'snapshot' = 3)",
          'detected_at Int64',
        ],
      ],
    ]);
    expect(steps).toHaveLength(4);
  });

  it('migration 3 adds the trades table with its own catalogue, and gaps.stream (default book), declaratively', () => {
    const m = MIGRATIONS[2] as (typeof MIGRATIONS)[number];
    const steps = m.steps(lit.identifier('db'));
    expect(steps.map((s) => Object.keys(s)[0])).toEqual([
      'createTable',
      'createTable',
      'createMaterializedView',
      'addColumnIfMissing',
    ]);
    const trades = steps[0] as { createTable: { name: string; engine: string; orderBy: { text: string } } };
    expect([trades.createTable.name, trades.createTable.engine, trades.createTable.orderBy.text]).toEqual([
      'trades',
      'ReplacingMergeTree',
      '(exchange, ticker, ts, trade_id)',
    ]);
    expect(storedExchanges(MIGRATIONS.slice(0, 3))).toEqual(storedExchanges(MIGRATIONS.slice(0, 2)));
  });

  it('migration 5 adds Polymarket CLOB and Coinbase to the exchange Enum8 of every table, under their codes', () => {
    const five = MIGRATIONS.find((m) => m.version === 5) as Migration;
    expect(five.steps(lit.identifier('db'))).toEqual([
      { extendEnum: { column: 'exchange', members: { venue_a_clob: 4, venue_d: 5 } } },
    ]);
    expect(storedExchanges()).toEqual({ venue_b: 1, venue_c: 2, venue_a_us: 3, venue_a_clob: 4, venue_d: 5 });
  });
});

describe('ClickHouse URLs', () => {
  it('split credentials out and mask them in logs', () => {
    expect(parseClickHouseUrl('http://user:p%40ss@127.0.0.1:8123')).toEqual({
      origin: 'http://127.0.0.1:8123',
      username: 'user',
      password: 'p@ss',
    });
    expect(parseClickHouseUrl('http://127.0.0.1:7123')).toEqual({ origin: 'http://127.0.0.1:7123' });
    expect(loggableClickHouseUrl('http://user:secret@127.0.0.1:8123')).toBe('http://user:***@127.0.0.1:8123');
  });
});

describe('cluster layout (CLICKHOUSE_CLUSTER)', () => {
  const db = lit.identifier('hist');
  const cluster = new Layout(db, 'hist', 'depthgate');
  const statements = (MIGRATIONS[0] as Migration)
    .steps(db)
    .flatMap((step) =>
      'createTable' in step
        ? cluster.createTable(step.createTable)
        : 'createMaterializedView' in step
          ? [cluster.createView(step.createMaterializedView)]
          : [],
    )
    .map((s) => s.text);

  it('creates every table as a Replicated table on every shard plus a Distributed table sharded by (exchange, ticker)', () => {
    expect(statements).toHaveLength(10);
    expect(statements[0]).toContain(
      "CREATE TABLE IF NOT EXISTS `hist`.snapshots_local ON CLUSTER 'depthgate' (\n  exchange Enum8(",
    );
    expect(statements[0]).toContain(
      "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/hist/snapshots', '{replica}')\nPARTITION BY toYYYYMM(",
    );
    expect(statements[1]).toMatch(
      /^CREATE TABLE IF NOT EXISTS `hist`\.snapshots ON CLUSTER 'depthgate' \(\n {2}exchange Enum8\([^)]*\),\n {2}ticker String,[^]*\n\) ENGINE = Distributed\('depthgate', 'hist', 'snapshots_local', cityHash64\(toString\(exchange\), ticker\)\)$/,
    );
    expect(statements[6]).toContain(
      "ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/hist/ticker_catalogue'",
    );
  });

  it('keeps 10,000 blocks of every replicated table in its deduplication log, on any version (one server: no setting)', () => {
    const settings =
      'SETTINGS index_granularity = 8192, replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 604800';
    for (const i of [0, 2, 4, 6]) expect(statements[i]?.endsWith(`\n${settings}`)).toBe(true);
    const single = new Layout(db, 'hist', undefined);
    const tables = (MIGRATIONS[0] as Migration)
      .steps(db)
      .flatMap((step) => ('createTable' in step ? single.createTable(step.createTable) : []));
    expect(tables).toHaveLength(4);
    for (const t of tables) expect(t.text.endsWith('\nSETTINGS index_granularity = 8192')).toBe(true);
  });

  it("builds the catalogue per shard: each view reads and feeds the shard's own tables", () => {
    expect(statements[8]).toBe(
      "CREATE MATERIALIZED VIEW IF NOT EXISTS `hist`.snapshots_catalogue_mv ON CLUSTER 'depthgate' TO `hist`.ticker_catalogue_local AS\n" +
        "SELECT exchange, ticker, CAST('snapshot' AS Enum8('snapshot' = 1, 'delta' = 2)) AS kind,\n" +
        '  minState(ts) AS first_ts, maxState(ts) AS last_ts, countState() AS row_count\n' +
        'FROM `hist`.snapshots_local\nGROUP BY exchange, ticker',
    );
  });

  it('keeps one replicated record of migrations on every server, and names the cluster only in cluster mode', () => {
    expect(cluster.migrationsTable().text).toContain("schema_migrations ON CLUSTER 'depthgate' (\n  version UInt32,");
    expect(cluster.migrationsTable().text).toContain(
      "ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/hist/schema_migrations', '{shard}-{replica}')",
    );
    const single = new Layout(db, 'hist', undefined);
    expect(single.migrationsTable().text).not.toContain('CLUSTER');
    expect(single.addColumn('deltas', 'received_ts', sql`Int64 DEFAULT ts`).text).toBe(
      'ALTER TABLE `hist`.deltas ADD COLUMN `received_ts` Int64 DEFAULT ts',
    );
    expect(cluster.addColumn('deltas', 'received_ts', sql`Int64 DEFAULT ts`).text).toBe(
      "ALTER TABLE `hist`.deltas_local ON CLUSTER 'depthgate' ADD COLUMN `received_ts` Int64 DEFAULT ts",
    );
    expect(() => single.createDistributed('deltas', [])).toThrow(/cluster only/);
    expect(() => new Layout(db, 'hist', "x' OR 1")).toThrow(LiteralError);
  });
});

describe('settings pinned only where the server knows them', () => {
  it('turn async inserts off on current servers, and skip unused shards on a cluster', () => {
    expect(conditionalSettings(new Set(), undefined)).toEqual({ insert: {}, read: {} });
    expect(conditionalSettings(new Set(['async_insert', 'optimize_skip_unused_shards']), undefined)).toEqual({
      insert: { async_insert: 0 },
      read: {},
    });
    expect(conditionalSettings(new Set(['async_insert', 'optimize_skip_unused_shards']), 'depthgate')).toEqual({
      insert: { async_insert: 0 },
      read: { optimize_skip_unused_shards: 1 },
    });
  });
});

/** A request's body as ClickHouse reads it: inflated when the client sent it as gzip (the data client does). */
async function statementOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  return (req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString();
}

describe('killing a query (a cancelled scope)', () => {
  /** A stand-in for ClickHouse that records each statement and its settings, and answers 200. */
  async function standIn(use: (url: string) => Promise<void>) {
    const asked: { statement: string; ddlTimeout: string | null }[] = [];
    const server = createServer((req, res) => {
      void statementOf(req).then((body) => {
        const params = new URL(req.url ?? '/', 'http://clickhouse').searchParams;
        asked.push({ statement: body.trim(), ddlTimeout: params.get('distributed_ddl_task_timeout') });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      server.close();
    }
    return asked;
  }

  it('is sent ON CLUSTER on a cluster (queued for every server, not waited for), and to the server alone on one', async () => {
    const id = newQueryId('book');
    const asked = await standIn(async (url) => {
      for (const cluster of [{ cluster: 'depthgate' }, {}]) {
        const connection = createConnection({ url, database: 'hist', ...cluster });
        await connection.kill(id);
        await connection.close();
      }
    });
    expect(asked).toEqual([
      { statement: `KILL QUERY ON CLUSTER 'depthgate' WHERE query_id IN ('${id}') ASYNC`, ddlTimeout: '0' },
      { statement: `KILL QUERY WHERE query_id IN ('${id}') ASYNC`, ddlTimeout: null },
    ]);
  });

  it('names 40 queries cancelled at once in two statements (one DDL task each on a cluster), not 40', async () => {
    const ids = Array.from({ length: 40 }, () => newQueryId('book'));
    const asked = await standIn(async (url) => {
      const connection = createConnection({ url, database: 'hist', cluster: 'depthgate' });
      await Promise.all(ids.map((id) => connection.kill(id)));
      await connection.close();
    });
    const named = (statement: string) => [...statement.matchAll(/'([^']+)'/g)].map((m) => m[1]).slice(1);
    expect(asked.map((a) => named(a.statement).length)).toEqual([1, 39]);
    expect(asked.flatMap((a) => named(a.statement))).toEqual(ids);
  });

  it('sends the kills asked while one is on its way together: a flood of cancellations is a few statements', async () => {
    const statements: string[][] = [];
    let answer: (() => void) | undefined;
    const kill = killInBatches(async (ids) => {
      statements.push(ids);
      await new Promise<void>((resolve) => (answer = resolve));
    });
    const ids = Array.from({ length: KILL_BATCH_IDS + 21 }, (_, i) => `q-${i}`);
    const sent = new Set<string>();
    const kills = ids.map((id) => kill(id).then(() => sent.add(id)));
    // The first at once, alone; nothing counts as sent before its statement is answered.
    expect(statements).toEqual([['q-0']]);
    await new Promise((r) => setImmediate(r));
    expect(sent.size).toBe(0);
    answer?.();
    // Then the rest, in statements of at most KILL_BATCH_IDS, one at a time.
    await new Promise((r) => setImmediate(r));
    expect(statements.map((s) => s.length)).toEqual([1, KILL_BATCH_IDS]);
    expect([...sent]).toEqual(['q-0']);
    answer?.();
    await new Promise((r) => setImmediate(r));
    expect(statements.map((s) => s.length)).toEqual([1, KILL_BATCH_IDS, 20]);
    answer?.();
    await Promise.all(kills);
    expect(statements.flat()).toEqual(ids);
    // A kill asked after the flood goes out at once again.
    void kill('q-late');
    expect(statements.at(-1)).toEqual(['q-late']);
    answer?.();
  });
});

describe('making sure an abandoned insert has ended (RecorderStore.ensureQueryEnded)', () => {
  /**
   * A stand-in for ClickHouse behind the shared address: the insert runs on `runsOn` (the server answering, or
   * `ch-b` of the cluster's `ch-a` and `ch-b`) until a KILL QUERY arrives; every statement is recorded.
   */
  async function standIn(runsOn: 'entry' | 'ch-b', use: (url: string) => Promise<void>): Promise<string[]> {
    const asked: string[] = [];
    let running = true;
    const server = createServer((req, res) => {
      void statementOf(req).then((body) => {
        const statement = body.replace(/\s*FORMAT JSONEachRow\s*$/, '').trim();
        let answer = '';
        if (!statement.includes('system.settings')) asked.push(statement);
        if (statement.includes('system.clusters')) {
          answer = '{"host_name":"ch-a","port":9000}\n{"host_name":"ch-b","port":9000}\n';
        } else if (statement.startsWith('KILL QUERY')) {
          running = false;
        } else if (statement.includes('system.processes')) {
          const here = statement.includes("remote('ch-b:9000'")
            ? 'ch-b'
            : statement.includes('remote(')
              ? 'ch-a'
              : 'entry';
          answer = `{"n":"${running && here === runsOn ? 1 : 0}"}\n`;
        }
        res.end(answer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      server.close();
    }
    return asked;
  }
  const id = recorderQueryId(0, 'deltas');
  const ofInsert = `query_id = '${id}' OR initial_query_id = '${id}'`;

  it('asks every server of a cluster (the shared address may lead to one the insert is not on), and kills it there', async () => {
    const asked = await standIn('ch-b', async (url) => {
      const store = new HistoryStore({ url, database: 'hist', cluster: 'depthgate' });
      try {
        await new RecorderStore(store).ensureQueryEnded(id, 10_000);
      } finally {
        await store.close();
      }
    });
    const ask = (server: string) => `SELECT count() AS n FROM remote('${server}', system.processes) WHERE ${ofInsert}`;
    expect(asked[0]).toMatch(/FROM system\.clusters WHERE cluster = 'depthgate'/);
    // Both servers asked, in either order; the kill after them, then both asked again.
    expect(new Set(asked.slice(1, 3))).toEqual(new Set([ask('ch-a:9000'), ask('ch-b:9000')]));
    expect(asked[3]).toBe(`KILL QUERY ON CLUSTER 'depthgate' WHERE ${ofInsert} SYNC`);
    expect(new Set(asked.slice(4))).toEqual(new Set([ask('ch-a:9000'), ask('ch-b:9000')]));
    expect(asked).toHaveLength(6);
  });

  it('asks the one server alone when there is no cluster', async () => {
    const asked = await standIn('entry', async (url) => {
      const store = new HistoryStore({ url, database: 'hist' });
      try {
        await new RecorderStore(store).ensureQueryEnded(id, 10_000);
      } finally {
        await store.close();
      }
    });
    const ask = `SELECT count() AS n FROM system.processes WHERE query_id = '${id}'`;
    expect(asked).toEqual([ask, `KILL QUERY WHERE query_id IN ('${id}') ASYNC`, ask]);
  });
});
