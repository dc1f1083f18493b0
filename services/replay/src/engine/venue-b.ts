// https://docs.kalshi.com/websockets/orderbook-updates, …/websockets/public-trades
/**
 * Kalshi (`venue_b`) as its `orderbook_delta` and `trade` channels write a market (protocols.md §1.3–1.4).
 *
 * - The stored book is the YES book: a bid is a YES bid; an ask at p is a NO bid at 1 − p (the recorder's
 *   `venueBBook`, read backwards). Prices in dollars with at least 4 decimals, counts with at least 2 (the recorder
 *   keeps what Kalshi sent, up to 6 places: nothing is rounded).
 * - The snapshot is an `orderbook_snapshot` (YES and NO bids ascending); every delta row is one `orderbook_delta`
 *   (Kalshi's message carries one level), with `ts` / `ts_ms` the row's.
 * - `seq` counts per subscription (`sid`) and is contiguous: the snapshot and every delta of every market of the
 *   subscription take the next one. A subscription of several markets shares one counter (`KalshiSubscription`),
 *   and a message takes its number when its text is first read (NativeMessage), i.e. when it is sent.
 * - `trade` messages go to the trade subscription's `sid`, without `seq` (the schema defines none [V]).
 * - Each message names its `sid` as its channel (`NativeMessage.channel`): a client may unsubscribe one subscription
 *   of a market and keep the others.
 * - Reset after a recorded gap: an `orderbook_snapshot` on the same subscription at the next `seq` — what Kalshi sends
 *   for `update_subscription`/`get_snapshot` and on a resubscription, and what every client applies as the market's
 *   whole book (the recorder itself re-bases on it). The `seq` stays contiguous because the replay lost nothing of
 *   the subscription's messages; the recorded loss is the recorder's, and the snapshot is where the venue's own
 *   protocol gives a client the book again.
 */
import { ASK, BID, CanonicalMemo, complementOfOne, kalshiWire, parseDecimal } from '@depthgate/feeds';
import { formatPlaces, priceFormat, sideCode, type ReplayBook } from './replay-book';
import { applyDelta, type BookCause, type EncodedText, type VenueEncoder } from './replay';
import type { RecordedDelta, RecordedTrade } from './types';

/** A subscription's `sid` and its last `seq` (shared by the markets it covers). */
export interface KalshiSubscription {
  sid: number;
  seq: number;
}

export interface KalshiEncoderOptions {
  ticker: string;
  /**
   * The `orderbook_delta` subscription, or each of the connection's subscriptions that name the market (a market
   * subscribed twice is sent on both, each with its own `sid` and `seq`, as Kalshi's and the gateway's sockets do).
   * A list is read at each message: a caller may take a subscription out of it (an unsubscribe).
   */
  book: KalshiSubscription | readonly KalshiSubscription[];
  /** The `trade` subscription's sid, or each trade subscription's (a list read at each message, as `book`). */
  tradeSid: number | readonly number[];
  /** Kalshi's market id (a UUID): not recorded; without it the snapshot leaves `market_id` out and deltas send "". */
  marketId?: string;
  /** Snapshot level fields (`yes_dollars_fp`, the current ones, by default). */
  fields?: 'fp' | 'dollars';
}

const PRICE_PLACES = 4;
const COUNT_PLACES = 2;

const dollars = priceFormat(PRICE_PLACES);
const noPrices = new CanonicalMemo((price) => complementOfOne(dollars(price)), 20_000);
/** The NO price of a YES ask (same number of places). */
const noPrice = (price: string) => noPrices.get(price);

export function kalshiEncoder(o: KalshiEncoderOptions): VenueEncoder {
  const subs = Array.isArray(o.book) ? (o.book as readonly KalshiSubscription[]) : [o.book as KalshiSubscription];
  const tradeSids = typeof o.tradeSid === 'number' ? [o.tradeSid] : o.tradeSid;
  return {
    book(book: ReplayBook, _ts: number, _cause: BookCause): EncodedText[] {
      const yes = book.levels(BID, 'asc').map(([p, q]) => [dollars(p), formatPlaces(q, COUNT_PLACES)] as const);
      // NO bids ascending = YES asks descending.
      const no = book.levels(ASK, 'desc').map(([p, q]) => [noPrice(p), formatPlaces(q, COUNT_PLACES)] as const);
      const snapshot = { ticker: o.ticker, marketId: o.marketId, yes, no, fields: o.fields ?? 'fp' } as const;
      return subs.map((sub) => ({
        channel: String(sub.sid),
        text: () => kalshiWire.snapshot(sub.sid, ++sub.seq, snapshot),
      }));
    },

    changes(book: ReplayBook, deltas: readonly RecordedDelta[], ts: number): EncodedText[] {
      const body = kalshiWire.deltaBodies(o.ticker, o.marketId ?? '', ts);
      return deltas.flatMap((d) => {
        applyDelta(book, d);
        const yesSide = sideCode(d.side) === BID;
        const price = yesSide ? dollars(d.price) : noPrice(d.price);
        const delta = formatPlaces(parseDecimal(d.quantity_delta), COUNT_PLACES);
        const msg = body(price, delta, yesSide ? 'yes' : 'no');
        return subs.map((sub) => ({ channel: String(sub.sid), text: () => kalshiWire.delta(sub.sid, ++sub.seq, msg) }));
      });
    },

    trade(t: RecordedTrade): EncodedText[] {
      const yesPrice = dollars(t.price);
      const body = kalshiWire.tradeBody({
        id: t.trade_id,
        ticker: o.ticker,
        yesPrice,
        noPrice: complementOfOne(yesPrice),
        count: formatPlaces(parseDecimal(t.size), COUNT_PLACES),
        takerYes: t.side === 'buy',
        tsMs: t.ts,
      });
      return tradeSids.map((sid) => ({ channel: String(sid), text: kalshiWire.trade(sid, body) }));
    },
  };
}
