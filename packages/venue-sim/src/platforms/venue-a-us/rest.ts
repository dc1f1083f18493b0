// https://docs.polymarket.us/api-reference/introduction
import { formatScaled } from '../../core/decimal';
import { isoMillis } from '../../core/time';
import type { BookEngine } from '../../book/engine';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { type AuthInput, json, type PlatformErrors, type SimRequest } from '../../http/types';
import type { PlatformContext } from '../context';
import { verifyPmUs } from './auth';
import type { PmCatalog, PmEventDef, PmMarketDef } from './catalog';
import { filterEvents, parseEventsQuery } from './events-filter';

/**
 * The 429 body is documented ([V], rate-limits.md). The gateway is a grpc-gateway (protos/gateway/...), so other
 * errors use its `{code, message, details}` shape with gRPC codes ([U]: not documented).
 */
export const pmUsErrors: PlatformErrors = {
  notFound: () => json(404, { code: 5, message: 'Not Found', details: [] }),
  unauthorized: () => json(401, { code: 16, message: 'Unauthorized', details: [] }),
  rateLimited: () => json(429, { status: 429, message: 'Too Many Requests' }),
  serverError: (status) => json(status, { code: 13, message: 'Internal Server Error', details: [] }),
};

const invalid = (message: string) => json(400, { code: 3, message, details: [] });
const amount = (e3: number) => ({ value: formatScaled(e3, 3), currency: 'USD' });

/** A Polymarket US `MarketData` object for a slug, from the live book (shared by REST and the feed). */
export function marketData(engine: BookEngine, slug: string, lastTs: number | null): Record<string, unknown> {
  const book = engine.book('polymarketUs', slug);
  const levels = (side: 'bids' | 'asks') =>
    (book ? book[side].levels() : []).map(([p, q]) => ({ px: amount(p), qty: formatScaled(q, 2) }));
  return {
    marketSlug: slug,
    bids: levels('bids'),
    offers: levels('asks'),
    state: book ? 'MARKET_STATE_OPEN' : 'MARKET_STATE_EXPIRED',
    stats: {},
    ...(lastTs !== null ? { transactTime: isoMillis(lastTs) } : {}),
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

  const marketJson = (m: PmMarketDef) => {
    const book = engine.book('polymarketUs', m.slug);
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
      status: m.closed ? 'MARKET_STATUS_SETTLED' : 'MARKET_STATUS_OPEN',
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
    liquidity: e.liquidityCents / 100,
    volume: e.volumeCents / 100,
    category: e.category,
    seriesSlug: e.series.slug,
    series: e.series,
    tags: e.tags,
    markets: e.markets.map(marketJson),
  });

  const lastTs = (slug: string) => engine.lastTs('polymarketUs', slug) ?? null;

  const pub = new Router();
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
    const e = catalog.events.find((x) => x.id === req.pathParams.id);
    return e ? json(200, { event: eventJson(e) }) : pmUsErrors.notFound(req);
  });
  pub.get('/v1/markets', (req) => {
    const limit = Number(req.params.get('limit') ?? 20);
    const offset = Number(req.params.get('offset') ?? 0);
    if (!Number.isInteger(limit) || !Number.isInteger(offset) || limit < 0 || offset < 0) {
      return invalid('invalid limit or offset');
    }
    let list = catalog.markets;
    const slugs = req.params.getAll('slug');
    if (slugs.length) list = list.filter((m) => slugs.includes(m.slug));
    const eventSlugs = req.params.getAll('eventSlug');
    if (eventSlugs.length) list = list.filter((m) => eventSlugs.includes(m.eventSlug));
    for (const flag of ['active', 'closed'] as const) {
      const v = req.params.get(flag);
      if (v === 'true' || v === 'false') list = list.filter((m) => m[flag] === (v === 'true'));
    }
    return json(200, { markets: list.slice(offset, offset + limit).map(marketJson) });
  });
  pub.get('/v1/markets/slug/:slug', (req) => {
    const m = catalog.marketsBySlug.get(req.pathParams.slug as string);
    return m ? json(200, { market: marketJson(m) }) : pmUsErrors.notFound(req);
  });
  pub.get('/v1/markets/:slug/book', (req) => {
    const slug = req.pathParams.slug as string;
    if (!catalog.marketsBySlug.has(slug)) return pmUsErrors.notFound(req);
    return json(200, { marketData: marketData(engine, slug, lastTs(slug)) });
  });
  pub.get('/v1/markets/:slug/bbo', (req) => {
    const slug = req.pathParams.slug as string;
    if (!catalog.marketsBySlug.has(slug)) return pmUsErrors.notFound(req);
    const book = engine.book('polymarketUs', slug);
    const bid = book?.bids.best();
    const ask = book?.asks.best();
    return json(200, {
      marketData: {
        marketSlug: slug,
        ...(bid !== undefined ? { bestBid: amount(bid) } : {}),
        ...(ask !== undefined ? { bestAsk: amount(ask) } : {}),
        bidDepth: book?.bids.size ?? 0,
        askDepth: book?.asks.size ?? 0,
        state: book ? 'MARKET_STATE_OPEN' : 'MARKET_STATE_EXPIRED',
      },
    });
  });
  pub.get('/v1/markets/:id', (req) => {
    const m = catalog.markets.find((x) => x.id === req.pathParams.id);
    return m ? json(200, { market: marketJson(m) }) : pmUsErrors.notFound(req);
  });
  pub.get('/v1/series', () => json(200, { series: catalog.series }));
  pub.get('/v1/series/:id', (req) => {
    const s = catalog.series.find((x) => String(x.id) === req.pathParams.id);
    return s ? json(200, { series: s }) : pmUsErrors.notFound(req);
  });
  pub.get('/v1/tags', () => json(200, { tags: catalog.tags }));
  pub.get('/v1/search', (req: SimRequest) => {
    const q = (req.params.get('query') ?? req.params.get('q') ?? '').toLowerCase();
    const events = catalog.events.filter((e) => q === '' || e.title.toLowerCase().includes(q) || e.slug.includes(q));
    return json(200, { events: events.map(eventJson) });
  });
  // Legacy v1 sports data (sports-legacy-schema.json) [V].
  pub.get('/v1/sports', () =>
    json(200, {
      sports: [
        {
          id: 1,
          sport: 'nba',
          label: 'NBA',
          seriesId: 1,
          tags: '1,2',
          ordering: 'home',
          resolution: 'https://www.nba.com',
        },
        {
          id: 2,
          sport: 'nfl',
          label: 'NFL',
          seriesId: 4,
          tags: '1,7',
          ordering: 'home',
          resolution: 'https://www.nfl.com',
        },
      ],
    }),
  );
  pub.get(
    '/v1/sports/teams',
    (req) => {
      const league = req.params.get('filters.league');
      const limit = Number(req.params.get('limit') ?? 100);
      const offset = Number(req.params.get('offset') ?? 0);
      const teams = TEAMS.filter((t) => !league || t.league === league);
      return json(200, { teams: teams.slice(offset, offset + limit) });
    },
    opts.assumptions.polymarketUsTeamsRequiresAuth ? 'required' : 'none',
  );

  const priv = new Router();
  priv.get('/v1/portfolio/positions', () => json(200, { positions: {}, eof: true }), 'required');
  priv.get('/v1/portfolio/activities', () => json(200, { activities: [] }), 'required');
  priv.get(
    '/v1/account/balances',
    () => json(200, { balances: [{ currency: 'USD', currentBalance: 1000, buyingPower: 1000 }] }),
    'required',
  );
  priv.get('/v1/orders/open', () => json(200, { orders: [] }), 'required');

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

const TEAMS = [
  { id: 101, name: 'Los Angeles Lakers', abbreviation: 'LAL', league: 'nba', alias: 'Lakers', safeName: 'lakers' },
  { id: 102, name: 'Boston Celtics', abbreviation: 'BOS', league: 'nba', alias: 'Celtics', safeName: 'celtics' },
  { id: 103, name: 'New York Knicks', abbreviation: 'NYK', league: 'nba', alias: 'Knicks', safeName: 'knicks' },
  { id: 104, name: 'Miami Heat', abbreviation: 'MIA', league: 'nba', alias: 'Heat', safeName: 'heat' },
  { id: 201, name: 'Kansas City Chiefs', abbreviation: 'KC', league: 'nfl', alias: 'Chiefs', safeName: 'chiefs' },
  { id: 202, name: 'Buffalo Bills', abbreviation: 'BUF', league: 'nfl', alias: 'Bills', safeName: 'bills' },
];
