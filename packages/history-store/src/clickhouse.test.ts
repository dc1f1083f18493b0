import { classifyClickHouseError, serverErrorCode } from './errors';
import {
  INSERT_COLUMNS,
  encodeDeltaRow,
  encodeGapRow,
  encodeSnapshotRow,
  insertColumns,
  RowFormatError,
} from './inserts';
import { lit } from './literals';
import { MIGRATIONS, migrationChecksum } from './migrations';
import { loggableClickHouseUrl, parseClickHouseUrl } from './connection';

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
    ).toBe('venue_b\tKXBTCD-26MAR07-T100000\t1774533601193\tbid\t0.4800\t150.00\t1774533601193\n');
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
    ).toBe('venue_c\tBTCUSD\t1774533601193\t18446744073709551615\task\t90123.45\t-0.00121425\t1774533601215\n');
    expect(
      encodeGapRow({
        exchange: 'venue_a_us',
        ticker: 'fed-cuts',
        from_ts: 1,
        to_ts: 2,
        reason: 'seed_end',
        detected_at: 3,
      }),
    ).toBe('venue_a_us\tfed-cuts\t1\t2\tseed_end\t3\n');
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
    { exchange: 'kalshi' },
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
  ])('rejects a snapshot row with %j', (override) => {
    expect(() => encodeSnapshotRow({ ...snapshot, ...(override as object) })).toThrow(RowFormatError);
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
    expect(m.steps(lit.identifier('db')).map((s) => ('addColumnIfMissing' in s ? s.addColumnIfMissing : s))).toEqual([
      { table: 'snapshots', column: 'received_ts', type: expect.anything(), default: expect.anything() },
      { table: 'deltas', column: 'received_ts', type: expect.anything(), default: expect.anything() },
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
    expect(insertColumns('deltas')).toEqual([...INSERT_COLUMNS.deltas]);
    expect(insertColumns('gaps', 1)).toEqual([...INSERT_COLUMNS.gaps]);
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
