import { ASK, BID, LocalBook } from './book';
import { DecimalError, formatDecimal, formatFixed, fractionDigits } from './decimal';

describe('LocalBook', () => {
  it('sets absolute levels keyed by the exact price, keeping the venue’s spelling; zero removes', () => {
    const book = new LocalBook();
    book.setLevel(BID, '0.4800', '150.00');
    book.setLevel(BID, '0.48', '120.5');
    expect(book.bids.size).toBe(1);
    expect(book.bids.get('0.48')).toMatchObject({ s: '120.5', p: '0.48' });
    book.setLevel(BID, '0.480', '0.000');
    expect(book.bids.size).toBe(0);
    expect(() => book.setLevel(ASK, '0.5', '-1')).toThrow(DecimalError);
    expect(() => book.setLevel(ASK, '0.5', '1e3')).toThrow(DecimalError);
  });

  it('adds signed changes exactly and refuses one that would go below zero', () => {
    const book = new LocalBook();
    const fmt = (q: bigint) => formatFixed(q, 2);
    expect(book.addToLevel(BID, '0.0800', '300.00', fmt)).toBe(true);
    expect(book.addToLevel(BID, '0.0800', '-20.25', fmt)).toBe(true);
    expect(book.bids.get('0.08')).toMatchObject({ s: '279.75', p: '0.0800' });
    expect(book.addToLevel(BID, '0.0800', '-300', fmt)).toBe(false);
    expect(book.bids.get('0.08')?.s).toBe('279.75');
    expect(book.addToLevel(BID, '0.0800', '-279.75', fmt)).toBe(true);
    expect(book.bids.has('0.08')).toBe(false);
  });

  it('orders a side by price value, not by text', () => {
    const book = new LocalBook();
    for (const p of ['9.5', '10', '0.5', '100.25']) book.setLevel(ASK, p, '1');
    expect(book.sorted(ASK, 'asc').map((l) => l.p)).toEqual(['0.5', '9.5', '10', '100.25']);
    expect(book.sorted(ASK, 'desc').map((l) => l.p)).toEqual(['100.25', '10', '9.5', '0.5']);
  });

  it('gives the canonical prices with the levels, ordered exactly where doubles would tie', () => {
    const book = new LocalBook();
    // Equal as doubles: a sort by Number(price) leaves these two in insertion order.
    for (const p of ['0.100000000000000001', '0.1000', '0.2']) book.setLevel(BID, p, '1');
    expect(book.sortedEntries(BID, 'desc').map(([price, level]) => [price, level.p])).toEqual([
      ['0.2', '0.2'],
      ['0.100000000000000001', '0.100000000000000001'],
      ['0.1', '0.1000'],
    ]);
  });
});

describe('fixed-place formatting', () => {
  it('pads to the venue’s places and never drops a digit', () => {
    expect(formatFixed(300n * 10n ** 18n, 2)).toBe('300.00');
    expect(formatFixed(0n, 2)).toBe('0.00');
    expect(formatFixed(-205n * 10n ** 17n, 2)).toBe('-20.50');
    expect(formatFixed(12345n * 10n ** 15n, 2)).toBe('12.345');
    expect(fractionDigits('20.25')).toBe(2);
    expect(fractionDigits('3')).toBe(0);
    expect(formatDecimal(1n)).toBe('0.000000000000000001');
  });
});
