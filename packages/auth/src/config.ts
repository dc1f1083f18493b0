import { envBool, envInt, envString, redisEnvShape, type RedisConfig } from '@depthgate/service-kit';

/** Where Redis is (moved to @depthgate/service-kit, which the recorder shares; re-exported for this package's users). */
export { redisEnvShape, type RedisConfig } from '@depthgate/service-kit';

/**
 * Settings of keys and rate limits, shared by both services. Each service spreads these into its own schema,
 * so both read the same variable names with the same defaults (docs/configuration.md lists them).
 */
export const authEnvShape = {
  ...redisEnvShape,
  /** Prefix of every Redis key we write; services sharing keys and budgets must use the same one. */
  REDIS_KEY_PREFIX: envString('dg:'),
  /** Deadline of one Redis command on a request path. */
  REDIS_COMMAND_TIMEOUT_MS: envInt(500, { min: 50, max: 5000 }),
  /** How long a key check is cached; bounds how late a revocation takes effect (at most 5 s). */
  KEY_CACHE_TTL_MS: envInt(4000, { min: 0, max: 5000 }),
  /** While Redis is unreachable, cached key answers keep serving this long after they were fetched. */
  KEY_CACHE_MAX_STALE_MS: envInt(900_000, { min: 0, max: 86_400_000 }),
  /** Capacity of the key cache for known keys (unknown keys: a tenth of it, apart). */
  KEY_CACHE_MAX_ENTRIES: envInt(10_000, { min: 1, max: 10_000_000 }),
  /** Requests per minute for a key that has no `requests_per_minute` of its own. */
  RATE_LIMIT_DEFAULT_RPM: envInt(600, { min: 1, max: 10_000_000 }),
  /** Requests per minute per client IP for anonymous callers (history service). */
  RATE_LIMIT_ANONYMOUS_RPM: envInt(10, { min: 1, max: 10_000_000 }),
  /**
   * Unknown API keys a client address (IPv6: its /56) may present per minute, counted in each process; past it, keys
   * the process has no cached answer for are answered 429 without a Redis lookup until the minute ends (0: no limit).
   */
  RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: envInt(30, { min: 0, max: 1_000_000 }),
  /** Number of reverse proxies in front of the service whose X-Forwarded-For is trusted (0: none). Never "true". */
  TRUST_PROXY_HOPS: envInt(0, { min: 0, max: 10 }),
  /**
   * `/ready` also requires Redis. Both services keep serving while Redis is down (cached keys, per-process limits),
   * so behind one Service it is usually better off (infra/k8s sets false and alerts instead).
   */
  READY_REQUIRES_REDIS: envBool(true),
};

export interface AuthConfig extends RedisConfig {
  REDIS_KEY_PREFIX: string;
  REDIS_COMMAND_TIMEOUT_MS: number;
  KEY_CACHE_TTL_MS: number;
  KEY_CACHE_MAX_STALE_MS: number;
  KEY_CACHE_MAX_ENTRIES: number;
  RATE_LIMIT_DEFAULT_RPM: number;
  RATE_LIMIT_ANONYMOUS_RPM: number;
  RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: number;
  TRUST_PROXY_HOPS: number;
  READY_REQUIRES_REDIS: boolean;
}
