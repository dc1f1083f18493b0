import {
  rateLimit,
  ipKeyGenerator,
  MemoryStore,
  type Options,
  type Store,
  type ClientRateLimitInfo,
} from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';
import { sendError } from '@depthgate/service-kit';
import type { Caller, NodeMiddleware } from './caller';
import { LeasedRedisStore, storeKey } from './leased-store';
import type { AuthMetrics } from './metrics';

/**
 * Counts in Redis while Redis answers; counts per process while it does not.
 *
 * The choice for a Redis outage is deliberate: keep serving. Each process falls back to its own in-memory counter
 * with the same per-minute limit (so during an outage a key's effective budget is multiplied by the number of
 * replicas), logs the transition loudly, and exposes `rate_limit_store_degraded`. A decision never waits on a
 * dead Redis: a disconnected client fails at once and a hung one after the command timeout.
 */
export class FailoverStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private degraded = false;

  constructor(
    private readonly redis: Redis,
    private readonly primary: LeasedRedisStore,
    private readonly fallback: MemoryStore,
    private readonly logger: Logger | undefined,
    private readonly metrics: AuthMetrics | undefined,
  ) {
    this.prefix = primary.prefix;
  }

  init(options: Options): void {
    this.primary.init(options);
    this.fallback.init(options);
  }

  private setDegraded(degraded: boolean, err?: unknown): void {
    if (degraded === this.degraded) return;
    this.degraded = degraded;
    this.metrics?.storeDegraded.set(degraded ? 1 : 0);
    if (degraded) {
      this.logger?.error(
        { err: { message: (err as Error | undefined)?.message } },
        'rate limiting degraded: Redis unreachable, limits are now counted per process',
      );
    } else {
      this.logger?.warn('rate limiting restored: counting in Redis again');
    }
  }

  get isDegraded(): boolean {
    return this.degraded;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    if (this.redis.status === 'ready') {
      try {
        const info = await this.primary.increment(key);
        this.setDegraded(false);
        return info;
      } catch (err) {
        this.setDegraded(true, err);
      }
    } else {
      this.setDegraded(true, new Error(`redis ${this.redis.status}`));
    }
    this.metrics?.fallbackDecisions.inc();
    return this.fallback.increment(key);
  }

  async decrement(key: string): Promise<void> {
    if (this.degraded) await this.fallback.decrement(key);
  }

  async resetKey(key: string): Promise<void> {
    await Promise.allSettled([this.primary.resetKey(key), this.fallback.resetKey(key)]);
  }

  shutdown(): void {
    this.fallback.shutdown();
  }
}

export interface RateLimiterOptions {
  redis: Redis;
  /** Redis key prefix shared by every replica of both services, so each key has one budget everywhere. */
  prefix: string;
  defaultRequestsPerMinute: number;
  anonymousRequestsPerMinute: number;
  logger?: Logger;
  metrics?: AuthMetrics;
  windowMs?: number;
}

function limitFor(caller: Caller | undefined, options: RateLimiterOptions): number {
  if (caller?.kind === 'key') return caller.key.requestsPerMinute ?? options.defaultRequestsPerMinute;
  return options.anonymousRequestsPerMinute;
}

function bucketFor(caller: Caller | undefined, fallbackIp: string): string {
  if (caller?.kind === 'key') return `key:${caller.key.id}`;
  // IPv6 clients are grouped by /56 so one client cannot rotate through its own address block.
  return `ip:${ipKeyGenerator(caller?.ip ?? fallbackIp)}`;
}

/**
 * Per-key (its `requests_per_minute`, else the default) and per-IP for anonymous callers, in a fixed one-minute
 * window counted in Redis. Must run after apiKeyAuth. Answers 429 `rate_limited` with `RateLimit`,
 * `RateLimit-Policy` (IETF draft 7) and `Retry-After`.
 */
export function createRateLimiter(options: RateLimiterOptions): { middleware: NodeMiddleware; store: FailoverStore } {
  const windowMs = options.windowMs ?? 60_000;
  const primary = new LeasedRedisStore(options.redis, `${options.prefix}rl:`);
  const store = new FailoverStore(options.redis, primary, new MemoryStore(), options.logger, options.metrics);
  const middleware = rateLimit({
    windowMs,
    limit: (req) => limitFor(req.caller, options),
    keyGenerator: (req) =>
      storeKey(bucketFor(req.caller, req.ip ?? req.socket.remoteAddress ?? 'unknown'), limitFor(req.caller, options)),
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store,
    passOnStoreError: false,
    // We validate our own configuration (trust proxy is a hop count, never `true`); the library's checks would
    // only log to the console.
    validate: false,
    handler: (req, res) => {
      const scope = req.caller?.kind === 'key' ? 'key' : 'anonymous';
      options.metrics?.rateLimited.inc({ scope });
      const limit = limitFor(req.caller, options);
      const retryAfter = res.getHeader('Retry-After');
      sendError(
        res,
        'rate_limited',
        `Rate limit exceeded: ${limit} requests per minute${retryAfter ? `; retry in ${String(retryAfter)} s` : ''}`,
      );
    },
  });
  // express-rate-limit touches only Node's request/response API (and `req.ip`, which keyGenerator does not use for
  // keyed callers), so the same limiter serves Express and plain node:http handlers.
  return { middleware: middleware as unknown as NodeMiddleware, store };
}
