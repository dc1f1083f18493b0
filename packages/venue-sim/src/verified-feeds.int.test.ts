import { clobBookHash } from '@depthgate/feeds';
import { formatScaledTrimmed, parseScaled } from './core/decimal';
import { signers, startSimulator, type DecimalBook, type Simulator } from './index';
import { ClobConsumer } from './testing/clob-consumer';
import { FeedClient, get } from './testing/clients';

/**
 * The venues' own evidence of a book's integrity, as a consumer of the real feeds would use it: the Polymarket CLOB's
 * `hash` (checked by a consumer that follows the channel's documented rules and hashes its own book), Coinbase's
 * `sequence` and `last_trade_id`; and the message faults a recorder is tested with (drop, reorder, corrupt_checksum).
 */

const T0 = Date.UTC(2026, 10, 24, 9);

/** A book's decimals in their shortest form (the CLOB writes "0.5"; `sim.books` keeps the instrument's precision). */
function shortest(b: DecimalBook): DecimalBook {
  const s = (x: string) => formatScaledTrimmed(parseScaled(x, 8) as number, 8);
  const side = (l: [string, string][]) => l.map(([p, q]) => [s(p), s(q)] as [string, string]);
  return { bids: side(b.bids), asks: side(b.asks) };
}

function coinbaseAuth(sim: Simulator) {
  const h = signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', '/users/self/verify', '', Math.floor(T0 / 1000));
  return {
    key: h['CB-ACCESS-KEY'],
    passphrase: h['CB-ACCESS-PASSPHRASE'],
    timestamp: h['CB-ACCESS-TIMESTAMP'],
    signature: h['CB-ACCESS-SIGN'],
  };
}

describe('verified feeds: the venues own sequences and checksums, and the faults that break them', () => {
  const sims: Simulator[] = [];
  const clients: FeedClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(sims.splice(0).map((s) => s.stop()));
  });
  const open = async (url: string | undefined, headers?: Record<string, string>) => {
    const c = await FeedClient.open(url as string, { headers });
    clients.push(c);
    return c;
  };
  /** A simulator on a clock that moves only when `tick` is called (events get distinct, known timestamps). */
  const start = async (o: Parameters<typeof startSimulator>[0]) => {
    let now = T0;
    const sim = await startSimulator({ updatesPerSecond: 0, rateLimits: false, clock: () => now, ...o });
    sims.push(sim);
    return { sim, step: (n = 1) => Array.from({ length: n }, () => ((now += 3), sim.books.step(1))) };
  };
  /** The CLOB's markets as [YES, NO] token pairs (Gamma's `clobTokenIds`). */
  const markets = async (sim: Simulator) =>
    (
      (await get(`${sim.urls['venue-a']}/markets?limit=100`)).json as Array<{
        clobTokenIds: string;
        conditionId: string;
      }>
    ).map((m) => ({ condition: m.conditionId, tokens: JSON.parse(m.clobTokenIds) as [string, string] }));
  const restBook = async (sim: Simulator, asset: string) =>
    (await get(`${sim.urls['venue-a-clob']}/book?token_id=${asset}`)).json as Record<string, unknown> & {
      hash: string;
      timestamp: string;
      bids: { price: string; size: string }[];
      asks: { price: string; size: string }[];
    };

  describe('Polymarket CLOB market channel', () => {
    test('a consumer that follows the documented rules reproduces every hash, over thousands of events', async () => {
      const { sim, step } = await start({ seed: 2, platforms: ['venue-a-clob'], tickers: { 'venue-a-clob': 6 } });
      const ms = await markets(sim);
      const all = await open(sim.feeds['venue-a-clob']);
      all.send({ assets_ids: ms.flatMap((m) => m.tokens), type: 'market' });
      const [yes0, no0] = (ms[0] as (typeof ms)[0]).tokens;
      // A second client subscribed to one NO asset only: the entries of its asset only, the same hashes.
      const noOnly = await open(sim.feeds['venue-a-clob']);
      noOnly.send({ assets_ids: [no0], type: 'market' });
      await all.until((m) => m.filter((x) => x.event_type === 'book').length === ms.length * 2, 'the books');
      await noOnly.until((m) => m.some((x) => x.event_type === 'book'), 'the book');
      const consumer = new ClobConsumer();
      const noConsumer = new ClobConsumer();
      for (let round = 0; round < 60; round++) {
        step(100);
        await all.sync();
        await noOnly.sync();
        consumer.update(all.messages);
        noConsumer.update(noOnly.messages);
      }
      const count = (t: string) => all.messages.filter((m) => m.event_type === t).length;
      expect(count('price_change')).toBe(6000);
      expect(consumer.checks.length).toBeGreaterThan(12_000);
      expect(consumer.problems).toEqual([]);
      expect(consumer.mismatches()).toEqual([]);
      expect(noConsumer.problems).toEqual([]);
      expect(noConsumer.mismatches()).toEqual([]);
      expect(noConsumer.checks.length).toBe(consumer.checks.filter((c) => c.asset === no0).length);
      expect(noConsumer.checks.every((c) => c.asset === no0)).toBe(true);
      expect(noConsumer.book(no0)).toEqual(consumer.book(no0));
      // Every kind of message came, the tick size changed and came back, books followed the trades.
      expect(consumer.tickChanges).toBeGreaterThan(1);
      const trades = ms.flatMap((m) => sim.trades('venue-a-clob', m.tokens[0]));
      expect(count('last_trade_price')).toBe(trades.length);
      expect(consumer.checks.filter((c) => c.eventType === 'book').length).toBeGreaterThan(ms.length * 2);

      for (const m of ms) {
        const market = (await get(`${sim.urls['venue-a-clob']}/markets/${m.condition}`)).json as Record<
          string,
          unknown
        >;
        for (const [i, asset] of m.tokens.entries()) {
          // GET /book is the summary of the channel's last message about the asset, hash included.
          const rest = await restBook(sim, asset);
          const lastHash = all.messages
            .flatMap((x) =>
              x.event_type === 'book' && x.asset_id === asset
                ? [x.hash]
                : x.event_type === 'price_change'
                  ? (x.price_changes as Record<string, string>[]).filter((e) => e.asset_id === asset).map((e) => e.hash)
                  : [],
            )
            .at(-1);
          expect(rest.hash).toBe(lastHash);
          expect(rest).toEqual({
            ...consumer.summary(asset, rest.timestamp),
            hash: consumer.hash(asset, rest.timestamp),
          });
          // A client hashing the REST answer alone agrees (clob-client's way: the summary as received).
          expect(clobBookHash(rest as never)).toBe(rest.hash);
          // The settings the hash counts are the market's, on every route.
          const settings = consumer.settings(asset);
          expect(settings).toMatchObject({ negRisk: market.neg_risk, minOrderSize: String(market.minimum_order_size) });
          expect(Number(settings?.tickSize)).toBe(market.minimum_tick_size);
          const tick = (await get(`${sim.urls['venue-a-clob']}/tick-size?token_id=${asset}`)).json;
          expect(tick).toEqual({ minimum_tick_size: market.minimum_tick_size });
          // The last trade: the YES token's own, the channel's and REST's alike; the NO token has none.
          const last = (await get(`${sim.urls['venue-a-clob']}/last-trade-price?token_id=${asset}`)).json;
          const made = i === 0 ? sim.trades('venue-a-clob', asset).at(-1) : undefined;
          if (i === 0 && made) {
            expect(settings?.lastTradePrice).toBe(made.price);
            expect(last).toEqual({ price: made.price, side: made.venueSide });
          } else {
            expect(settings?.lastTradePrice).toBe('');
            expect(last).toEqual({ price: '0.5', side: '' });
          }
        }
        expect(shortest(consumer.book(m.tokens[0]) as DecimalBook)).toEqual(
          shortest(sim.books.book('venue-a-clob', m.tokens[0])),
        );
      }
      expect(yes0).not.toBe(no0);
    });

    /** One market, its consumer synced after every event. */
    const oneMarket = async (seed: number) => {
      const { sim, step } = await start({ seed, platforms: ['venue-a-clob'], tickers: { 'venue-a-clob': 1 } });
      const [m] = await markets(sim);
      const [yes, no] = (m as { tokens: [string, string] }).tokens;
      const c = await open(sim.feeds['venue-a-clob']);
      c.send({ assets_ids: [yes, no], type: 'market' });
      await c.until((x) => x.filter((y) => y.event_type === 'book').length === 2, 'the books');
      const consumer = new ClobConsumer();
      const advance = async (n = 1) => {
        step(n);
        await c.sync();
        consumer.update(c.messages);
      };
      return { sim, c, yes, no, consumer, advance };
    };

    test('corrupt_checksum: exactly one message carries a wrong hash, the book itself unchanged', async () => {
      const { sim, c, yes, consumer, advance } = await oneMarket(7);
      await advance(20);
      expect(consumer.mismatches()).toEqual([]);
      const res = await get(
        `${sim.urls.control}/control/feed-faults`,
        { 'content-type': 'application/json' },
        {
          method: 'POST',
          body: JSON.stringify({ platform: 'polymarket-clob', kind: 'corrupt_checksum', ticker: yes }),
        },
      );
      expect([res.status, (res.json as { affected: number }).affected]).toEqual([201, 1]);
      const from = c.messages.length;
      await advance(40);
      const bad = consumer.mismatches();
      expect(bad).toHaveLength(1);
      // The first message after the fault that carries the asset's hash, for that asset only.
      const first = c.messages.findIndex(
        (m, i) =>
          i >= from &&
          ((m.event_type === 'book' && m.asset_id === yes) ||
            (m.event_type === 'price_change' &&
              (m.price_changes as Record<string, string>[]).some((e) => e.asset_id === yes))),
      );
      expect(bad).toEqual([first]);
      expect(new Set(consumer.checks.filter((x) => !x.ok).map((x) => x.asset))).toEqual(new Set([yes]));
      expect(shortest(consumer.book(yes) as DecimalBook)).toEqual(shortest(sim.books.book('venue-a-clob', yes)));
      expect(sim.feedFaults.stats('venue-a-clob')).toMatchObject({ corrupted: 1, pendingCorruptions: 0 });
    });

    test('drop: the first hash after the loss no longer matches the consumer’s book', async () => {
      const { sim, yes, consumer, advance } = await oneMarket(8);
      await advance(10);
      expect(consumer.mismatches()).toEqual([]);
      // A dropped change of an event that traded is healed by the `book` that follows the trade (as on the venue):
      // drop until the lost message is one that nothing repairs.
      let checked: number;
      let drops = 0;
      do {
        checked = consumer.checks.length;
        sim.feedFaults.dropNext('venue-a-clob', { ticker: yes });
        await advance(1);
        drops++;
        expect(drops).toBeLessThan(10);
      } while ((sim.books.events('venue-a-clob', yes).at(-1)?.trades.length ?? 0) > 0);
      await advance(1);
      const after = consumer.checks.slice(checked);
      expect(after[0]).toMatchObject({ asset: yes, ok: false });
      expect(sim.feedFaults.stats('venue-a-clob').dropped).toBe(drops);
    });

    test('reorder and corrupt_checksum are refused where the protocol would reveal or has no checksum', async () => {
      const { sim } = await start({ seed: 1, platforms: ['kalshi', 'gemini'] });
      const inject = (platform: string, kind: string) =>
        get(
          `${sim.urls.control}/control/feed-faults`,
          { 'content-type': 'application/json' },
          {
            method: 'POST',
            body: JSON.stringify({ platform, kind }),
          },
        );
      const kalshi = await inject('kalshi', 'reorder');
      expect(kalshi.status).toBe(400);
      expect((kalshi.json as { message: string }).message).toContain('sequence number');
      for (const p of ['kalshi', 'gemini', 'coinbase', 'polymarket-us']) {
        const r = await inject(p, 'corrupt_checksum');
        expect([r.status, (r.json as { message: string }).message]).toEqual([
          400,
          expect.stringContaining('no checksum'),
        ]);
      }
      expect((await inject('gemini', 'reorder')).status).toBe(201);
      expect((await inject('venue-d', 'reorder')).status).toBe(201);
      expect((await inject('venue-a-us', 'reorder')).status).toBe(201);
      expect((await inject('venue-a-clob', 'corrupt_checksum')).status).toBe(201);
    });
  });

  describe('reorder on the feeds without a sequence: the same messages, two of them swapped', () => {
    /** Two simulators on the same seed and clock, one with the fault: their messages, subscribed alike. */
    const twin = async (platform: string, subscribe: (sim: Simulator, ticker: string) => unknown, feed: string) => {
      const runs: Record<string, unknown>[][] = [];
      for (const faulty of [false, true]) {
        const { sim, step } = await start({ seed: 12, platforms: [platform] });
        const ticker = sim.books.tickers(platform)[0] as string;
        const signed =
          feed === 'venue-a-us'
            ? signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/ws/markets', T0)
            : undefined;
        const c = await open(sim.feeds[feed as keyof Simulator['feeds']], signed);
        c.send(subscribe(sim, ticker));
        await c.until((m) => m.length >= 1, 'the first messages');
        step(5);
        await c.sync();
        if (faulty) sim.feedFaults.inject({ platform, kind: 'reorder', ticker });
        step(20);
        await c.sync();
        runs.push(c.messages.filter((m) => m.type !== 'heartbeat' && m.heartbeat === undefined));
        if (faulty) expect(sim.feedFaults.stats(platform).reordered).toBe(1);
      }
      const [plain, swapped] = runs as [Record<string, unknown>[], Record<string, unknown>[]];
      expect(swapped).toHaveLength(plain.length);
      const k = plain.findIndex((m, i) => JSON.stringify(m) !== JSON.stringify(swapped[i]));
      expect(k).toBeGreaterThan(0);
      expect([swapped[k], swapped[k + 1]]).toEqual([plain[k + 1], plain[k]]);
      expect(swapped.slice(k + 2)).toEqual(plain.slice(k + 2));
      return { plain, swapped, k };
    };

    test('Polymarket CLOB: a market’s next two messages; the hashes reveal it', async () => {
      const { swapped, k } = await twin(
        'venue-a-clob',
        (_s, yes) => ({ assets_ids: [yes], type: 'market' }),
        'venue-a-clob',
      );
      const consumer = new ClobConsumer().update(swapped);
      expect(consumer.mismatches()[0]).toBeGreaterThanOrEqual(k);
      expect(consumer.mismatches()[0]).toBeLessThanOrEqual(k + 1);
    });

    test('Gemini l2_updates', async () => {
      const { plain, k } = await twin(
        'gemini',
        (_s, t) => ({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [t] }] }),
        'venue-c',
      );
      expect(['l2_updates', 'trade']).toContain(plain[k]?.type);
    });

    test('Coinbase level2', async () => {
      const { plain, k } = await twin(
        'coinbase',
        (s, p) => ({ type: 'subscribe', product_ids: [p], channels: ['level2'], ...coinbaseAuth(s) }),
        'venue-d',
      );
      expect([plain[k]?.type, plain[k + 1]?.type]).toEqual(['l2update', 'l2update']);
    });

    test('Polymarket US market data', async () => {
      const { plain, k } = await twin(
        'venue-a-us',
        (_s, slug) => ({
          subscribe: { requestId: 'md', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [slug] },
        }),
        'venue-a-us',
      );
      expect(plain[k]?.marketData).toBeDefined();
    });
  });

  describe('Coinbase Exchange', () => {
    test('a dropped match: the heartbeat’s last_trade_id names it; sequences agree with the REST book', async () => {
      const { sim, step } = await start({ seed: 6, platforms: ['coinbase'], heartbeatIntervalMs: 40 });
      const c = await open(sim.feeds['venue-d']);
      c.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['matches', 'heartbeat'] });
      await c.until((m) => m.some((x) => x.type === 'heartbeat'), 'a heartbeat');
      const tradesNow = () => sim.trades('coinbase', 'BTC-USD').length;
      while (tradesNow() < 3) step(1);
      // Drop the next match; stop right after the event that made it.
      sim.feedFaults.dropNext('coinbase', { ticker: 'BTC-USD' });
      while (sim.feedFaults.stats('coinbase').dropped === 0) step(1);
      await c.sync();
      const seen = c.messages.filter((m) => m.type === 'match');
      const beatsBefore = c.messages.filter((m) => m.type === 'heartbeat').length;
      await c.until((m) => m.filter((x) => x.type === 'heartbeat').length > beatsBefore + 1, 'a later heartbeat');
      const beat = c.messages.filter((m) => m.type === 'heartbeat').at(-1) as Record<string, number>;
      // The consumer's check: every trade id up to the heartbeat's last_trade_id it has not seen was lost.
      const ids = new Set(seen.map((m) => m.trade_id as number));
      const first = Math.min(...ids);
      const missing: number[] = [];
      for (let id = first; id <= (beat.last_trade_id as number); id++) if (!ids.has(id)) missing.push(id);
      const dropped = sim.trades('coinbase', 'BTC-USD').filter((t) => !ids.has(Number(t.id)) && Number(t.id) >= first);
      expect(missing).toEqual(dropped.map((t) => Number(t.id)));
      expect(missing).toHaveLength(1);
      // Sequences: increasing on matches; the heartbeat's is the REST book's, at or past the last match.
      const seqs = seen.map((m) => m.sequence as number);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      const rest = (await get(`${sim.urls['venue-d']}/products/BTC-USD/book?level=2`)).json as { sequence: number };
      expect(beat.sequence).toBe(rest.sequence);
      expect(beat.sequence).toBeGreaterThanOrEqual(seqs.at(-1) as number);
    });

    test('snapshot (no time, no sequence) then l2update rebuilds the REST book; level2 messages carry no sequence', async () => {
      const { sim, step } = await start({ seed: 6, platforms: ['coinbase'] });
      const c = await open(sim.feeds['venue-d']);
      c.send({ type: 'subscribe', product_ids: ['ETH-USD'], channels: ['level2'], ...coinbaseAuth(sim) });
      await c.until((m) => m.some((x) => x.type === 'snapshot'), 'the snapshot');
      step(200);
      await c.sync();
      const snapshot = c.messages.find((m) => m.type === 'snapshot') as Record<string, unknown>;
      expect(Object.keys(snapshot).sort()).toEqual(['asks', 'bids', 'product_id', 'type']);
      const updates = c.messages.filter((m) => m.type === 'l2update');
      expect(updates.length).toBeGreaterThan(50);
      for (const u of updates) expect(Object.keys(u).sort()).toEqual(['changes', 'product_id', 'time', 'type']);
    });
  });
});
