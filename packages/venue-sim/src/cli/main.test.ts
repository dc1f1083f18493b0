import { parseCli, UsageError } from './main';

describe('CLI arguments', () => {
  test('defaults: port 7090, seed 42', () => {
    const c = parseCli([]);
    expect(c.options.ports).toEqual({ base: 7090 });
    expect(c.options.seed).toBe(42);
    expect(c.writeEnv).toBeUndefined();
  });

  test('--max-recorded-requests caps the request record, 0 turns it off', () => {
    expect(parseCli(['--max-recorded-requests', '500']).options).toMatchObject({ maxRecordedRequests: 500 });
    expect(parseCli(['--max-recorded-requests', '0']).options).toMatchObject({ recordRequests: false });
    expect(() => parseCli(['--max-recorded-requests', '-1'])).toThrow(UsageError);
  });

  test('--platforms names platforms the simulator has: a bad name is a usage error (exit 2), not a failed start', () => {
    expect(parseCli(['--platforms', 'kalshi, venue_c']).options.platforms).toEqual(['kalshi', 'venue_c']);
    expect(() => parseCli(['--platforms', 'kalshi,nope'])).toThrow(/unknown platform "nope"/);
    expect(() => parseCli(['--platforms', 'nope'])).toThrow(UsageError);
  });

  test('--max-feed-subscriptions bounds the subscriptions of one feed connection', () => {
    expect(parseCli(['--max-feed-subscriptions', '50']).options).toMatchObject({ maxFeedSubscriptions: 50 });
    expect(parseCli([]).options.maxFeedSubscriptions).toBeUndefined();
    expect(() => parseCli(['--max-feed-subscriptions', '0'])).toThrow(UsageError);
  });

  test('--heartbeat-interval-ms sets every feed’s rhythm; without it each venue keeps its own', () => {
    expect(parseCli(['--heartbeat-interval-ms', '200']).options).toMatchObject({ heartbeatIntervalMs: 200 });
    expect(parseCli([]).options.heartbeatIntervalMs).toBeUndefined();
    expect(() => parseCli(['--heartbeat-interval-ms', '-5'])).toThrow(UsageError);
  });

  test("./dev up --sim's invocation and the tuning flags", () => {
    const c = parseCli([
      '--port',
      '27090',
      '--write-env',
      '.dev/sim/upstreams.env',
      '--seed',
      '7',
      '--updates-per-second',
      '2000',
      '--changes-per-update',
      '4',
      '--platforms',
      'kalshi,venue_c',
      '--tickers',
      'kalshi=20,gemini=4',
      '--no-rate-limits',
      '--kalshi-orderbook-requires-auth',
      '--ibkr-idle-timeout-ms',
      '1000',
    ]);
    expect(c.writeEnv).toBe('.dev/sim/upstreams.env');
    expect(c.options).toMatchObject({
      ports: { base: 27090 },
      seed: 7,
      updatesPerSecond: 2000,
      changesPerUpdate: 4,
      platforms: ['kalshi', 'venue_c'],
      tickers: { kalshi: 20, gemini: 4 },
      rateLimits: false,
      kalshiOrderbookRequiresAuth: true,
      ibkrIdleTimeoutMs: 1000,
    });
  });

  test("a leading '--' (pnpm start -- ...) is ignored", () => {
    expect(parseCli(['--', '--port', '7190']).options.ports).toEqual({ base: 7190 });
  });

  test.each([
    [['--port', 'x']],
    [['--seed', '-1']],
    [['--tickers', 'nasdaq=3']],
    [['--bogus']],
    [['--changes-per-update', '0']],
  ])('refuses %j', (args) => {
    expect(() => parseCli(args)).toThrow(UsageError);
  });
});
