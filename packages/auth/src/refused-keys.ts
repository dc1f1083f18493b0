import { ipBucket } from './address';

/**
 * Made-up keys, counted per client address. A well-formed key that is not in the cache costs a Redis GET, and a
 * caller who presents a key is answered 401 before any rate limit applies (the limits count keys and anonymous
 * callers, and an unknown key is neither), so without this a client spraying made-up keys cost Redis a GET per request
 * with no bound. Each key the store does not know counts against its address (ipBucket: IPv4, or IPv6 by /56) in a
 * one-minute window kept in this process; an address that reached `perMinute` is answered 429 for every key the cache
 * has no answer for, without asking Redis, until its window ends. Keys the cache has an answer for (valid, revoked, or
 * refused before, fresh or stale) are answered as always, so a caller who shares the address with a sprayer keeps
 * using a key it used before. Per process: with N replicas an address may try N × `perMinute` keys a minute.
 */
export class RefusedKeys {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly windowMs: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;

  constructor(
    /** Unknown keys an address may present per window (0: no limit). */
    private readonly perMinute: number,
    options: {
      windowMs?: number;
      /** Addresses counted at once (the oldest window leaves first): memory is bounded whatever the addresses. */
      maxAddresses?: number;
      now?: () => number;
    } = {},
  ) {
    this.windowMs = options.windowMs ?? 60_000;
    this.maxAddresses = options.maxAddresses ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Milliseconds until a key from `address` that the cache does not know may be looked up (0: now). */
  waitMs(address: string): number {
    if (this.perMinute === 0) return 0;
    const window = this.windows.get(ipBucket(address));
    if (window === undefined) return 0;
    const left = window.resetAt - this.now();
    return left > 0 && window.count >= this.perMinute ? left : 0;
  }

  /** The store did not know a key presented from `address`. */
  refused(address: string): void {
    if (this.perMinute === 0) return;
    const bucket = ipBucket(address);
    const now = this.now();
    let window = this.windows.get(bucket);
    if (window === undefined || window.resetAt <= now) {
      this.windows.delete(bucket);
      if (this.windows.size >= this.maxAddresses) this.evict(now);
      window = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(bucket, window);
    }
    window.count++;
  }

  /** Addresses counted (tests, metrics). */
  get size(): number {
    return this.windows.size;
  }

  /** Drops the ended windows, then (still full) the oldest: a Map iterates in insertion order. */
  private evict(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    for (const k of this.windows.keys()) {
      if (this.windows.size < this.maxAddresses) break;
      this.windows.delete(k);
    }
  }
}
