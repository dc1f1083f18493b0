import { signers, startSimulator, type Simulator } from './index';
import { get } from './testing/clients';

/** The upstream endpoints the gateway forwards to (spec gateway table and upstreams.md), per platform. */
describe('REST on the real upstream paths, in the real shapes', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 9, updatesPerSecond: 20, rateLimits: false });
  });
  afterAll(() => sim.stop());

  test('Kalshi: the gateway table, listings, market, orderbook and the platform 404', async () => {
    const k = sim.urls['venue-b'];
    const ticker = sim.books.tickers('kalshi')[0] as string;
    const filters = await get(`${k}/search/filters_by_sport`);
    expect(filters.json).toMatchObject({ filters_by_sports: expect.any(Object), sport_ordering: expect.any(Array) });
    expect((await get(`${k}/historical/cutoff`)).json).toEqual({
      market_settled_ts: expect.any(String),
      trades_created_ts: expect.any(String),
      orders_updated_ts: expect.any(String),
      market_positions_last_updated_ts: expect.any(String),
    });
    expect((await get(`${k}/exchange/announcements`)).json).toMatchObject({ announcements: expect.any(Array) });
    expect((await get(`${k}/events/multivariate`)).json).toMatchObject({ events: [], cursor: '' });
    expect((await get(`${k}/structured_targets`)).json).toMatchObject({ structured_targets: expect.any(Array) });
    const ip = await get(`${k}/incentive_programs?limit=10`);
    expect(ip.json).toMatchObject({
      incentive_programs: expect.arrayContaining([expect.objectContaining({ period_reward: 500000 })]),
    });
    expect((await get(`${k}/series/fee_changes`)).json).toMatchObject({ series_fee_change_arr: expect.any(Array) });
    expect((await get(`${k}/exchange/status`)).json).toMatchObject({ exchange_active: true, trading_active: true });
    const markets = await get(`${k}/markets?limit=3`);
    const body = markets.json as { markets: Array<{ ticker: string; yes_bid_dollars: string }>; cursor: string };
    expect(body.markets).toHaveLength(3);
    expect(body.markets[0]?.yes_bid_dollars).toMatch(/^0\.\d{4}$/);
    const next = (await get(`${k}/markets?limit=3&cursor=${body.cursor}`)).json as {
      markets: Array<{ ticker: string }>;
    };
    expect(next.markets[0]?.ticker).not.toBe(body.markets[0]?.ticker);
    expect((await get(`${k}/events?with_nested_markets=true`)).json).toMatchObject({
      events: expect.arrayContaining([expect.objectContaining({ markets: expect.any(Array) })]),
    });
    expect((await get(`${k}/series`)).json).toMatchObject({
      series: expect.arrayContaining([expect.objectContaining({ ticker: 'KXBTCD' })]),
    });
    expect((await get(`${k}/markets/${ticker}`)).json).toMatchObject({ market: { ticker, market_type: 'binary' } });
    const ob = (await get(`${k}/markets/${ticker}/orderbook?depth=3`)).json as {
      orderbook_fp: { yes_dollars: string[][]; no_dollars: string[][] };
    };
    expect(ob.orderbook_fp.yes_dollars).toHaveLength(3);
    for (const [p, q] of [...ob.orderbook_fp.yes_dollars, ...ob.orderbook_fp.no_dollars]) {
      expect(p).toMatch(/^0\.\d{2}00$/);
      expect(q).toMatch(/^\d+\.\d{2}$/);
    }
    // The batch endpoint answers each market exactly as the single-market endpoint does (books are still: 20 u/s,
    // so pause them for the comparison).
    sim.books.pause();
    try {
      const two = sim.books.tickers('kalshi').slice(0, 2);
      const batch = (await get(`${k}/markets/orderbooks?tickers=${two.join(',')}&depth=5`)).json as {
        orderbooks: Array<{ ticker: string; orderbook_fp: unknown }>;
      };
      expect(batch.orderbooks.map((b) => b.ticker)).toEqual(two);
      for (const entry of batch.orderbooks) {
        const single = (await get(`${k}/markets/${entry.ticker}/orderbook?depth=5`)).json as { orderbook_fp: unknown };
        expect(entry.orderbook_fp).toEqual(single.orderbook_fp);
      }
    } finally {
      sim.books.resume();
    }
    expect((await get(`${k}/markets/orderbooks?tickers=${ticker},KXNOPE-26MAR07-T1`)).status).toBe(404);
    expect((await get(`${k}/markets/orderbooks`)).status).toBe(400);
    const missing = await get(`${k}/markets/KXNOPE-26MAR07-T1`);
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: { code: 'not_found', message: 'not found' } });
    // Graylayer's hyphenated paths do not exist upstream (upstreams.md §4): the gateway must map them.
    expect((await get(`${k}/structured-targets`)).status).toBe(404);
    expect((await get(`${k}/historical/cutoff-timestamps`)).status).toBe(404);
    expect((await get(`${k}/markets?limit=5000`)).status).toBe(400);
  });

  test('Polymarket US public host: events object, sports, teams, markets, book, series, search, 404', async () => {
    const u = sim.urls['venue-a-us'];
    const events = await get(`${u}/v1/events?limit=2&active=true&orderBy=volume&orderDirection=desc`);
    const ev = (events.json as { events: Array<{ volume: number; active: boolean; markets: unknown[] }> }).events;
    expect(ev).toHaveLength(2);
    expect(ev.every((e) => e.active)).toBe(true);
    expect((ev[0] as { volume: number }).volume).toBeGreaterThanOrEqual((ev[1] as { volume: number }).volume);
    expect((await get(`${u}/v1/events?active=perhaps`)).status).toBe(400);
    expect((await get(`${u}/v1/sports`)).json).toMatchObject({ sports: expect.any(Array) });
    expect((await get(`${u}/v1/sports/teams?filters.league=nfl`)).json).toMatchObject({
      teams: [expect.objectContaining({ league: 'nfl' }), expect.objectContaining({ league: 'nfl' })],
    });
    const slug = sim.books.tickers('venue-a-us')[0] as string;
    expect((await get(`${u}/v1/market/slug/${slug}`)).json).toMatchObject({ market: { slug } });
    const book = (await get(`${u}/v1/markets/${slug}/book`)).json as {
      marketData: { bids: Array<{ px: { value: string; currency: string }; qty: string }>; state: string };
    };
    expect(book.marketData.state).toBe('MARKET_STATE_OPEN');
    expect(book.marketData.bids[0]?.px.value).toMatch(/^0\.\d{2}0$/);
    expect(book.marketData.bids[0]?.px.currency).toBe('USD');
    expect(book.marketData.bids[0]?.qty).toMatch(/^\d+\.\d{2}$/);
    expect((await get(`${u}/v1/markets/${slug}/bbo`)).json).toMatchObject({ marketData: { marketSlug: slug } });
    expect((await get(`${u}/v1/series`)).json).toMatchObject({ series: expect.any(Array) });
    expect((await get(`${u}/v1/search?query=fed`)).json).toMatchObject({ events: expect.any(Array) });
    expect((await get(`${u}/v1/markets`)).json).toMatchObject({ markets: expect.any(Array) });
    const nf = await get(`${u}/v1/markets/no-such-market/book`);
    expect([nf.status, nf.json]).toEqual([404, { code: 5, message: 'Not Found', details: [] }]);
  });

  test('Coinbase: currencies array, time, products, ticker, book levels, candles, stats, trades, 404', async () => {
    const c = sim.urls['venue-d'];
    const currencies = await get(`${c}/currencies`);
    expect(Array.isArray(currencies.json)).toBe(true);
    expect(currencies.json).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'BTC', details: expect.any(Object) })]),
    );
    const time = (await get(`${c}/time`)).json as { iso: string; epoch: number };
    expect(Object.keys(time).sort()).toEqual(['epoch', 'iso']);
    expect(Math.abs(Date.parse(time.iso) - time.epoch * 1000)).toBeLessThan(1);
    expect((await get(`${c}/products`)).json).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'BTC-USD' })]),
    );
    expect((await get(`${c}/products/BTC-USD/ticker`)).json).toMatchObject({
      bid: expect.stringMatching(/^\d+\.\d{2}$/),
    });
    const l1 = (await get(`${c}/products/BTC-USD/book?level=1`)).json as { bids: unknown[][]; sequence: number };
    expect(l1.bids).toHaveLength(1);
    const l2 = (await get(`${c}/products/BTC-USD/book?level=2`)).json as { bids: Array<[string, string, number]> };
    expect(l2.bids.length).toBeGreaterThan(1);
    expect(l2.bids[0]?.[1]).toMatch(/^\d+\.\d{8}$/);
    const l3 = (await get(`${c}/products/BTC-USD/book?level=3`)).json as { asks: Array<[string, string, string]> };
    expect(l3.asks[0]?.[2]).toMatch(/^[0-9a-f-]{36}$/);
    expect((await get(`${c}/products/BTC-USD/book?level=4`)).status).toBe(400);
    const candles = (await get(`${c}/products/BTC-USD/candles?granularity=3600`)).json as number[][];
    expect(candles[0]).toHaveLength(6);
    expect((await get(`${c}/products/BTC-USD/candles?granularity=7`)).status).toBe(400);
    expect((await get(`${c}/products/BTC-USD/stats`)).json).toMatchObject({
      open: expect.any(String),
      volume_30day: expect.any(String),
    });
    for (let i = 0; i < 5000 && sim.trades('coinbase', 'BTC-USD').length < 5; i++) sim.books.step(1);
    expect((await get(`${c}/products/BTC-USD/trades?limit=5`)).json).toHaveLength(5);
    const nf = await get(`${c}/products/NOPE-USD`);
    expect([nf.status, nf.json]).toEqual([404, { message: 'NotFound' }]);
  });

  test('Gemini: prediction-market categories, events, event by ticker; spot symbols, tickers, book, trades, candles', async () => {
    const g = sim.urls['venue-c'];
    expect((await get(`${g}/v1/prediction-markets/categories`)).json).toMatchObject({
      categories: expect.arrayContaining(['crypto']),
    });
    const events = (await get(`${g}/v1/prediction-markets/events?status=active&limit=2`)).json as {
      data: Array<{ ticker: string; contracts: Array<{ instrumentSymbol: string }> }>;
      pagination: { total: number };
    };
    expect(events.data.length).toBeGreaterThan(0);
    expect(events.data[0]?.contracts[0]?.instrumentSymbol).toMatch(/^GEMI-/);
    expect((await get(`${g}/v1/prediction-markets/events/${events.data[0]?.ticker}`)).json).toMatchObject({
      ticker: events.data[0]?.ticker,
    });
    expect((await get(`${g}/v1/prediction-markets/events/NOPE`)).status).toBe(404);
    expect((await get(`${g}/v1/symbols`)).json).toEqual(expect.arrayContaining(['btcusd']));
    expect((await get(`${g}/v1/pubticker/btcusd`)).json).toMatchObject({
      bid: expect.stringMatching(/^\d+\.\d{2}$/),
      volume: { BTC: expect.any(String) },
    });
    expect((await get(`${g}/v2/ticker/BTCUSD`)).json).toMatchObject({ symbol: 'BTCUSD', changes: expect.any(Array) });
    const book = (await get(`${g}/v1/book/BTCUSD?limit_bids=2&limit_asks=2`)).json as {
      bids: Array<{ price: string; amount: string }>;
    };
    expect(book.bids).toHaveLength(2);
    expect(book.bids[0]?.amount).toMatch(/^\d+\.\d{8}$/);
    const gemi = sim.books.tickers('gemini').find((s) => s.startsWith('GEMI-')) as string;
    expect(((await get(`${g}/v1/book/${gemi}`)).json as { asks: Array<{ price: string }> }).asks[0]?.price).toMatch(
      /^0\.\d{2}$/,
    );
    for (let i = 0; i < 5000 && sim.trades('gemini', 'BTCUSD').length < 3; i++) sim.books.step(1);
    expect((await get(`${g}/v1/trades/btcusd?limit_trades=3`)).json).toHaveLength(3);
    const candles = (await get(`${g}/v2/candles/btcusd/1hr`)).json as number[][];
    expect(candles[0]).toHaveLength(6);
    // A time frame named like an Object property is not one.
    expect((await get(`${g}/v2/candles/btcusd/constructor`)).status).toBe(400);
    const bad = await get(`${g}/v1/book/nopeusd`);
    expect([bad.status, bad.json]).toEqual([
      400,
      { result: 'error', reason: 'InvalidSymbol', message: "Supplied value 'nopeusd' is not a valid symbol" },
    ]);
    expect(((await get(`${g}/v9/nothing`)).json as { reason: string }).reason).toBe('EndpointNotFound');
  });

  test('Gamma: events array with filters, markets, slugs, search, tags, series, sports, teams, public profile', async () => {
    const u = sim.urls['venue-a'];
    const events = (await get(`${u}/events?limit=2&active=true&order=volume&ascending=false`)).json as Array<{
      volume: number;
      markets: Array<{ clobTokenIds: string; slug: string }>;
      slug: string;
    }>;
    expect(Array.isArray(events)).toBe(true);
    expect(events).toHaveLength(2);
    expect((events[0] as { volume: number }).volume).toBeGreaterThanOrEqual((events[1] as { volume: number }).volume);
    const market = events[0]?.markets[0] as { clobTokenIds: string; slug: string };
    expect(JSON.parse(market.clobTokenIds)).toHaveLength(2);
    expect((await get(`${u}/events/slug/${events[0]?.slug}`)).json).toMatchObject({ slug: events[0]?.slug });
    expect((await get(`${u}/markets/slug/${market.slug}`)).json).toMatchObject({
      slug: market.slug,
      outcomes: '["Yes", "No"]',
    });
    expect((await get(`${u}/events/slug/nope`)).json).toEqual({ type: 'not found error', error: 'slug not found' });
    expect((await get(`${u}/markets/abc`)).status).toBe(422);
    expect((await get(`${u}/markets?limit=500`)).json).toHaveLength(
      Math.min(100, sim.books.tickers('venue-a-clob').length),
    );
    expect((await get(`${u}/events?tag_slug=nba`)).json).toEqual(
      expect.arrayContaining([expect.objectContaining({ slug: expect.stringMatching(/nba/) })]),
    );
    expect((await get(`${u}/public-search?q=bitcoin`)).json).toMatchObject({
      events: expect.any(Array),
      pagination: expect.any(Object),
    });
    expect(Array.isArray((await get(`${u}/tags`)).json)).toBe(true);
    expect(Array.isArray((await get(`${u}/series`)).json)).toBe(true);
    expect(Array.isArray((await get(`${u}/sports`)).json)).toBe(true);
    expect(Array.isArray((await get(`${u}/teams`)).json)).toBe(true);
    expect((await get(`${u}/public-profile?address=0x0000000000000000000000000000000000000001`)).status).toBe(404);
    expect((await get(`${u}/public-profile`)).status).toBe(422);
  });

  test('CLOB: book (best price last), price, midpoint, spread, prices-history, a NO token mirrors YES, 400/404', async () => {
    const u = sim.urls['venue-a-clob'];
    const markets = (await get(`${sim.urls['venue-a']}/markets?limit=1`)).json as Array<{
      clobTokenIds: string;
      conditionId: string;
    }>;
    const [yes, no] = JSON.parse((markets[0] as { clobTokenIds: string }).clobTokenIds) as [string, string];
    // The book, its NO mirror and its price are compared: books at rest meanwhile (they move at 20 u/s).
    sim.books.pause();
    try {
      const book = (await get(`${u}/book?token_id=${yes}`)).json as {
        bids: Array<{ price: string }>;
        asks: Array<{ price: string }>;
        asset_id: string;
        tick_size: string;
      };
      expect(book.asset_id).toBe(yes);
      const bestBid = book.bids.at(-1)?.price as string;
      const bestAsk = book.asks.at(-1)?.price as string;
      expect(Number(bestBid)).toBeLessThan(Number(bestAsk));
      expect(book.bids.map((l) => l.price)).toEqual([...book.bids.map((l) => l.price)].sort());
      const noBook = (await get(`${u}/book?token_id=${no}`)).json as {
        bids: Array<{ price: string }>;
        asks: Array<{ price: string }>;
      };
      expect(Math.round((1 - Number(noBook.asks.at(-1)?.price)) * 100)).toBe(Math.round(Number(bestBid) * 100));
      expect((await get(`${u}/price?token_id=${yes}&side=BUY`)).json).toEqual({ price: bestBid });
    } finally {
      sim.books.resume();
    }
    expect((await get(`${u}/midpoint?token_id=${yes}`)).json).toEqual({ mid: expect.any(String) });
    expect((await get(`${u}/spread?token_id=${yes}`)).json).toEqual({ spread: expect.any(String) });
    const history = (await get(`${u}/prices-history?market=${yes}&interval=1d&fidelity=60`)).json as {
      history: Array<{ t: number; p: number }>;
    };
    expect(history.history.length).toBeGreaterThan(20);
    expect((await get(`${u}/prices-history?market=${yes}&interval=constructor`)).status).toBe(400);
    const nf = await get(`${u}/book?token_id=123`);
    expect([nf.status, nf.json]).toEqual([404, { error: 'No orderbook exists for the requested token id' }]);
    expect((await get(`${u}/book`)).json).toEqual({ error: 'Invalid token id' });
    expect((await get(`${u}/markets/${markets[0]?.conditionId}`)).json).toMatchObject({
      tokens: [{ token_id: yes }, { token_id: no }],
    });
  });

  test('Data API: open interest, holders, live volume, positions, and the required-parameter 400', async () => {
    const u = sim.urls['venue-a-clob/data'];
    const markets = (await get(`${sim.urls['venue-a']}/markets?limit=1`)).json as Array<{ conditionId: string }>;
    const c = markets[0]?.conditionId as string;
    expect((await get(`${u}/oi?market=${c}`)).json).toEqual([{ market: c, value: expect.any(Number) }]);
    expect((await get(`${u}/holders?market=${c}`)).json).toEqual([
      expect.objectContaining({ holders: expect.any(Array) }),
      expect.anything(),
    ]);
    const events = (await get(`${sim.urls['venue-a']}/events?limit=1`)).json as Array<{ id: string }>;
    expect((await get(`${u}/live-volume?id=${events[0]?.id}`)).json).toEqual([
      { total: expect.any(Number), markets: expect.any(Array) },
    ]);
    expect((await get(`${u}/positions?user=0x0000000000000000000000000000000000000001`)).json).toEqual([]);
    expect((await get(`${u}/holders`)).json).toEqual({ error: "required query param 'market' not provided" });
  });

  test('ForecastEx site: contracts paged and sorted', async () => {
    const page = (await get(`${sim.urls['venue-e']}/contracts?page=1&pageSize=5&sortBy=open_interest&sortOrder=desc`))
      .json as {
      contracts: Array<{ open_interest: number }>;
      total: number;
    };
    expect(page.contracts).toHaveLength(5);
    const oi = page.contracts.map((c) => c.open_interest);
    expect(oi).toEqual([...oi].sort((a, b) => b - a));
    expect((await get(`${sim.urls['venue-e']}/contracts?sortBy=price`)).status).toBe(400);
  });

  test('every request is recorded: method, path without query, raw query, lower-cased headers, auth, status', async () => {
    sim.clearRequests();
    await get(`${sim.urls['venue-b']}/markets?limit=1&status=open`, { 'X-Trace': 'abc' });
    const path = '/trade-api/v2/portfolio/balance';
    await get(`${sim.urls['venue-b']}/portfolio/balance`, signers.kalshiHeaders(sim.credentials.kalshi, 'GET', path));
    await get(`${sim.urls['venue-d']}/time`);
    const k = sim.requests({ platform: 'venue-b' });
    expect(k).toHaveLength(2);
    expect(k[0]).toMatchObject({
      platform: 'venue-b',
      method: 'GET',
      path: '/trade-api/v2/markets',
      query: 'limit=1&status=open',
      auth: 'not_required',
      status: 200,
      headers: expect.objectContaining({ 'x-trace': 'abc' }),
    });
    expect(k[1]).toMatchObject({ path, query: '', auth: 'valid', status: 200 });
    expect(k[1]?.headers['kalshi-access-key']).toBe(sim.credentials.kalshi.accessKey);
    expect(sim.requests({ pathPrefix: '/time' })).toHaveLength(1);
    const viaControl = (
      await get(`${sim.urls.control}/control/requests?platform=kalshi&pathPrefix=/trade-api/v2/portfolio`)
    ).json as { count: number };
    expect(viaControl.count).toBe(1);
  });
});
