/**
 * An order book as its keeper holds it: per side, the levels by canonical price text, each with its quantity as a
 * BigInt scaled by 10^18 and the quantity's text (the venue's, or computed), so an unchanged level compares as a
 * string, without arithmetic. The recorder turns absolute sizes (Gemini) and whole books (Polymarket US) into signed
 * deltas with it; the gateway's WebSocket proxy keeps each shared subscription's book with it, to answer late joiners
 * and resyncs with the platform's own snapshot.
 */
import { canonicalDecimal, DecimalError, parseDecimal } from './decimal';

export const BID = 1;
export const ASK = 2;
export type SideCode = typeof BID | typeof ASK;
export const SIDE_NAME: Record<SideCode, 'bid' | 'ask'> = { [BID]: 'bid', [ASK]: 'ask' };

export interface Level {
  /** Quantity, scaled by 10^18; always > 0 in a book. */
  q: bigint;
  /** The quantity's text (the venue's, or canonical when computed). */
  s: string;
  /** Mark of the last whole-book message that listed this level (whole-book diffing). */
  e: number;
  /** The price as the venue spelt it, where the keeper repeats the venue's own format (the gateway). */
  p?: string;
}

export class LocalBook {
  readonly bids = new Map<string, Level>();
  readonly asks = new Map<string, Level>();

  side(side: SideCode): Map<string, Level> {
    return side === BID ? this.bids : this.asks;
  }

  get size(): number {
    return this.bids.size + this.asks.size;
  }

  clear(): void {
    this.bids.clear();
    this.asks.clear();
  }

  /** Same levels with the same quantities (compared as values, not text). */
  equals(other: LocalBook): boolean {
    return sameSide(this.bids, other.bids) && sameSide(this.asks, other.asks);
  }

  /** `side:price` → quantity, for verification against a REST book. */
  flatten(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const [price, level] of this.bids) out.set(`1:${price}`, level.q);
    for (const [price, level] of this.asks) out.set(`2:${price}`, level.q);
    return out;
  }

  /**
   * Sets a level to an absolute quantity as the venue spelt price and quantity; a zero quantity removes it. Throws
   * DecimalError on text that is not an exact decimal, and on a negative quantity.
   */
  setLevel(side: SideCode, price: string, quantity: string): void {
    const key = canonicalDecimal(price);
    const q = parseDecimal(quantity);
    if (q < 0n) throw new DecimalError(quantity);
    const levels = this.side(side);
    if (q === 0n) levels.delete(key);
    else levels.set(key, { q, s: quantity, e: 0, p: price });
  }

  /**
   * Adds a signed change to a level (Kalshi's `delta_fp`), formatting the new quantity with `format`. Returns false,
   * changing nothing, when the level would go below zero: the book is not the venue's any more.
   */
  addToLevel(side: SideCode, price: string, delta: string, format: (q: bigint) => string): boolean {
    const key = canonicalDecimal(price);
    const levels = this.side(side);
    const old = levels.get(key);
    const q = (old?.q ?? 0n) + parseDecimal(delta);
    if (q < 0n) return false;
    if (q === 0n) levels.delete(key);
    else levels.set(key, { q, s: format(q), e: 0, p: old?.p ?? price });
    return true;
  }

  /** A side's levels as [price, quantity] text as the venue spelt them (canonical price where it gave none). */
  pairs(side: SideCode): [string, string][] {
    return [...this.side(side)].map(([key, level]) => [level.p ?? key, level.s]);
  }

  /** The levels of a side ordered by price, ascending or descending. */
  sorted(side: SideCode, order: 'asc' | 'desc'): Level[] {
    return this.sortedEntries(side, order).map(([, level]) => level);
  }

  /** The levels of a side with their canonical prices, ordered by price (exactly: as decimals, not doubles). */
  sortedEntries(side: SideCode, order: 'asc' | 'desc'): [string, Level][] {
    const entries = [...this.side(side)].map(([key, level]) => [parseDecimal(key), key, level] as const);
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) * (order === 'asc' ? 1 : -1));
    return entries.map(([, key, level]) => [key, level]);
  }
}

function sameSide(a: Map<string, Level>, b: Map<string, Level>): boolean {
  if (a.size !== b.size) return false;
  for (const [price, level] of a) {
    const other = b.get(price);
    if (other === undefined || other.q !== level.q) return false;
  }
  return true;
}
