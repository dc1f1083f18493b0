// https://docs.polymarket.com/api-reference/wss/market
/**
 * Polymarket CLOB (`venue_a_clob`) as its market channel writes an asset (protocols.md §2.1–2.2). The ticker is the
 * asset (token) id; its book is its own.
 *
 * - The snapshot is a `book`: bids ascending and asks descending (best last), prices and sizes in their shortest form,
 *   `timestamp` the ms as a string, `hash` the summary hash (`clobBookHash`, current recipe) of exactly what it says.
 * - A group of deltas is one `price_change` whose entries (one per delta, in order) carry the level's new aggregate
 *   size ("0" removes), `side` BUY (bids) or SELL (asks), the asset's `best_bid`/`best_ask` after the entry ("0" for an
 *   empty side) and the `hash` of the asset's book after the entry at the message's timestamp [V: production data].
 * - A trade is a `last_trade_price` (`side` the taker's, `fee_rate_bps` "0" — not recorded —, `transaction_hash` the
 *   recorded id when it is one, else ""), after which the asset's `last_trade_price` is the trade's price; then, as the
 *   venue does after a trade, a `book` at the trade's timestamp (its hash counts the new last trade price). While no
 *   book is known (inside a gap) the trade comes alone.
 * - Not recorded, so taken from the options (what the server knows of the market) and otherwise assumed: `market`
 *   (the condition id; required), `min_order_size` ("5"), `tick_size` ("0.01"), `neg_risk` (false) — the values of the
 *   production book in protocols.md §2.2. `last_trade_price` is the window's last earlier trade (`lastTrade`; also in
 *   the first book of a window without a book at its start), or "" when none is known, then each replayed trade's.
 * - Reset after a recorded gap: a `book` (the venue's whole-book message, which every client takes as the asset's
 *   book; the venue sends one on subscription and after trades), hashed like every other. The channel has no
 *   sequence: the hash of each later message proves the client's book from there on.
 */
import { ASK, BID, clobBookHash, clobWire, formatDecimal, parseDecimal, type ClobBookSummary } from '@depthgate/feeds';
import { sideCode, type ReplayBook } from './replay-book';
import { applyDelta, type BookCause, type VenueEncoder } from './replay';
import type { RecordedDelta, RecordedTrade } from './types';

export interface ClobEncoderOptions {
  /** The token id. */
  asset: string;
  /** The market's condition id (0x…). */
  market: string;
  minOrderSize?: string;
  tickSize?: string;
  negRisk?: boolean;
}

export const CLOB_ASSUMED = { minOrderSize: '5', tickSize: '0.01', negRisk: false } as const;

const shortest = (text: string) => formatDecimal(parseDecimal(text));
const TX_HASH = /^0x[0-9a-fA-F]{1,128}$/;

export function clobEncoder(o: ClobEncoderOptions): VenueEncoder {
  let lastTradePrice = '';
  const summary = (book: ReplayBook, ts: number): ClobBookSummary => ({
    market: o.market,
    asset_id: o.asset,
    timestamp: String(ts),
    bids: book.shortestLevels(BID, 'asc').map(([price, size]) => ({ price, size })),
    asks: book.shortestLevels(ASK, 'desc').map(([price, size]) => ({ price, size })),
    min_order_size: o.minOrderSize ?? CLOB_ASSUMED.minOrderSize,
    tick_size: o.tickSize ?? CLOB_ASSUMED.tickSize,
    neg_risk: o.negRisk ?? CLOB_ASSUMED.negRisk,
    last_trade_price: lastTradePrice,
  });
  const bookMessage = (book: ReplayBook, ts: number) => clobWire.book(clobWire.summary(summary(book, ts)));
  return {
    book(book: ReplayBook, ts: number, cause: BookCause): string[] {
      if (cause.kind === 'start' && cause.lastTrade) lastTradePrice = shortest(cause.lastTrade.price);
      return [bookMessage(book, ts)];
    },

    changes(book: ReplayBook, deltas: readonly RecordedDelta[], ts: number): string[] {
      const entries = deltas.map((d) => {
        const q = applyDelta(book, d);
        const s = summary(book, ts);
        // Best last in the summary's order.
        const bestBid = s.bids[s.bids.length - 1]?.price ?? '0';
        const bestAsk = s.asks[s.asks.length - 1]?.price ?? '0';
        return clobWire.change({
          asset: o.asset,
          price: shortest(d.price),
          size: formatDecimal(q),
          side: sideCode(d.side) === BID ? 'BUY' : 'SELL',
          hash: clobBookHash(s),
          bestBid,
          bestAsk,
        });
      });
      return [clobWire.priceChange(o.market, entries, ts)];
    },

    trade(t: RecordedTrade, book: ReplayBook | undefined): string[] {
      lastTradePrice = shortest(t.price);
      const trade = clobWire.lastTradePrice({
        asset: o.asset,
        market: o.market,
        price: lastTradePrice,
        size: shortest(t.size),
        side: t.side === 'buy' ? 'BUY' : 'SELL',
        timestamp: t.ts,
        feeRateBps: '0',
        transactionHash: TX_HASH.test(t.trade_id) ? t.trade_id : '',
      });
      return book ? [trade, bookMessage(book, t.ts)] : [trade];
    },

    startWithoutBook(t: RecordedTrade): string[] {
      // Sent nothing of (the channel names it only in books): the first book, at a gap's end, says it.
      lastTradePrice = shortest(t.price);
      return [];
    },
  };
}
