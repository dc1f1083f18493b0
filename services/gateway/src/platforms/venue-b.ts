// https://docs.kalshi.com/api-reference
import type { Platforms } from '@depthgate/platforms';
import { joinSegments, type RouteModule } from './types';

/**
 * The spec (and Graylayer's docs) name some Kalshi routes with hyphens or under other parents; Kalshi's real
 * routes use underscores (upstreams.md §4, "Seed paths vs real Kalshi paths"). Leading segments are rewritten;
 * real paths pass unchanged.
 */
const KALSHI_PATH_ALIASES: readonly (readonly [readonly string[], readonly string[]])[] = [
  [
    ['search', 'filters'],
    ['search', 'filters_by_sport'],
  ],
  [
    ['historical', 'cutoff-timestamps'],
    ['historical', 'cutoff'],
  ],
  [
    ['exchange', 'series', 'fee-changes'],
    ['series', 'fee_changes'],
  ],
  [
    ['exchange', 'user-data-timestamp'],
    ['exchange', 'user_data_timestamp'],
  ],
];

/** Kalshi route segments spelled with underscores; their hyphenated spelling is accepted anywhere. */
const UNDERSCORE_SEGMENTS = new Set([
  'structured_targets',
  'incentive_programs',
  'fee_changes',
  'user_data_timestamp',
  'filters_by_sport',
  'multivariate_event_collections',
  'live_data',
  'event_positions',
  'market_positions',
  'total_resting_order_value',
  'endpoint_costs',
]);

export function kalshiPath(segments: readonly string[]): readonly string[] {
  for (const [from, to] of KALSHI_PATH_ALIASES) {
    if (from.every((s, i) => segments[i] === s)) return [...to, ...segments.slice(from.length)];
  }
  return segments.map((s) => {
    const underscored = s.replace(/-/g, '_');
    return s.includes('-') && UNDERSCORE_SEGMENTS.has(underscored) ? underscored : s;
  });
}

/**
 * `venue-b`: Kalshi Trade API v2. Every request is RSA-PSS-signed when credentials are configured: newer specs mark
 * order books as private, and signing a public call is harmless (upstreams.md §4). `v1/…` is the `/v1` API of the
 * same host (`https://api.elections.kalshi.com/v1`), unsigned: the free-text series search (`v1/search/series`) that
 * ccxt's prediction kalshi `fetchEvents({ query })` calls; "elections web host only, no auth" [3P] (ccxt 4.5). The
 * Trade API has no resource named `v1`.
 */
export const venueBRoutes: RouteModule<Platforms['venue-b']> = (ctx) => {
  const target = ctx.target('main', { signer: ctx.platform.signer });
  const origin = new URL(ctx.platform.urls.main).origin;
  const v1 = ctx.target('main', { url: { id: 'venue-b/v1', url: `${origin}/v1` } });
  return {
    targets: [target, v1],
    route: (resource, query) =>
      resource.segments[0] === 'v1'
        ? { target: v1, path: joinSegments(resource.segments.slice(1)), query, sign: false }
        : { target, path: joinSegments(kalshiPath(resource.segments)), query, sign: true },
  };
};
