import { ipBucket } from './address';

/** One lookup counted against its address's window (the window it was counted in). */
export interface RefusedKeysAttempt {
  count: number;
  resetAt: number;
}

/**
 * Made-up keys, counted per client address. A well-formed key that is not in the cache costs a Redis GET, and a
 * caller who presents a key is answered 401 before any rate limit applies (the limits count keys and anonymous
 * callers, and an unknown key is neither), so without this a client spraying made-up keys cost Redis a GET per request
 * with no bound. Each lookup a client address starts counts against it (ipBucket: IPv4, or IPv6 by /56) in a
 * one-minute window kept in this process, and is given back unless the store did not know the key (`begin`, `end`:
 * counted when it starts, so concurrent lookups cannot pass the limit together). An address that reached `perMinute`
 * (`waitMs` > 0) is answered without a lookup until its window ends (Authenticator.verify: 429 for a key without a
 * cached answer, the cached 401 for one refused before). Per process: with N replicas an address may try N ×
 * `perMinute` keys a minute.
 */
export class RefusedKeys {
  /** Per address bucket, in the order the windows started (so also the order they end). */
  private readonly windows = new Map<string, RefusedKeysAttempt>();
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

  /**
   * Counts a lookup that `address` starts now (undefined without a limit); `end` says how it ended. Called only when
   * `waitMs` is 0, so the count stays within the limit however many lookups run at once.
   */
  begin(address: string): RefusedKeysAttempt | undefined {
    if (this.perMinute === 0) return undefined;
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
    return window;
  }

  /** The lookup ended: a key the store did not know stays counted; any other answer (or none) is given back. */
  end(attempt: RefusedKeysAttempt | undefined, unknown: boolean): void {
    if (attempt !== undefined && !unknown && attempt.count > 0) attempt.count--;
  }

  /** Addresses counted (tests, metrics). */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Drops the ended windows, then (still full) the oldest. The Map iterates in the order the windows started, which is
   * the order they end: the first window not ended ends the scan.
   */
  private evict(now: number): void {
    for (const [k, w] of this.windows) {
      if (w.resetAt > now && this.windows.size < this.maxAddresses) break;
      this.windows.delete(k);
    }
  }
}
