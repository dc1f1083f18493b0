import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { DeclaredTypes, type Problem, type TypeRef } from './declared-types.ts';

const fixture = path.join(import.meta.dirname, 'fixtures', 'shapes.d.ts');
const book: TypeRef = { module: fixture, path: ['Client', 'getBook()'] };
const market: TypeRef = { module: 'kalshi-typescript', path: ['MarketApi', 'getMarket()', 'data'] };
const books: TypeRef = { module: '@polymarket/clob-client', path: ['ClobClient', 'getOrderBooks()'] };
const pmusBook: TypeRef = { module: 'polymarket-us', path: ['PolymarketUS', 'markets', 'book()'] };
const ccxtTicker: TypeRef = { module: 'ccxt', path: ['PredictionTicker'] };

let types: DeclaredTypes;
before(() => {
  types = DeclaredTypes.load([book, market, books, pmusBook, ccxtTicker]);
});

const check = (ref: TypeRef, value: unknown): Problem[] => types.check(types.resolve(ref), value);
const messages = (problems: Problem[]) => problems.map((p) => `${p.at}: ${p.message}`);

function validBook(): Record<string, unknown> {
  return {
    market: 'm1',
    side: 'BUY',
    bids: [{ price: '0.5', size: '10' }],
    depth: null,
    tags: ['a'],
    status: 'open',
    live: true,
    byToken: { t1: 1 },
    candle: [1, 2],
    when: '2026-03-07T12:00:00.000Z',
    maybe: undefined,
  };
}

describe('DeclaredTypes.check against a fixture declaration', () => {
  it('accepts a value that has every required field with its declared type, and unknown extra fields', () => {
    assert.deepEqual(check(book, { ...validBook(), hash: 'h', extra: { note: 'n' }, unlisted: 1 }), []);
  });

  it('reports a missing required field with its declared type', () => {
    const value = validBook();
    delete value.market;
    assert.deepEqual(messages(check(book, value)), ['$.market: missing (declared string)']);
  });

  it('reports a wrong primitive type, nested inside arrays', () => {
    const value = {
      ...validBook(),
      bids: [
        { price: '0.5', size: '1' },
        { price: 0.5, size: '1' },
      ],
    };
    assert.deepEqual(messages(check(book, value)), ['$.bids[1].price: expected string, got number 0.5']);
  });

  it('checks enum members, string literal unions and booleans', () => {
    const value = { ...validBook(), side: 'buy', status: 'paused', live: 'true' };
    assert.deepEqual(messages(check(book, value)), [
      '$.side: expected Side, got string "buy"',
      '$.status: expected "open" | "closed", got string "paused"',
      '$.live: expected boolean, got string "true"',
    ]);
  });

  it('allows null only where declared, and treats null on an optional field as absent', () => {
    assert.deepEqual(check(book, { ...validBook(), depth: null, tags: null, hash: null }), []);
    assert.deepEqual(messages(check(book, { ...validBook(), market: null })), ['$.market: expected string, got null']);
  });

  it('checks optional fields when present, index signatures, tuples and timestamps', () => {
    const value = {
      ...validBook(),
      extra: {},
      byToken: { t1: 1, t2: '2' },
      candle: [1, 'x', 'c', 4],
      when: 'yesterday',
    };
    assert.deepEqual(messages(check(book, value)), [
      '$.extra.note: missing (declared string)',
      '$.byToken.t2: expected number, got string "2"',
      '$.candle[1]: expected number, got string "x"',
      '$.when: expected a timestamp, got string "yesterday"',
    ]);
  });

  it('requires a tuple’s required elements and accepts elements beyond the declared ones', () => {
    assert.deepEqual(messages(check(book, { ...validBook(), candle: [1] })), [
      '$.candle: expected [number, number, (string | undefined)?] (at least 2 elements), got 1',
    ]);
    assert.deepEqual(check(book, { ...validBook(), candle: [1, 2, 'c', 4, 5] }), []);
  });

  it('accepts any answer for a result declared void', () => {
    assert.deepEqual(check({ module: fixture, path: ['Client', 'refresh()'] }, { refreshed: true }), []);
  });

  it('rejects an array where an object is declared and an object where an array is', () => {
    assert.deepEqual(messages(check(book, [])), ['$: expected Book, got an array (0)']);
    assert.deepEqual(messages(check(book, { ...validBook(), bids: {} })), ['$.bids: expected Level[], got an object']);
  });

  it('resolves members and awaited results along a path, and accepts anything for any', () => {
    const list: TypeRef = { module: fixture, path: ['Client', 'nested', 'list()'] };
    assert.equal(types.describe(types.resolve(list)), 'Level[]');
    assert.deepEqual(check({ module: fixture, path: ['Client', 'raw()'] }, { anything: [1] }), []);
  });

  it('refuses a path the declarations do not have', () => {
    assert.throws(
      () => types.resolve({ module: fixture, path: ['Client', 'getBooks()'] }),
      /Client has no member getBooks/,
    );
    assert.throws(() => types.resolve({ module: fixture, path: ['Nope'] }), /exports no Nope/);
  });
});

describe('DeclaredTypes against the libraries’ own declarations', () => {
  it('kalshi-typescript: a Market without updated_time or with a numeric price is refused', () => {
    const problems = messages(check(market, { market: { ticker: 'T', yes_bid_dollars: 0.5 } }));
    assert.ok(problems.includes('$.market.updated_time: missing (declared string)'), problems.join('\n'));
    assert.ok(problems.includes('$.market.yes_bid_dollars: expected string, got number 0.5'), problems.join('\n'));
  });

  it('clob-client: getOrderBooks must answer an array of OrderBookSummary', () => {
    assert.deepEqual(messages(check(books, { books: [] })), ['$: expected OrderBookSummary[], got an object']);
    const summary = {
      market: '0xc',
      asset_id: '1',
      timestamp: '1',
      bids: [{ price: '0.5', size: '1' }],
      asks: [],
      min_order_size: '5',
      tick_size: '0.01',
      neg_risk: false,
      last_trade_price: '0.5',
      hash: 'h',
    };
    assert.deepEqual(check(books, [summary]), []);
    assert.deepEqual(messages(check(books, [{ ...summary, neg_risk: 'false' }])), [
      '$[0].neg_risk: expected boolean, got string "false"',
    ]);
  });

  it('polymarket-us: the book the SDK declares has marketSlug, bids, offers and state at the top', () => {
    const problems = messages(check(pmusBook, { marketData: { marketSlug: 's', bids: [], offers: [] } }));
    assert.ok(problems.includes('$.marketSlug: missing (declared string)'), problems.join('\n'));
  });

  it('ccxt: a PredictionTicker needs its outcome; its numbers may be undefined but not strings', () => {
    assert.deepEqual(messages(check(ccxtTicker, { info: {} })), ['$.outcome: missing (declared string)']);
    assert.deepEqual(check(ccxtTicker, { outcome: 'KX-A', info: {}, last: undefined }), []);
    assert.deepEqual(messages(check(ccxtTicker, { outcome: 'KX-A', info: {}, last: '0.5' })), [
      '$.last: expected Num, got string "0.5"',
    ]);
  });
});
