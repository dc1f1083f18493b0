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
