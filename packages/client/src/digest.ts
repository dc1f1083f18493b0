/**
 * The book digest: one number that says whether two parties hold the same whole book, which a replay keeps current
 * delta by delta at the cost of one multiplication — so a replay verifies every recorded snapshot without reading its
 * rows (the history service answers `format=digest` on the snapshots endpoint: one line per recorded book).
 *
 * Definition (stable; a change would be a new format, never a change of this one):
 *
 * 1. A level's **weight** is a pseudo-random integer of 53 bits taken from its side and canonical price: with
 *    `t` = the UTF-8 bytes of `side + ":" + price` (`bid:0.48`; the price in canonical decimal text, as the history
 *    service writes it), `a` = MurmurHash3 x86_32 of `t` with seed 0 and `b` = the same with seed 1, the weight is
 *    `a · 2^21 + floor(b / 2^11)`, or 1 where that is 0.
 * 2. The book's **digest** is Σ quantity · weight over its levels, modulo the prime 2^61 − 1, each quantity in units
 *    of 10^-18 (the stored scale, `Decimal(38, 18)`: `0.5` is 500000000000000000), written as a decimal integer.
 *    An empty book's is `0`.
 *
 * Because the digest is linear in the quantities, a delta changes it by its own `quantity_delta · weight` — whatever
 * the level held — so a replay keeps it exact with one BigInt multiplication per delta (`OrderBook.digest()`).
 *
 * What it detects: a book that differs from the recorded one in any level has another digest unless the differences
 * cancel modulo the prime; for a difference in one level that needs the quantities to differ by a multiple of
 * 2^61 − 1 units (2.305843009213693951, exactly), for several, a chance of about 2^-53 (the weights' width). It is a
 * check against loss and corruption, not against a party that chooses a book to collide.
 *
 * Example: `bid:0.48` has a = 834796200 and b = 304640021, so weight 1750694520571150; a book of 150 at that level
 * and nothing else has digest 150 · 10^18 · 1750694520571150 mod (2^61 − 1) = 1894132580178927783.
 */

/** A line of the snapshots' digest stream (`format=digest`): a recorded book's ts, its levels and its digest. */
export interface DigestLine {
  ts: string;
  levels: number;
  /** Decimal text of an integer in [0, 2^61 − 1). */
  digest: string;
}

/** The digest's modulus: the Mersenne prime 2^61 − 1. */
export const DIGEST_MODULUS = (1n << 61n) - 1n;

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/**
 * MurmurHash3 x86_32 of a string's UTF-8 bytes (an ASCII string's bytes are its character codes, the case of every
 * weight's text), unsigned.
 */
export function murmur3(text: string, seed: number): number {
  const s = isAscii(text) ? text : String.fromCharCode(...new TextEncoder().encode(text));
  const n = s.length;
  let h = seed | 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    let k = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 8) | (s.charCodeAt(i + 2) << 16) | (s.charCodeAt(i + 3) << 24);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, C2);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  // The last 1–3 bytes.
  const rest = n & 3;
  if (rest > 0) {
    let k = s.charCodeAt(i);
    if (rest > 1) k |= s.charCodeAt(i + 1) << 8;
    if (rest > 2) k |= s.charCodeAt(i + 2) << 16;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, C2);
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** A level's weight (see the module comment): `side` is `bid` or `ask`, `price` canonical decimal text. */
export function levelWeight(side: string, price: string): bigint {
  const t = `${side}:${price}`;
  const w = murmur3(t, 0) * 2_097_152 + Math.floor(murmur3(t, 1) / 2048);
  return BigInt(w === 0 ? 1 : w);
}

/** The digest's text from a running sum Σ quantity · weight (any integer: reduced here). */
export function digestText(sum: bigint): string {
  const r = sum % DIGEST_MODULUS;
  return String(r < 0n ? r + DIGEST_MODULUS : r);
}
