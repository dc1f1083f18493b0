/**
 * Redis Sentinel: the history service on a Redis master with one replica and three sentinels (Debian's
 * redis-sentinel, infra/local/redis-sentinel.sh), with TLS and passwords on both the data nodes and the sentinels as
 * production has them. The master is killed under load: every request is still answered, quickly (keys from the
 * cache, limits counted per process: the documented degraded mode); once the sentinels have promoted the replica,
 * the service counts in Redis again, keys issued before still work, and a key's rate-limit budget continues where
 * the old master left it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { createRedisClient, redisTarget, waitForRedis, type Redis } from '@depthgate/auth';
import { repoRoot, requireEnv, waitFor } from '@depthgate/test-utils';
import { createHarness, type Harness } from './testing/harness';

jest.setTimeout(120_000);

const run = promisify(execFile);
const script = path.join(repoRoot, 'infra/local/redis-sentinel.sh');
const PASSWORD = 'data p@ss';
const SENTINEL_PASSWORD = 'sentinel-pass';

/** A private CA and a server certificate for 127.0.0.1. */
async function certificates(dir: string): Promise<void> {
  const ssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=depthgate-test-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  await ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  writeFileSync(path.join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await ssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.cnf',
    '-out',
    'server.crt',
  );
}

interface Sample {
  at: number;
  ms: number;
  status: number;
}

describe('Redis Sentinel failover under load', () => {
  const base = Number(requireEnv('TEST_SENTINEL_BASE_PORT'));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dg-sentinel-'));
  const tls = path.join(dir, 'tls');
  let h: Harness;
  let admin: Redis;

  beforeAll(async () => {
    rmSync(tls, { recursive: true, force: true });
    await run('mkdir', ['-p', tls]);
    await certificates(tls);
    await run('chmod', ['-R', 'a+rX', dir]);
    await run(script, [
      'start',
      '--dir',
      path.join(dir, 'set'),
      '--base-port',
      String(base),
      '--password',
      PASSWORD,
      '--sentinel-password',
      SENTINEL_PASSWORD,
      '--tls-dir',
      tls,
    ]);
    h = await createHarness({
      env: {
        REDIS_URL: `rediss://:${encodeURIComponent(PASSWORD)}@mymaster/0`,
        REDIS_SENTINELS: [2, 3, 4].map((i) => `127.0.0.1:${base + i}`).join(','),
        REDIS_SENTINEL_NAME: 'mymaster',
        REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
        REDIS_TLS_CA_FILE: path.join(tls, 'ca.crt'),
      },
    });
    admin = createRedisClient(redisTarget(h.config), {
      name: 'sentinel-test',
      offlineQueue: true,
      commandTimeoutMs: 10_000,
    });
    await waitForRedis(admin, 10_000);
  });

  afterAll(async () => {
    admin?.disconnect();
    await h?.close();
    await run(script, ['stop', '--dir', path.join(dir, 'set')]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps answering while the master dies, then counts keys and budgets on the promoted replica', async () => {
    const loaded = await h.key({ requests_per_minute: 6000 });
    const budgeted = await h.key({ requests_per_minute: 20 });
    const get = (key: string) => request(h.app).get('/api/venue_b/tickers').set('x-api-key', key);
    for (let i = 0; i < 8; i++) expect((await get(budgeted)).status).toBe(200);
    // Everything so far is on the replica (WAIT: the master's writes acknowledged by 1 replica).
    expect(await admin.call('WAIT', '1', '5000')).toBe(1);

    const samples: Sample[] = [];
    let loading = true;
    const worker = async () => {
      while (loading) {
        const at = Date.now();
        const res = await get(loaded);
        samples.push({ at, ms: Date.now() - at, status: res.status });
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    await new Promise((r) => setTimeout(r, 1000));

    const killedAt = Date.now();
    await run(script, ['node-stop', '--dir', path.join(dir, 'set'), '--node', 'a', '--kill']);
    let degradedSince: number | undefined;
    // The load's key decides most requests from its lease (a hundredth of its limit) without Redis, so on a slow
    // machine the load alone may not touch Redis while the master is away. Each look therefore also counts one
    // request of a new bucket of limit 1, which always asks Redis (or, Redis failing, counts per process).
    let probes = 0;
    await waitFor(
      async () => {
        await h.auth.rateLimiter.consume(`sentinel-probe:${++probes}`, 1);
        if (h.auth.rateLimiter.isDegraded) degradedSince ??= Date.now();
        return degradedSince !== undefined && !h.auth.rateLimiter.isDegraded;
      },
      { timeoutMs: 60_000, intervalMs: 20, what: 'the rate limiter counting in Redis again' },
    ).catch(async (err: Error) => {
      // The load stops with the test (else its loops outlive it and jest never ends); then what the next reader of
      // a failure needs: whether the limiter ever saw Redis fail, and what the set thinks.
      loading = false;
      await Promise.allSettled(workers);
      const sentinels = await run(script, ['master', '--dir', path.join(dir, 'set')]).then(
        (r) => r.stdout.trim(),
        (e: Error) => e.message,
      );
      throw new Error(
        `${err.message} (degraded seen: ${degradedSince !== undefined}, degraded now: ${h.auth.rateLimiter.isDegraded}, ` +
          `sentinels' master: ${sentinels}, admin connection: ${admin.status})`,
      );
    });
    const recoveredAt = Date.now();
    const { stdout: master } = await run(script, ['master', '--dir', path.join(dir, 'set')]);
    expect(Number(master.trim())).toBe(base + 1);
    // Past the key cache's TTL: keys are read from the new master again.
    await new Promise((r) => setTimeout(r, h.config.KEY_CACHE_TTL_MS + 500));
    loading = false;
    await Promise.all(workers);

    const during = samples.filter((s) => s.at >= killedAt && s.at <= recoveredAt);
    const slowest = Math.max(...samples.map((s) => s.ms));
    process.stdout.write(
      `sentinel failover: ${samples.length} requests, ${during.length} during ${((recoveredAt - killedAt) / 1000).toFixed(1)} s ` +
        `of degraded service (master killed → counting in Redis again), slowest answer ${slowest} ms, ` +
        `statuses ${JSON.stringify(Object.fromEntries(Object.entries(Object.groupBy(samples, (s) => s.status)).map(([k, v]) => [k, v?.length])))}\n`,
    );
    // Nothing hung and nothing failed: answered from the key cache with per-process limits meanwhile.
    expect(during.length).toBeGreaterThan(10);
    expect(samples.filter((s) => s.status !== 200)).toEqual([]);

    // A key issued before the failover is read from the new master; one issued after works at once.
    expect((await get(loaded)).status).toBe(200);
    expect((await get(await h.key({}))).status).toBe(200);
    // The budget continues: 8 of 20 were spent on the old master, so 12 remain on the new one.
    const next = await get(budgeted);
    expect(next.status).toBe(200);
    expect(next.headers.ratelimit).toMatch(/remaining=11\b/);
    for (let i = 0; i < 11; i++) expect((await get(budgeted)).status).toBe(200);
    expect((await get(budgeted)).status).toBe(429);
  });
});
