import { existsSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import { ENV_NAMES, HOST_IDS, startSimulator, type Simulator } from './index';
import { get } from './testing/clients';

/** A base port with the 11 ports after it free (several tries; tests run in parallel). */
async function freeBase(): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 30_000 + Math.floor(Math.random() * 20_000);
    let ok = true;
    for (let i = 0; i <= 10 && ok; i++) ok = await free(base + i);
    if (ok) return base;
  }
  throw new Error('no free port range');
}

describe('the simulator as a whole', () => {
  test('ports: control at the base, the platforms at fixed offsets, all on 127.0.0.1', async () => {
    const base = await freeBase();
    const sim = await startSimulator({ ports: { base }, updatesPerSecond: 0 });
    try {
      const port = (u: string) => Number(new URL(u).port);
      expect(['control', ...HOST_IDS].map((h) => port(sim.urls[h] ?? ''))).toEqual(
        ['control', ...HOST_IDS].map((_, i) => base + i),
      );
      for (const u of Object.values(sim.urls)) expect(new URL(u ?? '').hostname).toBe('127.0.0.1');
      expect(sim.urls['venue-b']).toBe(`http://127.0.0.1:${base + 6}/trade-api/v2`);
      expect(sim.urls['venue-e']).toBe(`http://127.0.0.1:${base + 9}/api`);
      expect(sim.urls['venue-e/portal']).toBe(`https://127.0.0.1:${base + 10}/v1/api`);
      expect(sim.feeds).toEqual({
        'venue-a-clob': `ws://127.0.0.1:${base + 2}/ws/market`,
        'venue-a-us': `ws://127.0.0.1:${base + 5}/v1/ws/markets`,
        'venue-b': `ws://127.0.0.1:${base + 6}/trade-api/ws/v2`,
        'venue-c': `ws://127.0.0.1:${base + 7}/v2/marketdata`,
        'venue-d': `ws://127.0.0.1:${base + 8}/`,
      });
      await expect(startSimulator({ ports: { base }, updatesPerSecond: 0 })).rejects.toThrow(/port/);
    } finally {
      await sim.stop();
    }
  });

  describe('with free ports', () => {
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({ seed: 42, updatesPerSecond: 100 });
    });
    afterAll(() => sim.stop());

    test('env(): exactly the contract variables; secrets in 0600 files', () => {
      const env = sim.env();
      expect(Object.keys(env)).toEqual([...ENV_NAMES]);
      expect(env.UPSTREAM_VENUE_B_URL).toBe(sim.urls['venue-b']);
      expect(env.UPSTREAM_VENUE_A_US_URL).toBe(sim.urls['venue-a-us']);
      expect(env.UPSTREAM_VENUE_A_US_AUTH_URL).toBe(sim.urls['venue-a-us/auth']);
      expect(env.UPSTREAM_VENUE_E_PORTAL_URL).toBe(sim.urls['venue-e/portal']);
      expect(env.FEED_VENUE_B_URL).toBe(sim.feeds['venue-b']);
      expect(env.KALSHI_ACCESS_KEY).toBe(sim.credentials.kalshi.accessKey);
      for (const [name, value] of Object.entries(env).filter(([n]) => n.endsWith('_FILE'))) {
        expect(statSync(value).mode & 0o777).toBe(0o600);
        expect(readFileSync(value, 'utf8').length).toBeGreaterThan(0);
        if (name === 'KALSHI_PRIVATE_KEY_FILE')
          expect(readFileSync(value, 'utf8')).toBe(sim.credentials.kalshi.privateKeyPem);
      }
      expect(readFileSync(env.POLYMARKET_US_SECRET_KEY_FILE as string, 'utf8')).toBe(
        sim.credentials.polymarketUs.secretKeyBase64,
      );
    });

    test('control: health, ready, tickers (the history keys), credentials, env, books', async () => {
      expect((await get(`${sim.urls.control}/health`)).json).toEqual({ status: 'ok' });
      expect((await get(`${sim.urls.control}/ready`)).status).toBe(200);
      const tickers = (await get(`${sim.urls.control}/control/tickers`)).json as Record<string, string[]>;
      expect(Object.keys(tickers).sort()).toEqual(['venue_a_clob', 'venue_a_us', 'venue_b', 'venue_c', 'venue_d']);
      expect(tickers.venue_b?.every((t) => /^KX[A-Z0-9]+-[A-Z0-9.-]+$/.test(t))).toBe(true);
      expect(tickers.venue_a_us?.every((t) => /^[a-z0-9]+(-[a-z0-9]+)+$/.test(t))).toBe(true);
      expect(tickers.venue_c).toEqual(expect.arrayContaining(['BTCUSD', expect.stringMatching(/^GEMI-/)]));
      // The CLOB's books are its outcome tokens (decimal ids up to 78 digits); Coinbase's its products.
      expect(tickers.venue_a_clob?.length).toBeGreaterThan(0);
      expect(tickers.venue_a_clob?.every((t) => /^[1-9][0-9]{0,77}$/.test(t))).toBe(true);
      expect(tickers.venue_d).toEqual(expect.arrayContaining(['BTC-USD', 'ETH-USD']));
      expect(tickers.venue_d?.every((t) => /^[A-Z0-9]+-[A-Z0-9]+$/.test(t))).toBe(true);
      expect(tickers).toEqual(sim.recordedTickers());
      expect((await get(`${sim.urls.control}/control/credentials`)).json).toEqual(sim.credentials);
      expect(Object.keys((await get(`${sim.urls.control}/control/env`)).json as object)).toEqual([...ENV_NAMES]);
      const ticker = tickers.venue_b?.[0] as string;
      const book = (await get(`${sim.urls.control}/control/books/venue_b/${ticker}`)).json as {
        bids: string[][];
        no: string[][];
        seq: number;
      };
      expect(book.bids[0]?.[0]).toMatch(/^0\.\d{4}$/);
      expect(book.no.length).toBeGreaterThan(0);
      sim.books.pause();
      while (sim.books.last('kalshi', ticker).ts === null) sim.books.step(1);
      const last = sim.books.last('kalshi', ticker);
      const at = (await get(`${sim.urls.control}/control/books/kalshi/${ticker}?at=${last.ts}`)).json as {
        bids: string[][];
      };
      expect(at.bids).toEqual(sim.books.book('kalshi', ticker).bids);
      const events = (await get(`${sim.urls.control}/control/books/kalshi/${ticker}/events`)).json as { count: number };
      expect(events.count).toBe(sim.books.events('kalshi', ticker).length);
      expect((await get(`${sim.urls.control}/control/books/kalshi/NOPE`)).status).toBe(404);
      expect((await get(`${sim.urls.control}/control/books/kalshi/${ticker}?at=0`)).status).toBe(404);
      expect((await get(`${sim.urls.control}/control/books/nasdaq`)).status).toBe(404);
      const step = await get(
        `${sim.urls.control}/control/books/step`,
        { 'content-type': 'application/json' },
        { method: 'POST', body: '{"n":25}' },
      );
      expect(step.json).toEqual({ stepped: 25 });
      sim.books.resume();
    });

    test('books move by themselves at the configured rate, and pause stops them', async () => {
      sim.books.resume();
      const count = () =>
        sim.books
          .platforms()
          .reduce((n, p) => n + sim.books.tickers(p).reduce((m, t) => m + sim.books.last(p, t).seq, 0), 0);
      const before = count();
      await new Promise((r) => setTimeout(r, 300));
      expect(count()).toBeGreaterThan(before);
      sim.books.pause();
      const paused = count();
      await new Promise((r) => setTimeout(r, 200));
      expect(count()).toBe(paused);
      sim.books.resume();
    });
  });

  test('stop() closes every server and removes its temp files', async () => {
    const sim = await startSimulator({ updatesPerSecond: 10 });
    const env = sim.env();
    await sim.stop();
    expect(existsSync(env.KALSHI_PRIVATE_KEY_FILE as string)).toBe(false);
    const err = (await get(`${sim.urls.control}/health`).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/fetch failed/);
    await sim.stop(); // idempotent
  });
});
