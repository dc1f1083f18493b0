import { testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { Registry } from 'prom-client';
import { AuthMetrics } from './metrics';
import { RateLimiter, leaseSize, type RateLimitDecision } from './rate-limit';
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

  const limiter = () =>
    new RateLimiter({ redis, prefix, defaultRequestsPerMinute: 600, anonymousRequestsPerMinute: 10 });
  const used = async (d: RateLimitDecision | Promise<RateLimitDecision>) => (await d).used;

  it('leases 1% of the limit, at least one number', () => {
    expect([1, 5, 199, 200, 600, 60_000].map(leaseSize)).toEqual([1, 1, 1, 2, 6, 600]);
  });

  it('counts small limits exactly, one Redis increment per request, across processes', async () => {
    const a = limiter();
    const b = limiter();
    const decisions = [];
    for (const l of [a, b, a, b, b, a]) decisions.push(await l.consume('key:k1', 5));
    expect(decisions.map((d) => d.used)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(await redis.get(`${prefix}rl:key:k1`)).toBe('6');
    expect(decisions[5]).toMatchObject({ allowed: false, limit: 5, remaining: 0 });
  });

  it('refuses a flood over the limit without asking Redis again until the window ends', async () => {
    // The processes' clock stands still until the test moves it, so the window cannot end mid-test on a slow machine.
    let clock = Date.now();
    const now = () => clock;
    const a = new RateLimiter({ redis, prefix, now, defaultRequestsPerMinute: 600, anonymousRequestsPerMinute: 10 });
    const b = new RateLimiter({ redis, prefix, now, defaultRequestsPerMinute: 600, anonymousRequestsPerMinute: 10 });
    const allowed = [];
    for (const l of [a, b, a]) allowed.push((await l.consume('key:flood', 2)).allowed);
    expect(allowed).toEqual([true, true, false]);
    expect(await redis.get(`${prefix}rl:key:flood`)).toBe('3');
    // a saw the count reach the limit: its refusals are synchronous and count nothing more in Redis.
    for (let i = 0; i < 50; i++) {
      const d = a.consume('key:flood', 2);
      expect(d).not.toBeInstanceOf(Promise);
      expect((d as RateLimitDecision).allowed).toBe(false);
    }
    expect(await redis.get(`${prefix}rl:key:flood`)).toBe('3');
    // b took number 2, the limit: it refuses on its own too.
    const fromB = b.consume('key:flood', 2);
    expect(fromB).not.toBeInstanceOf(Promise);
    expect((fromB as RateLimitDecision).allowed).toBe(false);
    expect(await redis.get(`${prefix}rl:key:flood`)).toBe('3');
    // A higher limit (the key's record changed) is asked of Redis again.
    expect((await a.consume('key:flood', 10)).allowed).toBe(true);
    // The next window starts over (Redis's count expired with it).
    clock += 60_000;
    await redis.del(`${prefix}rl:key:flood`);
    expect((await a.consume('key:flood', 2)).allowed).toBe(true);
  });

  it('never lets more than the limit through, and loses less than a lease per process', async () => {
    const a = limiter();
    const b = limiter();
    let allowed = 0;
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 1500; i++) {
      const l = i % 3 === 0 ? b : a;
      calls.push(Promise.resolve(l.consume('key:big', 1000)).then((d) => void (d.allowed && allowed++)));
    }
    await Promise.all(calls);
    expect(allowed).toBeLessThanOrEqual(1000);
    expect(allowed).toBeGreaterThanOrEqual(1000 - 2 * 9);
    // 1,500 requests took about 150 leases of 10, not 1,500 round trips.
    expect(Number(await redis.get(`${prefix}rl:key:big`))).toBeLessThanOrEqual(1500 + 2 * 10);
  });

  it('decides synchronously while it holds numbers', async () => {
    const a = limiter();
    expect(a.consume('key:sync', 1000)).toBeInstanceOf(Promise); // first: a lease from Redis
    await a.consume('key:sync', 1000);
    expect(a.consume('key:sync', 1000)).not.toBeInstanceOf(Promise);
  });

  it('starts over when the window ends, in every process', async () => {
    // The processes' clock moves only when the test moves it; Redis's count expires on Redis's own clock, so the
    // test ends its window by deleting the count, after checking that it would expire with the window.
    let clock = Date.now();
    const now = () => clock;
    const options = {
      redis,
      prefix,
      now,
      windowMs: 300,
      defaultRequestsPerMinute: 600,
      anonymousRequestsPerMinute: 10,
    };
    const a = new RateLimiter(options);
    const b = new RateLimiter(options);
    expect(await used(a.consume('key:w', 1000))).toBe(1);
    expect(await used(b.consume('key:w', 1000))).toBe(11);
    const { resetMs } = await a.consume('key:w', 1000);
    expect(resetMs).toBeLessThanOrEqual(300);
    const ttl = await redis.pttl(`${prefix}rl:key:w`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    clock += 350;
    await redis.del(`${prefix}rl:key:w`);
    expect(await used(b.consume('key:w', 1000))).toBe(1);
    expect(await used(a.consume('key:w', 1000))).toBe(11);
  });

  it('reloads its script after Redis forgot it (SCRIPT FLUSH, as after a restart)', async () => {
    const a = limiter();
    expect(await used(a.consume('key:f', 5))).toBe(1);
    await redis.script('FLUSH');
    expect(await used(a.consume('key:f', 5))).toBe(2);
  });

  it('counts each refusal of a caller in rate_limit_rejections_total, by scope, whoever asks (middleware or handshake)', async () => {
    const registry = new Registry();
    const metrics = new AuthMetrics(registry);
    const a = new RateLimiter({ redis, prefix, metrics, defaultRequestsPerMinute: 2, anonymousRequestsPerMinute: 1 });
    const key = { kind: 'key', key: { id: 'k-metrics', requestsPerMinute: 2 } } as Parameters<
      RateLimiter['consumeFor']
    >[0];
    const anonymous = { kind: 'anonymous', ip: '198.51.100.9' } as const;
    const allowed = [];
    for (const caller of [key, key, key, key, anonymous, anonymous]) allowed.push((await a.consumeFor(caller)).allowed);
    expect(allowed).toEqual([true, true, false, false, true, false]);
    const counted = (await metrics.rateLimited.get()).values.map((v) => [v.labels.scope, v.value]);
    expect(counted.sort()).toEqual([
      ['anonymous', 1],
      ['key', 2],
    ]);
  });
});
