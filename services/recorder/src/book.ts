/**
 * The recorder's own copy of one ticker's book: what lets it turn absolute sizes (Gemini) and whole books
 * (Polymarket US) into signed deltas, write full-book snapshots on its cadence, and compare its state with a venue's
 * snapshot or REST book. Prices are keys in canonical decimal text; quantities are BigInt scaled by 10^18 with the
 * text they were last given in (so an unchanged level compares as a string, without arithmetic).
 */
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
}

function sameSide(a: Map<string, Level>, b: Map<string, Level>): boolean {
  if (a.size !== b.size) return false;
  for (const [price, level] of a) {
    const other = b.get(price);
    if (other === undefined || other.q !== level.q) return false;
  }
  return true;
}
