// https://docs.gemini.com/rest-api/
import type { Platforms } from '@depthgate/platforms';
import { versioned, type RouteModule } from './types';

/**
 * `venue-c`: Gemini, prediction-market categories and events (`/v1/prediction-markets/...`) and market data
 * (`/v1/book/{symbol}`, `/v2/ticker/{symbol}`, ...). Resources without a version segment are under `/v1`
 * (`/prediction-markets/events` → `/v1/prediction-markets/events`). Public GETs need no signing. [V]
 */
export const venueCRoutes: RouteModule<Platforms['venue-c']> = (ctx) => {
  const target = ctx.target('main');
  return { targets: [target], route: (resource, query) => ({ target, path: versioned(resource), query, sign: false }) };
};
