import { BOOK_LAYOUT } from '@depthgate/history-store';
import { bookRows, levels, rebuildBook } from './book';
import { CorruptStreamError } from './row-binary';

const E18 = 10n ** 18n;

/** A bookQuery row: kind, ts, sequence, side, price, quantity (amounts in whole units). */
function row(
  kind: 1 | 2 | 3 | 4,
  ts: number,
  sequence: number,
  side: 'bid' | 'ask',
  price: bigint,
  quantity: bigint,
): Buffer {
  const b = Buffer.alloc(BOOK_LAYOUT.size);
  b.writeUInt8(kind, BOOK_LAYOUT.kind);
  b.writeBigInt64LE(BigInt(ts), BOOK_LAYOUT.ts);
  b.writeBigUInt64LE(BigInt(sequence), BOOK_LAYOUT.sequence);
  b.writeUInt8(side === 'bid' ? 1 : 2, BOOK_LAYOUT.side);
  const int128 = (v: bigint, o: number) => {
    const u = BigInt.asUintN(128, v);
    b.writeBigUInt64LE(u & (2n ** 64n - 1n), o);
    b.writeBigUInt64LE(u >> 64n, o + 8);
  };
  int128(price, BOOK_LAYOUT.price);
  int128(quantity, BOOK_LAYOUT.quantity);
  return b;
}

const text = (side: Map<bigint, bigint>, order: 'descending' | 'ascending', depth?: number) =>
  levels(side, order, depth);

describe('rebuildBook (rule 7 over one bookQuery read)', () => {
  const snapshot = [
    row(1, 1000, 0, 'bid', (48n * E18) / 100n, 10n * E18),
    row(1, 1000, 0, 'bid', (47n * E18) / 100n, 1n * E18),
    row(1, 1000, 0, 'ask', (52n * E18) / 100n, 5n * E18),
  ];

  it('the snapshot, then the deltas in (ts, sequence) order; a level at zero goes; the last delta is named', () => {
    const raw = Buffer.concat([
      ...snapshot,
      row(2, 1000, 7, 'bid', (48n * E18) / 100n, -4n * E18),
      row(2, 1005, 8, 'ask', (52n * E18) / 100n, -5n * E18),
      row(2, 1005, 9, 'ask', (53n * E18) / 100n, E18 / 4n),
    ]);
    const book = rebuildBook(bookRows(raw, 5000));
    expect(book?.snapshotTs).toBe(1000);
    expect(book?.lastDelta).toEqual({ ts: 1005, sequence: 9n });
    expect(text(book?.bids ?? new Map(), 'descending')).toEqual([
      { price: '0.48', quantity: '6' },
      { price: '0.47', quantity: '1' },
    ]);
    expect(text(book?.asks ?? new Map(), 'ascending')).toEqual([{ price: '0.53', quantity: '0.25' }]);
    expect(text(book?.bids ?? new Map(), 'descending', 1)).toEqual([{ price: '0.48', quantity: '6' }]);
  });

  it('deltas in any order (the read does not sort) are applied in (ts, sequence) order', () => {
    const inOrder = [row(2, 1001, 1, 'bid', 1n, 5n), row(2, 1001, 2, 'bid', 1n, -5n), row(2, 1002, 3, 'bid', 1n, 7n)];
    const a = rebuildBook(bookRows(Buffer.concat([...snapshot, ...inOrder]), 5000));
    const b = rebuildBook(
      bookRows(Buffer.concat([inOrder[2] as Buffer, ...snapshot, inOrder[1] as Buffer, inOrder[0] as Buffer]), 5000),
    );
    expect(b).toEqual(a);
    expect(a?.bids.get(1n)).toBe(7n);
  });

  it('restarts empty at the end of a gap after the snapshot; nothing to start from: undefined', () => {
    const raw = Buffer.concat([...snapshot, row(2, 1500, 1, 'bid', 9n, 3n), row(2, 2500, 2, 'ask', 9n, 4n)]);
    const book = rebuildBook(bookRows(raw, 5000), 2000);
    expect(book?.snapshotTs).toBeNull();
    expect([...(book?.bids ?? [])]).toEqual([]);
    expect([...(book?.asks ?? [])]).toEqual([[9n, 4n]]);
    expect(rebuildBook(bookRows(raw, 5000), 900)?.snapshotTs).toBe(1000);
    expect(rebuildBook(bookRows(Buffer.concat([row(2, 1500, 1, 'bid', 9n, 3n)]), 5000))).toBeUndefined();
    expect(bookRows(raw, 5000).snapshotTs).toBe(1000);
    expect(bookRows(row(2, 1, 1, 'bid', 1n, 1n), 5000).snapshotTs).toBeNull();
  });

  it('of several books in the read, starts from the newest; gap rows carry their bounds', () => {
    const older = [row(1, 400, 0, 'bid', 1n, 1n), row(1, 700, 0, 'ask', 2n, 2n)];
    const gaps = [
      row(3, 4000, 6000, 'bid', 1_700_000n * E18, 0n),
      row(3, 3000, 9000, 'bid', 1_800_000n * E18, 0n),
      row(3, 800, 900, 'bid', 950n * E18, 0n),
      row(3, 700, 850, 'bid', 940n * E18, 0n),
    ];
    const rows = bookRows(Buffer.concat([...older, ...gaps, ...snapshot, row(2, 600, 1, 'bid', 1n, 9n)]), 5000);
    expect(rows.snapshotTs).toBe(1000);
    expect(rows.snapshot).toHaveLength(3);
    expect(rows.covering).toEqual({ fromTs: 3000, toTs: 9000, detectedAt: 1_800_000 });
    expect(rows.ended).toEqual({ fromTs: 800, toTs: 900, detectedAt: 950 });
    // The delta at 600 is before the snapshot: not applied.
    expect(rebuildBook(rows)?.bids.get(1n)).toBeUndefined();
  });

  it('rejects what cannot be a row (an exception text appended by ClickHouse)', () => {
    expect(() => bookRows(Buffer.concat([...snapshot, Buffer.from('Code: 159. DB::Exception')]), 5000)).toThrow(
      CorruptStreamError,
    );
    const bad = row(1, 1000, 0, 'bid', 1n, 1n);
    bad[BOOK_LAYOUT.kind] = 7;
    expect(() => bookRows(bad, 5000)).toThrow(CorruptStreamError);
  });
});
