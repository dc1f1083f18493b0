// https://docs.polymarket.us/api-reference/websocket/markets
/**
 * Polymarket US (`venue_a_us`) as its markets WebSocket writes a market (protocols.md §3).
 *
 * - Every `SUBSCRIPTION_TYPE_MARKET_DATA` message is the market's whole book (`bids`/`offers` best first,
 *   `px.value` and `qty`), with `transactTime` the change's ms (RFC 3339): the snapshot at the window's start, then one
 *   message per group of deltas (the recorder diffed each of the venue's books into one such group).
 * - `state` is not recorded: `MARKET_STATE_OPEN` (the state of a market that is trading). `stats`
 *   (`lastTradePx`, `sharesTraded`, …) is not recorded either: `{}`.
 * - A trade is a `SUBSCRIPTION_TYPE_TRADE` message (`price`, `quantity` as Amounts, `tradeTime`, maker's and taker's
 *   side and intent on the long side), on the trade subscription's `requestId`.
 * - Prices with 3 places and quantities with 2 by default (the venue's `px.value` and the simulator's `qty`).
 * - Each message names its subscription's `requestId` as its channel (`NativeMessage.channel`): a client may end one
 *   subscription of a market and keep the others.
 * - Reset after a recorded gap: the whole book at the gap's end. Every message of this feed is the whole book and it
 *   has no sequence: a client replaces its book with each, so the message after the gap is the reset (nothing in the
 *   protocol can say more).
 */
import { ASK, BID, parseDecimal, pmUsWire } from '@depthgate/feeds';
import { formatPlaces, priceFormat, type Places, type ReplayBook } from './replay-book';
import { applyDelta, type EncodedText, type VenueEncoder } from './replay';
import type { RecordedDelta, RecordedTrade } from './types';

export interface PmUsEncoderOptions {
  slug: string;
  /**
   * The MARKET_DATA subscription's requestId, or the requestIds of every MARKET_DATA subscription naming the market
   * (each gets each message, as the venue sends one per subscription; none: the book is kept but nothing is sent). A
   * list is read at each message: a caller may change it as subscriptions end.
   */
  requestId: string | readonly string[];
  /** The TRADE subscription's requestId, or those of every TRADE subscription naming the market (as `requestId`). */
  tradeRequestId: string | readonly string[];
  priceDecimals?: Places;
  quantityDecimals?: Places;
  state?: string;
}

export function pmUsEncoder(o: PmUsEncoderOptions): VenueEncoder {
  const pricePlaces = o.priceDecimals ?? 3;
  const qtyPlaces = o.quantityDecimals ?? 2;
  const price = priceFormat(pricePlaces);
  const ids = (given: string | readonly string[]): readonly string[] => (typeof given === 'string' ? [given] : given);
  /** The message of `body` for each of `requestIds`, each on its own channel. */
  const each = (requestIds: readonly string[], body: string): EncodedText[] =>
    requestIds.map((id) => ({ channel: id, text: pmUsWire.frame(id, body) }));
  const whole = (book: ReplayBook, ts: number): EncodedText[] => {
    const requestIds = ids(o.requestId);
    if (requestIds.length === 0) return [];
    const side = (code: typeof BID | typeof ASK, order: 'asc' | 'desc') =>
      book.levels(code, order).map(([p, q]) => [price(p), formatPlaces(q, qtyPlaces)] as const);
    const data = pmUsWire.marketData({
      slug: o.slug,
      bids: side(BID, 'desc'),
      offers: side(ASK, 'asc'),
      state: o.state ?? 'MARKET_STATE_OPEN',
      transactTime: new Date(ts).toISOString(),
    });
    const body = pmUsWire.body('SUBSCRIPTION_TYPE_MARKET_DATA', 'marketData', JSON.stringify(data));
    return each(requestIds, body);
  };
  return {
    book(book: ReplayBook, ts: number): EncodedText[] {
      return whole(book, ts);
    },

    changes(book: ReplayBook, deltas: readonly RecordedDelta[], ts: number): EncodedText[] {
      for (const d of deltas) applyDelta(book, d);
      return whole(book, ts);
    },

    trade(t: RecordedTrade): EncodedText[] {
      const requestIds = ids(o.tradeRequestId);
      if (requestIds.length === 0) return [];
      const trade = pmUsWire.trade({
        slug: o.slug,
        price: price(t.price),
        quantity: formatPlaces(parseDecimal(t.size), qtyPlaces),
        tradeTime: new Date(t.ts).toISOString(),
        takerBuys: t.side === 'buy',
      });
      const body = pmUsWire.body('SUBSCRIPTION_TYPE_TRADE', 'trade', trade);
      return each(requestIds, body);
    },
  };
}
