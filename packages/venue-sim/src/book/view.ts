import { formatScaled } from '../core/decimal';
import type { Instrument, IntBook, IntLevel } from './types';

/** A level as exact decimal strings in the venue's precision: [price, quantity]. */
export type DecimalLevel = [string, string];

export interface DecimalBook {
  /** Best first. */
  bids: DecimalLevel[];
  /** Best first. */
  asks: DecimalLevel[];
}

/** A Kalshi book: the generic view (YES bids / YES asks) plus the native YES and NO bids, each best first. */
export interface KalshiBookView extends DecimalBook {
  yes: DecimalLevel[];
  /** NO bids: a YES ask at p is a NO bid at 1 − p. */
  no: DecimalLevel[];
}

export function formatLevels(inst: Instrument, levels: readonly IntLevel[]): DecimalLevel[] {
  return levels.map(([p, q]) => [formatScaled(p, inst.priceDecimals), formatScaled(q, inst.qtyDecimals)]);
}

export function decimalBook(inst: Instrument, book: IntBook): DecimalBook {
  return { bids: formatLevels(inst, book.bids), asks: formatLevels(inst, book.asks) };
}

/**
 * A trade the simulator emitted, as its venue publishes it on every path (WebSocket, REST): the tests' oracle
 * (`sim.trades`, `GET /control/trades`).
 */
export interface SimTrade {
  /**
   * The venue's trade id as text: Kalshi a UUID, Gemini its `tid`, Coinbase its `trade_id`, the Polymarket CLOB its
   * `transaction_hash`. null where the venue sends none (Polymarket US: a trade is named by its market and its
   * `tradeTime`, unique per trade in the simulator; README.md).
   */
  id: string | null;
  ticker: string;
  /** The ticker's trade number: 1, 2, … without gaps. */
  no: number;
  /** Epoch ms: the trade's time as the venue gives it, the same on every path. */
  ts: number;
  /** Exact decimal in the venue's precision, on the book's price scale (Kalshi: the YES price in dollars). */
  price: string;
  size: string;
  /** The taker's side on the book: `buy` (it lifted asks) or `sell` (it hit bids); Kalshi's book is YES. */
  side: 'buy' | 'sell';
  /** The venue's own side field as sent (Kalshi `taker_side`, Coinbase the maker's `side`, the CLOB `BUY`/`SELL`, …). */
  venueSide: string;
}
