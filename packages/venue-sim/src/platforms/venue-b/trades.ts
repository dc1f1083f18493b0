// https://docs.kalshi.com/websockets/public-trades, …/api-reference/market/get-trades
import { kalshiWire } from '@depthgate/feeds';
import type { Instrument, TimedTrade } from '../../book/types';
import type { SimTrade } from '../../book/view';
import { isoMillis } from '../../core/time';
import { dollars, fp } from './common';
import type { KalshiTradeFields, KalshiTradeIds } from './trade-ids';

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
    return kalshiWire.tradeBody({
      id: t.id,
      ticker: t.ticker,
      yesPrice: dollars(t.yesPrice),
      noPrice: dollars(10000 - t.yesPrice),
      count: fp(t.count),
      takerYes: t.yes,
      tsMs: t.ts,
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

  /** An engine trade as the oracle lists it. */
  describe(ids: KalshiTradeIds, inst: Instrument, t: TimedTrade): SimTrade {
    return kalshiTrade.oracle({ ...ids.fields(inst.ticker, t), no: t.no });
  },
};
