// https://docs.polymarket.us/api/introduction
import type { GatewayConfig } from '../config';
import { polymarketUsSigner } from '../signers/polymarket-us';
import { makeTarget, versioned, type Platform } from './types';

/** Routes that only the authenticated host serves (orders, portfolio, account). [V] (SDK: authenticated ? api : gateway) */
const PRIVATE_ROOTS = new Set(['portfolio', 'account', 'accounts', 'orders', 'order', 'balances', 'activities']);

/**
 * `venue-a-us`: Polymarket US. Public data (events with all their filters, markets, series, sports, search) from
 * the public gateway host, unsigned; private routes from the authenticated host, Ed25519-signed when credentials
 * are configured. Resources without a version segment are under `/v1` (`/events` → `/v1/events`).
 */
export function polymarketUs(config: GatewayConfig): Platform {
  const credentials = config.credentials.polymarketUs;
  const budget = config.budgets['venue-a-us'];
  const publicHost = makeTarget('venue-a-us', 'venue-a-us', config.UPSTREAM_VENUE_A_US_URL, { budget });
  const authHost = makeTarget('venue-a-us', 'venue-a-us/auth', config.UPSTREAM_VENUE_A_US_AUTH_URL, {
    budget,
    signer: credentials ? polymarketUsSigner(credentials) : undefined,
  });
  return {
    key: 'venue-a-us',
    title: 'Polymarket US',
    docs: 'https://docs.polymarket.us/api/introduction',
    targets: [publicHost, authHost],
    route(resource, query) {
      const path = versioned(resource);
      const root = path.split('/')[2] ?? '';
      return PRIVATE_ROOTS.has(root)
        ? { target: authHost, path, query, sign: true }
        : { target: publicHost, path, query, sign: false };
    },
  };
}
