import { Rng } from '@depthgate/service-kit';
import { deltaRow, randomChunks, tradeRow } from '../../testing/row-binary';
import { layoutOf } from './layouts';
import { RowRenderer } from './renderer';
import { RowChunks } from './row-chunks';

describe('RowChunks: the rows of one query as they arrived', () => {
  const t = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
  const rows = Array.from({ length: 40 }, (_, i) =>
    deltaRow({ ts: t + Math.floor(i / 3), sequence: i, side: 'bid', price: '1', quantity_delta: `${i}` }),
  );
  const all = Buffer.concat(rows);

  it('finds each row, the first rows and the tail however the rows were chunked', () => {
    const rng = new Rng('row-chunks');
    for (let trial = 0; trial < 50; trial++) {
      const held = new RowChunks(49);
      for (const chunk of randomChunks(rng, all, 150)) held.add(chunk);
      expect(held.rows).toBe(40);
      for (let i = 0; i < 40; i++) expect(held.row(i)).toEqual(rows[i]);
      const n = rng.range(1, 40);
      const first = held.first(n);
      expect([first.rows, first.bytes, Buffer.concat(first.chunks)]).toEqual([n, n * 49, all.subarray(0, n * 49)]);
      expect(held.from(n - 1)).toEqual(all.subarray((n - 1) * 49));
      const more = new RowChunks(49);
      more.add(all.subarray(0, 49 * 2));
      expect(Buffer.concat(first.concat(more).chunks)).toEqual(
        Buffer.concat([all.subarray(0, n * 49), rows[0] as Buffer, rows[1] as Buffer]),
      );
    }
  });

  it('counts whole rows only (a partial last row is the renderer’s to reject)', () => {
    const held = new RowChunks(49);
    held.add(all.subarray(0, 49 * 3 + 10));
    expect([held.rows, held.bytes]).toEqual([3, 49 * 3 + 10]);
    const c = new RowRenderer('delta');
    c.push(held.chunks);
    expect(() => c.endOfQuery()).toThrow(/middle of a row/);
  });

  it('renders several chunks at once as it renders them one by one', () => {
    const rng = new Rng('push-many');
    const chunks = randomChunks(rng, all, 120);
    const one = new RowRenderer('delta', { format: 'ndjson' });
    const byOne = chunks.map((c) => one.push(c)?.toString('latin1') ?? '').join('');
    const many = new RowRenderer('delta', { format: 'ndjson' });
    const byMany = [chunks.slice(0, 5), chunks.slice(5, 6), chunks.slice(6)]
      .map((group) => many.push(group)?.toString('latin1') ?? '')
      .join('');
    expect(byMany).toBe(byOne);
    expect(byOne.split('\n')).toHaveLength(41);
    expect(many.rows).toBe(40);
  });
});

describe('RowChunks: rows of a variable width (trades: their id last)', () => {
  const t = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
  // Ids of every length a trade id may have, 128 (two length bytes) among them.
  const rows = Array.from({ length: 60 }, (_, i) =>
    tradeRow({
      ts: t + i,
      sequence: i,
      trade_id: 'x'.repeat(i === 7 ? 128 : (i * 13) % 120),
      price: '1',
      size: `${i + 1}`,
      side: 'buy',
    }),
  );
  const all = Buffer.concat(rows);
  const layout = layoutOf('trade', 'json');

  it('finds each row, the first rows and the tail however the rows were chunked', () => {
    const rng = new Rng('row-chunks-variable');
    for (let trial = 0; trial < 50; trial++) {
      const held = new RowChunks(layout);
      for (const chunk of randomChunks(rng, all, 90)) held.add(chunk);
      expect(held.rows).toBe(60);
      for (let i = 0; i < 60; i++) expect(held.row(i)).toEqual(rows[i]);
      const n = rng.range(1, 60);
      const first = held.first(n);
      expect(first.rows).toBe(n);
      expect(Buffer.concat(first.chunks)).toEqual(Buffer.concat(rows.slice(0, n)));
      expect(held.from(n - 1)).toEqual(Buffer.concat(rows.slice(n - 1)));
    }
  });

  it('keeps the ends of thousands of rows (across the segments they are held in)', () => {
    const many = Array.from({ length: 2500 }, (_, i) =>
      tradeRow({ ts: t + i, sequence: i, trade_id: `t${i}`, price: '1', size: `${i + 1}`, side: 'sell' }),
    );
    const held = new RowChunks(layout);
    for (const chunk of randomChunks(new Rng('row-chunks-segments'), Buffer.concat(many), 5000)) held.add(chunk);
    expect(held.rows).toBe(2500);
    for (const i of [0, 1023, 1024, 1025, 2047, 2048, 2499]) expect(held.row(i)).toEqual(many[i]);
    expect(Buffer.concat(held.first(2049).chunks)).toEqual(Buffer.concat(many.slice(0, 2049)));
    expect(held.from(1024)).toEqual(Buffer.concat(many.slice(1024)));
  });

  it('counts whole rows only', () => {
    const held = new RowChunks(layout);
    held.add(all.subarray(0, (rows[0] as Buffer).length + (rows[1] as Buffer).length + 5));
    expect(held.rows).toBe(2);
  });
});
