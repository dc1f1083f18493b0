import type { Options } from 'express-rate-limit';
import { testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { LeasedRedisStore, leaseSize, storeKey } from './leased-store';
import { createRedisClient, waitForRedis, type Redis } from './redis';

describe('leased rate-limit counting in Redis', () => {
  let redis: Redis;
  let prefix: string;
  beforeAll(async () => {
    redis = createRedisClient(testRedisUrl(), { name: 'lease-test', offlineQueue: true });
    await waitForRedis(redis, 5000);
  });
  afterAll(() => redis.disconnect());
  beforeEach(() => {
    prefix = `${uniqueName('lease')}:`;
  });

  const store = (windowMs = 60_000) => {
    const s = new LeasedRedisStore(redis, prefix);
    s.init({ windowMs } as Options);
    return s;
  };

  it('leases 1% of the limit, at least one number', () => {
    expect([1, 5, 199, 200, 600, 60_000].map(leaseSize)).toEqual([1, 1, 1, 2, 6, 600]);
  });

  it('counts small limits exactly, one Redis increment per request, across processes', async () => {
    const a = store();
    const b = store();
    const key = storeKey('key:k1', 5);
    const hits = [];
    for (const s of [a, b, a, b, b, a, b]) hits.push((await s.increment(key)).totalHits);
    expect(hits).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await redis.get(`${prefix}key:k1`)).toBe('7');
  });

  it('never lets more than the limit through, and loses less than a lease per process', async () => {
    const a = store();
    const b = store();
    const key = storeKey('key:big', 1000); // leases of 10
    let allowed = 0;
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 1500; i++) {
      const s = i % 3 === 0 ? b : a;
      calls.push(s.increment(key).then(({ totalHits }) => void (totalHits <= 1000 && allowed++)));
    }
    await Promise.all(calls);
    expect(allowed).toBeLessThanOrEqual(1000);
    expect(allowed).toBeGreaterThanOrEqual(1000 - 2 * 9);
    // 1,500 requests took about 150 leases, not 1,500 round trips.
    expect(Number(await redis.get(`${prefix}key:big`))).toBeLessThanOrEqual(1500 + 2 * 10);
  });

  it('starts over when the window ends, in every process', async () => {
    const a = store(300);
    const b = store(300);
    const key = storeKey('key:w', 1000);
    expect((await a.increment(key)).totalHits).toBe(1);
    expect((await b.increment(key)).totalHits).toBe(11);
    const { resetTime } = await a.increment(key);
    expect(resetTime!.getTime() - Date.now()).toBeLessThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 350));
    expect((await b.increment(key)).totalHits).toBe(1);
    expect((await a.increment(key)).totalHits).toBe(11);
  });

  it('reloads its script after Redis forgot it (SCRIPT FLUSH, as after a restart)', async () => {
    const s = store();
    const key = storeKey('key:f', 5);
    expect((await s.increment(key)).totalHits).toBe(1);
    await redis.script('FLUSH');
    expect((await s.increment(key)).totalHits).toBe(2);
  });
});
