/**
 * The book the engine keeps while it replays a window: the venues that send absolute sizes (Gemini, Coinbase, the
 * CLOB) or whole books (Polymarket US) need each level's size after a recorded signed delta. Exact: quantities are
 * BigInt scaled by 10^18 (@depthgate/feeds LocalBook), prices keyed by their canonical text.
 */
import { ASK, BID, LocalBook, formatDecimal, formatFixed, parseDecimal, type SideCode } from '@depthgate/feeds';
import { ReplayDataError, type BookLevels } from './types';

export const sideCode = (side: 'bid' | 'ask'): SideCode => (side === 'bid' ? BID : ASK);

/**
 * How a venue writes a number: `'shortest'` without trailing zeros (the CLOB's "0.5"), a count of places at least that
 * many fraction digits (Kalshi's "0.4800", Coinbase's "0.00000000"; more when the value needs them, so nothing
 * recorded is ever rounded away).
 */
export type Places = number | 'shortest';

export function formatPlaces(value: bigint, places: Places): string {
  return places === 'shortest' ? formatDecimal(value) : formatFixed(value, places);
}

export class ReplayBook {
  private readonly book = new LocalBook();

  /** A book from stored levels (a zero or negative quantity is refused: a stored book never has one). */
  static of(levels: BookLevels): ReplayBook {
    const out = new ReplayBook();
    for (const [side, list] of [
      [BID, levels.bids],
      [ASK, levels.asks],
    ] as const) {
      for (const [price, quantity] of list) {
        if (parseDecimal(quantity) <= 0n) throw new ReplayDataError(`a stored level has no quantity: ${quantity}`);
        out.book.setLevel(side, price, quantity);
      }
    }
    return out;
  }

  /** Adds a signed delta to a level; returns the level's new quantity (0n: removed). */
  apply(side: SideCode, price: string, delta: string): bigint {
    const ok = this.book.addToLevel(side, price, delta, formatDecimal);
    if (!ok) throw new ReplayDataError(`a recorded delta takes ${price} below zero (${delta})`);
    return this.quantity(side, price);
  }

  quantity(side: SideCode, price: string): bigint {
    return this.book.side(side).get(formatDecimal(parseDecimal(price)))?.q ?? 0n;
  }

  /** A side's levels `[canonical price, quantity]`, by price (exact decimal order). */
  levels(side: SideCode, order: 'asc' | 'desc'): [string, bigint][] {
    return this.book.sortedEntries(side, order).map(([price, level]) => [price, level.q]);
  }

  /** The best price of a side (canonical text), undefined when the side is empty. */
  best(side: SideCode): string | undefined {
    return this.levels(side, side === BID ? 'desc' : 'asc')[0]?.[0];
  }
}
