/**
 * The reconciliation schedule's pacing: the spacing rule between two REST book reads of an exchange, and the REST
 * client's background lane that keeps those reads from holding back discovery and backfill; and the retry of tickers
 * whose resume points cannot be read yet.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@depthgate/service-kit';
import { RestClient } from './rest';
import { Venue, reconcileSpacingMs, type VenueOptions } from './venue';

describe('reconciliation spacing', () => {
  // Kalshi: 19 requests/s documented (descriptor budget), a tenth of it: 1.9 reads/s. Gemini: 1.9/s → 0.19 reads/s.
  const kalshi = 0.1 * 19;
  const gemini = 0.1 * 1.9;

  it('spreads the interval over the live tickers while the budget allows it', () => {
    expect(reconcileSpacingMs(60_000, 10, kalshi)).toBe(6000);
    expect(reconcileSpacingMs(60_000, 6, gemini)).toBe(10_000);
    // No live ticker yet counts as one.
    expect(reconcileSpacingMs(60_000, 0, kalshi)).toBe(60_000);
  });

  it('never reads closer than the budget allows: many tickers are each compared less often', () => {
    expect(reconcileSpacingMs(60_000, 1000, kalshi)).toBeCloseTo(1000 / 1.9, 9);
    expect(reconcileSpacingMs(60_000, 100, gemini)).toBeCloseTo(1000 / 0.19, 9);
    // A short interval (the tests' 600 ms) is bounded by the budget too.
    expect(reconcileSpacingMs(600, 6, gemini)).toBeCloseTo(1000 / 0.19, 9);
    for (const tickers of [1, 7, 50, 114, 115, 1000, 100_000]) {
      const spacing = reconcileSpacingMs(60_000, tickers, kalshi);
      // Reads per second stay within the budget, and every ticker is still compared at least once an interval
      // whenever the budget can afford it.
      expect(1000 / spacing).toBeLessThanOrEqual(kalshi + 1e-9);
      expect(tickers * spacing).toBeGreaterThanOrEqual(60_000 - 1e-6);
      if (tickers <= 60_000 / (1000 / kalshi)) expect(tickers * spacing).toBeCloseTo(60_000, 6);
    }
  });
});

describe('RestClient lanes', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
  });

  async function serve(): Promise<{ url: string; order: string[] }> {
    const order: string[] = [];
    server = createServer((req, res) => {
      order.push((req.url ?? '').slice(1));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, order };
  }

  it('lets a background read take a slot only when no foreground request waits for one', async () => {
    const { url, order } = await serve();
    // Slots 250 ms apart: the order below holds as long as no pause of the process between two calls is that long
    // (at 50 a second, a loaded CI machine's 20 ms pause let a foreground request find its slot free and not wait).
    const rest = new RestClient({ baseUrl: url, ratePerSecond: 4, timeoutMs: 5000 });
    const background = rest.background();
    expect(background.isBackground).toBe(true);
    const calls = [rest.json('/f1'), rest.json('/f2'), rest.json('/f3'), background.json('/b1')];
    // Backfill pages asked for after the reconciliation read still go before it.
    await new Promise((r) => setImmediate(r));
    calls.push(rest.json('/f4'), rest.json('/f5'));
    await Promise.all(calls);
    expect(order).toEqual(['f1', 'f2', 'f3', 'f4', 'f5', 'b1']);
  });

  it('takes a free slot at once, and holds a foreground request back by that one slot at most', async () => {
    const { url, order } = await serve();
    const rest = new RestClient({ baseUrl: url, ratePerSecond: 4, timeoutMs: 5000 });
    await rest.background().json('/b1');
    await Promise.all([rest.json('/f1'), rest.json('/f2'), rest.background().json('/b2'), rest.json('/f3')]);
    expect(order).toEqual(['b1', 'f1', 'f2', 'f3', 'b2']);
  });
});

describe('Venue: tickers whose resume points cannot be read yet', () => {
  afterEach(() => jest.useRealTimers());

  it('are asked again by one retry at a time, 2 s doubling, however many discoveries add tickers meanwhile', async () => {
    jest.useFakeTimers();
    const asked: string[][] = [];
    const selection = { tickers: ['A'], prefixes: [] as string[], series: [] as string[] };
    const quiet = createLogger({ name: 't', level: 'silent' });
    const venue = new Venue({
      protocol: { exchange: 'venue_b', normalizeTicker: (t: string) => t },
      rest: { background: () => ({}) },
      store: {
        storedTickers: (_exchange: string, tickers: string[]) => {
          asked.push([...tickers]);
          return Promise.reject(new Error('ClickHouse is away'));
        },
      },
      logger: quiet,
      now: () => Date.now(),
      selection,
      maxTickers: 100,
      discoveryIntervalMs: 0,
      reconcileIntervalMs: 0,
      reconcileReadsPerSecond: 0,
      trades: undefined,
    } as unknown as VenueOptions);
    await venue.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(asked).toEqual([['A']]);
    // A discovery adds B meanwhile: asked at once, and no second retry chain.
    selection.tickers.push('B');
    await venue.discover();
    await jest.advanceTimersByTimeAsync(0);
    expect(asked).toEqual([['A'], ['A', 'B']]);
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(2000); // the first retry (2 s after the first failure)
    expect(asked).toHaveLength(3);
    expect(jest.getTimerCount()).toBe(1);
    // Three failures in a row: the next retry waits 8 s.
    await jest.advanceTimersByTimeAsync(7999);
    expect(asked).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(1);
    expect(asked).toHaveLength(4);
    await venue.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});
