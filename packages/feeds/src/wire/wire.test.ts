import { clobBookHash } from '../clob-hash';
import {
  clobWire,
  coinbaseWire,
  geminiWire,
  isoMicros,
  kalshiWire,
  parseCoinbaseSubscribe,
  parseGeminiSubscribe,
  parseClobRequest,
  parsePmUsRequest,
  pmUsWire,
} from './index';
import { valueText } from '../message';

describe('venue messages as the venues write them', () => {
  it('Kalshi: snapshot, delta and trade in the documented envelopes', () => {
    const snap = JSON.parse(
      kalshiWire.snapshot(2, 2, {
        ticker: 'FED-23DEC-T3.00',
        marketId: '9b0f6b43-5b68-4f9f-9f02-9a2d1b8ac1a1',
        yes: [['0.0800', '300.00']],
        no: [['0.5400', '20.00']],
        fields: 'fp',
      }),
    );
    expect(snap).toEqual({
      type: 'orderbook_snapshot',
      sid: 2,
      seq: 2,
      msg: {
        market_ticker: 'FED-23DEC-T3.00',
        market_id: '9b0f6b43-5b68-4f9f-9f02-9a2d1b8ac1a1',
        yes_dollars_fp: [['0.0800', '300.00']],
        no_dollars_fp: [['0.5400', '20.00']],
      },
    });
    const body = kalshiWire.deltaBodies('FED-23DEC-T3.00', 'm', 1669149841000)('0.9600', '-54.00', 'yes');
    expect(JSON.parse(kalshiWire.delta(2, 3, body))).toEqual({
      type: 'orderbook_delta',
      sid: 2,
      seq: 3,
      msg: {
        market_ticker: 'FED-23DEC-T3.00',
        market_id: 'm',
        price_dollars: '0.9600',
        delta_fp: '-54.00',
        side: 'yes',
        ts: '2022-11-22T20:44:01.000000Z',
        ts_ms: 1669149841000,
      },
    });
    const trade = JSON.parse(
      kalshiWire.trade(
        11,
        kalshiWire.tradeBody({
          id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
          ticker: 'HIGHNY-22DEC23-B53.5',
          yesPrice: '0.3600',
          noPrice: '0.6400',
          count: '136.00',
          takerYes: false,
          tsMs: 1669149841123,
        }),
      ),
    );
    expect(trade).not.toHaveProperty('seq');
    expect(trade.msg).toMatchObject({ taker_side: 'no', taker_book_side: 'ask', ts: 1669149841, ts_ms: 1669149841123 });
  });

  it('Gemini: integers beyond 2^53 are written digit for digit', () => {
    const text = geminiWire.trade({
      symbol: 'BTCUSD',
      eventId: '3575573053',
      timestamp: 151231241,
      price: '9004.21',
      quantity: '0.0911',
      side: 'buy',
      tid: '28401408000426779',
    });
    expect(text).toContain('"tid":28401408000426779}');
    expect(JSON.parse(text)).toMatchObject({ type: 'trade', event_id: 3575573053, side: 'buy' });
    expect(
      geminiWire.trade({
        symbol: 'X',
        eventId: 1,
        timestamp: 2,
        price: '1',
        quantity: '1',
        side: 'sell',
        tid: 'h:abc',
      }),
    ).toContain('"tid":"h:abc"');
    const initial = JSON.parse(geminiWire.initial('BTCUSD', [geminiWire.change('buy', '1', '2')], [text]));
    expect(initial).toMatchObject({ type: 'l2_updates', changes: [['buy', '1', '2']], auction_events: [] });
    expect(initial.trades).toHaveLength(1);
  });

  it('Polymarket US: market data and trade frames carry the request id', () => {
    const data = pmUsWire.marketData({
      slug: 's',
      bids: [['0.550', '10.00']],
      offers: [],
      state: 'MARKET_STATE_OPEN',
      transactTime: undefined,
    });
    expect(data).toEqual({
      marketSlug: 's',
      bids: [{ px: { value: '0.550', currency: 'USD' }, qty: '10.00' }],
      offers: [],
      state: 'MARKET_STATE_OPEN',
      stats: {},
    });
    const frame = JSON.parse(
      pmUsWire.frame('r-1', pmUsWire.body('SUBSCRIPTION_TYPE_MARKET_DATA', 'marketData', JSON.stringify(data))),
    );
    expect(frame).toEqual({ requestId: 'r-1', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketData: data });
    const trade = JSON.parse(
      pmUsWire.trade({ slug: 's', price: '0.555', quantity: '0.50', tradeTime: 't', takerBuys: true }),
    );
    expect(trade.taker).toEqual({ side: 'ORDER_SIDE_BUY', intent: 'ORDER_INTENT_BUY_LONG' });
    expect(trade.maker).toEqual({ side: 'ORDER_SIDE_SELL', intent: 'ORDER_INTENT_SELL_LONG' });
  });

  it('Polymarket CLOB: a book carries the summary hash of its own fields (the py-clob-client vector)', () => {
    const summary = clobWire.summary({
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
    });
    expect(summary.hash).toBe('0458ea5755c9f73d64a14636fa5c36ed460ec394');
    const book = JSON.parse(clobWire.book(summary));
    expect(Object.keys(book)).toEqual([
      'event_type',
      'market',
      'asset_id',
      'timestamp',
      'hash',
      'bids',
      'asks',
      'min_order_size',
      'tick_size',
      'neg_risk',
      'last_trade_price',
    ]);
    expect(clobBookHash({ ...book, last_trade_price: '0.5' })).toBe(book.hash);
    const change = clobWire.change({
      asset: '100',
      price: '0.5',
      size: '0',
      side: 'BUY',
      hash: 'h',
      bestBid: '0.4',
      bestAsk: '0.6',
    });
    expect(JSON.parse(clobWire.priceChange('0xaabbcc', [change], 1757908892351))).toEqual({
      market: '0xaabbcc',
      price_changes: [
        { asset_id: '100', price: '0.5', size: '0', side: 'BUY', hash: 'h', best_bid: '0.4', best_ask: '0.6' },
      ],
      timestamp: '1757908892351',
      event_type: 'price_change',
    });
  });

  it('Coinbase: snapshot, l2update and match in the documented forms', () => {
    expect(JSON.parse(coinbaseWire.snapshot('BTC-USD', [['10101.1', '0.45']], []))).toEqual({
      type: 'snapshot',
      product_id: 'BTC-USD',
      bids: [['10101.1', '0.45']],
      asks: [],
    });
    const update = JSON.parse(
      coinbaseWire.l2update('BTC-USD', [coinbaseWire.change('buy', '10101.8', '0')], isoMicros(0)),
    );
    expect(update).toEqual({
      type: 'l2update',
      product_id: 'BTC-USD',
      changes: [['buy', '10101.8', '0']],
      time: '1970-01-01T00:00:00.000000Z',
    });
    const match = coinbaseWire.match({
      type: 'match',
      tradeId: 10,
      sequence: '50',
      makerOrderId: 'a',
      takerOrderId: 'b',
      time: 't',
      product: 'BTC-USD',
      size: '5.23512',
      price: '400.23',
      side: 'sell',
    });
    expect(Object.keys(JSON.parse(match))).toEqual([
      'type',
      'trade_id',
      'sequence',
      'maker_order_id',
      'taker_order_id',
      'time',
      'product_id',
      'size',
      'price',
      'side',
    ]);
    expect(JSON.parse(match)).toMatchObject({ trade_id: 10, sequence: 50 });
  });

  it('Gemini subscribe: the symbols of every l2 subscription, or InvalidJson', () => {
    expect(
      parseGeminiSubscribe({
        type: 'unsubscribe',
        subscriptions: [
          { name: 'l2', symbols: ['BTCUSD', 7] },
          { name: 'l2', symbols: [] },
        ],
      }),
    ).toEqual({ type: 'unsubscribe', symbols: ['BTCUSD', 7] });
    for (const m of [
      undefined,
      { type: 'subscribe' },
      { type: 'hello', subscriptions: [] },
      { type: 'subscribe', subscriptions: [{ name: 'l2', symbols: 'BTCUSD' }] },
      { type: 'subscribe', subscriptions: [{ name: 'candles_1m', symbols: ['BTCUSD'] }] },
      { type: 'subscribe', subscriptions: [null] },
    ])
      expect(parseGeminiSubscribe(m)).toEqual({ error: { reason: 'InvalidJson', message: expect.any(String) } });
  });

  it('Coinbase subscribe: (channel, product) pairs in the order named, or the reason it fails', () => {
    expect(
      parseCoinbaseSubscribe({
        type: 'subscribe',
        product_ids: ['BTC-USD', 'ETH-USD'],
        channels: ['level2', { name: 'matches', product_ids: ['SOL-USD'] }, { name: 'ticker' }],
        signature: 'ignored',
      }),
    ).toEqual({
      type: 'subscribe',
      pairs: [
        ['level2', 'BTC-USD'],
        ['level2', 'ETH-USD'],
        ['matches', 'SOL-USD'],
        ['ticker', 'BTC-USD'],
        ['ticker', 'ETH-USD'],
      ],
    });
    const cases: [Record<string, unknown> | undefined, string][] = [
      [undefined, 'type must be subscribe or unsubscribe'],
      [
        { type: 'subscriptions', product_ids: ['BTC-USD'], channels: ['level2'] },
        'type must be subscribe or unsubscribe',
      ],
      [{ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['full'] }, 'full is not a valid channel'],
      [{ type: 'subscribe', product_ids: ['BTC-USD'], channels: [null] }, 'undefined is not a valid channel'],
      [{ type: 'subscribe', product_ids: [1], channels: ['level2'] }, '1 is not a valid product'],
      [{ type: 'subscribe', product_ids: ['BTC-USD'], channels: [] }, 'No channels or product ids provided'],
      [{ type: 'unsubscribe', channels: ['level2'] }, 'No channels or product ids provided'],
    ];
    for (const [m, error] of cases) expect(parseCoinbaseSubscribe(m)).toEqual({ error });
  });

  it('Coinbase subscribe: each (channel, product) once, however often the message repeats them', () => {
    expect(
      parseCoinbaseSubscribe({
        type: 'subscribe',
        product_ids: ['BTC-USD', 'BTC-USD'],
        channels: ['level2', 'level2', { name: 'level2', product_ids: ['BTC-USD', 'ETH-USD'] }],
      }),
    ).toEqual({
      type: 'subscribe',
      pairs: [
        ['level2', 'BTC-USD'],
        ['level2', 'ETH-USD'],
      ],
    });
    // 10,000 channel names by 10,000 products (about 190 KB) would be 10^8 pairs: it is one channel's 10,000.
    const products = Array.from({ length: 10_000 }, (_, i) => `P${i}-USD`);
    const big = parseCoinbaseSubscribe({
      type: 'subscribe',
      product_ids: products,
      channels: Array.from({ length: 10_000 }, () => 'ticker'),
    });
    expect('pairs' in big && big.pairs.length).toBe(10_000);
  });

  it('Gemini subscribe: a list of 300,000 symbols is read (not spread onto the stack)', () => {
    const symbols = Array.from({ length: 300_000 }, () => 1);
    const parsed = parseGeminiSubscribe({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols }] });
    expect('symbols' in parsed && parsed.symbols.length).toBe(300_000);
  });
});

describe('valueText: what a sender gave, as text, without throwing', () => {
  it('a string as it is, anything else as its JSON, a value too deep by its kind', () => {
    expect(valueText('BTC-USD')).toBe('BTC-USD');
    expect(valueText({ toString: 0 })).toBe('{"toString":0}');
    expect(valueText(7)).toBe('7');
    expect(valueText(null)).toBe('null');
    expect(valueText(undefined)).toBe('undefined');
    const deep = JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)) as unknown;
    expect(valueText(deep)).toBe('[…]');
    const deepObject = JSON.parse('{"a":'.repeat(200_000) + '0' + '}'.repeat(200_000)) as unknown;
    expect(valueText(deepObject)).toBe('{…}');
  });
});

describe('client messages as the venue reads them (shared by the simulator and the replay)', () => {
  it('Polymarket CLOB market channel: PING, subscribe (type market, operation subscribe), unsubscribe, invalid', () => {
    expect(parseClobRequest('PING')).toEqual({ kind: 'ping' });
    expect(parseClobRequest('{"assets_ids":["1","2"],"type":"Market"}')).toEqual({
      kind: 'subscribe',
      assets: ['1', '2'],
      initialDump: true,
    });
    expect(parseClobRequest('{"assets_ids":["1"],"operation":"subscribe","initial_dump":false}')).toEqual({
      kind: 'subscribe',
      assets: ['1'],
      initialDump: false,
    });
    expect(parseClobRequest('{"assets_ids":["1"],"operation":"unsubscribe"}')).toEqual({
      kind: 'unsubscribe',
      assets: ['1'],
    });
    for (const bad of [
      'ping',
      'x',
      '[]',
      '{"assets_ids":"1","type":"market"}',
      '{"assets_ids":[1],"type":"market"}',
      '{"assets_ids":["1"]}',
    ])
      expect(parseClobRequest(bad)).toEqual({ kind: 'invalid' });
    expect(parseClobRequest('{"assets_ids":["1"],"type":"market"}', true)).toEqual({ kind: 'invalid' });
  });

  it('Polymarket US markets WebSocket: subscribe with its requestId, unsubscribe, and each error text', () => {
    const sub = (s: Record<string, unknown>) => parsePmUsRequest(JSON.stringify({ subscribe: s }));
    expect(sub({ requestId: 'r', subscriptionType: 'SUBSCRIPTION_TYPE_TRADE', marketSlugs: ['a', 1, 'b'] })).toEqual({
      kind: 'subscribe',
      requestId: 'r',
      type: 'SUBSCRIPTION_TYPE_TRADE',
      slugs: ['a', 'b'],
    });
    expect(parsePmUsRequest('{"unsubscribe":{"requestId":"r"}}')).toEqual({ kind: 'unsubscribe', requestId: 'r' });
    expect(parsePmUsRequest('nope')).toEqual({ kind: 'error', error: 'invalid message' });
    expect(parsePmUsRequest('{"ping":{}}')).toEqual({ kind: 'error', error: 'unknown message' });
    expect(sub({ subscriptionType: 'SUBSCRIPTION_TYPE_TRADE', marketSlugs: ['a'] })).toEqual({
      kind: 'error',
      error: 'requestId is required',
    });
    expect(sub({ requestId: 'r', subscriptionType: 'X', marketSlugs: ['a'] })).toEqual({
      kind: 'error',
      requestId: 'r',
      error: 'unsupported subscriptionType',
    });
    expect(sub({ requestId: 'r', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA' })).toEqual({
      kind: 'error',
      requestId: 'r',
      error: 'marketSlugs is required',
    });
    expect(
      sub({ requestId: 'r', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: Array(101).fill('a') }),
    ).toEqual({ kind: 'error', requestId: 'r', error: 'too many marketSlugs (max 100)' });
  });
});
