import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';

/**
 * Rate-limit counting in Redis without a round trip per request.
 *
 * Each bucket (a key id, or a client IP) has one Redis counter per fixed window (created by the first hit, expiring
 * after the window). Instead of incrementing it by one per request, a process takes a *lease* — a block of
 * consecutive numbers — with one INCRBY, and hands those numbers out locally. A request is allowed iff its number
 * is within the limit. Numbers are unique across all processes of both services, so the limit is never exceeded;
 * numbers a process leased but did not use before the window ended are lost, so a bucket can be under-served by
 * at most (lease − 1) per process per window.
 *
 * The lease is 1% of the limit (at least 1): limits under 200 per minute are counted exactly, one number per
 * request, exactly as a plain INCR would (a key with 5 per minute gets 429 on its sixth call anywhere); a key with
 * 60,000 per minute costs one Redis call per 600 requests and loses at most 599 per process per minute.
 *
 * Keys reach the store as `bucket#limit` (see rate-limit.ts), since express-rate-limit tells a store only the key.
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

export function storeKey(bucket: string, limit: number): string {
  return `${bucket}#${limit}`;
}

function parseKey(key: string): { bucket: string; limit: number } {
  const at = key.lastIndexOf('#');
  return { bucket: key.slice(0, at), limit: Number(key.slice(at + 1)) };
}

interface Lease {
  next: number;
  end: number;
  resetAt: number;
}

type LeaseRedis = Redis & { dgRateLease(key: string, size: string, windowMs: string): Promise<[number, number]> };

const MAX_LEASES = 10_000;

export class LeasedRedisStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;
  private readonly redis: LeaseRedis;
  private readonly leases = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    redis: Redis,
    prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    // EVALSHA, falling back to EVAL (and so reloading the script) when Redis restarted and forgot it.
    if (!('dgRateLease' in redis)) redis.defineCommand('dgRateLease', { numberOfKeys: 1, lua: LEASE_SCRIPT });
    this.redis = redis as LeaseRedis;
    this.prefix = prefix;
  }

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const { bucket, limit } = parseKey(key);
    for (;;) {
      const lease = this.leases.get(bucket);
      if (lease && lease.resetAt > this.now() && lease.next <= lease.end) {
        return { totalHits: lease.next++, resetTime: new Date(lease.resetAt) };
      }
      await this.refill(bucket, leaseSize(limit));
    }
  }

  /** One lease request per bucket at a time, however many requests wait for it. */
  private refill(bucket: string, size: number): Promise<void> {
    let pending = this.pending.get(bucket);
    if (!pending) {
      pending = this.redis
        .dgRateLease(`${this.prefix}${bucket}`, String(size), String(this.windowMs))
        .then(([total, ttl]) => {
          if (this.leases.size >= MAX_LEASES) this.sweep();
          this.leases.set(bucket, { next: total - size + 1, end: total, resetAt: this.now() + Number(ttl) });
        })
        .finally(() => this.pending.delete(bucket));
      this.pending.set(bucket, pending);
    }
    return pending;
  }

  private sweep(): void {
    const now = this.now();
    for (const [bucket, lease] of this.leases) if (lease.resetAt <= now) this.leases.delete(bucket);
  }

  /** A leased number cannot be given back; decrement is a no-op (the limiter never asks for it here). */
  decrement(): void {}

  async resetKey(key: string): Promise<void> {
    const { bucket } = parseKey(key);
    this.leases.delete(bucket);
    await this.redis.del(`${this.prefix}${bucket}`);
  }
}
