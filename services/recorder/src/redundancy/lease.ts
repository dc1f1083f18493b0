/**
 * A recorder's term and lease in Redis (redundant recording, /work/notes/redundant-design.md §3.2).
 *
 * - `{prefix}term`: `INCR` gives each recorder process a new term at start. Terms are unique and increase; the term is
 *   the fencing token (insert query ids `rec-{term}-…`, spool records, `handovers` rows).
 * - `{prefix}lease:{term}` = the recorder's id, `PX` ttl, renewed every ttl / 5 by a script that extends it only if it
 *   still holds our id. Another recorder reads `alive(term)` (the key exists) to know whether a term's owner lives.
 * - The local deadline (monotonic clock) = send time of the last successful renewal + ttl − margin. Past it this
 *   recorder must insert nothing (`canInsert()` is the writer's gate): by then a peer may have seen the key expire.
 * - `deposed` is emitted once, when a renewal finds the key gone (or not ours) or the deadline passes. A deposed lease
 *   is over: it stops renewing, `canInsert()` stays false, and the recorder must start again with a new term (its
 *   spool replays with the fence).
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Logger, Redis } from '@depthgate/service-kit';

/** Extends the lease only if it still holds our id: 1 extended, 0 gone or someone else's. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Deletes the lease only if it still holds our id. */
const DROP = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface LeaseOptions {
  redis: Redis;
  /** Key prefix (RECORDER_REDIS_PREFIX). */
  prefix: string;
  /** This recorder's id (RECORDER_ID). */
  id: string;
  /** RECORDER_LEASE_TTL_MS. */
  ttlMs: number;
  /** Safety margin of the local deadline before the key's expiry (default 0.3 × ttl: 1500 ms of 5000). */
  marginMs?: number;
  /** Monotonic clock, ms (default performance.now). */
  now?: () => number;
  logger?: Logger;
}

export type DeposedReason = 'lost' | 'deadline';

export class Lease extends EventEmitter<{ deposed: [DeposedReason] }> {
  private deadline: number;
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;
  private over = false;
  private readonly now: () => number;
  private readonly marginMs: number;

  private constructor(
    private readonly o: LeaseOptions,
    readonly term: number,
    sentAt: number,
  ) {
    super();
    this.now = o.now ?? (() => performance.now());
    this.marginMs = o.marginMs ?? Math.round(o.ttlMs * 0.3);
    this.deadline = sentAt + o.ttlMs - this.marginMs;
  }

  /** A new term (INCR) and its lease; renewals start at once. */
  static async acquire(o: LeaseOptions): Promise<Lease> {
    const now = o.now ?? (() => performance.now());
    const term = Number(await o.redis.incr(`${o.prefix}term`));
    const sentAt = now();
    const ok = await o.redis.set(leaseKey(o.prefix, term), o.id, 'PX', o.ttlMs, 'NX');
    if (ok !== 'OK') throw new Error(`the lease of the new term ${term} exists already`);
    const lease = new Lease(o, term, sentAt);
    lease.schedule();
    return lease;
  }

  get key(): string {
    return leaseKey(this.o.prefix, this.term);
  }

  /** True while inserts are allowed: not deposed and before the local deadline. */
  canInsert(): boolean {
    if (this.over) return false;
    if (this.now() >= this.deadline) {
      this.depose('deadline');
      return false;
    }
    return true;
  }

  get deposed(): boolean {
    return this.over;
  }

  /** Whether a term's lease exists (its recorder is alive, or was within its TTL). */
  async alive(term: number): Promise<boolean> {
    return (await this.o.redis.exists(leaseKey(this.o.prefix, term))) === 1;
  }

  /** One renewal (also run by the timer). False: not renewed (Redis unreachable, or deposed). */
  async renew(): Promise<boolean> {
    if (this.over || this.renewing) return false;
    this.renewing = true;
    const sentAt = this.now();
    try {
      const r = Number(await this.o.redis.eval(RENEW, 1, this.key, this.o.id, String(this.o.ttlMs)));
      if (this.over) return false;
      if (r !== 1) {
        this.depose('lost');
        return false;
      }
      this.deadline = Math.max(this.deadline, sentAt + this.o.ttlMs - this.marginMs);
      return true;
    } catch (err) {
      this.o.logger?.warn({ err: { message: (err as Error).message }, term: this.term }, 'lease renewal failed');
      this.canInsert();
      return false;
    } finally {
      this.renewing = false;
    }
  }

  /** Stops renewing and deletes the lease (an orderly stop: peers see the term gone at once). */
  async stop(): Promise<void> {
    const wasOver = this.over;
    this.over = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!wasOver) await this.o.redis.eval(DROP, 1, this.key, this.o.id).catch(() => undefined);
  }

  private schedule(): void {
    if (this.over) return;
    const interval = Math.max(1, Math.floor(this.o.ttlMs / 5));
    this.timer = setTimeout(() => {
      void this.renew().finally(() => {
        this.canInsert();
        this.schedule();
      });
    }, interval);
    this.timer.unref();
  }

  private depose(reason: DeposedReason): void {
    if (this.over) return;
    this.over = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.o.logger?.error({ term: this.term, reason }, 'lease lost: this term may insert nothing more');
    this.emit('deposed', reason);
  }
}

export function leaseKey(prefix: string, term: number): string {
  return `${prefix}lease:${term}`;
}
