import { startSimulator, type Simulator } from '../../index';
import { get } from '../../testing/clients';

/** Gemini as ccxt's `gemini` reads it without keys: symbols (spot and contracts), details, price feed, tickers. */

const T0 = Date.now();

describe('Gemini market data', () => {
  let sim: Simulator;
  let g: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, updatesPerSecond: 0, startPaused: true, rateLimits: false, clock: () => T0 });
    g = sim.urls['venue-c'];
  });
  afterAll(() => sim.stop());

  test('/v1/symbols lists spot pairs and contracts: exactly the instruments with books (what a recorder records)', async () => {
    const symbols = (await get(`${g}/v1/symbols`)).json as string[];
    expect(symbols).toEqual(expect.arrayContaining(['btcusd', 'ethusd']));
    expect(symbols.some((s) => s.startsWith('gemi-'))).toBe(true);
    expect(symbols.every((s) => s === s.toLowerCase())).toBe(true);
    expect(symbols.map((s) => s.toUpperCase()).sort()).toEqual([...sim.recordedTickers().venue_c].sort());
    for (const s of symbols) expect([s, (await get(`${g}/v1/book/${s}`)).status]).toEqual([s, 200]);
  });

  test('symbol details: spot pairs are plain spot (no contract fields), contracts say so; precisions match the book', async () => {
    const btc = (await get(`${g}/v1/symbols/details/btcusd`)).json as Record<string, unknown>;
    expect(btc).toMatchObject({ symbol: 'BTCUSD', base_currency: 'BTC', quote_currency: 'USD', status: 'open' });
    expect(btc).not.toHaveProperty('contract_price_currency');
    const book = (await get(`${g}/v1/book/btcusd?limit_bids=1&limit_asks=1`)).json as {
      bids: Array<{ price: string; amount: string }>;
    };
    const [whole, fraction = ''] = (book.bids[0]?.amount as string).split('.');
    expect(whole).toMatch(/^\d+$/);
    expect(String(btc.tick_size)).toBe(`1e-${fraction.length}`);
    expect(String(btc.quote_increment)).toBe(`0.${'0'.repeat((book.bids[0]?.price.split('.')[1]?.length ?? 1) - 1)}1`);
    const contract = ((await get(`${g}/v1/symbols`)).json as string[]).find((s) => s.startsWith('gemi-')) as string;
    expect((await get(`${g}/v1/symbols/details/${contract}`)).json).toMatchObject({
      symbol: contract.toUpperCase(),
      contract_type: 'binary',
    });
  });

  test('/v1/pricefeed: one entry per symbol, the ticker’s last price and the 24 h change of the v2 ticker', async () => {
    const feed = (await get(`${g}/v1/pricefeed`)).json as Array<{
      pair: string;
      price: string;
      percentChange24h: string;
    }>;
    const symbols = (await get(`${g}/v1/symbols`)).json as string[];
    expect(feed.map((f) => f.pair.toLowerCase()).sort()).toEqual([...symbols].sort());
    for (const f of feed) {
      const v1 = (await get(`${g}/v1/pubticker/${f.pair}`)).json as { last: string };
      const v2 = (await get(`${g}/v2/ticker/${f.pair}`)).json as { open: string; close: string };
      expect(f.price).toBe(v1.last);
      expect(f.price).toBe(v2.close);
      expect(f.percentChange24h).toMatch(/^-?\d+\.\d{4}$/);
      const change = (Number(v2.close) - Number(v2.open)) / Number(v2.open);
      expect(Math.abs(Number(f.percentChange24h) - change)).toBeLessThanOrEqual(0.00005);
    }
  });

  test('ticker, book, trades and candles in the shapes ccxt parses', async () => {
    const v1 = (await get(`${g}/v1/pubticker/ethusd`)).json as {
      bid: string;
      ask: string;
      last: string;
      volume: { ETH: string; USD: string; timestamp: number };
    };
    expect(v1.volume).toEqual({ ETH: expect.any(String), USD: expect.any(String), timestamp: T0 });
    // The quote volume is the base volume at the last price (ccxt derives the VWAP from the two).
    expect(Math.abs(Number(v1.volume.USD) - Number(v1.volume.ETH) * Number(v1.last))).toBeLessThan(0.01);
    const book = (await get(`${g}/v1/book/ethusd`)).json as {
      bids: Array<{ price: string }>;
      asks: Array<{ price: string }>;
    };
    expect(book.bids[0]?.price).toBe(v1.bid);
    expect(book.asks[0]?.price).toBe(v1.ask);
    // The books' own trades: step until ETHUSD traded a few times.
    for (let i = 0; i < 5000 && sim.trades('gemini', 'ETHUSD').length < 5; i++) sim.books.step(1);
    const trades = (await get(`${g}/v1/trades/ethusd?limit_trades=4`)).json as Array<Record<string, unknown>>;
    expect(trades).toHaveLength(4);
    const last = sim.trades('gemini', 'ETHUSD').at(-1);
    expect(trades[0]).toEqual({
      timestamp: Math.floor(T0 / 1000),
      timestampms: T0,
      tid: Number(last?.id),
      price: last?.price,
      amount: last?.size,
      exchange: 'gemini',
      type: last?.side,
    });
    const candles = (await get(`${g}/v2/candles/ethusd/1hr`)).json as number[][];
    expect(candles.every((c) => c.length === 6)).toBe(true);
    expect(candles.map((c) => c[0])).toEqual(
      [...candles.map((c) => c[0])].sort((a, b) => (b as number) - (a as number)),
    );
  });
});
