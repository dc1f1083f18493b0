/** Lease and ownership against the real Redis (TEST_REDIS_URL); every test under a prefix of its own. */
import { createRedisClient, waitForRedis, type Redis } from '@depthgate/service-kit';
import { testRedisUrl, uniqueName, waitFor } from '@depthgate/test-utils';
import { Lease, leaseKey } from './lease';
import { RedisOwnership } from './ownership';

let redis: Redis;
let prefix: string;

beforeAll(async () => {
  redis = createRedisClient(testRedisUrl(), { name: 'recorder-coordination-test', offlineQueue: true });
  await waitForRedis(redis, 5000);
});
afterAll(() => redis.disconnect());
beforeEach(() => {
  prefix = `${uniqueName('rec')}:`;
});

describe('Lease', () => {
  it('gives every acquisition a larger term, with its lease key holding the recorder id', async () => {
    const a = await Lease.acquire({ redis, prefix, id: 'rec-a', ttlMs: 5000 });
    const b = await Lease.acquire({ redis, prefix, id: 'rec-b', ttlMs: 5000 });
    try {
      expect(b.term).toBeGreaterThan(a.term);
      expect(await redis.get(leaseKey(prefix, a.term))).toBe('rec-a');
      expect(await redis.get(leaseKey(prefix, b.term))).toBe('rec-b');
      expect(await a.alive(b.term)).toBe(true);
      expect(await a.alive(b.term + 1)).toBe(false);
      expect(a.canInsert()).toBe(true);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('renews: the key gets its TTL back and the local deadline moves on', async () => {
    let t = 0;
    const lease = await Lease.acquire({ redis, prefix, id: 'rec-a', ttlMs: 60_000, now: () => t });
    try {
      await redis.pexpire(lease.key, 10_000);
      t = 50_000; // past the first deadline (60 000 − 18 000), not yet checked
      expect(await lease.renew()).toBe(true);
      expect(await redis.pttl(lease.key)).toBeGreaterThan(10_000);
      t = 50_000 + 41_000; // within the renewed deadline (50 000 + 42 000)
      expect(lease.canInsert()).toBe(true);
    } finally {
      await lease.stop();
    }
  });

  it('is deposed when its deadline passes without renewal, and its key then expires', async () => {
    let t = 0;
    const lease = await Lease.acquire({ redis, prefix, id: 'rec-a', ttlMs: 1000, now: () => t });
    const other = await Lease.acquire({ redis, prefix, id: 'rec-b', ttlMs: 5000 });
    try {
      const deposed: string[] = [];
      lease.on('deposed', (reason) => deposed.push(reason));
      t = 700; // ttl − margin (300)
      expect(lease.canInsert()).toBe(false);
      expect(deposed).toEqual(['deadline']);
      expect(await lease.renew()).toBe(false);
      // Nothing renews it any more: the key expires, and a peer sees the term dead.
      await waitFor(async () => !(await other.alive(lease.term)), { what: 'the lease to expire' });
      expect(await redis.exists(lease.key)).toBe(0);
    } finally {
      await lease.stop();
      await other.stop();
    }
  });

  it('is deposed when a renewal finds its key gone or someone else’s', async () => {
    const lease = await Lease.acquire({ redis, prefix, id: 'rec-a', ttlMs: 5000 });
    try {
      const deposed = new Promise((resolve) => lease.once('deposed', resolve));
      await redis.set(lease.key, 'impostor', 'PX', 5000);
      expect(await lease.renew()).toBe(false);
      expect(await deposed).toBe('lost');
      expect(lease.canInsert()).toBe(false);
      expect(await redis.get(lease.key)).toBe('impostor'); // not extended, not deleted
    } finally {
      await lease.stop();
    }
  });

  it('deletes its key on an orderly stop', async () => {
    const lease = await Lease.acquire({ redis, prefix, id: 'rec-a', ttlMs: 5000 });
    await lease.stop();
    expect(await redis.exists(lease.key)).toBe(0);
    expect(lease.canInsert()).toBe(false);
  });
});

describe('RedisOwnership', () => {
  it('claims unowned tickers once: of two claimers exactly one wins each ticker', async () => {
    const own = new RedisOwnership(redis, prefix);
    const [a, b] = await Promise.all([
      own.claim('venue_b', ['X', 'Y', 'Z'], null, 7),
      own.claim('venue_b', ['X', 'Y', 'Z'], null, 8),
    ]);
    expect([...a, ...b].sort()).toEqual(['X', 'Y', 'Z']);
    expect(a.length === 3 || b.length === 3).toBe(true);
    const winner = a.length === 3 ? 7 : 8;
    expect(await own.confirm('venue_b', ['X', 'Y'], winner === 7 ? 8 : 7)).toEqual([]);
    expect(await own.confirm('venue_b', ['X', 'Y'], winner)).toEqual(['X', 'Y']);
    const owners = await own.owners('venue_b');
    expect(Object.fromEntries(owners)).toEqual({
      X: { term: winner, state: 'owned' },
      Y: { term: winner, state: 'owned' },
      Z: { term: winner, state: 'splicing' },
    });
    expect((await own.owners('venue_c')).size).toBe(0);
  });

  it('takes a ticker from a dead term only with the value it read (compare-and-set on the whole value)', async () => {
    const own = new RedisOwnership(redis, prefix);
    await own.claim('venue_b', ['X'], null, 3);
    await own.confirm('venue_b', ['X'], 3);
    // Two recorders saw X owned by the dead term 3; both claim it from 3|owned.
    const results = await Promise.all([
      own.claim('venue_b', ['X'], { term: 3, state: 'owned' }, 4),
      own.claim('venue_b', ['X'], { term: 3, state: 'owned' }, 5),
    ]);
    expect(results.map((r) => r.length).sort()).toEqual([0, 1]);
    // A stale read (3|released) claims nothing.
    expect(await own.claim('venue_b', ['X'], { term: 3, state: 'released' }, 6)).toEqual([]);
  });

  it('releases only what the term owns, and a peer then claims it from the released value', async () => {
    const own = new RedisOwnership(redis, prefix);
    await own.claim('venue_b', ['X', 'Y'], null, 3);
    await own.confirm('venue_b', ['X', 'Y'], 3);
    expect(await own.release('venue_b', ['X', 'Y'], 4)).toEqual([]);
    expect(await own.release('venue_b', ['X'], 3)).toEqual(['X']);
    expect(await own.claim('venue_b', ['X', 'Y'], { term: 3, state: 'released' }, 4)).toEqual(['X']);
    expect(Object.fromEntries(await own.owners('venue_b'))).toEqual({
      X: { term: 4, state: 'splicing' },
      Y: { term: 3, state: 'owned' },
    });
  });

  it('deletes an entry only from the value it read (compare-and-delete), and the ticker is then unowned', async () => {
    const own = new RedisOwnership(redis, prefix);
    await own.claim('venue_b', ['X', 'Y'], null, 3);
    await own.confirm('venue_b', ['X', 'Y'], 3);
    await own.release('venue_b', ['X', 'Y'], 3);
    await own.claim('venue_b', ['Y'], { term: 3, state: 'released' }, 4); // Y taken meanwhile
    expect(await own.swap('venue_b', ['X', 'Y'], { term: 3, state: 'released' }, null)).toEqual(['X']);
    expect(Object.fromEntries(await own.owners('venue_b'))).toEqual({ Y: { term: 4, state: 'splicing' } });
    expect(await redis.hexists(`${prefix}owner:venue_b`, 'X')).toBe(0);
    expect(await own.claim('venue_b', ['X'], null, 5)).toEqual(['X']);
  });

  it('notes when tickers were first seen unheld (the first time stays), forgets them, in batches; the hash expires', async () => {
    const own = new RedisOwnership(redis, prefix);
    const many = Array.from({ length: 1201 }, (_, i) => `T${i}`);
    await own.noteUnheld('venue_b', many, 1000, []);
    await own.noteUnheld('venue_b', ['T0', 'U'], 2000, ['T1', 'T1200']);
    const since = await own.unheldSince('venue_b');
    expect(since.size).toBe(1200);
    expect([since.get('T0'), since.get('T1199'), since.get('U'), since.has('T1'), since.has('T1200')]).toEqual([
      1000,
      1000,
      2000,
      false,
      false,
    ]);
    expect(await own.unheldSince('venue_c')).toEqual(new Map());
    // Unwritten for two hours, the hash goes: its TTL is set at each write.
    const ttl = await redis.pttl(`${prefix}unheld:venue_b`);
    expect(ttl).toBeGreaterThan(3_600_000);
    expect(ttl).toBeLessThanOrEqual(7_200_000);
    await own.noteUnheld('venue_b', [], 3000, [...since.keys()]);
    expect(await redis.exists(`${prefix}unheld:venue_b`)).toBe(0);
  });

  it('keeps each term’s live set, in batches, and forgets a term', async () => {
    const own = new RedisOwnership(redis, prefix);
    const many = Array.from({ length: 1201 }, (_, i) => `T${i}`);
    await own.setLive('venue_b', 3, many, []);
    await own.setLive('venue_b', 3, [], ['T0', 'T1']);
    await own.setLive('venue_b', 4, ['T0'], []);
    let sets = await own.liveSets('venue_b');
    expect(sets.get(3)?.size).toBe(1199);
    expect(sets.get(3)?.has('T0')).toBe(false);
    expect(sets.get(3)?.has('T1200')).toBe(true);
    expect([...(sets.get(4) ?? [])]).toEqual(['T0']);
    await own.dropLive('venue_b', 3);
    sets = await own.liveSets('venue_b');
    expect([...sets.keys()]).toEqual([4]);
  });
});
