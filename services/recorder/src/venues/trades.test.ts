import { placed, sessionHarness as harness } from '../testing/support';
import type { TickerRecorder } from '../ticker';
import type { RestClient } from './rest';
import { deterministicTradeId, rfc3339Millis, type TradeWindow } from './trades';
import { venueAUsProtocol, venueAUsTrade, venueAUsTradeId } from './venue-a-us';
import { venueBProtocol, venueBTrade, venueBTrades } from './venue-b';
import { venueCProtocol, venueCTrade, venueCTrades } from './venue-c';

/** A REST client answering from `answer(path)`, recording every path asked for. */
function fakeRest(answer: (path: string, query: URLSearchParams) => unknown) {
  const asked: string[] = [];
  const rest = {
    json: (pathAndQuery: string) => {
      asked.push(pathAndQuery);
      const url = new URL(`http://x${pathAndQuery}`);
      return Promise.resolve(answer(url.pathname, url.searchParams));
    },
  } as unknown as RestClient;
  return { rest, asked };
}

describe('trade helpers', () => {
  it('reads RFC 3339 times truncated to the millisecond, whatever their precision', () => {
    expect(rfc3339Millis('2026-01-08T02:59:57.96221Z')).toBe(Date.UTC(2026, 0, 8, 2, 59, 57, 962));
    expect(rfc3339Millis('2024-01-15T10:30:00.123999999Z')).toBe(Date.UTC(2024, 0, 15, 10, 30, 0, 123));
    expect(rfc3339Millis('2024-01-15T10:30:00Z')).toBe(Date.UTC(2024, 0, 15, 10, 30, 0, 0));
    expect(rfc3339Millis('2024-01-15T12:30:00.5+02:00')).toBe(Date.UTC(2024, 0, 15, 10, 30, 0, 500));
    for (const bad of ['2024-01-15', 'yesterday', 1705314600, '2024-01-15 10:30:00Z']) {
      expect(rfc3339Millis(bad)).toBeUndefined();
    }
  });

  it('makes deterministic ids from the fields of a trade', () => {
    const id = deterministicTradeId(['m', '2024-01-15T10:30:00Z', '0.555']);
    expect(id).toMatch(/^h:[0-9a-f]{16}$/);
    expect(deterministicTradeId(['m', '2024-01-15T10:30:00Z', '0.555'])).toBe(id);
    expect(deterministicTradeId(['m', '2024-01-15T10:30:00Z', '0.556'])).not.toBe(id);
    // Fields are separated: moving a character from one to the next is another trade.
    expect(deterministicTradeId(['ab', 'c'])).not.toBe(deterministicTradeId(['a', 'bc']));
  });
});

describe('Kalshi trades', () => {
  const wsTrade = {
    trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
    market_ticker: 'HIGHNY-22DEC23-B53.5',
    yes_price_dollars: '0.360',
    no_price_dollars: '0.640',
    count_fp: '136.00',
    taker_side: 'no',
    taker_outcome_side: 'no',
    taker_book_side: 'ask',
    is_block_trade: false,
    ts: 1669149841,
    ts_ms: 1669149841123,
  };

  it('reads the feed and REST shapes alike: the YES price, the taker buying NO sells YES, one instant', () => {
    expect(venueBTrade(wsTrade)).toEqual({
      ts: 1669149841123,
      id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
      price: '0.360',
      size: '136.00',
      side: 'sell',
      venueSide: 'no',
    });
    // REST: `ticker`, `created_time` with microseconds, the same trade.
    const rest = {
      trade_id: wsTrade.trade_id,
      ticker: wsTrade.market_ticker,
      count_fp: '136.00',
      yes_price_dollars: '0.360',
      no_price_dollars: '0.640',
      taker_side: 'no',
      taker_outcome_side: 'no',
      taker_book_side: 'ask',
      created_time: '2022-11-22T20:44:01.123456Z',
      is_block_trade: false,
    };
    expect(venueBTrade(rest)).toEqual(venueBTrade(wsTrade));
    // Older shapes: `taker_side` only and seconds; legacy cents; the book side alone.
    expect(venueBTrade({ trade_id: 'a', yes_price: 41, count: 3, taker_side: 'yes', ts: 1669149841 })).toEqual({
      ts: 1669149841000,
      id: 'a',
      price: '0.41',
      size: '3',
      side: 'buy',
      venueSide: 'yes',
    });
    expect(venueBTrade({ ...rest, taker_side: undefined, taker_outcome_side: undefined })).toMatchObject({
      side: 'sell',
      venueSide: 'ask',
    });
    expect(venueBTrade({ ...rest, trade_id: undefined })).toBeUndefined();
    expect(venueBTrade({ ...rest, created_time: 'soon' })).toBeUndefined();
  });

  it('subscribes the trade channel before the books, on its own sid, and records its trades', () => {
    const h = harness(placed(venueBProtocol({ subscribeBatch: 10, trades: true }), 'venue_b'), ['A', 'B'], {
      trades: true,
    });
    h.session.subscribe(['A', 'B']);
    expect(h.sent).toEqual([
      { id: 1, cmd: 'subscribe', params: { channels: ['trade'], market_tickers: ['A', 'B'] } },
      { id: 2, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A', 'B'] } },
    ]);
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 7 } });
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 8 } });
    const tradeMsg = (sid: number, ticker: string, id: string, side: string, ts: number) =>
      h.msg({
        type: 'trade',
        sid,
        msg: { ...wsTrade, trade_id: id, market_ticker: ticker, taker_outcome_side: side, ts_ms: ts },
      });
    tradeMsg(7, 'A', 't1', 'yes', 5000);
    tradeMsg(7, 'B', 't2', 'no', 5001);
    tradeMsg(7, 'A', 't1', 'yes', 5000); // the same trade again: recorded once
    tradeMsg(99, 'A', 't3', 'yes', 5002); // a subscription we do not hold
    // The books' own seq is not disturbed by trades (none carries one).
    h.msg({ type: 'orderbook_snapshot', sid: 8, seq: 1, msg: { market_ticker: 'A', yes_dollars_fp: [['0.36', '1']] } });
    h.msg({
      type: 'orderbook_delta',
      sid: 8,
      seq: 2,
      msg: { market_ticker: 'A', side: 'yes', price_dollars: '0.36', delta_fp: '1.00', ts_ms: 5003 },
    });
    expect(h.sent).toHaveLength(2);
    expect(h.sink.of('trade').map((r) => [r.ticker, r.tradeId, r.ts, r.price, r.size, r.tradeSide])).toEqual([
      ['A', 't1', 5000, '0.36', '136', 'buy'],
      ['B', 't2', 5001, '0.36', '136', 'sell'],
    ]);
    // A resync asks for the book only; trades carry on.
    h.sent.length = 0;
    h.session.resync(['A']);
    expect(h.sent).toEqual([
      { id: 3, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A'] } },
    ]);
  });

  it('moves the other markets of a trade subscription to a new one before dropping it when a market leaves', () => {
    const h = harness(placed(venueBProtocol({ subscribeBatch: 10, trades: true }), 'venue_b'), ['A', 'B'], {
      trades: true,
    });
    h.session.subscribe(['A', 'B']);
    h.msg({ id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 1 } });
    h.msg({ id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 2 } });
    h.sent.length = 0;
    h.recs.delete('B');
    h.session.unsubscribe(['B']);
    expect(h.sent).toEqual([
      { id: 3, cmd: 'unsubscribe', params: { sids: [2] } },
      { id: 4, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A'] } },
      { id: 5, cmd: 'subscribe', params: { channels: ['trade'], market_tickers: ['A'] } },
    ]);
    // The old trade subscription still carries A until the new one answers.
    h.msg({ type: 'trade', sid: 1, msg: { ...wsTrade, trade_id: 'x1', market_ticker: 'A' } });
    h.msg({ id: 5, type: 'subscribed', msg: { channel: 'trade', sid: 3 } });
    expect(h.sent.at(-1)).toEqual({ id: 6, cmd: 'unsubscribe', params: { sids: [1] } });
    h.msg({ type: 'trade', sid: 1, msg: { ...wsTrade, trade_id: 'x2', market_ticker: 'A' } }); // dropped sid
    h.msg({ type: 'trade', sid: 3, msg: { ...wsTrade, trade_id: 'x3', market_ticker: 'A' } });
    expect(h.sink.of('trade').map((r) => r.tradeId)).toEqual(['x1', 'x3']);
  });

  it('subscribes no trade channel when trades are off', () => {
    const h = harness(placed(venueBProtocol({ subscribeBatch: 10, trades: false }), 'venue_b'), ['A']);
    h.session.subscribe(['A']);
    expect(h.sent).toEqual([
      { id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['A'] } },
    ]);
  });

  it('reads a window back newest first through the cursor, splitting it at the historical cutoff', async () => {
    const cutoff = Date.UTC(2026, 0, 1);
    const t = (id: string, ms: number) => ({
      trade_id: id,
      ticker: 'KX-1',
      count_fp: '1.00',
      yes_price_dollars: '0.5000',
      taker_outcome_side: 'yes',
      created_time: new Date(ms).toISOString(),
    });
    const { rest, asked } = fakeRest((path, q) => {
      if (path === '/historical/cutoff') return { trades_created_ts: new Date(cutoff).toISOString() };
      if (path === '/markets/trades') {
        return q.get('cursor') === 'p2'
          ? { trades: [t('live-1', cutoff + 1000)], cursor: '' }
          : { trades: [t('live-3', cutoff + 5000), t('live-2', cutoff + 2000)], cursor: 'p2' };
      }
      if (path === '/historical/trades') return { trades: [t('hist-1', cutoff - 4000)], cursor: '' };
      throw new Error(path);
    });
    const w: TradeWindow = { from: cutoff - 5000, to: cutoff + 6000 };
    const result = await venueBTrades.fetch(rest, 'KX-1', w, { maxPages: 10 });
    expect(result.missing).toBeUndefined();
    expect(result.trades.map((x) => [x.id, x.ts - cutoff])).toEqual([
      ['live-3', 5000],
      ['live-2', 2000],
      ['live-1', 1000],
      ['hist-1', -4000],
    ]);
    const s = (ms: number) => String(Math.floor(ms / 1000));
    expect(asked).toEqual([
      '/historical/cutoff',
      `/markets/trades?ticker=KX-1&min_ts=${Number(s(cutoff)) - 1}&max_ts=${Number(s(cutoff + 6000)) + 1}&limit=1000`,
      `/markets/trades?ticker=KX-1&min_ts=${Number(s(cutoff)) - 1}&max_ts=${Number(s(cutoff + 6000)) + 1}&limit=1000&cursor=p2`,
      `/historical/trades?ticker=KX-1&min_ts=${Number(s(cutoff - 5000)) - 1}&max_ts=${Number(s(cutoff - 1)) + 1}&limit=1000`,
    ]);
    // The cutoff is read once an hour, not per window.
    await venueBTrades.fetch(rest, 'KX-1', { from: cutoff + 100, to: cutoff + 200 }, { maxPages: 1 });
    expect(asked.filter((p) => p === '/historical/cutoff')).toHaveLength(1);
  });

  it('reports the part of a window its page budget did not reach as missing', async () => {
    const cutoff = Date.UTC(2020, 0, 1);
    const page = (n: number) => ({
      trades: [
        {
          trade_id: `p${n}`,
          count_fp: '1.00',
          yes_price_dollars: '0.5',
          taker_side: 'yes',
          created_time: new Date(90_000_000_000 - n * 1000).toISOString(),
        },
      ],
      cursor: `c${n + 1}`,
    });
    let n = 0;
    const { rest } = fakeRest((path) =>
      path === '/historical/cutoff' ? { trades_created_ts: String(cutoff / 1000) } : page(n++),
    );
    const result = await venueBTrades.fetch(
      rest,
      'KX-1',
      { from: 80_000_000_000, to: 90_000_000_000 },
      { maxPages: 3 },
    );
    expect(result.trades.map((x) => x.id)).toEqual(['p0', 'p1', 'p2']);
    expect(result.missing).toEqual({ from: 80_000_000_000, to: 90_000_000_000 - 2000 });
  });
});

describe('Gemini trades', () => {
  const feedTrade = {
    type: 'trade',
    symbol: 'BTCUSD',
    event_id: 3575573053,
    timestamp: 1560976400428,
    price: '9004.21000000',
    quantity: '0.09110000',
    side: 'buy',
    tid: 2840140800042677,
  };

  it('reads the feed and REST shapes alike (the taker side on both), and skips broken trades', () => {
    const want = {
      ts: 1560976400428,
      id: '2840140800042677',
      price: '9004.21000000',
      size: '0.09110000',
      side: 'buy',
      venueSide: 'buy',
    };
    expect(venueCTrade(feedTrade)).toEqual(want);
    const rest = {
      timestamp: 1560976400,
      timestampms: 1560976400428,
      tid: 2840140800042677,
      price: '9004.21000000',
      amount: '0.09110000',
      exchange: 'gemini',
      type: 'buy',
    };
    expect(venueCTrade(rest)).toEqual(want);
    expect(venueCTrade({ ...rest, broken: true })).toBeUndefined();
    expect(venueCTrade({ ...rest, type: 'auction' })).toBeUndefined();
    expect(venueCTrade({ ...rest, tid: 2 ** 60 })).toBeUndefined();
  });

  it("records the first book's last trades and each trade message; a resubscription opens a window", async () => {
    const h = harness(
      placed(venueCProtocol({ subscribeBatch: 50, resubscribeDelayMs: 5, trades: true }), 'venue_c'),
      ['BTCUSD'],
      { trades: true },
    );
    h.session.subscribe(['BTCUSD']);
    const initial = (trades: unknown[]) =>
      h.msg({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['buy', '1', '1']], trades });
    initial([
      { ...feedTrade, tid: 12, timestamp: 999_990 },
      { ...feedTrade, tid: 11, timestamp: 999_980, side: 'sell' },
    ]);
    h.msg({ ...feedTrade, tid: 13, timestamp: 1_000_001 });
    h.msg({ ...feedTrade, tid: 13, timestamp: 1_000_001 });
    expect(h.sink.of('trade').map((r) => [r.tradeId, r.ts, r.tradeSide])).toEqual([
      ['11', 999_980, 'sell'],
      ['12', 999_990, 'buy'],
      ['13', 1_000_001, 'buy'],
    ]);
    // Its book is found wrong: the subscription is replaced, and the trades in between are a window.
    h.recs.get('BTCUSD')?.lose('divergence', 0);
    h.session.resync(['BTCUSD']);
    await new Promise((r) => setTimeout(r, 20));
    h.clock.now += 50;
    initial([
      { ...feedTrade, tid: 14, timestamp: 1_000_030 },
      { ...feedTrade, tid: 13, timestamp: 1_000_001 },
    ]);
    expect(h.windows.map(({ window: w }) => [w.from, w.to, w.last])).toEqual([
      // Read forward (since_tid) from the newest trade held before the window.
      [1_000_001, 1_000_050, { ts: 999_990, id: '12' }],
    ]);
    expect(h.sink.of('trade').map((r) => r.tradeId)).toEqual(['11', '12', '13', '14']);
    h.session.close();
  });

  it('reads a window forward from the last trade held with since_tid, page after page', async () => {
    const tradeAt = (tid: number) => ({
      timestamp: 0,
      timestampms: 1000 + tid,
      tid,
      price: '1',
      amount: '1',
      exchange: 'gemini',
      type: 'sell',
    });
    const { rest, asked } = fakeRest((_path, q) => {
      const since = Number(q.get('since_tid'));
      const limit = Number(q.get('limit_trades'));
      const last = Math.min(since + limit, 1700);
      const out = [];
      for (let tid = last; tid > since; tid--) out.push(tradeAt(tid));
      return out;
    });
    const result = await venueCTrades.fetch(
      rest,
      'BTCUSD',
      { from: 1100, to: 3000, last: { ts: 1100, id: '100' } },
      { maxPages: 10 },
    );
    expect(result.missing).toBeUndefined();
    expect(result.trades).toHaveLength(1600);
    expect(asked).toEqual([
      '/v1/trades/BTCUSD?since_tid=100&limit_trades=500',
      '/v1/trades/BTCUSD?since_tid=600&limit_trades=500',
      '/v1/trades/BTCUSD?since_tid=1100&limit_trades=500',
      '/v1/trades/BTCUSD?since_tid=1600&limit_trades=500',
    ]);
    // Out of pages: what follows the newest trade read is missing.
    const short = await venueCTrades.fetch(
      rest,
      'BTCUSD',
      { from: 1100, to: 3000, last: { ts: 1100, id: '100' } },
      { maxPages: 2 },
    );
    expect(short.missing).toEqual({ from: 2100, to: 3000 });
  });

  it('without a trade held reads the newest page after the window start; a full page leaves its older part missing', async () => {
    const { rest, asked } = fakeRest(() =>
      Array.from({ length: 500 }, (_, i) => ({
        timestampms: 9000 - i,
        tid: 9000 - i,
        price: '1',
        amount: '1',
        type: 'buy',
      })),
    );
    const result = await venueCTrades.fetch(rest, 'ETHUSD', { from: 5000, to: 9500 }, { maxPages: 5 });
    expect(asked).toEqual(['/v1/trades/ETHUSD?timestamp=5000&limit_trades=500']);
    expect(result.missing).toEqual({ from: 5000, to: 8501 });
    expect(venueCTrades.reachMs).toBe(7 * 86_400_000);
  });
});

describe('Polymarket US trades', () => {
  const trade = (over: Record<string, unknown> = {}) => ({
    requestId: 'dg-tr-1',
    subscriptionType: 'SUBSCRIPTION_TYPE_TRADE',
    trade: {
      marketSlug: 'm-a',
      price: { value: '0.555', currency: 'USD' },
      quantity: { value: '0.50', currency: 'USD' },
      tradeTime: '2024-01-15T10:30:00.123Z',
      maker: { side: 'ORDER_SIDE_BUY', intent: 'ORDER_INTENT_BUY_LONG' },
      taker: { side: 'ORDER_SIDE_SELL', intent: 'ORDER_INTENT_SELL_LONG' },
      ...over,
    },
  });

  it('subscribes trades before the books, in requests of their own; a resync asks for books only', () => {
    const h = harness(placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: true }), 'venue_a_us'), [
      'm-a',
    ]);
    h.session.subscribe(['m-a']);
    expect(h.sent).toEqual([
      { subscribe: { requestId: 'dg-tr-1', subscriptionType: 'SUBSCRIPTION_TYPE_TRADE', marketSlugs: ['m-a'] } },
      {
        subscribe: {
          requestId: 'dg-md-2',
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketSlugs: ['m-a'],
          responsesDebounced: false,
        },
      },
    ]);
    h.sent.length = 0;
    h.session.resync(['m-a']);
    expect(h.sent).toEqual([
      {
        subscribe: {
          requestId: 'dg-md-2',
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketSlugs: ['m-a'],
          responsesDebounced: false,
        },
      },
    ]);
    h.sent.length = 0;
    h.session.unsubscribe(['m-a']);
    expect(h.sent).toEqual([{ unsubscribe: { requestId: 'dg-md-2' } }, { unsubscribe: { requestId: 'dg-tr-1' } }]);
  });

  it("normalises the taker's side by its intent on the long book, and keeps the venue's side", () => {
    const side = (side: string, intent?: string) =>
      venueAUsTrade({ ...trade().trade, taker: { side, ...(intent ? { intent } : {}) } })?.trade.side;
    expect(side('ORDER_SIDE_BUY', 'ORDER_INTENT_BUY_LONG')).toBe('buy');
    expect(side('ORDER_SIDE_SELL', 'ORDER_INTENT_SELL_LONG')).toBe('sell');
    expect(side('ORDER_SIDE_BUY', 'ORDER_INTENT_BUY_SHORT')).toBe('sell');
    expect(side('ORDER_SIDE_SELL', 'ORDER_INTENT_SELL_SHORT')).toBe('buy');
    expect(side('ORDER_SIDE_SELL')).toBe('sell');
    expect(side('ORDER_SIDE_UNKNOWN')).toBeUndefined();
    expect(venueAUsTrade(trade().trade)?.trade).toEqual({
      ts: Date.UTC(2024, 0, 15, 10, 30, 0, 123),
      price: '0.555',
      size: '0.50',
      side: 'sell',
      venueSide: 'ORDER_SIDE_SELL',
    });
  });

  it('names each trade by its fields: the same message the same id, two alike at one instant two ids', () => {
    const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: true }), 'venue_a_us');
    const first = harness(protocol, ['m-a'], { trades: true });
    first.msg(trade());
    first.msg(trade()); // a taker meeting two makers at one price and instant
    first.msg(trade({ tradeTime: '2024-01-15T10:30:00.124Z' }));
    const ids = first.sink.of('trade').map((r) => r.tradeId as string);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^h:[0-9a-f]{16}$/);
    const fields = venueAUsTrade(trade().trade)?.fields as string[];
    expect(fields).toEqual([
      'm-a',
      '2024-01-15T10:30:00.123Z',
      '0.555',
      '0.50',
      'ORDER_SIDE_SELL',
      'ORDER_INTENT_SELL_LONG',
      'ORDER_SIDE_BUY',
      'ORDER_INTENT_BUY_LONG',
    ]);
    expect(ids.slice(0, 2)).toEqual([venueAUsTradeId(fields, 0), venueAUsTradeId(fields, 1)]);
    // Another connection (or another writer) seeing the same messages names them alike.
    const second = harness(protocol, ['m-a'], { trades: true });
    second.msg(trade());
    second.msg(trade());
    second.msg(trade({ tradeTime: '2024-01-15T10:30:00.124Z' }));
    expect(second.sink.of('trade').map((r) => r.tradeId)).toEqual(ids);
  });

  describe('the trade count audit (MARKET_DATA stats.sharesTraded)', () => {
    const T = (ms: number) => Date.UTC(2024, 0, 15, 10, 30, 0, ms);
    const at = (ms: number) => new Date(T(ms)).toISOString();
    const book = (ms: number, sharesTraded: string, qty = '10.00') => ({
      requestId: 'dg-md-2',
      subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
      marketData: {
        marketSlug: 'm-a',
        bids: [{ px: { value: '0.500', currency: 'USD' }, qty }],
        offers: [{ px: { value: '0.600', currency: 'USD' }, qty: '5.00' }],
        state: 'MARKET_STATE_OPEN',
        stats: { sharesTraded, lastTradePx: { value: '0.500', currency: 'USD' } },
        transactTime: at(ms),
      },
    });
    const fill = (ms: number, size: string) => trade({ tradeTime: at(ms), quantity: { value: size, currency: 'USD' } });
    const setup = () => {
      const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: true }), 'venue_a_us');
      const h = harness(protocol, ['m-a'], { trades: true });
      h.session.subscribe(['m-a']);
      const gaps = () =>
        h.sink
          .of('gap')
          .filter((g) => g.stream === 'trades')
          .map((g) => [g.fromTs, g.toTs, g.reason]);
      return { h, gaps };
    };

    it('a trade message lost between two books is one trades gap `missed_trades` over its book change', () => {
      const { h, gaps } = setup();
      h.msg(book(100, '1000.00')); // the subscription's snapshot
      h.msg(book(200, '1000.10', '9.90'));
      h.msg(fill(200, '0.10'));
      h.msg(book(300, '1000.30', '9.70'));
      // the trade of 0.20 at 300 is lost
      h.msg(book(400, '1000.30', '12.00'));
      expect(gaps()).toEqual([[T(200), T(300), 'missed_trades']]);
      // Re-baselined: the next trades, all received, add nothing.
      h.msg(book(500, '1000.35', '11.95'));
      h.msg(fill(500, '0.05'));
      h.msg(book(600, '1000.35', '12.95'));
      expect(gaps()).toHaveLength(1);
      expect(h.sink.of('trade').map((r) => r.size)).toEqual(['0.1', '0.05']);
    });

    it('no gap while every trade arrives (0.1 + 0.2 = 0.3 exactly), nor when trades are not recorded', () => {
      const { h, gaps } = setup();
      h.msg(book(100, '7.00'));
      h.msg(book(200, '7.30', '9.70'));
      h.msg(fill(200, '0.10'));
      h.msg(fill(200, '0.20'));
      h.msg(book(300, '7.30', '11.00'));
      h.msg(book(400, '7.30', '12.00'));
      expect(gaps()).toEqual([]);
      const protocol = placed(venueAUsProtocol({ subscribeBatch: 500, debounced: false, trades: false }), 'venue_a_us');
      const off = harness(protocol, ['m-a']);
      off.session.subscribe(['m-a']);
      off.msg(book(100, '7.00'));
      off.msg(book(200, '7.30', '9.70'));
      off.msg(book(300, '7.30', '11.00'));
      expect(off.sink.of('gap')).toEqual([]);
    });

    it('after a reconnect the first book is the new baseline: what was traded meanwhile is the window, not a gap of its own', () => {
      const { h, gaps } = setup();
      h.msg(book(100, '1.00'));
      h.msg(book(200, '2.00', '9.00'));
      h.msg(fill(200, '1.00'));
      const rec = h.recs.get('m-a') as TickerRecorder;
      rec.lose('disconnect', T(200));
      rec.interruptTrades(T(200));
      h.session.subscribe(['m-a']); // the next connection
      h.msg(fill(700, '3.00')); // a trade before its first book
      h.msg(book(900, '9.00', '4.00'));
      h.msg(book(1000, '9.50', '3.50'));
      h.msg(fill(1000, '0.50'));
      h.msg(book(1100, '9.50', '5.00'));
      expect(gaps()).toEqual([]);
      // (Polymarket US has no trade history: that window becomes a trades gap `no_backfill`.)
      expect(h.windows.map((w) => [w.window.gapFrom, w.window.to])).toEqual([[T(200), T(900) + 1]]);
      // A loss after it is measured from the new baseline.
      h.msg(book(1200, '10.00', '4.50'));
      h.msg(book(1300, '10.00', '6.00'));
      expect(gaps()).toEqual([[T(1100), T(1200), 'missed_trades']]);
    });
  });
});
