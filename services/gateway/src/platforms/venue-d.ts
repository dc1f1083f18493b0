// https://docs.cdp.coinbase.com/exchange/reference
import type { GatewayConfig } from '../config';
import { coinbaseHmacSigner, coinbaseJwtSigner } from '../signers/coinbase';
import { makeTarget, type Platform } from './types';

/** Coinbase Exchange market data, served without authentication. [V] */
const PUBLIC_ROOTS = new Set(['products', 'currencies', 'time']);

/**
 * `venue-d`: Coinbase Exchange. Public market data unsigned; anything else HMAC-signed (`CB-ACCESS-*`) when API
 * credentials are configured, or with a CDP JWT when JWT credentials are configured instead.
 */
export function coinbase(config: GatewayConfig): Platform {
  const { coinbase: hmac, coinbaseJwt: jwt } = config.credentials;
  const signer = jwt
    ? coinbaseJwtSigner(jwt)
    : hmac
      ? coinbaseHmacSigner(hmac, { signQuery: config.COINBASE_SIGN_QUERY })
      : undefined;
  const target = makeTarget('venue-d', 'venue-d', config.UPSTREAM_VENUE_D_URL, {
    budget: config.budgets['venue-d'],
    signer,
  });
  return {
    key: 'venue-d',
    title: 'Coinbase Exchange',
    docs: 'https://docs.cdp.coinbase.com/exchange/reference',
    targets: [target],
    route: (resource, query) => ({
      target,
      path: resource.path,
      query,
      sign: !PUBLIC_ROOTS.has(resource.segments[0] ?? ''),
    }),
  };
}
