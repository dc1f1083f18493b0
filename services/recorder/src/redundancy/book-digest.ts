/**
 * A digest of a book's state, for a hand-over (redundant recording, /work/notes/redundant-design.md §3.5): the owner
 * that hands a ticker over sends the digest of its book at the splice point; the new owner compares it with its own
 * book there. Equal books give equal digests whatever text the venue used for a quantity ("5", "5.00"): each level is
 * hashed as `side:price:quantity` with the canonical price key and the canonical quantity, in price order per side.
 */
import { createHash } from 'node:crypto';
import { formatDecimal, type LocalBook } from '@depthgate/feeds';

export function bookDigest(book: LocalBook): string {
  const hash = createHash('sha1');
  for (const [code, levels] of [
    ['b', book.bids],
    ['a', book.asks],
  ] as const) {
    // Price keys are canonical decimal text; ordered as strings (a fixed order is all a digest needs).
    for (const price of [...levels.keys()].sort()) {
      hash.update(`${code}:${price}:${formatDecimal((levels.get(price) as { q: bigint }).q)}\n`);
    }
  }
  return hash.digest('hex');
}
