import { Rng } from '../core/rng';
import { BookGenerator } from './generator';
import { TickerHistory } from './history';
import type { OrderBook } from './order-book';
import type { BookEvent, BookPlatform, Instrument, IntBook, RestingOrder, TimedTrade, Trade } from './types';

/** Read access to a ticker's retained trades (book/history.ts `TickerHistory`). */
export interface TradeReader {
  readonly firstTradeNo: number;
  readonly lastTradeNo: number;
  trade(no: number): TimedTrade | undefined;
  tradeNoAtOrAfter(ts: number): number;
}

export type BookListener = (inst: Instrument, event: BookEvent, book: OrderBook) => void;

export interface EngineOptions {
  seed: number;
  /** Book updates per second across every moving ticker; 0 = only `step()` moves books. */
  updatesPerSecond: number;
  /** Distinct levels changed per update, per platform. */
  changesPerUpdate: Record<BookPlatform, number>;
  /** Platforms whose books move; the others keep their initial book. */
  moving: ReadonlySet<BookPlatform>;
  /** How long emitted events stay available to `bookAt` and `events`. */
  retentionMs: number;
  /** At most this many retained events across all tickers (split evenly). */
  maxRetainedEvents?: number;
  clock: () => number;
  /** Reports an exception thrown by a listener (the loop keeps going). */
  onListenerError?: (err: unknown) => void;
  startPaused?: boolean;
}

interface Entry {
  inst: Instrument;
  gen: BookGenerator;
  history: TickerHistory;
  seq: number;
  lastTs: number;
  /** The last trade made, kept beyond the retention (a feed's "last trade" outlives it). */
  lastTrade: TimedTrade | undefined;
  /** Every trade since the engine started, summed up (`tradeStats`). */
  stats: TradeStats;
}

/**
 * A ticker's trades since the engine started, summed up as a venue's market statistics report them (Polymarket US
 * `stats`): the quantity traded, and the highest and lowest prices traded (undefined before the first trade).
 * Updated with each event before its listeners run, so a message built for an event counts that event's trades.
 */
export interface TradeStats {
  /** Quantity units (10^-qtyDecimals), summed over every trade (a bigint: the sum outgrows a safe integer). */
  volume: bigint;
  /** Price units. */
  high: number | undefined;
  low: number | undefined;
}

const CHECKPOINT_EVERY = 512;
const CHECKPOINT_EVERY_MS = 1000;
const MAX_TIMER_MS = 20;

/**
 * Drives every book process from one scheduler loop (never a timer per ticker). Each update picks a ticker with a
 * seeded generator and advances its process; listeners (the feeds) receive the event synchronously, in the same
 * turn that changed the book, so REST and feed never disagree.
 */
export class BookEngine {
  private readonly entries: Entry[] = [];
  private readonly byKey = new Map<string, Entry>();
  private readonly movingEntries: Entry[] = [];
  private readonly listeners = new Map<BookPlatform, BookListener[]>();
  private readonly selection: Rng;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private paused: boolean;
  private rate: number;
  private origin = 0;
  private emittedSinceOrigin = 0;
  private lastPrune = 0;
  private totalEvents = 0;
  /** When the engine was created: every event and trade it makes is at or after this time. */
  readonly startTs: number;

  constructor(
    instruments: readonly Instrument[],
    private readonly opts: EngineOptions,
  ) {
    this.selection = new Rng(opts.seed, 'selection');
    this.rate = opts.updatesPerSecond;
    this.paused = opts.startPaused ?? false;
    const now = opts.clock();
    this.startTs = now;
    const perTicker = Math.max(1000, Math.ceil((opts.maxRetainedEvents ?? Infinity) / Math.max(1, instruments.length)));
    for (const inst of instruments) {
      const gen = new BookGenerator(inst, new Rng(opts.seed, 'book', inst.platform, inst.ticker));
      const entry: Entry = {
        inst,
        gen,
        history: new TickerHistory(gen.book.snapshot(), now, CHECKPOINT_EVERY, CHECKPOINT_EVERY_MS, perTicker),
        seq: 0,
        lastTs: now,
        lastTrade: undefined,
        stats: { volume: 0n, high: undefined, low: undefined },
      };
      this.entries.push(entry);
      this.byKey.set(key(inst.platform, inst.ticker), entry);
      if (opts.moving.has(inst.platform)) this.movingEntries.push(entry);
    }
  }

  on(platform: BookPlatform, listener: BookListener): void {
    const list = this.listeners.get(platform) ?? [];
    list.push(listener);
    this.listeners.set(platform, list);
  }

  instruments(platform?: BookPlatform): Instrument[] {
    return this.entries.filter((e) => !platform || e.inst.platform === platform).map((e) => e.inst);
  }

  instrument(platform: BookPlatform, ticker: string): Instrument | undefined {
    return this.byKey.get(key(platform, ticker))?.inst;
  }

  /** The live book (do not mutate). */
  book(platform: BookPlatform, ticker: string): OrderBook | undefined {
    return this.byKey.get(key(platform, ticker))?.gen.book;
  }

  /** The account's resting order in a book (`Instrument.resting`) and the quantity queued ahead of it now. */
  resting(platform: BookPlatform, ticker: string): (RestingOrder & { ahead: number }) | undefined {
    return this.byKey.get(key(platform, ticker))?.gen.resting;
  }

  lastSeq(platform: BookPlatform, ticker: string): number {
    return this.byKey.get(key(platform, ticker))?.seq ?? 0;
  }

  bookAt(platform: BookPlatform, ticker: string, ts: number): IntBook | undefined {
    return this.byKey.get(key(platform, ticker))?.history.at(ts);
  }

  oldestRetainedTs(platform: BookPlatform, ticker: string): number | undefined {
    return this.byKey.get(key(platform, ticker))?.history.oldestTs;
  }

  events(platform: BookPlatform, ticker: string, sinceTs?: number): BookEvent[] | undefined {
    return this.byKey.get(key(platform, ticker))?.history.since(sinceTs);
  }

  /** Time of the last emitted event of a ticker (its start time before the first). */
  lastTs(platform: BookPlatform, ticker: string): number | undefined {
    return this.byKey.get(key(platform, ticker))?.lastTs;
  }

  /** The last emitted event still retained. */
  lastEvent(platform: BookPlatform, ticker: string): BookEvent | undefined {
    return this.byKey.get(key(platform, ticker))?.history.last();
  }

  /** Whether a platform's books move (else they keep their initial book and never trade). */
  isMoving(platform: BookPlatform): boolean {
    return this.opts.moving.has(platform);
  }

  /** Number of a ticker's last trade (0 before the first). */
  lastTradeNo(platform: BookPlatform, ticker: string): number {
    return this.byKey.get(key(platform, ticker))?.gen.tradeNo ?? 0;
  }

  /** A ticker's last trade, retained or not. */
  lastTrade(platform: BookPlatform, ticker: string): TimedTrade | undefined {
    return this.byKey.get(key(platform, ticker))?.lastTrade;
  }

  /** A ticker's trades since the engine started, summed up (`TradeStats`; the last trade is `lastTrade`). */
  tradeStats(platform: BookPlatform, ticker: string): Readonly<TradeStats> | undefined {
    return this.byKey.get(key(platform, ticker))?.stats;
  }

  /**
   * The retained trades of a ticker (the same retention as `bookAt`/`events`): numbers `first` … `last` (none when
   * first > last), each by number, and the first at or after a time.
   */
  tradeLog(platform: BookPlatform, ticker: string): TradeReader | undefined {
    return this.byKey.get(key(platform, ticker))?.history;
  }

  /** Retained trades of a ticker with ts >= sinceTs, oldest first. */
  trades(platform: BookPlatform, ticker: string, sinceTs?: number): TimedTrade[] | undefined {
    return this.byKey.get(key(platform, ticker))?.history.trades(sinceTs);
  }

  get eventsEmitted(): number {
    return this.totalEvents;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get updatesPerSecond(): number {
    return this.rate;
  }

  start(): void {
    this.running = true;
    this.resetOrigin();
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  pause(): void {
    this.paused = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resetOrigin();
    this.schedule();
  }

  setRate(updatesPerSecond: number): void {
    this.rate = Math.max(0, updatesPerSecond);
    this.resetOrigin();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule();
  }

  /** Emits `n` updates now, whatever the rate and pause state (deterministic stepping for tests). */
  step(n = 1): void {
    for (let i = 0; i < n; i++) this.emitOne();
  }

  /** Advances one specific ticker once (for tests that need a change on a given book). */
  stepTicker(platform: BookPlatform, ticker: string): BookEvent | undefined {
    const entry = this.byKey.get(key(platform, ticker));
    return entry ? this.advance(entry) : undefined;
  }

  private resetOrigin(): void {
    this.origin = this.opts.clock();
    this.emittedSinceOrigin = 0;
  }

  private schedule(): void {
    if (!this.running || this.paused || this.timer || this.rate <= 0 || this.movingEntries.length === 0) return;
    const delay = Math.max(1, Math.min(MAX_TIMER_MS, Math.floor(1000 / this.rate)));
    this.timer = setTimeout(this.loop, delay);
  }

  private readonly loop = (): void => {
    this.timer = undefined;
    if (!this.running || this.paused) return;
    const now = this.opts.clock();
    let due = Math.floor(((now - this.origin) * this.rate) / 1000) - this.emittedSinceOrigin;
    if (due > this.rate) {
      // More than a second behind (a stalled event loop): skip the backlog rather than burst it out.
      this.resetOrigin();
      due = Math.max(1, Math.floor(this.rate / 50));
    } else {
      this.emittedSinceOrigin += Math.max(0, due);
    }
    for (let i = 0; i < due && this.running && !this.paused; i++) this.emitOne();
    if (now - this.lastPrune >= 1000) {
      this.lastPrune = now;
      const cutoff = now - this.opts.retentionMs;
      for (const e of this.entries) e.history.prune(cutoff);
    }
    this.schedule();
  };

  private emitOne(): void {
    if (this.movingEntries.length === 0) return;
    const entry = this.movingEntries[this.selection.int(this.movingEntries.length)] as Entry;
    this.advance(entry);
  }

  private advance(entry: Entry): BookEvent | undefined {
    const changes = entry.gen.next(this.opts.changesPerUpdate[entry.inst.platform] ?? 1);
    if (changes.length === 0) return undefined;
    const ts = Math.max(this.opts.clock(), entry.lastTs);
    entry.lastTs = ts;
    const trades = entry.gen.trades;
    const event: BookEvent = { seq: ++entry.seq, ts, changes, trades };
    if (trades.length > 0) {
      entry.lastTrade = { ...(trades[trades.length - 1] as Trade), ts, seq: event.seq };
      const stats = entry.stats;
      for (const t of trades) {
        stats.volume += BigInt(t.size);
        if (stats.high === undefined || t.price > stats.high) stats.high = t.price;
        if (stats.low === undefined || t.price < stats.low) stats.low = t.price;
      }
    }
    entry.history.record(event, entry.gen.book);
    this.totalEvents++;
    const list = this.listeners.get(entry.inst.platform);
    if (list) {
      for (const listener of list) {
        try {
          listener(entry.inst, event, entry.gen.book);
        } catch (err) {
          this.opts.onListenerError?.(err);
        }
      }
    }
    return event;
  }
}

function key(platform: string, ticker: string): string {
  return `${platform}\u0000${ticker}`;
}
