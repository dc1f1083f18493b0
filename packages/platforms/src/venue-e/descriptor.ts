// https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/
import { X509Certificate } from 'node:crypto';
import { envInt } from '@depthgate/service-kit';
import { credential, definePlatform } from '../descriptor';

/**
 * `venue-e`: IBKR ForecastEx, read-only (upstreams.md §7): the public ForecastEx site API, and the Client Portal
 * gateway a user runs next to us (HTTPS with a self-signed certificate, kept alive with `/tickle`).
 */
export const venueE = definePlatform({
  key: 'venue-e',
  title: 'IBKR ForecastEx',
  covers: 'Event contract data, read-only: the platform site, or a locally running client portal gateway',
  docs: 'https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/',
  aliases: ['forecastex', 'ibkr'],
  hosts: {
    main: {
      env: 'UPSTREAM_VENUE_E_URL',
      default: 'https://forecastex.com/api',
      description: 'ForecastEx public site API',
    },
    portal: {
      env: 'UPSTREAM_VENUE_E_PORTAL_URL',
      default: 'https://localhost:5000/v1/api',
      description: 'IBKR Client Portal gateway',
    },
  },
  budget: { perSecond: 9.5, burst: 1, source: 'IBKR Client Portal: ~10 per second [U]' },
  credentials: {
    /** Not a credential to sign with: the certificate the portal must present (trust, not identity). */
    portalCa: credential<{ pem: string }>({
      name: 'IBKR portal CA',
      vars: [
        {
          env: 'IBKR_PORTAL_CA',
          secret: true,
          description:
            'PEM the portal certificate must chain to; unset: its self-signed certificate is accepted for that host only',
        },
      ],
      build(v) {
        const pem = v.IBKR_PORTAL_CA ?? '';
        try {
          new X509Certificate(pem);
        } catch {
          throw new Error('IBKR_PORTAL_CA: not a PEM certificate');
        }
        return { pem };
      },
    }),
  },
  settings: {
    /** Keep-alive call to the portal (`/tickle`), so its session does not expire; 0 disables. */
    IBKR_TICKLE_INTERVAL_MS: envInt(60_000, { min: 0, max: 3_600_000 }),
  },
});
