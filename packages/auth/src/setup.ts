import type { Redis } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';
import type { Registry } from 'prom-client';
import type { ReadinessCheck } from '@depthgate/service-kit';
import { Authenticator } from './authenticator';
import { apiKeyAuth, type NodeMiddleware } from './caller';
import { RefusedKeys } from './refused-keys';
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
  const subscriber = createRedisClient(target, { name: `${deps.name}-events`, logger: deps.logger, subscriber: true });
  const metrics = new AuthMetrics(deps.registry);
  const store = new RedisKeyStore(redis, config.REDIS_KEY_PREFIX);
  const authenticator = new Authenticator({
    store,
    cacheTtlMs: config.KEY_CACHE_TTL_MS,
    maxStaleMs: config.KEY_CACHE_MAX_STALE_MS,
    maxEntries: config.KEY_CACHE_MAX_ENTRIES,
    refusedKeys: new RefusedKeys(config.RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE),
    logger: deps.logger,
    metrics,
  });
  const events = subscribeToKeyEvents(authenticator, subscriber, deps.logger);
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
    requireKey: apiKeyAuth(authenticator, 'required', config.TRUST_PROXY_HOPS, metrics),
    optionalKey: apiKeyAuth(authenticator, 'optional', config.TRUST_PROXY_HOPS, metrics),
    rateLimit: rateLimiter.middleware(),
    rateLimiter,
    readiness: config.READY_REQUIRES_REDIS
      ? [{ name: 'redis', check: async () => redis.status === 'ready' && (await redis.ping()) === 'PONG' }]
      : [],
    async close() {
      events.close();
      subscriber.disconnect();
      await redis.quit().catch(() => undefined);
      // After QUIT too: with Sentinel, this also closes the connections that watch the sentinels for a failover.
      redis.disconnect();
    },
  };
}

/**
 * The subscription to key events (revocations, creations), made whenever Redis is reachable: asked for at start, it
 * waits on the subscriber connection until Redis answers (createRedisClient's `subscriber`), and ioredis renews it
 * after each reconnection. Until it is made, a revocation takes effect within the cache TTL only: said once in the
 * log, and when it is made.
 */
function subscribeToKeyEvents(authenticator: Authenticator, subscriber: Redis, logger: Logger): { close(): void } {
  let state: 'pending' | 'waiting' | 'done' = 'pending';
  const onError = () => {
    if (state !== 'pending') return;
    state = 'waiting';
    logger.warn(
      'not subscribed to key events yet (Redis unreachable): revocations take effect within the key cache TTL until then',
    );
  };
  subscriber.on('error', onError);
  authenticator.subscribe(subscriber).then(
    () => {
      subscriber.off('error', onError);
      if (state === 'waiting') logger.info('subscribed to key events: revocations take effect at once');
      state = 'done';
    },
    (err: unknown) => {
      subscriber.off('error', onError);
      if (state === 'done') return; // closed
      state = 'done';
      logger.warn(
        { err: { message: (err as Error).message } },
        'could not subscribe to key events; revocations take effect within the key cache TTL',
      );
    },
  );
  return {
    close() {
      state = 'done';
    },
  };
}
