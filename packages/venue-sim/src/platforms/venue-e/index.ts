// https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/
import { Rng } from '../../core/rng';
import { simPlatform } from '../platform';
import { buildIbkrCatalog } from './catalog';
import { forecastexHost } from './forecastex';
import { IBKR_PREFIX, ibkrHost } from './portal';
import { IbkrSession } from './session';

/** IBKR ForecastEx: the public site API and the Client Portal gateway (HTTPS, self-signed, session kept by /tickle). */
export const venueESim = simPlatform({
  signs: ['portalCa'],
  rateLimits: {
    main: null,
    // About 10 per second [U]; /tickle 1 per second.
    portal: { limit: 10, windowMs: 1000, routes: [{ prefix: '/v1/api/tickle', limit: 1, windowMs: 1000 }] },
  },
  catalog: (c) => ({ catalog: buildIbkrCatalog(c.seed, c.catalogDate), instruments: [] }),
  create(ctx, catalog) {
    const session = new IbkrSession(
      ctx.opts.ibkrIdleTimeoutMs,
      ctx.clock,
      new Rng(ctx.opts.seed, 'ibkr', 'session').hex(32),
    );
    return {
      hosts: {
        main: { ...forecastexHost(catalog), basePath: '/api' },
        // The real portal never sits behind a CDN.
        portal: { ...ibkrHost(ctx, catalog, session), basePath: IBKR_PREFIX, edge: false },
      },
      credentials: { IBKR_PORTAL_CA: ctx.credentials.ibkr.certPem },
      session: {
        expire: () => session.expire(),
        login: () => session.login(),
        isAuthenticated: () => session.isAuthenticated(),
      },
    };
  },
});
