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

/** The CLOB's two price ticks. */
export type ClobTick = '0.01' | '0.001';

/**
 * A market's tick size now (the CLOB's `tick_size`, `minimum_tick_size`, Gamma's `orderPriceMinTickSize`): Polymarket
 * narrows it from 0.01 to 0.001 as a price nears the ends of the range ("price > 0.96 or < 0.04") and back [3P].
 * The simulator's rule: 0.001 while the YES best bid is 0.96 or more or its best ask 0.04 or less (so one outcome's
 * best bid is at 0.96 or above and the other's best ask at 0.04 or below), else 0.01. Both outcome tokens share it.
 * The books' process keeps to the 0.01 grid, which a 0.001 tick allows.
 */
export function tickSizeOf(p: LivePrices): ClobTick {
  return p.bid >= 96 || p.ask <= 4 ? '0.001' : '0.01';
}

export function tickSize(engine: BookEngine, m: GammaMarketDef): ClobTick {
  return tickSizeOf(livePrices(engine, m));
}
