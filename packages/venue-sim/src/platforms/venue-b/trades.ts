// https://docs.kalshi.com/websockets/public-trades, …/api-reference/market/get-trades
import { uuidOf } from '../../core/ids';
import { Rng } from '../../core/rng';
import { isoMillis } from '../../core/time';
import { BID, type Instrument, type TimedTrade } from '../../book/types';
import type { SimTrade } from '../../types';
import { dollars, fp } from './common';

/** A Kalshi trade in integers: YES price in 1e-4 dollars, count in 1e-2 contracts; `yes`: the taker bought YES. */
export interface KalshiTradeFields {
  id: string;
  ticker: string;
  ts: number;
  yesPrice: number;
  count: number;
  yes: boolean;
}

/**
 * Kalshi's names for one trade, on every path alike: the REST `Trade` of `/markets/trades` and `/historical/trades`
 * [V], the `trade` channel's `msg` [V] and the control API's oracle. The book's bids and asks are YES bids and asks,
 * so a taker who bought (lifted a YES ask) bought YES, and one who sold (hit a YES bid) bought NO.
 */
export const kalshiTrade = {
  /** `Trade` [V]: `ticker` and `created_time` (RFC 3339, milliseconds: the same instant as the feed's `ts_ms`). */
  rest(t: KalshiTradeFields): Record<string, unknown> {
    const side = t.yes ? 'yes' : 'no';
    return {
      trade_id: t.id,
      ticker: t.ticker,
      count_fp: fp(t.count),
      yes_price_dollars: dollars(t.yesPrice),
      no_price_dollars: dollars(10000 - t.yesPrice),
      // Deprecated [V], still sent (ccxt reads it).
      taker_side: side,
      taker_outcome_side: side,
      // [V] the YES leg: a taker buying YES lifts the ask (`bid`), one buying NO hits the YES bid (`ask`).
      taker_book_side: t.yes ? 'bid' : 'ask',
      created_time: isoMillis(t.ts),
      is_block_trade: false,
    };
  },

  /** The `trade` channel's `msg` [V] (current schema): `market_ticker`, `ts` (s, deprecated) and `ts_ms`. */
  ws(t: KalshiTradeFields): string {
    const side = t.yes ? 'yes' : 'no';
    return JSON.stringify({
      trade_id: t.id,
      market_ticker: t.ticker,
      yes_price_dollars: dollars(t.yesPrice),
      no_price_dollars: dollars(10000 - t.yesPrice),
      count_fp: fp(t.count),
      taker_side: side,
      taker_outcome_side: side,
      taker_book_side: t.yes ? 'bid' : 'ask',
      is_block_trade: false,
      ts: Math.floor(t.ts / 1000),
      ts_ms: t.ts,
    });
  },

  oracle(t: KalshiTradeFields & { no: number }): SimTrade {
    return {
      id: t.id,
      ticker: t.ticker,
      no: t.no,
      ts: t.ts,
      price: dollars(t.yesPrice),
      size: fp(t.count),
      side: t.yes ? 'buy' : 'sell',
      venueSide: t.yes ? 'yes' : 'no',
    };
  },
};

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

  describe(inst: Instrument, t: TimedTrade): SimTrade {
    return kalshiTrade.oracle({ ...this.fields(inst.ticker, t), no: t.no });
  }
}
