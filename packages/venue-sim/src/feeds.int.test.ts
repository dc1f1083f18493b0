import { formatScaled, parseScaled } from './core/decimal';
import { signers, startSimulator, type Simulator } from './index';
import { FeedClient, get } from './testing/clients';
import { GeminiRebuild, KalshiRebuild, PmUsRebuild, restBooks } from './testing/rebuild';

const GEMINI_PRECISION: Record<string, [number, number]> = { BTCUSD: [2, 8], ETHUSD: [2, 6], SOLUSD: [3, 6] };
const geminiPrecision = (s: string): [number, number] => GEMINI_PRECISION[s] ?? [2, 0];

async function kalshiClient(sim: Simulator, tickers: string[]): Promise<FeedClient> {
  const c = await FeedClient.open(sim.feeds['venue-b'], {
    headers: signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/ws/v2'),
  });
  c.send({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: tickers } });
  await c.until((ms) => ms.filter((m) => m.type === 'orderbook_snapshot').length === tickers.length);
  return c;
}

async function pmUsClient(sim: Simulator, slugs: string[]): Promise<FeedClient> {
  const c = await FeedClient.open(sim.feeds['venue-a-us'], {
    headers: signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/ws/markets'),
  });
  c.send({ subscribe: { requestId: 'md-1', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: slugs } });
  await c.until((ms) => ms.filter((m) => m.marketData).length >= slugs.length);
  return c;
}

async function geminiClient(sim: Simulator, symbols: string[]): Promise<FeedClient> {
  const c = await FeedClient.open(sim.feeds['venue-c']);
  c.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols }] });
  await c.until((ms) => ms.filter((m) => m.type === 'l2_updates').length >= symbols.length);
  return c;
}

describe('order-book feeds', () => {
  let sim: Simulator;
  const clients: FeedClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sim?.stop();
  });

  test("each feed rebuilds exactly the platform's REST book and the simulator's truth, and bookAt agrees with the feed's timestamps", async () => {
    sim = await startSimulator({
      seed: 3,
      updatesPerSecond: 3000,
      changesPerUpdate: { gemini: 3, 'venue-a-us': 2 },
      rateLimits: false,
    });
    const t = sim.recordedTickers();
    const k = await kalshiClient(sim, t.venue_b);
    const p = await pmUsClient(sim, t.venue_a_us);
    const g = await geminiClient(sim, t.venue_c);
    clients.push(k, p, g);
    await k.until((ms) => ms.length > 500);
    await g.until((ms) => ms.length > 200);
    sim.books.pause();
    await Promise.all([k.sync(), p.sync(), g.sync()]);

    const kr = new KalshiRebuild();
    for (const m of k.messages) kr.apply(m);
    expect(kr.gaps).toBe(0);
    for (const ticker of t.venue_b) {
      const rest = await get(`${sim.urls['venue-b']}/markets/${ticker}/orderbook`);
      expect(kr.book(ticker)).toEqual(restBooks.kalshi(rest.json));
      const truth = sim.books.book('kalshi', ticker);
      expect(kr.book(ticker)).toEqual({ bids: truth.bids, asks: truth.asks });
    }
    const pr = new PmUsRebuild();
    for (const m of p.messages) pr.apply(m);
    for (const slug of t.venue_a_us) {
      const rest = await get(`${sim.urls['venue-a-us']}/v1/markets/${slug}/book`);
      expect(pr.book(slug)).toEqual(restBooks.polymarketUs(rest.json));
      expect(pr.book(slug)).toEqual(sim.books.book('venue-a-us', slug));
    }
    const gr = new GeminiRebuild(geminiPrecision);
    for (const m of g.messages) gr.apply(m);
    for (const symbol of t.venue_c) {
      const rest = await get(`${sim.urls['venue-c']}/v1/book/${symbol}?limit_bids=0&limit_asks=0`);
      expect(gr.book(symbol)).toEqual(restBooks.gemini(rest.json));
      expect(gr.book(symbol)).toEqual(sim.books.book('gemini', symbol));
    }

    // Kalshi deltas carry ts/ts_ms: the book rebuilt from the messages up to any T equals bookAt(T).
    const deltas = k.messages.filter((m) => m.type === 'orderbook_delta');
    const middle = deltas[Math.floor(deltas.length / 2)] as { msg: { ts_ms: number; ts: string } };
    const cut = middle.msg.ts_ms;
    expect(Date.parse(middle.msg.ts)).toBe(cut);
    const partial = new KalshiRebuild();
    for (const m of k.messages) {
      if (m.type === 'orderbook_delta' && (m.msg as { ts_ms: number }).ts_ms > cut) continue;
      partial.apply(m);
    }
    for (const ticker of t.venue_b) {
      const at = sim.books.bookAt('kalshi', ticker, cut);
      expect(partial.book(ticker)).toEqual({ bids: at.bids, asks: at.asks });
    }
    // Polymarket US: transactTime is the millisecond of the change; bookAt(transactTime) is that book.
    for (const slug of t.venue_a_us) {
      const tt = pr.transactTime(slug) as string;
      expect(tt).toMatch(/\.\d{3}Z$/);
      expect(sim.books.bookAt('venue-a-us', slug, Date.parse(tt))).toEqual(pr.book(slug));
    }
    // The emitted events tell the same story as the feed: Kalshi deltas are the events' changes.
    const ticker = t.venue_b[0] as string;
    const fromEvents = sim.books
      .events('kalshi', ticker)
      .flatMap((e) => e.changes.map((c) => `${c.side}:${c.price}:${c.delta}`));
    const fromFeed = deltas
      .map((m) => m.msg as { market_ticker: string; side: string; price_dollars: string; delta_fp: string })
      .filter((m) => m.market_ticker === ticker)
      .map((m) => {
        const p = parseScaled(m.price_dollars, 4) as number;
        return m.side === 'yes'
          ? `bid:${m.price_dollars}:${m.delta_fp}`
          : `ask:${formatScaled(10000 - p, 4)}:${m.delta_fp}`;
      });
    expect(fromFeed).toEqual(fromEvents.slice(fromEvents.length - fromFeed.length));
  });

  test('the same seed replays the same feed messages (timestamps aside); another seed does not', async () => {
    const collect = async (seed: number) => {
      const s = await startSimulator({ seed, updatesPerSecond: 0, changesPerUpdate: 2, rateLimits: false });
      try {
        const t = s.recordedTickers();
        const k = await kalshiClient(s, t.venue_b);
        const g = await geminiClient(s, t.venue_c);
        const p = await pmUsClient(s, t.venue_a_us);
        s.books.step(400);
        await Promise.all([k.sync(), g.sync(), p.sync()]);
        await Promise.all([k.close(), g.close(), p.close()]);
        const strip = (m: Record<string, unknown>) =>
          JSON.stringify(m, (key, v: unknown) =>
            ['ts', 'ts_ms', 'transactTime', 'timestamp', 'tradeTime'].includes(key) ? undefined : v,
          );
        return { kalshi: k.messages.map(strip), gemini: g.messages.map(strip), pmUs: p.messages.map(strip) };
      } finally {
        await s.stop();
      }
    };
    const a = await collect(11);
    const b = await collect(11);
    const c = await collect(12);
    expect(a.kalshi.length).toBeGreaterThan(100);
    expect(a.gemini.length).toBeGreaterThan(50);
    expect(b).toEqual(a);
    expect(c.kalshi).not.toEqual(a.kalshi);
    expect(c.gemini).not.toEqual(a.gemini);
  });

  describe('feed faults', () => {
    const oneTicker = async (platform: 'kalshi' | 'gemini' | 'venue-a-us') => {
      sim = await startSimulator({ seed: 5, updatesPerSecond: 0, platforms: [platform], rateLimits: false });
    };

    test('Kalshi drop: the next delta is not sent and its seq is skipped (a gap)', async () => {
      await oneTicker('kalshi');
      const ticker = sim.books.tickers('kalshi')[0] as string;
      const c = await kalshiClient(sim, [ticker]);
      clients.push(c);
      sim.feedFaults.inject({ platform: 'venue_b', kind: 'drop', ticker, count: 2 });
      const before = sim.books.last('kalshi', ticker).seq;
      while (sim.books.last('kalshi', ticker).seq < before + 10) sim.books.step(1);
      await c.sync();
      const deltas = c.messages.filter((m) => m.type === 'orderbook_delta');
      const changes = sim.books
        .events('kalshi', ticker)
        .slice(-10)
        .reduce((n, e) => n + e.changes.length, 0);
      expect(deltas.length).toBe(changes - 2);
      const seqs = c.messages.filter((m) => m.sid === 1 && typeof m.seq === 'number').map((m) => m.seq as number);
      const gaps = seqs.slice(1).reduce((n, seq, i) => n + (seq - (seqs[i] as number) - 1), 0);
      expect(gaps).toBe(2);
      expect(sim.feedFaults.stats('kalshi')).toMatchObject({ connections: 1, pendingDrops: 0, dropped: 2 });
    });

    test('Gemini drop: one l2_updates message is missing (no sequence number tells)', async () => {
      await oneTicker('gemini');
      const c = await geminiClient(sim, ['BTCUSD']);
      clients.push(c);
      sim.feedFaults.dropNext('gemini', { ticker: 'BTCUSD' });
      const before = sim.books.last('gemini', 'BTCUSD').seq;
      while (sim.books.last('gemini', 'BTCUSD').seq < before + 20) sim.books.step(1);
      await c.sync();
      expect(c.messages.filter((m) => m.type === 'l2_updates')).toHaveLength(1 + 20 - 1);
      expect(sim.feedFaults.stats('gemini').dropped).toBe(1);
    });

    test('Polymarket US drop: one whole-book message is missing; the next one heals the book', async () => {
      await oneTicker('venue-a-us');
      const slug = sim.books.tickers('venue-a-us')[0] as string;
      const c = await pmUsClient(sim, [slug]);
      clients.push(c);
      sim.feedFaults.dropNext('venue-a-us');
      const before = sim.books.last('venue-a-us', slug).seq;
      while (sim.books.last('venue-a-us', slug).seq < before + 5) sim.books.step(1);
      await c.sync();
      expect(c.messages.filter((m) => m.marketData)).toHaveLength(1 + 5 - 1);
      const r = new PmUsRebuild();
      for (const m of c.messages) r.apply(m);
      expect(r.book(slug)).toEqual(sim.books.book('venue-a-us', slug));
    });

    test('disconnect cuts every connection of the platform (or of one ticker) without a close frame', async () => {
      sim = await startSimulator({ seed: 5, updatesPerSecond: 0, rateLimits: false });
      const [a, b] = sim.books.tickers('kalshi') as [string, string];
      const ka = await kalshiClient(sim, [a]);
      const kb = await kalshiClient(sim, [b]);
      const g = await geminiClient(sim, ['ETHUSD']);
      clients.push(ka, kb, g);
      expect(sim.feedFaults.disconnect('kalshi', { ticker: a })).toBe(1);
      await ka.until(() => ka.closed);
      expect(ka.closeCode).toBe(1006);
      expect(kb.closed).toBe(false);
      const res = await get(
        `${sim.urls.control}/control/feed-faults`,
        { 'content-type': 'application/json' },
        {
          method: 'POST',
          body: JSON.stringify({ platform: 'gemini', kind: 'disconnect' }),
        },
      );
      expect(res.status).toBe(201);
      expect(res.json).toMatchObject({ affected: 1 });
      await g.until(() => g.closed);
      expect(kb.closed).toBe(false);
    });

    test('a ticker fault spares a Kalshi connection that no longer follows the ticker', async () => {
      sim = await startSimulator({ seed: 5, updatesPerSecond: 0, rateLimits: false });
      const [a, b] = sim.books.tickers('kalshi') as [string, string];
      const c = await kalshiClient(sim, [a, b]);
      clients.push(c);
      c.send({ id: 2, cmd: 'update_subscription', params: { sid: 1, action: 'delete_markets', market_tickers: [a] } });
      // A second subscription (another channel) to b, then unsubscribed: b is still followed by the first.
      c.send({ id: 3, cmd: 'subscribe', params: { channels: ['ticker'], market_tickers: [b] } });
      await c.until((ms) => ms.some((m) => m.type === 'subscribed' && m.id === 3));
      c.send({ id: 4, cmd: 'unsubscribe', params: { sids: [2] } });
      await c.until((ms) => ms.some((m) => m.type === 'unsubscribed'));
      expect(sim.feedFaults.disconnect('kalshi', { ticker: a })).toBe(0);
      expect(c.closed).toBe(false);
      expect(sim.feedFaults.disconnect('kalshi', { ticker: b })).toBe(1);
      await c.until(() => c.closed);
    });

    test('stall: nothing is delivered for the stall while the book moves, then the backlog arrives in order', async () => {
      await oneTicker('kalshi');
      const ticker = sim.books.tickers('kalshi')[0] as string;
      const c = await kalshiClient(sim, [ticker]);
      clients.push(c);
      const seen = c.messages.length;
      expect(sim.feedFaults.stall('kalshi', 800)).toBe(1);
      sim.books.step(30);
      await c.sync(); // control frames are not stalled: everything the server sent has arrived
      expect(c.messages.length).toBe(seen);
      await c.until((ms) => {
        const r = new KalshiRebuild();
        for (const m of ms) r.apply(m);
        const truth = sim.books.book('kalshi', ticker);
        return JSON.stringify(r.book(ticker)) === JSON.stringify({ bids: truth.bids, asks: truth.asks });
      });
      const r = new KalshiRebuild();
      for (const m of c.messages) r.apply(m);
      expect(r.gaps).toBe(0);
    });
  });

  test('a consumer that stops reading is cut once its backlog passes maxFeedBufferBytes', async () => {
    sim = await startSimulator({
      seed: 5,
      updatesPerSecond: 0,
      platforms: ['gemini'],
      maxFeedBufferBytes: 64 * 1024,
      rateLimits: false,
    });
    const g = await geminiClient(sim, sim.books.tickers('gemini'));
    clients.push(g);
    (g.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    for (let i = 0; i < 200 && sim.feedFaults.stats('gemini').slowDisconnects === 0; i++) {
      sim.books.step(500);
      await new Promise((r) => setImmediate(r));
    }
    expect(sim.feedFaults.stats('gemini')).toMatchObject({ slowDisconnects: 1, connections: 0 });
  });

  describe('handshakes and subscriptions', () => {
    test('Kalshi and Polymarket US refuse unsigned or badly signed handshakes with 401; Gemini is public', async () => {
      sim = await startSimulator({ seed: 1, updatesPerSecond: 0 });
      expect((await FeedClient.refused(sim.feeds['venue-b'])).status).toBe(401);
      const stale = signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/ws/v2', Date.now() - 120_000);
      const refused = await FeedClient.refused(sim.feeds['venue-b'], { headers: stale });
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'authentication_error' } });
      const wrongPath = signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/v2/markets');
      expect((await FeedClient.refused(sim.feeds['venue-b'], { headers: wrongPath })).status).toBe(401);
      expect((await FeedClient.refused(sim.feeds['venue-a-us'])).status).toBe(401);
      const handshakes = sim.requests({ platform: 'kalshi', pathPrefix: '/trade-api/ws/v2' });
      expect(handshakes.map((r) => [r.websocket, r.auth, r.status])).toEqual([
        [true, 'absent', 401],
        [true, 'invalid', 401],
        [true, 'invalid', 401],
      ]);
      expect(handshakes[1]?.authError).toMatch(/stale/);
      const g = await FeedClient.open(sim.feeds['venue-c']);
      clients.push(g);
      expect(sim.requests({ platform: 'gemini' }).at(-1)).toMatchObject({ websocket: true, status: 101 });
    });

    test('Kalshi answers subscribed with a sid, errors for unknown markets, and resends a snapshot on get_snapshot', async () => {
      sim = await startSimulator({ seed: 1, updatesPerSecond: 0 });
      const [a, b] = sim.books.tickers('kalshi') as [string, string];
      const c = await kalshiClient(sim, [a]);
      clients.push(c);
      expect(c.messages[0]).toEqual({ id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } });
      expect(c.messages[1]).toMatchObject({ type: 'orderbook_snapshot', sid: 1, seq: 1, msg: { market_ticker: a } });
      c.send({ id: 2, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['KXNOPE-1'] } });
      await c.until((ms) => ms.some((m) => m.id === 2));
      expect(c.messages.find((m) => m.id === 2)).toMatchObject({ type: 'error' });
      c.send({ id: 3, cmd: 'update_subscription', params: { sids: [1], market_tickers: [b], action: 'add_markets' } });
      await c.until((ms) =>
        ms.some((m) => m.type === 'orderbook_snapshot' && (m.msg as { market_ticker: string }).market_ticker === b),
      );
      c.send({ id: 4, cmd: 'update_subscription', params: { sids: [1], market_tickers: [a], action: 'get_snapshot' } });
      await c.until((ms) => ms.filter((m) => m.type === 'orderbook_snapshot').length === 3);
      const seqs = c.messages
        .filter((m) => m.sid === 1 && typeof m.seq === 'number' && m.type !== 'ok')
        .map((m) => m.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    });

    test("Kalshi refuses bad commands with the codes of Kalshi's table (docs.kalshi.com, as the gateway and replay answer)", async () => {
      sim = await startSimulator({ seed: 1, updatesPerSecond: 0 });
      const [a] = sim.books.tickers('kalshi') as [string];
      const c = await kalshiClient(sim, [a]);
      clients.push(c);
      const asked: [Record<string, unknown>, number, string][] = [
        [{ id: 10, cmd: 'subscribe', params: { channels: [] } }, 3, 'Channels required'],
        [{ id: 11, cmd: 'subscribe', params: { channels: ['orderbook_delta'] } }, 14, 'Market Ticker required'],
        [{ id: 12, cmd: 'subscribe', params: { channels: ['nope'], market_tickers: [a] } }, 8, 'Unknown channel name'],
        [
          { id: 13, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['KXNOPE-1'] } },
          16,
          'Market not found: KXNOPE-1',
        ],
        [{ id: 14, cmd: 'unsubscribe', params: { sids: [] } }, 4, 'Subscription IDs required'],
        [{ id: 15, cmd: 'unsubscribe', params: { sids: [99] } }, 7, 'Unknown subscription ID'],
        [
          { id: 16, cmd: 'update_subscription', params: { market_tickers: [a] } },
          12,
          'Exactly one subscription ID is required',
        ],
        [
          { id: 17, cmd: 'update_subscription', params: { sids: [99], action: 'get_snapshot' } },
          7,
          'Unknown subscription ID',
        ],
        [{ id: 18, cmd: 'update_subscription', params: { sids: [1], market_tickers: [a] } }, 15, 'Action required'],
        [{ id: 19, cmd: 'update_subscription', params: { sids: [1], action: 'rename' } }, 13, 'Unsupported action'],
        [{ id: 20, cmd: 'dance' }, 5, 'Unknown command'],
        [{ id: 21, cmd: 'subscribe' }, 2, 'Params required'],
        [
          { id: 22, cmd: 'update_subscription', params: { sids: [1, 2], action: 'get_snapshot' } },
          12,
          'Exactly one subscription ID is required',
        ],
      ];
      for (const [command] of asked) c.send(command);
      await c.until((ms) => ms.some((m) => m.id === 22));
      expect(asked.map(([command]) => c.messages.find((m) => m.id === command.id))).toEqual(
        asked.map(([command, code, msg]) => ({ id: command.id, type: 'error', msg: { code, msg } })),
      );
    });

    test('a connection holds at most maxFeedSubscriptions subscriptions, repeated ones counted (Kalshi, Polymarket US)', async () => {
      sim = await startSimulator({ seed: 1, updatesPerSecond: 0, maxFeedSubscriptions: 3 });
      const [a, b] = sim.books.tickers('kalshi') as [string, string];
      const k = await kalshiClient(sim, [a]); // sid 1: one
      clients.push(k);
      const subscribe = (id: number, tickers: string[]) =>
        k.send({ id, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: tickers } });
      subscribe(2, [a, b]); // sid 2: three
      subscribe(3, [a]); // a fourth: refused
      k.send({ id: 4, cmd: 'update_subscription', params: { sids: [1], market_tickers: [b], action: 'add_markets' } });
      k.send({ id: 5, cmd: 'unsubscribe', params: { sids: [2] } });
      subscribe(6, [b]); // two again
      await k.until((ms) => ms.some((m) => m.id === 6 && m.type === 'subscribed'));
      const limit = { code: 26, msg: 'Subscription market limit exceeded: the simulator holds 3 on a connection' };
      expect([2, 3, 4, 6].map((id) => k.messages.find((m) => m.id === id && m.type !== 'orderbook_snapshot'))).toEqual([
        { id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 2 } },
        { id: 3, type: 'error', msg: limit },
        { id: 4, type: 'error', msg: limit },
        { id: 6, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3 } },
      ]);

      const slugs = sim.books.tickers('venue-a-us').slice(0, 2);
      const p = await pmUsClient(sim, slugs); // md-1: two
      clients.push(p);
      const type = 'SUBSCRIPTION_TYPE_MARKET_DATA';
      p.send({ subscribe: { requestId: 'md-2', subscriptionType: type, marketSlugs: slugs } }); // four: refused
      p.send({ subscribe: { requestId: 'md-1', subscriptionType: type, marketSlugs: slugs.slice(0, 1) } }); // one
      p.send({ subscribe: { requestId: 'md-3', subscriptionType: type, marketSlugs: slugs } }); // three
      await p.until((ms) => ms.filter((m) => m.requestId === 'md-3').length >= 2);
      expect(p.messages.filter((m) => m.error !== undefined)).toEqual([
        { requestId: 'md-2', error: 'too many subscriptions: the simulator holds 3 markets on a connection' },
      ]);
      expect([
        sim.feedFaults.stats('kalshi').subscriptionRefusals,
        sim.feedFaults.stats('venue-a-us').subscriptionRefusals,
      ]).toEqual([2, 1]);
    });

    test('a message a platform cannot handle closes only its connection (1011); the feed goes on', async () => {
      sim = await startSimulator({ seed: 1, updatesPerSecond: 0 });
      const [a] = sim.books.tickers('kalshi') as [string];
      const bad = await kalshiClient(sim, [a]);
      clients.push(bad);
      // An id nested deeper than JSON.stringify goes (JSON.parse reads it): the error answer echoing it cannot be made.
      bad.send(`{"id":${'['.repeat(200_000)}${']'.repeat(200_000)},"cmd":"nope"}`);
      await bad.untilClosed();
      expect(bad.closeCode).toBe(1011);
      const good = await kalshiClient(sim, [a]);
      clients.push(good);
      expect(good.messages[0]).toMatchObject({ id: 1, type: 'subscribed' });
    });

    test('the messages a feed received are kept up to 16 MiB of text: the newest, whole', async () => {
      sim = await startSimulator({ seed: 1, updatesPerSecond: 0 });
      const g = await FeedClient.open(sim.feeds['venue-c']);
      clients.push(g);
      const big = (i: number) => JSON.stringify({ type: 'hello', n: i, pad: 'x'.repeat(1_000_000) });
      for (let i = 0; i < 20; i++) g.send(big(i));
      await g.sync();
      const kept = sim.feedFaults.received('venue-c');
      expect(kept.reduce((n, t) => n + t.length, 0)).toBeLessThanOrEqual(16 * 1024 * 1024);
      expect(kept.at(-1)).toBe(big(19));
      expect(kept.length).toBeGreaterThan(10);
    });

    test('Polymarket US rejects more than 100 slugs and unknown slugs; Gemini reports unknown symbols', async () => {
      sim = await startSimulator({ seed: 1, updatesPerSecond: 0 });
      const p = await FeedClient.open(sim.feeds['venue-a-us'], {
        headers: signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/ws/markets'),
      });
      clients.push(p);
      p.send({
        subscribe: {
          requestId: 'r1',
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketSlugs: Array.from({ length: 101 }, (_, i) => `m-${i}`),
        },
      });
      p.send({
        subscribe: {
          requestId: 'r2',
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketSlugs: ['no-such-market'],
        },
      });
      await p.until((ms) => ms.length >= 2);
      expect(p.messages[0]).toMatchObject({ requestId: 'r1', error: expect.stringMatching(/100/) });
      expect(p.messages[1]).toMatchObject({ requestId: 'r2', error: expect.stringMatching(/not found/) });
      const g = await FeedClient.open(sim.feeds['venue-c']);
      clients.push(g);
      g.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: ['NOPEUSD'] }] });
      await g.until((ms) => ms.length >= 1);
      expect(g.messages[0]).toMatchObject({ reason: 'InvalidSymbol' });
      // A symbol that is not a string (whose `toString` is no function) is named as its JSON.
      g.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [{ toString: 0 }] }] });
      await g.until((ms) => ms.length >= 2);
      expect(g.messages[1]).toMatchObject({ reason: 'InvalidSymbol', message: 'invalid symbol {"toString":0}' });
    });
  });
});
