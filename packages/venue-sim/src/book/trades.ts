import type { OrderBook } from './order-book';
import { ASK, BID, type BookEvent, type Side } from './types';

/** A fill the simulator derives from a book event: a resting level at the top of the book was reduced. */
export interface DerivedTrade {
  /** The resting (maker) side: BID when a seller hit the best bid. */
  makerSide: Side;
  price: number;
  size: number;
}

/**
 * The trades a book event stands for, for feeds whose platforms publish trades (Kalshi `trade`, Coinbase
 * `matches`/`ticker`): the engine moves books without orders, so a reduction of the best level of a side, as it was
 * before the event, is read as a fill of the reduced size at that price. Other changes are order placements and
 * cancels. `book` is the book after the event (the engine calls feeds after applying it).
 */
export function derivedTrades(event: BookEvent, book: OrderBook): DerivedTrade[] {
  const ch = event.changes;
  const out: DerivedTrade[] = [];
  for (const side of [BID, ASK] as const) {
    const added = new Set<number>();
    let removedBest: number | undefined;
    const better = (a: number, b: number) => (side === BID ? a > b : a < b);
    for (let i = 0; i < ch.length; i += 4) {
      if (ch[i] !== side) continue;
      const price = ch[i + 1] as number;
      const now = ch[i + 2] as number;
      const before = now - (ch[i + 3] as number);
      if (before === 0) added.add(price);
      else if (now === 0 && (removedBest === undefined || better(price, removedBest))) removedBest = price;
    }
    // The best price before the event: the best level still there that the event did not add, or a removed one.
    let best = book.sideOf(side).prices.find((p) => !added.has(p));
    if (removedBest !== undefined && (best === undefined || better(removedBest, best))) best = removedBest;
    if (best === undefined) continue;
    for (let i = 0; i < ch.length; i += 4) {
      const delta = ch[i + 3] as number;
      if (ch[i] === side && ch[i + 1] === best && delta < 0) out.push({ makerSide: side, price: best, size: -delta });
    }
  }
  return out;
}
