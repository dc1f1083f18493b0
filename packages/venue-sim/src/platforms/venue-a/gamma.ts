// https://docs.polymarket.com/api-reference/events/list-events (Gamma API)
import { formatScaled, scaledNumber } from '../../core/decimal';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors, type SimRequest, type SimResponse, text } from '../../http/types';
import { type PlatformContext, boolParam, intParam, numberParam } from '../context';
import {
  type GammaEventDef,
  type GammaMarketDef,
  type PolymarketCatalog,
  USDC_ADDRESS,
  marketDescription,
  polymarketImage,
  rewardsMaxSpread,
} from './catalog';
import { livePrices, outcomeMids, tickSize } from './prices';

/** Gamma's error bodies `{"type": "... error", "error": ...}` [3P] (captured 404s and 422s). */
const gammaErrors: PlatformErrors = {
  notFound: () => json(404, { type: 'not found error', error: 'not found' }),
  unauthorized: () => json(401, { type: 'unauthorized error', error: 'unauthorized' }),
  rateLimited: () => json(429, { type: 'rate limit error', error: 'Too Many Requests' }),
  serverError: (status) => json(status, { type: 'internal error', error: 'internal server error' }),
};

const validation = (error: string) => json(422, { type: 'validation error', error });
const notFound = (error: string) => json(404, { type: 'not found error', error });

/** [3P] `limit` is silently clamped to 100; [U] default page size 20. */
const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;

/** [3P] the keyset lists' largest page (nautilus_trader's Gamma client: markets 100, events 500). */
const KEYSET_MAX = { markets: 100, events: 500 };

/** What a list can be ordered by. */
interface Orderable {
  volumeCents: number;
  liquidityCents: number;
  startDate: string;
  endDate: string;
  id: string;
}

/** The item id a keyset cursor names, or undefined when it is not one of ours. */
function cursorId(cursor: string): string | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string'
      ? (v as { id: string }).id
      : undefined;
  } catch {
    return undefined;
  }
}

/** `{base}/slug/:slug` and `{base}/:id` (a numeric id): one item, or Gamma's 404 (422 for a malformed id). */
function itemRoutes<T extends { id: string; slug: string }>(
  r: Router,
  base: string,
  items: readonly T[],
  render: (item: T) => unknown,
): void {
  r.get(`${base}/slug/:slug`, (req) => {
    const item = items.find((x) => x.slug === req.pathParams.slug);
    return item ? json(200, render(item)) : notFound('slug not found');
  });
  r.get(`${base}/:id`, (req) => {
    if (!/^\d{1,12}$/.test(req.pathParams.id as string)) return validation('id is invalid');
    const item = items.find((x) => x.id === req.pathParams.id);
    return item ? json(200, render(item)) : notFound('id not found');
  });
}

export function gammaHost(ctx: PlatformContext, catalog: PolymarketCatalog): SimHost {
  const { engine } = ctx;
  const r = new Router();

  /** 24 h volume: a thirtieth of the total, in dollars with cents. */
  const volume24hr = (volumeCents: number) => scaledNumber(Math.floor(volumeCents / 30), 2);

  const marketJson = (m: GammaMarketDef) => {
    const p = livePrices(engine, m);
    const [yes, no] = outcomeMids(engine, m).map((v) => formatScaled(v, 3));
    return {
      id: m.id,
      question: m.question,
      conditionId: m.conditionId,
      slug: m.slug,
      resolutionSource: '',
      endDate: m.endDate,
      liquidity: formatScaled(m.liquidityCents, 2),
      startDate: m.startDate,
      image: polymarketImage(m.slug),
      icon: polymarketImage(m.slug),
      description: marketDescription(m),
      // [V] outcomes, outcomePrices and clobTokenIds are JSON-encoded strings, not arrays.
      outcomes: '["Yes", "No"]',
      outcomePrices: JSON.stringify([yes, no]),
      volume: formatScaled(m.volumeCents, 2),
      active: m.active,
      closed: m.closed,
      marketMakerAddress: '',
      createdAt: m.startDate,
      updatedAt: m.startDate,
      new: false,
      featured: false,
      archived: false,
      restricted: true,
      groupItemTitle: m.groupItemTitle,
      questionID: m.questionId,
      enableOrderBook: true,
      orderPriceMinTickSize: Number(tickSize(engine, m)),
      orderMinSize: m.minOrderSize,
      volumeNum: scaledNumber(m.volumeCents, 2),
      liquidityNum: scaledNumber(m.liquidityCents, 2),
      volume24hr: volume24hr(m.volumeCents),
      endDateIso: m.endDate.slice(0, 10),
      startDateIso: m.startDate.slice(0, 10),
      clobTokenIds: JSON.stringify(m.tokens),
      acceptingOrders: true,
      negRisk: m.negRisk,
      ...(m.negRisk ? { negRiskMarketID: m.negRiskMarketId, negRiskRequestID: m.negRiskRequestId } : {}),
      // Not yet proposed for resolution: no UMA status (ccxt reads `umaResolutionStatus` === 'resolved').
      umaResolutionStatuses: '[]',
      ...(m.rewards
        ? {
            rewardsMinSize: m.rewards.minSize,
            rewardsMaxSpread: rewardsMaxSpread(m.rewards),
            clobRewards: [
              {
                id: m.id,
                conditionId: m.conditionId,
                assetAddress: USDC_ADDRESS,
                rewardsAmount: 0,
                rewardsDailyRate: m.rewards.dailyRate,
                startDate: m.rewards.startDate,
                endDate: '2500-12-31',
              },
            ],
          }
        : { rewardsMinSize: 0, rewardsMaxSpread: 0, clobRewards: [] }),
      // The same figures as the CLOB's book (best bid, best ask, the last trade at the best bid).
      bestBid: scaledNumber(p.bid, 2),
      bestAsk: scaledNumber(p.ask, 2),
      spread: scaledNumber(p.ask - p.bid, 2),
      lastTradePrice: scaledNumber(p.bid, 2),
    };
  };

  const eventJson = (e: GammaEventDef) => ({
    id: e.id,
    ticker: e.slug,
    slug: e.slug,
    title: e.title,
    description: e.description,
    resolutionSource: '',
    startDate: e.startDate,
    creationDate: e.createdAt,
    endDate: e.endDate,
    image: polymarketImage(e.slug),
    icon: polymarketImage(e.slug),
    active: e.active,
    closed: e.closed,
    archived: e.archived,
    new: false,
    featured: e.featured,
    restricted: true,
    liquidity: scaledNumber(e.liquidityCents, 2),
    volume: scaledNumber(e.volumeCents, 2),
    volume24hr: volume24hr(e.volumeCents),
    openInterest: 0,
    category: e.tags[0]?.label ?? '',
    createdAt: e.createdAt,
    updatedAt: e.createdAt,
    competitive: 0.9,
    enableOrderBook: true,
    liquidityClob: scaledNumber(e.liquidityCents, 2),
    negRisk: e.negRisk,
    ...(e.negRisk && e.markets[0] ? { negRiskMarketID: e.markets[0].negRiskMarketId } : {}),
    commentCount: 0,
    markets: e.markets.map(marketJson),
    tags: e.tags,
    ...(e.seriesSlug ? { seriesSlug: e.seriesSlug } : {}),
    cyom: false,
    showAllOutcomes: true,
    showMarketImages: true,
  });

  /** Shared list parameters; returns the page or a 422. */
  const listParams = (
    req: SimRequest,
  ): { limit: number; offset: number; ascending: boolean; order?: string } | SimResponse => {
    const limit = intParam(req.params, 'limit');
    const offset = intParam(req.params, 'offset');
    const ascending = boolParam(req.params, 'ascending');
    if (limit === null || (limit ?? 0) < 0) return validation('limit is invalid');
    if (offset === null || (offset ?? 0) < 0) return validation('offset is invalid');
    if (ascending === null) return validation('ascending is invalid');
    const order = req.params.get('order') ?? undefined;
    // [V] `ascending` defaults to true and needs `order`.
    return {
      limit: Math.min(limit ?? DEFAULT_LIMIT, MAX_LIMIT),
      offset: offset ?? 0,
      ascending: ascending ?? true,
      ...(order ? { order } : {}),
    };
  };

  const orderKey = (field: string, item: Orderable) => {
    switch (field) {
      case 'volume':
      case 'volume_24hr':
      case 'volumeNum':
        return item.volumeCents;
      case 'liquidity':
      case 'liquidityNum':
        return item.liquidityCents;
      case 'start_date':
      case 'startDate':
        return Date.parse(item.startDate);
      case 'end_date':
      case 'endDate':
        return Date.parse(item.endDate);
      default:
        return Number(item.id);
    }
  };

  const sortPage = <T extends Orderable>(
    items: T[],
    p: { limit: number; offset: number; ascending: boolean; order?: string },
  ): T[] => {
    return sorted(items, p).slice(p.offset, p.offset + p.limit);
  };

  /** A list in the order asked for (`order`: keys separated by commas; `ascending`), else as catalogued. */
  function sorted<T extends Orderable>(items: readonly T[], p: { ascending: boolean; order?: string }): T[] {
    const list = [...items];
    if (p.order) {
      const fields = p.order.split(',');
      const sign = p.ascending ? 1 : -1;
      list.sort((a, b) => {
        for (const f of fields) {
          const d = orderKey(f, a) - orderKey(f, b);
          if (d !== 0) return sign * d;
        }
        return 0;
      });
    }
    return list;
  }

  /**
   * `{base}/keyset` [V]: the list's filters and order, paged by an opaque cursor — `next_cursor` in the answer (absent
   * on the last page) goes back as `after_cursor`; `offset` is refused. The answer is an object,
   * `{"<name>": [...], "next_cursor": "..."}`. `limit` is clamped to `max` [3P]. The cursor names the page's last item
   * (base64url JSON); one that is malformed or names no item of the list is a 422 [U: Gamma's text].
   */
  function keysetRoute<T extends Orderable>(
    router: Router,
    base: string,
    name: string,
    max: number,
    matching: (req: SimRequest) => T[] | SimResponse,
    render: (item: T) => unknown,
  ): void {
    router.get(`${base}/keyset`, (req) => {
      if (req.params.has('offset')) return validation('offset is not supported: use after_cursor');
      const limit = intParam(req.params, 'limit');
      const ascending = boolParam(req.params, 'ascending');
      if (limit === null || (limit ?? 0) < 0) return validation('limit is invalid');
      if (ascending === null) return validation('ascending is invalid');
      const order = req.params.get('order') ?? undefined;
      const list = matching(req);
      if ('status' in list) return list;
      const all = sorted(list, { ascending: ascending ?? true, ...(order ? { order } : {}) });
      let from = 0;
      const after = req.params.get('after_cursor');
      if (after !== null && after !== '') {
        const id = cursorId(after);
        const at = id === undefined ? -1 : all.findIndex((x) => x.id === id);
        if (at < 0) return validation('after_cursor is invalid');
        from = at + 1;
      }
      const page = all.slice(from, from + Math.min(limit ?? DEFAULT_LIMIT, max));
      const last = page[page.length - 1];
      const more = last !== undefined && from + page.length < all.length;
      return json(200, {
        [name]: page.map(render),
        ...(more ? { next_cursor: Buffer.from(JSON.stringify({ id: last.id })).toString('base64url') } : {}),
      });
    });
  }

  const flagFilters = (req: SimRequest) => {
    const flags: Partial<Record<'active' | 'closed' | 'archived' | 'featured', boolean>> = {};
    for (const f of ['active', 'closed', 'archived', 'featured'] as const) {
      const v = boolParam(req.params, f);
      if (v === null) return validation(`${f} is invalid`);
      if (v !== undefined) flags[f] = v;
    }
    return flags;
  };

  // [V] a plain-text health check (ccxt fetchStatus reads the body `OK`).
  r.get('/status', () => text(200, 'OK'));
  /** The events a list's filters keep (before its order and page), or a 422. */
  const eventsMatching = (req: SimRequest): GammaEventDef[] | SimResponse => {
    const flags = flagFilters(req);
    if ('status' in flags) return flags;
    const ids = req.params.getAll('id');
    const slugs = req.params.getAll('slug');
    const tagId = req.params.get('tag_id');
    const tagSlug = req.params.get('tag_slug');
    const excludeTags = req.params.getAll('exclude_tag_id');
    // [V] `related_tags` also takes events of tags related to `tag_id`: the simulator's tags have no relations, so
    // it is checked and changes nothing.
    if (boolParam(req.params, 'related_tags') === null) return validation('related_tags is invalid');
    const bounds: Record<string, number | undefined> = {};
    for (const b of ['liquidity_min', 'liquidity_max', 'volume_min', 'volume_max'] as const) {
      const v = numberParam(req.params, b);
      if (v === null) return validation(`${b} is invalid`);
      bounds[b] = v;
    }
    const dates: Record<string, number | undefined> = {};
    for (const d of ['start_date_min', 'start_date_max', 'end_date_min', 'end_date_max'] as const) {
      const v = req.params.get(d);
      if (v === null || v === '') continue;
      const ms = Date.parse(v);
      if (Number.isNaN(ms)) return validation(`${d} is invalid`);
      dates[d] = ms;
    }
    return catalog.events.filter((e) => {
      for (const [f, v] of Object.entries(flags)) if (e[f as keyof typeof flags] !== v) return false;
      if (ids.length && !ids.includes(e.id)) return false;
      if (slugs.length && !slugs.includes(e.slug)) return false;
      if (tagId && !e.tags.some((t) => t.id === tagId)) return false;
      if (tagSlug && !e.tags.some((t) => t.slug === tagSlug)) return false;
      if (excludeTags.length && e.tags.some((t) => excludeTags.includes(t.id))) return false;
      if (bounds.liquidity_min !== undefined && e.liquidityCents < bounds.liquidity_min * 100) return false;
      if (bounds.liquidity_max !== undefined && e.liquidityCents > bounds.liquidity_max * 100) return false;
      if (bounds.volume_min !== undefined && e.volumeCents < bounds.volume_min * 100) return false;
      if (bounds.volume_max !== undefined && e.volumeCents > bounds.volume_max * 100) return false;
      const s = Date.parse(e.startDate);
      const en = Date.parse(e.endDate);
      if (dates.start_date_min !== undefined && s < dates.start_date_min) return false;
      if (dates.start_date_max !== undefined && s > dates.start_date_max) return false;
      if (dates.end_date_min !== undefined && en < dates.end_date_min) return false;
      if (dates.end_date_max !== undefined && en > dates.end_date_max) return false;
      return true;
    });
  };

  r.get('/events', (req) => {
    const p = listParams(req);
    if ('status' in p) return p;
    const list = eventsMatching(req);
    if ('status' in list) return list;
    // [V] /events answers a JSON array.
    return json(200, sortPage(list, p).map(eventJson));
  });
  keysetRoute(r, '/events', 'events', KEYSET_MAX.events, eventsMatching, eventJson);
  itemRoutes(r, '/events', catalog.events, eventJson);

  /** The markets a list's filters keep (before its order and page), or a 422. */
  const marketsMatching = (req: SimRequest): GammaMarketDef[] | SimResponse => {
    const flags = flagFilters(req);
    if ('status' in flags) return flags;
    const ids = req.params.getAll('id');
    const slugs = req.params.getAll('slug');
    const tokens = req.params.getAll('clob_token_ids');
    const conditions = req.params.getAll('condition_ids');
    return catalog.markets.filter((m) => {
      if (flags.active !== undefined && m.active !== flags.active) return false;
      if (flags.closed !== undefined && m.closed !== flags.closed) return false;
      if (flags.archived === true || flags.featured === true) return false;
      if (ids.length && !ids.includes(m.id)) return false;
      if (slugs.length && !slugs.includes(m.slug)) return false;
      if (tokens.length && !m.tokens.some((t) => tokens.includes(t))) return false;
      if (conditions.length && !conditions.includes(m.conditionId)) return false;
      return true;
    });
  };

  r.get('/markets', (req) => {
    const p = listParams(req);
    if ('status' in p) return p;
    const list = marketsMatching(req);
    if ('status' in list) return list;
    return json(200, sortPage(list, p).map(marketJson));
  });
  keysetRoute(r, '/markets', 'markets', KEYSET_MAX.markets, marketsMatching, marketJson);
  itemRoutes(r, '/markets', catalog.markets, marketJson);

  r.get('/public-search', (req) => {
    const q = (req.params.get('q') ?? '').toLowerCase();
    if (!q) return validation('q is required');
    const events = catalog.events.filter((e) => e.title.toLowerCase().includes(q) || e.slug.includes(q));
    const tags = catalog.tags.filter((t) => t.label.toLowerCase().includes(q));
    return json(200, {
      events: events.map(eventJson),
      tags: tags.map((t) => ({ ...t, event_count: catalog.events.filter((e) => e.tags.includes(t)).length })),
      profiles: [],
      pagination: { hasMore: false, totalResults: events.length },
    });
  });
  r.get('/tags', () =>
    json(
      200,
      catalog.tags.map((t) => ({ ...t, forceShow: false, isCarousel: false })),
    ),
  );
  r.get('/tags/:id', (req) => {
    const t = catalog.tags.find((x) => x.id === req.pathParams.id);
    return t ? json(200, t) : notFound('tag not found');
  });
  const series = [
    {
      id: '10006',
      ticker: 'fed-interest-rates',
      slug: 'fed-interest-rates',
      title: 'Fed Interest Rates',
      seriesType: 'single',
      recurrence: 'monthly',
      active: true,
      closed: false,
      archived: false,
    },
    {
      id: '10192',
      ticker: 'bitcoin-above',
      slug: 'bitcoin-above',
      title: 'Bitcoin Above',
      seriesType: 'single',
      recurrence: 'weekly',
      active: true,
      closed: false,
      archived: false,
    },
  ];
  r.get('/series', () => json(200, series));
  r.get('/series/:id', (req) => {
    const s = series.find((x) => x.id === req.pathParams.id);
    return s ? json(200, s) : notFound('id not found');
  });
  r.get('/sports', () =>
    json(200, [
      {
        sport: 'nba',
        image: 'https://polymarket-upload.s3.us-east-2.amazonaws.com/nba.png',
        resolution: 'https://www.nba.com/',
        ordering: 'away',
        tags: '1,745,100639',
        series: '10345',
      },
      {
        sport: 'nfl',
        image: 'https://polymarket-upload.s3.us-east-2.amazonaws.com/nfl.png',
        resolution: 'https://www.nfl.com/',
        ordering: 'away',
        tags: '1,450,100639',
        series: '10187',
      },
    ]),
  );
  r.get('/teams', (req) => {
    const league = req.params.get('league');
    const teams = [
      { id: 1, name: 'Celtics', league: 'nba', record: '48-16', abbreviation: 'bos', alias: 'Boston Celtics' },
      { id: 2, name: 'Thunder', league: 'nba', record: '53-12', abbreviation: 'okc', alias: 'Oklahoma City Thunder' },
      { id: 3, name: 'Chiefs', league: 'nfl', record: '15-2', abbreviation: 'kc', alias: 'Kansas City Chiefs' },
    ];
    return json(
      200,
      teams.filter((t) => !league || t.league === league),
    );
  });
  r.get('/public-profile', (req) => {
    const address = req.params.get('address');
    if (!address) return validation('address is required');
    if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return validation('address is invalid');
    const pseudonym = catalog.profiles.get(address.toLowerCase());
    if (!pseudonym) return notFound('profile not found');
    return json(200, {
      createdAt: '2024-10-30T04:02:01.381Z',
      proxyWallet: address.toLowerCase(),
      profileImage: '',
      displayUsernamePublic: true,
      bio: '',
      pseudonym,
      name: pseudonym.toLowerCase(),
      users: [{ id: address.toLowerCase(), creator: false, mod: false }],
      xUsername: null,
      verifiedBadge: false,
    });
  });

  return { router: r, errors: gammaErrors };
}
