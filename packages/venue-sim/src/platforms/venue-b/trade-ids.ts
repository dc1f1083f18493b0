// https://docs.kalshi.com/websockets/public-trades, …/api-reference/market/get-trades
import { BID, type TimedTrade } from '../../book/types';
import { uuidOf } from '../../core/ids';
import { Rng } from '../../core/rng';

/** A Kalshi trade in integers: YES price in 1e-4 dollars, count in 1e-2 contracts; `yes`: the taker bought YES. */
export interface KalshiTradeFields {
  id: string;
  ticker: string;
  ts: number;
  yesPrice: number;
  count: number;
  yes: boolean;
}

/** The ids of the engine's Kalshi trades: a UUID per (seed, ticker, trade number), the same on every path. */
export class KalshiTradeIds {
  private readonly keys = new Map<string, number>();

  constructor(private readonly seed: number) {}

  id(ticker: string, no: number): string {
    let key = this.keys.get(ticker);
    if (key === undefined) this.keys.set(ticker, (key = new Rng(this.seed, 'kalshi', 'trade', ticker).next()));
    return uuidOf(key, no);
  }

  /** An engine trade in Kalshi's terms. */
  fields(ticker: string, t: Pick<TimedTrade, 'no' | 'ts' | 'takerSide' | 'price' | 'size'>): KalshiTradeFields {
    return {
      id: this.id(ticker, t.no),
      ticker,
      ts: t.ts,
      yesPrice: t.price,
      count: t.size,
      yes: t.takerSide === BID,
    };
  }
}
