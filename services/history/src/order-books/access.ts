/**
 * What a caller may see: which tickers (`ticker_prefixes`) and from when (`max_data_age_days`,
 * `full_history_prefixes`, the anonymous day, the start of recorded history). Pure functions of the caller, the
 * ticker and the clock, so every rule is unit-tested at its edges.
 */
import { ANONYMOUS_WINDOW_DAYS, DAY_MS, HISTORY_START_MS, matchesAnyPrefix, type Caller } from '@depthgate/auth';

/** A ticker outside the key's `ticker_prefixes` does not exist for that caller. No prefixes: every ticker. */
export function canSeeTicker(caller: Caller | undefined, ticker: string): boolean {
  if (caller?.kind !== 'key') return true;
  const prefixes = caller.key.tickerPrefixes;
  return prefixes === null || matchesAnyPrefix(ticker, prefixes);
}

/**
 * The earliest `ts` the caller may read for a ticker (inclusive, epoch ms):
 * - anonymous: the last day (`now − 1 day`);
 * - a key whose `full_history_prefixes` match the ticker: the start of history;
 * - a key with `max_data_age_days`: `now − days`;
 * - otherwise the start of history.
 * Never earlier than 7 March 2026 00:00 UTC. Windows roll with the clock to the millisecond.
 */
export function windowStart(caller: Caller | undefined, ticker: string, now: number): number {
  if (caller?.kind !== 'key') return Math.max(HISTORY_START_MS, now - ANONYMOUS_WINDOW_DAYS * DAY_MS);
  const key = caller.key;
  if (key.fullHistoryPrefixes !== null && matchesAnyPrefix(ticker, key.fullHistoryPrefixes)) return HISTORY_START_MS;
  if (key.maxDataAgeDays !== null) return Math.max(HISTORY_START_MS, now - key.maxDataAgeDays * DAY_MS);
  return HISTORY_START_MS;
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
