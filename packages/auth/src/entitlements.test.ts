import { canonicalExchange, canonicalPlatform, matchesAnyPrefix } from './entitlements';
import { resolveKey, type KeyRecord } from './key-record';

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
