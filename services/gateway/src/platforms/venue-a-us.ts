// https://docs.polymarket.us/api/introduction
import type { Platforms } from '@depthgate/platforms';
import { versioned, type RouteModule } from './types';

/** Routes that only the authenticated host serves (orders, portfolio, account). [V] (SDK: authenticated ? api : gateway) */
const PRIVATE_ROOTS = new Set(['portfolio', 'account', 'accounts', 'orders', 'order', 'balances', 'activities']);

/**
 * Read-only POSTs: `orders.preview` of polymarket-us 0.1 (`POST /v1/order/preview`, signed, JSON body) [V] SDK;
 * it validates an order and shows its expected fills without placing it [3P].
 */
const READ_ONLY_POSTS = ['/v1/order/preview'];

/**
 * `venue-a-us`: Polymarket US. Public data (events with all their filters, markets, series, sports, search) from
 * the public gateway host, unsigned; private routes from the authenticated host, Ed25519-signed when credentials
 * are configured. Resources without a version segment are under `/v1` (`/events` → `/v1/events`).
 */
export const venueAUsRoutes: RouteModule<Platforms['venue-a-us']> = (ctx) => {
  const publicHost = ctx.target('main');
  const authHost = ctx.target('auth', { signer: ctx.platform.signer, post: READ_ONLY_POSTS });
  return {
    targets: [publicHost, authHost],
    route(resource, query) {
      const path = versioned(resource);
      const root = path.split('/')[2] ?? '';
      return PRIVATE_ROOTS.has(root)
        ? { target: authHost, path, query, sign: true }
        : { target: publicHost, path, query, sign: false };
    },
  };
};
