import { startSimulator, type Simulator } from '../../index';
import { get } from '../../testing/clients';

/** Gamma as ccxt's prediction.polymarket reads it: events with their markets, JSON-encoded outcome fields, status. */

interface GammaMarket {
  id: string;
  conditionId: string;
  slug: string;
  active: boolean;
  closed: boolean;
  negRisk: boolean;
  orderPriceMinTickSize: number;
  orderMinSize: number;
  endDate: string;
  volume24hr: number;
  outcomes: string;
  outcomePrices: string;
  clobTokenIds: string;
  bestBid: number;
  bestAsk: number;
}
interface GammaEvent {
  id: string;
  slug: string;
  title: string;
  category: string;
  negRisk: boolean;
  tags: Array<{ label: string; slug: string }>;
  markets: GammaMarket[];
}

const T0 = Date.now();

describe('Polymarket Gamma', () => {
  let sim: Simulator;
  let u: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 4, updatesPerSecond: 0, startPaused: true, rateLimits: false, clock: () => T0 });
    u = sim.urls['venue-a'];
  });
  afterAll(() => sim.stop());

  test('/status is the plain-text health check', async () => {
    const res = await get(`${u}/status`);
    expect([res.status, res.text, res.headers.get('content-type')]).toEqual([200, 'OK', 'text/plain; charset=utf-8']);
  });

  test('events carry the fields ccxt parses; outcomes, clobTokenIds and outcomePrices are JSON-encoded strings', async () => {
    const events = (await get(`${u}/events?limit=100&active=true&closed=false&order=volume&ascending=false`))
      .json as GammaEvent[];
    expect(events.length).toBeGreaterThan(1);
    for (const e of events) {
      expect(e.category).toBe(e.tags[0]?.label);
      for (const m of e.markets) {
        expect(JSON.parse(m.outcomes)).toEqual(['Yes', 'No']);
        expect(JSON.parse(m.clobTokenIds)).toHaveLength(2);
        const [yes, no] = (JSON.parse(m.outcomePrices) as string[]).map((p) => Math.round(Number(p) * 1000));
        expect((yes as number) + (no as number)).toBe(1000);
        expect(m).toMatchObject({ orderPriceMinTickSize: 0.01, volume24hr: expect.any(Number) });
        expect([5, 15]).toContain(m.orderMinSize);
        expect(m.negRisk).toBe(e.negRisk);
        expect(m.bestBid).toBeLessThan(m.bestAsk);
      }
    }
    // Mutually exclusive outcomes are negative-risk events; independent strikes are not.
    expect(new Set(events.map((e) => e.negRisk))).toEqual(new Set([true, false]));
  });

  test('an event by id and by slug, a market by id and by slug, equal their listing entries; offset pages', async () => {
    const events = (await get(`${u}/events?limit=100`)).json as GammaEvent[];
    for (const e of events) {
      expect((await get(`${u}/events/${e.id}`)).json).toEqual(e);
      expect((await get(`${u}/events/slug/${e.slug}`)).json).toEqual(e);
    }
    const markets = (await get(`${u}/markets?limit=100`)).json as GammaMarket[];
    for (const m of markets) {
      expect((await get(`${u}/markets/${m.id}`)).json).toEqual(m);
      expect((await get(`${u}/markets/slug/${m.slug}`)).json).toEqual(m);
    }
    expect((await get(`${u}/events?limit=2&offset=1`)).json).toEqual(events.slice(1, 3));
    // ccxt resolves outcomes by token id with repeated clob_token_ids.
    const [a, b] = markets;
    const tokens = [JSON.parse(a?.clobTokenIds as string)[0], JSON.parse(b?.clobTokenIds as string)[1]] as string[];
    expect(
      (
        (await get(`${u}/markets?clob_token_ids=${tokens[0]}&clob_token_ids=${tokens[1]}&limit=50`))
          .json as GammaMarket[]
      ).map((m) => m.id),
    ).toEqual([a?.id, b?.id]);
  });

  test('prices agree with the CLOB: best bid/ask with its book, neg risk with its market', async () => {
    const markets = (await get(`${u}/markets?limit=100`)).json as GammaMarket[];
    for (const m of markets) {
      const [yes] = JSON.parse(m.clobTokenIds) as string[];
      const book = (await get(`${sim.urls['venue-a-clob']}/book?token_id=${yes}`)).json as {
        bids: Array<{ price: string }>;
        asks: Array<{ price: string }>;
        neg_risk: boolean;
      };
      expect([m.bestBid, m.bestAsk]).toEqual([Number(book.bids.at(-1)?.price), Number(book.asks.at(-1)?.price)]);
      expect(m.negRisk).toBe(book.neg_risk);
    }
  });

  test('keyset lists: the same items as the offset lists, in pages joined by next_cursor → after_cursor', async () => {
    for (const [name, query] of [
      ['events', 'order=volume&ascending=false'],
      ['markets', 'active=true'],
    ] as const) {
      const all = (await get(`${u}/${name}?limit=100&${query}`)).json as Array<{ id: string }>;
      expect(all.length).toBeGreaterThan(2);
      const seen: Array<{ id: string }> = [];
      let cursor: string | undefined;
      for (let pages = 0; pages <= all.length; pages++) {
        const res = await get(`${u}/${name}/keyset?limit=2&${query}${cursor ? `&after_cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        const body = res.json as Record<string, unknown>;
        seen.push(...(body[name] as Array<{ id: string }>));
        cursor = body.next_cursor as string | undefined;
        if (cursor === undefined) break;
      }
      // Every item once, in the list's order; the last page has no next_cursor.
      expect([name, seen]).toEqual([name, all]);
    }
  });

  test('keyset lists refuse offset and a cursor that is not theirs (422); exclude_tag_id leaves tagged events out', async () => {
    for (const path of ['/events/keyset?offset=0', '/markets/keyset?offset=2', '/events/keyset?after_cursor=bm9wZQ']) {
      const res = await get(`${u}${path}`);
      expect([path, res.status, (res.json as { type: string }).type]).toEqual([path, 422, 'validation error']);
    }
    const events = (await get(`${u}/events?limit=100`)).json as Array<{ id: string; tags: Array<{ id: string }> }>;
    const tag = events[0]?.tags[0]?.id as string;
    const kept = events.filter((e) => !e.tags.some((t) => t.id === tag)).map((e) => e.id);
    expect(kept.length).toBeLessThan(events.length);
    expect(((await get(`${u}/events?limit=100&exclude_tag_id=${tag}`)).json as GammaEvent[]).map((e) => e.id)).toEqual(
      kept,
    );
    const keyset = (await get(`${u}/events/keyset?limit=100&exclude_tag_id=${tag}`)).json as { events: GammaEvent[] };
    expect(keyset.events.map((e) => e.id)).toEqual(kept);
  });
});
