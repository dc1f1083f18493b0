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

  /** Creates a key per corruption with the CLI, then stores `corrupt(its record's JSON)` as its record. */
  async function corrupted(corruptions: ((raw: string) => string)[]) {
    const ids: string[] = [];
    const keys: string[] = [];
    for (const [i] of corruptions.entries()) {
      expect(await runCli(['create', '--name', `corrupt ${i}`, '--json'], env)).toBe(0);
      const created = JSON.parse(out[out.length - 1] ?? '{}');
      ids.push(created.id);
      keys.push(created.key);
    }
    const redis = createRedisClient(env.REDIS_URL ?? '', { name: 'cli-test', offlineQueue: true });
    const hashes: string[] = [];
    try {
      for (const [i, id] of ids.entries()) {
        const hash = (await redis.get(`${env.REDIS_KEY_PREFIX}key:id:${id}`)) ?? '';
        hashes.push(hash);
        const recordKey = `${env.REDIS_KEY_PREFIX}key:h:${hash}`;
        await redis.set(recordKey, corruptions[i]?.((await redis.get(recordKey)) ?? '') ?? '');
      }
    } finally {
      redis.disconnect();
    }
    return { ids, keys, hashes };
  }
  const notJson = () => '{"id":';
  const badRpm = (raw: string) => JSON.stringify({ ...JSON.parse(raw), requests_per_minute: -5 });

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
    expect(await runCli(['create', '--name', 'good one', '--json'], env)).toBe(0);
    ids.push(JSON.parse(out[out.length - 1] ?? '{}').id);
    const { ids: badIds, hashes } = await corrupted([badRpm, notJson]);
    expect(await runCli(['create', '--name', 'good two', '--json'], env)).toBe(0);
    ids.push(JSON.parse(out[out.length - 1] ?? '{}').id);
    const [good, goodTwo] = ids as [string, string];
    const [badRpmId, notJsonId] = badIds as [string, string];
    for (const json of [false, true]) {
      out = [];
      err = [];
      expect(await runCli(json ? ['list', '--json'] : ['list'], env)).toBe(1);
      if (json) expect((JSON.parse(out.join('\n')) as { id: string }[]).map((r) => r.id)).toEqual([good, goodTwo]);
      else expect(out.map((line) => /key_[0-9a-f]{16}/.exec(line)?.[0])).toEqual([good, goodTwo]);
      const errors = err.join('\n');
      expect(errors).toContain(`key record ${badRpmId} is invalid: requests_per_minute:`);
      expect(errors).toContain(`key record ${notJsonId} is invalid: not JSON`);
      expect(errors).toContain('2 of 4 key records are invalid');
      for (const hash of hashes) expect(`${errors}\n${out.join('\n')}`).not.toContain(hash);
    }
  });

  it('revoke of an invalid record deletes it, says so on stdout (never its key or hash) and exits 0', async () => {
    const { ids, keys, hashes } = await corrupted([notJson, badRpm, notJson]);
    const [notJsonId, badRpmId, jsonId] = ids as [string, string, string];
    expect(await runCli(['create', '--name', 'valid', '--json'], env)).toBe(0);
    const valid = JSON.parse(out[out.length - 1] ?? '{}');
    out = [];
    err = [];
    expect(await runCli(['revoke', notJsonId], env)).toBe(0);
    expect(await runCli(['revoke', badRpmId], env)).toBe(0);
    expect(await runCli(['revoke', jsonId, '--json'], env)).toBe(0);
    expect(err).toEqual([]);
    expect(out).toEqual([
      `revoked ${notJsonId}: its record was invalid (not JSON), so it was deleted; its key is refused for good`,
      expect.stringMatching(
        new RegExp(`^revoked ${badRpmId}: its record was invalid \\(requests_per_minute: .+\\), so it was deleted; `),
      ),
      JSON.stringify({ id: jsonId, removed: true, invalid: ['not JSON'] }),
    ]);
    for (const secret of [...keys, ...hashes]) expect(out.join('\n')).not.toContain(secret);

    const redis = createRedisClient(env.REDIS_URL ?? '', { name: 'cli-test', offlineQueue: true });
    try {
      for (const [i, id] of ids.entries()) {
        expect(
          await redis.exists(`${env.REDIS_KEY_PREFIX}key:h:${hashes[i]}`, `${env.REDIS_KEY_PREFIX}key:id:${id}`),
        ).toBe(0);
      }
    } finally {
      redis.disconnect();
    }
    out = [];
    err = [];
    expect(await runCli(['list', '--json'], env)).toBe(0);
    expect((JSON.parse(out.join('\n')) as { id: string }[]).map((r) => r.id)).toEqual([valid.id]);
    expect(await runCli(['show', notJsonId], env)).toBe(1);
    expect(await runCli(['revoke', badRpmId], env)).toBe(1);
    expect(err).toEqual([`error: no key with id ${notJsonId}`, `error: no key with id ${badRpmId}`]);
  });

  it('show of an invalid record names it by its id on stderr (never its hash) and exits 1', async () => {
    const { ids, hashes } = await corrupted([notJson, badRpm]);
    const [notJsonId, badRpmId] = ids as [string, string];
    for (const json of [[], ['--json']]) {
      out = [];
      err = [];
      expect(await runCli(['show', notJsonId, ...json], env)).toBe(1);
      expect(await runCli(['show', badRpmId, ...json], env)).toBe(1);
      expect([json, out, err]).toEqual([
        json,
        [],
        [
          `error: key record ${notJsonId} is invalid: not JSON`,
          expect.stringMatching(new RegExp(`^error: key record ${badRpmId} is invalid: requests_per_minute: `)),
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
