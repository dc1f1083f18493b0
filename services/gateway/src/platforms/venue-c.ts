// https://docs.gemini.com/rest-api/
import type { GatewayConfig } from '../config';
import { makeTarget, versioned, type Platform } from './types';

/**
 * `venue-c`: Gemini, prediction-market categories and events (`/v1/prediction-markets/...`) and market data
 * (`/v1/book/{symbol}`, `/v2/ticker/{symbol}`, ...). Resources without a version segment are under `/v1`
 * (`/prediction-markets/events` → `/v1/prediction-markets/events`). Public GETs need no signing. [V]
 */
export function gemini(config: GatewayConfig): Platform {
  const target = makeTarget('venue-c', 'venue-c', config.UPSTREAM_VENUE_C_URL, { budget: config.budgets['venue-c'] });
  return {
    key: 'venue-c',
    title: 'Gemini',
    docs: 'https://docs.gemini.com/rest-api/',
    targets: [target],
    route: (resource, query) => ({ target, path: versioned(resource), query, sign: false }),
  };
}
