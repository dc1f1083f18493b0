// https://docs.polymarket.com/api-reference/core/get-trades-for-a-user-or-markets (Data API trades)
import { Rng } from '../../core/rng';
import type { GammaMarketDef, PolymarketCatalog } from '../venue-a/catalog';

/** One synthetic public trade of a market, in exact units: what the Data API and the CLOB's live activity show. */
export interface TapeTrade {
  /** 0 = YES token, 1 = NO token. */
  outcomeIndex: 0 | 1;
  asset: string;
  side: 'BUY' | 'SELL';
  /** Shares, whole. */
  size: number;
  /** Price of the traded token in cents. */
  cents: number;
  /** Epoch seconds. */
  timestamp: number;
  transactionHash: string;
  wallet: string;
  pseudonym: string;
}

/**
 * A market's recent public trades, newest first: both outcomes (a NO trade at 1 − the YES price), around the
 * catalogue price, one every 37 s before `nowSec`. Seeded per market, so the same seed replays the same tape.
 */
export function tradeTape(
  seed: number,
  catalog: PolymarketCatalog,
  m: GammaMarketDef,
  nowSec: number,
  limit: number,
): TapeTrade[] {
  const rng = new Rng(seed, 'data', 'trades', m.conditionId);
  const profiles = [...catalog.profiles.entries()];
  return Array.from({ length: limit }, (_, i) => {
    const [wallet, pseudonym] = profiles[i % profiles.length] as [string, string];
    const outcomeIndex = (i % 3 === 2 ? 1 : 0) as 0 | 1;
    const yesCents = rng.range(Math.max(1, m.cents - 3), Math.min(99, m.cents + 3));
    return {
      outcomeIndex,
      asset: m.tokens[outcomeIndex],
      side: rng.int(2) ? 'BUY' : 'SELL',
      size: rng.range(5, 50_000),
      cents: outcomeIndex === 0 ? yesCents : 100 - yesCents,
      timestamp: nowSec - i * 37,
      transactionHash: `0x${rng.hex(64)}`,
      wallet,
      pseudonym,
    };
  });
}
