// https://docs.cdp.coinbase.com/exchange/reference
import type { Platforms } from '@depthgate/platforms';
import type { RouteModule } from './types';

/** Coinbase Exchange market data, served without authentication. [V] */
const PUBLIC_ROOTS = new Set(['products', 'currencies', 'time']);

/**
 * `venue-d`: Coinbase Exchange. Public market data unsigned; anything else HMAC-signed (`CB-ACCESS-*`) when API
 * credentials are configured, or with a CDP JWT when JWT credentials are configured instead.
 */
export const venueDRoutes: RouteModule<Platforms['venue-d']> = (ctx) => {
  const target = ctx.target('main', { signer: ctx.platform.signer });
  return {
    targets: [target],
    route: (resource, query) => ({
      target,
      path: resource.path,
      query,
      sign: !PUBLIC_ROOTS.has(resource.segments[0] ?? ''),
    }),
  };
};
