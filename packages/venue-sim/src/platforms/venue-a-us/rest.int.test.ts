import { signers, startSimulator, type Simulator } from '../../index';
import { get } from '../../testing/clients';

/** Polymarket US as polymarket-us 0.1.1 reads it, in the docs' shapes: detail paths, series, sports, account. */

interface Market {
  id: string;
  slug: string;
  title: string;
  outcome: string;
  active: boolean;
  closed: boolean;
}
interface Series {
  id: string;
  slug: string;
  active: boolean;
  closed: boolean;
  archived: boolean;
}

const T0 = Date.now();

describe('Polymarket US', () => {
  let sim: Simulator;
  let u: string;
  let a: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, updatesPerSecond: 0, startPaused: true, rateLimits: false, clock: () => T0 });
    u = sim.urls['venue-a-us'];
    a = sim.urls['venue-a-us/auth'];
  });
  afterAll(() => sim.stop());

  const signed = (path: string) =>
    signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', path, T0) as Record<string, string>;

  test('a market by id and by slug under /v1/market/… equals its listing entry; ids are strings', async () => {
    const { markets } = (await get(`${u}/v1/markets?limit=100`)).json as { markets: Market[] };
    expect(markets.length).toBeGreaterThan(2);
    for (const m of markets) {
      expect(m.id).toMatch(/^\d+$/);
      expect((await get(`${u}/v1/market/id/${m.id}`)).json).toEqual({ market: m });
      expect((await get(`${u}/v1/market/slug/${m.slug}`)).json).toEqual({ market: m });
    }
    expect((await get(`${u}/v1/market/id/999999`)).status).toBe(404);
    const bad = await get(`${u}/v1/market/id/abc`);
    expect([bad.status, bad.json]).toEqual([
      400,
      { code: 3, message: 'parsing field "id": invalid int32 "abc"', details: [] },
    ]);
    // The plural detail paths are not Polymarket US routes.
    expect((await get(`${u}/v1/markets/slug/${markets[0]?.slug}`)).status).toBe(404);
    // Filters of the list: ids (repeated), slugs, status.
    const two = markets.slice(0, 2);
    expect(
      ((await get(`${u}/v1/markets?id=${two[0]?.id}&id=${two[1]?.id}`)).json as { markets: Market[] }).markets,
    ).toEqual(two);
    const closed = ((await get(`${u}/v1/markets?closed=true&limit=100`)).json as { markets: Market[] }).markets;
    expect(closed.length).toBeGreaterThan(0);
    expect(closed.every((m) => m.closed)).toBe(true);
    expect((await get(`${u}/v1/markets?closed=maybe`)).status).toBe(400);
  });

  test('events by id and slug equal their listing entry', async () => {
    const { events } = (await get(`${u}/v1/events?limit=3`)).json as { events: Array<{ id: string; slug: string }> };
    for (const e of events) {
      expect((await get(`${u}/v1/events/${e.id}`)).json).toEqual({ event: e });
      expect((await get(`${u}/v1/events/slug/${e.slug}`)).json).toEqual({ event: e });
    }
  });

  test('events: tagIds keeps events with any of the tags, excludeTagId drops those with any; both repeated', async () => {
    type Ev = { id: string; tags: Array<{ id: string; slug: string }> };
    const events = async (q: string) => ((await get(`${u}/v1/events?limit=1000${q}`)).json as { events: Ev[] }).events;
    const all = await events('');
    const tagged = (e: Ev, ...ids: string[]) => e.tags.some((t) => ids.includes(t.id));
    const nba = all.find((e) => e.tags.some((t) => t.slug === 'nba'))?.tags.find((t) => t.slug === 'nba')?.id as string;
    const fed = all.find((e) => e.tags.some((t) => t.slug === 'fed'))?.tags.find((t) => t.slug === 'fed')?.id as string;
    expect(all.some((e) => tagged(e, nba)) && all.some((e) => tagged(e, fed))).toBe(true);
    expect(all.some((e) => !tagged(e, nba, fed))).toBe(true);
    expect(await events(`&tagIds=${nba}`)).toEqual(all.filter((e) => tagged(e, nba)));
    expect(await events(`&tagIds=${nba}&tagIds=${fed}`)).toEqual(all.filter((e) => tagged(e, nba, fed)));
    expect(await events(`&excludeTagId=${nba}`)).toEqual(all.filter((e) => !tagged(e, nba)));
    expect(await events(`&excludeTagId=${nba}&excludeTagId=${fed}`)).toEqual(all.filter((e) => !tagged(e, nba, fed)));
    expect(await events(`&tagIds=${nba}&excludeTagId=${nba}`)).toEqual([]);
    expect(await events('&tagIds=999')).toEqual([]);
    for (const q of ['tagIds=nba', 'excludeTagId=1.5', 'tagIds=4294967296']) {
      const bad = await get(`${u}/v1/events?${q}`);
      expect([bad.status, (bad.json as { code: number }).code]).toEqual([400, 3]);
    }
  });

  test('settlement: the docs’ {slug, settlement} once settled, 404 before', async () => {
    const closed = ((await get(`${u}/v1/markets?closed=true&limit=100`)).json as { markets: Market[] }).markets;
    const settlements = await Promise.all(
      closed.map(
        async (m) => (await get(`${u}/v1/markets/${m.slug}/settlement`)).json as { slug: string; settlement: number },
      ),
    );
    expect(settlements.map((s) => s.slug)).toEqual(closed.map((m) => m.slug));
    expect(settlements.every((s) => s.settlement === 0 || s.settlement === 1)).toBe(true);
    expect(settlements.some((s) => s.settlement === 1)).toBe(true);
    const open = sim.books.tickers('venue-a-us')[0] as string;
    expect((await get(`${u}/v1/markets/${open}/settlement`)).status).toBe(404);
    expect((await get(`${u}/v1/markets/no-such-market/settlement`)).status).toBe(404);
  });

  test('book and BBO wrapped in marketData, the best prices equal', async () => {
    const slug = sim.books.tickers('venue-a-us')[0] as string;
    const book = (await get(`${u}/v1/markets/${slug}/book`)).json as {
      marketData: { bids: Array<{ px: { value: string } }>; offers: Array<{ px: { value: string } }> };
    };
    const bbo = (await get(`${u}/v1/markets/${slug}/bbo`)).json as {
      marketData: { bestBid: { value: string }; bestAsk: { value: string }; bidDepth: number };
    };
    expect(bbo.marketData.bestBid.value).toBe(book.marketData.bids[0]?.px.value);
    expect(bbo.marketData.bestAsk.value).toBe(book.marketData.offers[0]?.px.value);
    expect(bbo.marketData.bidDepth).toBe(book.marketData.bids.length);
  });

  test('series: active/closed/archived, the filters and limit honoured, one by /v1/series/id/{id}', async () => {
    const all = ((await get(`${u}/v1/series?limit=100`)).json as { series: Series[] }).series;
    expect(all.length).toBeGreaterThan(2);
    for (const s of all) {
      expect(s).toMatchObject({
        id: expect.stringMatching(/^\d+$/),
        active: expect.any(Boolean),
        closed: expect.any(Boolean),
        archived: expect.any(Boolean),
      });
      expect((await get(`${u}/v1/series/id/${s.id}`)).json).toEqual({ series: s });
    }
    expect(((await get(`${u}/v1/series?limit=2`)).json as { series: Series[] }).series).toEqual(all.slice(0, 2));
    expect(((await get(`${u}/v1/series?limit=2&offset=1`)).json as { series: Series[] }).series).toEqual(
      all.slice(1, 3),
    );
    const archived = ((await get(`${u}/v1/series?archived=true`)).json as { series: Series[] }).series;
    expect(archived.length).toBeGreaterThan(0);
    expect(archived).toEqual(all.filter((s) => s.archived));
    expect(((await get(`${u}/v1/series?active=true&limit=100`)).json as { series: Series[] }).series).toEqual(
      all.filter((s) => s.active),
    );
    const slug = all[1]?.slug as string;
    expect(((await get(`${u}/v1/series?slug=${slug}`)).json as { series: Series[] }).series).toEqual([all[1]]);
    expect((await get(`${u}/v1/series/id/424242`)).status).toBe(404);
    expect((await get(`${u}/v1/series?limit=-1`)).status).toBe(400);
  });

  test('sports (legacy docs shape), teams and teams by provider keyed by the requested id', async () => {
    const sports = ((await get(`${u}/v1/sports`)).json as { sports: Array<Record<string, unknown>> }).sports;
    expect(sports[0]).toEqual(
      expect.objectContaining({
        sport: 'nba',
        series: expect.any(String),
        tags: expect.any(String),
        isOperational: true,
      }),
    );
    const nba = (
      (await get(`${u}/v1/sports/teams?filters.league=nba`)).json as {
        teams: Array<{ id: string; league: string; providerIds: Array<{ provider: string; providerId: string }> }>;
      }
    ).teams;
    expect(nba.length).toBeGreaterThan(1);
    expect(nba.every((t) => t.league === 'nba' && /^\d+$/.test(t.id))).toBe(true);
    const [first, second] = nba;
    const byId = (await get(`${u}/v1/sports/teams/provider?teamIds=${first?.id}&teamIds=${second?.id}`)).json as {
      teams: Record<string, unknown>;
    };
    expect(byId.teams).toEqual({ [first?.id as string]: first, [second?.id as string]: second });
    const sr = first?.providerIds.find((p) => p.provider === 'PROVIDER_SPORTRADAR')?.providerId as string;
    expect(
      (await get(`${u}/v1/sports/teams/provider?provider=PROVIDER_SPORTRADAR&teamIds=${encodeURIComponent(sr)}`)).json,
    ).toEqual({ teams: { [sr]: first } });
    expect(
      Object.keys(((await get(`${u}/v1/sports/teams/provider?league=nfl`)).json as { teams: object }).teams),
    ).toEqual(expect.arrayContaining([expect.any(String)]));
    expect((await get(`${u}/v1/sports/teams/provider?provider=NOPE`)).status).toBe(400);
  });

  test('teams: filters.name, filters.abbreviation, filters.id (each repeated) with filters.league; ordered and paged', async () => {
    type Team = { id: string; name: string; abbreviation: string; league: string };
    const teams = async (q: string) => ((await get(`${u}/v1/sports/teams?${q}`)).json as { teams: Team[] }).teams;
    const all = await teams('');
    expect(all.length).toBeGreaterThan(3);
    const [a, b, c] = all as [Team, Team, Team];
    expect(await teams(`filters.name=${encodeURIComponent(a.name)}`)).toEqual([a]);
    expect(
      await teams(`filters.name=${encodeURIComponent(a.name)}&filters.name=${encodeURIComponent(c.name)}`),
    ).toEqual([a, c]);
    expect(await teams(`filters.abbreviation=${b.abbreviation}&filters.abbreviation=${c.abbreviation}`)).toEqual([
      b,
      c,
    ]);
    expect(await teams(`filters.id=${c.id}&filters.id=${a.id}`)).toEqual([a, c]);
    expect(await teams('filters.name=nobody')).toEqual([]);
    // The filters combine (AND): a team of another league is not found by its id.
    const other = all.find((t) => t.league !== a.league) as Team;
    expect(await teams(`filters.league=${a.league}&filters.id=${other.id}&filters.id=${a.id}`)).toEqual([a]);
    // Ordered by the team's fields, ties by id; then offset and limit.
    const byName = [...all].sort((x, y) => (x.name < y.name ? -1 : 1));
    expect(await teams('orderBy=name')).toEqual(byName);
    expect(await teams('orderBy=name&orderDirection=desc')).toEqual([...byName].reverse());
    const byLeague = await teams('orderBy=league&orderDirection=desc');
    expect(byLeague.map((t) => t.league)).toEqual([...all.map((t) => t.league)].sort().reverse());
    expect(byLeague.filter((t) => t.league === a.league)).toEqual(all.filter((t) => t.league === a.league));
    expect(await teams('orderBy=name&limit=2&offset=1')).toEqual(byName.slice(1, 3));
    for (const [q, message] of [
      ['filters.id=LAL', 'parsing field "filters.id": invalid int32 "LAL"'],
      ['orderBy=colour', 'invalid orderBy field "colour" (one of id, name, abbreviation, league, alias)'],
      ['orderDirection=up', 'parsing field "orderDirection": invalid direction (asc or desc) "up"'],
    ]) {
      const bad = await get(`${u}/v1/sports/teams?${q}`);
      expect([bad.status, bad.json]).toEqual([400, { code: 3, message, details: [] }]);
    }
  });

  test('the signed account: one open order (by id too), a position, activities, balances; 401 unsigned', async () => {
    for (const path of [
      '/v1/orders/open',
      '/v1/portfolio/positions',
      '/v1/portfolio/activities',
      '/v1/account/balances',
    ]) {
      const open = await get(`${a}${path}`);
      expect([path, open.status, open.json]).toEqual([path, 401, { code: 16, message: 'Unauthorized', details: [] }]);
    }
    const { orders } = (await get(`${a}/v1/orders/open`, signed('/v1/orders/open'))).json as {
      orders: Array<{
        id: string;
        marketSlug: string;
        price: { value: string };
        quantity: number;
        leavesQuantity: number;
      }>;
    };
    expect(orders).toHaveLength(1);
    const order = orders[0] as (typeof orders)[0];
    expect(order.leavesQuantity).toBe(order.quantity);
    const path = `/v1/order/${order.id}`;
    expect((await get(`${a}${path}`, signed(path))).json).toEqual({ order });
    expect(sim.requests({ platform: 'venue-a-us/auth', pathPrefix: '/v1/order/' }).at(-1)?.auth).toBe('valid');
    const other = '/v1/order/nope';
    expect((await get(`${a}${other}`, signed(other))).status).toBe(404);
    expect(
      ((await get(`${a}/v1/orders/open?slugs=elsewhere`, signed('/v1/orders/open'))).json as { orders: unknown[] })
        .orders,
    ).toEqual([]);

    const positions = (await get(`${a}/v1/portfolio/positions`, signed('/v1/portfolio/positions'))).json as {
      positions: Record<string, { netPosition: string; cost: { value: string } }>;
      eof: boolean;
    };
    expect(Object.keys(positions.positions)).toEqual([order.marketSlug]);
    const activities = (await get(`${a}/v1/portfolio/activities`, signed('/v1/portfolio/activities'))).json as {
      activities: Array<{ type: string; trade?: { qty: string; costBasis: { value: string } } }>;
    };
    expect(activities.activities.map((x) => x.type)).toEqual(['ACTIVITY_TYPE_TRADE', 'ACTIVITY_TYPE_ACCOUNT_DEPOSIT']);
    const trade = activities.activities[0]?.trade;
    expect(trade?.qty).toBe(positions.positions[order.marketSlug]?.netPosition);
    expect(trade?.costBasis.value).toBe(positions.positions[order.marketSlug]?.cost.value);
    const trades = (
      await get(
        `${a}/v1/portfolio/activities?types=ACTIVITY_TYPE_TRADE&sortOrder=SORT_ORDER_ASCENDING`,
        signed('/v1/portfolio/activities'),
      )
    ).json as { activities: unknown[] };
    expect(trades.activities).toHaveLength(1);
    // Cash: the deposit less the fill's cost; the resting order's notional is reserved from buying power.
    const { balances } = (await get(`${a}/v1/account/balances`, signed('/v1/account/balances'))).json as {
      balances: Array<{ currentBalance: number; buyingPower: number; openOrders: number }>;
    };
    const cents = (v: number | string) => Math.round(Number(v) * 1000);
    expect(cents(balances[0]?.currentBalance as number)).toBe(1_000_000 - cents(trade?.costBasis.value as string));
    expect(cents(balances[0]?.buyingPower as number)).toBe(
      cents(balances[0]?.currentBalance as number) - order.quantity * cents(order.price.value),
    );
  });
});
