import type { Rng } from '../core/rng';
import { type BookSide, OrderBook } from './order-book';
import { ASK, BID, type Instrument, NO_TRADES, type RestingOrder, type Side, type Trade } from './types';

type Touch = (side: Side, price: number, qty: number) => void;

/**
 * The moving-book process of one instrument: a bounded random walk of the mid price, with levels appearing,
 * resizing and disappearing around it. Pure function of its Rng: the same seed replays the same changes.
 *
 * Every step keeps the book sane: best bid < best ask, prices on the tick grid inside [minPrice, maxPrice], at most
 * `maxLevels` per side, at least one level per side, quantities positive multiples of one lot. An account's resting
 * order (`inst.resting`) stays in its level: the level never holds less than the order, and is never traded through.
 *
 * Trades are explicit: a taker order walks the best levels of one side, and each level it meets loses what it fills
 * there (`trades`, numbered per instrument). A trading step is an event of its own, so the event's changes at the
 * traded levels are exactly the fills.
 */
export class BookGenerator {
  readonly book = new OrderBook();
  private readonly pending = new Map<number, { side: Side; price: number; before: number }>();
  /** Quantity queued ahead of the resting order at its level. */
  private ahead = 0;
  /** The fills of the last `next()` (a fresh array only when it traded). */
  trades: readonly Trade[] = NO_TRADES;
  /** Number of the last trade made. */
  tradeNo = 0;

  constructor(
    readonly inst: Instrument,
    private readonly rng: Rng,
  ) {
    this.initialise();
  }

  /** The account's resting order and the quantity ahead of it in its level's queue, if the book has one. */
  get resting(): (RestingOrder & { ahead: number }) | undefined {
    return this.inst.resting ? { ...this.inst.resting, ahead: this.ahead } : undefined;
  }

  /** Sets a level, never below the resting order's quantity at its price; keeps the queue ahead of it. */
  private setLevel(side: Side, price: number, qty: number): void {
    const r = this.inst.resting;
    if (r?.side !== side || r.price !== price) {
      this.book.sideOf(side).set(price, qty);
      return;
    }
    const level = Math.max(qty, r.qty);
    this.book.sideOf(side).set(price, level);
    this.ahead = Math.min(this.ahead, level - r.qty);
  }

  private initialise(): void {
    const { inst, rng } = this;
    const t = inst.tick;
    const jitter = rng.range(-3, 3) * t;
    const mid = clamp(snap(inst.initialMid + jitter, t), inst.minPrice + t, inst.maxPrice - t);
    const spread = rng.range(1, 3);
    let bid = clamp(mid - Math.floor(spread / 2) * t, inst.minPrice, inst.maxPrice - t);
    let ask = clamp(bid + spread * t, bid + t, inst.maxPrice);
    for (let i = 0; i < inst.initialLevels && bid >= inst.minPrice; i++) {
      this.book.bids.set(bid, this.randomQty());
      bid -= rng.range(1, Math.max(1, Math.floor(inst.window / 4))) * t;
    }
    for (let i = 0; i < inst.initialLevels && ask <= inst.maxPrice; i++) {
      this.book.asks.set(ask, this.randomQty());
      ask += rng.range(1, Math.max(1, Math.floor(inst.window / 4))) * t;
    }
    const r = inst.resting;
    if (r) {
      // Placed before the book starts: whatever already rests at its price is ahead of it; nothing crosses it.
      const own = this.book.sideOf(r.side);
      const other = this.book.sideOf(r.side === BID ? ASK : BID);
      this.ahead = own.get(r.price);
      own.set(r.price, this.ahead + r.qty);
      for (let p = other.best(); p !== undefined && (r.side === BID ? p <= r.price : p >= r.price); p = other.best()) {
        other.set(p, 0);
      }
      this.trim(own, r.side, (side, price, qty) => this.setLevel(side, price, qty));
    }
  }

  randomQty(): number {
    const { inst, rng } = this;
    let q = rng.range(inst.minUnits, inst.maxUnits) * inst.unit;
    if (inst.unit > 1 && inst.fractionalPercent > 0 && rng.percent(inst.fractionalPercent)) {
      q += rng.range(1, inst.unit - 1);
    }
    return Math.max(q, 1);
  }

  /**
   * Advances the process until at least `minChanges` distinct levels changed; returns them flattened as
   * `[side, price, newQty, delta, ...]` (one entry per level, in the order first touched). When the first step is a
   * taker's, the event is that step alone (fewer changes, perhaps) and `trades` holds its fills; later steps of an
   * event never trade (a drawn taker step resizes instead), so no other step touches a traded level.
   */
  next(minChanges: number): number[] {
    this.pending.clear();
    this.trades = NO_TRADES;
    const order: number[] = [];
    const touch: Touch = (side, price, qty) => {
      const key = side === BID ? price : -price - 1;
      const s = this.book.sideOf(side);
      if (!this.pending.has(key)) {
        this.pending.set(key, { side, price, before: s.get(price) });
        order.push(key);
      }
      this.setLevel(side, price, qty);
    };
    let changed = 0;
    for (let attempt = 0; attempt < 64 && changed < minChanges; attempt++) {
      this.step(touch, attempt === 0);
      if (this.trades.length > 0) break;
      changed = 0;
      for (const key of order) {
        const p = this.pending.get(key);
        if (p && this.book.sideOf(p.side).get(p.price) !== p.before) changed++;
      }
    }
    const out: number[] = [];
    for (const key of order) {
      const p = this.pending.get(key);
      if (!p) continue;
      const now = this.book.sideOf(p.side).get(p.price);
      if (now !== p.before) out.push(p.side, p.price, now, now - p.before);
    }
    return out;
  }

  /** One step of the process: resize 40 %, a taker order 5 %, a new level 20 %, a cancel 17 %, a mid move 18 %. */
  private step(touch: Touch, mayTrade: boolean): void {
    const { book, rng } = this;
    if (book.bids.size === 0) return this.addLevel(BID, touch);
    if (book.asks.size === 0) return this.addLevel(ASK, touch);
    const r = rng.int(100);
    const side: Side = rng.int(2) === 0 ? BID : ASK;
    if (r < 40) return this.resize(side, touch);
    if (r < 45) return mayTrade ? this.taker(side, touch) : this.resize(side, touch);
    if (r < 65) return this.addLevel(side, touch);
    if (r < 82) {
      const s = book.sideOf(side);
      if (s.size <= 1) return this.resize(side, touch);
      const price = s.prices[rng.int(s.size)] as number;
      return touch(side, price, 0);
    }
    return mayTrade ? this.move(side === BID ? 1 : -1, touch) : this.resize(side, touch);
  }

  /**
   * A taker order against the resting side `makerSide` (BID: a seller hits the bids), of up to 1.5 times the best
   * level's size: when larger than that level it walks into the next one.
   */
  private taker(makerSide: Side, touch: Touch): void {
    const s = this.book.sideOf(makerSide);
    if (s.size <= 1) return this.resize(makerSide, touch);
    const best = s.get(s.best() as number);
    const unit = this.wholeUnits ? this.inst.unit : 1;
    const qty = Math.max(unit, Math.floor((best * this.rng.range(10, 150)) / 100 / unit) * unit);
    this.take(makerSide, qty, touch);
  }

  /** Sizes of this instrument are whole units only (no fractional sizes): fills keep them so. */
  private get wholeUnits(): boolean {
    return this.inst.fractionalPercent === 0;
  }

  /**
   * Fills a taker order of `qty` against the best levels of `makerSide`, best first; each level loses its fill and
   * each fill is a trade. It stops at the account's resting order (never traded, never traded through) and never
   * empties a side (the last level keeps at least one unit).
   */
  private take(makerSide: Side, qty: number, touch: Touch): void {
    const s = this.book.sideOf(makerSide);
    const r = this.inst.resting;
    const unit = this.wholeUnits ? this.inst.unit : 1;
    let left = qty;
    while (left > 0 && s.size > 0) {
      const price = s.prices[0] as number;
      const level = s.get(price);
      const own = r?.side === makerSide && r.price === price ? r.qty : 0;
      const cap = s.size === 1 ? level - unit : level;
      const fill = Math.min(left, cap - own);
      if (fill <= 0) return;
      touch(makerSide, price, level - fill);
      this.fill(makerSide === BID ? ASK : BID, price, fill);
      left -= fill;
      if (own > 0 || fill < level) return;
    }
  }

  private fill(takerSide: Side, price: number, size: number): void {
    const trade: Trade = { no: ++this.tradeNo, takerSide, price, size };
    if (this.trades === NO_TRADES) this.trades = [trade];
    else (this.trades as Trade[]).push(trade);
  }

  private resize(side: Side, touch: Touch): void {
    const s = this.book.sideOf(side);
    if (s.size === 0) return this.addLevel(side, touch);
    const price = s.prices[this.rng.int(s.size)] as number;
    let qty = this.randomQty();
    if (qty === s.get(price)) qty += this.inst.unit;
    touch(side, price, qty);
  }

  /** A new level: inside the spread sometimes, else up to `window` ticks behind the best price. */
  private addLevel(side: Side, touch: Touch): void {
    const { inst, rng, book } = this;
    const t = inst.tick;
    const s = book.sideOf(side);
    const bestBid = book.bids.best();
    const bestAsk = book.asks.best();
    let price: number | undefined;
    if (bestBid !== undefined && bestAsk !== undefined && bestAsk - bestBid > t && rng.percent(30)) {
      price = bestBid + rng.range(1, (bestAsk - bestBid) / t - 1) * t;
    } else {
      const anchor = s.best() ?? (side === BID ? (bestAsk ?? inst.initialMid) - t : (bestBid ?? inst.initialMid) + t);
      const away = (s.size === 0 ? 0 : rng.range(1, inst.window)) * t;
      price = side === BID ? anchor - away : anchor + away;
    }
    if (price < inst.minPrice || price > inst.maxPrice) return this.resize(side, touch);
    if (side === BID && bestAsk !== undefined && price >= bestAsk) return this.resize(side, touch);
    if (side === ASK && bestBid !== undefined && price <= bestBid) return this.resize(side, touch);
    if (s.get(price) !== 0) return touch(side, price, s.get(price) + this.inst.unit);
    touch(side, price, this.randomQty());
    this.trim(s, side, touch);
  }

  /**
   * The mid-price walk: a taker consumes the best level on one side (but the account's order in it) and the other
   * side steps into the gap, so the mid moves by at least one tick in direction `dir` (+1 up, -1 down), never
   * leaving [minPrice, maxPrice].
   */
  private move(dir: 1 | -1, touch: Touch): void {
    const { inst, rng, book } = this;
    const t = inst.tick;
    const consumed = dir === 1 ? book.asks : book.bids;
    const advancing = dir === 1 ? book.bids : book.asks;
    const advSide: Side = dir === 1 ? BID : ASK;
    if (consumed.size <= 1) return this.resize(consumed.side, touch);
    this.take(consumed.side, consumed.get(consumed.best() as number), touch);
    const wall = consumed.best() as number;
    const from = advancing.best() as number;
    const room = Math.abs(wall - from) / t - 1;
    if (room >= 1) {
      const price = from + dir * rng.range(1, Math.min(room, Math.max(1, Math.floor(inst.window / 2)))) * t;
      touch(advSide, price, this.randomQty());
      this.trim(advancing, advSide, touch);
    }
  }

  /** Drops the worst levels beyond `maxLevels` (never the resting order's: the next worse one goes instead). */
  private trim(s: BookSide, side: Side, touch: Touch): void {
    const r = this.inst.resting;
    const kept = r?.side === side ? r.price : undefined;
    while (s.size > this.inst.maxLevels) {
      const worst = s.prices.findLast((p) => p !== kept);
      if (worst === undefined) return;
      touch(side, worst, 0);
    }
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(Math.max(v, lo), hi);
}

function snap(v: number, tick: number): number {
  return Math.round(v / tick) * tick;
}
