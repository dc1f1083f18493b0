import { Rng } from '@depthgate/service-kit';
import { readParquet } from '../testing/parquet';
import {
  deltaRow,
  randomChunks,
  snapshotRow,
  tradeRow,
  venueSeqBytes,
  type Delta,
  type Trade,
} from '../testing/row-binary';
import { ParquetStream } from './parquet';
import {
  FIELD_RECEIVED,
  FIELD_SEQUENCE,
  FIELD_VENUE_SEQ,
  FIELD_VENUE_SIDE,
  RowRenderer,
  type SeriesKind,
} from './row-binary';

const T = Date.UTC(2026, 2, 26, 14, 0, 1, 193);

/** The rows through the renderer: as NDJSON, and as a Parquet file (row groups of `groupRows`). */
function both(kind: SeriesKind, fields: number, chunks: Buffer[], groupRows: number) {
  const options = {
    receivedTs: (fields & FIELD_RECEIVED) !== 0,
    venueSide: (fields & FIELD_VENUE_SIDE) !== 0,
    sequence: (fields & FIELD_SEQUENCE) !== 0,
    venueSeq: (fields & FIELD_VENUE_SEQ) !== 0,
  };
  const ndjson = new RowRenderer(kind, { ...options, format: 'ndjson' });
  const parquet = new ParquetStream(kind, fields, groupRows);
  const columnar = new RowRenderer(kind, { ...options, columnar: parquet });
  let text = '';
  const pieces: Buffer[] = [];
  for (const chunk of chunks) {
    text += ndjson.push(chunk)?.toString('latin1') ?? '';
    const out = columnar.push(chunk);
    if (out) pieces.push(out);
  }
  ndjson.endOfQuery();
  columnar.endOfQuery();
  pieces.push(parquet.finish({ 'depthgate.count': String(columnar.rows) }));
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, string | number>);
  return { lines, file: Buffer.concat(pieces), pieces, rows: columnar.rows };
}

describe('Parquet answers (ParquetStream, through the row renderer)', () => {
  const rng = new Rng('parquet');
  const deltas: Delta[] = Array.from({ length: 3000 }, (_, i) => ({
    ts: T + i * 7 + (i % 3 === 0 ? 0 : 1),
    sequence: i === 2999 ? 2n ** 64n - 1n : 1_795_433_640_816_000 + i,
    side: rng.chance(0.5) ? 'bid' : 'ask',
    price: `0.${rng.range(1, 99)}`,
    quantity_delta: `${rng.chance(0.5) ? '-' : ''}${rng.range(0, 1e6)}.${rng.range(0, 99)}`,
  }));

  it('holds the NDJSON rows of deltas exactly, in row groups as they fill, with exact decimals and UTC timestamps', async () => {
    const raw = Buffer.concat(deltas.map(deltaRow));
    const { lines, file, pieces } = both('delta', 0, randomChunks(rng, raw, 5000), 1000);
    // The file went out while the rows came: its start and each full row group before the end.
    expect(pieces.length).toBeGreaterThan(2);
    const back = await readParquet(file);
    expect(back.rowGroups).toBe(3);
    expect(back.types).toEqual({
      ts: 'TIMESTAMP WITH TIME ZONE',
      sequence: 'UBIGINT',
      side: 'VARCHAR',
      price: 'DECIMAL(38,18)',
      quantity_delta: 'DECIMAL(38,18)',
    });
    expect(back.rows).toEqual(lines);
    expect(back.rows).toHaveLength(3000);
    expect(back.metadata['depthgate.count']).toBe('3000');
  });

  it('writes decimals that do not repeat (PLAIN), at 18 places and 20 integer digits, and snapshots with received_ts', async () => {
    const rows = Array.from({ length: 600 }, (_, i) =>
      Buffer.concat([
        snapshotRow({
          ts: T + i,
          side: i % 2 ? 'ask' : 'bid',
          price: `${10_000 + i}.${String(i).padStart(18, '0')}`,
          quantity: i === 5 ? '99999999999999999999.999999999999999999' : `${i}.000000000000000001`,
        }),
        Buffer.from(new BigInt64Array([BigInt(T + i + 3)]).buffer),
      ]),
    );
    const { lines, file } = both('snapshot', FIELD_RECEIVED, [Buffer.concat(rows)], 256);
    const back = await readParquet(file);
    expect(back.rows).toEqual(lines);
    expect(back.rows[5]).toMatchObject({ quantity: '99999999999999999999.999999999999999999' });
    expect(Object.keys(back.types)).toEqual(['ts', 'side', 'price', 'quantity', 'received_ts']);
  });

  it('holds trades with their ids (repeating or not, quoted), venue sides and sequences as asked', async () => {
    const trades: Trade[] = Array.from({ length: 1500 }, (_, i) => ({
      ts: T + i * 11,
      sequence: 5000 + i,
      trade_id: i % 7 === 0 ? `h:${i.toString(16).padStart(16, '0')}` : `${'x'.repeat(i % 128)}"${i}`.slice(0, 128),
      price: `0.${(i % 90) + 10}`,
      size: `${i + 1}.25`,
      side: i % 3 ? 'buy' : 'sell',
      received_ts: T + i * 11 + 2,
      venue_side: i % 2 ? 'yes' : '',
    }));
    const fields = FIELD_RECEIVED | FIELD_VENUE_SIDE | FIELD_SEQUENCE;
    const raw = Buffer.concat(trades.map(tradeRow));
    const { lines, file } = both('trade', fields, randomChunks(rng, raw, 700), 512);
    const back = await readParquet(file);
    expect(Object.keys(back.types)).toEqual([
      'ts',
      'trade_id',
      'price',
      'size',
      'side',
      'received_ts',
      'venue_side',
      'sequence',
    ]);
    expect(back.rows).toEqual(lines);
    expect(back.rows[1]).toMatchObject({ trade_id: 'x"1', venue_side: 'yes', side: 'buy', sequence: 5001 });
  });

  it('each row group chooses for its strings and decimals afresh: a dictionary, then PLAIN, then a dictionary of other values', async () => {
    // Row groups of 200: ids from 5 values (a dictionary), then all distinct (PLAIN), then 3 other values; prices
    // from 4 levels, then all distinct, then 4 other levels. A table left from the group before would give wrong ids.
    const group = 200;
    const trades: Trade[] = Array.from({ length: group * 3 }, (_, i) => {
      const g = Math.floor(i / group);
      return {
        ts: T + i,
        sequence: i,
        trade_id: g === 0 ? `a${i % 5}` : g === 1 ? `id-${i}` : `b${i % 3}`,
        price: g === 1 ? `${i}.5` : `${g === 0 ? 10 : 20}.${i % 4}`,
        size: '1',
        side: 'buy',
      };
    });
    const { lines, file } = await both('trade', 0, [Buffer.concat(trades.map(tradeRow))], group);
    const back = await readParquet(file);
    expect(back.rows).toEqual(lines);
    const plain = 'PLAIN, RLE';
    const dictionary = 'PLAIN, RLE, RLE_DICTIONARY';
    expect(back.encodings.trade_id).toEqual([dictionary, plain, dictionary]);
    expect(back.encodings.price).toEqual([dictionary, plain, dictionary]);
    expect(back.rows.slice(398, 403).map((r) => r.trade_id)).toEqual(['id-398', 'id-399', 'b1', 'b2', 'b0']);
  });

  it('holds venue_seq as a string column after the others (dictionary when it repeats), on book rows and trades', async () => {
    const rows = deltas
      .slice(0, 900)
      .map((d, i) =>
        Buffer.concat([
          deltaRow(d),
          Buffer.from(new BigInt64Array([BigInt(d.ts + 2)]).buffer),
          venueSeqBytes(i % 5 === 0 ? '' : i % 2 ? `3:${1000 + i}` : 'Zz9:._/+=-'.repeat(5).slice(0, 48)),
        ]),
      );
    const { lines, file } = both(
      'delta',
      FIELD_RECEIVED | FIELD_VENUE_SEQ,
      randomChunks(rng, Buffer.concat(rows), 3000),
      256,
    );
    const back = await readParquet(file);
    expect(back.types).toMatchObject({ received_ts: 'TIMESTAMP WITH TIME ZONE', venue_seq: 'VARCHAR' });
    expect(Object.keys(back.types).slice(-2)).toEqual(['received_ts', 'venue_seq']);
    expect(back.rows).toEqual(lines);
    expect(back.rows.slice(0, 2).map((r) => r.venue_seq)).toEqual(['', '3:1001']);
    const trades = Buffer.concat(
      [0, 1, 2].map((i) =>
        tradeRow({
          ts: T + i,
          sequence: i,
          trade_id: `t${i}`,
          price: '1',
          size: '2',
          side: 'buy',
          venue_seq: `9${i}`,
          venue_side: 'yes',
        }),
      ),
    );
    const traded = both('trade', FIELD_VENUE_SIDE | FIELD_VENUE_SEQ, [trades], 100);
    const backTrades = await readParquet(traded.file);
    expect(Object.keys(backTrades.types)).toEqual([
      'ts',
      'trade_id',
      'price',
      'size',
      'side',
      'venue_side',
      'venue_seq',
    ]);
    expect(backTrades.rows).toEqual(traded.lines);
    expect(backTrades.rows.map((r) => r.venue_seq)).toEqual(['90', '91', '92']);
  });

  it('an answer without rows is a file with the schema and no row group', async () => {
    const { file } = both('trade', 0, [], 100);
    const back = await readParquet(file);
    expect(back.rows).toEqual([]);
    expect(back.rowGroups).toBe(0);
    expect(Object.keys(back.types)).toEqual(['ts', 'trade_id', 'price', 'size', 'side']);
  });
});

describe('Parquet encodings at their edges', () => {
  it('INT64 columns: large jumps (DELTA_BINARY_PACKED over 2^32 and near 2^51) and values beyond it (PLAIN)', async () => {
    const sequences = [0n, 1n, 2n ** 32n, 2n ** 32n + 1n, 2n ** 50n, 2n ** 51n - 1n, 5n, 2n ** 31n, 2n ** 31n - 1n];
    const rows = (list: bigint[]) =>
      list.map((sequence, i) => deltaRow({ ts: T + i, sequence, side: 'bid', price: '1', quantity_delta: '-1' }));
    for (const list of [sequences, [...sequences, 2n ** 63n + 7n, 2n ** 64n - 1n]]) {
      const { lines, file } = both('delta', 0, [Buffer.concat(rows(list))], 1000);
      const back = await readParquet(file);
      expect(back.rows.map((r) => BigInt(String(r.sequence === undefined ? '' : r.sequence)))).toHaveLength(
        list.length,
      );
      expect(back.rows).toEqual(lines);
    }
  });
});

describe('Parquet encodings chosen by the values', () => {
  it('each row group takes the encoding that suits its values: INT64 PLAIN or DELTA_BINARY_PACKED, decimals in a dictionary (indexes bit-packed, or in whole bytes) or PLAIN', async () => {
    const rng = new Rng('parquet-encodings');
    const group = 2048;
    const rows: Delta[] = [];
    let ts = T;
    for (let i = 0; i < group * 10; i++) {
      const g = Math.floor(i / group);
      // Groups 0-7: a timestamp shared by runs of 64 rows, then a jump of up to 2^30 ms (PLAIN compresses the runs;
      // deltas would take 30 bits in every miniblock holding a jump). Groups 8-9: one ms a row (deltas pack it).
      ts += g < 8 ? (i % 64 === 0 ? rng.range(1, 2 ** 30) : 0) : 1;
      // Prices: 40 levels over and over, as a book's snapshots (indexes in whole bytes compress smaller: 8 bits),
      // 3 distinct (bit-packed, 2 bits), 270 levels over and over (16 bits), then every value distinct (PLAIN).
      // Sizes: 100 distinct values in random order (in whole bytes: ZSTD packs them below 7 bits), then 260 (in the
      // first group's winner: 16 bits), then every value distinct.
      const levels = g < 4 ? 40 : g < 6 ? 3 : 270;
      rows.push({
        ts,
        sequence: 7_000_000 + i,
        side: rng.chance(0.5) ? 'bid' : 'ask',
        price: g < 8 ? `${100 + (i % levels)}.125` : `${i}.000000000000000001`,
        quantity_delta: g < 8 ? `${rng.range(1, g < 4 ? 100 : 260)}.5` : `-${rng.range(0, 1e9)}.${rng.range(0, 1e6)}`,
      });
    }
    const { lines, file } = both('delta', 0, [Buffer.concat(rows.map(deltaRow))], group);
    const back = await readParquet(file);
    expect(back.rows).toEqual(lines);
    expect(back.rows).toHaveLength(group * 10);
    const plain = 'PLAIN, RLE';
    const delta = 'DELTA_BINARY_PACKED, RLE';
    const dictionary = 'PLAIN, RLE, RLE_DICTIONARY';
    // INT64: both tried on the first row group and the ninth; the groups between take the last trial's winner.
    expect(back.encodings.ts).toEqual([...Array<string>(8).fill(plain), delta, delta]);
    expect(back.encodings.sequence).toEqual(Array<string>(10).fill(delta));
    expect(back.encodings.price).toEqual([...Array<string>(8).fill(dictionary), plain, plain]);
    expect(back.encodings.quantity_delta).toEqual([...Array<string>(8).fill(dictionary), plain, plain]);
  });
});
