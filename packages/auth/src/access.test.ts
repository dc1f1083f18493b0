import type { Caller } from './caller';
import { DAY_MS, HISTORY_START_MS } from './entitlements';
import type { ResolvedKey } from './key-record';
import { callerWindow, canSeeTicker, effectiveRange, windowStart } from './access';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0, 0);

function key(overrides: Partial<ResolvedKey> = {}): Caller {
  return {
    kind: 'key',
    key: {
      id: 'k',
      name: 'test',
      tickerPrefixes: null,
      fullHistoryPrefixes: null,
      maxDataAgeDays: null,
      requestsPerMinute: null,
      platforms: null,
      ...overrides,
    },
  };
}
const anonymous: Caller = { kind: 'anonymous', ip: '127.0.0.1' };

describe('windowStart', () => {
  it('anonymous callers see the last day, to the millisecond', () => {
    expect(windowStart(anonymous, 'KXBTCD', NOW)).toBe(NOW - DAY_MS);
    expect(windowStart(undefined, 'KXBTCD', NOW)).toBe(NOW - DAY_MS);
  });

  it('never before 7 March 2026, for anyone', () => {
    const early = HISTORY_START_MS + 3600_000;
    expect(windowStart(anonymous, 'X', early)).toBe(HISTORY_START_MS);
    expect(windowStart(key({ maxDataAgeDays: 30 }), 'X', early)).toBe(HISTORY_START_MS);
    expect(windowStart(key(), 'X', NOW)).toBe(HISTORY_START_MS);
  });

  it('max_data_age_days rolls with the clock', () => {
    expect(windowStart(key({ maxDataAgeDays: 2 }), 'KXBTCD', NOW)).toBe(NOW - 2 * DAY_MS);
    expect(windowStart(key({ maxDataAgeDays: 2 }), 'KXBTCD', NOW + 1)).toBe(NOW - 2 * DAY_MS + 1);
  });

  it('full_history_prefixes bypass max_data_age_days, case-insensitively', () => {
    const k = key({ maxDataAgeDays: 2, fullHistoryPrefixes: ['kxbtc'] });
    expect(windowStart(k, 'KXBTCD-26MAR07-T100000', NOW)).toBe(HISTORY_START_MS);
    expect(windowStart(k, 'kxbtcd-x', NOW)).toBe(HISTORY_START_MS);
    expect(windowStart(k, 'KXETHD-26MAR07', NOW)).toBe(NOW - 2 * DAY_MS);
    expect(windowStart(k, 'KXBT', NOW)).toBe(NOW - 2 * DAY_MS);
  });
});

describe('callerWindow', () => {
  it('names the rule that sets the window, and its days', () => {
    expect(callerWindow(anonymous, 'X', NOW)).toEqual({ start: NOW - DAY_MS, rule: 'anonymous', days: 1 });
    expect(callerWindow(key({ maxDataAgeDays: 30 }), 'X', NOW)).toEqual({
      start: NOW - 30 * DAY_MS,
      rule: 'max_data_age_days',
      days: 30,
    });
    const k = key({ maxDataAgeDays: 2, fullHistoryPrefixes: ['kx'] });
    expect(callerWindow(k, 'KXBTCD', NOW)).toEqual({
      start: HISTORY_START_MS,
      rule: 'full_history_prefix',
      days: null,
    });
    expect(callerWindow(k, 'BTCUSD', NOW).rule).toBe('max_data_age_days');
    expect(callerWindow(key(), 'X', NOW)).toEqual({ start: HISTORY_START_MS, rule: 'full_history', days: null });
    // Clamped to the start of history, the rule stays the one that applies.
    expect(callerWindow(key({ maxDataAgeDays: 3650 }), 'X', NOW)).toEqual({
      start: HISTORY_START_MS,
      rule: 'max_data_age_days',
      days: 3650,
    });
  });
});

describe('canSeeTicker', () => {
  it('applies ticker_prefixes case-insensitively; none means everything', () => {
    const k = key({ tickerPrefixes: ['kx', 'btc'] });
    expect(canSeeTicker(k, 'KXBTCD')).toBe(true);
    expect(canSeeTicker(k, 'kxbtcd')).toBe(true);
    expect(canSeeTicker(k, 'BTCUSD')).toBe(true);
    expect(canSeeTicker(k, 'ETHUSD')).toBe(false);
    expect(canSeeTicker(k, 'K')).toBe(false);
    expect(canSeeTicker(key(), 'anything')).toBe(true);
    expect(canSeeTicker(anonymous, 'anything')).toBe(true);
  });
});

describe('effectiveRange', () => {
  it('clamps start_ts up to the window and keeps a later one', () => {
    const k = key({ maxDataAgeDays: 2 });
    expect(effectiveRange(k, 'X', NOW, {})).toEqual({ from: NOW - 2 * DAY_MS, to: null });
    expect(effectiveRange(k, 'X', NOW, { start: 0, end: NOW })).toEqual({ from: NOW - 2 * DAY_MS, to: NOW });
    expect(effectiveRange(k, 'X', NOW, { start: NOW - 1000 })).toEqual({ from: NOW - 1000, to: null });
    expect(effectiveRange(anonymous, 'X', NOW, { start: HISTORY_START_MS })).toEqual({ from: NOW - DAY_MS, to: null });
  });
});
