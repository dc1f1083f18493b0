/**
 * The vocabulary of entitlements a key can carry: the spec's neutral platform and exchange keys (with the real
 * platform names accepted as aliases), ticker-prefix matching, and the history window a caller may see.
 */

export const PLATFORM_KEYS = [
  'venue-a',
  'venue-a-clob',
  'venue-a-us',
  'venue-b',
  'venue-c',
  'venue-d',
  'venue-e',
] as const;
export type PlatformKey = (typeof PLATFORM_KEYS)[number];

/** Real platform names accepted wherever a platform key is (gateway paths, `--platforms`). */
export const PLATFORM_ALIASES: Readonly<Record<string, PlatformKey>> = {
  polymarket: 'venue-a',
  'polymarket-gamma': 'venue-a',
  'polymarket-clob': 'venue-a-clob',
  'polymarket-us': 'venue-a-us',
  kalshi: 'venue-b',
  gemini: 'venue-c',
  coinbase: 'venue-d',
  forecastex: 'venue-e',
  ibkr: 'venue-e',
};

export function canonicalPlatform(name: string): PlatformKey | undefined {
  const lower = name.toLowerCase();
  if ((PLATFORM_KEYS as readonly string[]).includes(lower)) return lower as PlatformKey;
  return Object.hasOwn(PLATFORM_ALIASES, lower) ? PLATFORM_ALIASES[lower] : undefined;
}

export const EXCHANGE_KEYS = ['venue_b', 'venue_c', 'venue_a_us'] as const;
export type ExchangeKey = (typeof EXCHANGE_KEYS)[number];

export const EXCHANGE_ALIASES: Readonly<Record<string, ExchangeKey>> = {
  kalshi: 'venue_b',
  gemini: 'venue_c',
  polymarket_us: 'venue_a_us',
};

export function canonicalExchange(name: string): ExchangeKey | undefined {
  const lower = name.toLowerCase();
  if ((EXCHANGE_KEYS as readonly string[]).includes(lower)) return lower as ExchangeKey;
  return Object.hasOwn(EXCHANGE_ALIASES, lower) ? EXCHANGE_ALIASES[lower] : undefined;
}

/** Characters a ticker (and so a ticker prefix) may contain on any of the recorded exchanges. */
export const TICKER_PREFIX_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** Case-insensitive prefix test. `prefixes` must already be lower-case (see ResolvedKey). */
export function matchesAnyPrefix(ticker: string, lowerPrefixes: readonly string[]): boolean {
  const t = ticker.toLowerCase();
  for (const p of lowerPrefixes) if (t.startsWith(p)) return true;
  return false;
}

export const DAY_MS = 86_400_000;
/** Recorded history begins on 7 March 2026 (spec, Limits). */
export const HISTORY_START_MS = Date.UTC(2026, 2, 7);
/** Anonymous callers see the last day only (spec, rule 3). */
export const ANONYMOUS_WINDOW_DAYS = 1;
