/**
 * The price chart's and the time-and-sales list's data for the window in view, from @depthgate/client's `events()`:
 * every change of the book and every trade of the window in the order they arrived, the book kept current by the
 * client. The best bid and ask are sampled after each moment (the last change of a `ts`), trades are kept as they
 * came, and the gaps of both streams are kept to be drawn — never bridged: the best bid and ask have no value inside a
 * gap of the book.
 *
 * Exact decimals stay strings here (they are what the list shows); numbers only for pixel positions (`plotNumber`).
 */
import { Decimal, type Gap, type HistoryClient, type MarketEvent, type TradeSide } from '@depthgate/client';
import { plotNumber } from './format';

/** At most this many events (changes and trades) are read for one window: beyond, the chart says where it stops. */
export const MAX_EVENTS = 150_000;

export interface ChartTrade {
  /** Epoch ms. */
  at: number;
  ts: string;
  trade_id: string;
  price: string;
  size: string;
  side: TradeSide;
}

export interface PriceData {
  /** The window read: [from, to] in epoch ms. */
  from: number;
  to: number;
  /** The best bid and ask after each moment: x in epoch ms, null where a side is empty or in a gap of the book. */
  xs: number[];
  bids: (number | null)[];
  asks: (number | null)[];
  /** Every trade read, oldest first. */
  trades: ChartTrade[];
  bookGaps: Gap[];
  tradeGaps: Gap[];
  /** Where the read stopped when it reached MAX_EVENTS (epoch ms); undefined when the window was read whole. */
  stoppedAt?: number;
  changes: number;
  /** The last best bid and ask read, exact (undefined: that side empty, or the read ended in a gap). */
  lastBid?: string;
  lastAsk?: string;
}

/** Collects events into the chart's data (pure: fed by `readPrices`, or by tests). */
export class PriceCollector {
  readonly data: PriceData;
  private events = 0;

  constructor(from: number, to: number) {
    this.data = { from, to, xs: [], bids: [], asks: [], trades: [], bookGaps: [], tradeGaps: [], changes: 0 };
  }

  /** One event; false once MAX_EVENTS were taken (the read should stop). */
  add(e: MarketEvent, max = MAX_EVENTS): boolean {
    const d = this.data;
    switch (e.type) {
      case 'delta':
        d.changes++;
        this.sample(e.at, e.book.best());
        break;
      case 'snapshot':
        this.sample(e.at, e.book.best());
        break;
      case 'trade':
        d.trades.push({
          at: e.at,
          ts: e.ts,
          trade_id: e.trade.trade_id,
          price: e.trade.price,
          size: e.trade.size,
          side: e.trade.side,
        });
        break;
      case 'gap':
        d.bookGaps.push(e.gap);
        // The lines end where the gap starts: no best bid or ask until the book restarts.
        this.point(Math.max(d.from, Date.parse(e.gap.from_ts)), null, null);
        d.lastBid = d.lastAsk = undefined;
        break;
      case 'trades_gap':
        d.tradeGaps.push(e.gap);
        break;
    }
    if (++this.events >= max && e.type !== 'gap' && e.type !== 'trades_gap' && 'at' in e) {
      d.stoppedAt = e.at;
      return false;
    }
    return true;
  }

  /** Ends the read: the last best bid and ask hold to the end of what was read. */
  finish(): PriceData {
    const d = this.data;
    const end = d.stoppedAt ?? d.to;
    const n = d.xs.length;
    if (n && (d.xs[n - 1] as number) < end) this.point(end, d.bids[n - 1] ?? null, d.asks[n - 1] ?? null);
    return d;
  }

  private sample(at: number, best: { bid?: { price: string }; ask?: { price: string } }): void {
    this.data.lastBid = best.bid?.price;
    this.data.lastAsk = best.ask?.price;
    this.point(at, best.bid ? plotNumber(best.bid.price) : null, best.ask ? plotNumber(best.ask.price) : null);
  }

  /** A point; a later point at the same x replaces it (the book after the whole moment). */
  private point(x: number, bid: number | null, ask: number | null): void {
    const d = this.data;
    const n = d.xs.length;
    if (n && d.xs[n - 1] === x) {
      d.bids[n - 1] = bid;
      d.asks[n - 1] = ask;
    } else {
      d.xs.push(x);
      d.bids.push(bid);
      d.asks.push(ask);
    }
  }
}

/**
 * Reads the window [from, to] through `events()` (the starting snapshot looked for no further back than
 * `lookbackMs`; the snapshots on the way not re-checked, to keep to one stream), reporting progress now and then.
 */
export async function readPrices(
  client: HistoryClient,
  exchange: string,
  ticker: string,
  window: { from: number; to: number; lookbackMs: number },
  signal: AbortSignal,
  progress: (data: PriceData) => void = () => undefined,
): Promise<PriceData> {
  const collector = new PriceCollector(window.from, window.to);
  let n = 0;
  for await (const e of client.events(exchange, ticker, {
    from: window.from,
    to: window.to,
    lookbackMs: window.lookbackMs,
    verifySnapshots: false,
    signal,
  })) {
    if (!collector.add(e)) break;
    if (++n % 20_000 === 0) progress(collector.data);
  }
  return collector.finish();
}

/** The trades up to a moment, newest first, at most `limit` (and how many there are in all). */
export function tradesUpTo(
  trades: readonly ChartTrade[],
  at: number,
  limit: number,
): { rows: ChartTrade[]; total: number } {
  // Trades are oldest first: the last one at or before `at`, found by bisection.
  let lo = 0;
  let hi = trades.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((trades[mid] as ChartTrade).at <= at) lo = mid + 1;
    else hi = mid;
  }
  const rows: ChartTrade[] = [];
  for (let i = lo - 1; i >= 0 && rows.length < limit; i--) rows.push(trades[i] as ChartTrade);
  return { rows, total: lo };
}

/**
 * A trade's point radius in CSS pixels: its area proportional to its size against the largest trade of the window
 * (so volume reads as area), between 2.5 and 10 px.
 */
export function tradeRadius(size: string, largest: number): number {
  const s = plotNumber(size);
  if (!(largest > 0) || !(s > 0)) return 2.5;
  return 2.5 + 7.5 * Math.sqrt(Math.min(1, s / largest));
}

/** The largest trade size of a list, for pixels (`tradeRadius`); the comparison is exact. */
export function largestSize(trades: readonly ChartTrade[]): number {
  let best: Decimal | undefined;
  for (const t of trades) if (best === undefined || best.lt(t.size)) best = Decimal.parse(t.size);
  return best === undefined ? 0 : plotNumber(best.toString());
}

/** The price axis's range: every best bid, best ask and trade price of the window, with a margin. */
export function priceRange(data: PriceData): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const list of [data.bids, data.asks]) {
    for (const v of list) {
      if (v === null) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  for (const t of data.trades) {
    const p = plotNumber(t.price);
    if (p < lo) lo = p;
    if (p > hi) hi = p;
  }
  if (lo === Infinity) return [0, 1];
  const pad = hi > lo ? (hi - lo) * 0.08 : Math.max(Math.abs(hi) * 0.05, 0.01);
  return [lo - pad, hi + pad];
}
