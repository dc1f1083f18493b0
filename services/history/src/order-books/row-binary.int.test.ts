/**
 * The window queries' RowBinary as the ClickHouse of `./dev test` sends it (18.16 locally, a current release in CI),
 * read through the store's OrderBookQueries and rendered by the service's decoder: exact decimals, timestamps, and
 * the snapshot layout in book order.
 */
import { OrderBookQueries, insertDeltaRows, insertSnapshotRows, type WindowRead } from '@depthgate/history-store';
import { createTestDatabase, type TestDatabase } from '@depthgate/history-store/testing';
import { testClickHouseUrl, uniqueName } from '@depthgate/test-utils';
import { RowRenderer } from './row-binary';

let db: TestDatabase;
let queries: OrderBookQueries;

beforeAll(async () => {
  db = await createTestDatabase({ url: testClickHouseUrl(), database: uniqueName('rbin') });
  queries = new OrderBookQueries(db.store);
});

afterAll(async () => {
  await db.drop();
  await db.close();
});

/** A whole window read, rendered. */
async function render(kind: 'delta' | 'snapshot', read: WindowRead): Promise<unknown[]> {
  const converter = new RowRenderer(kind);
  const texts: Buffer[] = [];
  const scope = db.store.scope(10_000);
  try {
    const onChunk = (chunk: Buffer) => void texts.push(converter.push(chunk) ?? Buffer.alloc(0));
    await (kind === 'delta' ? queries.deltas(scope, read, onChunk) : queries.snapshots(scope, read, onChunk));
  } finally {
    scope.dispose();
  }
  converter.endOfQuery();
  return JSON.parse(`[${Buffer.concat(texts).toString('utf8')}]`) as unknown[];
}

const ALL = { from: 0, to: null, toInclusive: true };

describe('window rows rendered by the service', () => {
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
      db.store,
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
    const parsed = (await render('delta', { exchange: 'venue_c', ticker: 'DEC', window: ALL, limit: 100 })) as {
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

  it('snapshot rows arrive in their layout and render in book order', async () => {
    await insertSnapshotRows(db.store, [
      { exchange: 'venue_b', ticker: 'RB-SNAP', ts: 2000, side: 'ask', price: '0.52', quantity: '3' },
      { exchange: 'venue_b', ticker: 'RB-SNAP', ts: 2000, side: 'bid', price: '0.48', quantity: '10.5' },
      { exchange: 'venue_b', ticker: 'RB-SNAP', ts: 2000, side: 'bid', price: '0.047', quantity: '1' },
    ]);
    expect(await render('snapshot', { exchange: 'venue_b', ticker: 'RB-SNAP', window: ALL, limit: 10 })).toEqual([
      { ts: '1970-01-01T00:00:02.000Z', side: 'bid', price: '0.047', quantity: '1' },
      { ts: '1970-01-01T00:00:02.000Z', side: 'bid', price: '0.48', quantity: '10.5' },
      { ts: '1970-01-01T00:00:02.000Z', side: 'ask', price: '0.52', quantity: '3' },
    ]);
  });
});
