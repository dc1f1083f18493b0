// https://docs.kalshi.com/api-reference/market/get-market-candlesticks
import type { KalshiTape, TapeTrade } from './tape';

const MINUTE_MS = 60_000;

/** Candlestick periods in minutes [V] (1 minute, 1 hour, 1 day). */
export const CANDLE_PERIODS = [1, 60, 1440] as const;

/** Most candlesticks one request may produce per market ([U]: the docs do not give Kalshi's own bound). */
export const MAX_CANDLES = 5000;

type Ohlc = [number, number, number, number];

/** One candlestick in integers: prices in 1e-4 dollars, counts in 1e-2 contracts. */
export interface Candle {
  /** Inclusive end of the period, Unix seconds. */
  end: number;
  bid: Ohlc;
  ask: Ohlc;
  /** Trade prices of the period; absent when nothing traded. */
  price?: { open: number; high: number; low: number; close: number; mean: number };
  /** Price of the last trade before the period, if any. */
  previous?: number;
  volume: number;
  openInterest: number;
  /** The synthetic candle `include_latest_before_start` prepends: no prices of its own. */
  projected?: boolean;
}

export interface CandleRequest {
  ticker: string;
  startTs: number;
  endTs: number;
  period: number;
  now: number;
  includeLatestBeforeStart?: boolean;
}

/** How many periods end in [startTs, endTs] (Unix seconds). */
export function periodCount(startTs: number, endTs: number, period: number): number {
  const step = period * 60;
  const first = Math.ceil(startTs / step);
  const last = Math.floor(endTs / step);
  return Math.max(0, last - first + 1);
}

/**
 * Candlesticks of one market from the tape: for each period ending in [startTs, endTs] (period boundaries on
 * multiples of the period since the epoch) that overlaps the market's trading window up to now, the best bid and
 * ask over its minutes, its trades' open/high/low/close and volume-weighted mean, the last earlier trade price, its
 * volume and the open interest at its end.
 */
export function candles(tape: KalshiTape, req: CandleRequest): Candle[] {
  const m = tape.market(req.ticker);
  if (!m) return [];
  const step = req.period * 60;
  const firstMinute = Math.floor(m.openMs / MINUTE_MS);
  const endMinute = Math.min(Math.floor(req.now / MINUTE_MS) + 1, Math.ceil(m.endMs / MINUTE_MS));
  const out: Candle[] = [];
  let previous: number | undefined;
  let previousKnown = false;
  for (let e = Math.ceil(req.startTs / step); e <= Math.floor(req.endTs / step); e++) {
    const to = e * req.period;
    const a = Math.max(to - req.period, firstMinute);
    const b = Math.min(to, endMinute);
    if (a >= b) continue;
    const fromMs = a * MINUTE_MS;
    const toMs = Math.min(b * MINUTE_MS - 1, req.now);
    if (!previousKnown) {
      const last = tape.lastTrade(req.ticker, fromMs - 1);
      previous = last ? tape.price(last) : undefined;
      previousKnown = true;
      if (req.includeLatestBeforeStart && out.length === 0) {
        const before = latestBefore(tape, req);
        if (before) out.push(before);
      }
    }
    const c = candle(tape, req.ticker, e * step, a, b, fromMs, toMs, previous);
    if (c.price) previous = c.price.close;
    out.push(c);
  }
  return out;
}

function candle(
  tape: KalshiTape,
  ticker: string,
  end: number,
  a: number,
  b: number,
  fromMs: number,
  toMs: number,
  previous: number | undefined,
): Candle {
  const first = tape.bar(ticker, a);
  const bid: Ohlc = [...first.bid];
  const ask: Ohlc = [...first.ask];
  for (let minute = a + 1; minute < b; minute++) {
    const bar = tape.bar(ticker, minute);
    bid[1] = Math.max(bid[1], bar.bid[1]);
    bid[2] = Math.min(bid[2], bar.bid[2]);
    bid[3] = bar.bid[3];
    ask[1] = Math.max(ask[1], bar.ask[1]);
    ask[2] = Math.min(ask[2], bar.ask[2]);
    ask[3] = bar.ask[3];
  }
  const trades = tape.tradesBetween(ticker, fromMs, toMs);
  return {
    end,
    bid,
    ask,
    ...(trades.length ? { price: priceOf(tape, trades) } : {}),
    ...(previous !== undefined ? { previous } : {}),
    volume: trades.reduce((v, t) => v + t.count, 0),
    openInterest: tape.openInterest(ticker, toMs),
  };
}

function priceOf(tape: KalshiTape, trades: readonly TapeTrade[]): NonNullable<Candle['price']> {
  let high = -Infinity;
  let low = Infinity;
  let notional = 0;
  let volume = 0;
  const prices = trades.map((t) => tape.price(t));
  trades.forEach((t, i) => {
    const p = prices[i] as number;
    high = Math.max(high, p);
    low = Math.min(low, p);
    notional += p * t.count;
    volume += t.count;
  });
  // Volume-weighted mean, rounded half up to 1e-4 dollars (integers only).
  const mean = Math.floor((2 * notional + volume) / (2 * volume));
  return { open: prices[0] as number, high, low, close: prices[prices.length - 1] as number, mean };
}

/**
 * `include_latest_before_start` [V]: the most recent real candlestick before start_ts, projected to the first period
 * boundary after start_ts, with no prices of its own and its close as `previous`. Its quotes stay flat at the real
 * candle's closes ([U]: the docs describe the prices only).
 */
function latestBefore(tape: KalshiTape, req: CandleRequest): Candle | undefined {
  const m = tape.market(req.ticker);
  if (!m) return undefined;
  const step = req.period * 60;
  const end = Math.ceil(req.startTs / step);
  const prevEnd = (end - 1) * req.period;
  const a = Math.max(prevEnd - req.period, Math.floor(m.openMs / MINUTE_MS));
  const toMs = Math.min(prevEnd * MINUTE_MS - 1, req.now);
  if (a >= prevEnd || a * MINUTE_MS > toMs) return undefined;
  const real = candle(tape, req.ticker, prevEnd * 60, a, prevEnd, a * MINUTE_MS, toMs, undefined);
  const last = tape.lastTrade(req.ticker, toMs);
  const close = last ? tape.price(last) : undefined;
  const flat = (c: number): Ohlc => [c, c, c, c];
  return {
    end: end * step,
    bid: flat(real.bid[3]),
    ask: flat(real.ask[3]),
    ...(close !== undefined ? { previous: close } : {}),
    volume: 0,
    openInterest: real.openInterest,
    projected: true,
  };
}
