import { Writable } from 'node:stream';
import request from 'supertest';
import type { Express } from 'express';
import { createRegistry, createServiceApp, Lifecycle, createLogger, type Registry } from '@depthgate/service-kit';
import { startPrivateRedis, testRedisUrl, uniqueName, waitFor, type PrivateServer } from '@depthgate/test-utils';
import { generateApiKey } from './api-key';
import { Authenticator } from './authenticator';
import type { AuthConfig } from './config';
import { RedisKeyStore } from './key-store';
import { createRedisClient, waitForRedis, type Redis } from './redis';
import { createAuth, type Auth } from './setup';

const quietLogger = () =>
  createLogger({ name: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

function config(redisUrl: string, prefix: string, overrides: Partial<AuthConfig> = {}): AuthConfig {
  return {
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    REDIS_COMMAND_TIMEOUT_MS: 300,
    KEY_CACHE_TTL_MS: 4000,
    KEY_CACHE_MAX_STALE_MS: 900_000,
    KEY_CACHE_MAX_ENTRIES: 1000,
    RATE_LIMIT_DEFAULT_RPM: 600,
    RATE_LIMIT_ANONYMOUS_RPM: 10,
    RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: 30,
    TRUST_PROXY_HOPS: 0,
    READY_REQUIRES_REDIS: true,
    ...overrides,
  };
}

interface Instance {
  app: Express;
  auth: Auth;
  registry: Registry;
}

const instances: Instance[] = [];

async function instance(cfg: AuthConfig, mode: 'required' | 'optional' = 'required'): Promise<Instance> {
  const registry = createRegistry('test', { defaultMetrics: false });
  const logger = quietLogger();
  const auth = createAuth(cfg, { logger, registry, name: 'test' });
  const app = createServiceApp({
    logger,
    registry,
    lifecycle: new Lifecycle(),
    readiness: auth.readiness,
    trustProxyHops: cfg.TRUST_PROXY_HOPS,
    accessLog: false,
    routeLabel: () => 'api',
    mount: (a) =>
      a.get('/api/whoami', mode === 'required' ? auth.requireKey : auth.optionalKey, auth.rateLimit, (req, res) => {
        res.json(req.caller?.kind === 'key' ? { key: req.caller.key.id } : { ip: req.caller?.ip });
      }),
  });
  await waitForRedis(auth.redis, 5000);
  const inst = { app, auth, registry };
  instances.push(inst);
  return inst;
}

afterEach(async () => {
  await Promise.all(instances.splice(0).map((i) => i.auth.close()));
});

async function metric(registry: Registry, name: string): Promise<number> {
  const m = await registry.getSingleMetric(name)?.get();
  return (m?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

describe('keys against the real Redis', () => {
  let admin: Redis;
  let prefix: string;
  let store: RedisKeyStore;

  beforeAll(async () => {
    admin = createRedisClient(testRedisUrl(), { name: 'test-admin', offlineQueue: true });
    await waitForRedis(admin, 5000);
  });
  afterAll(() => admin.disconnect());
  beforeEach(() => {
    prefix = `${uniqueName('t')}:`;
    store = new RedisKeyStore(admin, prefix);
  });

  it('stores only the hash: the key appears nowhere in Redis', async () => {
    const { record, key } = await store.create({ name: 'hash-only' });
    const keys = await admin.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThanOrEqual(3);
    for (const k of keys) {
      expect(k).not.toContain(key);
      const type = await admin.type(k);
      const value = type === 'string' ? await admin.get(k) : JSON.stringify(await admin.zrange(k, '0', '-1'));
      expect(value).not.toContain(key);
    }
    expect(await store.findByHash(record.key_hash)).toEqual(record);
  });

  it('two revokes at once: the one that read first and wrote last does not overwrite the other (one revoked_at)', async () => {
    const { record } = await store.create({ name: 'race' });
    const hashKey = `${prefix}key:h:${record.key_hash}`;
    const realGet = admin.get.bind(admin);
    let readRecord!: () => void;
    const recordRead = new Promise<void>((resolve) => (readRecord = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    // The first revoke is held right after reading the record; the second one runs whole meanwhile.
    const get = jest.spyOn(admin, 'get').mockImplementation((async (key: string) => {
      const value = await realGet(key);
      if (key === hashKey) {
        get.mockRestore();
        readRecord();
        await resumed;
      }
      return value;
    }) as unknown as Redis['get']);
    const first = store.revoke(record.id, new Date('2026-01-01T00:00:00.000Z'));
    await recordRead;
    const second = await store.revoke(record.id, new Date('2026-01-02T00:00:00.000Z'));
    resume();
    const firstResult = await first;
    const stored = await store.get(record.id);
    expect(stored?.revoked_at).toBe('2026-01-02T00:00:00.000Z');
    expect(second).toEqual(stored);
    expect(firstResult).toEqual(stored);
  });

  it('create → authenticate → revoke → 401 on every instance, at once through pub/sub', async () => {
    // A TTL no test waits out: only the pub/sub message can drop the cached answer, however long the wait below takes.
    const a = await instance(config(testRedisUrl(), prefix, { KEY_CACHE_TTL_MS: 600_000 }));
    const b = await instance(config(testRedisUrl(), prefix, { KEY_CACHE_TTL_MS: 600_000 }));
    const { record, key } = await store.create({ name: 'lifecycle' });
    for (const inst of [a, b]) {
      const ok = await request(inst.app).get('/api/whoami').set('X-API-Key', key);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ key: record.id });
    }
    await store.revoke(record.id);
    for (const inst of [a, b]) {
      await waitFor(async () => (await request(inst.app).get('/api/whoami').set('X-API-Key', key)).status === 401, {
        timeoutMs: 20_000,
        what: 'revocation to reach the instance',
      });
    }
    const denied = await request(a.app).get('/api/whoami').set('X-API-Key', key);
    expect(denied.body).toEqual({ error: 'unauthorized', message: 'Invalid API key' });
  });

  it('without pub/sub a revocation still lands within the cache TTL (the documented 5 s bound)', async () => {
    let now = Date.now();
    const auth = new Authenticator({ store, cacheTtlMs: 4000, maxStaleMs: 60_000, maxEntries: 10, now: () => now });
    const { record, key } = await store.create({ name: 'ttl' });
    expect(await auth.verify(key)).toMatchObject({ status: 'valid' });
    await store.revoke(record.id);
    now += 3999;
    expect(await auth.verify(key)).toMatchObject({ status: 'valid' });
    now += 1;
    expect(await auth.verify(key)).toEqual({ status: 'revoked' });
  });

  it('answers 401 with the spec body for missing, malformed and unknown keys', async () => {
    const a = await instance(config(testRedisUrl(), prefix));
    for (const headers of [
      {},
      { 'X-API-Key': 'nope' },
      { 'X-API-Key': 'dg_000000000000000000000000000000000000000' },
    ]) {
      const res = await request(a.app).get('/api/whoami').set(headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: 'Invalid API key' });
    }
  });

  it('a key whose stored record fails validation is 401 (Redis answered), on both services; fixed, it works', async () => {
    const required = await instance(config(testRedisUrl(), prefix, { KEY_CACHE_TTL_MS: 0 }));
    const optional = await instance(config(testRedisUrl(), prefix, { KEY_CACHE_TTL_MS: 0 }), 'optional');
    const { record, key } = await store.create({ name: 'corrupt' });
    const stored = `${prefix}key:h:${record.key_hash}`;
    await admin.set(stored, JSON.stringify({ ...record, requests_per_minute: 0 }));
    for (const inst of [required, optional]) {
      const res = await request(inst.app).get('/api/whoami').set('X-API-Key', key);
      expect([res.status, res.body]).toEqual([401, { error: 'unauthorized', message: 'Invalid API key' }]);
    }
    await admin.set(stored, JSON.stringify(record));
    expect((await request(required.app).get('/api/whoami').set('X-API-Key', key)).body).toEqual({ key: record.id });
    // A platform a newer version added (a rolling deploy) does not make the record invalid here.
    await admin.set(stored, JSON.stringify({ ...record, platforms: ['venue-b', 'no-such-platform'] }));
    expect((await request(required.app).get('/api/whoami').set('X-API-Key', key)).body).toEqual({ key: record.id });
  });

  it('takes the key from HTTP Basic (user name) too, with the same 401 for a bad one, in both modes', async () => {
    const basic = (user: string) => `Basic ${Buffer.from(`${user}:`).toString('base64')}`;
    const { key } = await store.create({ name: 'basic' });
    for (const mode of ['required', 'optional'] as const) {
      const a = await instance(config(testRedisUrl(), prefix), mode);
      const ok = await request(a.app).get('/api/whoami').set('Authorization', basic(key));
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ key: expect.stringMatching(/^key_/) });
      for (const authorization of [basic('dg_000000000000000000000000000000000000000'), basic('nope'), 'Basic !!']) {
        const bad = await request(a.app).get('/api/whoami').set('Authorization', authorization);
        expect(bad.status).toBe(401);
        expect(bad.body).toEqual({ error: 'unauthorized', message: 'Invalid API key' });
      }
      // X-API-Key wins: a bad header key is refused even beside a good Basic one.
      const both = await request(a.app).get('/api/whoami').set('X-API-Key', 'nope').set('Authorization', basic(key));
      expect(both.status).toBe(401);
    }
    // Another scheme is not a key: anonymous where keys are optional, 401 where required.
    const optional = await instance(config(testRedisUrl(), prefix), 'optional');
    const bearer = await request(optional.app).get('/api/whoami').set('Authorization', `Bearer ${key}`);
    expect(bearer.status).toBe(200);
    expect(bearer.body).toEqual({ ip: expect.any(String) });
  });

  it('limit reached → 429 with RateLimit, RateLimit-Policy and Retry-After', async () => {
    const a = await instance(config(testRedisUrl(), prefix));
    const { key } = await store.create({ name: 'five', requests_per_minute: 5 });
    for (let i = 1; i <= 5; i++) {
      const res = await request(a.app).get('/api/whoami').set('X-API-Key', key);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit']).toMatch(new RegExp(`limit=5, remaining=${5 - i}, reset=\\d+`));
      expect(res.headers['ratelimit-policy']).toBe('5;w=60');
    }
    const limited = await request(a.app).get('/api/whoami').set('X-API-Key', key);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(limited.body.message).toContain('5 requests per minute');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit']).toMatch(/remaining=0/);
    expect(await metric(a.registry, 'rate_limit_rejections_total')).toBe(1);
  });

  it('a key without its own limit gets the configured default', async () => {
    const a = await instance(config(testRedisUrl(), prefix, { RATE_LIMIT_DEFAULT_RPM: 3 }));
    const { key } = await store.create({ name: 'default' });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await request(a.app).get('/api/whoami').set('X-API-Key', key)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('two app instances on one Redis share one budget per key', async () => {
    const a = await instance(config(testRedisUrl(), prefix));
    const b = await instance(config(testRedisUrl(), prefix));
    const { key } = await store.create({ name: 'shared', requests_per_minute: 5 });
    const order = [a, b, a, b, b];
    for (const inst of order)
      expect((await request(inst.app).get('/api/whoami').set('X-API-Key', key)).status).toBe(200);
    expect((await request(a.app).get('/api/whoami').set('X-API-Key', key)).status).toBe(429);
    expect((await request(b.app).get('/api/whoami').set('X-API-Key', key)).status).toBe(429);
  });

  it('anonymous callers are limited per client IP; X-Forwarded-For counts only behind trusted hops', async () => {
    const direct = await instance(config(testRedisUrl(), prefix, { RATE_LIMIT_ANONYMOUS_RPM: 2 }), 'optional');
    const statuses = [];
    for (const ip of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) {
      statuses.push((await request(direct.app).get('/api/whoami').set('X-Forwarded-For', ip)).status);
    }
    // Not behind a proxy: the forwarded address is ignored, all three came from the same socket address.
    expect(statuses).toEqual([200, 200, 429]);

    const proxied = await instance(
      config(testRedisUrl(), `${prefix}p:`, { RATE_LIMIT_ANONYMOUS_RPM: 2, TRUST_PROXY_HOPS: 1 }),
      'optional',
    );
    const seen = [];
    for (const ip of ['1.1.1.1', '1.1.1.1', '1.1.1.1', '2.2.2.2']) {
      const res = await request(proxied.app).get('/api/whoami').set('X-Forwarded-For', ip);
      seen.push(res.status);
      if (res.status === 200) expect(res.body.ip).toBe(ip);
    }
    expect(seen).toEqual([200, 200, 429, 200]);
  });

  it('made-up keys: past RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE an address gets 429 without a Redis lookup; keys it used still work; other addresses are not affected', async () => {
    const cfg = config(testRedisUrl(), prefix, { RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: 3, TRUST_PROXY_HOPS: 1 });
    const a = await instance(cfg);
    const { key } = await store.create({ name: 'in use' });
    const created = await store.create({ name: 'new' });
    const from = (ip: string, k: string) =>
      request(a.app).get('/api/whoami').set('X-Forwarded-For', ip).set('X-API-Key', k);
    expect((await from('198.51.100.7', key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await from('198.51.100.7', generateApiKey())).status).toBe(401);
    const lookups = await metric(a.registry, 'auth_key_cache_total');
    const refused = await from('198.51.100.7', generateApiKey());
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: 'rate_limited',
      message: expect.stringMatching(/^Too many unknown API keys from this address; retry in \d+ s$/),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // A key not seen before is refused from that address too, without a lookup; the key in use still works.
    expect((await from('198.51.100.7', created.key)).status).toBe(429);
    expect((await from('198.51.100.7', key)).status).toBe(200);
    expect(await metric(a.registry, 'auth_key_cache_total')).toBe(lookups + 1); // the one cache hit, no miss
    // The same key from another client address (through the trusted proxy) is looked up and works.
    expect((await from('198.51.100.8', created.key)).status).toBe(200);
    const throttled = (await a.registry.getSingleMetric('auth_verifications_total')?.get())?.values.find(
      (v) => v.labels.result === 'throttled',
    );
    expect(throttled?.value).toBe(2);
  });

  it('an invalid key on the optional-key service is 401, not anonymous', async () => {
    const a = await instance(config(testRedisUrl(), prefix), 'optional');
    expect((await request(a.app).get('/api/whoami').set('X-API-Key', 'dg_bogus')).status).toBe(401);
    expect((await request(a.app).get('/api/whoami')).status).toBe(200);
  });
});

describe('Redis stopped mid-test', () => {
  let redis: PrivateServer;
  beforeAll(async () => {
    redis = await startPrivateRedis({ persist: true });
  });
  afterAll(async () => {
    await redis.destroy();
  });

  it('keeps serving cached keys, counts limits per process, answers within 1 s, and recovers (/ready red unless READY_REQUIRES_REDIS=false)', async () => {
    const prefix = `${uniqueName('down')}:`;
    const inst = await instance(config(redis.url, prefix, { KEY_CACHE_TTL_MS: 200 }));
    const relaxed = await instance(config(redis.url, prefix, { READY_REQUIRES_REDIS: false }));
    const admin = createRedisClient(redis.url, { name: 'admin', offlineQueue: true });
    await waitForRedis(admin, 5000);
    const store = new RedisKeyStore(admin, prefix);
    const { key } = await store.create({ name: 'survivor', requests_per_minute: 5 });
    const never = (await store.create({ name: 'never-seen' })).key;
    admin.disconnect();
    expect((await request(inst.app).get('/api/whoami').set('X-API-Key', key)).status).toBe(200);

    await redis.stop();
    await new Promise((r) => setTimeout(r, 300)); // past the cache TTL: every check now tries Redis first

    const timed = async (k: string) => {
      const started = Date.now();
      const res = await request(inst.app).get('/api/whoami').set('X-API-Key', k);
      return { status: res.status, ms: Date.now() - started, body: res.body };
    };
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await timed(key));
    const unknown = await timed(never);
    for (const r of [...results, unknown]) expect(r.ms).toBeLessThan(1000);
    // The known key keeps working from the cache; the per-process fallback limiter allows 5 more, then 429.
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    // A key never seen by this process cannot be verified while Redis is down.
    expect(unknown.status).toBe(503);
    expect(unknown.body.error).toBe('service_unavailable');
    expect(await metric(inst.registry, 'rate_limit_store_degraded')).toBe(1);
    expect((await request(inst.app).get('/ready')).status).toBe(503);
    // READY_REQUIRES_REDIS=false: the instance stays in rotation (it keeps serving, as above).
    expect((await request(relaxed.app).get('/ready')).status).toBe(200);

    await redis.start();
    await waitFor(async () => (await request(inst.app).get('/ready')).status === 200, {
      timeoutMs: 10_000,
      what: 'ready again',
    });
    await waitFor(async () => (await request(inst.app).get('/api/whoami').set('X-API-Key', never)).status === 200, {
      timeoutMs: 5000,
      what: 'the unseen key to verify',
    });
    expect(await metric(inst.registry, 'rate_limit_store_degraded')).toBe(0);
  });
});

describe('Redis unreachable at start', () => {
  let redis: PrivateServer;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    await redis.stop();
  });
  afterAll(async () => {
    await redis.destroy();
  });

  it('the subscription to key events is made once Redis is up: a revocation then lands at once', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      name: 'test',
      level: 'info',
      destination: new Writable({
        write: (c, _e, cb) => {
          lines.push(String(c));
          cb();
        },
      }),
    });
    const prefix = `${uniqueName('late')}:`;
    // A TTL no test waits out: only the pub/sub message can drop the cached answer.
    const auth = createAuth(config(redis.url, prefix, { KEY_CACHE_TTL_MS: 600_000 }), {
      logger,
      registry: createRegistry('test', { defaultMetrics: false }),
      name: 'test',
    });
    const admin = createRedisClient(redis.url, { name: 'admin', offlineQueue: true });
    try {
      // Long enough for a subscriber that gives up (one retry, a 500 ms timeout) to have given up.
      await new Promise((r) => setTimeout(r, 1500));
      await redis.start();
      await waitForRedis(auth.redis, 10_000);
      await waitForRedis(admin, 5000);
      const store = new RedisKeyStore(admin, prefix);
      await waitFor(async () => (await admin.publish(store.eventsChannel, 'probe')) >= 1, {
        timeoutMs: 10_000,
        what: 'a subscriber on the key events channel',
      });
      const { record, key } = await store.create({ name: 'late' });
      expect(await auth.authenticator.verify(key)).toMatchObject({ status: 'valid' });
      await store.revoke(record.id);
      await waitFor(async () => (await auth.authenticator.verify(key)).status === 'revoked', {
        timeoutMs: 20_000,
        what: 'the revocation to reach the instance',
      });
    } finally {
      admin.disconnect();
      await auth.close();
    }
    const log = lines.join('');
    expect(log).toContain('not subscribed to key events yet');
    expect(log).toContain('subscribed to key events: revocations take effect at once');
    expect(log).not.toContain('could not subscribe');
  });
});
