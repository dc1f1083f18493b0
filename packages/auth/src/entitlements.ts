/**
 * The vocabulary of entitlements a key can carry: the spec's neutral platform and exchange keys (with the real
 * platform names accepted as aliases), ticker-prefix matching, and the history window a caller may see.
 */

// The platform and exchange vocabularies come from the platforms' descriptors (@depthgate/platforms).
export {
  PLATFORM_KEYS,
  PLATFORM_ALIASES,
  canonicalPlatform,
  EXCHANGE_KEYS,
  EXCHANGE_ALIASES,
  canonicalExchange,
  EXCHANGES,
  HISTORY_START_MS,
  type PlatformKey,
  type ExchangeKey,
  type Exchanges,
} from '@depthgate/platforms';

/**
 * Characters a ticker (and so a ticker prefix) may contain on any of the recorded exchanges, at most 128 of them:
 * the history's ticker grammar (@depthgate/history-store TICKER_PATTERN; Polymarket CLOB token ids have ~77 digits).
 */
export const TICKER_PREFIX_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** Case-insensitive prefix test. `prefixes` must already be lower-case (see ResolvedKey). */
export function matchesAnyPrefix(ticker: string, lowerPrefixes: readonly string[]): boolean {
  const t = ticker.toLowerCase();
  for (const p of lowerPrefixes) if (t.startsWith(p)) return true;
  return false;
}

export const DAY_MS = 86_400_000;
/** Anonymous callers see the last day only (spec, rule 3). */
export const ANONYMOUS_WINDOW_DAYS = 1;
