// https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/
import type { Platforms } from '@depthgate/platforms';
import type { RouteModule } from './types';

/** Route roots the locally running Client Portal gateway serves. [V] (Graylayer forecastex page) */
const PORTAL_ROOTS = new Set(['trsrv', 'iserver', 'forecast']);

/**
 * `venue-e`: IBKR ForecastEx, read-only. `/trsrv/…`, `/iserver/…` and `/forecast/…` go to the Client Portal gateway
 * (HTTPS with its self-signed certificate, trusted for that host only, or pinned with IBKR_PORTAL_CA_FILE; the
 * session is kept alive with `/tickle`); everything else goes to the public ForecastEx site API. A portal that is
 * not running answers 502 `bad_gateway` (an unreachable upstream, as for every platform) saying how to start it.
 */
export const venueERoutes: RouteModule<Platforms['venue-e']> = (ctx) => {
  const { portalCa } = ctx.platform.credentials;
  const tickleMs = ctx.platform.settings.IBKR_TICKLE_INTERVAL_MS;
  const site = ctx.target('main');
  const portal = ctx.target('portal', {
    tls: { ca: portalCa?.pem, verify: portalCa !== undefined },
    unreachable: {
      message: `The IBKR Client Portal gateway is not reachable at ${new URL(ctx.platform.urls.portal).origin}; start it (bin/run.sh root/conf.yaml) and log in`,
    },
  });
  return {
    targets: [site, portal],
    route: (resource, query) =>
      PORTAL_ROOTS.has(resource.segments[0] ?? '')
        ? { target: portal, path: resource.path, query, sign: false }
        : { target: site, path: resource.path, query, sign: false },
    keepAlive: tickleMs > 0 ? { target: portal, method: 'GET', path: '/tickle', intervalMs: tickleMs } : undefined,
  };
};
