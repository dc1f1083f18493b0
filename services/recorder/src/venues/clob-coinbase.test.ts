import { clobBookHash, type ClobBookSummary } from '@depthgate/feeds';
import { placed, sessionHarness as harness } from '../testing/support';
import type { RestClient } from './rest';
import { venueAClobProtocol, venueAClobTrade } from './venue-a-clob';
import { venueDProtocol, venueDRecorder, venueDTrade, venueDTrades } from './venue-d';

/** A REST client answering from a table of path → body (and recording the paths asked). */
function fakeRest(answer: (path: string) => unknown): RestClient & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    json: async (path: string) => {
      asked.push(path);
      return answer(path);
    },
  } as unknown as RestClient & { asked: string[] };
}

const flush = () => new Promise((r) => setImmediate(r));

// ---------------------------------------------------------------------------------------------------------------
// Polymarket CLOB

const ASSET = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const SETTINGS = { min_order_size: '5', tick_size: '0.01', neg_risk: false };

/** A summary in the venue's spelling and order (bids ascending, asks descending: best last). */
function summary(ts: number, bids: [string, string][], asks: [string, string][], ltp = ''): ClobBookSummary {
  return {
    market: '0xabc',
    asset_id: ASSET,
    timestamp: String(ts),
    bids: bids.map(([price, size]) => ({ price, size })),
    asks: asks.map(([price, size]) => ({ price, size })),
    ...SETTINGS,
    last_trade_price: ltp,
  };
}

function bookMessage(s: ClobBookSummary, hash = clobBookHash(s)) {
  return { event_type: 'book', ...s, hash };
}

function clob(rest = fakeRest(() => ({}))) {
  const protocol = placed(venueAClobProtocol({ subscribeBatch: 100, trades: true }), 'venue_a_clob');
  const h = harness(protocol, [ASSET], { trades: true, rest });
  h.session.subscribe([ASSET]);
  return h;
}

describe('Polymarket CLOB session', () => {
  it('subscribes with type market, then by operation; records the first book and checks every hash', () => {
    const h = clob();
    h.session.subscribe(['42']);
    expect(h.sent).toEqual([
      { assets_ids: [ASSET], type: 'market' },
      { assets_ids: ['42'], operation: 'subscribe' },
    ]);
    const first = summary(1000, [['0.4', '10']], [['0.6', '5']]);
    // Initial books come as an array of book events.
    h.raw(JSON.stringify([bookMessage(first)]));
    expect(h.sink.of('snapshot').map((r) => [r.ts, r.side, r.price, r.quantity])).toEqual([
      [1001, 'bid', '0.4', '10'],
      [1001, 'ask', '0.6', '5'],
    ]);
    // One entry per changed level, each with the hash of the book after it, at the message's timestamp.
    const after1 = summary(
      2000,
      [['0.4', '10']],
      [
        ['0.6', '5'],
        ['0.55', '7'],
      ],
    );
    const after2 = summary(
      2000,
      [],
      [
        ['0.6', '5'],
        ['0.55', '7'],
      ],
    );
    h.msg({
      event_type: 'price_change',
      market: '0xabc',
      timestamp: '2000',
      price_changes: [
        { asset_id: ASSET, price: '0.55', size: '7', side: 'SELL', hash: clobBookHash(after1) },
        { asset_id: '999', price: '0.1', size: '1', side: 'BUY', hash: 'x' },
        { asset_id: ASSET, price: '0.4', size: '0', side: 'BUY', hash: clobBookHash(after2) },
      ],
    });
    expect(h.sink.of('delta').map((r) => [r.ts, r.side, r.price, r.quantityDelta])).toEqual([
      [2000, 'ask', '0.55', '7'],
      [2000, 'bid', '0.4', '-10'],
    ]);
    expect(h.checksums).toEqual(['match', 'match', 'match']);
    expect(h.recs.get(ASSET)?.verifiedTs).toBe(2000);
    expect(h.sink.of('gap')).toEqual([]);
    // No sequence in the protocol [V]: no venue_seq. The book's snapshot and the hashes are verification points:
    // the snapshot's written, the hash's within the same second held, then written by the sweep.
    expect(new Set(h.sink.rows.map((r) => r.venueSeq))).toEqual(new Set(['']));
    expect(h.sink.verifications.map((v) => [v.ts, v.method])).toEqual([[1001, 'snapshot']]);
    h.clock.now += 1000;
    h.recs.get(ASSET)?.sweep(h.clock.now);
    expect(h.sink.verifications.map((v) => [v.ts, v.method])).toEqual([
      [1001, 'snapshot'],
      [2000, 'checksum'],
    ]);
  });

  it('takes the tick size and last trade price the channel announces into the hash, and records the trade', () => {
    const h = clob();
    h.msg(bookMessage(summary(1000, [['0.4', '10']], [['0.6', '5']])));
    h.msg({
      event_type: 'tick_size_change',
      asset_id: ASSET,
      market: '0xabc',
      old_tick_size: '0.01',
      new_tick_size: '0.001',
      timestamp: '1500',
    });
    h.msg({
      event_type: 'last_trade_price',
      asset_id: ASSET,
      market: '0xabc',
      price: '0.6',
      size: '2',
      side: 'BUY',
      fee_rate_bps: '0',
      timestamp: '1600',
      transaction_hash: '0xfeed',
    });
    const after = { ...summary(1700, [['0.4', '10']], [['0.6', '3']], '0.6'), tick_size: '0.001' };
    h.msg({
      event_type: 'price_change',
      market: '0xabc',
      timestamp: '1700',
      price_changes: [{ asset_id: ASSET, price: '0.6', size: '3', side: 'SELL', hash: clobBookHash(after) }],
    });
    expect(h.checksums).toEqual(['match', 'match']);
    expect(h.sink.of('trade').map((r) => [r.ts, r.tradeId, r.price, r.size, r.tradeSide, r.venueSide])).toEqual([
      [1600, '0xfeed', '0.6', '2', 'buy', 'BUY'],
    ]);
  });

  it('a hash the REST settings explain (a stale last trade price) is no gap; one they do not is a divergence', async () => {
    let ltp = '0.5';
    const rest = fakeRest(() => ({ ...SETTINGS, last_trade_price: ltp }));
    const h = clob(rest);
    h.msg(bookMessage(summary(1000, [['0.4', '10']], [['0.6', '5']])));
    // The venue hashed with a last trade price the channel had not told yet.
    const stale = summary(2000, [['0.4', '11']], [['0.6', '5']], '0.5');
    h.msg({
      event_type: 'price_change',
      market: '0xabc',
      timestamp: '2000',
      price_changes: [{ asset_id: ASSET, price: '0.4', size: '11', side: 'BUY', hash: clobBookHash(stale) }],
    });
    await flush();
    expect(rest.asked).toEqual([`/book?token_id=${ASSET}`]);
    expect(h.checksums).toEqual(['match', 'explained']);
    expect(h.sink.of('gap')).toEqual([]);

    // A hash of another book: a divergence from the last verified moment, and the asset subscribed again.
    ltp = '0.7';
    h.msg({
      event_type: 'price_change',
      market: '0xabc',
      timestamp: '3000',
      price_changes: [{ asset_id: ASSET, price: '0.4', size: '12', side: 'BUY', hash: 'f'.repeat(40) }],
    });
    await flush();
    expect(h.checksums).toEqual(['match', 'explained', 'divergence']);
    expect(h.sent.slice(-2)).toEqual([
      { assets_ids: [ASSET], operation: 'unsubscribe' },
      { assets_ids: [ASSET], operation: 'subscribe' },
    ]);
    expect(h.recs.get(ASSET)?.live).toBe(false);
    // The venue's fresh book re-bases ours, after the gap.
    h.msg(bookMessage(summary(3100, [['0.4', '12']], [['0.6', '5']], '0.7')));
    expect(h.sink.of('gap').map((r) => [r.fromTs, r.toTs, r.reason])).toEqual([[1001, 3101, 'divergence']]);
    expect(h.recs.get(ASSET)?.live).toBe(true);
  });

  it('a divergence starts at the verification before the hash that showed it, not at a whole book since', async () => {
    const h = clob(fakeRest(() => SETTINGS));
    h.msg(bookMessage(summary(1000, [['0.4', '10']], [['0.6', '5']])));
    h.msg({
      event_type: 'price_change',
      market: '0xabc',
      timestamp: '1500',
      price_changes: [
        {
          asset_id: ASSET,
          price: '0.6',
          size: '6',
          side: 'SELL',
          hash: clobBookHash(summary(1500, [['0.4', '10']], [['0.6', '6']])),
        },
      ],
    });
    // The venue's change at 2000 (0.4 → 11) is lost; its next, at 2500, hashes a book we do not hold.
    const venue2500 = summary(2500, [['0.4', '11']], [['0.6', '7']]);
    h.msg({
      event_type: 'price_change',
      market: '0xabc',
      timestamp: '2500',
      price_changes: [{ asset_id: ASSET, price: '0.6', size: '7', side: 'SELL', hash: clobBookHash(venue2500) }],
    });
    // While REST is read, a trade's whole book repairs ours (and matches) before the confirmation comes back.
    h.msg(bookMessage(summary(2600, [['0.4', '11']], [['0.6', '7']])));
    await flush();
    expect(h.checksums).toEqual(['match', 'match', 'divergence']);
    h.msg(bookMessage(summary(2700, [['0.4', '11']], [['0.6', '7']])));
    // From the last verification before the mismatch (the price change at 1500): the wrong rows from 2000 on lie in it.
    expect(h.sink.of('gap').map((r) => [r.fromTs, r.toTs, r.reason])).toEqual([[1500, 2701, 'divergence']]);
  });

  it('counts, logs and turns an unreadable message into a gap, never a crash or a silent skip', () => {
    const h = clob();
    h.msg(bookMessage(summary(1000, [['0.4', '10']], [['0.6', '5']])));
    h.raw('{"event_type":"price_change","market":"0xabc","times');
    h.msg({ event_type: 'price_change', timestamp: '1200', price_changes: [{ asset_id: ASSET, price: '0.4' }] });
    expect(h.malformed).toEqual(['not JSON', 'price_change entry without price, size, side or hash']);
    expect(h.recs.get(ASSET)?.live).toBe(false);
    h.raw('PONG');
    expect(h.malformed).toHaveLength(2);
    h.msg(bookMessage(summary(1300, [['0.4', '9']], [['0.6', '5']])));
    expect(h.sink.of('gap').map((r) => [r.fromTs, r.toTs, r.reason])).toEqual([[1001, 1301, 'malformed_message']]);
  });

  it('names a trade by its transaction hash, or deterministically without one', () => {
    const m = { asset_id: ASSET, price: '0.456', size: '219.217767', side: 'SELL', timestamp: '1750428146322' };
    expect(venueAClobTrade({ ...m, transaction_hash: '0xeee' })).toEqual({
      ts: 1750428146322,
      id: '0xeee',
      price: '0.456',
      size: '219.217767',
      side: 'sell',
      venueSide: 'SELL',
    });
    expect(venueAClobTrade(m)?.id).toMatch(/^h:[0-9a-f]{16}$/);
    expect(venueAClobTrade({ ...m, side: 'sideways' })).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Coinbase

const T = (ms: number) => new Date(Date.UTC(2026, 2, 7, 12, 0, 0, ms)).toISOString().replace('Z', '123Z');
const MS = (ms: number) => Date.UTC(2026, 2, 7, 12, 0, 0, ms);

function coinbase(auth?: () => Record<string, string>) {
  const protocol = placed(venueDProtocol({ subscribeBatch: 100, trades: true, auth }), 'venue_d');
  const h = harness(protocol, ['BTC-USD', 'ETH-USD'], { trades: true });
  h.session.subscribe(['BTC-USD', 'ETH-USD']);
  return h;
}

describe('Coinbase session', () => {
  it('subscribes matches first and level2 signed (level2_batch without credentials)', () => {
    const signed = coinbase(() => ({ key: 'k', passphrase: 'p', timestamp: '1', signature: 's' }));
    expect(signed.sent).toEqual([
      {
        type: 'subscribe',
        product_ids: ['BTC-USD', 'ETH-USD'],
        channels: ['matches', 'heartbeat', 'level2'],
        key: 'k',
        passphrase: 'p',
        timestamp: '1',
        signature: 's',
      },
    ]);
    expect(coinbase().sent).toEqual([
      { type: 'subscribe', product_ids: ['BTC-USD', 'ETH-USD'], channels: ['matches', 'heartbeat', 'level2_batch'] },
    ]);
  });

  it('signs level2 with the HMAC credentials even when a JWT key is configured too (the JWT cannot sign it)', () => {
    const credentials = {
      hmac: { key: 'hmac-key', secret: Buffer.from('secret').toString('base64'), passphrase: 'pass' },
      jwt: { keyName: 'organizations/o/apiKeys/k', privateKeyPem: 'unused here' },
    };
    const subscribe = (given: Record<string, unknown>) => {
      const protocol = placed(
        venueDRecorder.protocol({ settings: {}, subscribeBatch: 100, trades: false, credentials: given }),
        'venue_d',
      );
      const h = harness(protocol, ['BTC-USD'], { trades: false });
      h.session.subscribe(['BTC-USD']);
      return h.sent[0] as Record<string, unknown>;
    };
    const signed = subscribe(credentials);
    expect(signed.channels).toEqual(['heartbeat', 'level2']);
    expect([signed.key, signed.passphrase]).toEqual(['hmac-key', 'pass']);
    expect(signed.signature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    // A JWT key alone: the public level2_batch, unsigned.
    const unsigned = subscribe({ jwt: credentials.jwt });
    expect(unsigned.channels).toEqual(['heartbeat', 'level2_batch']);
    expect(unsigned.signature).toBeUndefined();
  });

  it('holds a snapshot from the next timestamped message, then records changes at their time', () => {
    const h = coinbase();
    h.msg({ type: 'snapshot', product_id: 'BTC-USD', bids: [['100.00', '1.5']], asks: [['101.00', '2']] });
    expect(h.sink.of('snapshot')).toEqual([]);
    h.msg({ type: 'l2update', product_id: 'BTC-USD', changes: [['buy', '100.00', '0.5']], time: T(10) });
    expect(h.sink.of('snapshot').map((r) => [r.ts, r.side, r.price, r.quantity])).toEqual([
      [MS(10), 'bid', '100', '1.5'],
      [MS(10), 'ask', '101', '2'],
    ]);
    expect(h.sink.of('delta').map((r) => [r.ts, r.side, r.price, r.quantityDelta])).toEqual([
      [MS(10), 'bid', '100', '-1'],
    ]);
  });

  it("stores the taker's side (the match's is the maker's) and reads back trades the channel skipped", () => {
    const h = coinbase();
    h.msg({ type: 'snapshot', product_id: 'BTC-USD', bids: [['100.00', '1']], asks: [['101.00', '1']] });
    const match = (id: number, ms: number, side: string) => ({
      type: 'match',
      trade_id: id,
      sequence: 50 + id,
      time: T(ms),
      product_id: 'BTC-USD',
      size: '0.1',
      price: '101.00',
      side,
    });
    h.msg({ ...match(10, 5, 'sell'), type: 'last_match' });
    h.msg(match(11, 20, 'sell'));
    expect(h.windows).toEqual([]);
    // 12 never came.
    h.msg(match(13, 40, 'buy'));
    // From the newest trade held (11, inclusive), read forward from the one before it.
    expect(h.windows.map((w) => [w.window.from, w.window.to, w.window.last?.id])).toEqual([[MS(20), MS(40), '10']]);
    // Each keeps its match's `sequence` (the product's feed sequence) as venue_seq; the book rows have none.
    expect(h.sink.of('trade').map((r) => [r.tradeId, r.tradeSide, r.venueSide, r.venueSeq])).toEqual([
      ['10', 'buy', 'sell', '60'],
      ['11', 'buy', 'sell', '61'],
      ['13', 'sell', 'buy', '63'],
    ]);
    expect(h.sink.of('snapshot').map((r) => r.venueSeq)).toEqual(['', '']);
    // A heartbeat naming a trade this connection never brought.
    h.msg({ type: 'heartbeat', sequence: 90, last_trade_id: 15, product_id: 'BTC-USD', time: T(60) });
    expect(h.windows).toHaveLength(2);
    expect(h.windows[1]?.window.to).toBe(MS(60));
  });

  it('a heartbeat whose last_trade_id is not an integer is a malformed message: its trades checked, its book asked again', () => {
    const h = coinbase();
    h.msg({ type: 'snapshot', product_id: 'BTC-USD', bids: [['100.00', '1']], asks: [['101.00', '1']] });
    h.msg({ type: 'l2update', product_id: 'BTC-USD', time: T(10), changes: [['buy', '100.00', '2']] });
    h.msg({
      type: 'match',
      product_id: 'BTC-USD',
      trade_id: 10,
      sequence: 60,
      time: T(20),
      price: '100',
      size: '1',
      side: 'sell',
    });
    const windows = h.windows.length;
    const sent = h.sent.length;
    h.msg({ type: 'heartbeat', sequence: 90, last_trade_id: 15.5, product_id: 'BTC-USD', time: T(60) });
    expect(h.malformed).toEqual(['unreadable heartbeat']);
    expect(h.windows.length).toBeGreaterThan(windows);
    expect(h.recs.get('BTC-USD')?.live).toBe(false);
    expect(h.sent.length).toBeGreaterThan(sent);
  });

  it('a product Coinbase refuses is dropped, and the others of the subscribe it ignored are subscribed again', () => {
    const h = coinbase();
    h.msg({ type: 'error', message: 'Failed to subscribe', reason: 'ETH-USD is not a valid product' });
    expect(h.rejected).toEqual(['ETH-USD']);
    expect(h.sent.slice(1)).toEqual([
      { type: 'subscribe', product_ids: ['BTC-USD'], channels: ['matches', 'heartbeat', 'level2_batch'] },
    ]);
    // A book that came is not asked for again.
    h.msg({ type: 'snapshot', product_id: 'BTC-USD', bids: [['100.00', '1']], asks: [['101.00', '1']] });
    h.msg({ type: 'error', message: 'Failed to subscribe', reason: 'XRP-USD is not a valid product' });
    expect(h.sent).toHaveLength(2);
  });

  it("a last_match (the product's last trade, maybe hours old) does not date a waiting snapshot", () => {
    const h = coinbase();
    h.msg({ type: 'snapshot', product_id: 'BTC-USD', bids: [['100.00', '1']], asks: [['101.00', '1']] });
    h.msg({
      type: 'last_match',
      trade_id: 7,
      sequence: 9,
      time: T(-3_600_000),
      product_id: 'ETH-USD',
      size: '0.1',
      price: '2000.00',
      side: 'buy',
    });
    expect(h.sink.of('snapshot')).toEqual([]);
    h.msg({ type: 'l2update', product_id: 'BTC-USD', changes: [['buy', '100.00', '2']], time: T(10) });
    expect(h.sink.of('snapshot').map((r) => r.ts)).toEqual([MS(10), MS(10)]);
  });

  it('counts, logs and turns an unreadable change into a gap of its product, and asks for its book again', () => {
    const h = coinbase();
    for (const p of ['BTC-USD', 'ETH-USD']) {
      h.msg({ type: 'snapshot', product_id: p, bids: [['100.00', '1']], asks: [['101.00', '1']] });
    }
    h.msg({ type: 'l2update', product_id: 'BTC-USD', changes: [['buy', '100.00', '2']], time: T(10) });
    h.msg({ type: 'l2update', product_id: 'BTC-USD', changes: [['up', '100.00']], time: T(20) });
    expect(h.malformed).toEqual(['a change is not [side, price, size] text']);
    expect(h.recs.get('BTC-USD')?.live).toBe(false);
    expect(h.recs.get('ETH-USD')?.live).toBe(true);
    expect(h.sent.slice(-2)).toEqual([
      { type: 'unsubscribe', product_ids: ['BTC-USD'], channels: ['level2_batch'] },
      { type: 'subscribe', product_ids: ['BTC-USD'], channels: ['level2_batch'] },
    ]);
    // Cut short: no product can be read, so every book of the connection is in doubt.
    h.raw('{"type":"l2update","product_id":"ETH-U');
    expect(h.recs.get('ETH-USD')?.live).toBe(false);
    // A match whose sequence is not an integer cannot be stored as the venue's ordering: unreadable too.
    const match = {
      type: 'match',
      trade_id: 1,
      time: T(25),
      product_id: 'ETH-USD',
      size: '1',
      price: '1',
      side: 'buy',
    };
    h.msg({ ...match, sequence: 'next' });
    expect(h.malformed.at(-1)).toBe('unreadable match');
    expect(h.sink.of('trade')).toEqual([]);
    h.msg({ type: 'snapshot', product_id: 'BTC-USD', bids: [['100.00', '3']], asks: [] });
    h.msg({ type: 'heartbeat', sequence: 1, last_trade_id: 1, product_id: 'BTC-USD', time: T(30) });
    expect(h.sink.of('gap').map((r) => [r.ticker, r.fromTs, r.toTs, r.reason])).toEqual([
      ['BTC-USD', MS(10), MS(30), 'malformed_message'],
    ]);
  });

  it('reads REST trades forward from the last one held, and back from the newest without one', async () => {
    const trade = (id: number) => ({ time: T(id), trade_id: id, price: '1.00', size: '1', side: 'buy' });
    const rest = fakeRest((path) => {
      const before = /before=(\d+)/.exec(path)?.[1];
      if (before !== undefined) return Number(before) < 5 ? [4, 3].map((i) => trade(i + Number(before) - 2)) : [];
      return [trade(9), trade(8)];
    });
    const forward = await venueDTrades.fetch(
      rest,
      'BTC-USD',
      { from: MS(2), to: MS(9), last: { ts: MS(2), id: '2' } },
      {
        maxPages: 5,
      },
    );
    expect(forward.trades.map((t) => [t.id, t.side])).toEqual([
      ['4', 'sell'],
      ['3', 'sell'],
    ]);
    expect(rest.asked[0]).toBe('/products/BTC-USD/trades?before=2&limit=1000');
    const back = await venueDTrades.fetch(rest, 'BTC-USD', { from: MS(2), to: MS(9) }, { maxPages: 5 });
    expect(back.trades.map((t) => t.id)).toEqual(['9', '8']);
    expect(venueDTrade({ time: 'yesterday', trade_id: 1, price: '1', size: '1', side: 'buy' })).toBeUndefined();
  });
});

describe('a venue time the tables cannot hold', () => {
  /** Every row's ts is epoch ms a row can carry (RFC 3339 years, 1970 to 9999). */
  const LAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
  const badTs = (h: { sink: ReturnType<typeof clob>['sink'] }) =>
    h.sink.rows.filter((r) => !(Number.isSafeInteger(r.ts) && r.ts >= 0 && r.ts <= LAST)).map((r) => r.ts);

  it('Polymarket CLOB: a 20-digit book timestamp is a malformed message, not a row, and the book is asked again', () => {
    const h = clob();
    h.raw(JSON.stringify([bookMessage(summary(1000, [['0.4', '10']], [['0.6', '5']]))]));
    const sent = h.sent.length;
    h.msg({ ...bookMessage(summary(2000, [['0.4', '11']], [['0.6', '5']])), timestamp: '99999999999999999999' });
    expect(badTs(h)).toEqual([]);
    expect(h.malformed).toEqual([expect.stringContaining('time')]);
    expect(h.recs.get(ASSET)?.live).toBe(false);
    expect(h.sent.length).toBeGreaterThan(sent);
    expect(h.sink.of('gap').map((g) => g.kind === 'gap' && g.reason)).toEqual([]);
  });

  it('Coinbase: an l2update dated before 1970 is a malformed message, not a row, and the book is asked again', () => {
    const h = coinbase();
    h.msg({ type: 'snapshot', product_id: 'BTC-USD', bids: [['100.00', '1']], asks: [['101.00', '1']] });
    h.msg({ type: 'l2update', product_id: 'BTC-USD', time: T(0), changes: [['buy', '100.00', '2']] });
    const sent = h.sent.length;
    h.msg({ type: 'l2update', product_id: 'BTC-USD', time: '1969-12-31T23:59:59.000Z', changes: [['buy', '99', '1']] });
    expect(badTs(h)).toEqual([]);
    expect(h.malformed).toEqual([expect.stringContaining('time')]);
    expect(h.recs.get('BTC-USD')?.live).toBe(false);
    expect(h.sent.length).toBeGreaterThan(sent);
  });
});
