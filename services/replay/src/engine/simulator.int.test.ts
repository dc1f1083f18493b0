/**
 * The engine against the venue simulator: the simulator's feeds write a book and its changes through the same wire
 * module, so for the same book and the same rows the engine's messages are the simulator's, byte for byte, wherever
 * the venue's format is deterministic from recorded data. Where a field is not recorded (Gemini `event_id`, Coinbase
 * `sequence` and order ids of a match, Polymarket US `stats`, the trade's sub-millisecond `tradeTime`, the first
 * Gemini message's earlier trades) that field alone is set aside, as the comment at each comparison says.
 */
import { fractionDigits } from '@depthgate/feeds';
import { WsTestClient as FeedClient } from '@depthgate/test-utils';
import { signers, startSimulator, type BookEventView, type DecimalBook, type Simulator } from '@depthgate/venue-sim';
import { replay, type VenueEncoder } from './replay';
import type { RecordedDelta, RecordedTrade, RecordedWindow } from './types';
import { clobEncoder } from './venue-a-clob';
import { pmUsEncoder } from './venue-a-us';
import { kalshiEncoder } from './venue-b';
import { geminiEncoder } from './venue-c';
import { coinbaseEncoder } from './venue-d';

const T0 = Date.UTC(2026, 10, 24, 9);

/** The simulator's events as recorded rows: changes then trades, one `sequence` counter. */
function windowOf(ticker: string, start: DecimalBook, startTs: number, events: BookEventView[]): RecordedWindow {
  let sequence = 0;
  const deltas: RecordedDelta[] = [];
  const trades: RecordedTrade[] = [];
  for (const e of events) {
    for (const c of e.changes)
      deltas.push({ ts: e.ts, sequence: ++sequence, side: c.side, price: c.price, quantity_delta: c.delta });
    for (const t of e.trades)
      trades.push({
        ts: t.ts,
        sequence: ++sequence,
        trade_id: t.id ?? '',
        price: t.price,
        size: t.size,
        side: t.side,
        venue_side: t.venueSide,
      });
  }
  return {
    ticker,
    start: { ts: startTs, book: { bids: start.bids, asks: start.asks } },
    opening: { ts: startTs, received_ts: startTs },
    deltas,
    trades,
    gaps: [],
  };
}

const texts = (w: RecordedWindow, encoder: VenueEncoder) => [...replay(w, encoder)].map((m) => m.text);
const places = (b: DecimalBook, i: 0 | 1) => fractionDigits((b.bids[0] ?? b.asks[0] ?? ['0', '0'])[i]);

describe('the engine writes what the simulator writes for the same book and changes', () => {
  let sim: Simulator;
  let now = T0;
  const clients: FeedClient[] = [];
  beforeEach(async () => {
    now = T0;
    sim = await startSimulator({ seed: 11, updatesPerSecond: 0, rateLimits: false, clock: () => now });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sim.stop();
  });
  const open = async (url: string | undefined, headers?: Record<string, string>) => {
    const c = await FeedClient.open(url as string, { headers });
    clients.push(c);
    return c;
  };
  /** Moves the simulator `n` events, each at its own ms; returns the ticker's events. */
  const step = (platform: string, ticker: string, n: number): BookEventView[] => {
    for (let i = 0; i < n; i++) {
      now += 3;
      sim.books.step(1);
    }
    return sim.books.events(platform, ticker, T0 + 1);
  };

  test('venue_b (Kalshi): orderbook_snapshot, every orderbook_delta with its seq, every trade', async () => {
    const ticker = sim.recordedTickers().venue_b[0] as string;
    const c = await open(
      sim.feeds['venue-b'],
      signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/ws/v2', T0),
    );
    const book = sim.books.book('venue-b', ticker);
    c.send({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'trade'], market_tickers: [ticker] } });
    await c.until((ms) => ms.some((m) => m.type === 'orderbook_snapshot'));
    const events = step('venue-b', ticker, 200);
    await c.sync();
    const simTexts = c.texts.filter((t) => !t.includes('"type":"subscribed"'));
    const snapshot = JSON.parse(simTexts[0] as string) as { sid: number; msg: { market_id: string } };
    const tradeSid = (
      c.messages.find((m) => m.type === 'subscribed' && (m.msg as { channel: string }).channel === 'trade')?.msg as {
        sid: number;
      }
    ).sid;
    const encoder = kalshiEncoder({
      ticker,
      book: { sid: snapshot.sid, seq: 0 },
      tradeSid,
      marketId: snapshot.msg.market_id,
    });
    const ours = texts(windowOf(ticker, book, T0, events), encoder);
    expect(events.some((e) => e.trades.length > 0)).toBe(true);
    expect(ours).toEqual(simTexts);
  });

  test('venue_c (Gemini): the first l2_updates, every l2_updates, every trade (event_id aside)', async () => {
    const symbol = sim.recordedTickers().venue_c[0] as string;
    const c = await open(sim.feeds['venue-c']);
    const book = sim.books.book('venue-c', symbol);
    c.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [symbol] }] });
    await c.until((ms) => ms.some((m) => m.type === 'l2_updates'));
    const events = step('venue-c', symbol, 200);
    await c.sync();
    const encoder = geminiEncoder({ symbol, priceDecimals: places(book, 0), quantityDecimals: places(book, 1) });
    const ours = texts(windowOf(symbol, book, T0, events), encoder);
    // The first message's `trades` are the symbol's trades before the window, which the engine leaves out (each trade of
    // the window comes once, as its own message); `event_id` is not recorded (the engine sends the tid).
    const simTexts = c.texts.filter((t) => !t.includes('"type":"heartbeat"'));
    const first = (simTexts[0] as string).replace(/"trades":\[.*\],"auction_events"/, '"trades":[],"auction_events"');
    const eventIds = (t: string) => t.replace(/"event_id":\d+/, '"event_id":0');
    expect(events.some((e) => e.trades.length > 0)).toBe(true);
    expect(ours.map(eventIds)).toEqual([first, ...simTexts.slice(1)].map(eventIds));
  });

  test('venue_d (Coinbase): snapshot, every l2update, every match (sequence and order ids aside)', async () => {
    const product = sim.recordedTickers().venue_d[0] as string;
    const c = await open(sim.feeds['venue-d']);
    const book = sim.books.book('venue-d', product);
    const h = signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', '/users/self/verify', '', Math.floor(T0 / 1000));
    c.send({
      type: 'subscribe',
      product_ids: [product],
      channels: ['level2', 'matches'],
      key: h['CB-ACCESS-KEY'],
      passphrase: h['CB-ACCESS-PASSPHRASE'],
      timestamp: h['CB-ACCESS-TIMESTAMP'],
      signature: h['CB-ACCESS-SIGN'],
    });
    await c.until((ms) => ms.some((m) => m.type === 'snapshot'));
    const events = step('venue-d', product, 200);
    await c.sync();
    const encoder = coinbaseEncoder({ product, priceDecimals: places(book, 0), sizeDecimals: places(book, 1) });
    const ours = texts(windowOf(product, book, T0, events), encoder);
    const simTexts = c.texts.filter((t) => !/"type":"(subscriptions|last_match|heartbeat)"/.test(t));
    // A match's `sequence` (the product's feed sequence) and order ids are not recorded.
    const unrecorded = (t: string) =>
      t.replace(/"sequence":\d+/, '"sequence":0').replace(/"(maker|taker)_order_id":"[^"]*"/g, '"$1_order_id":""');
    expect(events.some((e) => e.trades.length > 0)).toBe(true);
    expect(ours.map(unrecorded)).toEqual(simTexts.map(unrecorded));
  });

  test('venue_a_clob (Polymarket CLOB): book, every price_change with its hashes, last_trade_price, the book after a trade', async () => {
    const asset = sim.recordedTickers().venue_a_clob[0] as string;
    const c = await open(sim.feeds['venue-a-clob']);
    c.send({ assets_ids: [asset], type: 'market' });
    await c.until((ms) => ms.some((m) => m.event_type === 'book'));
    const first = c.messages.find((m) => m.event_type === 'book') as Record<string, string | boolean>;
    const book = sim.books.book('venue-a-clob', asset);
    const events = step('venue-a-clob', asset, 1000);
    await c.sync();
    const encoder = clobEncoder({
      asset,
      market: first.market as string,
      minOrderSize: first.min_order_size as string,
      tickSize: first.tick_size as string,
      negRisk: first.neg_risk as boolean,
    });
    const w = windowOf(asset, book, Number(first.timestamp), events);
    if (first.last_trade_price !== '')
      w.lastTrade = { ...(w.trades[0] as RecordedTrade), price: first.last_trade_price as string };
    const ours = texts(w, encoder);
    // The simulator sends its initial books as one JSON array [3P]; the engine one `book` per asset.
    const simTexts = c.texts.map((t) => (t.startsWith('[') ? t.slice(1, -1) : t));
    // The venue sends the book after a taker's order, once for all its fills; the engine after each recorded trade
    // (the rows do not say which fills were one order): compare the price_changes, the trades and each ts's last book.
    const kinds = (list: string[]) => {
      const books = new Map<string, string>();
      const rest: string[] = [];
      for (const t of list) {
        if (t.startsWith('{"event_type":"book"')) books.set((JSON.parse(t) as { timestamp: string }).timestamp, t);
        else rest.push(t);
      }
      return { books, rest };
    };
    const a = kinds(ours);
    const b = kinds(simTexts.filter((t) => !t.includes('"event_type":"tick_size_change"')));
    expect(events.some((e) => e.trades.length > 0)).toBe(true);
    expect(a.rest.length).toBeGreaterThan(30);
    expect(a.rest).toEqual(b.rest);
    expect(a.books).toEqual(b.books);
  });

  test('venue_a_us (Polymarket US): every whole book (stats aside), every trade (sub-millisecond tradeTime aside)', async () => {
    const slug = sim.recordedTickers().venue_a_us[0] as string;
    const c = await open(
      sim.feeds['venue-a-us'],
      signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/ws/markets', T0),
    );
    c.send({ subscribe: { requestId: 'tr', subscriptionType: 'SUBSCRIPTION_TYPE_TRADE', marketSlugs: [slug] } });
    c.send({ subscribe: { requestId: 'md', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [slug] } });
    await c.until((ms) => ms.some((m) => m.marketData));
    const book = sim.books.book('venue-a-us', slug);
    const first = c.messages.find((m) => m.marketData) as { marketData: { transactTime?: string } };
    const events = step('venue-a-us', slug, 200);
    await c.sync();
    const encoder = pmUsEncoder({
      slug,
      requestId: 'md',
      tradeRequestId: 'tr',
      priceDecimals: places(book, 0),
      quantityDecimals: places(book, 1),
    });
    const startTs = first.marketData.transactTime ? Date.parse(first.marketData.transactTime) : T0;
    const ours = texts(windowOf(slug, book, startTs, events), encoder);
    const simTexts = c.texts.filter((t) => t !== '{"heartbeat":{}}');
    // `stats` is not recorded; the simulator's `tradeTime` carries the trade's number in its nanoseconds.
    const unrecorded = (t: string) =>
      t
        .replace(/"stats":\{.*?\}(,"transactTime")/, '"stats":{}$1')
        .replace(/"tradeTime":"([^".]*\.\d{3})\d*Z"/, '"tradeTime":"$1Z"');
    expect(events.some((e) => e.trades.length > 0)).toBe(true);
    expect(ours.map(unrecorded)).toEqual(simTexts.map(unrecorded));
  });
});
