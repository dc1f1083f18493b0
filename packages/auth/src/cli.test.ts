import { runCli } from './cli';

describe('keys CLI argument checking (no Redis needed)', () => {
  let errors: string[];
  beforeEach(() => {
    errors = [];
    jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.join(' ')));
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  const env = { REDIS_URL: 'redis://127.0.0.1:1' };

  it.each([
    [[], 'a command is required'],
    [['frobnicate'], 'unknown command'],
    [['create'], '--name is required'],
    [['create', '--name', 'a', '--requests-per-minute', '0'], 'positive integer'],
    [['create', '--name', 'a', '--requests-per-minute', '1.5'], 'positive integer'],
    [['create', '--name', 'a', '--max-data-age-days=-3'], 'positive integer'],
    [['create', '--name', 'a', '--platforms', 'venue-x'], 'unknown platform'],
    [['create', '--name', 'a', '--ticker-prefixes', 'KX,bad prefix'], 'not a ticker prefix'],
    [['create', '--name', 'a', '--ticker-prefixes', ','], 'at least one prefix'],
    [['create', '--name', 'a', '--ticker-prefixes', `KX,${'7'.repeat(129)}`], 'at most 128'],
    [['create', '--name', 'a', '--bogus'], "Unknown option '--bogus'"],
    [['show'], 'exactly one key id'],
    [['revoke', 'dg_123'], 'is not a key id'],
    [['list', 'extra'], 'unexpected argument'],
  ])('%j exits 2 with a clear message', async (argv, message) => {
    expect(await runCli(argv, env)).toBe(2);
    expect(errors.join('\n')).toContain(message);
    expect(errors.join('\n')).toContain('usage:');
  });
});
