// https://docs.kalshi.com/api-reference/market/get-trades, …/get-market-candlesticks
import { hashInts, Rng } from '../../core/rng';
import { DAY_MS } from '../../core/time';
import { BID, type Trade } from '../../book/types';
import { uuidOf } from '../../core/ids';
import { KalshiTradeIds } from './trade-ids';

const MINUTE_MS = 60_000;
/** Price units (1e-4 dollars) of one tick (one cent) and the price bounds of a Kalshi book. */
const TICK = 100;
const MIN_PRICE = 100;
const MAX_PRICE = 9900;
/** The seeded path wanders at most this far from its anchor (15 cents), less where a price bound is nearer. */
const MAX_SWING = 1500;
/** Scales (minutes) of the value noise behind the seeded path, and their weights (out of 10). */
const SCALES = [30, 360, 4320] as const;
const WEIGHTS = [2, 3, 5] as const;
/** Minute bars kept per live market (14 days); older ones are forgotten (see `bar`). */
const MAX_BARS = 14 * 1440;
const DAY_CACHE = 2048;

/** Best YES bid and ask, in 1e-4 dollars. */
export interface Quote {
  bid: number;
  ask: number;
}

/** Open, high, low and close of the best YES bid and ask over one minute. */
export interface QuoteBar {
  bid: [number, number, number, number];
  ask: [number, number, number, number];
}

/** One trade of the tape. `count` in 1e-2 contracts; `yes`: the taker bought YES (hit the ask). */
export interface TapeTrade {
  ticker: string;
  ts: number;
  count: number;
  yes: boolean;
  /** Day (epoch days) and index of its draw, which name it; a book's trade: its number as the index. */
  day: number;
  index: number;
  /** A trade of the moving book: its number and YES price (1e-4 dollars). A draw has neither. */
  no?: number;
  price?: number;
}

/** Fields per recorded book trade in `Track.live`: ts, no, YES price, count, yes (1/0), cumulative count. */
const LIVE = 6;

/** A market as the tape knows it. */
export interface TapeMarket {
  ticker: string;
  /** Trades exist in [openMs, endMs). */
  openMs: number;
  endMs: number;
  /** The seeded path passes through `anchor` at `anchorMinute` (epoch minutes). */
  anchorMinute: number;
  anchor: Quote;
  /** From this minute on quotes are the live book's (recorded minute by minute); Infinity: the path only. */
  liveFromMinute: number;
  /**
   * From this instant on the market's trades are its moving book's (`record`, fed by the engine) instead of draws;
   * Infinity (or absent): draws only.
   */
  tradesLiveFromMs?: number;
}

/** A market's track on the tape: its keys, recorded bars and volume so far. */
interface Track extends TapeMarket {
  key: number;
  /** Open interest as a share (percent) of the volume traded so far. */
  oiPercent: number;
  /** How far (ticks) the path may go up and down from the anchor. */
  upTicks: number;
  downTicks: number;
  anchorNoise: number;
  /** Recorded live minute bars: minutes ascending, 8 values per bar (bid o/h/l/c, ask o/h/l/c). */
  minutes: number[];
  bars: number[];
  /** Volume (1e-2 contracts) of the days from the opening day: prefix[i] = days openDay … openDay + i − 1. */
  prefix: number[];
  /** Draws exist in [openMs, drawEndMs): up to the end, or until the book's own trades take over. */
  drawEndMs: number;
  /** The book's trades recorded since `tradesLiveFromMs`, LIVE numbers each, oldest first (14 days kept). */
  live: number[];
}

/**
 * Kalshi's public trades and the quotes behind its candlesticks, derived from the seed and the moving books so that
 * repeated calls agree. Quotes are the live book's best bid and ask, recorded per minute since the simulator started
 * (`observe`, fed by the book engine), and before that a seeded path that ends at the book's first quote. Before a
 * moving book's start (and on markets without one) trades are drawn per day from the seed (times, sizes, taker
 * sides) and priced at the quote of their minute's start: a taker buying YES pays the ask, one buying NO the bid.
 * From its start a moving market's trades are its book's own (`record`: the engine's fills, with their ids), so the
 * trades routes, the feed and the candlesticks show the same trades. Volume and open interest follow from the trades.
 */
export class KalshiTape {
  private readonly tracks = new Map<string, Track>();
  private readonly days = new Map<string, TapeTrade[]>();
  private readonly ids: KalshiTradeIds;

  constructor(seed: number, markets: readonly TapeMarket[]) {
    this.ids = new KalshiTradeIds(seed);
    for (const m of markets) {
      const key = new Rng(seed, 'kalshi', 'tape', m.ticker).next();
      const s: Track = {
        ...m,
        key,
        oiPercent: 20 + (hashInts(key, 1) % 41),
        upTicks: Math.max(0, Math.floor(Math.min(MAX_SWING, MAX_PRICE - m.anchor.ask) / TICK)),
        downTicks: Math.max(0, Math.floor(Math.min(MAX_SWING, m.anchor.bid - MIN_PRICE) / TICK)),
        anchorNoise: 0,
        minutes: [],
        bars: [],
        prefix: [],
        drawEndMs: Math.min(m.endMs, m.tradesLiveFromMs ?? Infinity),
        live: [],
      };
      s.anchorNoise = noise(key, m.anchorMinute);
      if (Number.isFinite(m.liveFromMinute)) this.pushBar(s, m.liveFromMinute, m.anchor.bid, m.anchor.ask);
      this.tracks.set(m.ticker, s);
    }
  }

  market(ticker: string): TapeMarket | undefined {
    return this.tracks.get(ticker);
  }

  /** Records the live book's best bid and ask of a market at `ts` (called for every book change). */
  observe(ticker: string, ts: number, bid: number, ask: number): void {
    const s = this.tracks.get(ticker);
    if (!s || s.minutes.length === 0) return;
    const minute = Math.floor(ts / MINUTE_MS);
    const last = s.minutes.length - 1;
    if (minute > (s.minutes[last] as number)) {
      const at = last * 8;
      this.pushBar(s, minute, s.bars[at + 3] as number, s.bars[at + 7] as number);
    }
    const at = (s.minutes.length - 1) * 8;
    const b = s.bars;
    b[at + 1] = Math.max(b[at + 1] as number, bid);
    b[at + 2] = Math.min(b[at + 2] as number, bid);
    b[at + 3] = bid;
    b[at + 5] = Math.max(b[at + 5] as number, ask);
    b[at + 6] = Math.min(b[at + 6] as number, ask);
    b[at + 7] = ask;
  }

  private pushBar(s: Track, minute: number, bid: number, ask: number): void {
    if (s.minutes.length >= MAX_BARS) {
      s.minutes.splice(0, 1440);
      s.bars.splice(0, 1440 * 8);
    }
    s.minutes.push(minute);
    s.bars.push(bid, bid, bid, bid, ask, ask, ask, ask);
  }

  /**
   * The quotes of one minute. Before the live window: the seeded path (flat within a minute). In it: the recorded
   * bar, or the last recorded close when the book did not move that minute. A run longer than 14 days forgets its
   * oldest bars; minutes before the oldest kept bar read as that bar's open.
   */
  bar(ticker: string, minute: number): QuoteBar {
    const s = this.tracks.get(ticker);
    if (!s) throw new Error(`not on the tape: ${ticker}`);
    if (minute < s.liveFromMinute) {
      const q = this.pathQuote(s, minute);
      return { bid: [q.bid, q.bid, q.bid, q.bid], ask: [q.ask, q.ask, q.ask, q.ask] };
    }
    const i = lastAtOrBefore(s.minutes, minute);
    const b = s.bars;
    if (i < 0) {
      const [bid, ask] = [b[0] as number, b[4] as number];
      return { bid: [bid, bid, bid, bid], ask: [ask, ask, ask, ask] };
    }
    const at = i * 8;
    if (s.minutes[i] === minute) {
      return {
        bid: [b[at] as number, b[at + 1] as number, b[at + 2] as number, b[at + 3] as number],
        ask: [b[at + 4] as number, b[at + 5] as number, b[at + 6] as number, b[at + 7] as number],
      };
    }
    const [bid, ask] = [b[at + 3] as number, b[at + 7] as number];
    return { bid: [bid, bid, bid, bid], ask: [ask, ask, ask, ask] };
  }

  /** The quote at the start of a minute (what its trades are priced at). */
  quoteAt(ticker: string, minute: number): Quote {
    const b = this.bar(ticker, minute);
    return { bid: b.bid[0], ask: b.ask[0] };
  }

  /** The quote at the end of the minute containing `ts` (the close of that minute's bar). */
  quoteAtTime(ticker: string, ts: number): Quote {
    const b = this.bar(ticker, Math.floor(ts / MINUTE_MS));
    return { bid: b.bid[3], ask: b.ask[3] };
  }

  /** The anchor moved by the noise's change since the anchor minute, scaled to the room above or below it. */
  private pathQuote(s: Track, minute: number): Quote {
    const change = noise(s.key, minute) - s.anchorNoise;
    const delta = Math.round(((change > 0 ? s.upTicks : s.downTicks) * change) / 2000) * TICK;
    return { bid: s.anchor.bid + delta, ask: s.anchor.ask + delta };
  }

  /** YES price of a trade, in 1e-4 dollars: a book trade's own, a draw's the quote of its minute's start. */
  price(t: TapeTrade): number {
    if (t.price !== undefined) return t.price;
    const q = this.quoteAt(t.ticker, Math.floor(t.ts / MINUTE_MS));
    return t.yes ? q.ask : q.bid;
  }

  /** A trade's id: UUID-shaped, named by its draw, or the book trade's own (feed/trades.ts). */
  tradeId(t: TapeTrade): string {
    if (t.no !== undefined) return this.ids.id(t.ticker, t.no);
    const s = this.tracks.get(t.ticker) as Track;
    return uuidOf(s.key, 12, t.day, t.index);
  }

  /** Records the trades a moving book made at `ts` (called for every book event that traded). */
  record(ticker: string, ts: number, trades: readonly Trade[]): void {
    const s = this.tracks.get(ticker);
    if (!s || ts < (s.tradesLiveFromMs ?? Infinity)) return;
    const live = s.live;
    let cum = live.length ? (live[live.length - 1] as number) : 0;
    for (const t of trades) {
      cum += t.size;
      live.push(ts, t.no, t.price, t.size, t.takerSide === BID ? 1 : 0, cum);
    }
    // Kept as long as the minute bars; older ones are forgotten in blocks.
    if ((live[0] as number) < ts - MAX_BARS * MINUTE_MS && live.length > 1024 * LIVE) {
      let n = 0;
      while (n < live.length && (live[n] as number) < ts - MAX_BARS * MINUTE_MS) n += LIVE;
      live.splice(0, n);
    }
  }

  /** The recorded book trade at index i (of `live`, in trades). */
  private liveTrade(s: Track, i: number): TapeTrade {
    const l = s.live;
    const at = i * LIVE;
    const ts = l[at] as number;
    const no = l[at + 1] as number;
    return {
      ticker: s.ticker,
      ts,
      count: l[at + 3] as number,
      yes: l[at + 4] === 1,
      day: Math.floor(ts / DAY_MS),
      index: no,
      no,
      price: l[at + 2] as number,
    };
  }

  /** Index of the first recorded book trade with ts >= `ts` (the count when none). */
  private liveAtOrAfter(s: Track, ts: number): number {
    let lo = 0;
    let hi = s.live.length / LIVE;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((s.live[mid * LIVE] as number) < ts) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Recorded book trades in [fromMs, toMs], oldest first. */
  private liveBetween(s: Track, fromMs: number, toMs: number): TapeTrade[] {
    const out: TapeTrade[] = [];
    const n = s.live.length / LIVE;
    for (let i = this.liveAtOrAfter(s, fromMs); i < n && (s.live[i * LIVE] as number) <= toMs; i++) {
      out.push(this.liveTrade(s, i));
    }
    return out;
  }

  /**
   * The trades of one epoch day inside the market's window, by time (not cut at now: callers bound by time): its
   * draws, then the book's trades of that day.
   */
  dayTrades(ticker: string, day: number): readonly TapeTrade[] {
    const s = this.tracks.get(ticker);
    if (!s) return [];
    const draws = this.drawsOf(s, day);
    if (s.live.length === 0 || day * DAY_MS + DAY_MS <= s.drawEndMs) return draws;
    return [...draws, ...this.liveBetween(s, day * DAY_MS, day * DAY_MS + DAY_MS - 1)];
  }

  /** The draws of one day, by time (cached). */
  private drawsOf(s: Track, day: number): readonly TapeTrade[] {
    const cacheKey = `${s.ticker}|${day}`;
    const hit = this.days.get(cacheKey);
    if (hit) return hit;
    const out = this.drawDay(s, day);
    if (this.days.size >= DAY_CACHE) this.days.delete(this.days.keys().next().value as string);
    this.days.set(cacheKey, out);
    return out;
  }

  private drawDay(s: Track, day: number): TapeTrade[] {
    const out: TapeTrade[] = [];
    this.eachDraw(s, day, (ts, h, index) =>
      out.push({ ticker: s.ticker, ts, count: countOf(h), yes: ((h >>> 28) & 1) === 1, day, index }),
    );
    out.sort((a, b) => a.ts - b.ts || a.index - b.index);
    return out;
  }

  /** The day's draws inside the market's window, unsorted: time, the draw's hash (size, side) and its index. */
  private eachDraw(s: Track, day: number, fn: (ts: number, h: number, index: number) => void): void {
    const from = day * DAY_MS;
    if (from + DAY_MS <= s.openMs || from >= s.drawEndMs) return;
    const n = 24 + (hashInts(s.key, 10, day) % 97);
    for (let i = 0; i < n; i++) {
      const ts = from + (hashInts(s.key, 11, day, i) % DAY_MS);
      if (ts >= s.openMs && ts < s.drawEndMs) fn(ts, hashInts(s.key, 13, day, i), i);
    }
  }

  /** Volume (1e-2 contracts) traded in (fromMs, toMs]. */
  volume(ticker: string, fromMs: number, toMs: number): number {
    const s = this.tracks.get(ticker);
    if (!s || toMs <= fromMs) return 0;
    return this.cumulative(s, toMs) - this.cumulative(s, fromMs);
  }

  /** Volume traded up to and including `ts`. */
  cumulativeVolume(ticker: string, ts: number): number {
    const s = this.tracks.get(ticker);
    return s ? this.cumulative(s, ts) : 0;
  }

  /** Open interest at `ts` (1e-2 contracts): a fixed share of the volume traded so far, in whole hundredths. */
  openInterest(ticker: string, ts: number): number {
    const s = this.tracks.get(ticker);
    return s ? Math.floor((this.cumulative(s, ts) * s.oiPercent) / 100) : 0;
  }

  /** Volume of the draws up to `ts`, and of the book's recorded trades. */
  private cumulative(s: Track, ts: number): number {
    let live = 0;
    const i = this.liveAtOrAfter(s, ts + 1);
    if (i > 0) live = s.live[i * LIVE - 1] as number;
    const openDay = Math.floor(s.openMs / DAY_MS);
    const day = Math.floor(ts / DAY_MS);
    if (day < openDay) return live;
    if (s.prefix.length === 0) s.prefix.push(0);
    while (s.prefix.length <= day - openDay) {
      const d = openDay + s.prefix.length - 1;
      s.prefix.push((s.prefix[s.prefix.length - 1] as number) + this.fullDayVolume(s, d));
    }
    let v = s.prefix[day - openDay] as number;
    for (const t of this.drawsOf(s, day)) {
      if (t.ts > ts) break;
      v += t.count;
    }
    return v + live;
  }

  private fullDayVolume(s: Track, day: number): number {
    let sum = 0;
    this.eachDraw(s, day, (_ts, h) => (sum += countOf(h)));
    return sum;
  }

  /** The last trade at or before `ts`, if any. */
  lastTrade(ticker: string, ts: number): TapeTrade | undefined {
    const s = this.tracks.get(ticker);
    if (!s) return undefined;
    const i = this.liveAtOrAfter(s, ts + 1);
    if (i > 0) return this.liveTrade(s, i - 1);
    for (let day = Math.floor(Math.min(ts, s.drawEndMs - 1) / DAY_MS); day * DAY_MS + DAY_MS > s.openMs; day--) {
      const trades = this.drawsOf(s, day);
      for (let k = trades.length - 1; k >= 0; k--) if ((trades[k] as TapeTrade).ts <= ts) return trades[k];
    }
    return undefined;
  }

  /** Trades of one market in [fromMs, toMs], oldest first. */
  tradesBetween(ticker: string, fromMs: number, toMs: number): TapeTrade[] {
    const s = this.tracks.get(ticker);
    if (!s) return [];
    const out: TapeTrade[] = [];
    const drawsTo = Math.min(toMs, s.drawEndMs - 1);
    for (let day = Math.floor(fromMs / DAY_MS); day <= Math.floor(drawsTo / DAY_MS); day++) {
      for (const t of this.drawsOf(s, day)) if (t.ts >= fromMs && t.ts <= drawsTo) out.push(t);
    }
    if (s.live.length > 0) out.push(...this.liveBetween(s, fromMs, toMs));
    return out;
  }

  /**
   * A market's trades in [fromMs, toMs] newest first, from the trade `after` excludes on (those it orders after: it
   * is the last trade of the previous page), at most `n`: a page of `/markets/trades` for one market.
   */
  newestFirst(ticker: string, fromMs: number, toMs: number, n: number, after?: (t: TapeTrade) => boolean): TapeTrade[] {
    const s = this.tracks.get(ticker);
    if (!s || toMs < fromMs) return [];
    const out: TapeTrade[] = [];
    const keep = (t: TapeTrade): boolean => {
      if (t.ts < fromMs || t.ts > toMs || (after && !after(t))) return true;
      out.push(t);
      return out.length < n;
    };
    for (let i = this.liveAtOrAfter(s, toMs + 1) - 1; i >= 0 && (s.live[i * LIVE] as number) >= fromMs; i--) {
      if (!keep(this.liveTrade(s, i))) return out;
    }
    const top = Math.min(toMs, s.drawEndMs - 1);
    const bottom = Math.max(fromMs, s.openMs);
    for (let day = Math.floor(top / DAY_MS); day >= Math.floor(bottom / DAY_MS); day--) {
      const draws = this.drawsOf(s, day);
      // Newest first; at one millisecond the later draw first (as the pages order them).
      for (let k = draws.length - 1; k >= 0; k--) if (!keep(draws[k] as TapeTrade)) return out;
    }
    return out;
  }

  /** Earliest epoch day any of these markets trades. */
  firstDay(tickers: readonly string[]): number {
    let min = Infinity;
    for (const t of tickers) {
      const s = this.tracks.get(t);
      if (s) min = Math.min(min, Math.floor(s.openMs / DAY_MS));
    }
    return min;
  }
}

/**
 * A trade's size from its draw, in 1e-2 contracts: mostly small tickets, a few large; one in ten carries a quarter-
 * contract fraction (fractional trading [V]).
 */
function countOf(h: number): number {
  const pick = h % 100;
  const whole = pick < 70 ? 1 + ((h >>> 8) % 20) : pick < 95 ? 20 + ((h >>> 8) % 180) : 200 + ((h >>> 8) % 800);
  const fraction = (h >>> 20) % 10 === 0 ? 25 * (1 + ((h >>> 24) % 3)) : 0;
  return whole * 100 + fraction;
}

/** Index of the last element <= x in an ascending array, or -1. */
function lastAtOrBefore(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Seeded value noise in [-1000, 1000]: knots every SCALES[i] minutes, linear between them, weighted. */
function noise(key: number, minute: number): number {
  let sum = 0;
  for (let i = 0; i < SCALES.length; i++) {
    const scale = SCALES[i] as number;
    const j = Math.floor(minute / scale);
    const f = minute - j * scale;
    const a = (hashInts(key, 20 + i, j) % 2001) - 1000;
    const b = (hashInts(key, 20 + i, j + 1) % 2001) - 1000;
    sum += (WEIGHTS[i] as number) * Math.round((a * (scale - f) + b * f) / scale);
  }
  return Math.round(sum / 10);
}
