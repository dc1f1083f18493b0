import { parseScaled } from './core/decimal';
import { signers, startSimulator, type Simulator } from './index';
import { FeedClient, get } from './testing/clients';

/** A book rebuilt from absolute level sizes, levels as exact decimal text keyed by price value. */
class AbsoluteBook {
  readonly bids = new Map<string, string>();
  readonly asks = new Map<string, string>();
  set(side: 'bid' | 'ask', price: string, size: string): void {
    const m = side === 'bid' ? this.bids : this.asks;
    if (/^0(\.0*)?$/.test(size)) m.delete(price);
    else m.set(price, size);
  }
  reset(): void {
    this.bids.clear();
    this.asks.clear();
  }
  view(): { bids: [string, string][]; asks: [string, string][] } {
    const num = (p: string) => parseScaled(p, 8) as number;
    return {
      bids: [...this.bids].sort((a, b) => num(b[0]) - num(a[0])),
      asks: [...this.asks].sort((a, b) => num(a[0]) - num(b[0])),
    };
  }
}

function coinbaseAuth(sim: Simulator, tsSec = Math.floor(Date.now() / 1000)) {
  const h = signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', '/users/self/verify', '', tsSec);
  return {
    key: h['CB-ACCESS-KEY'],
    passphrase: h['CB-ACCESS-PASSPHRASE'],
    timestamp: h['CB-ACCESS-TIMESTAMP'],
    signature: h['CB-ACCESS-SIGN'],
  };
}

describe('feeds: Polymarket CLOB market channel, Coinbase Exchange, Kalshi ticker and trade', () => {
  let sim: Simulator;
  const clients: FeedClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sim?.stop();
  });
  const open = async (url: string | undefined, headers?: Record<string, string>) => {
    const c = await FeedClient.open(url as string, { headers });
    clients.push(c);
    return c;
  };

  /** A simulator with one CLOB market; its YES asset. */
  const clobSim = async () => {
    sim = await startSimulator({
      seed: 4,
      updatesPerSecond: 0,
      platforms: ['venue-a-clob'],
      tickers: { 'venue-a-clob': 1 },
      rateLimits: false,
    });
    return sim.books.tickers('venue-a-clob')[0] as string;
  };

  test('CLOB: books for the subscribed assets, price_change items for them only, a book equal to GET /book', async () => {
    const yes = await clobSim();
    const market = (await get(`${sim.urls['venue-a-clob']}/book?token_id=${yes}`)).json as { market: string };
    const c = await open(sim.feeds['venue-a-clob']);
    c.send({ assets_ids: [yes, '42'], type: 'market' });
    await c.until((ms) => ms.some((m) => m.event_type === 'book'));
    // The initial books come as one JSON array; the unknown asset is ignored.
    expect(c.texts[0]?.startsWith('[')).toBe(true);
    expect(c.messages.filter((m) => m.event_type === 'book').map((m) => m.asset_id)).toEqual([yes]);
    c.send('PING');
    await c.until(() => c.texts.includes('PONG'));
    c.send('{"assets_ids":');
    await c.until(() => c.texts.includes('INVALID OPERATION'));

    const book = new AbsoluteBook();
    const first = c.messages.find((m) => m.event_type === 'book') as Record<string, unknown>;
    for (const l of first.bids as { price: string; size: string }[]) book.set('bid', l.price, l.size);
    for (const l of first.asks as { price: string; size: string }[]) book.set('ask', l.price, l.size);
    sim.books.step(40);
    await c.sync();
    const changes = c.messages.filter((m) => m.event_type === 'price_change');
    expect(changes.length).toBeGreaterThan(0);
    for (const m of changes) {
      expect(m.market).toBe(market.market);
      for (const item of m.price_changes as Record<string, string>[]) {
        expect(item.asset_id).toBe(yes);
        book.set(item.side === 'BUY' ? 'bid' : 'ask', item.price as string, item.size as string);
      }
    }
    const rest = (await get(`${sim.urls['venue-a-clob']}/book?token_id=${yes}`)).json as Record<
      'bids' | 'asks',
      { price: string; size: string }[]
    >;
    const restBook = new AbsoluteBook();
    for (const l of rest.bids) restBook.set('bid', l.price, l.size);
    for (const l of rest.asks) restBook.set('ask', l.price, l.size);
    expect(book.view()).toEqual(restBook.view());
    const lastItem = (changes.at(-1)?.price_changes as Record<string, string>[]).at(-1) as Record<string, string>;
    expect(lastItem.best_bid).toBe(restBook.view().bids[0]?.[0]);
    expect(lastItem.best_ask).toBe(restBook.view().asks[0]?.[0]);
  });

  test('CLOB: the NO asset mirrors the YES book; unsubscribe stops the items; drop, disconnect and stall apply', async () => {
    const yes = await clobSim();
    const gamma = (await get(`${sim.urls['venue-a']}/markets?clob_token_ids=${yes}`)).json as {
      clobTokenIds: string;
    }[];
    const no = (JSON.parse(gamma[0]?.clobTokenIds as string) as string[])[1] as string;
    const c = await open(sim.feeds['venue-a-clob']);
    c.send({ assets_ids: [no], type: 'market' });
    await c.until((ms) => ms.some((m) => m.event_type === 'book'));
    c.send({ assets_ids: [yes], operation: 'subscribe' });
    await c.until((ms) => ms.some((m) => m.event_type === 'book' && m.asset_id === yes));
    sim.books.step(30);
    await c.sync();
    const items = c.messages
      .filter((m) => m.event_type === 'price_change')
      .flatMap((m) => m.price_changes as Record<string, string>[]);
    const yesItems = items.filter((i) => i.asset_id === yes);
    const noItems = items.filter((i) => i.asset_id === no);
    expect(yesItems.length).toBeGreaterThan(0);
    expect(noItems.length).toBe(yesItems.length);
    for (const [i, y] of yesItems.entries()) {
      const n = noItems[i] as Record<string, string>;
      expect(parseScaled(n.price as string, 2)).toBe(100 - (parseScaled(y.price as string, 2) as number));
      expect(n.side).toBe(y.side === 'BUY' ? 'SELL' : 'BUY');
      expect(n.size).toBe(y.size);
    }
    c.send({ assets_ids: [yes, no], operation: 'unsubscribe' });
    await c.sync();
    const before = c.messages.length;
    sim.books.step(20);
    await c.sync();
    expect(c.messages.length).toBe(before);

    const books = c.messages.filter((m) => m.event_type === 'book').length;
    c.send({ assets_ids: [yes], operation: 'subscribe' });
    await c.until((ms) => ms.filter((m) => m.event_type === 'book').length === books + 1);
    sim.feedFaults.dropNext('venue-a-clob', { ticker: yes });
    const n0 = c.messages.filter((m) => m.event_type === 'price_change').length;
    sim.books.step(10);
    await c.sync();
    expect(c.messages.filter((m) => m.event_type === 'price_change').length).toBe(n0 + 10 - 1);
    expect(sim.feedFaults.stats('venue-a-clob')).toMatchObject({ connections: 1, dropped: 1 });
    expect(sim.feedFaults.disconnect('venue-a-clob', { ticker: yes })).toBe(1);
    await c.until(() => c.closed);
  });

  test('Coinbase: level2 needs the signed subscribe; level2_batch is public; snapshot + l2update equal GET /book', async () => {
    sim = await startSimulator({ seed: 6, updatesPerSecond: 0, platforms: ['coinbase'], rateLimits: false });
    const c = await open(sim.feeds['venue-d']);
    c.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['level2'] });
    await c.until((ms) => ms.some((m) => m.type === 'error'));
    expect(c.messages[0]).toEqual({
      type: 'error',
      message: 'Failed to subscribe',
      reason: 'level2 channel requires authentication',
    });
    c.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['level2'], ...coinbaseAuth(sim), key: 'nope' });
    await c.until((ms) => ms.filter((m) => m.type === 'error').length === 2);
    expect(c.messages[1]).toMatchObject({ type: 'error', message: 'Authentication Failed' });
    c.send({ type: 'subscribe', product_ids: ['DOGE-USD'], channels: ['ticker'] });
    c.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['full'] });
    await c.until((ms) => ms.filter((m) => m.type === 'error').length === 4);
    expect(c.messages.slice(2).map((m) => m.reason)).toEqual([
      'DOGE-USD is not a valid product',
      'full is not a valid channel',
    ]);

    c.send({
      type: 'subscribe',
      product_ids: ['BTC-USD'],
      channels: ['level2', { name: 'level2_batch', product_ids: ['ETH-USD'] }],
      ...coinbaseAuth(sim),
    });
    await c.until((ms) => ms.filter((m) => m.type === 'snapshot').length === 2);
    expect(c.messages.find((m) => m.type === 'subscriptions')).toEqual({
      type: 'subscriptions',
      channels: [
        { name: 'level2', product_ids: ['BTC-USD'] },
        { name: 'level2_batch', product_ids: ['ETH-USD'] },
      ],
    });
    sim.books.step(60);
    await new Promise((r) => setTimeout(r, 120)); // the batch window
    await c.sync();
    for (const product of ['BTC-USD', 'ETH-USD']) {
      const book = new AbsoluteBook();
      for (const m of c.messages.filter((x) => x.product_id === product)) {
        if (m.type === 'snapshot') {
          book.reset();
          for (const [p, s] of m.bids as [string, string][]) book.set('bid', p, s);
          for (const [p, s] of m.asks as [string, string][]) book.set('ask', p, s);
        } else if (m.type === 'l2update') {
          for (const [side, p, s] of m.changes as [string, string, string][])
            book.set(side === 'buy' ? 'bid' : 'ask', p, s);
        }
      }
      const rest = (await get(`${sim.urls['venue-d']}/products/${product}/book?level=2`)).json as Record<
        'bids' | 'asks',
        [string, string, number][]
      >;
      expect(book.view()).toEqual({
        bids: rest.bids.map(([p, s]) => [p, s]),
        asks: rest.asks.map(([p, s]) => [p, s]),
      });
    }
  });

  test('Coinbase: matches (last_match first), ticker after each trade, heartbeats with the product sequence', async () => {
    sim = await startSimulator({
      seed: 6,
      updatesPerSecond: 0,
      platforms: ['coinbase'],
      rateLimits: false,
      heartbeatIntervalMs: 100,
    });
    const warm = await open(sim.feeds['venue-d']);
    warm.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['matches'] });
    await warm.until((ms) => ms.some((m) => m.type === 'subscriptions'));
    while (!warm.messages.some((m) => m.type === 'match')) {
      sim.books.step(5);
      await warm.sync();
    }
    const c = await open(sim.feeds['venue-d']);
    c.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['matches', 'ticker', 'heartbeat'] });
    await c.until((ms) => ms.some((m) => m.type === 'last_match') && ms.some((m) => m.type === 'ticker'));
    const lastMatch = c.messages.find((m) => m.type === 'last_match') as Record<string, unknown>;
    const lastSeen = warm.messages.filter((m) => m.type === 'match').at(-1) as Record<string, unknown>;
    expect(lastMatch).toEqual({ ...lastSeen, type: 'last_match' });
    await c.until((ms) => ms.some((m) => m.type === 'heartbeat'));
    const beat = c.messages.find((m) => m.type === 'heartbeat') as Record<string, unknown>;
    expect(beat).toMatchObject({ product_id: 'BTC-USD', last_trade_id: lastMatch.trade_id });
    const rest = (await get(`${sim.urls['venue-d']}/products/BTC-USD/book?level=2`)).json as { sequence: number };
    expect(beat.sequence).toBe(rest.sequence);
    const n = c.messages.filter((m) => m.type === 'match').length;
    while (c.messages.filter((m) => m.type === 'match').length === n) {
      sim.books.step(5);
      await c.sync();
    }
    const match = c.messages.filter((m) => m.type === 'match').at(-1) as Record<string, unknown>;
    const ticker = c.messages.filter((m) => m.type === 'ticker').at(-1) as Record<string, unknown>;
    expect(ticker).toMatchObject({ product_id: 'BTC-USD', trade_id: match.trade_id, price: match.price });
  });

  test('Kalshi: one subscribed per channel; trade and ticker messages without seq', async () => {
    sim = await startSimulator({ seed: 8, updatesPerSecond: 0, platforms: ['kalshi'], rateLimits: false });
    const ticker = sim.books.tickers('kalshi')[0] as string;
    const c = await open(
      sim.feeds['venue-b'],
      signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/ws/v2'),
    );
    c.send({ id: 7, cmd: 'subscribe', params: { channels: ['ticker', 'trade'], market_tickers: [ticker] } });
    await c.until((ms) => ms.filter((m) => m.type === 'subscribed').length === 2);
    expect(c.messages.map((m) => (m.msg as { channel: string }).channel)).toEqual(['ticker', 'trade']);
    while (!c.messages.some((m) => m.type === 'trade')) {
      sim.books.step(5);
      await c.sync();
    }
    const trade = c.messages.find((m) => m.type === 'trade') as Record<string, unknown>;
    expect(trade).toMatchObject({ sid: 2 });
    expect(trade).not.toHaveProperty('seq');
    expect(trade.msg).toMatchObject({ market_ticker: ticker, taker_side: expect.stringMatching(/^(yes|no)$/) });
    const tick = c.messages.find((m) => m.type === 'ticker') as Record<string, unknown>;
    expect(tick.sid).toBe(1);
    expect(tick).not.toHaveProperty('seq');
    const book = sim.books.book('kalshi', ticker);
    const last = c.messages.filter((m) => m.type === 'ticker').at(-1)?.msg as Record<string, string>;
    expect(last.yes_bid_dollars).toBe(book.bids[0]?.[0]);
    expect(last.yes_ask_dollars).toBe(book.asks[0]?.[0]);
  });
  test('Kalshi: ticker without market tickers follows every market; the book and trade still need them (14)', async () => {
    sim = await startSimulator({ seed: 8, updatesPerSecond: 0, platforms: ['kalshi'], rateLimits: false });
    const markets = sim.books.tickers('kalshi');
    const [a, b] = markets as [string, string];
    const signed = () => signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/ws/v2');
    const every = await open(sim.feeds['venue-b'], signed());
    every.send({ id: 1, cmd: 'subscribe', params: { channels: ['ticker'] } });
    const named = await open(sim.feeds['venue-b'], signed());
    named.send({ id: 1, cmd: 'subscribe', params: { channels: ['ticker'], market_tickers: [a] } });
    await every.until((ms) => ms.some((m) => m.type === 'subscribed'));
    await named.until((ms) => ms.some((m) => m.type === 'subscribed'));
    expect(every.messages[0]).toEqual({ id: 1, type: 'subscribed', msg: { channel: 'ticker', sid: 1 } });
    const tickerOf = (m: Record<string, unknown>) => (m.msg as { market_ticker: string }).market_ticker;
    const seen = () => new Set(every.messages.filter((m) => m.type === 'ticker').map(tickerOf));
    for (let i = 0; i < 500 && seen().size < markets.length; i++) {
      sim.books.step(5);
      await every.sync();
    }
    expect([...seen()].sort()).toEqual([...markets].sort());
    await named.sync();
    // Market a's messages are those a subscription naming it gets.
    const ofA = every.messages.filter((m) => m.type === 'ticker' && tickerOf(m) === a).map((m) => m.msg);
    expect(ofA.length).toBeGreaterThan(0);
    expect(ofA).toEqual(named.messages.filter((m) => m.type === 'ticker').map((m) => m.msg));

    const asked: [Record<string, unknown>, number, string][] = [
      [{ id: 2, cmd: 'subscribe', params: { channels: ['orderbook_delta'] } }, 14, 'Market Ticker required'],
      [{ id: 3, cmd: 'subscribe', params: { channels: ['trade'] } }, 14, 'Market Ticker required'],
      [{ id: 4, cmd: 'subscribe', params: { channels: ['ticker', 'orderbook_delta'] } }, 14, 'Market Ticker required'],
      [
        { id: 5, cmd: 'update_subscription', params: { sid: 1, action: 'add_markets', market_tickers: [a] } },
        13,
        'Unsupported action: the subscription follows every market',
      ],
    ];
    for (const [command] of asked) every.send(command);
    every.send({ id: 6, cmd: 'list_subscriptions' });
    await every.until((ms) => ms.some((m) => m.id === 6));
    expect(asked.map(([command]) => every.messages.find((m) => m.id === command.id))).toEqual(
      asked.map(([command, code, msg]) => ({ id: command.id, type: 'error', msg: { code, msg } })),
    );
    expect(every.messages.find((m) => m.id === 6)).toEqual({ id: 6, type: 'ok', msg: [{ channel: 'ticker', sid: 1 }] });

    // Unsubscribed, a connection no longer follows every market: a fault of market b reaches only `every`.
    const gone = await open(sim.feeds['venue-b'], signed());
    gone.send({ id: 1, cmd: 'subscribe', params: { channels: ['ticker'] } });
    gone.send({ id: 2, cmd: 'unsubscribe', params: { sids: [1] } });
    await gone.until((ms) => ms.some((m) => m.type === 'unsubscribed'));
    const before = gone.messages.length;
    sim.books.step(50);
    await gone.sync();
    expect(gone.messages.length).toBe(before);
    expect(sim.feedFaults.disconnect('kalshi', { ticker: b })).toBe(1);
    await every.until(() => every.closed);
    expect(named.closed || gone.closed).toBe(false);
  });
});
