/** The order-book vocabulary shared by every simulated platform. Prices are ticks, quantities lots (see decimal.ts). */

/**
 * A platform whose order books move: its neutral key (`venue-b`), as its simulator module declares `book`
 * (platforms/platform.ts). The engine keeps one partition per such platform.
 */
export type BookPlatform = string;

export const BID = 0;
export const ASK = 1;
export type Side = typeof BID | typeof ASK;

/** A level as [price, quantity], scaled integers. */
export type IntLevel = [number, number];

export interface IntBook {
  /** Best first: highest price first. */
  bids: IntLevel[];
  /** Best first: lowest price first. */
  asks: IntLevel[];
}

/**
 * A fill the book's process made: a taker order met a resting level at `price` for `size`, and the level lost exactly
 * that size in the same event (its change in `BookEvent.changes`).
 */
export interface Trade {
  /** Per (platform, ticker), 1-based, without gaps. */
  no: number;
  /** The taker's side: BID when the taker bought (it consumed asks), ASK when it sold (it consumed bids). */
  takerSide: Side;
  /** Price units. */
  price: number;
  /** Quantity units. */
  size: number;
}

/** A trade with its event's time and number: what the engine retains and lists. */
export interface TimedTrade extends Trade {
  ts: number;
  /** The event (`BookEvent.seq`) that made it. */
  seq: number;
}

/** What an event without trades carries (shared: an event allocates nothing for trades it did not make). */
export const NO_TRADES: readonly Trade[] = Object.freeze([]);

/**
 * One emitted book event: every level it changed, flattened as quadruples
 * `[side, price, newQuantity, delta, side, price, ...]` to keep a long history cheap, and the trades it made.
 */
export interface BookEvent {
  /** Per (platform, ticker), 1-based, without gaps. */
  seq: number;
  /** Epoch milliseconds; non-decreasing per ticker. */
  ts: number;
  changes: number[];
  /**
   * The fills of the taker order this event is (in the order it met the levels), or none. A trading event is the
   * taker's walk alone (and what its own step placed on the other side), so at each traded level the change's delta
   * is exactly minus the sizes traded there.
   */
  trades: readonly Trade[];
}

export interface Instrument {
  platform: BookPlatform;
  ticker: string;
  /** Digits after the point of a price on the wire. */
  priceDecimals: number;
  /** Digits after the point of a quantity on the wire. */
  qtyDecimals: number;
  /** Price grid step, in price units (10^-priceDecimals). */
  tick: number;
  /** Inclusive price bounds, in price units. */
  minPrice: number;
  maxPrice: number;
  /** Mid price the process starts from, in price units. */
  initialMid: number;
  /** Levels kept per side at most. */
  maxLevels: number;
  /** Levels per side at start. */
  initialLevels: number;
  /** How far from the best price (in ticks) new levels appear. */
  window: number;
  /** Sizes: a whole number of `unit` lots in [minUnits, maxUnits], plus a fraction of a unit `fractionalPercent`% of the time. */
  unit: number;
  minUnits: number;
  maxUnits: number;
  fractionalPercent: number;
  /** An order of the simulated account resting in this book (see `RestingOrder`). */
  resting?: RestingOrder;
}

/**
 * A limit order of the simulated account resting in a book, part of its level's public size: the level at its price
 * always holds at least its quantity (the rest is other traders'), and the book's process never trades through it.
 * Time priority: the level's other quantity when the book starts is queued ahead of it, what joins later queues
 * behind it, and the quantity ahead of it never exceeds the level's other quantity (it only shrinks).
 */
export interface RestingOrder {
  side: Side;
  /** Price units. */
  price: number;
  /** Quantity units. */
  qty: number;
}
