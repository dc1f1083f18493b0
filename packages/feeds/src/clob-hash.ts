// https://docs.polymarket.com/api-reference/wss/market (the `hash` of `book` and of each `price_change` entry)
/**
 * Polymarket CLOB's order-book hash: the `hash` of a market channel `book` message, and of each entry of a
 * `price_change` (the hash of that asset's book after the change, at the message's timestamp). SHA-1, lower-case
 * hex, of the book summary as compact JSON with `hash` set to "" — the server's field order (its Go struct's):
 *
 *   {"market","asset_id","timestamp","hash":"","bids":[{"price","size"}…],"asks":[…],
 *    "min_order_size","tick_size","neg_risk","last_trade_price"}
 *
 * every value the string the venue sends (prices and sizes in their shortest form, `neg_risk` a JSON boolean), bids
 * and asks in the venue's order (best last). Sources: py-clob-client 0.34.4 `generate_orderbook_summary_hash`
 * ("Go server-side payload field order"; its test vectors are this module's known answers), clob-client's
 * `generateOrderBookSummaryHash` (correct on a REST `/book` parsed as is), and recorded production messages
 * (how the simulator emits it: packages/venue-sim/README.md, "Polymarket CLOB market channel").
 *
 * The recipe has changed over time; each known revision is kept, newest first, so a book can be checked against the
 * one its venue used:
 *
 * - `2025-12`: the ten fields above (`last_trade_price` joined around 30 November 2025);
 * - `2025-07`: without `last_trade_price` (`min_order_size`, `tick_size`, `neg_risk` joined in July 2025;
 *   reproduced on production messages of October 2025);
 * - `2024-09`: `market, asset_id, timestamp, hash, bids, asks` (`timestamp` joined in September 2024).
 *
 * A mismatch is not always a lost message: the venue has been seen hashing a book with a `last_trade_price` that
 * reached subscribers only later (py-clob-client-v2 #117). A consumer treats a mismatch as "this book is not
 * verified" and checks it another way (the REST book), not as proof of a loss.
 */
import { createHash } from 'node:crypto';

/** A level as the venue writes it. */
export interface ClobLevel {
  price: string;
  size: string;
}

/** What the hash covers: the book and the asset's settings, as the venue spells them. */
export interface ClobBookSummary {
  market: string;
  asset_id: string;
  /** Epoch milliseconds as the venue's string. */
  timestamp: string;
  /** In the venue's order: bids ascending, asks descending (best last). */
  bids: readonly ClobLevel[];
  asks: readonly ClobLevel[];
  min_order_size: string;
  tick_size: string;
  neg_risk: boolean;
  /** '' before any trade. */
  last_trade_price: string;
}

export const CLOB_HASH_REVISIONS = ['2025-12', '2025-07', '2024-09'] as const;
export type ClobHashRevision = (typeof CLOB_HASH_REVISIONS)[number];

const levels = (list: readonly ClobLevel[]) => list.map((l) => ({ price: l.price, size: l.size }));

/** The JSON text a revision hashes (exposed for tests and for explaining a mismatch). */
export function clobHashedText(book: ClobBookSummary, revision: ClobHashRevision = '2025-12'): string {
  const head = { market: book.market, asset_id: book.asset_id, timestamp: book.timestamp, hash: '' };
  const sides = { bids: levels(book.bids), asks: levels(book.asks) };
  if (revision === '2024-09') return JSON.stringify({ ...head, ...sides });
  const settings = { min_order_size: book.min_order_size, tick_size: book.tick_size, neg_risk: book.neg_risk };
  if (revision === '2025-07') return JSON.stringify({ ...head, ...sides, ...settings });
  return JSON.stringify({ ...head, ...sides, ...settings, last_trade_price: book.last_trade_price });
}

/** The book's hash under a revision of the recipe (default: the current one). */
export function clobBookHash(book: ClobBookSummary, revision: ClobHashRevision = '2025-12'): string {
  return createHash('sha1').update(clobHashedText(book, revision)).digest('hex');
}

/** The newest known revision under which `hash` is the book's, or undefined when none reproduces it. */
export function clobHashRevision(book: ClobBookSummary, hash: string): ClobHashRevision | undefined {
  return CLOB_HASH_REVISIONS.find((r) => clobBookHash(book, r) === hash);
}
