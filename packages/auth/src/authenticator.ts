import { timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';
import { hashApiKey, isWellFormedApiKey } from './api-key';
import type { KeyStore } from './key-store';
import { InvalidKeyRecordError, resolveKey, type KeyRecord, type ResolvedKey } from './key-record';
import type { AuthMetrics } from './metrics';
import type { RefusedKeys, RefusedKeysAttempt } from './refused-keys';

export type VerifyResult =
  | { status: 'valid'; key: ResolvedKey }
  | { status: 'invalid' }
  | { status: 'revoked' }
  /** The store is unreachable and this key has never been seen (or was seen too long ago). */
  | { status: 'unavailable' }
  /**
   * Not looked up: the key is not in the cache and its address presented too many unknown keys lately
   * (RefusedKeys); it may try again in `retryAfterMs`.
   */
  | { status: 'throttled'; retryAfterMs: number };

/** What `verify` may be told besides the key. */
export interface VerifyOptions {
  /** The client's address (clientAddress), asked for only when the store would be asked. */
  address?: () => string;
  /** Accept a cached answer at most this old (at most the cache TTL). */
  maxAgeMs?: number;
}

const NO_OPTIONS: VerifyOptions = {};

type Cached = { status: 'valid'; key: ResolvedKey } | { status: 'invalid' } | { status: 'revoked' };

interface Entry {
  result: Cached;
  fetchedAt: number;
}

export interface AuthenticatorOptions {
  store: KeyStore;
  /** A cached answer is trusted this long; it bounds how late a revocation takes effect (at most 5 s). */
  cacheTtlMs: number;
  /** While the store is unreachable, a cached answer keeps serving for this long after it was fetched. */
  maxStaleMs: number;
  /**
   * Capacity of the cache of known keys (valid or revoked; least recently used leave first), so memory is bounded.
   * Unknown keys have a bucket of their own, a tenth of this (at least one): sprayed made-up keys push out only each
   * other, never a key in use, which keeps working from the cache while the store is unreachable.
   */
  maxEntries: number;
  /** Unknown keys counted per client address: past its limit an address's uncached keys are not looked up. */
  refusedKeys?: RefusedKeys;
  logger?: Logger;
  metrics?: AuthMetrics;
  now?: () => number;
}

/**
 * Checks API keys against the store with an in-process cache of positive and negative answers, so the steady state
 * costs no Redis round trip per request. Revocations reach every process at once through pub/sub and, should a
 * message be missed, within `cacheTtlMs` at the latest.
 */
export class Authenticator {
  /** Answers for known keys (valid, revoked), and for unknown ones: each a Map in order of last use, oldest first. */
  private readonly known = new Map<string, Entry>();
  private readonly unknown = new Map<string, Entry>();
  private readonly maxUnknown: number;
  private readonly inflight = new Map<string, Promise<Cached>>();
  /** Platforms granted by a record that this version does not know, logged once each. */
  private readonly unknownPlatforms = new Set<string>();
  private readonly now: () => number;

  constructor(private readonly options: AuthenticatorOptions) {
    this.now = options.now ?? Date.now;
    this.maxUnknown = Math.max(1, Math.ceil(options.maxEntries / 10));
  }

  /**
   * Synchronous when the answer is cached and fresh, which is the common case. `address` gives the client's address
   * (clientAddress; asked for only when the store would be asked): each lookup it starts counts against it unless the
   * store knew the key, and while it is over its limit (RefusedKeys) a key without a cached answer is `throttled`, one
   * refused before gets its cached 401 however old, and no lookup is made for either. Without `address` nothing is
   * counted. `maxAgeMs` (at most the cache TTL) asks for an answer at most that old: the WebSocket proxy re-checks open
   * connections' keys on an interval and so still closes a revoked key's sockets within the TTL.
   */
  verify(candidate: string, o: VerifyOptions = NO_OPTIONS): VerifyResult | Promise<VerifyResult> {
    // Only well-formed keys are ever looked up and cached, so a cached hash needs no shape check again.
    const hash = hashApiKey(candidate);
    const entry = this.known.get(hash) ?? this.unknown.get(hash);
    const now = this.now();
    if (entry && now - entry.fetchedAt < Math.min(o.maxAgeMs ?? this.options.cacheTtlMs, this.options.cacheTtlMs)) {
      this.options.metrics?.cache.inc({ result: 'hit' });
      this.used(hash, entry);
      return this.count(entry.result);
    }
    if (!isWellFormedApiKey(candidate)) return this.count({ status: 'invalid' });
    const refusedKeys = this.options.refusedKeys;
    // A lookup of the key already in flight costs nothing more: joined, whoever asks.
    if (o.address === undefined || refusedKeys === undefined || this.inflight.has(hash)) {
      return this.refresh(hash, entry, now);
    }
    const address = o.address();
    const waitMs = refusedKeys.waitMs(address);
    if (waitMs === 0) return this.refresh(hash, entry, now, refusedKeys.begin(address));
    if (entry === undefined) return this.count({ status: 'throttled', retryAfterMs: waitMs });
    if (entry.result.status === 'invalid') {
      this.used(hash, entry);
      return this.count(entry.result);
    }
    // A key the store knew (valid or revoked) is looked up again as always, uncounted.
    return this.refresh(hash, entry, now);
  }

  private async refresh(
    hash: string,
    entry: Entry | undefined,
    now: number,
    attempt?: RefusedKeysAttempt,
  ): Promise<VerifyResult> {
    try {
      const result = await this.fetch(hash);
      this.options.metrics?.cache.inc({ result: 'miss' });
      this.options.refusedKeys?.end(attempt, result.status === 'invalid');
      return this.count(result);
    } catch (err) {
      this.options.refusedKeys?.end(attempt, false);
      if (entry && now - entry.fetchedAt < this.options.maxStaleMs) {
        this.options.metrics?.cache.inc({ result: 'stale' });
        this.used(hash, entry);
        this.options.logger?.warn(
          { err: { message: (err as Error).message } },
          'key store unreachable: serving a cached key answer',
        );
        return this.count(entry.result);
      }
      this.options.logger?.error(
        { err: { message: (err as Error).message } },
        'key store unreachable: cannot verify key',
      );
      return this.count({ status: 'unavailable' });
    }
  }

  /** One store lookup per hash at a time, however many requests wait for it. */
  private fetch(hash: string): Promise<Cached> {
    let pending = this.inflight.get(hash);
    if (!pending) {
      pending = this.lookup(hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, pending);
    }
    return pending;
  }

  private async lookup(hash: string): Promise<Cached> {
    let record: KeyRecord | null;
    try {
      record = await this.options.store.findByHash(hash);
    } catch (err) {
      if (!(err instanceof InvalidKeyRecordError)) throw err;
      // The store answered: an invalid record is an invalid key (its entitlements cannot be read), not an outage.
      this.options.logger?.error(
        { keyId: err.keyId, problems: err.problems },
        'key record invalid: its key is refused until the record is fixed',
      );
      record = null;
    }
    let result: Cached;
    if (!record || !timingSafeEqual(Buffer.from(record.key_hash, 'hex'), Buffer.from(hash, 'hex'))) {
      result = { status: 'invalid' };
    } else if (record.revoked_at !== null) {
      result = { status: 'revoked' };
    } else {
      const { id } = record;
      result = { status: 'valid', key: resolveKey(record, (platforms) => this.ignoredPlatforms(id, platforms)) };
    }
    this.remember(hash, result);
    return result;
  }

  /** A newer version's platforms in a record (a rolling deploy): ignored here, said once per platform. */
  private ignoredPlatforms(keyId: string, platforms: string[]): void {
    const unseen = platforms.filter((p) => !this.unknownPlatforms.has(p));
    if (unseen.length === 0) return;
    for (const p of unseen) this.unknownPlatforms.add(p);
    this.options.logger?.warn(
      { keyId, platforms: unseen },
      'key record grants platforms this version does not know (a newer version added them?): ignored here',
    );
  }

  private remember(hash: string, result: Cached): void {
    this.invalidate(hash);
    const [bucket, max] =
      result.status === 'invalid' ? [this.unknown, this.maxUnknown] : [this.known, this.options.maxEntries];
    bucket.set(hash, { result, fetchedAt: this.now() });
    while (bucket.size > max) {
      const oldest = bucket.keys().next().value;
      if (oldest === undefined) break;
      bucket.delete(oldest);
    }
  }

  /**
   * Marks an answer as the most recently used of its bucket (a Map keeps insertion order; the oldest leaves first),
   * unless it was dropped or replaced meanwhile (while the store was asked).
   */
  private used(hash: string, entry: Entry): void {
    const bucket = entry.result.status === 'invalid' ? this.unknown : this.known;
    if (bucket.get(hash) !== entry) return;
    bucket.delete(hash);
    bucket.set(hash, entry);
  }

  /** Drops the cached answer for a key hash (a create or revoke announced on the events channel). */
  invalidate(hash: string): void {
    this.known.delete(hash);
    this.unknown.delete(hash);
  }

  /** Listens for created and revoked keys on a dedicated subscriber connection. */
  async subscribe(subscriber: Redis): Promise<void> {
    subscriber.on('message', (channel: string, hash: string) => {
      if (channel === this.options.store.eventsChannel) this.invalidate(hash);
    });
    await subscriber.subscribe(this.options.store.eventsChannel);
  }

  private count<T extends VerifyResult>(result: T): T {
    this.options.metrics?.verifications.inc({ result: result.status });
    return result;
  }
}
