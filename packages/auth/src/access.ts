/**
 * What a caller may see of the recorded history: which tickers (`ticker_prefixes`) and from when
 * (`max_data_age_days`, `full_history_prefixes`, the anonymous day, the start of recorded history). Pure functions of
 * the caller, the ticker and the clock, so every rule is unit-tested at its edges; the history API and the replay
 * apply the same rules from here (docs/history.md, "Windows and entitlements").
 */
import { AppError } from '@depthgate/service-kit';
import type { Caller } from './caller';
import {
  ANONYMOUS_WINDOW_DAYS,
  DAY_MS,
  HISTORY_START_MS,
  matchesAnyPrefix,
  type ExchangeKey,
  type Exchanges,
} from './entitlements';

/** A ticker outside the key's `ticker_prefixes` does not exist for that caller. No prefixes: every ticker. */
export function canSeeTicker(caller: Caller | undefined, ticker: string): boolean {
  if (caller?.kind !== 'key') return true;
  const prefixes = caller.key.tickerPrefixes;
  return prefixes === null || matchesAnyPrefix(ticker, prefixes);
}

/**
 * Which rule sets a caller's window for a ticker (docs/history.md, "Windows and entitlements"), so that an answer can
 * say why older data is not shown: `anonymous` (no key: the last day), `max_data_age_days` (the key's limit),
 * `full_history_prefix` (the key's `full_history_prefixes` match the ticker), `full_history` (a key without a limit).
 */
type WindowRule = 'anonymous' | 'max_data_age_days' | 'full_history_prefix' | 'full_history';

export interface CallerWindow {
  /** The earliest `ts` the caller may read (inclusive, epoch ms). */
  start: number;
  rule: WindowRule;
  /** The days the rule allows (`anonymous`: 1, `max_data_age_days`: the key's), null for full history. */
  days: number | null;
}

/**
 * The caller's window for a ticker:
 * - anonymous: the last day (`now − 1 day`);
 * - a key whose `full_history_prefixes` match the ticker: the start of history;
 * - a key with `max_data_age_days`: `now − days`;
 * - otherwise the start of history.
 * Never earlier than 7 March 2026 00:00 UTC. Windows roll with the clock to the millisecond.
 */
export function callerWindow(caller: Caller | undefined, ticker: string, now: number): CallerWindow {
  const since = (days: number) => Math.max(HISTORY_START_MS, now - days * DAY_MS);
  if (caller?.kind !== 'key') {
    return { start: since(ANONYMOUS_WINDOW_DAYS), rule: 'anonymous', days: ANONYMOUS_WINDOW_DAYS };
  }
  const key = caller.key;
  if (key.fullHistoryPrefixes !== null && matchesAnyPrefix(ticker, key.fullHistoryPrefixes)) {
    return { start: HISTORY_START_MS, rule: 'full_history_prefix', days: null };
  }
  if (key.maxDataAgeDays !== null) {
    return { start: since(key.maxDataAgeDays), rule: 'max_data_age_days', days: key.maxDataAgeDays };
  }
  return { start: HISTORY_START_MS, rule: 'full_history', days: null };
}

/** The earliest `ts` the caller may read for a ticker (inclusive, epoch ms): `callerWindow(…).start`. */
export function windowStart(caller: Caller | undefined, ticker: string, now: number): number {
  return callerWindow(caller, ticker, now).start;
}

/** The caller's request range clamped to what it may see: `[from, to]`, both inclusive; `to` null = open. */
export function effectiveRange(
  caller: Caller | undefined,
  ticker: string,
  now: number,
  requested: { start?: number; end?: number },
): { from: number; to: number | null } {
  const earliest = windowStart(caller, ticker, now);
  return { from: Math.max(earliest, requested.start ?? earliest), to: requested.end ?? null };
}

/** The answer for a ticker that does not exist for the caller (never recorded, or outside its `ticker_prefixes`). */
export function unknownTicker(exchange: ExchangeKey, ticker: string): AppError {
  const shown = ticker.length > 80 ? `${ticker.slice(0, 80)}…` : ticker;
  return new AppError('unknown_ticker', `Unknown ticker ${JSON.stringify(shown)} on ${exchange}`);
}

/** The answer for an `{exchange}` that names none of `exchanges` (keys and aliases, any case), naming every one. */
export function unknownExchange(exchanges: Exchanges<ExchangeKey>, given: string): AppError {
  const shown = given.length > 40 ? `${given.slice(0, 40)}…` : given;
  // `venue-b`, `venue-a-us`: the gateway's spelling (its platform keys use "-"; exchange keys use "_").
  const underscored = given.includes('-') ? exchanges.canonical(given.replace(/-/g, '_')) : undefined;
  const rule = underscored
    ? ` ("-" spells the gateway's platform keys; the history's exchange keys use "_": ${underscored})`
    : '';
  return new AppError(
    'unknown_exchange',
    `Unknown exchange ${JSON.stringify(shown)}${rule}: use ${exchanges.describe()}`,
  );
}
