import { clobBookHash, clobHashRevision, clobHashedText, type ClobBookSummary } from './clob-hash';

/** py-clob-client 0.34.4 tests/test_utilities.py (the current recipe's official vectors). */
const BOOK: ClobBookSummary = {
  market: '0xaabbcc',
  asset_id: '100',
  timestamp: '123456789',
  bids: [
    { price: '0.3', size: '100' },
    { price: '0.4', size: '100' },
  ],
  asks: [
    { price: '0.6', size: '100' },
    { price: '0.7', size: '100' },
  ],
  min_order_size: '100',
  tick_size: '0.01',
  neg_risk: false,
  last_trade_price: '0.5',
};

describe('Polymarket CLOB book hash', () => {
  it('reproduces the official known answers of the current recipe', () => {
    expect(clobHashedText(BOOK)).toBe(
      '{"market":"0xaabbcc","asset_id":"100","timestamp":"123456789","hash":"","bids":[{"price":"0.3","size":"100"},{"price":"0.4","size":"100"}],"asks":[{"price":"0.6","size":"100"},{"price":"0.7","size":"100"}],"min_order_size":"100","tick_size":"0.01","neg_risk":false,"last_trade_price":"0.5"}',
    );
    expect(clobBookHash(BOOK)).toBe('0458ea5755c9f73d64a14636fa5c36ed460ec394');
    expect(clobBookHash({ ...BOOK, timestamp: '', bids: [], asks: [] })).toBe(
      '74c6a7c81c1d572f1c877b7d3e25b80c336d8a6e',
    );
  });

  it('keeps each revision’s fields and order', () => {
    expect(Object.keys(JSON.parse(clobHashedText(BOOK, '2025-07')) as object)).toEqual([
      'market',
      'asset_id',
      'timestamp',
      'hash',
      'bids',
      'asks',
      'min_order_size',
      'tick_size',
      'neg_risk',
    ]);
    expect(Object.keys(JSON.parse(clobHashedText(BOOK, '2024-09')) as object)).toEqual([
      'market',
      'asset_id',
      'timestamp',
      'hash',
      'bids',
      'asks',
    ]);
  });

  it('names the revision that reproduces a hash; any change of the book or of a setting breaks it', () => {
    expect(clobHashRevision(BOOK, '0458ea5755c9f73d64a14636fa5c36ed460ec394')).toBe('2025-12');
    expect(clobHashRevision(BOOK, clobBookHash(BOOK, '2025-07'))).toBe('2025-07');
    expect(clobHashRevision(BOOK, clobBookHash(BOOK, '2024-09'))).toBe('2024-09');
    for (const changed of [
      { ...BOOK, bids: [{ price: '0.3', size: '100' }] },
      { ...BOOK, asks: [...BOOK.asks].reverse() },
      { ...BOOK, bids: [{ price: '0.30', size: '100' }, ...BOOK.bids.slice(1)] },
      { ...BOOK, timestamp: '123456790' },
      { ...BOOK, last_trade_price: '0.51' },
      { ...BOOK, neg_risk: true },
    ]) {
      expect(clobHashRevision(changed, '0458ea5755c9f73d64a14636fa5c36ed460ec394')).toBeUndefined();
    }
  });
});
