import { OrderBook, type SnapshotRow } from '@depthgate/client';
import { Rng } from '@depthgate/service-kit';
import { randomChunks, snapshotRow, type Snapshot } from '../testing/row-binary';
import { DigestStream } from './digest';
import { RowRenderer } from './row-binary';

const T = Date.UTC(2026, 10, 15, 0, 5);

/** Snapshot rows through the renderer into a DigestStream, as `format=digest` runs them: the lines, and the books. */
function digestLines(rows: Snapshot[], rng: Rng): { lines: string[]; books: number } {
  const digest = new DigestStream();
  const renderer = new RowRenderer('snapshot', { columnar: digest });
  let text = '';
  for (const chunk of randomChunks(rng, Buffer.concat(rows.map(snapshotRow)), 200)) {
    text += renderer.push(chunk)?.toString('latin1') ?? '';
  }
  renderer.endOfQuery();
  text += digest.finish();
  return { lines: text.split('\n').filter((l) => l !== ''), books: digest.books };
}

describe('format=digest (DigestStream)', () => {
  it('one line per book, its digest the client’s OrderBook.digest() of the same rows', () => {
    const rng = new Rng('digest');
    const books: Snapshot[][] = [];
    for (let b = 0; b < 40; b++) {
      const book: Snapshot[] = [];
      const levels = rng.range(1, 80);
      for (let i = 0; i < levels; i++) {
        const side = i % 2 ? 'ask' : 'bid';
        book.push({
          ts: T + b * 300_000,
          side,
          // Prices of 1 to 4 decimals and some whole ones, quantities up to 18 decimals and large ones.
          price:
            `${side === 'bid' ? rng.range(0, 49) : rng.range(50, 99)}.${rng.range(0, 9999)}`.replace(/\.?0+$/, '') ||
            '0',
          quantity: `${rng.range(0, 1e9)}.${String(rng.range(1, 999_999_999)).padStart(9, '0')}${rng.chance(0.3) ? '000000001' : ''}`,
        });
      }
      // One level per (side, price), as a recorded book has.
      books.push([...new Map(book.map((r) => [`${r.side}${r.price}`, r])).values()]);
    }
    const { lines, books: count } = digestLines(books.flat(), rng);
    expect(count).toBe(books.length);
    expect(lines).toEqual(
      books.map((book) => {
        const rows: SnapshotRow[] = book.map((r) => ({ ...r, ts: new Date(r.ts).toISOString() }));
        const expected = OrderBook.fromSnapshot(rows, { checkCrossed: false });
        return JSON.stringify({ ts: rows[0]?.ts, levels: book.length, digest: expected.digest() });
      }),
    );
  });

  it('a quantity differing in its last decimal gives another digest; no rows give no line', () => {
    const rng = new Rng('digest-2');
    const row = (quantity: string): Snapshot => ({ ts: T, side: 'bid', price: '0.48', quantity });
    const [a] = digestLines([row('150')], rng).lines;
    const [b] = digestLines([row('150.000000000000000001')], rng).lines;
    expect(a).toBe('{"ts":"2026-11-15T00:05:00.000Z","levels":1,"digest":"1894132580178927783"}');
    expect(b).not.toBe(a);
    expect(digestLines([], rng)).toEqual({ lines: [], books: 0 });
  });

  it('a row of quantity 0 is no level: not counted, the digest the book’s without it; a book of such rows only is empty', () => {
    const rng = new Rng('digest-3');
    const at = (ts: number, price: string, quantity: string): Snapshot => ({ ts, side: 'ask', price, quantity });
    const { lines, books } = digestLines(
      [at(T, '0.5', '7'), at(T, '0.6', '0'), at(T + 1, '0.6', '0'), at(T + 2, '0.5', '7')],
      rng,
    );
    const seven = OrderBook.fromSnapshot([{ ts: new Date(T).toISOString(), side: 'ask', price: '0.5', quantity: '7' }]);
    expect(books).toBe(3);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { ts: '2026-11-15T00:05:00.000Z', levels: 1, digest: seven.digest() },
      { ts: '2026-11-15T00:05:00.001Z', levels: 0, digest: '0' },
      { ts: '2026-11-15T00:05:00.002Z', levels: 1, digest: seven.digest() },
    ]);
  });
});
