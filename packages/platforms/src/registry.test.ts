import {
  ALL_PARTS,
  canonicalExchange,
  canonicalPlatform,
  EXCHANGE_CODES,
  EXCHANGE_KEYS,
  EXCHANGE_PLATFORMS,
  PLATFORM_ALIASES,
  PLATFORM_KEYS,
  PLATFORMS,
  RECORDED_PLATFORMS,
  descriptorEnvShape,
  platformEnvNames,
  resolvePlatforms,
  type CredentialGroups,
} from './index';

describe('the platform registry', () => {
  it('files each descriptor under its own key, with https docs and a main host', () => {
    for (const [key, d] of Object.entries(PLATFORMS)) {
      expect(d.key).toBe(key);
      expect(d.docs).toMatch(/^https:\/\//);
      expect(Object.keys(d.hosts)[0]).toBe('main');
      expect(d.budget.perSecond).toBeGreaterThan(0);
    }
    expect(PLATFORM_KEYS).toEqual([
      'venue-a',
      'venue-a-clob',
      'venue-a-us',
      'venue-b',
      'venue-c',
      'venue-d',
      'venue-e',
    ]);
  });

  it('has no variable, alias or exchange code twice', () => {
    const names = Object.values(PLATFORMS).flatMap((d) => Object.keys(descriptorEnvShape(d, ALL_PARTS)));
    expect(new Set(names).size).toBe(names.length);
    const aliases = Object.values(PLATFORMS).flatMap((d) => d.aliases);
    expect(new Set(aliases).size).toBe(aliases.length);
    for (const alias of aliases) expect(PLATFORM_KEYS as string[]).not.toContain(alias);
    expect(new Set(Object.values(EXCHANGE_CODES)).size).toBe(EXCHANGE_KEYS.length);
  });

  it('derives the exchanges from the recorded platforms, in stored-code order', () => {
    expect(EXCHANGE_KEYS).toEqual(['venue_b', 'venue_c', 'venue_a_us', 'venue_a_clob', 'venue_d']);
    expect(EXCHANGE_CODES).toEqual({ venue_b: 1, venue_c: 2, venue_a_us: 3, venue_a_clob: 4, venue_d: 5 });
    expect(EXCHANGE_PLATFORMS).toEqual({
      venue_b: 'venue-b',
      venue_c: 'venue-c',
      venue_a_us: 'venue-a-us',
      venue_a_clob: 'venue-a-clob',
      venue_d: 'venue-d',
    });
    expect(Object.keys(RECORDED_PLATFORMS)).toEqual(['venue-b', 'venue-c', 'venue-a-us', 'venue-a-clob', 'venue-d']);
    expect(canonicalExchange('KALSHI')).toBe('venue_b');
    expect(canonicalExchange('polymarket_us')).toBe('venue_a_us');
  });

  it('resolves real names, case-insensitively, and nothing inherited', () => {
    expect(PLATFORM_ALIASES).toMatchObject({ kalshi: 'venue-b', ibkr: 'venue-e', 'polymarket-gamma': 'venue-a' });
    expect(canonicalPlatform('Coinbase')).toBe('venue-d');
    for (const name of ['toString', '__proto__', 'venue_b', '']) expect(canonicalPlatform(name)).toBeUndefined();
  });

  it('names each part of each platform: hosts, feeds, credentials (with _FILE for secrets), settings', () => {
    expect(platformEnvNames({ 'venue-b': PLATFORMS['venue-b'] }, ALL_PARTS)).toEqual([
      'UPSTREAM_VENUE_B_URL',
      'FEED_VENUE_B_URL',
      'KALSHI_ACCESS_KEY',
      'KALSHI_PRIVATE_KEY',
      'KALSHI_PRIVATE_KEY_FILE',
      'KALSHI_SIGNATURE_REUSE_MS',
    ]);
    expect(platformEnvNames({ 'venue-a-us': PLATFORMS['venue-a-us'] }, { hosts: 'main' })).toEqual([
      'UPSTREAM_VENUE_A_US_URL',
    ]);
  });
});

describe('resolving the platforms from the environment', () => {
  it('gives the production URLs and default settings, and no signer, when nothing is set', () => {
    const issues: string[] = [];
    const p = resolvePlatforms({}, PLATFORMS, ALL_PARTS, issues);
    expect(issues).toEqual([]);
    expect(p['venue-a-us'].urls).toEqual({ main: 'https://gateway.polymarket.us', auth: 'https://api.polymarket.us' });
    expect(p['venue-b'].feeds).toEqual({ main: 'wss://api.elections.kalshi.com/trade-api/ws/v2' });
    expect(p['venue-e'].settings).toEqual({ IBKR_TICKLE_INTERVAL_MS: 60_000 });
    for (const platform of Object.values(p)) expect(platform.signer).toBeUndefined();
  });

  it('keeps the defaults of settings a deployable does not configure', () => {
    const p = resolvePlatforms({ KALSHI_SIGNATURE_REUSE_MS: '200' }, PLATFORMS, { hosts: true }, []);
    expect(p['venue-b'].settings).toEqual({ KALSHI_SIGNATURE_REUSE_MS: 0 });
  });

  it('collects every problem: malformed URLs, partial or invalid credentials, out-of-range settings', () => {
    const issues: string[] = [];
    resolvePlatforms(
      { UPSTREAM_VENUE_C_URL: 'not a url', KALSHI_SIGNATURE_REUSE_MS: '9999' },
      PLATFORMS,
      ALL_PARTS,
      issues,
    );
    expect(issues).toEqual([
      expect.stringMatching(/^KALSHI_SIGNATURE_REUSE_MS: /),
      expect.stringMatching(/^UPSTREAM_VENUE_C_URL: not a URL/),
    ]);
    const more: string[] = [];
    resolvePlatforms(
      {
        KALSHI_ACCESS_KEY: 'k',
        KALSHI_PRIVATE_KEY: 'not a key',
        COINBASE_API_KEY: 'c',
        IBKR_PORTAL_CA: 'not a certificate',
        POLYMARKET_US_ACCESS_KEY: 'p',
        POLYMARKET_US_SECRET_KEY: Buffer.alloc(10).toString('base64'),
      },
      PLATFORMS,
      ALL_PARTS,
      more,
    );
    expect(more).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Kalshi credentials: KALSHI_PRIVATE_KEY: /),
        'Coinbase credentials are incomplete: missing COINBASE_API_SECRET, COINBASE_API_PASSPHRASE',
        'IBKR portal CA credentials: IBKR_PORTAL_CA: not a PEM certificate',
        expect.stringMatching(/^Polymarket US credentials: POLYMARKET_US_SECRET_KEY must be base64 of 64/),
      ]),
    );
    expect(more).toHaveLength(4);
  });

  it('builds each credential group and its signer; a group is all its variables or none', () => {
    const groups = PLATFORMS['venue-d'].credentials as CredentialGroups;
    expect(Object.keys(groups)).toEqual(['hmac', 'jwt']);
    const p = resolvePlatforms(
      { COINBASE_API_KEY: 'k', COINBASE_API_SECRET: 'AAAA', COINBASE_API_PASSPHRASE: 'pp' },
      PLATFORMS,
      ALL_PARTS,
      [],
    );
    expect(p['venue-d'].credentials).toEqual({ hmac: { key: 'k', secret: 'AAAA', passphrase: 'pp' } });
    expect(p['venue-d'].signer?.name).toBe('coinbase-exchange-hmac');
  });
});
