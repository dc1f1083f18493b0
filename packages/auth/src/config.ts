import { z } from 'zod';
import { envBool, envInt, envList, envOptionalString, envString, envUrl } from '@depthgate/service-kit';

/** `host:port`, `[v6]:port`. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/**
 * Where Redis is: one address (REDIS_URL), or a master found through Redis Sentinel. Shared by both services and the
 * keys CLI (docs/configuration.md; docs/operations.md, "Redis").
 */
export const redisEnvShape = {
  /**
   * Redis holding key records and rate-limit counters: `redis://` or `rediss://` (TLS), user and password in the
   * URL. With REDIS_SENTINELS its host is ignored (the sentinels name the master); its scheme, user, password and
   * database still apply to the master's connection.
   */
  REDIS_URL: envUrl('redis://127.0.0.1:7379'),
  /** Redis Sentinel: `host:port` of the sentinels, comma-separated. Set: the master is asked of them, and followed through failovers. */
  REDIS_SENTINELS: envList().pipe(
    z.array(z.string().regex(HOST_PORT, 'expected host:port')).transform((list) =>
      list.map((s) => {
        const m = HOST_PORT.exec(s) as RegExpExecArray;
        return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: Number(m[2]) };
      }),
    ),
  ),
  /** The master's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  REDIS_SENTINEL_NAME: envString('mymaster'),
  /** Password of the sentinels themselves (their `requirepass`), when they have one. */
  REDIS_SENTINEL_PASSWORD: envOptionalString(),
  /** TLS to the sentinels: `true` or `false`; unset: as REDIS_URL's scheme says (`rediss:` → TLS). */
  REDIS_SENTINEL_TLS: envOptionalString().pipe(z.enum(['true', 'false']).optional()),
  /** A PEM file of the CA that signed the Redis (and sentinel) certificates, for TLS with a private CA. */
  REDIS_TLS_CA_FILE: envOptionalString(),
};

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
  /** Capacity of the key cache. */
  KEY_CACHE_MAX_ENTRIES: envInt(10_000, { min: 1, max: 10_000_000 }),
  /** Requests per minute for a key that has no `requests_per_minute` of its own. */
  RATE_LIMIT_DEFAULT_RPM: envInt(600, { min: 1, max: 10_000_000 }),
  /** Requests per minute per client IP for anonymous callers (history service). */
  RATE_LIMIT_ANONYMOUS_RPM: envInt(10, { min: 1, max: 10_000_000 }),
  /** Number of reverse proxies in front of the service whose X-Forwarded-For is trusted (0: none). Never "true". */
  TRUST_PROXY_HOPS: envInt(0, { min: 0, max: 10 }),
  /**
   * `/ready` also requires Redis. Both services keep serving while Redis is down (cached keys, per-process limits),
   * so behind one Service it is usually better off (infra/k8s sets false and alerts instead).
   */
  READY_REQUIRES_REDIS: envBool(true),
};

export interface RedisConfig {
  REDIS_URL: string;
  REDIS_SENTINELS?: { host: string; port: number }[];
  REDIS_SENTINEL_NAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
  REDIS_SENTINEL_TLS?: 'true' | 'false';
  REDIS_TLS_CA_FILE?: string;
}

export interface AuthConfig extends RedisConfig {
  REDIS_KEY_PREFIX: string;
  REDIS_COMMAND_TIMEOUT_MS: number;
  KEY_CACHE_TTL_MS: number;
  KEY_CACHE_MAX_STALE_MS: number;
  KEY_CACHE_MAX_ENTRIES: number;
  RATE_LIMIT_DEFAULT_RPM: number;
  RATE_LIMIT_ANONYMOUS_RPM: number;
  TRUST_PROXY_HOPS: number;
  READY_REQUIRES_REDIS: boolean;
}
