// https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/
import type { GatewayConfig } from '../config';
import { makeTarget, type Platform } from './types';

/** Route roots the locally running Client Portal gateway serves. [V] (Graylayer forecastex page) */
const PORTAL_ROOTS = new Set(['trsrv', 'iserver', 'forecast']);

/**
 * `venue-e`: IBKR ForecastEx, read-only. `/trsrv/…`, `/iserver/…` and `/forecast/…` go to the Client Portal gateway
 * (HTTPS with its self-signed certificate, trusted for that host only, or pinned with IBKR_PORTAL_CA_FILE; the
 * session is kept alive with `/tickle`); everything else goes to the public ForecastEx site API. A portal that is
 * not running answers 503 `upstream_unavailable`.
 */
export function forecastex(config: GatewayConfig): Platform {
  const budget = config.budgets['venue-e'];
  const site = makeTarget('venue-e', 'venue-e', config.UPSTREAM_VENUE_E_URL, { budget });
  const portalUrl = new URL(config.UPSTREAM_VENUE_E_PORTAL_URL);
  const portal = makeTarget('venue-e', 'venue-e/portal', config.UPSTREAM_VENUE_E_PORTAL_URL, {
    budget,
    tls: { ca: config.ibkrPortalCa, verify: config.ibkrPortalCa !== undefined },
    unreachable: {
      code: 'upstream_unavailable',
      message: `The IBKR Client Portal gateway is not reachable at ${portalUrl.origin}; start it (bin/run.sh root/conf.yaml) and log in`,
    },
  });
  return {
    key: 'venue-e',
    title: 'IBKR ForecastEx',
    docs: 'https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/',
    targets: [site, portal],
    route: (resource, query) =>
      PORTAL_ROOTS.has(resource.segments[0] ?? '')
        ? { target: portal, path: resource.path, query, sign: false }
        : { target: site, path: resource.path, query, sign: false },
    keepAlive:
      config.IBKR_TICKLE_INTERVAL_MS > 0
        ? { target: portal, method: 'GET', path: '/tickle', intervalMs: config.IBKR_TICKLE_INTERVAL_MS }
        : undefined,
  };
}
