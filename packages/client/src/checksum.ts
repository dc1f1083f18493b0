/**
 * The book checksum: a cheap way for two parties to check that they hold the same book without sending it.
 *
 * Definition (stable; a change would be a new function, never a change of this one):
 *
 * 1. Take the top `depth` levels of each side (default 25), best first: bids by price descending, asks ascending.
 * 2. Write each level as `price:quantity` in canonical decimal text (as the history service writes it: no exponent,
 *    no trailing fraction zeros, no bare point — `0.48:150`).
 * 3. Interleave them — bid 1, ask 1, bid 2, ask 2, … — skipping a side once it has no more levels, and join
 *    everything with `:`. An empty book is the empty string.
 * 4. The checksum is the CRC-32 (IEEE 802.3, the polynomial of zlib, gzip and PNG) of that text's UTF-8 bytes, as an
 *    unsigned 32-bit integer.
 *
 * The interleaving follows the checksums exchanges publish for their books (OKX, Kraken's v1 feed), so the text is
 * familiar; unlike theirs, it is computed on canonical decimals, so `0.4800` and `0.48` agree.
 *
 * Example: bids 0.48 × 150 and 0.47 × 100, asks 0.5 × 20.25 → CRC-32 of `0.48:150:0.5:20.25:0.47:100`.
 */
import { canonicalDecimal } from './decimal.js';

/** A price level as exact decimal strings. */
export interface Level {
  price: string;
  quantity: string;
}

const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}

/** CRC-32 (IEEE) of a string's UTF-8 bytes, unsigned. */
export function crc32(text: string): number {
  let crc = -1;
  const byte = (b: number) => {
    crc = (TABLE[(crc ^ b) & 0xff] as number) ^ (crc >>> 8);
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) byte(c);
    else if (c < 0x800) {
      byte(0xc0 | (c >> 6));
      byte(0x80 | (c & 0x3f));
    } else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      c = 0x10000 + ((c - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00);
      byte(0xf0 | (c >> 18));
      byte(0x80 | ((c >> 12) & 0x3f));
      byte(0x80 | ((c >> 6) & 0x3f));
      byte(0x80 | (c & 0x3f));
    } else {
      byte(0xe0 | (c >> 12));
      byte(0x80 | ((c >> 6) & 0x3f));
      byte(0x80 | (c & 0x3f));
    }
  }
  return (crc ^ -1) >>> 0;
}

/** The checksum text of step 3 (useful to see why two checksums differ). */
export function checksumText(bids: readonly Level[], asks: readonly Level[], depth = 25): string {
  const parts: string[] = [];
  const n = Math.min(depth, Math.max(bids.length, asks.length));
  for (let i = 0; i < n; i++) {
    const b = bids[i];
    const a = asks[i];
    if (b) parts.push(`${canonicalDecimal(b.price)}:${canonicalDecimal(b.quantity)}`);
    if (a) parts.push(`${canonicalDecimal(a.price)}:${canonicalDecimal(a.quantity)}`);
  }
  return parts.join(':');
}

/**
 * The checksum of a book given as levels best first (an `OrderBook`'s `bids()`/`asks()`, the history service's
 * book answer, or anyone else's book).
 */
export function bookChecksum(bids: readonly Level[], asks: readonly Level[], depth = 25): number {
  return crc32(checksumText(bids, asks, depth));
}
