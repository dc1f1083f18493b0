// https://docs.polymarket.com/developers/CLOB/introduction
import type { Budget, Platforms } from '@depthgate/platforms';
import { joinSegments, setQueryParam, type Route, type RouteModule } from './types';

/**
 * The CLOB's public routes, by their leading path segments (everything else is L2-signed). Market data [V]
 * (docs.polymarket.com orderbook, pricing and markets references), the rewards programmes of markets [V] (docs:
 * "Get current active rewards configurations", "Get raw rewards for a specific market"; `rewards/user…` is the
 * account's and signed), and what @polymarket/clob-client 5.8 calls without L2 headers [V]: `getMarketTradesEvents`
 * (`live-activity/events/{condition_id}`) and `validateReadonlyApiKey` (`auth/validate-readonly-api-key`; the rest
 * of `auth/…` is signed).
 */
const PUBLIC_PATHS: readonly (readonly string[])[] = [
  ['book'],
  ['books'],
  ['price'],
  ['prices'],
  ['midpoint'],
  ['midpoints'],
  ['spread'],
  ['spreads'],
  ['prices-history'],
  ['last-trade-price'],
  ['last-trades-prices'],
  ['markets'],
  ['sampling-markets'],
  ['simplified-markets'],
  ['sampling-simplified-markets'],
  ['tick-size'],
  ['neg-risk'],
  ['fee-rate'],
  ['time'],
  ['batch-prices-history'],
  ['rewards', 'markets'],
  ['live-activity'],
  ['auth', 'validate-readonly-api-key'],
];

/** Whether a CLOB path is public; the root (`/`, clob-client `getOk`) is. */
function isPublic(segments: readonly string[]): boolean {
  return segments.length === 0 || PUBLIC_PATHS.some((prefix) => prefix.every((s, i) => segments[i] === s));
}

/**
 * The CLOB's read-only calls that are POSTs with a JSON body; nothing that places, cancels or changes anything.
 * [V] docs.polymarket.com (orderbook and pricing references) and @polymarket/clob-client 5.8 (`getOrderBooks`,
 * `getMidpoints`, `getPrices`, `getSpreads`, `getLastTradesPrices`; ccxt 4.5's polymarket `fetchTickers` calls the
 * same). `/batch-prices-history` [V] "Get batch prices history" (ccxt's implicit `clobPublicPostBatchPricesHistory`).
 * `/orders-scoring` [V] clob-client `areOrdersScoring`: an L2-authenticated read whose signature covers the body.
 * Not here: ccxt's implicit `markets/live-activity` POST, which Polymarket does not document [U].
 */
const CLOB_READ_ONLY_POSTS = [
  '/books',
  '/midpoints',
  '/prices',
  '/spreads',
  '/last-trades-prices',
  '/batch-prices-history',
  '/orders-scoring',
] as const;

/**
 * `venue-a-clob`: Polymarket CLOB (order book, prices, spreads) plus the profile and market-statistics routes the
 * spec files under it, which other Polymarket hosts serve: profiles from Gamma's `/public-profile`, open interest,
 * holders, positions and live volume from the Data API. That mapping is [U] (upstreams.md §2). The whole Data API
 * is also under `data-api/` (`data-api/trades` → Data API `/trades`), for clients that take its base URL (ccxt's
 * polymarket `urls.api.data`); the CLOB has no route of that name (its own `data/…` routes are private ledgers).
 * Private CLOB routes carry L2 HMAC headers when credentials are configured.
 */
export const venueAClobRoutes: RouteModule<Platforms['venue-a-clob']> = (ctx) => {
  const main = ctx.target('main', { signer: ctx.platform.signer, post: CLOB_READ_ONLY_POSTS });
  const data = ctx.target('data');
  const gamma = ctx.config.platforms['venue-a'].urls.main;
  // Gamma's routes count against Gamma's budget (venue-a's, which also serves that origin).
  const profiles = ctx.target('main', {
    url: { id: 'venue-a-clob/gamma', url: gamma },
    budget: (ctx.config.budgets as Record<string, Budget | null>)['venue-a'] ?? null,
  });
  return {
    targets: [main, data, profiles],
    route(resource, query): Route {
      const [a, b, c, ...rest] = resource.segments;
      if (a === 'data-api') return { target: data, path: joinSegments(resource.segments.slice(1)), query, sign: false };
      if (rest.length === 0 && a !== undefined && b !== undefined) {
        if (a === 'profile' && c === undefined) {
          return { target: profiles, path: '/public-profile', query: setQueryParam(query, 'address', b), sign: false };
        }
        if (a === 'markets' && c === 'open-interest')
          return { target: data, path: '/oi', query: setQueryParam(query, 'market', b), sign: false };
        if (a === 'markets' && c === 'top-holders')
          return { target: data, path: '/holders', query: setQueryParam(query, 'market', b), sign: false };
        if (a === 'markets' && c === 'positions')
          return { target: data, path: '/positions', query: setQueryParam(query, 'market', b), sign: false };
        if (a === 'events' && c === 'live-volume')
          return { target: data, path: '/live-volume', query: setQueryParam(query, 'id', b), sign: false };
      }
      return { target: main, path: resource.path, query, sign: !isPublic(resource.segments) };
    },
  };
};
