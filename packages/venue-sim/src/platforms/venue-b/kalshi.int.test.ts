import { signers, startSimulator, type KalshiBookView, type Simulator } from '../../index';
import { get, type HttpResult } from '../../testing/clients';

/**
 * The Kalshi host as the official clients read it (kalshi-typescript 3.30, ccxt's prediction.kalshi): shapes, the
 * platform's query and pagination rules, and agreement between routes, the moving books and the seed. The clock is
 * fixed and the books move only when a test steps them, so every figure here is reproducible.
 */

type Json = Record<string, unknown>;
type Market = Json & { ticker: string; event_ticker: string; market_id: string };
type Trade = {
  trade_id: string;
  ticker: string;
  count_fp: string;
  yes_price_dollars: string;
  no_price_dollars: string;
  taker_outcome_side: string;
  taker_book_side: string;
  created_time: string;
};
type Ohlc = { open_dollars: string; low_dollars: string; high_dollars: string; close_dollars: string };
type Candle = {
  end_period_ts: number;
  yes_bid: Ohlc;
  yes_ask: Ohlc;
  price: Partial<
    Record<
      'open_dollars' | 'low_dollars' | 'high_dollars' | 'close_dollars' | 'mean_dollars' | 'previous_dollars',
      string
    >
  >;
  volume_fp: string;
  open_interest_fp: string;
};

const MINUTE = 60_000;
const DAY = 86_400_000;
const DOLLARS = /^\d\.\d{4}$/;
const FP = /^-?\d+\.\d{2}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/** Exact decimal strings as integers of their last digit (`"0.5200"` → 5200, `"10.25"` → 1025). */
const units = (s: string): number => {
  const [whole, frac = ''] = s.replace('-', '').split('.');
  const v = Number(whole) * 10 ** frac.length + Number(frac || 0);
  return s.startsWith('-') ? -v : v;
};

/** Every field kalshi-typescript 3.30 marks required on `Market`, with its type. */
const MARKET_FIELDS: Record<string, 'string' | 'number' | 'boolean' | 'object'> = {
  ticker: 'string',
  event_ticker: 'string',
  market_type: 'string',
  yes_sub_title: 'string',
  no_sub_title: 'string',
  created_time: 'string',
  updated_time: 'string',
  open_time: 'string',
  close_time: 'string',
  latest_expiration_time: 'string',
  settlement_timer_seconds: 'number',
  status: 'string',
  yes_bid_dollars: 'string',
  yes_bid_size_fp: 'string',
  yes_ask_dollars: 'string',
  yes_ask_size_fp: 'string',
  no_bid_dollars: 'string',
  no_ask_dollars: 'string',
  last_price_dollars: 'string',
  volume_fp: 'string',
  volume_24h_fp: 'string',
  result: 'string',
  can_close_early: 'boolean',
  open_interest_fp: 'string',
  notional_value_dollars: 'string',
  previous_yes_bid_dollars: 'string',
  previous_yes_ask_dollars: 'string',
  previous_price_dollars: 'string',
  expiration_value: 'string',
  rules_primary: 'string',
  rules_secondary: 'string',
  price_level_structure: 'string',
  price_ranges: 'object',
};

function expectMarketShape(m: Json): void {
  for (const [field, type] of Object.entries(MARKET_FIELDS)) {
    expect([field, typeof m[field]]).toEqual([field, type]);
  }
  for (const f of Object.keys(m).filter((f) => f.endsWith('_dollars')))
    expect([f, m[f]]).toEqual([f, expect.stringMatching(DOLLARS)]);
  for (const f of Object.keys(m).filter((f) => f.endsWith('_fp')))
    expect([f, m[f]]).toEqual([f, expect.stringMatching(FP)]);
  for (const f of ['created_time', 'updated_time', 'open_time', 'close_time']) expect(m[f]).toMatch(RFC3339);
}

describe('Kalshi: the reads of kalshi-typescript 3.30 and ccxt prediction.kalshi', () => {
  const start = Date.parse('2026-11-23T10:00:00.000Z');
  let now = start;
  let sim: Simulator;
  let k: string;
  const pub = (path: string): Promise<HttpResult> => get(`${k}${path}`);
  const priv = (path: string): Promise<HttpResult> =>
    get(`${k}${path}`, signers.kalshiHeaders(sim.credentials.kalshi, 'GET', `/trade-api/v2${path}`, now));
  const body = async <T = Json>(path: string, signed = false): Promise<T> => {
    const res = signed ? await priv(path) : await pub(path);
    expect([path, res.status]).toEqual([path, 200]);
    return res.json as T;
  };
  const sec = (ms: number) => Math.floor(ms / 1000);

  beforeAll(async () => {
    // 12 markets: the catalogue then holds a basketball game too (milestones, live data).
    sim = await startSimulator({
      seed: 11,
      clock: () => now,
      updatesPerSecond: 0,
      rateLimits: false,
      tickers: { kalshi: 12 },
    });
    k = sim.urls['venue-b'];
    // Let the books move a little after the start, a few minutes in.
    for (let i = 0; i < 5; i++) {
      now += 70_000;
      sim.books.step(20);
    }
  });
  afterAll(() => sim.stop());

  describe('markets', () => {
    test("every required field; quotes and sizes are the live book's; previous_* are the quote and last trade a day earlier; 24 h volume is the trades'", async () => {
      const { markets } = await body<{ markets: Market[] }>('/markets?limit=1000');
      expect(markets).toHaveLength(12);
      for (const m of markets) {
        expectMarketShape(m);
        const book = sim.books.book('kalshi', m.ticker) as KalshiBookView;
        expect([m.yes_bid_dollars, m.yes_bid_size_fp]).toEqual(book.bids[0]);
        expect([m.yes_ask_dollars, m.yes_ask_size_fp]).toEqual(book.asks[0]);
        expect(units(m.no_bid_dollars as string)).toBe(10000 - units(m.yes_ask_dollars as string));
      }
      const m = markets[0] as Market;
      const series = m.event_ticker.split('-')[0];
      const dayAgo = now - DAY;
      const minuteEnd = (Math.floor(dayAgo / MINUTE) + 1) * 60;
      const { candlesticks } = await body<{ candlesticks: Candle[] }>(
        `/series/${series}/markets/${m.ticker}/candlesticks?start_ts=${minuteEnd}&end_ts=${minuteEnd}&period_interval=1`,
      );
      expect(m.previous_yes_bid_dollars).toBe(candlesticks[0]?.yes_bid.close_dollars);
      expect(m.previous_yes_ask_dollars).toBe(candlesticks[0]?.yes_ask.close_dollars);
      const before = await body<{ trades: Trade[] }>(
        `/markets/trades?ticker=${m.ticker}&max_ts=${sec(dayAgo) - 1}&limit=1`,
      );
      expect(m.previous_price_dollars).toBe(before.trades[0]?.yes_price_dollars);
      const last = await body<{ trades: Trade[] }>(`/markets/trades?ticker=${m.ticker}&limit=1`);
      expect(m.last_price_dollars).toBe(last.trades[0]?.yes_price_dollars);
      const day = await body<{ trades: Trade[]; cursor: string }>(
        `/markets/trades?ticker=${m.ticker}&min_ts=${sec(dayAgo) + 1}&limit=1000`,
      );
      expect(day.cursor).toBe('');
      expect(units(m.volume_24h_fp as string)).toBe(day.trades.reduce((v, t) => v + units(t.count_fp), 0));
      expect(units(m.open_interest_fp as string)).toBeLessThanOrEqual(units(m.volume_fp as string));
      // The single-market route answers the same market.
      expect((await body<{ market: Market }>(`/markets/${m.ticker}`)).market).toEqual(m);
    });

    test('filters: tickers is a comma list (first occurrence), event/series, status, mve_filter; limit and cursor bounds', async () => {
      const all = (await body<{ markets: Market[] }>('/markets?limit=1000')).markets;
      const [a, b] = all.map((m) => m.ticker);
      const tickers = (path: string) => body<{ markets: Market[] }>(path).then((r) => r.markets.map((m) => m.ticker));
      expect(await tickers(`/markets?tickers=${a},${b}`)).toEqual([a, b]);
      expect(await tickers(`/markets?tickers=${a}&tickers=${b}`)).toEqual([a]);
      const ev = all[5] as Market;
      expect(await tickers(`/markets?event_ticker=${ev.event_ticker}`)).toEqual(
        all.filter((m) => m.event_ticker === ev.event_ticker).map((m) => m.ticker),
      );
      expect(await tickers('/markets?series_ticker=KXFED')).toEqual(
        all.filter((m) => m.ticker.startsWith('KXFED-')).map((m) => m.ticker),
      );
      expect(await tickers('/markets?status=open')).toHaveLength(12);
      expect(await tickers('/markets?status=settled')).toEqual([]);
      expect(await tickers('/markets?mve_filter=only')).toEqual([]);
      expect(await tickers('/markets?mve_filter=exclude')).toHaveLength(12);
      for (const bad of ['limit=0', 'limit=1001', 'limit=abc', 'status=live', 'cursor=nope', 'min_close_ts=soon']) {
        const res = await pub(`/markets?${bad}`);
        expect([bad, res.status]).toEqual([bad, 400]);
        expect(res.json).toEqual({ error: { code: 'bad_request', message: expect.any(String) } });
      }
    });

    test('pagination walks every market once, in listing order, and ends with an empty cursor', async () => {
      const all = (await body<{ markets: Market[] }>('/markets?limit=1000')).markets.map((m) => m.ticker);
      const seen: string[] = [];
      let cursor = '';
      for (let page = 0; page < 10; page++) {
        const r = await body<{ markets: Market[]; cursor: string }>(
          `/markets?limit=5${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...r.markets.map((m) => m.ticker));
        cursor = r.cursor;
        if (!cursor) break;
      }
      expect(seen).toEqual(all);
    });

    test('orderbooks: repeated tickers (as the library sends them) and a comma list give the single-market books', async () => {
      const [a, b] = sim.books.tickers('kalshi');
      const repeated = await body<{ orderbooks: Array<{ ticker: string; orderbook_fp: unknown }> }>(
        `/markets/orderbooks?tickers=${a}&tickers=${b}`,
      );
      expect(repeated.orderbooks.map((o) => o.ticker)).toEqual([a, b]);
      expect(await body(`/markets/orderbooks?tickers=${a},${b}`)).toEqual(repeated);
      for (const o of repeated.orderbooks) {
        expect(o.orderbook_fp).toEqual((await body<Json>(`/markets/${o.ticker}/orderbook`)).orderbook_fp);
      }
      // [V] depth 0 or negative: every level.
      expect(await body(`/markets/${a}/orderbook?depth=-1`)).toEqual(await body(`/markets/${a}/orderbook`));
      const many = Array.from({ length: 101 }, (_, i) => `tickers=KXMANY-${i}`).join('&');
      expect((await pub(`/markets/orderbooks?${many}`)).status).toBe(400);
      expect((await pub(`/markets/orderbooks?tickers=${a}&tickers=KXNOPE-1`)).status).toBe(404);
    });
  });

  describe('trades and candlesticks', () => {
    test('trades: newest first; a cursor walk neither repeats nor skips while new trades arrive; the book’s own since the start, drawn at the minute’s opening quote before', async () => {
      const ticker = sim.books.tickers('kalshi')[2] as string;
      const series = ticker.split('-')[0];
      // The window holds drawn trades (before the start) and the book's own.
      for (let i = 0; i < 5000 && sim.trades('kalshi', ticker).length < 2; i++) sim.books.step(1);
      const from = sec(now) - 6 * 3600;
      const to = sec(now);
      const whole = await body<{ trades: Trade[]; cursor: string }>(
        `/markets/trades?ticker=${ticker}&min_ts=${from}&max_ts=${to}&limit=1000`,
      );
      expect(whole.cursor).toBe('');
      expect(whole.trades.length).toBeGreaterThan(2);
      const times = whole.trades.map((t) => Date.parse(t.created_time));
      expect(times).toEqual([...times].sort((x, y) => y - x));
      expect(times.every((t) => t >= from * 1000 && t <= to * 1000 + 999)).toBe(true);
      const walked: Trade[] = [];
      let cursor = '';
      do {
        const page = await body<{ trades: Trade[]; cursor: string }>(
          `/markets/trades?ticker=${ticker}&min_ts=${from}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        walked.push(...page.trades);
        cursor = page.cursor;
        now += 11 * MINUTE; // new trades keep arriving at the head; the walk goes on behind them
        sim.books.step(5);
      } while (cursor);
      expect(walked).toEqual(whole.trades);
      // The trades that arrived meanwhile are the book's own, as the simulator lists them, newest first.
      for (let i = 0; i < 5000 && sim.trades('kalshi', ticker, (to + 1) * 1000).length < 2; i++) sim.books.step(1);
      const emitted = sim.trades('kalshi', ticker, (to + 1) * 1000);
      const arrived = await body<{ trades: Trade[] }>(`/markets/trades?ticker=${ticker}&min_ts=${to + 1}`);
      expect(emitted.length).toBeGreaterThanOrEqual(2);
      expect(
        arrived.trades.map((t) => [t.trade_id, t.yes_price_dollars, t.count_fp, Date.parse(t.created_time)]),
      ).toEqual(emitted.reverse().map((o) => [o.id, o.price, o.size, o.ts]));
      const candles = await body<{ candlesticks: Candle[] }>(
        `/series/${series}/markets/${ticker}/candlesticks?start_ts=${from}&end_ts=${to + 60}&period_interval=1`,
      );
      const byEnd = new Map(candles.candlesticks.map((c) => [c.end_period_ts, c]));
      const own = new Map(sim.trades('kalshi', ticker).map((o) => [o.id, o]));
      expect(whole.trades.some((t) => own.has(t.trade_id))).toBe(true);
      for (const t of whole.trades) {
        const o = own.get(t.trade_id);
        if (o) {
          // The book's trades (since the start): at the book's price.
          expect([t.yes_price_dollars, t.count_fp, Date.parse(t.created_time)]).toEqual([o.price, o.size, o.ts]);
          expect(t.taker_outcome_side).toBe(o.venueSide);
        } else {
          // Before the start: drawn, priced at the opening quote of their minute.
          expect(Date.parse(t.created_time)).toBeLessThan(start);
          const c = byEnd.get((Math.floor(Date.parse(t.created_time) / MINUTE) + 1) * 60) as Candle;
          const quote = t.taker_outcome_side === 'yes' ? c.yes_ask.open_dollars : c.yes_bid.open_dollars;
          expect(t.yes_price_dollars).toBe(quote);
        }
        expect(t.taker_book_side).toBe(t.taker_outcome_side === 'yes' ? 'bid' : 'ask');
        expect(units(t.no_price_dollars)).toBe(10000 - units(t.yes_price_dollars));
      }
      expect((await body<{ trades: Trade[] }>(`/markets/trades?ticker=${ticker}&is_block_trade=true`)).trades).toEqual(
        [],
      );
      expect((await pub('/markets/trades?limit=1001')).status).toBe(400);
      expect((await pub('/markets/trades?cursor=%7B')).status).toBe(400);
    });

    test('candlesticks are bounded by the book: the live minute’s bid and ask open, high, low and close are the book’s', async () => {
      const ticker = sim.books.tickers('kalshi')[0] as string;
      const series = ticker.split('-')[0];
      now = (Math.floor(now / MINUTE) + 1) * MINUTE + 1000;
      const best = () => {
        const b = sim.books.book('kalshi', ticker) as KalshiBookView;
        return [units(b.bids[0]?.[0] as string), units(b.asks[0]?.[0] as string)] as const;
      };
      const [bid0, ask0] = best();
      const bids = [bid0];
      const asks = [ask0];
      // Steps move a random market each; go on until this one's best prices have changed a few times.
      for (let i = 0; i < 5000 && new Set(bids).size + new Set(asks).size < 6; i++) {
        sim.books.step(1);
        const [b, a] = best();
        bids.push(b);
        asks.push(a);
      }
      expect(new Set(bids).size + new Set(asks).size).toBeGreaterThanOrEqual(6);
      const end = (Math.floor(now / MINUTE) + 1) * 60;
      const { candlesticks } = await body<{ candlesticks: Candle[] }>(
        `/series/${series}/markets/${ticker}/candlesticks?start_ts=${end}&end_ts=${end}&period_interval=1`,
      );
      const c = candlesticks[0] as Candle;
      const ohlc = (x: Ohlc) => [x.open_dollars, x.high_dollars, x.low_dollars, x.close_dollars].map(units);
      expect(ohlc(c.yes_bid)).toEqual([bid0, Math.max(...bids), Math.min(...bids), bids[bids.length - 1]]);
      expect(ohlc(c.yes_ask)).toEqual([ask0, Math.max(...asks), Math.min(...asks), asks[asks.length - 1]]);
    });

    test('candlesticks: repeated calls agree; trade prices and volume are the period’s trades; batch, event and include_latest_before_start', async () => {
      const ticker = sim.books.tickers('kalshi')[1] as string;
      const series = ticker.split('-')[0];
      const to = Math.floor(now / 3_600_000) * 3600;
      const from = to - 48 * 3600;
      const path = `/series/${series}/markets/${ticker}/candlesticks?start_ts=${from}&end_ts=${to}&period_interval=60`;
      const first = await body<{ ticker: string; candlesticks: Candle[] }>(path);
      sim.books.step(50);
      now += 90_000;
      expect(await body(path)).toEqual(first);
      expect(first.candlesticks).toHaveLength(49);
      const { trades } = await body<{ trades: Trade[] }>(
        `/markets/trades?ticker=${ticker}&min_ts=${from - 3600}&max_ts=${to - 1}&limit=1000`,
      );
      let previous: string | undefined;
      for (const c of first.candlesticks) {
        for (const x of [c.yes_bid, c.yes_ask]) {
          const [o, h, l, cl] = [x.open_dollars, x.high_dollars, x.low_dollars, x.close_dollars].map(units) as [
            number,
            number,
            number,
            number,
          ];
          expect(l <= Math.min(o, cl) && h >= Math.max(o, cl) && l >= 100 && h <= 9900).toBe(true);
        }
        const inPeriod = trades
          .filter(
            (t) =>
              Date.parse(t.created_time) >= (c.end_period_ts - 3600) * 1000 &&
              Date.parse(t.created_time) < c.end_period_ts * 1000,
          )
          .reverse();
        expect(units(c.volume_fp)).toBe(inPeriod.reduce((v, t) => v + units(t.count_fp), 0));
        if (inPeriod.length) {
          const prices = inPeriod.map((t) => units(t.yes_price_dollars));
          expect(
            [c.price.open_dollars, c.price.high_dollars, c.price.low_dollars, c.price.close_dollars].map((p) =>
              units(p as string),
            ),
          ).toEqual([prices[0], Math.max(...prices), Math.min(...prices), prices[prices.length - 1]]);
        } else {
          expect(c.price.open_dollars).toBeUndefined();
        }
        if (previous !== undefined) expect(c.price.previous_dollars).toBe(previous);
        previous = c.price.close_dollars ?? previous;
      }

      const [a, b] = sim.books.tickers('kalshi');
      const batch = await body<{ markets: Array<{ market_ticker: string; candlesticks: Candle[] }> }>(
        `/markets/candlesticks?market_tickers=${a},${b}&start_ts=${from}&end_ts=${to}&period_interval=60`,
      );
      expect(batch.markets.map((m) => m.market_ticker)).toEqual([a, b]);
      for (const m of batch.markets) {
        const single = await body<{ candlesticks: Candle[] }>(
          `/series/${m.market_ticker.split('-')[0]}/markets/${m.market_ticker}/candlesticks?start_ts=${from}&end_ts=${to}&period_interval=60`,
        );
        expect(m.candlesticks).toEqual(single.candlesticks);
      }
      const withLatest = await body<{ candlesticks: Candle[] }>(
        `${path.replace(`start_ts=${from}`, `start_ts=${from + 1}`)}&include_latest_before_start=true`,
      );
      const projected = withLatest.candlesticks[0] as Candle;
      expect(projected.end_period_ts).toBe(from + 3600);
      expect(projected.price.open_dollars).toBeUndefined();
      expect(projected.price.previous_dollars).toBe(
        first.candlesticks[0]?.price.close_dollars ?? first.candlesticks[0]?.price.previous_dollars,
      );

      for (const bad of [
        `start_ts=${from}&end_ts=${to}&period_interval=5`,
        `start_ts=abc&end_ts=${to}&period_interval=60`,
        `start_ts=${to}&end_ts=${from}&period_interval=60`,
        `end_ts=${to}&period_interval=60`,
        `start_ts=0&end_ts=${to}&period_interval=1`,
      ]) {
        expect([bad, (await pub(`/series/${series}/markets/${ticker}/candlesticks?${bad}`)).status]).toEqual([
          bad,
          400,
        ]);
      }
      expect(
        (await pub(`/series/KXNOPE/markets/${ticker}/candlesticks?start_ts=${from}&end_ts=${to}&period_interval=60`))
          .status,
      ).toBe(404);
    });
  });

  describe('events and series', () => {
    test('events: settlement sources, nested and top-level markets, metadata, fee overrides, milestones, filters', async () => {
      const { events, cursor } = await body<{ events: Json[]; cursor: string }>('/events?with_nested_markets=true');
      expect(cursor).toBe('');
      expect(events).toHaveLength(6);
      const all = (await body<{ markets: Market[] }>('/markets?limit=1000')).markets;
      for (const e of events) {
        for (const f of ['event_ticker', 'series_ticker', 'sub_title', 'title', 'collateral_return_type'])
          expect(typeof e[f]).toBe('string');
        expect(typeof e.mutually_exclusive).toBe('boolean');
        expect(e.settlement_sources).toEqual([{ name: expect.any(String), url: expect.stringMatching(/^https:\/\//) }]);
        const markets = (e.markets as Market[]).map((m) => m.ticker);
        expect(markets).toEqual(all.filter((m) => m.event_ticker === e.event_ticker).map((m) => m.ticker));
        const one = await body<{ event: Json; markets: Market[] }>(`/events/${e.event_ticker}`);
        expect(one.event.markets).toBeUndefined();
        expect(one.markets.map((m) => m.ticker)).toEqual(markets);
        const meta = await body<{
          image_url: string;
          market_details: Array<{ market_ticker: string; color_code: string }>;
          settlement_sources: unknown;
        }>(`/events/${e.event_ticker}/metadata`);
        expect(meta.market_details.map((d) => d.market_ticker)).toEqual(markets);
        expect(meta.settlement_sources).toEqual(e.settlement_sources);
      }
      const changes = await body<{
        event_fee_changes: Array<{
          event_ticker: string;
          fee_type_override: string;
          fee_multiplier_override: number;
          scheduled_ts: string;
        }>;
        cursor: string;
      }>('/events/fee_changes');
      const change = changes.event_fee_changes[0];
      expect(Date.parse(change?.scheduled_ts as string)).toBeLessThan(now);
      const changed = events.find((e) => e.event_ticker === change?.event_ticker) as Json;
      expect([changed.fee_type_override, changed.fee_multiplier_override]).toEqual([
        change?.fee_type_override,
        change?.fee_multiplier_override,
      ]);
      expect(events.filter((e) => e.fee_type_override !== undefined)).toHaveLength(1);
      const game = events.find((e) => e.series_ticker === 'KXNBAGAME') as Json;
      const withMilestones = await body<{ milestones: Array<{ related_event_tickers: string[] }> }>(
        `/events?tickers=${game.event_ticker}&with_milestones=true`,
      );
      expect(withMilestones.milestones.map((m) => m.related_event_tickers)).toEqual([[game.event_ticker]]);
      const pages = await body<{ events: Json[]; cursor: string }>('/events?limit=4');
      expect(pages.events).toHaveLength(4);
      const rest = await body<{ events: Json[]; cursor: string }>(`/events?limit=4&cursor=${pages.cursor}`);
      expect([...pages.events, ...rest.events].map((e) => e.event_ticker)).toEqual(events.map((e) => e.event_ticker));
      expect(rest.cursor).toBe('');
      expect((await pub('/events?limit=201')).status).toBe(400);
      expect((await body<{ events: Json[] }>('/events?status=settled')).events).toEqual([]);
      expect(await body('/events/multivariate')).toEqual({ events: [], cursor: '' });
      expect((await pub('/events/multivariate?series_ticker=A&collection_ticker=B')).status).toBe(400);
    });

    test('series: categories, category and tag filters, the fee in force, volume as the sum of its markets’', async () => {
      const { series } = await body<{ series: Json[] }>('/series');
      for (const s of series) {
        expect(s.categories).toEqual(expect.arrayContaining([s.category]));
        expect(
          Array.isArray(s.tags) && Array.isArray(s.settlement_sources) && Array.isArray(s.additional_prohibitions),
        ).toBe(true);
      }
      // A category filter matches any of a series' categories, not only its primary one [V].
      expect((await body<{ series: Json[] }>('/series?category=Financials')).series.map((s) => s.ticker)).toEqual([
        'KXFED',
      ]);
      expect((await body<{ series: Json[] }>('/series?tags=BTC')).series.map((s) => s.ticker)).toEqual([
        'KXBTCD',
        'KXBTC15M',
      ]);
      const upcoming = await body<{
        series_fee_change_arr: Array<{ series_ticker: string; scheduled_ts: string; fee_type: string }>;
      }>('/series/fee_changes');
      expect(upcoming.series_fee_change_arr.every((c) => Date.parse(c.scheduled_ts) > now)).toBe(true);
      const everything = await body<typeof upcoming>('/series/fee_changes?show_historical=true');
      const past = everything.series_fee_change_arr.find((c) => Date.parse(c.scheduled_ts) <= now);
      expect(past).toBeDefined();
      const s = await body<{ series: Json }>(`/series/${past?.series_ticker}?include_volume=true`);
      expect(s.series.fee_type).toBe(past?.fee_type);
      const live = (await body<{ markets: Market[] }>(`/markets?series_ticker=${past?.series_ticker}&limit=1000`))
        .markets;
      const settled = (
        await body<{ markets: Market[] }>(`/historical/markets?series_ticker=${past?.series_ticker}&limit=1000`)
      ).markets;
      expect(units(s.series.volume_fp as string)).toBe(
        [...live, ...settled].reduce((v, m) => v + units(m.volume_fp as string), 0),
      );
      expect((await pub('/series/KXNOPE')).status).toBe(404);
    });

    test('event candlesticks equal the markets’ own; adjusted_end_ts pulls a long range in', async () => {
      const ev = (await body<{ events: Json[] }>('/events?series_ticker=KXBTCD')).events[0] as Json;
      const to = Math.floor(now / 3_600_000) * 3600;
      const from = to - 12 * 3600;
      const r = await body<{ market_tickers: string[]; market_candlesticks: Candle[][]; adjusted_end_ts: number }>(
        `/series/KXBTCD/events/${ev.event_ticker}/candlesticks?start_ts=${from}&end_ts=${to}&period_interval=60`,
      );
      expect(r.adjusted_end_ts).toBe(to);
      expect(r.market_tickers).toHaveLength(4);
      for (const [i, t] of r.market_tickers.entries()) {
        const single = await body<{ candlesticks: Candle[] }>(
          `/series/KXBTCD/markets/${t}/candlesticks?start_ts=${from}&end_ts=${to}&period_interval=60`,
        );
        expect(r.market_candlesticks[i]).toEqual(single.candlesticks);
      }
      const long = await body<{ market_candlesticks: Candle[][]; adjusted_end_ts: number }>(
        `/series/KXBTCD/events/${ev.event_ticker}/candlesticks?start_ts=${to - 10 * 86400}&end_ts=${to}&period_interval=1`,
      );
      expect(long.adjusted_end_ts).toBeLessThan(to);
      expect(
        long.market_candlesticks.every(
          (c) => c.length === 1250 && c[c.length - 1]?.end_period_ts === long.adjusted_end_ts,
        ),
      ).toBe(true);
    });

    test('forecast percentile history: signed, repeated percentiles, values rising with the percentile', async () => {
      const ev = (await body<{ events: Json[] }>('/events?series_ticker=KXBTCD')).events[0] as Json;
      const to = sec(now);
      const path = `/series/KXBTCD/events/${ev.event_ticker}/forecast_percentile_history?percentiles=1000&percentiles=5000&percentiles=9000&start_ts=${to - 3 * 3600}&end_ts=${to}&period_interval=60`;
      const unsigned = await pub(path);
      expect(unsigned.status).toBe(401);
      expect(unsigned.json).toMatchObject({ error: { code: 'authentication_error' } });
      const { forecast_history } = await body<{
        forecast_history: Array<{
          end_period_ts: number;
          period_interval: number;
          percentile_points: Array<{ percentile: number; numerical_forecast: number; formatted_forecast: string }>;
        }>;
      }>(path, true);
      expect(forecast_history).toHaveLength(3);
      for (const p of forecast_history) {
        expect(p.percentile_points.map((x) => x.percentile)).toEqual([1000, 5000, 9000]);
        const values = p.percentile_points.map((x) => x.numerical_forecast);
        expect(values).toEqual([...values].sort((a, b) => a - b));
        expect(p.percentile_points[1]?.formatted_forecast).toMatch(/^\$\d{2,3},\d{3}$/);
      }
      expect(
        (await priv(path.replace('percentiles=1000&percentiles=5000&percentiles=9000', 'percentiles=1000,5000,9000')))
          .json,
      ).toEqual({ forecast_history });
      const eleven = Array.from({ length: 11 }, (_, i) => `percentiles=${i * 100}`).join('&');
      expect((await priv(path.replace('percentiles=1000&percentiles=5000&percentiles=9000', eleven))).status).toBe(400);
      const weather = (await body<{ events: Json[] }>('/events?series_ticker=KXHIGHNY')).events[0] as Json;
      expect(
        (
          await priv(
            `/series/KXHIGHNY/events/${weather.event_ticker}/forecast_percentile_history?percentiles=5000&start_ts=${to - 3600}&end_ts=${to}&period_interval=60`,
          )
        ).status,
      ).toBe(400);
    });

    test('exchange: a schedule for all seven weekdays, Thursday maintenance windows; user data timestamp is public', async () => {
      const { schedule } = await body<{
        schedule: {
          standard_hours: Json[];
          maintenance_windows: Array<{ start_datetime: string; end_datetime: string }>;
        };
      }>('/exchange/schedule');
      for (const day of ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']) {
        expect(schedule.standard_hours[0]?.[day]).toEqual([
          { open_time: expect.stringMatching(/^\d{2}:\d{2}$/), close_time: expect.stringMatching(/^\d{2}:\d{2}$/) },
        ]);
      }
      expect(schedule.maintenance_windows.length).toBeGreaterThan(0);
      for (const w of schedule.maintenance_windows) expect(new Date(w.start_datetime).getUTCDay()).toBe(4);
      expect(await body('/exchange/user_data_timestamp')).toEqual({ as_of_time: new Date(now).toISOString() });
      expect(await body('/exchange/status')).toMatchObject({ exchange_active: true, trading_active: true });
      const tags = await body<{ tags_by_categories: Record<string, string[]> }>('/search/tags_by_categories');
      expect(tags.tags_by_categories.Crypto).toEqual(['BTC']);
    });
  });

  describe('historical tier', () => {
    test('markets settled before the cutoff, served only here, with their candlesticks and trades', async () => {
      const cutoff = await body<Record<string, string>>('/historical/cutoff');
      const settledBy = Date.parse(cutoff.market_settled_ts as string);
      const markets: Market[] = [];
      let cursor = '';
      do {
        const page = await body<{ markets: Market[]; cursor: string }>(
          `/historical/markets?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
        );
        markets.push(...page.markets);
        cursor = page.cursor;
      } while (cursor);
      expect(markets.length).toBeGreaterThan(10);
      expect(new Set(markets.map((m) => m.ticker)).size).toBe(markets.length);
      for (const m of markets) {
        expectMarketShape(m);
        expect(m.status).toBe('finalized');
        expect(['yes', 'no']).toContain(m.result);
        expect(m.settlement_value_dollars).toBe(m.result === 'yes' ? '1.0000' : '0.0000');
        expect(Date.parse(m.settlement_ts as string)).toBeLessThanOrEqual(settledBy);
        expect((await pub(`/markets/${m.ticker}`)).status).toBe(404);
      }
      const m = markets[0] as Market;
      expect((await body<{ market: Market }>(`/historical/markets/${m.ticker}`)).market).toEqual(m);
      expect((await pub(`/historical/markets/${sim.books.tickers('kalshi')[0]}`)).status).toBe(404);
      const open = sec(Date.parse(m.open_time as string));
      const close = sec(Date.parse(m.close_time as string));
      const { candlesticks } = await body<{
        candlesticks: Array<{
          end_period_ts: number;
          yes_bid: Json;
          price: Record<string, string | null>;
          volume: string;
          open_interest: string;
        }>;
      }>(`/historical/markets/${m.ticker}/candlesticks?start_ts=${open}&end_ts=${close + 3600}&period_interval=60`);
      expect(Object.keys(candlesticks[0]?.yes_bid ?? {}).sort()).toEqual(['close', 'high', 'low', 'open']);
      expect(candlesticks.reduce((v, c) => v + units(c.volume), 0)).toBe(units(m.volume_fp as string));
      for (const c of candlesticks) {
        expect(Object.keys(c.price).sort()).toEqual(['close', 'high', 'low', 'mean', 'open', 'previous']);
        if (units(c.volume) === 0) expect(c.price.open).toBeNull();
      }
      const trades = await body<{ trades: Trade[] }>(`/historical/trades?ticker=${m.ticker}&limit=1000`);
      expect(trades.trades.reduce((v, t) => v + units(t.count_fp), 0)).toBe(units(m.volume_fp as string));
      expect(trades.trades[0]?.yes_price_dollars).toBe(m.last_price_dollars);
      const any = await body<{ trades: Trade[] }>('/historical/trades?limit=50');
      const names = new Set(markets.map((x) => x.ticker));
      expect(
        any.trades.every(
          (t) => names.has(t.ticker) && Date.parse(t.created_time) < Date.parse(cutoff.trades_created_ts as string),
        ),
      ).toBe(true);
      // The live trades route serves none of them.
      expect((await body<{ trades: Trade[] }>(`/markets/trades?ticker=${m.ticker}`)).trades).toEqual([]);
    });
  });

  describe('reference data', () => {
    test('structured targets: every id the list returns answers alone; repeated ids, competition, page_size walk', async () => {
      const { structured_targets } = await body<{ structured_targets: Array<Json & { id: string; details: Json }> }>(
        '/structured_targets',
      );
      expect(structured_targets.length).toBeGreaterThan(4);
      for (const t of structured_targets) {
        expect((await body<{ structured_target: Json }>(`/structured_targets/${t.id}`)).structured_target).toEqual(t);
      }
      const [a, b] = structured_targets;
      const byIds = await body<{ structured_targets: Json[] }>(`/structured_targets?ids=${a?.id}&ids=${b?.id}`);
      expect(byIds.structured_targets).toEqual([a, b]);
      const pacific = await body<{ structured_targets: Array<{ details: Json }> }>(
        '/structured_targets?competition=Pacific',
      );
      expect(pacific.structured_targets.length).toBeGreaterThan(0);
      expect(pacific.structured_targets.every((t) => t.details.division === 'Pacific')).toBe(true);
      const walked: string[] = [];
      let cursor = '';
      do {
        const page = await body<{ structured_targets: Array<{ id: string }>; cursor: string }>(
          `/structured_targets?page_size=3${cursor ? `&cursor=${cursor}` : ''}`,
        );
        walked.push(...page.structured_targets.map((t) => t.id));
        cursor = page.cursor;
      } while (cursor);
      expect(walked).toEqual(structured_targets.map((t) => t.id));
      expect((await pub('/structured_targets/nope')).status).toBe(404);
      expect((await pub('/structured_targets?page_size=2001')).status).toBe(400);
    });

    test('milestones and live data: each id answers alone; live data by id, by type, in batch and by event agree with the play-by-play', async () => {
      expect((await pub('/milestones')).status).toBe(400);
      const { milestones } = await body<{
        milestones: Array<Json & { id: string; type: string; primary_event_tickers: string[] }>;
      }>('/milestones?limit=500');
      expect(milestones.length).toBeGreaterThan(1);
      for (const m of milestones) {
        expect((await body<{ milestone: Json }>(`/milestones/${m.id}`)).milestone).toEqual(m);
        const live = await body<{
          live_data: { type: string; details: Record<string, number | string>; milestone_id: string };
        }>(`/live_data/milestone/${m.id}`);
        expect(live.live_data).toMatchObject({ type: m.type, milestone_id: m.id });
        expect(await body(`/live_data/${m.type}/milestone/${m.id}`)).toEqual(live);
        const event = await body<{ live_data: Json }>(`/live_data/events/${m.primary_event_tickers[0]}`);
        expect(event.live_data).toEqual({ type: m.type, details: live.live_data.details });
        const stats = await body<{
          pbp: { periods: Array<{ events: Array<{ away_points: number; home_points: number }> }> };
        }>(`/live_data/milestone/${m.id}/game_stats`);
        const lastPeriod = stats.pbp.periods[stats.pbp.periods.length - 1]?.events[0];
        expect(live.live_data.details.status).toBe('final');
        expect([lastPeriod?.away_points, lastPeriod?.home_points]).toEqual([
          live.live_data.details.away_points,
          live.live_data.details.home_points,
        ]);
      }
      const [a, b] = milestones;
      const batch = await body<{ live_datas: Array<{ milestone_id: string }> }>(
        `/live_data/batch?milestone_ids=${a?.id}&milestone_ids=${b?.id}`,
      );
      expect(batch.live_datas.map((l) => l.milestone_id)).toEqual([a?.id, b?.id]);
      expect(
        (
          await body<{ milestones: Json[] }>(
            `/milestones?limit=500&related_event_ticker=${a?.primary_event_tickers[0]}`,
          )
        ).milestones,
      ).toEqual([a]);
      expect((await pub('/live_data/batch')).status).toBe(400);
      expect((await pub('/live_data/milestone/nope')).status).toBe(404);
    });

    test('multivariate collections and incentive programs point at live events and markets', async () => {
      const { multivariate_contracts } = await body<{
        multivariate_contracts: Array<Json & { collection_ticker: string; associated_event_tickers: string[] }>;
      }>('/multivariate_event_collections');
      expect(multivariate_contracts).toHaveLength(1);
      const c = multivariate_contracts[0] as (typeof multivariate_contracts)[number];
      expect(
        (await body<{ multivariate_contract: Json }>(`/multivariate_event_collections/${c.collection_ticker}`))
          .multivariate_contract,
      ).toEqual(c);
      const events = (await body<{ events: Json[] }>('/events')).events.map((e) => e.event_ticker);
      expect(c.associated_event_tickers).toEqual(events);
      expect(
        (
          await body<{ multivariate_contracts: Json[] }>(
            `/multivariate_event_collections?associated_event_ticker=${events[1]}&status=open`,
          )
        ).multivariate_contracts,
      ).toEqual([c]);
      expect(
        (await body<{ multivariate_contracts: Json[] }>('/multivariate_event_collections?status=closed'))
          .multivariate_contracts,
      ).toEqual([]);

      const { incentive_programs } = await body<{
        incentive_programs: Array<Json & { market_ticker: string; market_id: string }>;
      }>('/incentive_programs');
      expect(incentive_programs).toHaveLength(3);
      for (const p of incentive_programs) {
        expect(p).toMatchObject({
          incentive_description: expect.any(String),
          target_size_fp: expect.stringMatching(FP),
          period_reward: expect.any(Number),
          paid_out: expect.any(Boolean),
        });
        expect(p.target_size).toBeUndefined();
        expect(p.market_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect((await pub(`/markets/${p.market_ticker}`)).status).toBe(200);
      }
      const active = await body<{ incentive_programs: Array<{ start_date: string; end_date: string }> }>(
        '/incentive_programs?status=active',
      );
      expect(active.incentive_programs).toHaveLength(1);
      expect(
        active.incentive_programs.every((p) => Date.parse(p.start_date) <= now && now < Date.parse(p.end_date)),
      ).toBe(true);
      expect(
        (await body<{ incentive_programs: Json[] }>('/incentive_programs?status=paid_out&type=volume'))
          .incentive_programs,
      ).toHaveLength(1);
      expect((await pub('/incentive_programs?status=soon')).status).toBe(400);
    });

    test('weather index: a point per minute of the window, hundredths of a degree; window rules', async () => {
      const r = await body<{
        city: string;
        units: string;
        timeseries: Array<{ t: number; v: number; status: string }>;
      }>('/live_data/weather/nyc?last_sec=600');
      expect(r.units).toBe('fahrenheit');
      expect(r.timeseries.map((p) => p.t)).toEqual(
        Array.from({ length: 11 }, (_, i) => Math.ceil((now - 600_000) / MINUTE) * MINUTE + i * MINUTE).filter(
          (t) => t <= now,
        ),
      );
      expect(
        r.timeseries.every(
          (p) => Number.isInteger(Math.round(p.v * 100)) && Math.abs(p.v * 100 - Math.round(p.v * 100)) < 1e-6,
        ),
      ).toBe(true);
      const detailed = await body<typeof r>(`/live_data/weather/nyc?from=${now - 120_000}&to=${now}&detailed=true`);
      expect(detailed.timeseries.map((p) => p.v)).toEqual(
        r.timeseries.slice(-detailed.timeseries.length).map((p) => p.v),
      );
      expect((await pub(`/live_data/weather/nyc?from=${now - 60_000}`)).status).toBe(400);
      expect((await pub(`/live_data/weather/nyc?last_sec=60&to=${now}`)).status).toBe(400);
      expect((await pub('/live_data/weather/atlantis')).status).toBe(404);
      expect(await body('/live_data/weather/nyc/calibrations')).toMatchObject({
        city: 'nyc',
        calibrations: [expect.objectContaining({ stations: expect.any(Array) })],
      });
      // The docs' example city answers too, with its own station and a warmer climate than New York's.
      const miami = await body<{
        city: string;
        timeseries: Array<{ v: number; stations?: Array<{ station_id: string }> }>;
      }>('/live_data/weather/miami?last_sec=600&detailed=true');
      expect(miami.city).toBe('miami');
      expect(miami.timeseries.length).toBe(r.timeseries.length);
      expect(miami.timeseries[0]?.stations?.[0]?.station_id).toBe('KMIA');
      const mean = (x: { timeseries: Array<{ v: number }> }) =>
        x.timeseries.reduce((v, p) => v + p.v, 0) / x.timeseries.length;
      expect(mean(miami)).toBeGreaterThan(mean(r));
      const cal = await body<{ calibrations: Array<{ city_reference_c: number }> }>(
        '/live_data/weather/miami/calibrations',
      );
      expect(cal.calibrations[0]?.city_reference_c).toBe(25);
    });
  });

  describe('private reads', () => {
    const PRIVATE = [
      '/portfolio/balance',
      '/portfolio/positions',
      '/portfolio/orders',
      '/portfolio/fills',
      '/portfolio/settlements',
      '/portfolio/deposits',
      '/portfolio/withdrawals',
      '/portfolio/order_groups',
      '/portfolio/subaccounts/balances',
      '/portfolio/summary/total_resting_order_value',
      '/historical/fills',
      '/historical/orders',
      '/historical/positions',
      '/account/limits',
      '/account/api_usage_level/volume_progress',
      '/api_keys',
      '/communications/id',
      '/communications/rfqs',
      '/communications/quotes',
      '/communications/block-trade-proposals',
      '/fcm/subtraders',
    ];

    test("unsigned: 401 in Kalshi's format; signed: 200", async () => {
      for (const path of PRIVATE) {
        const res = await pub(path);
        expect([path, res.status]).toEqual([path, 401]);
        expect(res.json).toMatchObject({ error: { code: 'authentication_error', message: expect.any(String) } });
        expect([path, (await priv(path)).status]).toEqual([path, 200]);
      }
      expect(await body('/account/endpoint_costs')).toEqual({ default_cost: 10, endpoint_costs: [] });
    });

    test('the account adds up: balance = deposit − fills, fees and resting orders + payouts; positions from fills; value at the books', async () => {
      const fills = [
        ...(await body<{ fills: Array<Json & { count_fp: string }> }>('/portfolio/fills', true)).fills,
        ...(await body<{ fills: Array<Json & { count_fp: string }> }>('/historical/fills', true)).fills,
      ];
      expect(fills.length).toBe(4);
      const cost = (f: Json) =>
        (units(f.count_fp as string) *
          units((f.outcome_side === 'yes' ? f.yes_price_dollars : f.no_price_dollars) as string)) /
        100;
      const spent = fills.reduce((v, f) => v + cost(f) + units(f.fee_cost as string), 0);
      const { deposits } = await body<{ deposits: Array<{ amount_cents: number; status: string }> }>(
        '/portfolio/deposits',
        true,
      );
      const { settlements } = await body<{ settlements: Array<{ revenue: number; ticker: string }> }>(
        '/portfolio/settlements',
        true,
      );
      expect(settlements).toHaveLength(1);
      // What the resting order holds: its remaining contracts at its price, not available for trading.
      const { orders: resting } = await body<{
        orders: Array<{ remaining_count_fp: string; yes_price_dollars: string }>;
      }>('/portfolio/orders?status=resting', true);
      expect(resting).toHaveLength(1);
      const held = resting.reduce((v, o) => v + (units(o.remaining_count_fp) * units(o.yes_price_dollars)) / 100, 0);
      const summary = await body<{
        total_resting_order_value: number;
        resting_order_value_breakdown: Array<{ balance: string }>;
      }>('/portfolio/summary/total_resting_order_value', true);
      expect(units(summary.resting_order_value_breakdown[0]?.balance as string)).toBe(held);
      expect(summary.total_resting_order_value).toBe(held / 100);
      const cash =
        deposits.reduce((v, d) => v + d.amount_cents * 100, 0) -
        spent -
        held +
        settlements.reduce((v, s) => v + s.revenue * 100, 0);
      const balance = await body<{
        balance: number;
        balance_dollars: string;
        portfolio_value: number;
        balance_breakdown: Array<{ exchange_index: number; balance: string }>;
      }>('/portfolio/balance', true);
      expect(units(balance.balance_dollars)).toBe(cash);
      expect(balance.balance).toBe(Math.floor(cash / 100));
      expect(balance.balance_breakdown.reduce((v, b) => v + units(b.balance), 0)).toBe(cash);
      const moved = (
        await body<{ transfers: Array<{ transfer_id: string; amount: string }> }>(
          '/portfolio/intra_exchange_instance_transfers',
          true,
        )
      ).transfers[0];
      expect(
        units((await body<{ balance_dollars: string }>('/portfolio/balance?exchange_index=1', true)).balance_dollars),
      ).toBe(units(moved?.amount as string));
      expect(
        (await body<{ transfer: Json }>(`/portfolio/intra_exchange_instance_transfers/${moved?.transfer_id}`, true))
          .transfer,
      ).toEqual(moved);

      const { market_positions } = await body<{ market_positions: Array<{ ticker: string; position_fp: string }> }>(
        '/portfolio/positions',
        true,
      );
      let value = 0;
      for (const p of market_positions) {
        const own = fills.filter((f) => f.ticker === p.ticker);
        expect(units(p.position_fp)).toBe(
          own.reduce((v, f) => v + (f.outcome_side === 'yes' ? 1 : -1) * units(f.count_fp as string), 0),
        );
        const book = sim.books.book('kalshi', p.ticker) as KalshiBookView;
        const price =
          units(p.position_fp) > 0 ? units(book.bids[0]?.[0] as string) : 10000 - units(book.asks[0]?.[0] as string);
        value += (Math.abs(units(p.position_fp)) * price) / 100;
      }
      expect(balance.portfolio_value).toBe(Math.floor(value / 100));
      const settled = await body<{ market_positions: Array<{ ticker: string; position_fp: string }> }>(
        '/historical/positions',
        true,
      );
      expect(settled.market_positions).toEqual([
        expect.objectContaining({ ticker: settlements[0]?.ticker, position_fp: '0.00' }),
      ]);
    });

    test('orders, fills, order groups, RFQs and quotes, FCM and keys refer to each other', async () => {
      const { orders } = await body<{
        orders: Array<
          Json & {
            order_id: string;
            status: string;
            ticker: string;
            yes_price_dollars: string;
            remaining_count_fp: string;
          }
        >;
      }>('/portfolio/orders', true);
      const { fills } = await body<{ fills: Array<{ order_id: string }> }>('/portfolio/fills', true);
      expect(fills.every((f) => orders.some((o) => o.order_id === f.order_id && o.status === 'executed'))).toBe(true);
      expect(orders.filter((o) => o.status === 'canceled')).toHaveLength(1);
      for (const o of orders)
        expect((await body<{ order: Json }>(`/portfolio/orders/${o.order_id}`, true)).order).toEqual(o);
      expect((await body<{ orders: Json[] }>('/portfolio/orders?status=canceled', true)).orders).toHaveLength(1);
      const done = orders.find((o) => o.status !== 'resting');
      expect((await priv(`/portfolio/orders/${done?.order_id}/queue_position`)).status).toBe(400);
      expect((await priv('/portfolio/orders/nope')).status).toBe(404);
      expect((await priv('/portfolio/orders/nope/queue_position')).status).toBe(404);

      // The resting order is part of its market's public book: its level shows at least its contracts, and its
      // queue position (contracts ahead of it) is the rest of the level at most.
      const resting = orders.filter((o) => o.status === 'resting');
      expect(resting).toHaveLength(1);
      const [r] = resting as [(typeof resting)[number]];
      const level = (sim.books.book('kalshi', r.ticker) as KalshiBookView).yes.find(
        ([p]) => units(p) === units(r.yes_price_dollars),
      );
      const size = units(level?.[1] ?? '0');
      expect(size).toBeGreaterThanOrEqual(units(r.remaining_count_fp));
      const { queue_position_fp } = await body<{ queue_position_fp: string }>(
        `/portfolio/orders/${r.order_id}/queue_position`,
        true,
      );
      expect(queue_position_fp).toMatch(FP);
      expect(units(queue_position_fp)).toBeLessThanOrEqual(size - units(r.remaining_count_fp));
      const positions = { queue_positions: [{ order_id: r.order_id, market_ticker: r.ticker, queue_position_fp }] };
      expect(await body('/portfolio/orders/queue_positions', true)).toEqual(positions);
      expect(await body(`/portfolio/orders/queue_positions?market_tickers=${r.ticker},OTHER`, true)).toEqual(positions);
      expect(await body('/portfolio/orders/queue_positions?market_tickers=OTHER', true)).toEqual({
        queue_positions: [],
      });
      expect(await body('/portfolio/orders/queue_positions?subaccount=1', true)).toEqual({ queue_positions: [] });
      const { order_groups } = await body<{ order_groups: Array<{ id: string }> }>('/portfolio/order_groups', true);
      const group = await body<{ orders: string[] }>(`/portfolio/order_groups/${order_groups[0]?.id}`, true);
      expect(group.orders.sort()).toEqual(
        orders
          .filter((o) => o.order_group_id === order_groups[0]?.id)
          .map((o) => o.order_id)
          .sort(),
      );
      const { rfqs } = await body<{ rfqs: Array<{ id: string; creator_id: string }> }>('/communications/rfqs', true);
      const { communications_id } = await body<{ communications_id: string }>('/communications/id', true);
      expect(rfqs[0]?.creator_id).toBe(communications_id);
      expect((await body<{ rfq: Json }>(`/communications/rfqs/${rfqs[0]?.id}`, true)).rfq).toEqual(rfqs[0]);
      const { quotes } = await body<{ quotes: Array<{ id: string; rfq_id: string }> }>(
        `/communications/quotes?rfq_id=${rfqs[0]?.id}`,
        true,
      );
      expect(quotes).toHaveLength(1);
      expect((await body<{ quote: Json }>(`/communications/quotes/${quotes[0]?.id}`, true)).quote).toEqual(quotes[0]);
      expect(
        (await body<{ quote: Json }>(`/communications/rfqs/${rfqs[0]?.id}/quotes/${quotes[0]?.id}`, true)).quote,
      ).toEqual(quotes[0]);
      const { subtraders } = await body<{ subtraders: Array<{ subtrader_id: string }> }>('/fcm/subtraders', true);
      const id = subtraders[0]?.subtrader_id as string;
      expect(await body(`/fcm/subtraders/event_contract_daily_cap?subtrader_id=${id}`, true)).toMatchObject({
        subtrader_id: id,
        limit: expect.stringMatching(/^\d+\.\d{4}$/),
        cap_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      });
      expect((await priv('/fcm/subtraders/event_contract_daily_cap?subtrader_id=other')).status).toBe(404);
      expect((await priv('/fcm/orders')).status).toBe(400);
      expect(await body(`/fcm/positions?subtrader_id=${id}`, true)).toEqual({
        market_positions: [],
        event_positions: [],
        cursor: '',
      });
      expect(
        (await body<{ api_keys: Array<{ api_key_id: string }> }>('/api_keys', true)).api_keys.map((a) => a.api_key_id),
      ).toEqual([sim.credentials.kalshi.accessKey]);
    });
  });
});
