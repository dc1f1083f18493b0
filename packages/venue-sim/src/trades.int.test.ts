import { formatScaled, parseScaled } from './core/decimal';
import { signers, startSimulator, type SimTrade, type Simulator } from './index';
import { FeedClient, get } from './testing/clients';

/**
 * The books' trades as each venue publishes them: the feed's messages, the REST routes and the control API's oracle
 * name every trade alike (id, time, price, size, sides), the pages walk them exactly once, and a trade's size is what
 * its level lost in the same event.
 */

type Json = Record<string, unknown>;

describe('trades on every path', () => {
  const start = Date.parse('2026-11-24T09:00:00.000Z');
  let now = start;
  let sim: Simulator;
  const clients: FeedClient[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 23, clock: () => now, updatesPerSecond: 0, rateLimits: false });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => sim.stop());

  const open = async (url: string | undefined, headers?: Record<string, string>) => {
    const c = await FeedClient.open(url as string, { headers });
    clients.push(c);
    return c;
  };
  /** Steps the books (a few ms apart, sometimes several events in one ms) until `ticker` made `n` more trades. */
  const trade = (platform: string, ticker: string, n: number): SimTrade[] => {
    const before = sim.trades(platform, ticker).length;
    for (let i = 0; i < 20_000 && sim.trades(platform, ticker).length < before + n; i++) {
      if (i % 3 === 0) now += 3;
      sim.books.step(1);
    }
    const made = sim.trades(platform, ticker).slice(before);
    expect(made.length).toBeGreaterThanOrEqual(n);
    return made;
  };
  const body = async <T = Json>(url: string): Promise<T> => {
    const res = await get(url);
    expect([url, res.status]).toEqual([url, 200]);
    return res.json as T;
  };

  describe('the control API (the oracle)', () => {
    test('lists every trade of a platform or a ticker since a time, as sim.trades; each is in its event', async () => {
      const ticker = sim.books.tickers('kalshi')[0] as string;
      const made = trade('kalshi', ticker, 3);
      const c = sim.urls.control;
      const all = await body<{ platform: string; count: number; trades: SimTrade[] }>(
        `${c}/control/trades?platform=kalshi`,
      );
      expect(all.trades).toEqual(sim.trades('kalshi'));
      expect(all.count).toBe(all.trades.length);
      expect(new Set(all.trades.map((t) => t.ticker)).size).toBeGreaterThan(1);
      const since = made[1]?.ts as number;
      const one = await body<{ trades: SimTrade[] }>(
        `${c}/control/trades?platform=venue_b&ticker=${ticker}&since=${new Date(since).toISOString()}`,
      );
      expect(one.trades).toEqual(sim.trades('kalshi', ticker).filter((t) => t.ts >= since));
      expect(one.trades.map((t) => t.no)).toEqual(one.trades.map((_, i) => (one.trades[0]?.no as number) + i));
      // Each trade is one of its event's (the fills the event made).
      const events = sim.books.events('kalshi', ticker);
      for (const t of made) expect(events.find((e) => e.trades.some((x) => x.id === t.id))?.ts).toBe(t.ts);
      for (const [q, status] of [
        ['', 400],
        ['platform=kalshi&since=soon', 400],
        ['platform=nope', 404],
        ['platform=kalshi&ticker=KXNOPE-1', 404],
      ] as const) {
        const res = await get(`${c}/control/trades?${q}`);
        expect([q, res.status]).toEqual([q, status]);
        expect(res.json).toEqual({ error: expect.any(String), message: expect.any(String) });
      }
    });
  });

  describe('Kalshi', () => {
    type Trade = Json & { trade_id: string; ticker: string; created_time: string };
    const k = () => sim.urls['venue-b'];
    const kalshiFeed = async (tickers: string[]) => {
      const c = await open(
        sim.feeds['venue-b'],
        signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/ws/v2', now),
      );
      c.send({ id: 1, cmd: 'subscribe', params: { channels: ['trade'], market_tickers: tickers } });
      await c.until((ms) => ms.some((m) => m.type === 'subscribed'));
      return c;
    };

    test('the trade channel, /markets/trades and the oracle name each trade alike; the current schema, no seq', async () => {
      const ticker = sim.books.tickers('kalshi')[1] as string;
      const c = await kalshiFeed([ticker]);
      const made = trade('kalshi', ticker, 4);
      await c.sync();
      const msgs = c.messages.filter((m) => m.type === 'trade');
      expect(msgs.map((m) => (m.msg as Json).trade_id)).toEqual(made.map((t) => t.id));
      for (const [i, m] of msgs.entries()) {
        const o = made[i] as SimTrade;
        expect(Object.keys(m).sort()).toEqual(['msg', 'sid', 'type']);
        expect(m.msg).toEqual({
          trade_id: o.id,
          market_ticker: ticker,
          yes_price_dollars: o.price,
          no_price_dollars: (1 - Number(o.price)).toFixed(4),
          count_fp: o.size,
          taker_side: o.venueSide,
          taker_outcome_side: o.venueSide,
          taker_book_side: o.side === 'buy' ? 'bid' : 'ask',
          is_block_trade: false,
          ts: Math.floor(o.ts / 1000),
          ts_ms: o.ts,
        });
        expect(o.venueSide).toBe(o.side === 'buy' ? 'yes' : 'no');
      }
      const rest = await body<{ trades: Trade[] }>(`${k()}/markets/trades?ticker=${ticker}&limit=${made.length}`);
      expect(rest.trades.map((t) => [t.trade_id, t.ticker, t.yes_price_dollars, t.count_fp, t.taker_side])).toEqual(
        [...made].reverse().map((o) => [o.id, ticker, o.price, o.size, o.venueSide]),
      );
      expect(rest.trades.map((t) => Date.parse(t.created_time))).toEqual([...made].reverse().map((o) => o.ts));
    });

    test('cursor pages walk every trade once, newest first, ending with an empty cursor; min_ts/max_ts bound them', async () => {
      const ticker = sim.books.tickers('kalshi')[2] as string;
      trade('kalshi', ticker, 5);
      const emitted = sim.trades('kalshi', ticker);
      const fromSec = Math.floor(start / 1000);
      const walked: Trade[] = [];
      let cursor = '';
      let pages = 0;
      do {
        const page = await body<{ trades: Trade[]; cursor: string }>(
          `${k()}/markets/trades?ticker=${ticker}&min_ts=${fromSec}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(page.trades.length).toBeLessThanOrEqual(2);
        walked.push(...page.trades);
        cursor = page.cursor;
        pages++;
      } while (cursor && pages < 1000);
      expect(cursor).toBe('');
      expect(walked.map((t) => t.trade_id)).toEqual([...emitted].reverse().map((o) => o.id));
      // A page exactly as long as what is left ends the walk with an empty cursor.
      const exact = await body<{ trades: Trade[]; cursor: string }>(
        `${k()}/markets/trades?ticker=${ticker}&min_ts=${fromSec}&limit=${emitted.length}`,
      );
      expect([exact.trades.length, exact.cursor]).toEqual([emitted.length, '']);
      const last = emitted.at(-1) as SimTrade;
      const sec = Math.floor(last.ts / 1000);
      const bounded = await body<{ trades: Trade[] }>(
        `${k()}/markets/trades?ticker=${ticker}&min_ts=${sec}&max_ts=${sec}&limit=1000`,
      );
      expect(bounded.trades.map((t) => t.trade_id)).toEqual(
        emitted
          .filter((o) => Math.floor(o.ts / 1000) === sec)
          .reverse()
          .map((o) => o.id),
      );
    });

    test('the historical cutoff splits the trades: before it /historical/trades, from it on /markets/trades, each once', async () => {
      const cutoff = await body<{ trades_created_ts: string }>(`${k()}/historical/cutoff`);
      const cutoffMs = Date.parse(cutoff.trades_created_ts);
      expect(cutoffMs).toBeLessThan(start);
      const all = async (path: string) => {
        const out: Trade[] = [];
        let cursor = '';
        do {
          const page = await body<{ trades: Trade[]; cursor: string }>(
            `${k()}${path}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
          );
          out.push(...page.trades);
          cursor = page.cursor;
        } while (cursor);
        return out;
      };
      const ticker = sim.books.tickers('kalshi')[0] as string;
      const live = await all(`/markets/trades?ticker=${ticker}&min_ts=${Math.floor(start / 1000) - 86_400}`);
      const historical = await all(`/historical/trades?ticker=${ticker}`);
      expect(historical).toEqual([]);
      expect(live.every((t) => Date.parse(t.created_time) >= cutoffMs)).toBe(true);
      const ids = new Set(live.map((t) => t.trade_id));
      for (const o of sim.trades('kalshi', ticker)) expect(ids.has(o.id as string)).toBe(true);
      // A settled market's trades are all before the cutoff: only the historical route has them.
      const settled = (await body<{ markets: Array<{ ticker: string }> }>(`${k()}/historical/markets?limit=1`))
        .markets[0]?.ticker as string;
      const old = await all(`/historical/trades?ticker=${settled}`);
      expect(old.length).toBeGreaterThan(0);
      expect(old.every((t) => Date.parse(t.created_time) < cutoffMs)).toBe(true);
      expect(await all(`/markets/trades?ticker=${settled}`)).toEqual([]);
    });
  });

  describe('Gemini', () => {
    const g = () => sim.urls['venue-c'];
    type Rest = { timestamp: number; timestampms: number; tid: number; price: string; amount: string; type: string };

    test('v2 trade messages follow the l2_updates of the levels they took; tids and fields equal REST and the oracle', async () => {
      const symbol = 'BTCUSD';
      const c = await open(sim.feeds['venue-c']);
      c.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [symbol] }] });
      await c.until((ms) => ms.some((m) => m.type === 'l2_updates'));
      const made = trade('gemini', symbol, 6);
      await c.sync();
      // The book from the feed: each trade took its size from its level, which the changes before it show.
      const book = { buy: new Map<string, string>(), sell: new Map<string, string>() };
      let before = { buy: new Map<string, string>(), sell: new Map<string, string>() };
      const taken = new Map<string, number>();
      const trades: Json[] = [];
      const units = (s: string) => parseScaled(s, 8) as number;
      const settle = () => {
        for (const [key, size] of taken) {
          const [side, price] = key.split('|') as ['buy' | 'sell', string];
          const was = units(before[side].get(price) ?? '0');
          const is = units(book[side].get(price) ?? '0');
          expect([key, was - is]).toEqual([key, size]);
        }
        taken.clear();
      };
      for (const m of c.messages) {
        if (m.type === 'l2_updates') {
          settle();
          before = { buy: new Map(book.buy), sell: new Map(book.sell) };
          for (const [side, price, qty] of m.changes as [keyof typeof book, string, string][]) {
            if (units(qty) === 0) book[side].delete(price);
            else book[side].set(price, qty);
          }
        } else if (m.type === 'trade') {
          trades.push(m);
          // The taker bought: it took an ask (`sell` side); it sold: a bid.
          const key = `${m.side === 'buy' ? 'sell' : 'buy'}|${String(m.price)}`;
          taken.set(key, (taken.get(key) ?? 0) + units(m.quantity as string));
        }
      }
      settle();
      expect(trades.map((m) => String(m.tid))).toEqual(made.map((o) => o.id));
      for (const [i, m] of trades.entries()) {
        const o = made[i] as SimTrade;
        expect(m).toEqual({
          type: 'trade',
          symbol,
          event_id: expect.any(Number),
          timestamp: o.ts,
          price: o.price,
          quantity: o.size,
          side: o.side,
          tid: Number(o.id),
        });
      }
      const rest = await body<Rest[]>(`${g()}/v1/trades/btcusd?limit_trades=${made.length}`);
      expect(rest).toEqual(
        [...made].reverse().map((o) => ({
          timestamp: Math.floor(o.ts / 1000),
          timestampms: o.ts,
          tid: Number(o.id),
          price: o.price,
          amount: o.size,
          exchange: 'gemini',
          type: o.side,
        })),
      );
      // A new subscriber's first l2_updates carries the last trades, newest first.
      const late = await open(sim.feeds['venue-c']);
      late.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [symbol] }] });
      await late.until((ms) => ms.some((m) => m.type === 'l2_updates'));
      const first = late.messages.find((m) => m.type === 'l2_updates') as { trades: Json[] };
      const emitted = sim.trades('gemini', symbol);
      expect(first.trades.map((t) => String(t.tid))).toEqual(
        emitted
          .slice(-50)
          .reverse()
          .map((o) => o.id),
      );
    });

    test('since_tid walks forward exactly once; timestamp (s or ms), limit_trades bounds, include_breaks; bad values 400', async () => {
      const symbol = 'ETHUSD';
      trade('gemini', symbol, 7);
      const emitted = sim.trades('gemini', symbol);
      const tids = emitted.map((o) => Number(o.id));
      expect(tids).toEqual([...tids].sort((a, b) => a - b));
      const rest = (q: string) => body<Rest[]>(`${g()}/v1/trades/ethusd?${q}`);
      // since_tid=0: the earliest ones; each page's first (newest) tid continues the walk.
      const walked: number[] = [];
      let since = 0;
      for (let i = 0; i < 100; i++) {
        const page = await rest(`since_tid=${since}&limit_trades=3`);
        if (page.length === 0) break;
        expect(page.map((t) => t.tid)).toEqual([...page.map((t) => t.tid)].sort((a, b) => b - a));
        walked.push(...page.map((t) => t.tid).reverse());
        since = page[0]?.tid as number;
      }
      expect(walked).toEqual(tids);
      expect(await rest(`since_tid=${tids.at(-1)}`)).toEqual([]);
      // since_tid trumps timestamp.
      expect((await rest(`since_tid=${tids.at(-2)}&timestamp=${start}`)).map((t) => t.tid)).toEqual([tids.at(-1)]);
      const mid = emitted[3] as SimTrade;
      const after = emitted
        .filter((o) => o.ts >= mid.ts)
        .map((o) => Number(o.id))
        .reverse();
      expect((await rest(`timestamp=${mid.ts}&limit_trades=500`)).map((t) => t.tid)).toEqual(after);
      const sec = Math.floor(mid.ts / 1000);
      expect((await rest(`since=${sec}&limit_trades=500`)).map((t) => t.tid)).toEqual(
        emitted
          .filter((o) => o.ts >= sec * 1000)
          .map((o) => Number(o.id))
          .reverse(),
      );
      expect((await rest('limit_trades=2')).map((t) => t.tid)).toEqual(tids.slice(-2).reverse());
      expect(await rest('limit_trades=100000')).toHaveLength(Math.min(500, tids.length));
      expect((await rest('limit_trades=1&include_breaks=true'))[0]).toMatchObject({ broken: false });
      expect((await rest('limit_trades=1'))[0]).not.toHaveProperty('broken');
      for (const q of ['limit_trades=0', 'limit_trades=x', 'since_tid=-1', 'timestamp=soon', 'include_breaks=maybe']) {
        const res = await get(`${g()}/v1/trades/ethusd?${q}`);
        expect([q, res.status]).toEqual([q, 400]);
        expect(res.json).toMatchObject({ result: 'error', reason: 'InvalidParameter' });
      }
    });
  });

  describe('Polymarket US', () => {
    test('the trade subscription: one message per trade, named by market and tradeTime; fields equal the oracle', async () => {
      const slug = sim.books.tickers('venue-a-us')[0] as string;
      const c = await open(
        sim.feeds['venue-a-us'],
        signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/ws/markets', now),
      );
      c.send({ subscribe: { requestId: 't-1', subscriptionType: 'SUBSCRIPTION_TYPE_TRADE', marketSlugs: [slug] } });
      await c.sync();
      const made = trade('venue-a-us', slug, 4);
      await c.sync();
      const msgs = c.messages.filter((m) => m.trade);
      expect(msgs).toHaveLength(made.length);
      for (const [i, m] of msgs.entries()) {
        const o = made[i] as SimTrade;
        const buy = o.side === 'buy';
        expect(m).toEqual({
          requestId: 't-1',
          subscriptionType: 'SUBSCRIPTION_TYPE_TRADE',
          trade: {
            marketSlug: slug,
            price: { value: o.price, currency: 'USD' },
            quantity: { value: o.size, currency: 'USD' },
            tradeTime: `${new Date(o.ts).toISOString().slice(0, -1)}${String(o.no % 1e6).padStart(6, '0')}Z`,
            maker: {
              side: buy ? 'ORDER_SIDE_SELL' : 'ORDER_SIDE_BUY',
              intent: buy ? 'ORDER_INTENT_SELL_LONG' : 'ORDER_INTENT_BUY_LONG',
            },
            taker: {
              side: o.venueSide,
              intent: buy ? 'ORDER_INTENT_BUY_LONG' : 'ORDER_INTENT_SELL_LONG',
            },
          },
        });
        expect(o.id).toBeNull();
        expect(Date.parse((m.trade as { tradeTime: string }).tradeTime)).toBe(o.ts);
      }
      const times = msgs.map((m) => (m.trade as { tradeTime: string }).tradeTime);
      expect(new Set(times).size).toBe(times.length);
    });

    test('MARKET_DATA stats count the trades published: sharesTraded, lastTradePx, highPx, lowPx; LITE, book and BBO agree', async () => {
      const slug = sim.books.tickers('venue-a-us')[1] as string;
      const c = await open(
        sim.feeds['venue-a-us'],
        signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/ws/markets', now),
      );
      for (const [requestId, subscriptionType] of [
        ['md', 'SUBSCRIPTION_TYPE_MARKET_DATA'],
        ['lite', 'SUBSCRIPTION_TYPE_MARKET_DATA_LITE'],
        ['tr', 'SUBSCRIPTION_TYPE_TRADE'],
      ]) {
        c.send({ subscribe: { requestId, subscriptionType, marketSlugs: [slug] } });
      }
      await c.sync();
      trade('venue-a-us', slug, 6);
      await c.sync();
      type Stats = { sharesTraded: string; lastTradePx?: { value: string }; highPx?: { value: string } } & Json;
      // Every book message counts every trade made up to its change; the trades of that change follow it, so the trade
      // messages received before it add up to the count's growth since the first book at most.
      const units = (v: string) => parseScaled(v, 2) as number;
      const books = c.messages
        .filter((m) => m.marketData)
        .map((m) => m.marketData as { stats: Stats; transactTime: string });
      const first = units(books[0]?.stats.sharesTraded ?? '');
      let traded = 0;
      for (const m of c.messages) {
        if (m.trade) traded += units((m.trade as { quantity: { value: string } }).quantity.value);
        if (!m.marketData) continue;
        const md = m.marketData as { stats: Stats; transactTime: string };
        const made = sim.trades('venue-a-us', slug).filter((t) => t.ts <= Date.parse(md.transactTime));
        expect(units(md.stats.sharesTraded)).toBe(made.reduce((n, t) => n + units(t.size), 0));
        expect(units(md.stats.sharesTraded) - first).toBeGreaterThanOrEqual(traded);
      }
      expect(books.length).toBeGreaterThan(6);
      // The last book: every trade since the start, all of them published since the first; the prices of the last,
      // the highest and the lowest trade.
      const all = sim.trades('venue-a-us', slug);
      const px = (v: string) => parseScaled(v, 3) as number;
      const prices = all.map((t) => px(t.price));
      const last = books.at(-1) as { stats: Stats };
      expect(last.stats).toEqual({
        sharesTraded: formatScaled(
          all.reduce((n, t) => n + units(t.size), 0),
          2,
        ),
        lastTradePx: { value: all.at(-1)?.price, currency: 'USD' },
        highPx: { value: all.find((t) => px(t.price) === Math.max(...prices))?.price, currency: 'USD' },
        lowPx: { value: all.find((t) => px(t.price) === Math.min(...prices))?.price, currency: 'USD' },
      });
      expect(units(last.stats.sharesTraded) - first).toBe(traded);
      const lite = c.messages.filter((m) => m.marketDataLite).at(-1)?.marketDataLite as Json;
      expect(lite).toMatchObject({ sharesTraded: last.stats.sharesTraded, lastTradePx: last.stats.lastTradePx });
      const rest = await body<{ marketData: { stats: Stats } }>(`${sim.urls['venue-a-us']}/v1/markets/${slug}/book`);
      expect(rest.marketData.stats).toEqual(last.stats);
      const bbo = await body<{ marketData: Json }>(`${sim.urls['venue-a-us']}/v1/markets/${slug}/bbo`);
      expect(bbo.marketData).toMatchObject({
        sharesTraded: last.stats.sharesTraded,
        lastTradePx: last.stats.lastTradePx,
      });
    });
  });

  describe('Coinbase Exchange', () => {
    const u = () => sim.urls['venue-d'];
    type Rest = { time: string; trade_id: number; price: string; size: string; side: string };

    test('matches: one sequence each, increasing; ids and fields equal REST and the oracle; side is the maker’s', async () => {
      const id = 'ETH-USD';
      const c = await open(sim.feeds['venue-d']);
      c.send({ type: 'subscribe', product_ids: [id], channels: ['matches'] });
      await c.until((ms) => ms.some((m) => m.type === 'subscriptions'));
      const made = trade('coinbase', id, 6);
      await c.sync();
      const matches = c.messages.filter((m) => m.type === 'match');
      expect(matches.map((m) => String(m.trade_id))).toEqual(made.map((o) => o.id));
      const seqs = matches.map((m) => m.sequence as number);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
      for (const [i, m] of matches.entries()) {
        const o = made[i] as SimTrade;
        expect(m).toEqual({
          type: 'match',
          trade_id: Number(o.id),
          sequence: expect.any(Number),
          maker_order_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          taker_order_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          time: new Date(o.ts).toISOString().replace('Z', '000Z'),
          product_id: id,
          size: o.size,
          price: o.price,
          side: o.side === 'buy' ? 'sell' : 'buy',
        });
        expect(o.venueSide).toBe(m.side);
      }
      const rest = await body<Rest[]>(`${u()}/products/${id}/trades?limit=${made.length}`);
      expect(rest).toEqual(
        [...made].reverse().map((o) => ({
          time: new Date(o.ts).toISOString(),
          trade_id: Number(o.id),
          price: o.price,
          size: o.size,
          side: o.venueSide,
        })),
      );
      // The product's sequence (REST book, heartbeat) is its last message's.
      const book = await body<{ sequence: number }>(`${u()}/products/${id}/book`);
      expect(book.sequence).toBe(seqs.at(-1));
    });

    test('before/after pages and CB-BEFORE/CB-AFTER: walking back with after and forward with before, each trade once', async () => {
      const id = 'BTC-USD';
      trade('coinbase', id, 7);
      const emitted = sim.trades('coinbase', id).map((o) => Number(o.id));
      const page = async (q: string) => {
        const res = await get(`${u()}/products/${id}/trades?${q}`);
        expect([q, res.status]).toEqual([q, 200]);
        const list = (res.json as Rest[]).map((t) => t.trade_id);
        const [hb, ha] = [res.headers.get('cb-before'), res.headers.get('cb-after')];
        if (list.length) expect([hb, ha]).toEqual([String(list[0]), String(list.at(-1))]);
        else expect([hb, ha]).toEqual([null, null]);
        return { list, before: hb, after: ha };
      };
      const newest = await page('limit=3');
      expect(newest.list).toEqual(emitted.slice(-3).reverse());
      const back: number[] = [...newest.list];
      let cursor = newest.after;
      for (let i = 0; i < 100 && cursor; i++) {
        const p = await page(`limit=3&after=${cursor}`);
        back.push(...p.list);
        cursor = p.after;
      }
      expect(back).toEqual([...emitted].reverse());
      // Nothing newer than the newest page yet; once a trade comes, before=CB-BEFORE finds exactly it.
      expect((await page(`before=${newest.before}`)).list).toEqual([]);
      const more = trade('coinbase', id, 1).map((o) => Number(o.id));
      expect((await page(`before=${newest.before}&limit=1`)).list).toEqual([more[0]]);
      // before=X: the page right above X (the oldest of the newer ones), newest first.
      const oldest = emitted[0] as number;
      expect((await page(`before=${oldest}&limit=2`)).list).toEqual([emitted[2], emitted[1]]);
      expect((await page('limit=100000')).list).toHaveLength(Math.min(1000, emitted.length + more.length));
      for (const q of ['limit=0', 'limit=x', 'before=x', `before=${oldest}&after=${oldest + 3}`]) {
        const res = await get(`${u()}/products/${id}/trades?${q}`);
        expect([q, res.status]).toEqual([q, 400]);
        expect(res.json).toEqual({ message: expect.any(String) });
      }
    });
  });

  describe('Polymarket CLOB', () => {
    type DataTrade = {
      asset: string;
      transactionHash: string;
      side: string;
      size: number;
      price: number;
      proxyWallet: string;
    };

    test('last_trade_price per trade of the YES asset; the Data API pages and filters the same trades', async () => {
      const yes = sim.books.tickers('venue-a-clob')[0] as string;
      const c = await open(`${sim.urls['venue-a-clob'].replace('http', 'ws')}/ws/market`);
      c.send({ assets_ids: [yes], type: 'market' });
      await c.until((ms) => ms.some((m) => m.event_type === 'book'));
      const made = trade('venue-a-clob', yes, 5);
      await c.sync();
      const msgs = c.messages.filter((m) => m.event_type === 'last_trade_price');
      const condition = msgs[0]?.market as string;
      expect(msgs).toEqual(
        made.map((o) => ({
          event_type: 'last_trade_price',
          asset_id: yes,
          market: condition,
          price: o.price,
          size: o.size,
          fee_rate_bps: '0',
          side: o.venueSide,
          timestamp: String(o.ts),
          transaction_hash: o.id,
        })),
      );
      const data = `${sim.urls['venue-a-clob/data']}/trades?market=${condition}`;
      const emitted = sim.trades('venue-a-clob', yes).reverse();
      const all = await body<DataTrade[]>(`${data}&limit=10000`);
      expect(all.map((t) => t.transactionHash)).toEqual(emitted.map((o) => o.id));
      const paged: string[] = [];
      for (let offset = 0; offset < emitted.length; offset += 2) {
        paged.push(...(await body<DataTrade[]>(`${data}&limit=2&offset=${offset}`)).map((t) => t.transactionHash));
      }
      expect(paged).toEqual(emitted.map((o) => o.id));
      const sells = await body<DataTrade[]>(`${data}&limit=10000&side=SELL`);
      expect(sells.map((t) => t.transactionHash)).toEqual(emitted.filter((o) => o.side === 'sell').map((o) => o.id));
      const big = Math.max(...all.map((t) => t.size));
      const tokens = await body<DataTrade[]>(`${data}&limit=10000&filterType=TOKENS&filterAmount=${big}`);
      expect(tokens.every((t) => t.size >= big) && tokens.length > 0).toBe(true);
      const wallet = all[0]?.proxyWallet as string;
      const mine = await body<DataTrade[]>(`${data}&limit=10000&user=${wallet}`);
      expect(mine.map((t) => t.transactionHash)).toEqual(
        all.filter((t) => t.proxyWallet === wallet).map((t) => t.transactionHash),
      );
      for (const q of [
        'offset=10001',
        'limit=-1',
        'side=buy',
        'filterType=CASH',
        'user=0x12',
        'market=0x1&eventId=2',
      ]) {
        const res = await get(`${sim.urls['venue-a-clob/data']}/trades?${q}`);
        expect([q, res.status]).toEqual([q, 400]);
        expect(res.json).toEqual({ error: expect.any(String) });
      }
    });
  });
});
