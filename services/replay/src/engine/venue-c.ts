// https://docs.gemini.com/websocket/market-data/v2/level-2-data
/**
 * Gemini (`venue_c`) as its market data v2 `l2` subscription writes a symbol (protocols.md §4.2).
 *
 * - The snapshot is the subscription's first `l2_updates`: the whole book as changes (`["buy"|"sell", price,
 *   quantity]`, bids then asks, best first) with `trades` and `auction_events`. Its `trades` ("the last 50") is empty:
 *   trades before the window are not part of it, and every trade of the window comes once, as its own message.
 * - A group of deltas is one `l2_updates` whose changes carry each level's new absolute quantity ("0" removes it),
 *   in recorded order (a level changed twice in the group appears twice, the later one winning, as a client applies
 *   them).
 * - A trade is a `trade` message: `tid` the recorded id (digits, written as a JSON integer whatever its size),
 *   `timestamp` the trade's ms, `side` the taker's. `event_id` is not recorded: the tid is sent in its place.
 * - Prices and quantities: the symbol's places when given (Gemini writes its instruments' fixed precision; the
 *   simulator's too), else the shortest form.
 * - Reset after a recorded gap: the first-message form again (an `l2_updates` with `trades` and `auction_events`), the
 *   whole book at the gap's end. v2 has no sequence and no other snapshot message; this one is what a resubscription
 *   gets, and it is the only message the protocol defines as the whole book: a client (the recorder does) replaces its
 *   book with it.
 */
import { ASK, BID, geminiWire, parseDecimal, type GeminiSide } from '@depthgate/feeds';
import { formatPlaces, priceFormat, sideCode, type Places, type ReplayBook } from './replay-book';
import { applyDelta, type VenueEncoder } from './replay';
import type { RecordedDelta, RecordedTrade } from './types';

export interface GeminiEncoderOptions {
  /** The symbol as the feed spells it (upper case). */
  symbol: string;
  priceDecimals?: Places;
  quantityDecimals?: Places;
}

export function geminiEncoder(o: GeminiEncoderOptions): VenueEncoder {
  const price = priceFormat(o.priceDecimals ?? 'shortest');
  const quantity = (q: bigint) => (q === 0n ? '0' : formatPlaces(q, o.quantityDecimals ?? 'shortest'));
  return {
    book(book: ReplayBook): string[] {
      const changes: string[] = [];
      for (const [side, code, order] of [
        ['buy', BID, 'desc'],
        ['sell', ASK, 'asc'],
      ] as const) {
        for (const [p, q] of book.levels(code, order)) changes.push(geminiWire.change(side, price(p), quantity(q)));
      }
      return [geminiWire.initial(o.symbol, changes, [])];
    },

    changes(book: ReplayBook, deltas: readonly RecordedDelta[]): string[] {
      const changes = deltas.map((d) => {
        const q = applyDelta(book, d);
        const side: GeminiSide = sideCode(d.side) === BID ? 'buy' : 'sell';
        return geminiWire.change(side, price(d.price), quantity(q));
      });
      return [geminiWire.updates(o.symbol, changes)];
    },

    trade(t: RecordedTrade): string[] {
      return [
        geminiWire.trade({
          symbol: o.symbol,
          eventId: t.trade_id,
          timestamp: t.ts,
          price: price(t.price),
          quantity: formatPlaces(parseDecimal(t.size), o.quantityDecimals ?? 'shortest'),
          side: t.side,
          tid: t.trade_id,
        }),
      ];
    },
  };
}
