/**
 * The ClickHouse layer against the real server of `./dev test` (18.16 locally, a current release in CI):
 * migrations, the literal helper read back by the server, the decimal and timestamp renderings, the inserts and the
 * catalogue that follows them.
 */
import { testClickHouseUrl, uniqueName } from '@depthgate/test-utils';
import { Rng } from '@depthgate/service-kit';
import { createClickHouse, type ClickHouse } from './client';
import { insertDeltaRows, insertGapRows, insertSnapshotRows } from './inserts';
import { TICKER_PATTERN, join, lit, quoteString, sql, type Sql } from './literals';
import { MIGRATIONS, MigrationError, runMigrations, type Migration } from './migrations';
import { RowBinaryToJson } from '../history/row-binary';
import { catalogueEntryQuery, deltaWindowQuery, snapshotWindowQuery, tickersQuery } from './queries';
import { verifyReadColumns } from './startup';

let ch: ClickHouse;

beforeAll(async () => {
  ch = createClickHouse({ url: testClickHouseUrl(), database: uniqueName('chl') });
  await runMigrations(ch);
});

afterAll(async () => {
  await ch.data.command({ query: sql`DROP DATABASE IF EXISTS ${ch.db}`.text });
  await ch.close();
});

/** Rows of a query as objects (the queries of queries.ts carry their own FORMAT JSONEachRow). */
async function rows<T>(query: Sql): Promise<T[]> {
  const q = /FORMAT JSONEachRow\s*$/.test(query.text) ? query : sql`${query} FORMAT JSONEachRow`;
  return (await text(q))
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as T);
}

async function bytes(query: Sql): Promise<Buffer> {
  const r = await ch.data.exec({ query: query.text });
  const chunks: Buffer[] = [];
  for await (const c of r.stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

async function text(query: Sql): Promise<string> {
  return (await bytes(query)).toString('utf8');
}

describe('migrations', () => {
  it('are applied once, then find nothing to do', async () => {
    const again = await runMigrations(ch);
    expect(again).toEqual({ applied: [], version: MIGRATIONS.length });
    const tables = await rows<{ name: string }>(
      sql`SELECT name FROM system.tables WHERE database = ${lit.name(ch.database)} ORDER BY name`,
    );
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining(['deltas', 'gaps', 'schema_migrations', 'snapshots', 'ticker_catalogue']),
    );
  });

  it('refuse a recorded migration whose SQL changed, and add columns idempotently', async () => {
    const scratch = createClickHouse({ url: testClickHouseUrl(), database: uniqueName('mig') });
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
      await scratch.data.command({ query: sql`ALTER TABLE ${scratch.db}.t ADD COLUMN b String`.text });
      expect(await runMigrations(scratch, { migrations: [v1, v2] })).toEqual({ applied: [2], version: 2 });
      expect(await runMigrations(scratch, { migrations: [v1, v2] })).toEqual({ applied: [], version: 2 });
      const edited: Migration = {
        ...v1,
        steps: (db) => [sql`CREATE TABLE IF NOT EXISTS ${db}.t (a UInt16) ENGINE = MergeTree() ORDER BY a`],
      };
      await expect(runMigrations(scratch, { migrations: [edited, v2] })).rejects.toThrow(MigrationError);
      await expect(runMigrations(scratch, { migrations: [edited, v2] })).rejects.toThrow(/applied with different SQL/);
    } finally {
      await scratch.data.command({ query: sql`DROP DATABASE IF EXISTS ${scratch.db}`.text });
      await scratch.close();
    }
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
    await insertDeltaRows(ch, [
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

describe('renderings', () => {
  it('decimals: exact, trailing zeros trimmed; timestamps: UTC RFC 3339 with milliseconds', async () => {
    const values = [
      ['0.4800', '0.48'],
      ['150.00', '150'],
      ['100', '100'],
      ['0', '0'],
      ['0.000', '0'],
      ['-0.01', '-0.01'],
      ['-20.50', '-20.5'],
      ['10', '10'],
      ['0.00121425', '0.00121425'],
      ['0.000000000000000001', '0.000000000000000001'],
      ['12345678901234567890.123456789012345678', '12345678901234567890.123456789012345678'],
      ['-99999999999999999999.999999999999999999', '-99999999999999999999.999999999999999999'],
    ];
    const t = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
    await insertDeltaRows(
      ch,
      values.map(([v], i) => ({
        exchange: 'venue_c' as const,
        ticker: 'DEC',
        ts: t + i,
        sequence: i,
        side: 'ask' as const,
        price: v as string,
        quantity_delta: v as string,
      })),
    );
    const window = { from: 0, to: null, toInclusive: true };
    // The window query's RowBinary, as this server version sends it, through the service's renderer.
    const converter = new RowBinaryToJson('delta');
    const out = converter.push(await bytes(deltaWindowQuery(ch.db, 'venue_c', 'DEC', window, 100)));
    converter.endOfQuery();
    const parsed = JSON.parse(`[${out?.toString('utf8') ?? ''}]`) as {
      ts: string;
      price: string;
      quantity_delta: string;
      sequence: number;
    }[];
    expect(parsed.map((r) => r.price)).toEqual(values.map(([, want]) => want));
    expect(parsed.map((r) => r.quantity_delta)).toEqual(values.map(([, want]) => want));
    expect(parsed[0]?.ts).toBe('2026-03-26T14:00:01.193Z');
    expect(parsed[7]?.ts).toBe('2026-03-26T14:00:01.200Z');
    expect(parsed[0]?.sequence).toBe(0);
  });
});

describe('the columns the service reads in RowBinary', () => {
  it('match what the migrations create, and a drifted type stops the service instead of being misread', async () => {
    await expect(verifyReadColumns(ch)).resolves.toBeUndefined();
    const drifted = createClickHouse({ url: testClickHouseUrl(), database: uniqueName('drift') });
    try {
      await runMigrations(drifted);
      await drifted.data.command({
        query: sql`ALTER TABLE ${drifted.db}.snapshots MODIFY COLUMN quantity Float64`.text,
      });
      await expect(verifyReadColumns(drifted)).rejects.toThrow(
        /snapshots\.quantity is Float64, expected Decimal\(38, 18\)/,
      );
    } finally {
      await drifted.data.command({ query: sql`DROP DATABASE IF EXISTS ${drifted.db}`.text });
      await drifted.close();
    }
  });

  it('snapshot rows arrive in their layout and render in book order', async () => {
    await insertSnapshotRows(ch, [
      { exchange: 'venue_b', ticker: 'RB-SNAP', ts: 2000, side: 'ask', price: '0.52', quantity: '3' },
      { exchange: 'venue_b', ticker: 'RB-SNAP', ts: 2000, side: 'bid', price: '0.48', quantity: '10.5' },
      { exchange: 'venue_b', ticker: 'RB-SNAP', ts: 2000, side: 'bid', price: '0.047', quantity: '1' },
    ]);
    const converter = new RowBinaryToJson('snapshot');
    const window = { from: 0, to: null, toInclusive: true };
    const out = converter.push(await bytes(snapshotWindowQuery(ch.db, 'venue_b', 'RB-SNAP', window, 10)));
    converter.endOfQuery();
    expect(JSON.parse(`[${out?.toString('utf8') ?? ''}]`)).toEqual([
      { ts: '1970-01-01T00:00:02.000Z', side: 'bid', price: '0.047', quantity: '1' },
      { ts: '1970-01-01T00:00:02.000Z', side: 'bid', price: '0.48', quantity: '10.5' },
      { ts: '1970-01-01T00:00:02.000Z', side: 'ask', price: '0.52', quantity: '3' },
    ]);
  });
});

describe('inserts and the catalogue', () => {
  it('keep decimals exact and keep first/last ts and row counts per ticker without the writer’s help', async () => {
    await insertSnapshotRows(ch, [
      { exchange: 'venue_a_us', ticker: 'cat-test', ts: 5000, side: 'bid', price: '0.555', quantity: '0.50' },
      { exchange: 'venue_a_us', ticker: 'cat-test', ts: 5000, side: 'ask', price: '0.560', quantity: '0.80' },
    ]);
    await insertSnapshotRows(ch, [
      { exchange: 'venue_a_us', ticker: 'cat-test', ts: 9000, side: 'bid', price: '0.556', quantity: '1' },
    ]);
    await insertDeltaRows(ch, [
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
    await insertGapRows(ch, [
      {
        exchange: 'venue_a_us',
        ticker: 'cat-test',
        from_ts: 9000,
        to_ts: 12000,
        reason: 'seed_end',
        detected_at: 13000,
      },
    ]);
    const entries = await rows<{ ticker: string; kind_name: string; min_ts: string; max_ts: string; n_rows: string }>(
      catalogueEntryQuery(ch.db, 'venue_a_us', 'CAT-TEST'),
    );
    const byKind = Object.fromEntries(
      entries.map((e) => [e.kind_name, [Number(e.min_ts), Number(e.max_ts), Number(e.n_rows)]]),
    );
    expect(byKind).toEqual({ snapshot: [5000, 9000, 3], delta: [7000, 7000, 1] });
    expect(entries.every((e) => e.ticker === 'cat-test')).toBe(true);
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
      insertSnapshotRows(ch, [
        { exchange: 'venue_b', ticker: 'BAD-1', ts: 1, side: 'bid', price: '0.5', quantity: '1' },
        { exchange: 'venue_b', ticker: 'BAD-1', ts: 2, side: 'bid', price: '1e3', quantity: '1' },
      ]),
    ).rejects.toThrow(/bad price/);
    const n = await rows<{ n: string }>(
      sql`SELECT count() AS n FROM ${ch.db}.snapshots WHERE ticker = ${lit.ticker('BAD-1')}`,
    );
    expect(Number(n[0]?.n)).toBe(0);
  });

  it('joins lists of literals', () => {
    expect(join([lit.ticker('A'), lit.ticker('B')], ', ').text).toBe("'A', 'B'");
  });
});
