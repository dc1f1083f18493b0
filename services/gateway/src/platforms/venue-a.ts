// https://docs.polymarket.com/developers/gamma-markets-api/overview
import type { Platforms } from '@depthgate/platforms';
import type { RouteModule } from './types';

/** `venue-a`: Polymarket Gamma. Every resource passes as given, unsigned. */
export const venueARoutes: RouteModule<Platforms['venue-a']> = (ctx) => {
  const target = ctx.target('main');
  return { targets: [target], route: (resource, query) => ({ target, path: resource.path, query, sign: false }) };
};
