import { ASK, BID, type IntBook, type IntLevel, type Side } from './types';

/** One side of a book: levels kept sorted best-first; small (tens of levels), so arrays beat trees here. */
export class BookSide {
  /** Prices, best first. */
  readonly prices: number[] = [];
  private readonly sizes = new Map<number, number>();

  constructor(readonly side: Side) {}

  get size(): number {
    return this.prices.length;
  }

  best(): number | undefined {
    return this.prices[0];
  }

  worst(): number | undefined {
    return this.prices[this.prices.length - 1];
  }

  get(price: number): number {
    return this.sizes.get(price) ?? 0;
  }

  /** `a` comes before `b` (is better). */
  private better(a: number, b: number): boolean {
    return this.side === BID ? a > b : a < b;
  }

  private indexFor(price: number): number {
    let lo = 0;
    let hi = this.prices.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.better(this.prices[mid] as number, price)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Sets the quantity at a price (0 removes the level); returns the previous quantity. */
  set(price: number, qty: number): number {
    const old = this.sizes.get(price) ?? 0;
    if (qty === 0) {
      if (old !== 0) {
        this.sizes.delete(price);
        this.prices.splice(this.indexFor(price), 1);
      }
    } else {
      if (old === 0) this.prices.splice(this.indexFor(price), 0, price);
      this.sizes.set(price, qty);
    }
    return old;
  }

  levels(limit = Infinity): IntLevel[] {
    const n = Math.min(limit, this.prices.length);
    const out: IntLevel[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const p = this.prices[i] as number;
      out[i] = [p, this.sizes.get(p) as number];
    }
    return out;
  }

  clear(): void {
    this.prices.length = 0;
    this.sizes.clear();
  }
}

export class OrderBook {
  readonly bids = new BookSide(BID);
  readonly asks = new BookSide(ASK);

  sideOf(side: Side): BookSide {
    return side === BID ? this.bids : this.asks;
  }

  /** Applies flattened changes `[side, price, newQty, delta, ...]`. */
  applyChanges(changes: readonly number[]): void {
    for (let i = 0; i < changes.length; i += 4) {
      this.sideOf(changes[i] as Side).set(changes[i + 1] as number, changes[i + 2] as number);
    }
  }

  snapshot(): IntBook {
    return { bids: this.bids.levels(), asks: this.asks.levels() };
  }

  load(book: IntBook): void {
    this.bids.clear();
    this.asks.clear();
    for (const [p, q] of book.bids) this.bids.set(p, q);
    for (const [p, q] of book.asks) this.asks.set(p, q);
  }

  static from(book: IntBook): OrderBook {
    const b = new OrderBook();
    b.load(book);
    return b;
  }
}
