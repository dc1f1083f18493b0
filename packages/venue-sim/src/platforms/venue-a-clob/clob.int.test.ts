import { signers, startSimulator, type Simulator } from '../../index';
import { get, type HttpResult } from '../../testing/clients';

/** The CLOB (and its Data API) as @polymarket/clob-client 5.8 and ccxt's polymarket read them: shapes and consistency. */

interface Page<T> {
  limit: number;
  count: number;
  next_cursor: string;
  data: T[];
}
interface Token {
  token_id: string;
  outcome: string;
  price: number;
  winner?: boolean;
}
interface ClobMarket {
  condition_id: string;
  neg_risk: boolean;
  minimum_tick_size: number;
  minimum_order_size: number;
  rewards: {
    rates: Array<{ asset_address: string; rewards_daily_rate: number }> | null;
    min_size: number;
    max_spread: number;
  };
  tokens: Token[];
  active: boolean;
  closed: boolean;
  archived: boolean;
  accepting_orders: boolean;
}
interface Level {
  price: string;
  size: string;
}
interface Book {
  market: string;
  asset_id: string;
  bids: Level[];
  asks: Level[];
  neg_risk: boolean;
  tick_size: string;
  min_order_size: string;
  last_trade_price: string;
}

const T0 = Date.now();
/** A CLOB price as the venue writes it: the shortest form ("0.5", "0.05", "0.57"). */
const SHORTEST_PRICE = /^0\.\d?[1-9]$/;
const cursorOf = (offset: number) => Buffer.from(String(offset)).toString('base64');

describe('Polymarket CLOB', () => {
  let sim: Simulator;
  let u: string;
  let yes: string;
  let no: string;
  let condition: string;
  // A fixed clock and still books: every answer below is comparable with every other.
  beforeAll(async () => {
    sim = await startSimulator({
      seed: 11,
      updatesPerSecond: 0,
      startPaused: true,
      rateLimits: false,
      clock: () => T0,
    });
    u = sim.urls['venue-a-clob'];
    const gamma = (await get(`${sim.urls['venue-a']}/markets?limit=1`)).json as Array<{
      clobTokenIds: string;
      conditionId: string;
    }>;
    [yes, no] = JSON.parse(gamma[0]?.clobTokenIds as string) as [string, string];
    condition = gamma[0]?.conditionId as string;
  });
  afterAll(() => sim.stop());

  const post = async (path: string, body: string, headers: Record<string, string> = {}): Promise<HttpResult> =>
    get(`${u}${path}`, { 'content-type': 'application/json', ...headers }, { method: 'POST', body });
  const signed = (method: string, path: string, body = '') =>
    signers.clobHeaders(sim.credentials.polymarketClob, method, path, body, Math.floor(T0 / 1000)) as Record<
      string,
      string
    >;

  async function walk<T>(path: string): Promise<{ items: T[]; pages: number }> {
    const items: T[] = [];
    let cursor = 'MA==';
    for (let pages = 1; pages <= 50; pages++) {
      const page = (await get(`${u}${path}?next_cursor=${encodeURIComponent(cursor)}`)).json as Page<T>;
      expect(Array.isArray(page.data)).toBe(true);
      expect(page.count).toBe(page.data.length);
      items.push(...page.data);
      if (page.next_cursor === 'LTE=') return { items, pages };
      cursor = page.next_cursor;
    }
    throw new Error(`${path} never reached LTE=`);
  }

  test('market listings page with next_cursor and end at LTE=; sampling markets are the rewarded ones', async () => {
    const all = await walk<ClobMarket>('/markets');
    expect(all.items.map((m) => m.condition_id)).toEqual(
      sim.books.tickers('venue-a-clob').map(() => expect.any(String)),
    );
    const sampling = await walk<ClobMarket>('/sampling-markets');
    expect(sampling.items.length).toBeGreaterThan(0);
    expect(sampling.items.length).toBeLessThan(all.items.length);
    expect(sampling.items.every((m) => (m.rewards.rates?.length ?? 0) > 0 && m.rewards.min_size > 0)).toBe(true);
    const rewarded = all.items.filter((m) => m.rewards.rates !== null).map((m) => m.condition_id);
    expect(sampling.items.map((m) => m.condition_id)).toEqual(rewarded);

    // Simplified objects are the full ones cut down.
    const simplified = await walk<Record<string, unknown>>('/simplified-markets');
    expect(simplified.items).toEqual(
      all.items.map((m) => ({
        condition_id: m.condition_id,
        tokens: m.tokens,
        rewards: m.rewards,
        active: m.active,
        closed: m.closed,
        archived: m.archived,
        accepting_orders: m.accepting_orders,
      })),
    );
    expect(
      (await walk<Record<string, unknown>>('/sampling-simplified-markets')).items.map((m) => m.condition_id),
    ).toEqual(rewarded);

    // A cursor is the offset in base64; "LTE=" is past the end; anything else is refused.
    const from2 = (await get(`${u}/markets?next_cursor=${encodeURIComponent(cursorOf(2))}`)).json as Page<ClobMarket>;
    expect(from2.data.map((m) => m.condition_id)).toEqual(all.items.slice(2).map((m) => m.condition_id));
    expect((await get(`${u}/markets?next_cursor=LTE%3D`)).json).toEqual({
      limit: expect.any(Number),
      count: 0,
      next_cursor: 'LTE=',
      data: [],
    });
    const bad = await get(`${u}/markets?next_cursor=not-a-cursor`);
    expect([bad.status, bad.json]).toEqual([400, { error: 'invalid next_cursor' }]);
  });

  test('a market by condition id equals its listing entry; its tokens are the book’s tokens at Gamma’s prices', async () => {
    const { items } = await walk<ClobMarket>('/markets');
    for (const m of items) expect((await get(`${u}/markets/${m.condition_id}`)).json).toEqual(m);
    const gamma = (await get(`${sim.urls['venue-a']}/markets?limit=100`)).json as Array<{
      conditionId: string;
      clobTokenIds: string;
      outcomePrices: string;
      negRisk: boolean;
      orderMinSize: number;
      orderPriceMinTickSize: number;
    }>;
    for (const g of gamma) {
      const m = items.find((x) => x.condition_id === g.conditionId) as ClobMarket;
      expect(m.tokens.map((t) => t.token_id)).toEqual(JSON.parse(g.clobTokenIds));
      expect([m.minimum_order_size, m.minimum_tick_size]).toEqual([g.orderMinSize, g.orderPriceMinTickSize]);
      expect(m.tokens.map((t) => t.price)).toEqual((JSON.parse(g.outcomePrices) as string[]).map(Number));
      expect(m.neg_risk).toBe(g.negRisk);
    }
    expect(new Set(items.map((m) => m.neg_risk))).toEqual(new Set([true, false]));
    const nf = await get(`${u}/markets/0x${'0'.repeat(64)}`);
    expect([nf.status, nf.json]).toEqual([404, { error: 'market not found' }]);
  });

  test('book levels: bids ascending and asks descending, the best price last on each side', async () => {
    for (const id of [yes, no]) {
      const book = (await get(`${u}/book?token_id=${id}`)).json as Book;
      const bids = book.bids.map((l) => Number(l.price));
      const asks = book.asks.map((l) => Number(l.price));
      expect(bids.length).toBeGreaterThan(1);
      expect(bids).toEqual([...bids].sort((a, b) => a - b));
      expect(asks).toEqual([...asks].sort((a, b) => b - a));
      const bestBid = book.bids.at(-1)?.price as string;
      const bestAsk = book.asks.at(-1)?.price as string;
      expect(Number(bestBid)).toBeLessThan(Number(bestAsk));
      expect((await get(`${u}/price?token_id=${id}&side=BUY`)).json).toEqual({ price: bestBid });
      expect((await get(`${u}/price?token_id=${id}&side=SELL`)).json).toEqual({ price: bestAsk });
      // The books have not moved, so nothing traded: the documented default [V], and no last trade in the book.
      expect((await get(`${u}/last-trade-price?token_id=${id}`)).json).toEqual({ price: '0.5', side: '' });
      expect(book.last_trade_price).toBe('');
      // The venue's shortest forms: "0.5", not "0.50".
      for (const l of [...book.bids, ...book.asks]) expect(l.price).toMatch(SHORTEST_PRICE);
    }
  });

  test('tick size, neg risk and fee rate (the order path reads them first) agree with the book and the market', async () => {
    const book = (await get(`${u}/book?token_id=${yes}`)).json as Book;
    const market = (await get(`${u}/markets/${condition}`)).json as ClobMarket;
    expect((await get(`${u}/tick-size?token_id=${yes}`)).json).toEqual({ minimum_tick_size: market.minimum_tick_size });
    expect(String(market.minimum_tick_size)).toBe(book.tick_size);
    expect(String(market.minimum_order_size)).toBe(book.min_order_size);
    expect((await get(`${u}/neg-risk?token_id=${no}`)).json).toEqual({ neg_risk: market.neg_risk });
    expect(book.neg_risk).toBe(market.neg_risk);
    expect((await get(`${u}/fee-rate?token_id=${yes}`)).json).toEqual({ base_fee: 0 });
    for (const path of ['/neg-risk', '/fee-rate', '/tick-size']) {
      expect((await get(`${u}${path}?token_id=123`)).status).toBe(404);
      expect((await get(`${u}${path}`)).json).toEqual({ error: 'Invalid token id' });
    }
  });

  test('the read-only batch POSTs answer what the single-token GETs answer, token by token', async () => {
    const ids = [yes, no];
    const body = (withSide: boolean) =>
      JSON.stringify(
        ids.flatMap((token_id) => (withSide ? ['BUY', 'SELL'].map((side) => ({ token_id, side })) : [{ token_id }])),
      );
    const books = (await post('/books', body(false))).json as Book[];
    expect(books).toEqual(await Promise.all(ids.map(async (id) => (await get(`${u}/book?token_id=${id}`)).json)));
    const mids = (await post('/midpoints', body(false))).json as Record<string, string>;
    const spreads = (await post('/spreads', body(false))).json as Record<string, string>;
    const prices = (await post('/prices', body(true))).json as Record<string, Record<string, number>>;
    const lasts = (await post('/last-trades-prices', body(false))).json as Array<Record<string, string>>;
    expect(Object.keys(mids)).toEqual(ids);
    for (const id of ids) {
      expect(mids[id]).toBe(((await get(`${u}/midpoint?token_id=${id}`)).json as { mid: string }).mid);
      expect(spreads[id]).toBe(((await get(`${u}/spread?token_id=${id}`)).json as { spread: string }).spread);
      for (const side of ['BUY', 'SELL']) {
        const single = (await get(`${u}/price?token_id=${id}&side=${side}`)).json as { price: string };
        // The docs show batch prices as numbers and single prices as strings.
        expect(prices[id]?.[side]).toBe(Number(single.price));
      }
    }
    expect(lasts).toEqual(
      await Promise.all(
        ids.map(async (id) => ({
          token_id: id,
          ...((await get(`${u}/last-trade-price?token_id=${id}`)).json as object),
        })),
      ),
    );
    // The GET twins with comma-separated ids answer the same.
    expect((await get(`${u}/midpoints?token_ids=${ids.join(',')}`)).json).toEqual(mids);
    expect((await get(`${u}/last-trades-prices?token_ids=${ids.join(',')}`)).json).toEqual(lasts);
    expect((await get(`${u}/prices?token_ids=${yes},${no}&sides=BUY,SELL`)).json).toEqual({
      [yes]: { BUY: prices[yes]?.BUY },
      [no]: { SELL: prices[no]?.SELL },
    });
  });

  test('batch POSTs: unknown tokens are left out; a bad body is a 400 in the CLOB’s shape', async () => {
    expect((await post('/books', JSON.stringify([{ token_id: '123' }, { token_id: yes }]))).json).toEqual([
      expect.objectContaining({ asset_id: yes }),
    ]);
    expect((await post('/midpoints', '[]')).json).toEqual({});
    for (const [path, body, error] of [
      ['/books', 'not json', 'Invalid payload'],
      ['/midpoints', '{"token_id":"1"}', 'Invalid payload'],
      ['/spreads', '[{"token":"1"}]', 'Invalid token id'],
      ['/prices', JSON.stringify([{ token_id: yes }]), 'Invalid side'],
      ['/prices', JSON.stringify([{ token_id: yes, side: 'buy' }]), 'Invalid side'],
      [
        '/last-trades-prices',
        JSON.stringify(Array.from({ length: 501 }, () => ({ token_id: yes }))),
        'Payload exceeds the limit',
      ],
    ] as const) {
      const res = await post(path, body);
      expect([path, res.status, res.json]).toEqual([path, 400, { error }]);
    }
  });

  test('rewards: current programmes are the sampling markets, one market’s programme pages, LTE= ends both', async () => {
    const sampling = (await get(`${u}/sampling-markets`)).json as Page<ClobMarket>;
    const current = (await get(`${u}/rewards/markets/current`)).json as Page<{
      condition_id: string;
      rewards_min_size: number;
      rewards_max_spread: number;
      rewards_config: Array<{ asset_address: string; rate_per_day: number; start_date: string; end_date: string }>;
    }>;
    expect(current.next_cursor).toBe('LTE=');
    expect(current.data.map((r) => r.condition_id)).toEqual(sampling.data.map((m) => m.condition_id));
    for (const row of current.data) {
      const m = sampling.data.find((x) => x.condition_id === row.condition_id) as ClobMarket;
      expect([row.rewards_min_size, row.rewards_max_spread]).toEqual([m.rewards.min_size, m.rewards.max_spread]);
      expect(row.rewards_config[0]?.rate_per_day).toBe(m.rewards.rates?.[0]?.rewards_daily_rate);
      expect(row.rewards_config[0]?.start_date).toMatch(/^\d{4}-\d\d-\d\d$/);
    }
    const one = sampling.data[0] as ClobMarket;
    const raw = (await get(`${u}/rewards/markets/${one.condition_id}`)).json as Page<Record<string, unknown>>;
    expect(raw).toMatchObject({ next_cursor: 'LTE=', count: 1 });
    expect(raw.data[0]).toMatchObject({
      condition_id: one.condition_id,
      question: expect.any(String),
      market_slug: expect.any(String),
      event_slug: expect.any(String),
      tokens: one.tokens.map(({ token_id, outcome, price }) => ({ token_id, outcome, price })),
      rewards_config: [expect.objectContaining({ total_days: expect.any(Number) })],
    });
    const all = (await get(`${u}/markets`)).json as Page<ClobMarket>;
    const unrewarded = all.data.find((m) => m.rewards.rates === null) as ClobMarket;
    expect((await get(`${u}/rewards/markets/${unrewarded.condition_id}`)).json).toMatchObject({
      data: [],
      next_cursor: 'LTE=',
    });
  });

  test('live activity and the Data API’s trades are the YES book’s own trades, as the simulator lists them', async () => {
    for (let i = 0; i < 5000 && sim.trades('venue-a-clob', yes).length < 4; i++) sim.books.step(1);
    const emitted = sim.trades('venue-a-clob', yes).reverse();
    expect(emitted.length).toBeGreaterThanOrEqual(4);
    const events = (await get(`${u}/live-activity/events/${condition}`)).json as Array<{
      market: { condition_id: string; asset_id: string };
      transaction_hash: string;
      price: string;
      size: string;
      side: string;
      outcome_index: number;
      timestamp: string;
    }>;
    expect(
      events.map((e) => [e.transaction_hash, e.market.asset_id, e.price, e.size, e.side, e.outcome_index]),
    ).toEqual(emitted.map((o) => [o.id, yes, o.price, o.size, o.venueSide, 0]));
    const data = (await get(`${sim.urls['venue-a-clob/data']}/trades?market=${condition}`)).json as Array<{
      asset: string;
      transactionHash: string;
      outcomeIndex: number;
      timestamp: number;
      price: number;
      size: number;
      side: string;
    }>;
    expect(data.map((t) => [t.transactionHash, t.asset, t.outcomeIndex, t.timestamp, t.price, t.size, t.side])).toEqual(
      emitted.map((o) => [o.id, yes, 0, Math.floor(o.ts / 1000), Number(o.price), Number(o.size), o.venueSide]),
    );
    expect((await get(`${u}/live-activity/events/0x${'0'.repeat(64)}`)).json).toEqual([]);
  });

  describe('L2-authenticated reads', () => {
    const L2_GETS = [
      '/auth/api-keys',
      '/auth/ban-status/closed-only',
      '/auth/readonly-api-keys',
      '/auth/builder-api-key',
      '/data/orders',
      '/data/trades',
      '/notifications',
      '/balance-allowance?asset_type=COLLATERAL',
      '/balance-allowance/update?asset_type=COLLATERAL',
      '/order-scoring?order_id=0x01',
      '/rewards/user?date=2026-03-06',
      '/rewards/user/total?date=2026-03-06',
      '/rewards/user/markets?date=2026-03-06',
      '/rewards/user/percentages',
      '/rfq/data/requests',
      '/rfq/data/requester/quotes',
      '/rfq/data/quoter/quotes',
      '/rfq/config',
    ];

    test('each answers 401 in the CLOB’s shape unsigned, 200 signed (the path signed without its query)', async () => {
      for (const path of L2_GETS) {
        const open = await get(`${u}${path}`);
        expect([path, open.status, open.json]).toEqual([path, 401, { error: 'Unauthorized/Invalid api key' }]);
        const ok = await get(`${u}${path}`, signed('GET', path.split('?')[0] as string));
        expect([path, ok.status]).toEqual([path, 200]);
      }
      expect(sim.requests({ platform: 'venue-a-clob', pathPrefix: '/rfq' }).at(-1)?.auth).toBe('valid');
    });

    test("RFQ: the account's open request, the quote on it as the best quote; filters; unknown and missing ids", async () => {
      const rfq = async <T>(path: string) =>
        (await get(`${u}${path}`, signed('GET', path.split('?')[0] as string))).json as T;
      type Request = { requestId: string; condition: string; token: string; price: number; state: string };
      type Quote = { quoteId: string; requestId: string; token: string; side: string; price: number; state: string };
      const requests = await rfq<Page<Request>>('/rfq/data/requests');
      expect(requests).toMatchObject({ next_cursor: 'LTE=', count: 1 });
      const [request] = requests.data as [Request];
      expect(request).toMatchObject({ state: 'STATE_ACCEPTING_QUOTES', side: 'BUY' });
      expect((await rfq<Page<Request>>(`/rfq/data/requests?requestIds=${request.requestId}`)).data).toEqual([request]);
      expect((await rfq<Page<Request>>(`/rfq/data/requests?markets=${request.condition}`)).data).toEqual([request]);
      expect((await rfq<Page<Request>>(`/rfq/data/requests?markets=0x${'0'.repeat(64)}`)).data).toEqual([]);
      expect((await rfq<Page<Request>>('/rfq/data/requests?state=inactive')).data).toEqual([]);
      const quotes = await rfq<Page<Quote>>('/rfq/data/requester/quotes');
      const [quote] = quotes.data as [Quote];
      expect(quote).toMatchObject({ requestId: request.requestId, token: request.token, side: 'SELL' });
      expect(quote.price).toBeGreaterThan(request.price);
      expect((await rfq<Page<Quote>>('/rfq/data/quoter/quotes')).data).toEqual([]);
      expect(await rfq(`/rfq/data/best-quote?requestId=${request.requestId}`)).toEqual(quote);
      const unknown = await get(`${u}/rfq/data/best-quote?requestId=nope`, signed('GET', '/rfq/data/best-quote'));
      expect(unknown.status).toBe(404);
      expect((await get(`${u}/rfq/data/best-quote`, signed('GET', '/rfq/data/best-quote'))).status).toBe(400);
    });

    test('the account: one resting order and one fill, by id and in the pages; filters apply', async () => {
      const orders = (await get(`${u}/data/orders`, signed('GET', '/data/orders'))).json as Page<{
        id: string;
        market: string;
        asset_id: string;
        side: string;
        price: string;
      }>;
      expect(orders).toMatchObject({ next_cursor: 'LTE=', count: 1 });
      const order = orders.data[0] as (typeof orders.data)[0];
      expect(order).toMatchObject({
        market: condition,
        asset_id: yes,
        side: 'BUY',
        price: expect.stringMatching(SHORTEST_PRICE),
      });
      const path = `/data/order/${order.id}`;
      expect((await get(`${u}${path}`, signed('GET', path))).json).toEqual(order);
      const missing = `/data/order/0x${'0'.repeat(64)}`;
      expect((await get(`${u}${missing}`, signed('GET', missing))).status).toBe(404);
      expect((await get(`${u}/data/orders?market=0xother`, signed('GET', '/data/orders'))).json).toMatchObject({
        data: [],
        next_cursor: 'LTE=',
      });
      const trades = (await get(`${u}/data/trades?market=${condition}`, signed('GET', '/data/trades'))).json as Page<{
        asset_id: string;
        size: string;
        trader_side: string;
      }>;
      expect(trades.data).toEqual([expect.objectContaining({ asset_id: yes, trader_side: 'TAKER' })]);
      // The fill is what the conditional balance holds (6-decimal base units); cash is 1 000 USDC.
      const bal = (
        await get(`${u}/balance-allowance?asset_type=CONDITIONAL&token_id=${yes}`, signed('GET', '/balance-allowance'))
      ).json as { balance: string; allowance: string; allowances: Record<string, string> };
      expect(bal.balance).toBe(String(Number(trades.data[0]?.size) * 1_000_000));
      expect(Object.keys(bal.allowances)).toHaveLength(3);
      expect(
        (await get(`${u}/balance-allowance?asset_type=COLLATERAL`, signed('GET', '/balance-allowance'))).json,
      ).toMatchObject({ balance: '1000000000' });
      expect((await get(`${u}/balance-allowance?asset_type=NOPE`, signed('GET', '/balance-allowance'))).status).toBe(
        400,
      );
      expect((await get(`${u}/order-scoring?order_id=${order.id}`, signed('GET', '/order-scoring'))).json).toEqual({
        scoring: true,
      });
      // The rewards the resting order earns; a day is required.
      const earnings = (await get(`${u}/rewards/user?date=2026-03-06`, signed('GET', '/rewards/user'))).json as Page<{
        condition_id: string;
        earnings: number;
      }>;
      expect(earnings.data).toEqual([expect.objectContaining({ condition_id: condition, earnings: 0.42 })]);
      const noDate = await get(`${u}/rewards/user/total`, signed('GET', '/rewards/user/total'));
      expect([noDate.status, noDate.json]).toEqual([400, { error: "invalid 'date' (YYYY-MM-DD)" }]);
    });

    test('POST /orders-scoring signs its body: the right body verifies, another one does not', async () => {
      const body = JSON.stringify(['0x01', '0x02']);
      const ok = await post('/orders-scoring', body, signed('POST', '/orders-scoring', body));
      expect([ok.status, ok.json]).toEqual([200, { '0x01': false, '0x02': false }]);
      const forged = await post('/orders-scoring', JSON.stringify(['0x03']), signed('POST', '/orders-scoring', body));
      expect(forged.status).toBe(401);
      expect(sim.requests({ platform: 'venue-a-clob', pathPrefix: '/orders-scoring' }).at(-1)).toMatchObject({
        auth: 'invalid',
        authError: expect.stringMatching(/POLY_SIGNATURE/),
      });
    });

    test('keys: the issued key, one read-only key that validates for the account and no other', async () => {
      expect((await get(`${u}/auth/api-keys`, signed('GET', '/auth/api-keys'))).json).toEqual({
        apiKeys: [sim.credentials.polymarketClob.apiKey],
      });
      const [ro] = (await get(`${u}/auth/readonly-api-keys`, signed('GET', '/auth/readonly-api-keys')))
        .json as string[];
      const address = sim.credentials.polymarketClob.address;
      expect((await get(`${u}/auth/validate-readonly-api-key?address=${address}&key=${ro}`)).json).toBe('OK');
      expect((await get(`${u}/auth/validate-readonly-api-key?address=${address}&key=other`)).status).toBe(401);
    });
  });
});
