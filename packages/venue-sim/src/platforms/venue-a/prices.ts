// https://docs.polymarket.com/api-reference/orderbook/get-order-book (the prices every Polymarket host derives)
import type { BookEngine } from '../../book/engine';
import type { GammaMarketDef } from './catalog';

/** A market's YES best bid and ask in cents, from its live CLOB book (the catalogue price ± 1 without one). */
export interface LivePrices {
  bid: number;
  ask: number;
}

export function livePrices(engine: BookEngine, m: GammaMarketDef): LivePrices {
  const book = engine.book('venue-a-clob', m.tokens[0]);
  return { bid: book?.bids.best() ?? m.cents - 1, ask: book?.asks.best() ?? m.cents + 1 };
}

/**
 * The YES and NO midpoints in tenths of a cent (dollars with 3 decimals): what Gamma's `outcomePrices`, the CLOB's
 * `tokens[].price` and rewards' token prices show. The NO midpoint is 1 − the YES midpoint.
 */
export function outcomeMids(engine: BookEngine, m: GammaMarketDef): [number, number] {
  const p = livePrices(engine, m);
  const yes = (p.bid + p.ask) * 5;
  return [yes, 1000 - yes];
}
