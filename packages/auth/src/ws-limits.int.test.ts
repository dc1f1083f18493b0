import { createLogger } from '@depthgate/service-kit';
import { testRedisUrl, uniqueName, waitFor } from '@depthgate/test-utils';
import { createRedisClient, waitForRedis, type Redis } from './redis';
import { KeyLimits } from './ws-limits';

const logger = createLogger({ name: 'ws-limits-test', level: 'silent' });

/** Every clock Jest can fake but Date. */
const REAL_TIMERS: FakeableAPI[] = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
];

describe('per-key WebSocket limits in Redis (shared by the gateway and the replay)', () => {
  let redis: Redis;
  let prefix: string;
  const made: KeyLimits[] = [];
  beforeAll(async () => {
    redis = createRedisClient(testRedisUrl(), { name: 'ws-limits-test', offlineQueue: true });
    await waitForRedis(redis, 5000);
  });
  afterAll(() => redis.disconnect());
  beforeEach(() => {
    prefix = `${uniqueName('wslim')}:`;
  });
  afterEach(() => {
    for (const l of made.splice(0)) l.stop();
  });

  /** One replica's limits. */
  const replica = (o: { namespace?: string; leaseMs?: number; client?: Redis; degraded?: boolean[] } = {}) => {
    const l = new KeyLimits({
      redis: o.client ?? redis,
      prefix,
      namespace: o.namespace ?? 'replay',
      leaseMs: o.leaseMs ?? 60_000,
      logger,
      onDegraded: (d) => o.degraded?.push(d),
    });
    made.push(l);
    return l;
  };

  it('counts a key’s connections across replicas, refuses over the limit, and frees a place on close', async () => {
    const a = replica();
    const b = replica();
    expect(await a.open('a:1', 'k1', 2)).toBe(true);
    expect(await b.open('b:1', 'k1', 2)).toBe(true);
    expect(await a.open('a:2', 'k1', 2)).toBe(false);
    expect(await b.open('b:2', 'k1', 2)).toBe(false);
    // Another key has its own count.
    expect(await b.open('b:3', 'k2', 2)).toBe(true);
    expect(await redis.hlen(`${prefix}replay:key:k1`)).toBe(2);
    a.close('a:1');
    await waitForHlen(`${prefix}replay:key:k1`, 1);
    expect(await b.open('b:2', 'k1', 2)).toBe(true);
    // Opening a connection that is already counted does not count it twice.
    expect(await b.open('b:2', 'k1', 2)).toBe(true);
    expect(await redis.hlen(`${prefix}replay:key:k1`)).toBe(2);
  });

  it('keeps each namespace’s count apart (the gateway’s `ws` and the replay’s `replay`)', async () => {
    const gateway = replica({ namespace: 'ws' });
    const replay = replica({ namespace: 'replay' });
    expect(await gateway.open('g:1', 'k', 1)).toBe(true);
    expect(await gateway.open('g:2', 'k', 1)).toBe(false);
    expect(await replay.open('r:1', 'k', 1)).toBe(true);
    expect(await replay.open('r:2', 'k', 1)).toBe(false);
    expect(await redis.hkeys(`${prefix}ws:key:k`)).toEqual(['g:1']);
    expect(await redis.hkeys(`${prefix}replay:key:k`)).toEqual(['r:1']);
  });

  it('lets the connections of a replica that died expire with their lease', async () => {
    const dead = replica({ leaseMs: 1000 });
    expect(await dead.open('dead:1', 'k', 1)).toBe(true);
    dead.stop(); // no renewals, no close: the process is gone
    const alive = replica({ leaseMs: 1000 });
    expect(await alive.open('alive:1', 'k', 1)).toBe(false);
    await waitFor(() => alive.open('alive:1', 'k', 1), { timeoutMs: 5000, what: 'the dead replica’s lease to end' });
    expect(await redis.hkeys(`${prefix}replay:key:k`)).toEqual(['alive:1']);
  });

  it('reads Redis’s clock, not the replica’s: one whose clock is 2 minutes ahead drops no live connection', async () => {
    const a = replica();
    expect(await a.open('a:1', 'k', 1)).toBe(true);
    expect(await a.reserve('a:1', 2, 2)).toBe(true);
    // This process's Date only (every timer stays real, for the Redis client).
    jest.useFakeTimers({ now: Date.now() + 120_000, doNotFake: REAL_TIMERS });
    try {
      const ahead = replica();
      expect(await ahead.open('b:1', 'k', 1)).toBe(false);
      expect(await ahead.open('b:1', 'k', 2)).toBe(true);
      expect(await ahead.reserve('b:1', 1, 2)).toBe(false);
      // Its renewals are as long as anyone's: a second replica with a true clock still sees both connections live.
      await (ahead as unknown as { renew(): Promise<void> }).renew();
    } finally {
      jest.useRealTimers();
    }
    expect(await replica().open('c:1', 'k', 2)).toBe(false);
    // Every lease, the ahead replica's renewal included, ends within a lease of Redis's own clock.
    const [seconds, micros] = await redis.time();
    const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    const leases = Object.values(await redis.hgetall(`${prefix}replay:key:k`)).map((v) => Number(v.split(':')[0]));
    expect(leases).toHaveLength(2);
    for (const end of leases) expect(end).toBeLessThanOrEqual(redisNow + 60_000);
  });

  it('counts subscriptions per key across connections and gives them back', async () => {
    const a = replica();
    expect(await a.open('a:1', 'k', 5)).toBe(true);
    expect(await a.open('a:2', 'k', 5)).toBe(true);
    expect(await a.reserve('a:1', 3, 4)).toBe(true);
    expect(await a.reserve('a:2', 2, 4)).toBe(false);
    expect(await a.reserve('a:2', 1, 4)).toBe(true);
    a.release('a:1', 2);
    await waitForField(`${prefix}replay:key:k`, 'a:1', (v) => v.endsWith(':1'));
    expect(await a.reserve('a:2', 2, 4)).toBe(true);
  });

  it('a connection closed while another key’s renewal is in flight is not written back by its own key’s', async () => {
    const a = replica();
    expect(await a.open('a:1', 'kA', 1)).toBe(true);
    expect(await a.open('a:2', 'kB', 1)).toBe(true);
    // The lease timer's renewal (private; called here so that the close lands while kA's script is awaited).
    const renewing = (a as unknown as { renew(): Promise<void> }).renew();
    a.close('a:2');
    await renewing;
    expect(await redis.hkeys(`${prefix}replay:key:kB`)).toEqual([]);
    expect(await a.open('a:3', 'kB', 1)).toBe(true);
  });

  it('counts per process while Redis cannot answer, and says so', async () => {
    // A client whose every command fails, as a fail-fast client's do while Redis is unreachable.
    const unreachable = () => Promise.reject(new Error('Connection is closed.'));
    const down = { eval: unreachable, hdel: unreachable } as unknown as Redis;
    const degraded: boolean[] = [];
    const a = replica({ client: down, degraded });
    expect(await a.open('a:1', 'k', 2)).toBe(true);
    expect(await a.open('a:2', 'k', 2)).toBe(true);
    expect(await a.open('a:3', 'k', 2)).toBe(false);
    a.close('a:1');
    expect(await a.open('a:3', 'k', 2)).toBe(true);
    expect(degraded).toEqual([true]);
  });

  async function waitForHlen(key: string, n: number): Promise<void> {
    for (let i = 0; i < 100 && (await redis.hlen(key)) !== n; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await redis.hlen(key)).toBe(n);
  }
  async function waitForField(key: string, field: string, ok: (v: string) => boolean): Promise<void> {
    for (let i = 0; i < 100 && !ok((await redis.hget(key, field)) ?? ''); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(ok((await redis.hget(key, field)) ?? '')).toBe(true);
  }
});
