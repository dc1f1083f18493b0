import { Counter, Gauge, type Registry } from 'prom-client';

/** Metrics of key checks and rate limiting, registered on the service's registry. */
export class AuthMetrics {
  readonly verifications: Counter<'result'>;
  readonly cache: Counter<'result'>;
  readonly rateLimited: Counter<'scope'>;
  readonly storeDegraded: Gauge;
  readonly fallbackDecisions: Counter;

  constructor(registry: Registry) {
    this.verifications = new Counter({
      name: 'auth_verifications_total',
      help: 'API key checks by result (valid, missing, invalid, revoked, unavailable, throttled: not looked up, the address presented too many unknown keys)',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    this.cache = new Counter({
      name: 'auth_key_cache_total',
      help: 'Key cache lookups: hit (fresh), miss (fetched from Redis), stale (served while Redis was unreachable)',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    this.rateLimited = new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests and WebSocket handshakes answered 429 by the caller rate limit, by scope (key or anonymous)',
      labelNames: ['scope'] as const,
      registers: [registry],
    });
    this.storeDegraded = new Gauge({
      name: 'rate_limit_store_degraded',
      help: '1 while Redis is unreachable and rate limits are counted per process',
      registers: [registry],
    });
    this.fallbackDecisions = new Counter({
      name: 'rate_limit_fallback_total',
      help: 'Rate-limit decisions taken by the per-process fallback limiter because Redis was unreachable',
      registers: [registry],
    });
  }
}
