import type { HostId, RateBudget } from './types';

interface RateLimitRule {
  /** Requests allowed per window, sustained. */
  limit: number;
  windowMs: number;
  /** Requests allowed back to back (bucket capacity); default `limit`. */
  burst?: number;
}

export interface RateLimitConfig extends RateLimitRule {
  /**
   * What happens over the limit: `reject` answers 429 at once; `queue` delays up to `queue` requests and rejects the
   * rest (Gemini's "5 extra requests are queued"); `delay` never rejects, it holds requests until they fit
   * (Cloudflare throttling in front of Polymarket's APIs).
   */
  overflow?: 'reject' | 'queue' | 'delay';
  queue?: number;
  /**
   * Tighter limits for the path `prefix` and everything under it (checked in addition to the host's limit): a
   * prefix ends at a segment boundary, so `/book` limits `/book` but not `/books` (the CLOB limits them apart).
   */
  routes?: Array<RateLimitRule & { prefix: string }>;
  /**
   * A budget of its own for the routes that require authentication (Coinbase: private 15/s with bursts of 30,
   * `/fills` 10/s with bursts of 20), taken instead of the host's (and its `routes`); unset, they share the host's.
   */
  authenticated?: RateLimitRule & { routes?: Array<RateLimitRule & { prefix: string }> };
}

/** `path` is `prefix` or below it (a prefix ending in `/` matches everything after it). */
function underPrefix(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  const next = path[prefix.length];
  return next === undefined || next === '/' || next === '?' || prefix.endsWith('/');
}

export type RateDecision = { ok: true; delayMs: number } | { ok: false; budget: RateBudget };

class Bucket {
  private tokens: number;
  private last: number;
  private readonly capacity: number;
  private readonly perMs: number;

  constructor(rule: RateLimitRule, now: number) {
    this.capacity = rule.burst ?? rule.limit;
    this.perMs = rule.limit / rule.windowMs;
    this.tokens = this.capacity;
    this.last = now;
  }

  /** Takes a token, going into debt down to -maxDebt; returns the wait in ms, or -1 when that is not allowed. */
  take(now: number, maxDebt: number): number {
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.last) * this.perMs);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    if (this.tokens - 1 < -maxDebt) return -1;
    this.tokens -= 1;
    return Math.ceil(-this.tokens / this.perMs);
  }
}

interface Buckets {
  bucket: Bucket;
  routes: Array<{ prefix: string; bucket: Bucket }>;
}

interface HostLimiter {
  config: RateLimitConfig;
  main: Buckets;
  authenticated: Buckets | undefined;
}

function buckets(rule: RateLimitRule & { routes?: Array<RateLimitRule & { prefix: string }> }, now: number): Buckets {
  return {
    bucket: new Bucket(rule, now),
    routes: (rule.routes ?? []).map((r) => ({ prefix: r.prefix, bucket: new Bucket(r, now) })),
  };
}

/** Token buckets per host (one budget per platform, as all simulated callers share 127.0.0.1). */
export class RateLimiter {
  private readonly hosts = new Map<HostId, HostLimiter>();

  constructor(private readonly clock: () => number) {}

  set(host: HostId, config: RateLimitConfig | null): void {
    if (!config) {
      this.hosts.delete(host);
      return;
    }
    const now = this.clock();
    this.hosts.set(host, {
      config,
      main: buckets(config, now),
      authenticated: config.authenticated && buckets(config.authenticated, now),
    });
  }

  get(host: HostId): RateLimitConfig | null {
    return this.hosts.get(host)?.config ?? null;
  }

  /** Takes a request from the host's budget, or from its authenticated routes' own when `authenticated`. */
  check(host: HostId, path: string, authenticated = false): RateDecision {
    const h = this.hosts.get(host);
    if (!h) return { ok: true, delayMs: 0 };
    const now = this.clock();
    const overflow = h.config.overflow ?? 'reject';
    const maxDebt = overflow === 'delay' ? Infinity : overflow === 'queue' ? (h.config.queue ?? 0) : 0;
    const budget: RateBudget = authenticated && h.authenticated ? 'authenticated' : 'public';
    const b = budget === 'authenticated' ? (h.authenticated as Buckets) : h.main;
    let wait = 0;
    for (const r of b.routes) {
      if (!underPrefix(path, r.prefix)) continue;
      const w = r.bucket.take(now, maxDebt);
      if (w < 0) return { ok: false, budget };
      wait = Math.max(wait, w);
    }
    const w = b.bucket.take(now, maxDebt);
    if (w < 0) return { ok: false, budget };
    return { ok: true, delayMs: Math.max(wait, w) };
  }
}
