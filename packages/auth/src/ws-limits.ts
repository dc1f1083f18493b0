/**
 * Per-key WebSocket limits shared by every replica of a service (the gateway's proxy, the replay): how many
 * connections a key has open and how many subscriptions they hold. One Redis hash per key and service
 * (`{prefix}{namespace}:key:{keyId}`; the gateway's namespace is `ws`, the replay's `replay`, so each service counts
 * its own connections): a field per open connection, `expiresAt:subscriptions`. Each replica renews its connections'
 * leases on an interval, so the entries of a replica that died expire by themselves; every check first drops expired
 * entries. Checks are Lua scripts, atomic across replicas, and read Redis's own clock (TIME), so the replicas' clocks
 * do not matter. While Redis cannot answer, each process counts alone (a key's limits are then per replica), as the
 * rate limits do, and says so in a gauge and the log.
 */
import { randomUUID } from 'node:crypto';
import { AppError, type Logger } from '@depthgate/service-kit';
import type { Caller } from './caller';
import { ipBucket } from './address';
import type { Redis } from './redis';

/** Redis's clock in milliseconds, as `now`. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Live entries of the hash as (connections, subscriptions), after dropping expired ones. */
const SWEEP = `${NOW}
local conns, subs = 0, 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local sep = string.find(all[i + 1], ':')
  local expires = tonumber(string.sub(all[i + 1], 1, sep - 1))
  if expires < now then
    redis.call('HDEL', KEYS[1], all[i])
  else
    conns = conns + 1
    subs = subs + tonumber(string.sub(all[i + 1], sep + 1))
  end
end
`;

/** ARGV: conn, lease, maxConnections → 1 opened, 0 refused. */
const OPEN = `${SWEEP}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
if conns >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], (now + tonumber(ARGV[2])) .. ':0')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1`;

/** ARGV: conn, lease, maxSubscriptions, delta → 1 done, 0 refused (delta > 0 over the limit). */
const SUBS = `${SWEEP}
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local own = 0
if cur then own = tonumber(string.sub(cur, string.find(cur, ':') + 1)) end
local delta = tonumber(ARGV[4])
if delta > 0 and subs + delta > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], (now + tonumber(ARGV[2])) .. ':' .. math.max(0, own + delta))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1`;

/** ARGV: lease, conn, subs, conn, subs, … → renews each entry with its current count. */
const RENEW = `${NOW}
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], (now + tonumber(ARGV[1])) .. ':' .. ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return 1`;

interface Entry {
  keyId: string;
  subs: number;
}

export interface KeyLimitsOptions {
  redis: Redis;
  prefix: string;
  /** Whose connections these are, in the hash's name: the gateway's `ws`, the replay's `replay`. */
  namespace: string;
  leaseMs: number;
  logger: Logger;
  onDegraded: (degraded: boolean) => void;
}

export class KeyLimits {
  /** This process's connections: id → key and subscription count (the source of renewals and of the fallback). */
  private readonly entries = new Map<string, Entry>();
  private degraded = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly o: KeyLimitsOptions) {
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(o.leaseMs / 3)));
    this.timer.unref();
  }

  private hash(keyId: string): string {
    return `${this.o.prefix}${this.o.namespace}:key:${keyId}`;
  }

  private local(keyId: string): { conns: number; subs: number } {
    let conns = 0;
    let subs = 0;
    for (const e of this.entries.values()) {
      if (e.keyId !== keyId) continue;
      conns++;
      subs += e.subs;
    }
    return { conns, subs };
  }

  private setDegraded(value: boolean, err?: unknown): void {
    if (value === this.degraded) return;
    this.degraded = value;
    this.o.onDegraded(value);
    if (value)
      this.o.logger.error(
        { err: { message: (err as Error | undefined)?.message } },
        'WebSocket key limits: Redis unreachable; counting per process',
      );
    else this.o.logger.info('WebSocket key limits: Redis reachable again');
  }

  private async script(source: string, keyId: string, args: (string | number)[]): Promise<number | undefined> {
    try {
      const result = (await this.o.redis.eval(source, 1, this.hash(keyId), ...args)) as number;
      this.setDegraded(false);
      return result;
    } catch (err) {
      this.setDegraded(true, err);
      return undefined;
    }
  }

  /** Registers a connection of `keyId` unless the key already has `max` open. */
  async open(conn: string, keyId: string, max: number): Promise<boolean> {
    const shared = await this.script(OPEN, keyId, [conn, this.o.leaseMs, max]);
    const ok = shared === undefined ? this.local(keyId).conns < max : shared === 1;
    if (ok) this.entries.set(conn, { keyId, subs: 0 });
    return ok;
  }

  /** Takes `n` subscriptions for a connection unless its key would hold more than `max`. */
  async reserve(conn: string, n: number, max: number): Promise<boolean> {
    const e = this.entries.get(conn);
    if (!e) return false;
    const shared = await this.script(SUBS, e.keyId, [conn, this.o.leaseMs, max, n]);
    const ok = shared === undefined ? this.local(e.keyId).subs + n <= max : shared === 1;
    if (ok && this.entries.get(conn) === e) e.subs += n;
    return ok;
  }

  /** Gives subscriptions back (never refused; Redis errors leave the lease to correct the count). */
  release(conn: string, n: number): void {
    const e = this.entries.get(conn);
    if (!e || n <= 0) return;
    e.subs = Math.max(0, e.subs - n);
    void this.script(SUBS, e.keyId, [conn, this.o.leaseMs, Number.MAX_SAFE_INTEGER, -n]);
  }

  close(conn: string): void {
    const e = this.entries.get(conn);
    if (!e) return;
    this.entries.delete(conn);
    this.o.redis.hdel(this.hash(e.keyId), conn).catch(() => undefined);
  }

  private async renew(): Promise<void> {
    const byKey = new Map<string, string[]>();
    for (const [conn, e] of this.entries) {
      let conns = byKey.get(e.keyId);
      if (!conns) byKey.set(e.keyId, (conns = []));
      conns.push(conn);
    }
    for (const [keyId, conns] of byKey) {
      // As they are now: a connection closed (HDEL) while an earlier key's renewal was awaited is not written back.
      const list: (string | number)[] = [];
      for (const conn of conns) {
        const e = this.entries.get(conn);
        if (e) list.push(conn, e.subs);
      }
      if (list.length > 0) await this.script(RENEW, keyId, [this.o.leaseMs, ...list]);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * A cap on the requests of one kind a caller has running at once — a key's, or those of an address without one —
 * every replica together: KeyLimits' leases (give it a namespace of its own). `what` names them in the refusal
 * ("HTTP replays", "bulk streams").
 */
export class RunningRequests {
  private readonly instance = randomUUID();
  private next = 0;

  constructor(
    private readonly limits: KeyLimits,
    private readonly max: { perKey: number; anonymous: number },
    private readonly what: string,
  ) {}

  /** A place among the caller's running requests: its release (call it once the request ends, however it ends). */
  async take(caller: Caller | undefined): Promise<() => void> {
    const id = `${this.instance}:${this.next++}`;
    const keyed = caller?.kind === 'key';
    const max = keyed ? this.max.perKey : this.max.anonymous;
    const bucket = caller?.kind === 'key' ? caller.key.id : `ip:${ipBucket(caller?.ip ?? 'unknown')}`;
    if (await this.limits.open(id, bucket, max)) return () => this.limits.close(id);
    throw new AppError(
      'too_many_connections',
      keyed
        ? `This API key may run ${max} ${this.what} at once; retry when one has finished`
        : `Callers without an API key may run ${max} ${this.what} at once per address; retry when one has finished`,
      { headers: { 'Retry-After': '5' } },
    );
  }
}
