import { signers, startSimulator, type Simulator } from '../../index';
import { get } from '../../testing/clients';

/** Coinbase Exchange as ccxt's `coinbaseexchange` reads it without keys: spark lines, candles windows, products. */

const T0 = Date.now();

describe('Coinbase Exchange market data', () => {
  let sim: Simulator;
  let c: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, updatesPerSecond: 0, startPaused: true, rateLimits: false, clock: () => T0 });
    c = sim.urls['venue-d'];
  });
  afterAll(() => sim.stop());

  test('/products/spark-lines: per product the last 24 hourly candles, newest first, ending at the ticker price', async () => {
    const products = (await get(`${c}/products`)).json as Array<{ id: string }>;
    const spark = (await get(`${c}/products/spark-lines`)).json as Record<string, number[][]>;
    expect(Object.keys(spark).sort()).toEqual(products.map((p) => p.id).sort());
    for (const p of products) {
      const rows = spark[p.id] as number[][];
      expect(rows).toHaveLength(24);
      expect(rows.every((r) => r.length === 5)).toBe(true);
      const times = rows.map((r) => r[0] as number);
      expect(times.slice(1).every((t, i) => (times[i] as number) - t === 3600)).toBe(true);
      const ticker = (await get(`${c}/products/${p.id}/ticker`)).json as { price: string };
      expect(rows[0]?.[4]).toBe(Number(ticker.price));
      // The spark lines are the hourly candles without their volume.
      const hourly = (await get(`${c}/products/${p.id}/candles?granularity=3600`)).json as number[][];
      expect(hourly.slice(0, 24).map((r) => r.slice(0, 5))).toEqual(rows);
    }
  });

  test('candles: a start/end window is a slice of the latest candles; over 300 is refused', async () => {
    const all = (await get(`${c}/products/BTC-USD/candles?granularity=60`)).json as number[][];
    expect(all).toHaveLength(300);
    const newest = all[0]?.[0] as number;
    const start = new Date((newest - 9 * 60) * 1000).toISOString();
    const end = new Date((newest - 5 * 60) * 1000).toISOString();
    const window = (await get(`${c}/products/BTC-USD/candles?granularity=60&start=${start}&end=${end}`))
      .json as number[][];
    expect(window).toEqual(all.slice(5, 10));
    const far = new Date((newest - 400 * 60) * 1000).toISOString();
    const tooMany = await get(`${c}/products/BTC-USD/candles?granularity=60&start=${far}&end=${end}`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.json).toEqual({ message: expect.stringMatching(/exceeds 300/) });
  });

  test('products, ticker, stats, book and time: success bodies never carry `message` (ccxt reads it as an error)', async () => {
    const products = (await get(`${c}/products`)).json as Array<Record<string, unknown>>;
    for (const p of products) {
      expect((await get(`${c}/products/${p.id}`)).json).toEqual(p);
      expect(String(p.id)).toMatch(/^[A-Z]+-[A-Z]+$/);
    }
    const bodies = await Promise.all(
      [
        '/products/ETH-USD/ticker',
        '/products/ETH-USD/stats',
        '/products/ETH-USD/book?level=2',
        '/time',
        '/products/spark-lines',
      ].map(async (path) => (await get(`${c}${path}`)).json as Record<string, unknown>),
    );
    for (const body of bodies) expect(body).not.toHaveProperty('message');
    const l1 = (await get(`${c}/products/ETH-USD/book?level=1`)).json as { bids: unknown[][]; asks: unknown[][] };
    const l2 = bodies[2] as { bids: unknown[][]; asks: unknown[][] };
    expect([l1.bids, l1.asks]).toEqual([l2.bids.slice(0, 1), l2.asks.slice(0, 1)]);
    const ticker = bodies[0] as { bid: string; ask: string };
    expect([ticker.bid, ticker.ask]).toEqual([l2.bids[0]?.[0], l2.asks[0]?.[0]]);
  });

  test("one order by id or client id: Coinbase's 404 once the signature is verified (the account has no orders)", async () => {
    for (const id of ['7d0f7d8e-dd34-4d9c-a846-06f431c381ba', 'client:0f1e2d3c-aaaa-4bbb-8ccc-123456789abc']) {
      const path = `/orders/${id}`;
      const res = await get(
        `${c}${path}`,
        signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', path, '', Math.floor(T0 / 1000)),
      );
      expect([res.status, res.json]).toEqual([404, { message: 'NotFound' }]);
      expect(sim.requests({ platform: 'venue-d', pathPrefix: '/orders/' }).at(-1)?.auth).toBe('valid');
      expect((await get(`${c}${path}`)).status).toBe(401);
    }
  });
});
