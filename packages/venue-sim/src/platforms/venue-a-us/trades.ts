// https://docs.polymarket.us/api-reference/websocket/markets (SUBSCRIPTION_TYPE_TRADE)
import { pmUsWire } from '@depthgate/feeds';
import { BID, type Instrument, type TimedTrade } from '../../book/types';
import { formatScaled } from '../../core/decimal';
import { isoMillis } from '../../core/time';
import type { SimTrade } from '../../book/view';

/**
 * Polymarket US's trade message [V]: `marketSlug`, `price` and `quantity` as Amounts, `tradeTime`, and the maker's
 * and taker's side and intent. The book is the market's long (YES) side: a taker who lifted an offer bought long
 * (`ORDER_SIDE_BUY`, `ORDER_INTENT_BUY_LONG`) from a maker selling long, one who hit a bid sold long.
 *
 * The platform sends no trade id and no sequence [V]. In the simulator a trade is named by its market and its
 * `tradeTime`: the trade's millisecond followed by six more digits, the trade's number modulo 10^6 (nanoseconds),
 * so no two trades of a market share a `tradeTime` and the first 23 characters are the millisecond every other
 * path carries (`transactTime`, the oracle's `ts`).
 */
export const pmUsTrade = {
  tradeTime(t: Pick<TimedTrade, 'ts' | 'no'>): string {
    return `${isoMillis(t.ts).slice(0, -1)}${String(t.no % 1_000_000).padStart(6, '0')}Z`;
  },

  /** The message's `trade` object. */
  ws(inst: Instrument, t: TimedTrade): string {
    return pmUsWire.trade({
      slug: inst.ticker,
      price: formatScaled(t.price, 3),
      quantity: formatScaled(t.size, inst.qtyDecimals),
      tradeTime: pmUsTrade.tradeTime(t),
      takerBuys: t.takerSide === BID,
    });
  },

  describe(inst: Instrument, t: TimedTrade): SimTrade {
    const buy = t.takerSide === BID;
    return {
      id: null,
      ticker: inst.ticker,
      no: t.no,
      ts: t.ts,
      price: formatScaled(t.price, inst.priceDecimals),
      size: formatScaled(t.size, inst.qtyDecimals),
      side: buy ? 'buy' : 'sell',
      venueSide: buy ? 'ORDER_SIDE_BUY' : 'ORDER_SIDE_SELL',
    };
  },
};
