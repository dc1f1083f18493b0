import { testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { runCli } from './cli';

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

  it('show and revoke of an unknown id fail with exit 1', async () => {
    expect(await runCli(['show', 'key_0000000000000000'], env)).toBe(1);
    expect(await runCli(['revoke', 'key_0000000000000000'], env)).toBe(1);
    expect(err.join('\n')).toContain('no key with id key_0000000000000000');
  });
});
