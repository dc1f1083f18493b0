import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';
import { sendError } from '@depthgate/service-kit';
import type { Caller, NodeMiddleware } from './caller';
import type { AuthMetrics } from './metrics';
import { ipBucket } from './address';

/**
 * Rate limits per key (its `requests_per_minute`, else a default) and per client IP for anonymous callers, in a
 * fixed one-minute window counted in Redis and shared by every replica of both services.
 *
 * Counting without a round trip per request: each bucket (a key id or a client IP) has one Redis counter per window
 * (created by the first hit, expiring after the window). A process takes a *lease*, a block of consecutive numbers,
 * with one INCRBY, and hands those numbers out locally; a request is allowed iff its number is within the limit.
 * Numbers are unique across all processes, so a limit is never exceeded; numbers leased but unused when the window
 * ends are lost, so a bucket can be under-served by at most (lease − 1) per process per window. The lease is 1% of the
 * limit, at least 1: limits under 200 per minute are counted exactly, one INCR per request (a key with 5 per minute
 * gets 429 on its sixth call, at either service, in any mix); a key with 60,000 per minute costs one Redis call per
 * 600 requests. While a process holds numbers, a decision is synchronous; so is a refusal once the count it last
 * saw in Redis reached the limit (until the window ends: a flood over the limit costs Redis nothing).
 *
 * Redis down: keep serving. Each process counts on its own with the same limits (so during an outage a key's budget
 * is multiplied by the number of replicas), logs the transition loudly and exposes `rate_limit_store_degraded`. A
 * decision never waits on a dead Redis: a disconnected client fails at once and a hung one after the command timeout.
 *
 * Answers 429 `rate_limited` with the IETF draft-7 `RateLimit` and `RateLimit-Policy` headers and `Retry-After`.
 * (This replaces express-rate-limit + rate-limit-redis: their per-request promise chain and round trip were measured
 * at a quarter of the gateway's cached-answer cost; see docs/architecture.md.)
 */
const LEASE_SCRIPT = `
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {total, ttl}
`;

export function leaseSize(limit: number): number {
  return Math.max(1, Math.floor(limit / 100));
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** This request's number in the window (1-based). */
  used: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

interface Lease {
  next: number;
  end: number;
  resetAt: number;
}

interface Window {
  count: number;
  resetAt: number;
}

type LeaseRedis = Redis & { dgRateLease(key: string, size: string, windowMs: string): Promise<[number, number]> };

const MAX_BUCKETS = 10_000;

export interface RateLimiterOptions {
  redis: Redis;
  /** Redis key prefix shared by every replica of both services, so each key has one budget everywhere. */
  prefix: string;
  defaultRequestsPerMinute: number;
  anonymousRequestsPerMinute: number;
  logger?: Logger;
  metrics?: AuthMetrics;
  windowMs?: number;
  now?: () => number;
}

export class RateLimiter {
  private readonly redis: LeaseRedis;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly keyPrefix: string;
  private readonly leases = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<void>>();
  /** Per-process counting while Redis is unreachable. */
  private readonly local = new Map<string, Window>();
  private degraded = false;

  constructor(private readonly options: RateLimiterOptions) {
    // EVALSHA, falling back to EVAL (and so reloading the script) when Redis restarted and forgot it.
    if (!('dgRateLease' in options.redis))
      options.redis.defineCommand('dgRateLease', { numberOfKeys: 1, lua: LEASE_SCRIPT });
    this.redis = options.redis as LeaseRedis;
    this.windowMs = options.windowMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.keyPrefix = `${options.prefix}rl:`;
  }

  get isDegraded(): boolean {
    return this.degraded;
  }

  limitFor(caller: Caller | undefined): number {
    if (caller?.kind === 'key') return caller.key.requestsPerMinute ?? this.options.defaultRequestsPerMinute;
    return this.options.anonymousRequestsPerMinute;
  }

  /**
   * Counts one request of `caller` against its limit, in its bucket (its key's, else its address's), and a refusal in
   * `rate_limit_rejections_total`: what the middleware counts for an HTTP request, and for a WebSocket handshake (the
   * gateway's and the replay's), which goes around the middleware.
   */
  consumeFor(caller: Caller): RateLimitDecision | Promise<RateLimitDecision> {
    const decision = this.consume(callerBucket(caller), this.limitFor(caller));
    return decision instanceof Promise
      ? decision.then((d) => this.countRefusal(d, caller))
      : this.countRefusal(decision, caller);
  }

  private countRefusal(d: RateLimitDecision, caller: Caller): RateLimitDecision {
    if (!d.allowed) this.options.metrics?.rateLimited.inc({ scope: caller.kind });
    return d;
  }

  /**
   * Counts one request of `bucket` against `limit`; synchronous while this process holds numbers of the bucket, and
   * once the window's count in Redis has reached the limit: every later request of the window is refused anyway (the
   * count only grows), so a caller flooding over its limit costs no Redis round trip per refused request.
   */
  consume(bucket: string, limit: number): RateLimitDecision | Promise<RateLimitDecision> {
    const lease = this.leases.get(bucket);
    const now = this.now();
    if (decidesLocally(lease, limit, now)) return this.decide(lease.next++, limit, lease.resetAt - now);
    return this.consumeAfterRefill(bucket, limit);
  }

  private async consumeAfterRefill(bucket: string, limit: number): Promise<RateLimitDecision> {
    for (;;) {
      if (this.redis.status !== 'ready')
        return this.consumeLocally(bucket, limit, new Error(`redis ${this.redis.status}`));
      try {
        await this.refill(bucket, leaseSize(limit));
      } catch (err) {
        return this.consumeLocally(bucket, limit, err);
      }
      this.setDegraded(false);
      const lease = this.leases.get(bucket);
      const now = this.now();
      // Concurrent requests may have taken every number of the new lease; then take another (unless refused anyway).
      if (decidesLocally(lease, limit, now)) return this.decide(lease.next++, limit, lease.resetAt - now);
    }
  }

  /** One lease request per bucket at a time, however many requests wait for it. */
  private refill(bucket: string, size: number): Promise<void> {
    let pending = this.pending.get(bucket);
    if (!pending) {
      pending = this.redis
        .dgRateLease(`${this.keyPrefix}${bucket}`, String(size), String(this.windowMs))
        .then(([total, ttl]) => {
          if (this.leases.size >= MAX_BUCKETS) sweep(this.leases, this.now());
          this.leases.set(bucket, { next: total - size + 1, end: total, resetAt: this.now() + Number(ttl) });
        })
        .finally(() => this.pending.delete(bucket));
      this.pending.set(bucket, pending);
    }
    return pending;
  }

  private consumeLocally(bucket: string, limit: number, err: unknown): RateLimitDecision {
    this.setDegraded(true, err);
    this.options.metrics?.fallbackDecisions.inc();
    const now = this.now();
    let window = this.local.get(bucket);
    if (!window || window.resetAt <= now) {
      if (this.local.size >= MAX_BUCKETS) sweep(this.local, now);
      window = { count: 0, resetAt: now + this.windowMs };
      this.local.set(bucket, window);
    }
    return this.decide(++window.count, limit, window.resetAt - now);
  }

  private decide(used: number, limit: number, resetMs: number): RateLimitDecision {
    return { allowed: used <= limit, limit, used, remaining: Math.max(0, limit - used), resetMs };
  }

  private setDegraded(degraded: boolean, err?: unknown): void {
    if (degraded === this.degraded) return;
    this.degraded = degraded;
    this.options.metrics?.storeDegraded.set(degraded ? 1 : 0);
    if (degraded) {
      this.options.logger?.error(
        { err: { message: (err as Error | undefined)?.message } },
        'rate limiting degraded: Redis unreachable, limits are now counted per process',
      );
    } else {
      this.options.logger?.warn('rate limiting restored: counting in Redis again');
    }
  }

  /** Drops the bucket's count everywhere (tests and operators). */
  async reset(bucket: string): Promise<void> {
    this.leases.delete(bucket);
    this.local.delete(bucket);
    await this.redis.del(`${this.keyPrefix}${bucket}`);
  }

  /** After apiKeyAuth: the caller's decision, its headers, and 429 when over the limit. */
  middleware(): NodeMiddleware {
    const policySuffix = `;w=${Math.round(this.windowMs / 1000)}`;
    const apply = (d: RateLimitDecision, req: IncomingMessage, res: ServerResponse, next: () => void) => {
      res.setHeader('RateLimit-Policy', `${d.limit}${policySuffix}`);
      res.setHeader('RateLimit', `limit=${d.limit}, remaining=${d.remaining}, reset=${Math.ceil(d.resetMs / 1000)}`);
      if (d.allowed) return next();
      const refusal = rateLimitedRefusal(d);
      sendError(res, 'rate_limited', refusal.message, refusal.headers);
    };
    return (req, res, next) => {
      const decision = this.consumeFor(req.caller ?? { kind: 'anonymous', ip: req.socket.remoteAddress ?? 'unknown' });
      if (decision instanceof Promise) decision.then((d) => apply(d, req, res, next), next);
      else apply(decision, req, res, next);
    };
  }
}

/** Whether `lease` decides a request of the window now: it holds a number, or the count reached the limit. */
function decidesLocally(lease: Lease | undefined, limit: number, now: number): lease is Lease {
  return lease !== undefined && lease.resetAt > now && (lease.next <= lease.end || lease.end >= limit);
}

function sweep<T extends { resetAt: number }>(map: Map<string, T>, now: number): void {
  for (const [k, v] of map) if (v.resetAt <= now) map.delete(k);
}

/** The bucket a caller's requests count in: its key's, or (anonymous) its address's. */
export function callerBucket(caller: Caller): string {
  return caller.kind === 'key' ? `key:${caller.key.id}` : `ip:${ipBucket(caller.ip)}`;
}

/** The 429 `rate_limited` answer's message and `Retry-After` for a refused request (HTTP's and handshakes'). */
export function rateLimitedRefusal(d: RateLimitDecision): { message: string; headers: { 'Retry-After': string } } {
  const reset = Math.ceil(d.resetMs / 1000);
  return {
    message: `Rate limit exceeded: ${d.limit} requests per minute; retry in ${reset} s`,
    headers: { 'Retry-After': String(reset) },
  };
}
