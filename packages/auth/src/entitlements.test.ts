import { canonicalExchange, canonicalPlatform, matchesAnyPrefix, TICKER_PREFIX_PATTERN } from './entitlements';
import { keyRecordSchema, resolveKey, type KeyRecord } from './key-record';

describe('platform and exchange names', () => {
  it('accept neutral keys and real names, case-insensitively', () => {
    expect(canonicalPlatform('venue-b')).toBe('venue-b');
    expect(canonicalPlatform('KALSHI')).toBe('venue-b');
    expect(canonicalPlatform('polymarket-clob')).toBe('venue-a-clob');
    expect(canonicalPlatform('forecastex')).toBe('venue-e');
    expect(canonicalExchange('venue_a_us')).toBe('venue_a_us');
    expect(canonicalExchange('gemini')).toBe('venue_c');
  });

  it('reject unknown names, including inherited object properties', () => {
    for (const name of ['venue-z', '', '__proto__', 'constructor', 'toString', 'venue_b']) {
      expect(canonicalPlatform(name)).toBeUndefined();
    }
    expect(canonicalExchange('venue-b')).toBeUndefined();
    expect(canonicalExchange('hasOwnProperty')).toBeUndefined();
  });
});

describe('ticker prefixes', () => {
  const record: KeyRecord = {
    id: 'key_0123456789abcdef',
    name: 'n',
    created_at: '2026-03-07T00:00:00.000Z',
    revoked_at: null,
    ticker_prefixes: ['KXBTC', 'btcusd'],
    max_data_age_days: 30,
    full_history_prefixes: ['KxEtH'],
    requests_per_minute: 5,
    platforms: ['venue-b'],
    key_hash: 'a'.repeat(64),
  };

  it('match case-insensitively in both directions', () => {
    const key = resolveKey(record);
    expect(key.tickerPrefixes).toEqual(['kxbtc', 'btcusd']);
    expect(matchesAnyPrefix('KXBTCD-26MAR07-T100000', key.tickerPrefixes ?? [])).toBe(true);
    expect(matchesAnyPrefix('kxbtc15m-26mar281530-50', key.tickerPrefixes ?? [])).toBe(true);
    expect(matchesAnyPrefix('BTCUSD', key.tickerPrefixes ?? [])).toBe(true);
    expect(matchesAnyPrefix('KXETH-26', key.tickerPrefixes ?? [])).toBe(false);
    expect(matchesAnyPrefix('KXETH-26', key.fullHistoryPrefixes ?? [])).toBe(true);
    expect(matchesAnyPrefix('XKXBTC', key.tickerPrefixes ?? [])).toBe(false);
  });

  it('an empty list matches nothing', () => {
    expect(matchesAnyPrefix('ANY', [])).toBe(false);
  });

  it('resolve platforms to a set', () => {
    expect(resolveKey(record).platforms?.has('venue-b')).toBe(true);
    expect(resolveKey({ ...record, platforms: null }).platforms).toBeNull();
  });
});

describe('the ticker grammar of prefixes', () => {
  // A Polymarket CLOB outcome token id: 77 decimal digits.
  const TOKEN_ID = '71321045679252212594626385532706912750332728571942532289631379312455583992563';

  it('takes up to 128 characters (a CLOB token id among them), not 129', () => {
    expect(TOKEN_ID).toHaveLength(77);
    for (const ok of [TOKEN_ID, 'x'.repeat(128), 'KX', 'a.b_c-D9']) expect(TICKER_PREFIX_PATTERN.test(ok)).toBe(true);
    for (const bad of ['x'.repeat(129), '', 'bad prefix', 'a/b']) expect(TICKER_PREFIX_PATTERN.test(bad)).toBe(false);
  });

  it('a stored key may hold a 128-character prefix, not a 129-character one', () => {
    const base = {
      id: 'key_0123456789abcdef',
      name: 'n',
      created_at: '2026-03-07T00:00:00.000Z',
      revoked_at: null,
      max_data_age_days: null,
      full_history_prefixes: null,
      requests_per_minute: null,
      platforms: null,
      key_hash: '0'.repeat(64),
    };
    expect(keyRecordSchema.safeParse({ ...base, ticker_prefixes: ['7'.repeat(128)] }).success).toBe(true);
    expect(keyRecordSchema.safeParse({ ...base, ticker_prefixes: ['7'.repeat(129)] }).success).toBe(false);
  });
});
