/**
 * The worked backtest's strategy (examples/backtest.mts runs it on recorded history): a market maker quoting around
 * the microprice of the book. The same strategy and rules as the Python client's examples/backtest.py, rule for
 * rule, so both give the same fills and P&L on the same recording (services/history's python-client.int.test.ts
 * runs both and compares them):
 *
 * - **Quotes.** After each moment of the book, one bid and one ask of `size` around the microprice
 *   `(bid × ask_qty + ask × bid_qty) / (bid_qty + ask_qty)` of the best levels, `halfSpread` away, shifted against
 *   the inventory by `skew` per unit held, rounded away from the microprice to the `tick` grid, never crossing the
 *   book (a bid at most one tick under the best ask, an ask at least one tick over the best bid). No bid while long
 *   `maxInventory` or more, no ask while that short. A quote whose price does not change keeps its place; one whose
 *   price changes is cancelled and placed again (at the back of the queue). No fees, no latency: a quote rests from
 *   the moment of the book it was computed from.
 * - **Fills from the book** (`fillsFromBook`): a resting bid fills in full when the best ask comes down to its price
 *   or below — a seller then offered at or under a bid that was resting first, so it would have traded with it — and
 *   a resting ask when the best bid comes up to its price or above. Others joining our price on our side is not a
 *   fill; the queue does not matter (the other side reached our price, so it went through all of it). Optimistic
 *   where the venue's matching was partial; the trades rule is the stricter one.
 * - **Fills from trades** (`fillsFromTrade`, the history's trades: docs/history.md, "Trades"): a quote joins the back
 *   of its price level — the quantity displayed there when it was placed is ahead of it. A taker trade against our
 *   side at our price first consumes what is ahead, and the rest fills us (up to our size); a trade at a better price
 *   than ours (through us) fills us in full. Quantity cancelled at our level is assumed to have been behind us (the
 *   pessimistic reading). A trade at or before the moment the quote was placed does not reach it.
 * - **P&L**: cash from the fills plus the inventory marked at the last mid.
 *
 * Everything is exact: prices and sizes are `Decimal`s, and the microprice is kept as a quotient (numerator and
 * denominator) until it is rounded to the tick, so no division ever rounds. (Python's divides in 34 digits and
 * rounds to 28 on the way: the two round to the same tick unless the exact value lies within 10^-28 of a tick
 * boundary without being on it, which quantities of the tables' scale cannot make.)
 */
import { Decimal, type OrderBook, type Side } from '@depthgate/client';

export interface Params {
  size: Decimal;
  halfSpread: Decimal;
  tick: Decimal;
  skew: Decimal;
  maxInventory: Decimal;
}

export const DEFAULT_PARAMS: Readonly<Params> = {
  size: Decimal.parse('10'),
  halfSpread: Decimal.parse('0.01'),
  tick: Decimal.parse('0.01'),
  skew: Decimal.parse('0.0005'),
  maxInventory: Decimal.parse('50'),
};

/** A trade as the history serves it (`GET /api/{exchange}/trades/{ticker}`), `ts` in epoch ms. */
export interface Trade {
  ts: number;
  tradeId: string;
  price: Decimal;
  size: Decimal;
  /** The taker's side: `buy` lifted an ask, `sell` hit a bid. */
  side: 'buy' | 'sell';
}

export interface Quote {
  side: Side;
  price: Decimal;
  size: Decimal;
  /** Epoch ms of the book it was placed on. */
  placed: number;
  /** The quantity displayed at our price when the quote was placed: the queue ahead of it. */
  ahead: Decimal;
}

export interface Fill {
  /** Epoch ms. */
  ts: number;
  /** Ours: `buy` (our bid filled) or `sell`. */
  side: 'buy' | 'sell';
  price: Decimal;
  size: Decimal;
  /** The inventory after this fill. */
  inventory: Decimal;
  rule: string;
}

/** An exact quotient `num / den` (den > 0). */
export class Quotient {
  readonly num: Decimal;
  readonly den: Decimal;

  constructor(num: Decimal, den: Decimal) {
    if (den.sign() <= 0) throw new RangeError('a quotient needs a positive denominator');
    this.num = num;
    this.den = den;
  }

  /** This minus `d`. */
  sub(d: Decimal): Quotient {
    return new Quotient(this.num.sub(d.mul(this.den)), this.den);
  }

  add(d: Decimal): Quotient {
    return this.sub(d.neg());
  }

  /** The largest multiple of `tick` at or below this. */
  floorTo(tick: Decimal): Decimal {
    return this.roundTo(tick, 'floor');
  }

  /** The smallest multiple of `tick` at or above this. */
  ceilTo(tick: Decimal): Decimal {
    return this.roundTo(tick, 'ceil');
  }

  /** Equal by value to `d`. */
  eq(d: Decimal): boolean {
    return this.num.eq(d.mul(this.den));
  }

  private roundTo(tick: Decimal, way: 'floor' | 'ceil'): Decimal {
    if (tick.sign() <= 0) throw new RangeError('the tick must be positive');
    // num / (den × tick) in integers of one scale, rounded the given way (BigInt division truncates toward zero).
    const by = this.den.mul(tick);
    const scale = Math.max(this.num.scale, by.scale);
    const a = this.num.units * 10n ** BigInt(scale - this.num.scale);
    const b = by.units * 10n ** BigInt(scale - by.scale);
    let q = a / b;
    if (a % b !== 0n) {
      if (way === 'floor' && a < 0n) q -= 1n;
      if (way === 'ceil' && a > 0n) q += 1n;
    }
    return Decimal.of(q * tick.units, tick.scale);
  }
}

/** The best levels' microprice, exactly, or undefined when a side is empty. */
export function microprice(book: OrderBook): Quotient | undefined {
  const { bid, ask } = book.best();
  if (bid === undefined || ask === undefined) return undefined;
  const bidQty = Decimal.parse(bid.quantity);
  const askQty = Decimal.parse(ask.quantity);
  const num = Decimal.parse(bid.price).mul(askQty).add(Decimal.parse(ask.price).mul(bidQty));
  return new Quotient(num, bidQty.add(askQty));
}

export class MarketMaker {
  inventory = Decimal.ZERO;
  cash = Decimal.ZERO;
  bid: Quote | undefined;
  ask: Quote | undefined;
  readonly fills: Fill[] = [];
  lastMid: Decimal | undefined;
  /** Moments of the book seen, and quotes placed (a new price). */
  books = 0;
  requotes = 0;

  readonly params: Params;

  constructor(params: Params = DEFAULT_PARAMS) {
    this.params = params;
  }

  /** Our quote traded `size` at its price. */
  fill(quote: Quote, ts: number, size: Decimal, rule: string): void {
    const notional = size.mul(quote.price);
    if (quote.side === 'bid') {
      this.inventory = this.inventory.add(size);
      this.cash = this.cash.sub(notional);
    } else {
      this.inventory = this.inventory.sub(size);
      this.cash = this.cash.add(notional);
    }
    const side = quote.side === 'bid' ? 'buy' : 'sell';
    this.fills.push({ ts, side, price: quote.price, size, inventory: this.inventory, rule });
    const rest = quote.size.sub(size);
    const remaining = rest.sign() > 0 ? { ...quote, size: rest, ahead: Decimal.ZERO } : undefined;
    if (quote.side === 'bid') this.bid = remaining;
    else this.ask = remaining;
  }

  /** Fills from the book: a resting quote fills in full when the other side's best price reaches it. */
  fillsFromBook(ts: number, book: OrderBook): void {
    const best = book.best();
    if (this.bid !== undefined && best.ask !== undefined && this.bid.price.gte(best.ask.price)) {
      this.fill(this.bid, ts, this.bid.size, 'the other side reached our price');
    }
    if (this.ask !== undefined && best.bid !== undefined && this.ask.price.lte(best.bid.price)) {
      this.fill(this.ask, ts, this.ask.size, 'the other side reached our price');
    }
  }

  /**
   * Fills from trades: a taker sell fills our bid (a taker buy our ask) after the queue ahead of us, or in full when
   * it trades through our price.
   */
  fillsFromTrade(trade: Trade): void {
    const quote = trade.side === 'sell' ? this.bid : this.ask;
    if (quote === undefined || trade.ts <= quote.placed) return;
    const better = quote.side === 'bid' ? trade.price.lt(quote.price) : trade.price.gt(quote.price);
    if (better) {
      this.fill(quote, trade.ts, quote.size, 'trade through our price');
      return;
    }
    if (!trade.price.eq(quote.price)) return;
    const left = trade.size.sub(quote.ahead);
    if (left.sign() <= 0) {
      // The trade only took (part of) the queue ahead of us.
      const moved = { ...quote, ahead: quote.ahead.sub(trade.size) };
      if (quote.side === 'bid') this.bid = moved;
      else this.ask = moved;
      return;
    }
    this.fill(quote, trade.ts, left.lt(quote.size) ? left : quote.size, 'trade at our price, queue ahead consumed');
  }

  /** New quotes from the book at `ts` (see the rules above). */
  requote(ts: number, book: OrderBook): void {
    this.books++;
    const p = this.params;
    const micro = microprice(book);
    const best = book.best();
    const mid = book.mid();
    if (mid !== undefined) this.lastMid = Decimal.parse(mid);
    if (micro === undefined || best.bid === undefined || best.ask === undefined) {
      this.bid = this.ask = undefined;
      return;
    }
    const centre = micro.sub(p.skew.mul(this.inventory));
    const underAsk = Decimal.parse(best.ask.price).sub(p.tick);
    const overBid = Decimal.parse(best.bid.price).add(p.tick);
    let bidPrice = centre.sub(p.halfSpread).floorTo(p.tick);
    let askPrice = centre.add(p.halfSpread).ceilTo(p.tick);
    if (bidPrice.gt(underAsk)) bidPrice = underAsk;
    if (askPrice.lt(overBid)) askPrice = overBid;
    this.bid =
      this.inventory.lt(p.maxInventory) && bidPrice.sign() > 0 ? this.place('bid', bidPrice, ts, book) : undefined;
    this.ask = this.inventory.gt(p.maxInventory.neg()) ? this.place('ask', askPrice, ts, book) : undefined;
  }

  private place(side: Side, price: Decimal, ts: number, book: OrderBook): Quote {
    const current = side === 'bid' ? this.bid : this.ask;
    if (current !== undefined && current.price.eq(price)) {
      // Same price: the quote keeps its place in the queue (topped up to full size after a partial fill).
      return current.size.eq(this.params.size) ? current : { ...current, size: this.params.size };
    }
    this.requotes++;
    const shown = book.quantityAt(side, price.toString());
    return {
      side,
      price,
      size: this.params.size,
      placed: ts,
      ahead: shown === undefined ? Decimal.ZERO : Decimal.parse(shown),
    };
  }

  /** Cash plus the inventory marked at the last mid; undefined before any two-sided book. */
  pnl(): Decimal | undefined {
    return this.lastMid === undefined ? undefined : this.cash.add(this.inventory.mul(this.lastMid));
  }
}
