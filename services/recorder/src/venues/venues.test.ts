import { placed, rebuild, sessionHarness as harness } from '../testing/support';
import { venueAUsProtocol } from './venue-a-us';
import { venueBBook, venueBDelta, venueBProtocol } from './venue-b';
import { venueCProtocol } from './venue-c';

describe('Kalshi normalisation', () => {
  it('turns NO bids into asks at 1 − price, in every known field shape', () => {
    expect(venueBBook({ yes_dollars_fp: [['0.0800', '300.00']], no_dollars_fp: [['0.5400', '20.25']] })).toEqual({
      bids: [['0.0800', '300.00']],
      asks: [['0.4600', '20.25']],
    });
    expect(venueBBook({ yes_dollars: [['0.40', '10']], no_dollars: [['0.60', '12']] })).toEqual({
      bids: [['0.40', '10']],
      asks: [['0.40', '12']],
    });
    expect(venueBBook({ yes: [[40, 10]], no: [[60, 12]] })).toEqual({ bids: [['0.40', '10']], asks: [['0.40', '12']] });
    expect(venueBDelta({ side: 'no', price_dollars: '0.5000', delta_fp: '-20.00', ts_ms: 1772895600123 })).toEqual({
      side: 2,
      price: '0.5000',
      delta: '-20.00',
      ts: 1772895600123,
    });
    expect(venueBDelta({ side: 'yes', price: 41, delta: 5, ts: '2026-03-07T15:00:00.123000Z' })).toEqual({
      side: 1,
      price: '0.41',
      delta: '5',
      ts: Date.UTC(2026, 2, 7, 15, 0, 0, 123),
    });
  });

  it('subscribes in batches, records snapshot then deltas at the venue time, and resubscribes on a seq gap', () => {
    const protocol = placed(venueBProtocol({ subscribeBatch: 2, trades: false }), 'venue_b');
    const h = harness(protocol, ['A', 'B', 'C']);
    h.session.subscribe(['A', 'B', 'C']);
    expect(h.sent).toEqual([
      { id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A', 'B'] } },
      { id: 2, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['C'] } },
    ]);
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } });
    const snap = (sid: number, seq: number, t: string, yes: string[][], no: string[][]) =>
      h.msg({
        type: 'orderbook_snapshot',
        sid,
        seq,
        msg: { market_ticker: t, yes_dollars_fp: yes, no_dollars_fp: no },
      });
    const delta = (sid: number, seq: number, t: string, side: string, p: string, d: string, ts: number) =>
      h.msg({
        type: 'orderbook_delta',
        sid,
        seq,
        msg: { market_ticker: t, side, price_dollars: p, delta_fp: d, ts_ms: ts },
      });
    snap(1, 1, 'A', [['0.4800', '100.00']], [['0.5000', '10.00']]);
    snap(1, 2, 'B', [['0.1000', '1.00']], []);
    delta(1, 3, 'A', 'no', '0.5000', '5.00', 5000);
    delta(1, 4, 'B', 'yes', '0.1000', '1.00', 5001);
    // Snapshots hold from the first timestamped message after them.
    expect(h.sink.of('snapshot').map((r) => [r.ticker, r.ts, r.side, r.price, r.quantity])).toEqual([
      ['A', 5000, 'bid', '0.48', '100'],
      ['A', 5000, 'ask', '0.5', '10'],
      ['B', 5000, 'bid', '0.1', '1'],
    ]);
    expect(h.sink.of('delta').map((r) => [r.ticker, r.ts, r.side, r.price, r.quantityDelta])).toEqual([
      ['A', 5000, 'ask', '0.5', '5.00'],
      ['B', 5001, 'bid', '0.1', '1.00'],
    ]);
    h.sent.length = 0;
    // seq 5 lost (it was B's): both markets are resubscribed on a new sid.
    delta(1, 6, 'A', 'yes', '0.4800', '1.00', 5010);
    expect(h.sent).toEqual([
      { id: 3, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A', 'B'] } },
    ]);
    h.msg({ id: 3, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 2 } });
    snap(2, 1, 'A', [['0.4800', '101.00']], [['0.5000', '15.00']]); // equal to our book: no gap for A
    snap(2, 2, 'B', [['0.1000', '7.00']], []); // B lost +5: gap
    delta(1, 7, 'A', 'yes', '0.4800', '1.00', 5020); // old sid, ignored for A now
    delta(2, 3, 'A', 'yes', '0.4800', '1.00', 5020);
    expect(h.sent.at(-1)).toEqual({ id: 4, cmd: 'unsubscribe', params: { sids: [1] } });
    expect(h.sink.of('gap')).toMatchObject([{ ticker: 'B', fromTs: 5001, toTs: 5020, reason: 'sequence_gap' }]);
    expect(
      rebuild(
        h.sink
          .of('delta')
          .concat(h.sink.of('snapshot'))
          .filter((r) => r.ticker === 'A'),
        5020,
      ),
    ).toEqual({
      'bid:0.48': '102',
      'ask:0.5': '15',
    });
    expect(
      rebuild(
        h.sink.rows.filter((r) => r.ticker === 'B'),
        5020,
      ),
    ).toEqual({ 'bid:0.1': '7' });
  });

  it('removing a market loses no change of the others of its subscription: they follow it until their new snapshot', () => {
    const protocol = placed(venueBProtocol({ subscribeBatch: 10, trades: false }), 'venue_b');
    const h = harness(protocol, ['A', 'B']);
    h.session.subscribe(['A', 'B']);
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } });
    const msg = (type: string, sid: number, seq: number, body: Record<string, unknown>) =>
      h.msg({ type, sid, seq, msg: body });
    msg('orderbook_snapshot', 1, 1, { market_ticker: 'A', yes_dollars_fp: [['0.4800', '100.00']], no_dollars_fp: [] });
    msg('orderbook_snapshot', 1, 2, { market_ticker: 'B', yes_dollars_fp: [['0.1000', '1.00']], no_dollars_fp: [] });
    const delta = (sid: number, seq: number, t: string, d: string, ts: number) =>
      msg('orderbook_delta', sid, seq, {
        market_ticker: t,
        side: 'yes',
        price_dollars: '0.4800',
        delta_fp: d,
        ts_ms: ts,
      });
    delta(1, 3, 'A', '1.00', 5000);
    h.sent.length = 0;
    // B closes: A is subscribed again; A's changes on the old sid until its new snapshot still count.
    h.session.unsubscribe(['B']);
    expect(h.sent).toEqual([
      { id: 2, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A'] } },
    ]);
    delta(1, 4, 'A', '2.00', 5010);
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 2 } });
    msg('orderbook_snapshot', 2, 1, { market_ticker: 'A', yes_dollars_fp: [['0.4800', '103.00']], no_dollars_fp: [] });
    delta(1, 5, 'A', '1.00', 5015); // the old sid, after A's new snapshot: not A's any more
    delta(2, 2, 'A', '1.00', 5020);
    expect(h.sent.at(-1)).toEqual({ id: 3, cmd: 'unsubscribe', params: { sids: [1] } });
    expect(h.sink.of('gap')).toEqual([]);
    expect(
      rebuild(
        h.sink.rows.filter((r) => r.ticker === 'A'),
        5020,
      ),
    ).toEqual({ 'bid:0.48': '104' });
  });

  it("a sequence gap starts at its own subscription's last in-order delta, not the connection's", () => {
    const protocol = placed(venueBProtocol({ subscribeBatch: 1, trades: false }), 'venue_b');
    const h = harness(protocol, ['A', 'B']);
    h.session.subscribe(['A', 'B']);
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } });
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 2 } });
    const msg = (type: string, sid: number, seq: number, body: Record<string, unknown>) =>
      h.msg({ type, sid, seq, msg: body });
    const book = (t: string) => ({ market_ticker: t, yes_dollars_fp: [['0.4800', '100.00']], no_dollars_fp: [] });
    msg('orderbook_snapshot', 1, 1, book('A'));
    msg('orderbook_snapshot', 2, 1, book('B'));
    const delta = (sid: number, seq: number, t: string, ts: number) =>
      msg('orderbook_delta', sid, seq, {
        market_ticker: t,
        side: 'yes',
        price_dollars: '0.4800',
        delta_fp: '1.00',
        ts_ms: ts,
      });
    delta(1, 2, 'A', 5000);
    delta(2, 2, 'B', 5100);
    // A's seq 3 (its change at 5050) is lost; seq 4 shows it.
    delta(1, 4, 'A', 5150);
    h.msg({ id: 3, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3 } });
    msg('orderbook_snapshot', 3, 1, { ...book('A'), yes_dollars_fp: [['0.4800', '103.00']] });
    delta(3, 2, 'A', 5200);
    expect(h.sink.of('gap')).toMatchObject([{ ticker: 'A', fromTs: 5000, reason: 'sequence_gap' }]);
  });

  it('drops a market Kalshi does not know and subscribes the rest again', () => {
    const protocol = placed(venueBProtocol({ subscribeBatch: 10, trades: false }), 'venue_b');
    const h = harness(protocol, ['A', 'ZZ']);
    h.session.subscribe(['A', 'ZZ']);
    h.msg({ id: 1, type: 'error', msg: { code: 16, msg: 'Market not found: ZZ' } });
    expect(h.rejected).toEqual(['ZZ']);
    expect(h.sent.at(-1)).toEqual({
      id: 2,
      cmd: 'subscribe',
      params: { channels: ['orderbook_delta'], market_tickers: ['A'] },
    });
  });
});

describe('Gemini normalisation', () => {
  it('takes the first l2_updates as the book, later ones as absolute sizes, stamped with receive time', () => {
    const protocol = placed(venueCProtocol({ subscribeBatch: 50, resubscribeDelayMs: 0, trades: false }), 'venue_c');
    const h = harness(protocol, ['BTCUSD']);
    h.session.subscribe(['BTCUSD']);
    expect(h.sent).toEqual([{ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: ['BTCUSD'] }] }]);
    h.msg({
      type: 'l2_updates',
      symbol: 'BTCUSD',
      changes: [
        ['buy', '9122.04', '0.00121425'],
        ['sell', '9122.07', '0.98942292'],
      ],
      trades: [],
    });
    h.clock.now += 5;
    h.msg({
      type: 'l2_updates',
      symbol: 'BTCUSD',
      changes: [
        ['buy', '9122.04', '0.5'],
        ['sell', '9122.07', '0'],
      ],
    });
    h.msg({ type: 'heartbeat', timestamp: 1 });
    expect(h.sink.of('snapshot').map((r) => r.ts)).toEqual([1_000_000, 1_000_000]);
    expect(h.sink.of('delta').map((r) => [r.ts, r.side, r.price, r.quantityDelta])).toEqual([
      [1_000_005, 'bid', '9122.04', '0.49878575'],
      [1_000_005, 'ask', '9122.07', '-0.98942292'],
    ]);
    expect(h.session.watermark()).toBe(1_000_005);
  });

  it('resubscribes after a pause, ignoring updates still in flight, and reports unknown symbols', async () => {
    const protocol = placed(venueCProtocol({ subscribeBatch: 50, resubscribeDelayMs: 20, trades: false }), 'venue_c');
    const h = harness(protocol, ['BTCUSD']);
    h.session.subscribe(['BTCUSD']);
    h.msg({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['buy', '1', '1']] });
    h.recs.get('BTCUSD')?.lose('divergence', 0);
    h.session.resync(['BTCUSD']);
    expect(h.sent.at(-1)).toEqual({ type: 'unsubscribe', subscriptions: [{ name: 'l2', symbols: ['BTCUSD'] }] });
    h.msg({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['buy', '1', '3']] });
    await new Promise((r) => setTimeout(r, 40));
    expect(h.sent.at(-1)).toEqual({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: ['BTCUSD'] }] });
    h.clock.now += 10;
    h.msg({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['buy', '1', '2']] });
    expect(h.sink.of('gap')).toMatchObject([{ ticker: 'BTCUSD', fromTs: 0, toTs: 1_000_010 }]);
    expect(rebuild(h.sink.rows, 1_000_010)).toEqual({ 'bid:1': '2' });
    h.msg({ type: 'error', result: 'error', reason: 'InvalidSymbol', message: 'invalid symbol NOPE' });
    expect(h.rejected).toEqual(['NOPE']);
    h.session.close();
  });
});

describe('Polymarket US normalisation', () => {
  const book = (slug: string, bids: [string, string][], offers: [string, string][], transactTime?: string) => ({
    requestId: 'dg-md-1',
    subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
    marketData: {
      marketSlug: slug,
      bids: bids.map(([p, q]) => ({ px: { value: p, currency: 'USD' }, qty: q })),
      offers: offers.map(([p, q]) => ({ px: { value: p, currency: 'USD' }, qty: q })),
      state: 'MARKET_STATE_OPEN',
      ...(transactTime ? { transactTime } : {}),
    },
  });

  it('stores the first book as a snapshot just after its transactTime and diffs later books into deltas', () => {
    const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: false }), 'venue_a_us');
    const h = harness(protocol, ['m-a']);
    h.session.subscribe(['m-a']);
    expect(h.sent).toEqual([
      {
        subscribe: {
          requestId: 'dg-md-1',
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketSlugs: ['m-a'],
          responsesDebounced: false,
        },
      },
    ]);
    h.msg(book('m-a', [['0.555', '0.50']], [['0.560', '0.80']], '2026-03-07T15:00:00.100Z'));
    h.msg(book('m-a', [['0.555', '1.50']], [['0.570', '0.80']], '2026-03-07T15:00:00.250Z'));
    const t0 = Date.UTC(2026, 2, 7, 15, 0, 0, 100);
    expect(h.sink.of('snapshot').map((r) => r.ts)).toEqual([t0 + 1, t0 + 1]);
    expect(
      h.sink
        .of('delta')
        .map((r) => [r.ts - t0, r.side, r.price, r.quantityDelta])
        .sort(),
    ).toEqual([
      [150, 'ask', '0.56', '-0.8'],
      [150, 'ask', '0.57', '0.8'],
      [150, 'bid', '0.555', '1'],
    ]);
  });

  it('a subscription sent again waits for a new book only of the markets that need one: a live sibling records no divergence', () => {
    const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: false }), 'venue_a_us');
    const h = harness(protocol, ['m-a', 'm-b', 'm-c']);
    h.session.subscribe(['m-a', 'm-b', 'm-c']);
    for (const slug of ['m-a', 'm-b', 'm-c'])
      h.msg(book(slug, [['0.50', '1']], [['0.60', '1']], '2026-03-07T15:00:00.100Z'));
    // m-a's book is in doubt: its request is sent again (every market of it gets a first book); m-c leaves, and the
    // request is sent again without it.
    h.recs.get('m-a')?.lose('malformed_message');
    h.session.resync(['m-a']);
    h.session.unsubscribe(['m-c']);
    expect(h.sent).toHaveLength(3);
    // m-b's next book is a change the venue made meanwhile (or its first book of the request sent again): deltas.
    h.msg(book('m-b', [['0.50', '2']], [['0.60', '1']], '2026-03-07T15:00:00.200Z'));
    h.msg(book('m-a', [['0.51', '1']], [['0.60', '1']], '2026-03-07T15:00:00.300Z'));
    const t0 = Date.UTC(2026, 2, 7, 15, 0, 0, 100);
    expect(h.sink.of('gap').map((g) => g.kind === 'gap' && [g.ticker, g.reason])).toEqual([
      ['m-a', 'malformed_message'],
    ]);
    expect(h.sink.of('delta').map((r) => [r.ticker, r.ts - t0, r.side, r.price, r.quantityDelta])).toEqual([
      ['m-b', 100, 'bid', '0.5', '1'],
    ]);
    expect(
      h.sink
        .of('snapshot')
        .filter((r) => r.ts > t0 + 1)
        .map((r) => r.ticker),
    ).toEqual(['m-a', 'm-a']);
  });

  it('keeps subscriptions at 100 markets or fewer', () => {
    const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: false }), 'venue_a_us');
    const slugs = Array.from({ length: 250 }, (_, i) => `m-${i}`);
    const h = harness(protocol, slugs);
    h.session.subscribe(slugs);
    expect(h.sent.map((m) => (m as { subscribe: { marketSlugs: string[] } }).subscribe.marketSlugs.length)).toEqual([
      100, 100, 50,
    ]);
  });
});

describe('venue sequences and unreadable messages (Kalshi, Gemini, Polymarket US)', () => {
  const rowsOf = (h: ReturnType<typeof harness>) =>
    h.sink.rows.filter((r) => r.kind !== 'gap').map((r) => [r.kind, r.ticker, r.venueSeq]);
  const gaps = (h: ReturnType<typeof harness>) => h.sink.of('gap').map((r) => [r.ticker, r.fromTs, r.toTs, r.reason]);

  function kalshi(trades = false) {
    const h = harness(placed(venueBProtocol({ subscribeBatch: 10, trades }), 'venue_b'), ['A', 'B'], { trades });
    h.session.subscribe(['A', 'B']);
    return h;
  }
  /** Kalshi with A and B live on sid 1 (A changed at 5000, seq 3). */
  function kalshiLive() {
    const h = kalshi();
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } });
    h.msg(snap(1, 1, 'A', [['0.4800', '10.00']]));
    h.msg(snap(1, 2, 'B', [['0.4800', '20.00']]));
    h.msg(delta(1, 3, 'A', '5.00', 5000));
    return h;
  }
  const snap = (sid: number, seq: number, t: string, yes: string[][]) => ({
    type: 'orderbook_snapshot',
    sid,
    seq,
    msg: { market_ticker: t, yes_dollars_fp: yes, no_dollars_fp: [] },
  });
  const delta = (sid: number, seq: number, t: string, d: string, ts: number) => ({
    type: 'orderbook_delta',
    sid,
    seq,
    msg: { market_ticker: t, side: 'yes', price_dollars: '0.4800', delta_fp: d, ts_ms: ts },
  });

  it("Kalshi: every book row keeps its message's sid:seq, a trade its sid:seq where it has a seq", () => {
    const h = kalshi(true);
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 7 } });
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 8 } });
    h.msg(snap(8, 1, 'A', [['0.4800', '10.00']]));
    h.msg(snap(8, 2, 'B', [['0.4800', '20.00']]));
    h.msg(delta(8, 3, 'A', '5.00', 5000));
    h.msg(delta(8, 4, 'B', '-5.00', 5001));
    const trade = { trade_id: 'x1', market_ticker: 'A', yes_price_dollars: '0.48', count_fp: '1.00', ts_ms: 5002 };
    h.msg({ type: 'trade', sid: 7, seq: 12, msg: { ...trade, taker_outcome_side: 'yes' } });
    h.msg({ type: 'trade', sid: 7, msg: { ...trade, trade_id: 'x2', taker_outcome_side: 'no' } });
    expect(rowsOf(h)).toEqual([
      ['snapshot', 'A', '8:1'],
      ['snapshot', 'B', '8:2'],
      ['delta', 'A', '8:3'],
      ['delta', 'B', '8:4'],
      ['trade', 'A', '7:12'],
      ['trade', 'A', ''],
    ]);
    expect(h.sink.verifications.map((v) => [v.ticker, v.ts, v.method])).toEqual([
      ['A', 5000, 'snapshot'],
      ['B', 5000, 'snapshot'],
    ]);
    expect(h.malformed).toEqual([]);
  });

  it('Kalshi: an unreadable message is counted and a gap of its market, its subscription or the connection', () => {
    const h = kalshiLive();
    h.sent.length = 0;
    // A delta without its change: A alone, subscribed again.
    h.msg({ type: 'orderbook_delta', sid: 1, seq: 4, msg: { market_ticker: 'A', side: 'yes', ts_ms: 5010 } });
    expect(h.malformed).toEqual(['orderbook_delta without side, price or change']);
    expect([h.recs.get('A')?.live, h.recs.get('B')?.live]).toEqual([false, true]);
    expect(h.sent).toEqual([
      { id: 2, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A'] } },
    ]);
    // A level that is not [price, count]: its market (B); a message without a market: its subscription's (A, B).
    h.msg({ type: 'orderbook_snapshot', sid: 1, seq: 5, msg: { market_ticker: 'B', yes_dollars_fp: [['0.5']] } });
    h.msg({ type: 'orderbook_delta', sid: 1, seq: 6, msg: { side: 'yes' } });
    // Cut short, or not JSON: every market of the connection. The seq it carried is lost: nothing is silent.
    h.raw('{"type":"orderbook_delta","sid":1,"seq":7,"msg":{"market_ti');
    h.raw('<html>502</html>');
    expect(h.malformed).toEqual([
      'orderbook_delta without side, price or change',
      'book level is not [price, count]',
      'orderbook_delta without msg.market_ticker',
      'not a JSON object',
      'not a JSON object',
    ]);
    expect([h.recs.get('A')?.live, h.recs.get('B')?.live]).toEqual([false, false]);
    // The fresh books close the gaps, from the last message each book was known to follow.
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 2 } });
    h.msg(snap(2, 1, 'A', [['0.4800', '16.00']]));
    h.msg(snap(2, 2, 'B', [['0.4800', '20.00']]));
    h.msg(delta(2, 3, 'A', '1.00', 6000));
    expect(gaps(h)).toEqual([
      ['A', 5000, 6000, 'malformed_message'],
      ['B', 5000, 6000, 'malformed_message'],
    ]);
  });

  it('Kalshi: a delta whose time cannot be read is malformed (not recorded at its receipt); one without a time is recorded at its receipt', () => {
    const h = kalshiLive();
    const change = { side: 'yes', price_dollars: '0.4800', delta_fp: '1.00' };
    h.sent.length = 0;
    h.msg({ type: 'orderbook_delta', sid: 1, seq: 4, msg: { market_ticker: 'A', ...change, ts: 'yesterday' } });
    h.msg({ type: 'orderbook_delta', sid: 1, seq: 5, msg: { market_ticker: 'B', ...change, ts_ms: 1.5 } });
    expect(h.malformed).toEqual([expect.stringContaining('time'), expect.stringContaining('time')]);
    expect([h.recs.get('A')?.live, h.recs.get('B')?.live]).toEqual([false, false]);
    expect(h.sent.map((m) => (m as { params?: unknown }).params)).toEqual([
      { channels: ['orderbook_delta'], market_tickers: ['A'] },
      { channels: ['orderbook_delta'], market_tickers: ['B'] },
    ]);
    // Neither change was recorded (at its receipt or otherwise).
    expect(h.sink.of('delta').map((r) => [r.ticker, r.ts])).toEqual([['A', 5000]]);
    // The legacy shape carries no time: recorded at its receipt.
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 2 } });
    h.msg(snap(2, 1, 'A', [['0.4800', '15.00']]));
    h.msg({ type: 'orderbook_delta', sid: 2, seq: 2, msg: { market_ticker: 'A', side: 'yes', price: 48, delta: 1 } });
    expect(h.sink.of('delta').map((r) => [r.ticker, r.ts])).toEqual([
      ['A', 5000],
      ['A', h.clock.now],
    ]);
    expect(h.malformed).toHaveLength(2);
  });

  it('Kalshi: an unreadable trade is not lost silently: its trades up to then are read back (a missed window)', () => {
    const h = kalshi(true);
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 7 } });
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 8 } });
    h.msg(snap(8, 1, 'A', [['0.4800', '10.00']]));
    h.msg(delta(8, 2, 'A', '5.00', 5000));
    const trade = { trade_id: 'x1', market_ticker: 'A', yes_price_dollars: '0.48', count_fp: '1.00', ts_ms: 5002 };
    h.msg({ type: 'trade', sid: 7, msg: { ...trade, taker_outcome_side: 'yes' } });
    expect(h.windows).toEqual([]);
    h.msg({ type: 'trade', sid: 7, msg: { ...trade, trade_id: 'x2' } }); // no side
    expect(h.malformed).toEqual(['unreadable trade']);
    // From the newest trade held (x1, known: a REST copy of it is dropped) to the unreadable message's receipt.
    expect(h.windows.map((w) => [w.ticker, w.window.from, w.window.to, [...w.window.known.keys()]])).toEqual([
      ['A', 5002, h.clock.now, ['x1']],
    ]);
  });

  it('Kalshi: a subscription answered without its sid is asked for again rather than waited for forever', () => {
    const h = kalshi();
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta' } });
    expect(h.malformed).toEqual(['subscribed without its command id or sid']);
    expect(h.sent.at(-1)).toEqual({
      id: 2,
      cmd: 'subscribe',
      params: { channels: ['orderbook_delta'], market_tickers: ['A', 'B'] },
    });
  });

  function gemini(trades = true) {
    const protocol = placed(venueCProtocol({ subscribeBatch: 50, resubscribeDelayMs: 0, trades }), 'venue_c');
    const h = harness(protocol, ['BTCUSD', 'ETHUSD'], { trades });
    h.session.subscribe(['BTCUSD', 'ETHUSD']);
    return h;
  }
  const geminiTrade = { type: 'trade', symbol: 'BTCUSD', timestamp: 1_000_000, price: '9004.21', quantity: '0.1' };

  it('Gemini: book rows carry no venue sequence (v2 has none), a trade its event_id', () => {
    const h = gemini();
    h.msg({
      type: 'l2_updates',
      symbol: 'BTCUSD',
      changes: [['buy', '9000', '1']],
      trades: [{ ...geminiTrade, eventid: 169841458, tid: 5, side: 'sell' }],
    });
    h.clock.now += 5;
    h.msg({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['buy', '9000', '2']] });
    h.msg({ ...geminiTrade, event_id: 3575573053, tid: 6, side: 'buy' });
    h.msg({ ...geminiTrade, tid: 7, side: 'buy' });
    h.msg({ ...geminiTrade, tid: 8, side: 'buy', broken: true });
    expect(rowsOf(h)).toEqual([
      ['snapshot', 'BTCUSD', ''],
      ['trade', 'BTCUSD', '169841458'],
      ['delta', 'BTCUSD', ''],
      ['trade', 'BTCUSD', '3575573053'],
      ['trade', 'BTCUSD', ''],
    ]);
    expect(h.malformed).toEqual([]);
  });

  it('Gemini: an unreadable change or trade is a gap of its symbol; a message naming none, of every symbol', () => {
    const h = gemini();
    for (const symbol of ['BTCUSD', 'ETHUSD']) h.msg({ type: 'l2_updates', symbol, changes: [['buy', '1', '1']] });
    h.msg({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['hold', '1', '2']] });
    expect(h.malformed).toEqual(['a change is not [buy|sell, price, quantity] text']);
    expect([h.recs.get('BTCUSD')?.live, h.recs.get('ETHUSD')?.live]).toEqual([false, true]);
    expect(h.sent.at(-1)).toEqual({ type: 'unsubscribe', subscriptions: [{ name: 'l2', symbols: ['BTCUSD'] }] });
    h.msg({ ...geminiTrade, symbol: 'ETHUSD', tid: 9, side: 'buy', event_id: 'soon' });
    expect(h.recs.get('ETHUSD')?.live).toBe(false);
    h.raw('{"type":"l2_updates","symbol":"ETHU');
    h.msg({ type: 'l2_updates', changes: [] });
    expect(h.malformed).toEqual([
      'a change is not [buy|sell, price, quantity] text',
      'unreadable trade',
      'not a JSON object',
      'l2_updates without a symbol',
    ]);
    h.session.close();
  });

  function pmUs() {
    const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: true }), 'venue_a_us');
    const h = harness(protocol, ['m-a', 'm-b'], { trades: true });
    h.session.subscribe(['m-a', 'm-b']);
    return h;
  }
  const market = (slug: string, bids: unknown[], transactTime: unknown) => ({
    requestId: 'dg-md-2',
    subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
    marketData: { marketSlug: slug, bids, offers: [], transactTime },
  });
  const level = (p: string, q: string) => ({ px: { value: p, currency: 'USD' }, qty: q });

  it('Polymarket US: no venue sequence; an unreadable book or trade is a gap of its market, or of every market', () => {
    const h = pmUs();
    h.msg(market('m-a', [level('0.5', '1')], '2026-03-07T15:00:00.100Z'));
    h.msg(market('m-b', [level('0.5', '1')], '2026-03-07T15:00:00.100Z'));
    h.msg(market('m-a', [level('0.5', '2')], '2026-03-07T15:00:00.200Z'));
    expect(rowsOf(h)).toEqual([
      ['snapshot', 'm-a', ''],
      ['snapshot', 'm-b', ''],
      ['delta', 'm-a', ''],
    ]);
    h.sent.length = 0;
    h.msg(market('m-a', [{ px: { value: 0.5 }, qty: '2' }], '2026-03-07T15:00:00.300Z'));
    expect([h.recs.get('m-a')?.live, h.recs.get('m-b')?.live]).toEqual([false, true]);
    // Its book is asked for again (the request that holds it, with its markets).
    expect(h.sent).toEqual([
      {
        subscribe: {
          requestId: 'dg-md-2',
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketSlugs: ['m-a', 'm-b'],
          responsesDebounced: false,
        },
      },
    ]);
    // A trade whose amount the tables cannot hold: a gap of its market alone (m-a), not of m-b.
    h.msg({
      trade: {
        marketSlug: 'm-a',
        price: { value: '0.5' },
        quantity: { value: '1e5' },
        tradeTime: '2026-03-07T15:00:00.400Z',
        taker: { side: 'ORDER_SIDE_BUY', intent: 'ORDER_INTENT_BUY_LONG' },
      },
    });
    expect(h.recs.get('m-b')?.live).toBe(true);
    h.msg(market('m-b', [level('0.5', '1')], 'at noon'));
    h.msg({ trade: { marketSlug: 'm-b', price: { value: '0.5' } } });
    h.raw('{"marketData":{"marketSlug":"m-');
    h.msg({ marketData: { bids: [] } });
    expect(h.malformed).toEqual([
      'book level is not {px: {value}, qty}',
      expect.stringContaining('1e5'),
      'transactTime is not a time',
      'unreadable trade',
      'not a JSON object',
      'marketData without a marketSlug',
    ]);
    expect(h.recs.get('m-b')?.live).toBe(false);
    h.msg(market('m-a', [level('0.5', '3')], '2026-03-07T15:00:01.000Z'));
    const t0 = Date.UTC(2026, 2, 7, 15, 0, 0, 200);
    expect(gaps(h)).toEqual([['m-a', t0, t0 + 801, 'malformed_message']]);
  });
});

describe('a venue time the tables cannot hold (Polymarket US transactTime)', () => {
  const LAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
  const level = (p: string, q: string) => ({ px: { value: p, currency: 'USD' }, qty: q });
  const book = (transactTime: string, qty: string) => ({
    marketData: {
      marketSlug: 'm-a',
      bids: [level('0.5', qty)],
      offers: [],
      transactTime,
      stats: { sharesTraded: '0' },
    },
  });

  it.each([['+275760-09-13T00:00:00.000Z'], ['1900-01-01T00:00:00.000Z']])(
    '%s: a malformed message, no row at that time, the book asked again',
    (time) => {
      const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: true }), 'venue_a_us');
      const h = harness(protocol, ['m-a'], { trades: true });
      h.session.subscribe(['m-a']);
      h.msg(book('2026-03-07T15:00:00.100Z', '1'));
      const sent = h.sent.length;
      h.msg(book(time, '2'));
      expect(h.sink.rows.filter((r) => !(Number.isSafeInteger(r.ts) && r.ts >= 0 && r.ts <= LAST))).toEqual([]);
      expect(h.malformed).toEqual([expect.stringContaining('time')]);
      expect(h.recs.get('m-a')?.live).toBe(false);
      expect(h.sent.length).toBeGreaterThan(sent);
    },
  );
});
