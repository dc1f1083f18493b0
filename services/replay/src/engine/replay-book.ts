/**
 * The book the engine keeps while it replays a window: the venues that send absolute sizes (Gemini, Coinbase, the
 * CLOB) or whole books (Polymarket US) need each level's size after a recorded signed delta. Exact: quantities are
 * BigInt scaled by 10^18 (@depthgate/feeds LocalBook), prices keyed by their canonical text.
 */
import {
  ASK,
  BID,
  CanonicalMemo,
  LocalBook,
  formatDecimal,
  formatFixed,
  parseDecimal,
  type Level,
  type SideCode,
} from '@depthgate/feeds';
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

/**
 * A price's text in a venue's format, memoised: prices sit on a grid and whole-book venues write every level of the
 * book in every message.
 */
export function priceFormat(places: Places): (price: string) => string {
  const memo = new CanonicalMemo((price) => formatPlaces(parseDecimal(price), places), 20_000);
  return (price) => memo.get(price);
}

const canonicalPrice = new CanonicalMemo();

export class ReplayBook {
  private readonly book = new LocalBook();
  /**
   * Each side's canonical prices in ascending order, kept until a level appears or disappears (a change of quantity
   * keeps the order): the venues that write the whole book, or hash it, after every change read it in order each time.
   */
  private readonly ascending: Record<SideCode, string[] | undefined> = { [BID]: undefined, [ASK]: undefined };

  /** A book from stored levels (a zero or negative quantity is refused: a stored book never has one). */
  static of(levels: BookLevels): ReplayBook {
    const out = new ReplayBook();
    for (const [side, list] of [
      [BID, levels.bids],
      [ASK, levels.asks],
    ] as const) {
      for (const [price, quantity] of list) {
        const q = parseDecimal(quantity);
        if (q <= 0n) throw new ReplayDataError(`a stored level has no quantity: ${quantity}`);
        // The quantity's text kept canonical, as every later change writes it (`shortestLevels`).
        out.book.setLevel(side, price, formatDecimal(q));
      }
    }
    return out;
  }

  /** Adds a signed delta to a level; returns the level's new quantity (0n: removed). */
  apply(side: SideCode, price: string, delta: string): bigint {
    const levels = this.book.side(side);
    const count = levels.size;
    const ok = this.book.addToLevel(side, price, delta, formatDecimal);
    if (!ok) throw new ReplayDataError(`a recorded delta takes ${price} below zero (${delta})`);
    if (levels.size !== count) this.ascending[side] = undefined;
    return this.quantity(side, price);
  }

  quantity(side: SideCode, price: string): bigint {
    return this.book.side(side).get(canonicalPrice.get(price))?.q ?? 0n;
  }

  /** A side's levels `[canonical price, quantity]`, by price (exact decimal order). */
  levels(side: SideCode, order: 'asc' | 'desc'): [string, bigint][] {
    const levels = this.book.side(side);
    const out = this.prices(side).map((price): [string, bigint] => [price, (levels.get(price) as Level).q]);
    return order === 'asc' ? out : out.reverse();
  }

  /** A side's levels `[canonical price, canonical quantity text]`, by price: the shortest forms, without formatting. */
  shortestLevels(side: SideCode, order: 'asc' | 'desc'): [string, string][] {
    const levels = this.book.side(side);
    const out = this.prices(side).map((price): [string, string] => [price, (levels.get(price) as Level).s]);
    return order === 'asc' ? out : out.reverse();
  }

  /** A side's canonical prices, ascending (exact decimal order), cached until a level appears or disappears. */
  private prices(side: SideCode): string[] {
    return (this.ascending[side] ??= this.book.sortedEntries(side, 'asc').map(([price]) => price));
  }
}
