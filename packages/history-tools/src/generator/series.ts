/**
 * One ticker's generated history: a book that evolves message by message, written as snapshot rows on a cadence
 * and delta rows between them, and the trades that took liquidity from it.
 *
 * Invariants (tested in series.test.ts):
 * - the snapshot at T is the book after every delta with ts < T; deltas at ts ≥ T come after it, so the snapshot at
 *   T plus the deltas with T ≤ ts < T' reproduce the snapshot at T' exactly (the spec's rule 7 read literally);
 * - `sequence` increases strictly, by one per row, over the deltas and the trades together (the ticker's counter, as
 *   the recorder keeps it); the rows of one message share a ts;
 * - trades agree with the book: a trade takes liquidity at a level of the book's top that the next delta (the next
 *   sequence, same ts) reduces by exactly the trade's size — the whole level when the fair price moved through it, a
 *   part of it when the top level shrinks — so a trade never takes more than its level holds; a taker buying lifts an
 *   ask (`buy`), one selling hits a bid (`sell`). Whether a reduction of the top is a trade is drawn from a stream of
 *   its own, so adding trades left every book row as it was (their sequences aside);
 * - no delta is zero; a level's size never goes below zero and a removal subtracts exactly what was there;
 * - the book is never crossed (best bid < best ask);
 * - every row has a receive time (`received_ts`): its ts plus a seeded latency (a few ms to a few hundred, drawn per
 *   message from a stream of its own, so the rows themselves do not depend on it), never going backwards, as the
 *   recorder's monotone receive clock;
 * - everything depends only on (seed, exchange, ticker, options).
 */
import type { ExchangeKey } from '@depthgate/platforms';
import type { Side, TradeSide } from '@depthgate/history-store';
import { Rng } from '@depthgate/service-kit';
import { profileFor, tradeNames, type BookProfile } from './profiles';

export interface SeriesOptions {
  exchange: ExchangeKey;
  ticker: string;
  seed: string;
  /** First snapshot at `from` (plus a jitter below 2 s); epoch ms. */
  from: number;
  /** Nothing at or after `to`; epoch ms. */
  to: number;
  snapshotIntervalMs: number;
  /** Mean delta messages per minute (Poisson arrivals); 0 for snapshots only. */
  eventsPerMinute: number;
}

/** A generated trade (the `trade` row of a sink); amounts in integer units, as the book's. */
export interface GeneratedTrade {
  ts: number;
  sequence: number;
  /** The venue's id, in its shape: a UUID (Kalshi), an integer (Gemini), `h:` and 16 hex digits (Polymarket US). */
  tradeId: string;
  side: TradeSide;
  /** The venue's own side field (Kalshi's taker outcome side, Gemini's taker side, Polymarket's BUY/SELL). */
  venueSide: string;
  price: number;
  size: number;
  receivedTs: number;
}

/** Receives rows in time order. Amounts are integer units; `profile` says their scales. */
export interface SeriesSink {
  snapshotLevel(ts: number, side: Side, price: number, quantity: number, receivedTs: number): void;
  delta(ts: number, sequence: number, side: Side, price: number, quantityDelta: number, receivedTs: number): void;
  /** A trade (its sequence is taken whether a sink takes trades or not: the rows never depend on the sink). */
  trade?(trade: GeneratedTrade): void;
}

/** Of the reductions of a side's top level that are not a level taken whole, the share that are trades. */
const PARTIAL_FILL_SHARE = 0.5;

/** Receive latency of a generated message: at least this, plus an exponential tail of this mean, capped. */
const LATENCY_MIN_MS = 2;
const LATENCY_MEAN_MS = 25;
const LATENCY_MAX_MS = 750;

/** One side of the book: sizes by price, and the prices kept sorted best-first (at most a few dozen). */
class Levels {
  readonly sizes = new Map<number, number>();
  /** Best first: descending for bids, ascending for asks. */
  readonly prices: number[] = [];
  constructor(private readonly descending: boolean) {}

  get size(): number {
    return this.prices.length;
  }
  has(price: number): boolean {
    return this.sizes.has(price);
  }
  get(price: number): number | undefined {
    return this.sizes.get(price);
  }
  set(price: number, qty: number): void {
    if (!this.sizes.has(price)) {
      let i = 0;
      while (
        i < this.prices.length &&
        (this.descending ? (this.prices[i] as number) > price : (this.prices[i] as number) < price)
      )
        i++;
      this.prices.splice(i, 0, price);
    }
    this.sizes.set(price, qty);
  }
  delete(price: number): void {
    if (!this.sizes.delete(price)) return;
    this.prices.splice(this.prices.indexOf(price), 1);
  }
  best(): number | undefined {
    return this.prices[0];
  }
  worst(): number | undefined {
    return this.prices[this.prices.length - 1];
  }
}

type Emit = (side: Side, price: number, delta: number, traded?: boolean) => void;

export class TickerSeries {
  readonly profile: BookProfile;
  readonly options: SeriesOptions;
  private readonly rng: Rng;
  /** Receive latencies: a stream of its own, so adding it left every generated row as it was. */
  private readonly latency: Rng;
  /** Which reductions are trades, and their ids: a stream of its own too. */
  private readonly trading: Rng;
  private tradeNumber = 0;
  private receivedTs = -1;
  private readonly bids = new Levels(true);
  private readonly asks = new Levels(false);
  private fair: number;
  private sequence: number;
  private snapshotIndex = 0;
  private nextSnapshotTs: number;
  private nextEventTs: number;
  private readonly meanEventGapMs: number;
  /** Largest ts emitted so far (-1: nothing yet). */
  lastTs = -1;
  rows = 0;

  constructor(options: SeriesOptions) {
    this.options = options;
    this.profile = profileFor(options.exchange, options.ticker);
    this.rng = new Rng(options.seed, 'series', options.exchange, options.ticker);
    this.latency = new Rng(options.seed, 'latency', options.exchange, options.ticker);
    this.trading = new Rng(options.seed, 'trades', options.exchange, options.ticker);
    this.fair = this.profile.initialMid;
    this.sequence = 1 + this.rng.range(0, 999_999) * 1000;
    this.nextSnapshotTs = options.from + this.jitter();
    this.meanEventGapMs = options.eventsPerMinute > 0 ? 60_000 / options.eventsPerMinute : Infinity;
    this.nextEventTs = Number.isFinite(this.meanEventGapMs)
      ? this.nextSnapshotTs + 1 + Math.floor(this.rng.exponential(this.meanEventGapMs))
      : Infinity;
    this.seedBook();
  }

  get done(): boolean {
    return Math.min(this.nextSnapshotTs, this.nextEventTs) >= this.options.to;
  }

  /** Emits every row with ts < `until` (and < `to`) not emitted yet. Returns the number of rows emitted. */
  advance(until: number, sink: SeriesSink): number {
    const limit = Math.min(until, this.options.to);
    const before = this.rows;
    for (;;) {
      const snap = this.nextSnapshotTs;
      const event = this.nextEventTs;
      if (snap <= event) {
        if (snap >= limit) break;
        this.emitSnapshot(snap, sink);
        this.snapshotIndex++;
        this.nextSnapshotTs = this.options.from + this.snapshotIndex * this.options.snapshotIntervalMs + this.jitter();
      } else {
        if (event >= limit) break;
        this.emitEvent(event, sink);
        this.nextEventTs = event + 1 + Math.floor(this.rng.exponential(this.meanEventGapMs));
      }
    }
    return this.rows - before;
  }

  /** Levels of the current book (tests). */
  book(): { bids: ReadonlyMap<number, number>; asks: ReadonlyMap<number, number> } {
    return { bids: this.bids.sizes, asks: this.asks.sizes };
  }

  private jitter(): number {
    return this.rng.range(0, Math.min(1999, Math.floor(this.options.snapshotIntervalMs / 10)));
  }

  private seedBook(): void {
    const p = this.profile;
    for (let i = 0; i < p.depth; i++) {
      this.addLevel('bid', undefined);
      this.addLevel('ask', undefined);
    }
  }

  /** When a message stamped `ts` was received: ts plus a latency, never before the previous message's. */
  private receive(ts: number): number {
    const latency = Math.min(LATENCY_MAX_MS, LATENCY_MIN_MS + Math.floor(this.latency.exponential(LATENCY_MEAN_MS)));
    this.receivedTs = Math.max(this.receivedTs, ts + latency);
    return this.receivedTs;
  }

  private emitSnapshot(ts: number, sink: SeriesSink): void {
    const received = this.receive(ts);
    for (const [price, qty] of this.bids.sizes) sink.snapshotLevel(ts, 'bid', price, qty, received);
    for (const [price, qty] of this.asks.sizes) sink.snapshotLevel(ts, 'ask', price, qty, received);
    this.rows += this.bids.size + this.asks.size;
    if (ts > this.lastTs) this.lastTs = ts;
  }

  private emitEvent(ts: number, sink: SeriesSink): void {
    const p = this.profile;
    const step = this.rng.range(-p.fairStepTicks, p.fairStepTicks) * p.tick;
    this.fair = Math.min(p.maxPrice - p.tick, Math.max(p.minPrice + p.tick, this.fair + step));
    const changes = this.rng.range(p.changesPerEvent[0], p.changesPerEvent[1]);
    const received = this.receive(ts);
    /** A change of a level; `traded`: a taker took `-delta` of it (a reduction of a side's top) just before. */
    const emit = (side: Side, price: number, delta: number, traded = false) => {
      if (delta === 0) return;
      if (traded && delta < 0) this.emitTrade(ts, side, price, -delta, received, sink);
      sink.delta(ts, this.sequence++, side, price, delta, received);
      this.rows++;
      if (ts > this.lastTs) this.lastTs = ts;
    };
    for (let c = 0; c < changes; c++) {
      const side: Side = this.rng.chance(0.5) ? 'bid' : 'ask';
      const levels = side === 'bid' ? this.bids : this.asks;
      // Depth hovers around the profile's target: adding is likelier below it, removing above it.
      const below = levels.size < p.depth;
      const addP = below ? 0.3 : 0.12;
      const removeP = below ? 0.1 : 0.28;
      const r = this.rng.float();
      if (levels.size < p.levels[0] || r < addP) {
        const added = this.addLevel(side, emit);
        if (added && levels.size > p.levels[1]) this.removeLevel(side, this.farthest(side), emit);
      } else if (r < addP + removeP) {
        this.removeLevel(side, this.randomLevel(side), emit);
      } else if (r < addP + removeP + 0.08) {
        // The fair price moved through the top of a side: that level was taken.
        const bestAsk = this.best('ask');
        const bestBid = this.best('bid');
        if (bestAsk !== undefined && bestAsk <= this.fair && this.asks.size > p.levels[0]) {
          this.removeLevel('ask', bestAsk, emit, true);
        } else if (bestBid !== undefined && bestBid >= this.fair && this.bids.size > p.levels[0]) {
          this.removeLevel('bid', bestBid, emit, true);
        } else {
          this.modifyLevel(side, emit);
        }
      } else {
        this.modifyLevel(side, emit);
      }
    }
  }

  private best(side: Side): number | undefined {
    return (side === 'bid' ? this.bids : this.asks).best();
  }

  private farthest(side: Side): number | undefined {
    return (side === 'bid' ? this.bids : this.asks).worst();
  }

  /** A level, more often one near the top of the book. */
  private randomLevel(side: Side): number | undefined {
    const levels = side === 'bid' ? this.bids : this.asks;
    if (levels.size === 0) return undefined;
    const index = Math.min(levels.size - 1, Math.floor(this.rng.exponential(levels.size / 3)));
    return levels.prices[index];
  }

  private quantity(): number {
    const p = this.profile;
    // Log-uniform sizes: many small levels, a few large ones.
    const x = p.qtyMin * Math.pow(p.qtyMax / p.qtyMin, this.rng.float() ** 2);
    return Math.max(p.qtyStep, Math.round(x / p.qtyStep) * p.qtyStep);
  }

  private addLevel(side: Side, emit: Emit | undefined): boolean {
    const p = this.profile;
    const own = side === 'bid' ? this.bids : this.asks;
    const otherBest = this.best(side === 'bid' ? 'ask' : 'bid');
    for (let attempt = 0; attempt < 6; attempt++) {
      const gap =
        p.levelGapTicks[0] +
        Math.floor(this.rng.exponential((own.size + 1) / 4) * (p.levelGapTicks[1] - p.levelGapTicks[0] + 1));
      let price = side === 'bid' ? this.fair - gap * p.tick : this.fair + gap * p.tick;
      price = Math.round(price / p.tick) * p.tick;
      if (price < p.minPrice || price > p.maxPrice || own.has(price)) continue;
      if (otherBest !== undefined && (side === 'bid' ? price >= otherBest : price <= otherBest)) continue;
      const qty = this.quantity();
      own.set(price, qty);
      emit?.(side, price, qty);
      return true;
    }
    return false;
  }

  private modifyLevel(side: Side, emit: Emit): void {
    const price = this.randomLevel(side);
    if (price === undefined) return;
    const p = this.profile;
    const levels = side === 'bid' ? this.bids : this.asks;
    const old = levels.get(price) as number;
    let next = Math.round((old * (0.3 + this.rng.float() * 1.4)) / p.qtyStep) * p.qtyStep;
    next = Math.min(p.qtyMax, Math.max(p.qtyStep, next));
    if (next === old) next = old + p.qtyStep;
    // A smaller top level: a taker took part of it, or its maker cancelled part (drawn apart from the book).
    const traded = next < old && price === levels.best() && this.trading.chance(PARTIAL_FILL_SHARE);
    levels.set(price, next);
    emit(side, price, next - old, traded);
  }

  private removeLevel(side: Side, price: number | undefined, emit: Emit, traded = false): void {
    if (price === undefined) return;
    const levels = side === 'bid' ? this.bids : this.asks;
    const old = levels.get(price);
    if (old === undefined) return;
    levels.delete(price);
    emit(side, price, -old, traded);
  }

  /** A trade that took `size` at (side, price): the taker bought from the asks or sold to the bids. */
  private emitTrade(ts: number, side: Side, price: number, size: number, received: number, sink: SeriesSink): void {
    const taker: TradeSide = side === 'ask' ? 'buy' : 'sell';
    const n = this.tradeNumber++;
    const names = tradeNames(this.options.exchange);
    const tradeId = names.tradeId(this.trading, n);
    const venueSide = names.venueSide(taker);
    sink.trade?.({ ts, sequence: this.sequence++, tradeId, side: taker, venueSide, price, size, receivedTs: received });
    this.rows++;
  }
}

/** Expected rows of one series, for progress and for solving `--rows`. */
export function expectedRows(options: Omit<SeriesOptions, 'seed'>): { snapshots: number; deltas: number } {
  const p = profileFor(options.exchange, options.ticker);
  const span = Math.max(0, options.to - options.from);
  const books = Math.ceil(span / options.snapshotIntervalMs);
  const depth = p.depth;
  const changes = (p.changesPerEvent[0] + p.changesPerEvent[1]) / 2;
  return {
    snapshots: Math.round(books * depth * 2 * 0.9),
    deltas: Math.round((span / 60_000) * options.eventsPerMinute * changes * 0.96),
  };
}
