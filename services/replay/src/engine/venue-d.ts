// https://docs.cdp.coinbase.com/exchange/websocket-feed/channels
/**
 * Coinbase Exchange (`venue_d`) as its `level2` and `matches` channels write a product (protocols.md §5.2).
 *
 * - The snapshot is a `snapshot` (bids and asks best first, `[price, size]`; no time, no sequence [V]); after it, at
 *   the window's start, the `last_match` the channel sends first when the window's last earlier trade is known (a
 *   window without a book at its start: the `last_match` alone, first).
 * - A group of deltas is one `l2update`: `changes` carry each level's new size ("0" in the size's places removes it),
 *   `time` the group's ts (RFC 3339, microseconds).
 * - A trade is a `match`: `trade_id` the recorded id, `side` the **maker's** (the recorded `venue_side`, which is the
 *   feed's own field; where it is not buy/sell, the opposite of the taker's side), `time` the trade's. Not recorded
 *   and so derived: `sequence` is the row's `sequence` (the ticker's counter: increasing, like the product's feed
 *   sequence, and like it not consecutive between matches), `maker_order_id`/`taker_order_id` are UUID-shaped digests
 *   of the trade id (stable across replays, not the venue's order ids).
 * - Prices and sizes: the product's places when given (Coinbase writes fixed places: quote increment, 8 for sizes),
 *   else the shortest form.
 * - Reset after a recorded gap: a new `snapshot`. level2 has no sequence; the snapshot is what a (re)subscription
 *   gets, and clients (the official ones, ccxt, the recorder) replace the product's book with any snapshot.
 * - Each message names its channel (`NativeMessage.channel`): `level2` for `snapshot` and `l2update` (`level2_batch`
 *   shares it), `matches` for `match` and `last_match` — a client may unsubscribe one and keep the other.
 */
import { createHash } from 'node:crypto';
import { ASK, BID, coinbaseWire, isoMicros, parseDecimal, type CoinbaseSide } from '@depthgate/feeds';
import { formatPlaces, priceFormat, sideCode, type Places, type ReplayBook } from './replay-book';
import { applyDelta, type BookCause, type EncodedText, type VenueEncoder } from './replay';
import type { RecordedDelta, RecordedTrade } from './types';

export interface CoinbaseEncoderOptions {
  product: string;
  priceDecimals?: Places;
  sizeDecimals?: Places;
}

/** A UUID-shaped id derived from a trade id and a role (Coinbase's order ids are UUIDs; ours are not recorded). */
function orderId(tradeId: string, role: 'maker' | 'taker'): string {
  const h = createHash('sha1').update(`${role}|${tradeId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function coinbaseEncoder(o: CoinbaseEncoderOptions): VenueEncoder {
  const price = priceFormat(o.priceDecimals ?? 'shortest');
  const size = (q: bigint) => formatPlaces(q, o.sizeDecimals ?? 'shortest');
  const match = (t: RecordedTrade, type: 'match' | 'last_match'): EncodedText => {
    const maker: CoinbaseSide =
      t.venue_side === 'buy' || t.venue_side === 'sell' ? t.venue_side : t.side === 'buy' ? 'sell' : 'buy';
    const text = coinbaseWire.match({
      type,
      tradeId: t.trade_id,
      sequence: t.sequence,
      makerOrderId: orderId(t.trade_id, 'maker'),
      takerOrderId: orderId(t.trade_id, 'taker'),
      time: isoMicros(t.ts),
      product: o.product,
      size: formatPlaces(parseDecimal(t.size), o.sizeDecimals ?? 'shortest'),
      price: price(t.price),
      side: maker,
    });
    return { channel: 'matches', text };
  };
  const level2 = (text: string): EncodedText => ({ channel: 'level2', text });
  return {
    book(book: ReplayBook, _ts: number, cause: BookCause): EncodedText[] {
      const side = (code: typeof BID | typeof ASK, order: 'asc' | 'desc') =>
        book.levels(code, order).map(([p, q]) => [price(p), size(q)] as const);
      const out = [level2(coinbaseWire.snapshot(o.product, side(BID, 'desc'), side(ASK, 'asc')))];
      if (cause.kind === 'start' && cause.lastTrade) out.push(match(cause.lastTrade, 'last_match'));
      return out;
    },

    changes(book: ReplayBook, deltas: readonly RecordedDelta[], ts: number): EncodedText[] {
      const changes = deltas.map((d) => {
        const q = applyDelta(book, d);
        return coinbaseWire.change(sideCode(d.side) === BID ? 'buy' : 'sell', price(d.price), size(q));
      });
      return [level2(coinbaseWire.l2update(o.product, changes, isoMicros(ts)))];
    },

    trade(t: RecordedTrade): EncodedText[] {
      return [match(t, 'match')];
    },

    startWithoutBook(t: RecordedTrade): EncodedText[] {
      return [match(t, 'last_match')];
    },
  };
}
