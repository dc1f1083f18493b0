import type { Redis } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';
import type { Registry } from 'prom-client';
import type { ReadinessCheck } from '@depthgate/service-kit';
import { Authenticator } from './authenticator';
import { apiKeyAuth, type NodeMiddleware } from './caller';
import type { AuthConfig } from './config';
import { RedisKeyStore } from './key-store';
import { AuthMetrics } from './metrics';
import { RateLimiter } from './rate-limit';
import { createRedisClient, redisTarget } from './redis';

export interface Auth {
  redis: Redis;
  store: RedisKeyStore;
  authenticator: Authenticator;
  metrics: AuthMetrics;
  /** X-API-Key required (gateway). */
  requireKey: NodeMiddleware;
  /** X-API-Key optional; no key means anonymous (history). */
  optionalKey: NodeMiddleware;
  rateLimit: NodeMiddleware;
  rateLimiter: RateLimiter;
  /** Readiness checks of this machinery: Redis, unless READY_REQUIRES_REDIS is false. */
  readiness: ReadinessCheck[];
  close(): Promise<void>;
}

/** Builds the shared key and rate-limit machinery once per process (never per request). */
export function createAuth(config: AuthConfig, deps: { logger: Logger; registry: Registry; name: string }): Auth {
  const target = redisTarget(config);
  const redis = createRedisClient(target, {
    name: deps.name,
    logger: deps.logger,
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
  });
  const subscriber = createRedisClient(target, {
    name: `${deps.name}-events`,
    logger: deps.logger,
    offlineQueue: true,
  });
  const metrics = new AuthMetrics(deps.registry);
  const store = new RedisKeyStore(redis, config.REDIS_KEY_PREFIX);
  const authenticator = new Authenticator({
    store,
    cacheTtlMs: config.KEY_CACHE_TTL_MS,
    maxStaleMs: config.KEY_CACHE_MAX_STALE_MS,
    maxEntries: config.KEY_CACHE_MAX_ENTRIES,
    logger: deps.logger,
    metrics,
  });
  authenticator.subscribe(subscriber).catch((err: unknown) => {
    deps.logger.warn(
      { err: { message: (err as Error).message } },
      'could not subscribe to key events; relying on the cache TTL',
    );
  });
  const rateLimiter = new RateLimiter({
    redis,
    prefix: config.REDIS_KEY_PREFIX,
    defaultRequestsPerMinute: config.RATE_LIMIT_DEFAULT_RPM,
    anonymousRequestsPerMinute: config.RATE_LIMIT_ANONYMOUS_RPM,
    logger: deps.logger,
    metrics,
  });
  return {
    redis,
    store,
    authenticator,
    metrics,
    requireKey: apiKeyAuth(authenticator, 'required', metrics),
    optionalKey: apiKeyAuth(authenticator, 'optional', metrics),
    rateLimit: rateLimiter.middleware(),
    rateLimiter,
    readiness: config.READY_REQUIRES_REDIS
      ? [{ name: 'redis', check: async () => redis.status === 'ready' && (await redis.ping()) === 'PONG' }]
      : [],
    async close() {
      subscriber.disconnect();
      await redis.quit().catch(() => undefined);
      // After QUIT too: with Sentinel, this also closes the connections that watch the sentinels for a failover.
      redis.disconnect();
    },
  };
}
