import { testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { runCli } from './cli';
import { createRedisClient } from './redis';

describe('keys CLI against the real Redis', () => {
  let out: string[];
  let err: string[];
  let env: Record<string, string>;
  beforeEach(() => {
    out = [];
    err = [];
    env = { REDIS_URL: testRedisUrl(), REDIS_KEY_PREFIX: `${uniqueName('cli')}:` };
    jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
    jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  });
  afterEach(() => jest.restoreAllMocks());

  it('create prints the key alone on its last line; list and show never print it; revoke marks it', async () => {
    const args = ['create', '--name', 'alice bot', '--ticker-prefixes', 'KX,btc', '--max-data-age-days', '30'];
    expect(
      await runCli(
        [...args, '--full-history-prefixes', 'KXBTC', '--requests-per-minute', '5', '--platforms', 'kalshi,venue-d'],
        env,
      ),
    ).toBe(0);
    const key = out[out.length - 1] ?? '';
    expect(key).toMatch(/^dg_[0-9A-Za-z]{39}$/);
    const id = /key_[0-9a-f]{16}/.exec(out.join('\n'))?.[0] ?? '';
    expect(id).not.toBe('');

    out = [];
    expect(await runCli(['list'], env)).toBe(0);
    expect(out.join('\n')).toContain(id);
    expect(await runCli(['list', '--json'], env)).toBe(0);
    expect(await runCli(['show', id, '--json'], env)).toBe(0);
    const shown = JSON.parse(out[out.length - 1] ?? '{}');
    expect(shown).toMatchObject({
      id,
      name: 'alice bot',
      ticker_prefixes: ['KX', 'btc'],
      max_data_age_days: 30,
      full_history_prefixes: ['KXBTC'],
      requests_per_minute: 5,
      platforms: ['venue-b', 'venue-d'],
      revoked_at: null,
    });
    expect(shown).not.toHaveProperty('key_hash');
    expect(await runCli(['show', id], env)).toBe(0);
    expect(out.join('\n')).not.toContain(key);

    out = [];
    expect(await runCli(['revoke', id, '--json'], env)).toBe(0);
    expect(JSON.parse(out[0] ?? '{}').revoked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(out.join('\n')).not.toContain(key);
  });

  it('create --json prints one JSON line with the record and the key', async () => {
    expect(await runCli(['create', '--name', 'j', '--json'], env)).toBe(0);
    expect(out).toHaveLength(1);
    const created = JSON.parse(out[0] ?? '{}');
    expect(created.key).toMatch(/^dg_/);
    expect(created).toMatchObject({ name: 'j', ticker_prefixes: null, requests_per_minute: null, revoked_at: null });
  });

  it('list shows the valid records when others are invalid, names those (never their key or hash) and exits 1', async () => {
    const ids: string[] = [];
    for (const name of ['good one', 'bad rpm', 'not json', 'good two']) {
      expect(await runCli(['create', '--name', name, '--json'], env)).toBe(0);
      ids.push(JSON.parse(out[out.length - 1] ?? '{}').id);
    }
    const [good, badRpm, notJson, goodTwo] = ids as [string, string, string, string];
    const redis = createRedisClient(env.REDIS_URL ?? '', { name: 'cli-test', offlineQueue: true });
    const hashes: string[] = [];
    try {
      const recordKey = async (id: string) => {
        const hash = (await redis.get(`${env.REDIS_KEY_PREFIX}key:id:${id}`)) ?? '';
        hashes.push(hash);
        return `${env.REDIS_KEY_PREFIX}key:h:${hash}`;
      };
      const bad = JSON.parse((await redis.get(await recordKey(badRpm))) ?? '{}');
      await redis.set(await recordKey(badRpm), JSON.stringify({ ...bad, requests_per_minute: -5 }));
      await redis.set(await recordKey(notJson), '{"id":');
    } finally {
      redis.disconnect();
    }
    for (const json of [false, true]) {
      out = [];
      err = [];
      expect(await runCli(json ? ['list', '--json'] : ['list'], env)).toBe(1);
      if (json) expect((JSON.parse(out.join('\n')) as { id: string }[]).map((r) => r.id)).toEqual([good, goodTwo]);
      else expect(out.map((line) => /key_[0-9a-f]{16}/.exec(line)?.[0])).toEqual([good, goodTwo]);
      const errors = err.join('\n');
      expect(errors).toContain(`key record ${badRpm} is invalid: requests_per_minute:`);
      expect(errors).toContain(`key record ${notJson} is invalid: not JSON`);
      expect(errors).toContain('2 of 4 key records are invalid');
      for (const hash of hashes) expect(`${errors}\n${out.join('\n')}`).not.toContain(hash);
    }
  });

  it('show and revoke of an invalid record name it by its id on stderr (never its hash) and exit 1', async () => {
    const ids: string[] = [];
    for (const name of ['not json', 'bad rpm']) {
      expect(await runCli(['create', '--name', name, '--json'], env)).toBe(0);
      ids.push(JSON.parse(out[out.length - 1] ?? '{}').id);
    }
    const [notJson, badRpm] = ids as [string, string];
    const redis = createRedisClient(env.REDIS_URL ?? '', { name: 'cli-test', offlineQueue: true });
    const hashes: string[] = [];
    try {
      for (const id of ids) hashes.push((await redis.get(`${env.REDIS_KEY_PREFIX}key:id:${id}`)) ?? '');
      const [notJsonKey, badRpmKey] = hashes.map((h) => `${env.REDIS_KEY_PREFIX}key:h:${h}`) as [string, string];
      await redis.set(notJsonKey, '{"id":');
      const bad = JSON.parse((await redis.get(badRpmKey)) ?? '{}');
      await redis.set(badRpmKey, JSON.stringify({ ...bad, requests_per_minute: -5 }));
    } finally {
      redis.disconnect();
    }
    for (const args of [['show'], ['show', '--json'], ['revoke']]) {
      out = [];
      err = [];
      expect(await runCli([...args.slice(0, 1), notJson, ...args.slice(1)], env)).toBe(1);
      expect(await runCli([...args.slice(0, 1), badRpm, ...args.slice(1)], env)).toBe(1);
      expect([args, out, err]).toEqual([
        args,
        [],
        [
          `error: key record ${notJson} is invalid: not JSON`,
          expect.stringMatching(new RegExp(`^error: key record ${badRpm} is invalid: requests_per_minute: `)),
        ],
      ]);
      for (const hash of hashes) expect(err.join('\n')).not.toContain(hash);
    }
  });

  it('show and revoke of an unknown id fail with exit 1', async () => {
    expect(await runCli(['show', 'key_0000000000000000'], env)).toBe(1);
    expect(await runCli(['revoke', 'key_0000000000000000'], env)).toBe(1);
    expect(err.join('\n')).toContain('no key with id key_0000000000000000');
  });
});
