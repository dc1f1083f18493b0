// https://docs.polymarket.us/api-reference/introduction
import { pmUsWire } from '@depthgate/feeds';
import { formatScaled, scaledNumber } from '../../core/decimal';
import { isoMillis } from '../../core/time';
import type { BookEngine } from '../../book/engine';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { type AuthInput, json, type SimRequest } from '../../http/types';
import type { PlatformContext } from '../context';
import { verifyPmUs } from './auth';
import type { PmCatalog, PmEventDef, PmMarketDef } from './catalog';
import { pmUsAccountRoutes } from './account';
import { filterEvents, parseEventsQuery, parseInt32s, parseListQuery, parseOrder, sortByOrder } from './events-filter';
import { amount, int32, invalid, pmUsErrors } from './wire';

/**
 * A market's `stats` [V] (`MarketStats`: `lastTradePx`, `sharesTraded`, `openInterest`, `highPx`, `lowPx`), from the
 * trades the engine published: `sharesTraded` the quantity traded since the simulator started (a decimal string with
 * the quantity's 2 decimals, as `qty`), `lastTradePx` the last trade's price, `highPx`/`lowPx` the highest and lowest
 * traded since the start (the venue's period for them is [U]); the prices are absent before the first trade. No
 * `openInterest`: the engine keeps no positions.
 */
export function marketStats(engine: BookEngine, slug: string): Record<string, unknown> {
  const stats = engine.tradeStats('venue-a-us', slug);
  const last = engine.lastTrade('venue-a-us', slug);
  return {
    ...(last !== undefined ? { lastTradePx: amount(last.price) } : {}),
    sharesTraded: formatScaled(stats?.volume ?? 0n, 2),
    ...(stats?.high !== undefined ? { highPx: amount(stats.high) } : {}),
    ...(stats?.low !== undefined ? { lowPx: amount(stats.low) } : {}),
  };
}

/** A Polymarket US `MarketData` object for a slug, from the live book (shared by REST and the feed). */
export function marketData(engine: BookEngine, slug: string, lastTs: number | null): Record<string, unknown> {
  const book = engine.book('venue-a-us', slug);
  const levels = (side: 'bids' | 'asks') =>
    (book ? book[side].levels() : []).map(([p, q]) => [formatScaled(p, 3), formatScaled(q, 2)] as const);
  return pmUsWire.marketData({
    slug,
    bids: levels('bids'),
    offers: levels('asks'),
    state: book ? 'MARKET_STATE_OPEN' : 'MARKET_STATE_EXPIRED',
    stats: marketStats(engine, slug),
    transactTime: lastTs !== null ? isoMillis(lastTs) : undefined,
  });
}

/**
 * A Polymarket US `MarketDataLite` [V] (the MARKET_DATA_LITE message's `marketDataLite`, and the BBO's `marketData`):
 * `currentPx` (the mid), `bestBid`, `bestAsk`, `bidDepth`/`askDepth` (levels per side), `lastTradePx` and
 * `sharesTraded` as in `marketStats`. No `openInterest` (see there).
 */
export function marketDataLite(engine: BookEngine, slug: string): Record<string, unknown> {
  const book = engine.book('venue-a-us', slug);
  const bid = book?.bids.best();
  const ask = book?.asks.best();
  const { lastTradePx, sharesTraded } = marketStats(engine, slug);
  return {
    marketSlug: slug,
    ...(bid !== undefined && ask !== undefined ? { currentPx: amount((bid + ask) / 2) } : {}),
    ...(bid !== undefined ? { bestBid: amount(bid) } : {}),
    ...(ask !== undefined ? { bestAsk: amount(ask) } : {}),
    bidDepth: book?.bids.size ?? 0,
    askDepth: book?.asks.size ?? 0,
    ...(lastTradePx !== undefined ? { lastTradePx } : {}),
    sharesTraded,
  };
}

export function pmUsHosts(ctx: PlatformContext, catalog: PmCatalog): { pub: SimHost; auth: SimHost } {
  const { engine, opts, credentials, keys } = ctx;
  const verify = (input: AuthInput) =>
    verifyPmUs(input, {
      accessKey: credentials.polymarketUs.accessKey,
      publicKey: keys.polymarketUsPublicKey,
      toleranceMs: opts.assumptions.polymarketUsTimestampToleranceMs,
      now: ctx.clock,
    });

  // Ids of events, markets, series and tags are strings on the wire (docs' schemas); polymarket-us 0.1.1 types them
  // as numbers. The docs win. The SDK's `outcome` (not in the docs' Market) is sent too. An event names its series by
  // `seriesSlug` (events-schema.json `gateway.market.v1.Event` has no `series` object; the SDK's is optional).
  const marketJson = (m: PmMarketDef) => {
    const book = engine.book('venue-a-us', m.slug);
    const bid = book?.bids.best();
    const ask = book?.asks.best();
    return {
      id: m.id,
      question: m.question,
      slug: m.slug,
      title: m.title,
      outcome: m.outcome,
      eventSlug: m.eventSlug,
      category: m.category,
      startDate: m.startDate,
      endDate: m.endDate,
      active: m.active,
      closed: m.closed,
      archived: false,
      orderPriceMinTickSize: 0.01,
      minimumTradeQty: 0.01,
      volume: m.volume,
      ...(bid !== undefined ? { bestBidQuote: amount(bid) } : {}),
      ...(ask !== undefined ? { bestAskQuote: amount(ask) } : {}),
      status: m.closed ? 'MARKET_STATUS_RESOLVED' : 'MARKET_STATUS_OPEN',
    };
  };

  const eventJson = (e: PmEventDef) => ({
    id: e.id,
    ticker: e.ticker,
    slug: e.slug,
    title: e.title,
    description: e.description,
    startDate: e.startDate,
    endDate: e.endDate,
    creationDate: e.createdAt,
    createdAt: e.createdAt,
    updatedAt: e.createdAt,
    active: e.active,
    closed: e.closed,
    archived: e.archived,
    featured: e.featured,
    live: e.live,
    ended: e.ended,
    liquidity: scaledNumber(e.liquidityCents, 2),
    volume: scaledNumber(e.volumeCents, 2),
    category: e.category,
    seriesSlug: e.series.slug,
    tags: e.tags,
    markets: e.markets.map(marketJson),
  });

  const lastTs = (slug: string) => engine.lastTs('venue-a-us', slug) ?? null;

  const pub = new Router();
  // Events [V]: every filter of the docs and the SDK (events-filter.ts).
  pub.get('/v1/events', (req) => {
    const parsed = parseEventsQuery(req.params);
    if (!parsed.ok) return invalid(parsed.message);
    return json(200, { events: filterEvents(catalog.events, parsed.query).map(eventJson) });
  });
  pub.get('/v1/events/slug/:slug', (req) => {
    const e = catalog.events.find((x) => x.slug === req.pathParams.slug);
    return e ? json(200, { event: eventJson(e) }) : pmUsErrors.notFound(req);
  });
  pub.get('/v1/events/:id', (req) => {
    const id = int32(req.pathParams.id, 'id');
    if (typeof id !== 'number') return id;
    const e = catalog.events.find((x) => Number(x.id) === id);
    return e ? json(200, { event: eventJson(e) }) : pmUsErrors.notFound(req);
  });

  // Markets [V]: the list, and one market by id or slug under the singular `/v1/market/…` (markets-schema.json).
  pub.get('/v1/markets', (req) => {
    const parsed = parseListQuery(req.params, ['active', 'closed', 'archived'] as const);
    if (!parsed.ok) return invalid(parsed.message);
    const { limit, offset, flags } = parsed.query;
    const ids = req.params.getAll('id');
    const slugs = req.params.getAll('slug');
    const eventSlugs = req.params.getAll('eventSlug');
    const categories = req.params.getAll('categories').map((c) => c.toLowerCase());
    const list = catalog.markets.filter(
      (m) =>
        (flags.active === undefined || m.active === flags.active) &&
        (flags.closed === undefined || m.closed === flags.closed) &&
        (flags.archived === undefined || !flags.archived) &&
        (ids.length === 0 || ids.includes(m.id)) &&
        (slugs.length === 0 || slugs.includes(m.slug)) &&
        (eventSlugs.length === 0 || eventSlugs.includes(m.eventSlug)) &&
        (categories.length === 0 || categories.includes(m.category.toLowerCase())),
    );
    return json(200, { markets: list.slice(offset, offset + limit).map(marketJson) });
  });
  pub.get('/v1/market/id/:id', (req) => {
    const id = int32(req.pathParams.id, 'id');
    if (typeof id !== 'number') return id;
    const m = catalog.markets.find((x) => Number(x.id) === id);
    return m ? json(200, { market: marketJson(m) }) : pmUsErrors.notFound(req);
  });
  pub.get('/v1/market/slug/:slug', (req) => {
    const m = catalog.marketsBySlug.get(req.pathParams.slug as string);
    return m ? json(200, { market: marketJson(m) }) : pmUsErrors.notFound(req);
  });
  // Book and BBO are wrapped in `marketData` on the wire (docs, GetMarketBookResponse / GetMarketBBOResponse);
  // polymarket-us 0.1.1 declares the inner objects at the top level. The docs win: SDK users read `.marketData`.
  pub.get('/v1/markets/:slug/book', (req) => {
    const slug = req.pathParams.slug as string;
    if (!catalog.marketsBySlug.has(slug)) return pmUsErrors.notFound(req);
    return json(200, { marketData: marketData(engine, slug, lastTs(slug)) });
  });
  pub.get('/v1/markets/:slug/bbo', (req) => {
    const slug = req.pathParams.slug as string;
    if (!catalog.marketsBySlug.has(slug)) return pmUsErrors.notFound(req);
    const book = engine.book('venue-a-us', slug);
    return json(200, {
      marketData: { ...marketDataLite(engine, slug), state: book ? 'MARKET_STATE_OPEN' : 'MARKET_STATE_EXPIRED' },
    });
  });
  // The docs' `{slug, settlement}` (a decimal number); the SDK declares `{marketSlug, settlementPrice, settledAt}`.
  // The docs win. 404 until the market has settled [V].
  pub.get('/v1/markets/:slug/settlement', (req) => {
    const m = catalog.marketsBySlug.get(req.pathParams.slug as string);
    if (!m || m.settlement === null)
      return json(404, { code: 5, message: 'market not found or not settled', details: [] });
    return json(200, { slug: m.slug, settlement: m.settlement });
  });

  // Series [V]: paged, filtered by slug, status and recurrence; one series under `/v1/series/id/{id}`.
  pub.get('/v1/series', (req) => {
    const parsed = parseListQuery(req.params, ['active', 'closed', 'archived'] as const);
    if (!parsed.ok) return invalid(parsed.message);
    const { limit, offset, flags } = parsed.query;
    const slugs = req.params.getAll('slug');
    const recurrence = req.params.get('recurrence');
    const list = catalog.series.filter(
      (x) =>
        (flags.active === undefined || x.active === flags.active) &&
        (flags.closed === undefined || x.closed === flags.closed) &&
        (flags.archived === undefined || x.archived === flags.archived) &&
        (slugs.length === 0 || slugs.includes(x.slug)) &&
        (!recurrence || x.recurrence === recurrence),
    );
    return json(200, { series: list.slice(offset, offset + limit) });
  });
  pub.get('/v1/series/id/:id', (req) => {
    const id = int32(req.pathParams.id, 'id');
    if (typeof id !== 'number') return id;
    const x = catalog.series.find((s) => Number(s.id) === id);
    return x ? json(200, { series: x }) : pmUsErrors.notFound(req);
  });
  pub.get('/v1/tags', () => json(200, { tags: catalog.tags }));
  pub.get('/v1/search', (req: SimRequest) => {
    const q = (req.params.get('query') ?? req.params.get('q') ?? '').toLowerCase();
    const events = catalog.events.filter((e) => q === '' || e.title.toLowerCase().includes(q) || e.slug.includes(q));
    return json(200, { events: events.map(eventJson) });
  });

  // Legacy v1 sports (sports-legacy-schema.json) [V]: `Sport{sport, image, resolution, ordering, tags, series,
  // isOperational, automaticResolution}`. polymarket-us 0.1.1 declares `{id, name, slug, leagues?}`, which the docs'
  // legacy schema does not have; the docs win.
  pub.get('/v1/sports', () =>
    json(200, {
      sports: SPORTS.map((x) => ({
        sport: x.sport,
        image: `https://polymarket.us/images/sports/${x.sport}.png`,
        resolution: x.resolution,
        ordering: 'home',
        tags: x.tags,
        series: x.series,
        isOperational: true,
        automaticResolution: true,
      })),
    }),
  );
  const teamsRequireAuth = opts.assumptions.polymarketUsTeamsRequiresAuth ? 'required' : 'none';
  // Teams [V] (sports-legacy-schema.json): `filters.league`, `filters.name`, `filters.abbreviation` (repeated strings,
  // matched exactly [U]) and `filters.id` (repeated int32), then `orderBy`/`orderDirection` as the events' (over the
  // team's own fields), then `offset` and `limit` (default 100 [U]).
  pub.get(
    '/v1/sports/teams',
    (req) => {
      const parsed = parseListQuery(req.params, [] as const, 100);
      if (!parsed.ok) return invalid(parsed.message);
      const order = parseOrder(req.params, TEAM_ORDER_FIELDS);
      if (!order.ok) return invalid(order.message);
      const ids = parseInt32s(req.params, 'filters.id');
      if (!ids.ok) return invalid(ids.message);
      const { limit, offset } = parsed.query;
      const leagues = req.params.getAll('filters.league');
      const names = req.params.getAll('filters.name');
      const abbreviations = req.params.getAll('filters.abbreviation');
      const match = <T>(wanted: T[], v: T) => wanted.length === 0 || wanted.includes(v);
      const teams = TEAMS.filter(
        (t) =>
          match(leagues, t.league) &&
          match(names, t.name) &&
          match(abbreviations, t.abbreviation) &&
          match(ids.values, Number(t.id)),
      );
      sortByOrder(
        teams,
        order.order,
        (t, f) => (f === 'id' ? Number(t.id) : t[f as TeamOrderField]),
        (t) => Number(t.id),
      );
      return json(200, { teams: teams.slice(offset, offset + limit).map(teamJson) });
    },
    teamsRequireAuth,
  );
  // Teams by provider [V] (`GetSportsTeamsForProviderResponse`): a map keyed by the requested team id, which is the
  // provider's id when `provider` is given, else ours (the key's meaning is [U]).
  pub.get('/v1/sports/teams/provider', (req) => {
    const provider = req.params.get('provider');
    if (provider !== null && !PROVIDERS.includes(provider)) {
      return invalid(`parsing field "provider": invalid value "${provider}"`);
    }
    const league = req.params.get('league');
    const wanted = req.params.getAll('teamIds');
    const key = (t: (typeof TEAMS)[number]) =>
      provider ? (t.providerIds.find((p) => p.provider === provider)?.providerId ?? '') : t.id;
    const teams = TEAMS.filter(
      (t) => (!league || t.league === league) && key(t) !== '' && (wanted.length === 0 || wanted.includes(key(t))),
    );
    return json(200, { teams: Object.fromEntries(teams.map((t) => [key(t), teamJson(t)])) });
  });

  const priv = new Router();
  pmUsAccountRoutes(priv, ctx, catalog);

  return {
    pub: {
      router: pub,
      errors: pmUsErrors,
      verify,
      rejectInvalidOnPublic: opts.assumptions.rejectInvalidAuthOnPublicRoutes,
    },
    auth: {
      router: priv,
      errors: pmUsErrors,
      verify,
      rejectInvalidOnPublic: opts.assumptions.rejectInvalidAuthOnPublicRoutes,
    },
  };
}

/** Legacy sports: `series` and `tags` are comma-separated id strings in the docs' schema. */
const SPORTS = [
  { sport: 'nba', resolution: 'https://www.nba.com', tags: '1,2', series: '1' },
  { sport: 'nfl', resolution: 'https://www.nfl.com', tags: '1,7', series: '4' },
];

/** Team providers the docs enumerate for `/v1/sports/teams/provider`. */
const PROVIDERS = [
  'PROVIDER_SPORTSDATAIO',
  'PROVIDER_SPORTRADAR',
  'PROVIDER_OPTICODDS',
  'PROVIDER_PANDASCORE',
  'PROVIDER_INFRONT',
  'PROVIDER_ENETPULSE',
  'PROVIDER_UFC',
];

/** The fields `/v1/sports/teams` orders by. [U]: the docs say only "Order by field". */
const TEAM_ORDER_FIELDS = ['id', 'name', 'abbreviation', 'league', 'alias'] as const;
type TeamOrderField = (typeof TEAM_ORDER_FIELDS)[number];

/** Teams. The docs' `SportsTeam.id` is an int64 string; polymarket-us 0.1.1 types it as a number (the docs win). */
const TEAMS = [
  team('101', 'Los Angeles Lakers', 'LAL', 'nba', 'Lakers', 3400),
  team('102', 'Boston Celtics', 'BOS', 'nba', 'Celtics', 3407),
  team('103', 'New York Knicks', 'NYK', 'nba', 'Knicks', 3414),
  team('104', 'Miami Heat', 'MIA', 'nba', 'Heat', 3421),
  team('201', 'Kansas City Chiefs', 'KC', 'nfl', 'Chiefs', 3428),
  team('202', 'Buffalo Bills', 'BUF', 'nfl', 'Bills', 3435),
];

function team(id: string, name: string, abbreviation: string, league: string, alias: string, sportradar: number) {
  return {
    id,
    name,
    abbreviation,
    league,
    alias,
    safeName: alias.toLowerCase(),
    // The docs' `SportsTeamProvider` is `{provider, providerId}`; the SDK declares `{provider, id}` (the docs win).
    providerIds: [{ provider: 'PROVIDER_SPORTRADAR', providerId: `sr:competitor:${sportradar}` }],
  };
}

const teamJson = (t: (typeof TEAMS)[number]) => ({
  ...t,
  record: '0-0',
  logo: `https://polymarket.us/images/teams/${t.league}/${t.abbreviation.toLowerCase()}.png`,
});
