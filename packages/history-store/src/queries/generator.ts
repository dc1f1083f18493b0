/**
 * The data generator's one read: which tickers already hold rows in a range (so a second `seed` run does not
 * double them). Reads the catalogue only. Its inserts are the streaming inserts of inserts.ts.
 */
import { EXCHANGE_KEYS, type ExchangeKey } from '@depthgate/platforms';
import { join, lit, sql } from '../literals';
import { Querier } from '../querier';
import type { HistoryStore } from '../store';

/** `exchange:ticker` of the given tickers that already have rows (of either kind) overlapping [from, to). */
export async function tickersWithData(
  store: HistoryStore,
  tickers: readonly { exchange: ExchangeKey; ticker: string }[],
  from: number,
  to: number,
  timeoutMs = 60_000,
): Promise<Set<string>> {
  const q = new Querier(store);
  const found = new Set<string>();
  for (const exchange of EXCHANGE_KEYS) {
    const names = tickers.filter((t) => t.exchange === exchange).map((t) => t.ticker);
    for (let i = 0; i < names.length; i += 500) {
      const chunk = names.slice(i, i + 500);
      const rows = await q.jsonWithin(
        timeoutMs,
        'seeded-tickers',
        sql`SELECT ticker FROM ${q.db}.ticker_catalogue
WHERE exchange = ${lit.exchange(exchange)} AND ticker IN (${join(chunk.map(lit.ticker), ', ')})
GROUP BY ticker
HAVING maxMerge(last_ts) >= ${lit.int(from)} AND minMerge(first_ts) < ${lit.int(to)}`,
        (r) => String(r.ticker),
      );
      for (const ticker of rows) found.add(`${exchange}:${ticker}`);
    }
  }
  return found;
}
