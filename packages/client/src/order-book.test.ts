import { thrownBy } from '@depthgate/test-utils';
import { bookChecksum, checksumText, crc32 } from './checksum';
import { Decimal } from './decimal';
import { BookError, DataError } from './errors';
import { OrderBook } from './order-book';
import type { DeltaRow, Side, SnapshotRow } from './rows';

const T0 = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
const iso = (ms: number) => new Date(ms).toISOString();
const snap = (ts: number, side: Side, price: string, quantity: string): SnapshotRow => ({
  ts: iso(ts),
  side,
  price,
  quantity,
});
const delta = (ts: number, sequence: number, side: Side, price: string, quantity_delta: string): DeltaRow => ({
  ts: iso(ts),
  sequence,
  side,
  price,
  quantity_delta,
});
const BOOK = [
  snap(T0, 'bid', '0.47', '100'),
  snap(T0, 'bid', '0.48', '150'),
  snap(T0, 'ask', '0.5', '20.25'),
  snap(T0, 'ask', '0.51', '7'),
];

describe('OrderBook: rule 7', () => {
  it('loads a snapshot: bids best (highest) first, asks best (lowest) first', () => {
    const book = OrderBook.fromSnapshot(BOOK);
    expect(book.bids()).toEqual([
      { price: '0.48', quantity: '150' },
      { price: '0.47', quantity: '100' },
    ]);
    expect(book.asks()).toEqual([
      { price: '0.5', quantity: '20.25' },
      { price: '0.51', quantity: '7' },
    ]);
    expect(book.best()).toEqual({ bid: { price: '0.48', quantity: '150' }, ask: { price: '0.5', quantity: '20.25' } });
    expect(book.spread()).toBe('0.02');
    expect(book.mid()).toBe('0.49');
    expect(book.ts).toBe(T0);
    expect(book.snapshotTs).toBe(T0);
    expect(book.bids(1)).toEqual([{ price: '0.48', quantity: '150' }]);
  });

  it('adds each delta to the level at (side, price), removes a level at zero, creates new levels', () => {
    const book = OrderBook.fromSnapshot(BOOK);
    book.apply(delta(T0, 1, 'bid', '0.48', '-150'));
    book.apply(delta(T0, 2, 'bid', '0.49', '5.5'));
    book.apply(delta(T0 + 1, 3, 'ask', '0.5', '-0.25'));
    book.apply(delta(T0 + 1, 4, 'ask', '0.50', '0.000000000000000001'));
    book.settle();
    expect(book.bids()).toEqual([
      { price: '0.49', quantity: '5.5' },
      { price: '0.47', quantity: '100' },
    ]);
    expect(book.asks()[0]).toEqual({ price: '0.5', quantity: '20.000000000000000001' });
    expect(book.quantityAt('bid', '0.4800')).toBeUndefined();
    expect(book.quantityAt('ask', '0.5000')).toBe('20.000000000000000001');
    expect(book.ts).toBe(T0 + 1);
    expect(book.lastSequence).toBe(4);
  });

  it('fromRows orders deltas with equal ts by sequence, whatever order they come in', () => {
    // At one ts: +5 (seq 10), then -155 (seq 12) — in the other order the level would go negative first.
    const deltas = [delta(T0 + 5, 12, 'bid', '0.48', '-155'), delta(T0 + 5, 10, 'bid', '0.48', '5')];
    const book = OrderBook.fromRows(BOOK, deltas);
    expect(book.bids()).toEqual([{ price: '0.47', quantity: '100' }]);
    // Applied as given, the first already fails: never a silent reordering.
    expect(thrownBy(() => OrderBook.fromSnapshot(BOOK).applyAll(deltas), BookError).code).toBe('negative_level');
    const given = [delta(T0 + 5, 12, 'bid', '0.48', '1'), delta(T0 + 5, 10, 'bid', '0.48', '1')];
    const err = thrownBy(() => OrderBook.fromSnapshot(BOOK).applyAll(given), BookError);
    expect(err.code).toBe('out_of_order');
    expect(err.where).toMatchObject({ ts: T0 + 5, sequence: 10 });
  });

  it('a delta that drives a level negative is an error naming where', () => {
    const book = OrderBook.fromSnapshot(BOOK, { exchange: 'venue_b', ticker: 'KXT' });
    const err = thrownBy(() => book.apply(delta(T0 + 7, 3, 'bid', '0.48', '-150.01')), BookError);
    expect(err.code).toBe('negative_level');
    expect(err.where).toEqual({
      exchange: 'venue_b',
      ticker: 'KXT',
      ts: T0 + 7,
      sequence: 3,
      side: 'bid',
      price: '0.48',
    });
    expect(err.message).toContain('150 to -0.01');
    const missing = thrownBy(() => OrderBook.fromSnapshot(BOOK).apply(delta(T0, 1, 'ask', '0.9', '-1')), BookError);
    expect(missing.code).toBe('negative_level');
    const negativeSnapshot = thrownBy(() => OrderBook.fromSnapshot([snap(T0, 'bid', '0.4', '-1')]), BookError);
    expect(negativeSnapshot.code).toBe('negative_level');
  });

  it('a crossed book is an error once the moment is complete, not while its deltas apply', () => {
    const book = OrderBook.fromSnapshot(BOOK);
    // The book moves up within one ts: a bid at the old best ask is added before that ask is taken away.
    book.apply(delta(T0 + 10, 1, 'bid', '0.5', '3'));
    book.apply(delta(T0 + 10, 2, 'ask', '0.5', '-20.25'));
    book.apply(delta(T0 + 11, 3, 'bid', '0.51', '1'));
    const err = thrownBy(() => book.apply(delta(T0 + 12, 4, 'bid', '0.2', '1')), BookError);
    expect(err.code).toBe('crossed_book');
    expect(err.where.ts).toBe(T0 + 11);
    const settled = OrderBook.fromSnapshot(BOOK);
    settled.apply(delta(T0 + 10, 1, 'bid', '0.5', '3'));
    expect(thrownBy(() => settled.settle(), BookError).code).toBe('crossed_book');
    expect(thrownBy(() => OrderBook.fromSnapshot([...BOOK, snap(T0, 'bid', '0.6', '1')]), BookError).code).toBe(
      'crossed_book',
    );
    expect(() => OrderBook.fromSnapshot([...BOOK, snap(T0, 'bid', '0.6', '1')], { checkCrossed: false })).not.toThrow();
  });

  it('refuses deltas older than the book, repeated sequences, deltas before any snapshot, mixed snapshots', () => {
    const book = OrderBook.fromSnapshot(BOOK);
    expect(thrownBy(() => book.apply(delta(T0 - 1, 1, 'bid', '0.48', '1')), BookError).code).toBe('out_of_order');
    book.apply(delta(T0, 5, 'bid', '0.48', '1'));
    expect(thrownBy(() => book.apply(delta(T0, 5, 'bid', '0.48', '1')), BookError).code).toBe('out_of_order');
    expect(thrownBy(() => new OrderBook().apply(delta(T0, 1, 'bid', '0.48', '1')), BookError).code).toBe('no_snapshot');
    expect(
      thrownBy(() => OrderBook.fromSnapshot([BOOK[0] as SnapshotRow, snap(T0 + 1, 'ask', '0.6', '1')]), BookError).code,
    ).toBe('out_of_order');
    // After a new snapshot, a delta older than it is refused even when it repeats the previous delta's ts text.
    const later = OrderBook.fromSnapshot(BOOK);
    later.apply(delta(T0 + 3, 1, 'bid', '0.48', '1'));
    later.loadSnapshot(BOOK.map((r) => ({ ...r, ts: iso(T0 + 9) })));
    expect(thrownBy(() => later.apply(delta(T0 + 3, 2, 'bid', '0.48', '1')), BookError).code).toBe('out_of_order');
  });

  it('bad decimals are invalid_decimal, never a level', () => {
    const book = OrderBook.fromSnapshot(BOOK);
    for (const bad of ['1e2', '', '0.0000000000000000001', 'abc']) {
      expect(thrownBy(() => book.apply(delta(T0 + 1, 1, 'bid', '0.48', bad)), DataError).code).toBe('invalid_decimal');
    }
    expect(thrownBy(() => book.apply(delta(T0 + 1, 2, 'bid', '4.8e-1', '1')), DataError).code).toBe('invalid_decimal');
    expect(book.bids()[0]).toEqual({ price: '0.48', quantity: '150' });
    // A refused delta left nothing behind: the same sequence still applies.
    book.apply(delta(T0 + 1, 1, 'bid', '0.48', '1'));
    expect(book.bids()[0]).toEqual({ price: '0.48', quantity: '151' });
  });

  it('agrees with a plain model (Map of exact Decimals) over thousands of random deltas', () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const model = { bid: new Map<string, Decimal>(), ask: new Map<string, Decimal>() };
    const rows: SnapshotRow[] = [];
    for (let i = 1; i <= 20; i++) {
      const bid = `0.${String(i).padStart(2, '0')}`;
      const ask = `0.${String(50 + i)}`;
      rows.push(snap(T0, 'bid', bid, `${i}.5`), snap(T0, 'ask', ask, String(i)));
      model.bid.set(bid, Decimal.parse(`${i}.5`));
      model.ask.set(ask, Decimal.parse(String(i)));
    }
    const book = OrderBook.fromSnapshot(rows);
    let ts = T0;
    for (let seq = 1; seq <= 5000; seq++) {
      if (rand(3) === 0) ts += 1 + rand(1000);
      const side: Side = rand(2) ? 'bid' : 'ask';
      const price = side === 'bid' ? `0.${String(1 + rand(45)).padStart(2, '0')}` : `0.${51 + rand(48)}`;
      const have = model[side].get(price) ?? Decimal.ZERO;
      // Remove the level, add to it, or take part of it.
      const change =
        rand(4) === 0 && !have.isZero()
          ? have.neg()
          : rand(2) && !have.isZero()
            ? have.half().neg()
            : Decimal.parse(`${rand(100)}.${rand(1000)}`);
      const after = have.add(change);
      if (after.isZero()) model[side].delete(price);
      else model[side].set(price, after);
      book.apply(delta(ts, seq, side, price, change.toString()));
    }
    book.settle();
    const expected = (side: Side, desc: boolean) =>
      [...model[side]]
        .sort(([a], [b]) => Decimal.parse(a).cmp(b) * (desc ? -1 : 1))
        .map(([price, q]) => ({ price: Decimal.parse(price).toString(), quantity: q.toString() }));
    expect(book.bids()).toEqual(expected('bid', true));
    expect(book.asks()).toEqual(expected('ask', false));
    expect(book.clone().equals(book)).toBe(true);
  });
});

describe('equalsSnapshot', () => {
  it('is true exactly when the rows hold the book’s levels, by value', () => {
    const book = OrderBook.fromSnapshot(BOOK);
    expect(book.equalsSnapshot(BOOK)).toBe(true);
    expect(
      book.equalsSnapshot(
        BOOK.map((r) => ({
          ...r,
          price: `${r.price}00`,
          quantity: r.quantity.includes('.') ? `${r.quantity}0` : `${r.quantity}.0`,
        })),
      ),
    ).toBe(true);
    expect(book.equalsSnapshot([...BOOK, snap(T0, 'bid', '0.1', '0')])).toBe(true);
    expect(book.equalsSnapshot(BOOK.slice(1))).toBe(false);
    expect(book.equalsSnapshot([...BOOK, snap(T0, 'bid', '0.1', '1')])).toBe(false);
    expect(book.equalsSnapshot(BOOK.map((r, i) => (i === 0 ? { ...r, quantity: '100.000001' } : r)))).toBe(false);
    // A price given twice in place of another level is not the same book.
    expect(book.equalsSnapshot([BOOK[0], BOOK[0], BOOK[2], BOOK[3]] as SnapshotRow[])).toBe(false);
    expect(book.equalsSnapshot(BOOK.map((r) => ({ ...r, side: r.side === 'bid' ? 'ask' : 'bid' })))).toBe(false);
  });

  it('compares a level by its canonical text, and by value where the text differs: a last decimal is a difference', () => {
    const book = OrderBook.fromSnapshot([...BOOK.slice(0, 3), snap(T0, 'ask', '0.51', '7.000000000000000001')]);
    // Every level's text known (as after a caller read the book), then one level changed by a delta.
    expect(book.asks()[1]).toEqual({ price: '0.51', quantity: '7.000000000000000001' });
    book.apply(delta(T0 + 1, 1, 'bid', '0.48', '0.000000000000000001'));
    const rows = [
      snap(T0, 'bid', '0.47', '100'),
      snap(T0, 'bid', '0.48', '150.000000000000000001'),
      snap(T0, 'ask', '0.5', '20.25'),
      snap(T0, 'ask', '0.51', '7.000000000000000001'),
    ];
    expect(book.equalsSnapshot(rows)).toBe(true);
    const at = (i: number, quantity: string) => rows.map((r, j) => (j === i ? { ...r, quantity } : r));
    // The changed level: its old quantity, and one unit off in the last decimal either way.
    expect(book.equalsSnapshot(at(1, '150'))).toBe(false);
    expect(book.equalsSnapshot(at(1, '150.000000000000000002'))).toBe(false);
    // A level whose text is known: one unit off in the last decimal, and equal by value in another spelling.
    expect(book.equalsSnapshot(at(3, '7'))).toBe(false);
    expect(book.equalsSnapshot(at(3, '7.000000000000000002'))).toBe(false);
    expect(book.equalsSnapshot(at(3, '07.000000000000000001'))).toBe(true);
    expect(book.equalsSnapshot(at(2, '20.250'))).toBe(true);
    // A missing level, an extra level, a zero row, and a level given twice (in place of another, and on top).
    expect(book.equalsSnapshot(rows.slice(0, 3))).toBe(false);
    expect(book.equalsSnapshot([...rows, snap(T0, 'ask', '0.52', '1')])).toBe(false);
    expect(book.equalsSnapshot([...rows, snap(T0, 'ask', '0.52', '0')])).toBe(true);
    expect(book.equalsSnapshot([...rows, snap(T0, 'ask', '0.51', '0')])).toBe(true);
    expect(book.equalsSnapshot([rows[0], rows[1], rows[2], rows[2]] as SnapshotRow[])).toBe(false);
    expect(book.equalsSnapshot([...rows, rows[3] as SnapshotRow])).toBe(false);
  });
});

describe('matchesLines', () => {
  it('is true only for the book’s own levels in the service’s text and order', () => {
    const book = OrderBook.fromSnapshot(BOOK);
    book.apply(delta(T0 + 1, 1, 'ask', '0.51', '0.000000000000000001'));
    const ts = iso(T0 + 2);
    const text = (rows: [Side, string, string][], eol = '\n') =>
      rows.map(([side, price, quantity]) => JSON.stringify({ ts, side, price, quantity }) + eol).join('');
    const rows: [Side, string, string][] = [
      ['bid', '0.47', '100'],
      ['bid', '0.48', '150'],
      ['ask', '0.5', '20.25'],
      ['ask', '0.51', '7.000000000000000001'],
    ];
    expect(book.matchesLines(text(rows), ts)).toBe(true);
    expect(book.matchesLines(text(rows), iso(T0 + 3))).toBe(false);
    expect(book.matchesLines(text(rows.map((r, i) => (i === 3 ? [r[0], r[1], '7.000000000000000002'] : r))), ts)).toBe(
      false,
    );
    expect(book.matchesLines(text(rows.map((r, i) => (i === 3 ? [r[0], r[1], '7'] : r))), ts)).toBe(false);
    expect(book.matchesLines(text(rows.slice(1)), ts)).toBe(false);
    expect(book.matchesLines(text([...rows, ['ask', '0.52', '1']]), ts)).toBe(false);
    // Equal by value but not the service's text (order, spelling, line ending): false, for equalsSnapshot to decide.
    expect(book.matchesLines(text([...rows].reverse()), ts)).toBe(false);
    expect(book.matchesLines(text(rows.map((r, i) => (i === 0 ? [r[0], r[1], '100.0'] : r))), ts)).toBe(false);
    expect(book.matchesLines(text(rows, '\r\n'), ts)).toBe(false);
  });
});

describe('checksum', () => {
  it('is the CRC-32 of the interleaved top levels in canonical text', () => {
    expect(crc32('')).toBe(0);
    expect(crc32('123456789')).toBe(0xcbf43926); // the CRC-32 check value
    expect(crc32('é€😀')).toBe(crc32(String.fromCharCode(0xe9, 0x20ac, 0xd83d, 0xde00)));
    const book = OrderBook.fromSnapshot(BOOK);
    expect(checksumText(book.bids(), book.asks())).toBe('0.48:150:0.5:20.25:0.47:100:0.51:7');
    expect(book.checksum()).toBe(crc32('0.48:150:0.5:20.25:0.47:100:0.51:7'));
    expect(book.checksum(1)).toBe(crc32('0.48:150:0.5:20.25'));
    // Another party's book in the venue's text (trailing zeros) gives the same checksum.
    expect(
      bookChecksum(
        [
          { price: '0.4800', quantity: '150.00' },
          { price: '0.4700', quantity: '100' },
        ],
        [
          { price: '0.5000', quantity: '20.25' },
          { price: '0.5100', quantity: '7.0' },
        ],
      ),
    ).toBe(book.checksum());
    book.apply(delta(T0 + 1, 1, 'ask', '0.51', '-0.5'));
    expect(book.checksum()).not.toBe(crc32('0.48:150:0.5:20.25:0.47:100:0.51:7'));
    expect(new OrderBook().checksum()).toBe(0);
  });
});
