// https://docs.polymarket.com/developers/gamma-markets-api/overview
import type { GatewayConfig } from '../config';
import { makeTarget, type Platform } from './types';

/** `venue-a`: Polymarket Gamma (markets, events, tags, series, search). Public; no signing. [V] */
export function gamma(config: GatewayConfig): Platform {
  const target = makeTarget('venue-a', 'venue-a', config.UPSTREAM_VENUE_A_URL, { budget: config.budgets['venue-a'] });
  return {
    key: 'venue-a',
    title: 'Polymarket Gamma',
    docs: 'https://docs.polymarket.com/developers/gamma-markets-api/overview',
    targets: [target],
    route: (resource, query) => ({ target, path: resource.path, query, sign: false }),
  };
}
