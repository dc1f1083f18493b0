import { hashInts } from './rng';

/**
 * A UUID-shaped (version 4 layout) identifier named by a key and integers: the same inputs give the same id, so an
 * id can be recomputed on every path that names the thing (a trade's id on the feed, on REST, in the oracle).
 */
export function uuidOf(key: number, ...ints: number[]): string {
  const h = [0, 1, 2, 3]
    .map((i) =>
      hashInts(key, ...ints, i)
        .toString(16)
        .padStart(8, '0'),
    )
    .join('');
  const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
