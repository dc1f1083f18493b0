/**
 * The project's one seeded pseudo-random generator: sfc32, seeded through cyrb128 from a text. Everything that must
 * replay the same way from the same seed draws from it — the venue simulator (catalogues, book processes,
 * identifiers) and the history data generator (tickers, book profiles, series) — so a simulated or generated world
 * depends only on its seed and labels, never on timing, worker count or insert order.
 *
 * Not for secrets: use node:crypto for those.
 */

/** cyrb128: four 32-bit words from a text (bryc's public-domain hash, used as a seed mixer). */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** A stable 32-bit hash of a text (choices that must not consume a stream's numbers). */
export function hash32(text: string): number {
  return cyrb128(text)[0];
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /**
   * An independent stream per (seed, ...labels): `new Rng(42, 'kalshi', 'KXBTCD-26MAR07-T100000')`. The stream is
   * that of the text `${seed}|${labels.join('|')}`.
   */
  constructor(seed: number | string, ...labels: string[]) {
    [this.a, this.b, this.c, this.d] = cyrb128(`${seed}|${labels.join('|')}`);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1), in steps of 2^-32. */
  float(): number {
    return this.next() / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    if (n <= 1) return 0;
    if (n <= 0x100000000) return this.next() % n;
    return (this.next() * 0x100000000 + this.next()) % n;
  }

  /** An integer in [lo, hi] (inclusive). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability percent/100 (integer percent keeps it exact). */
  percent(percent: number): boolean {
    return this.int(100) < percent;
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  /** Exponentially distributed with the given mean (the gaps between Poisson arrivals). */
  exponential(mean: number): number {
    return -Math.log(1 - this.float()) * mean;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  hex(chars: number): string {
    let out = '';
    while (out.length < chars) out += this.next().toString(16).padStart(8, '0');
    return out.slice(0, chars);
  }

  /** An RFC 4122 version-4 shaped identifier, deterministic for the stream. */
  uuid(): string {
    const h = this.hex(32);
    const variant = ((parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** A decimal string of `digits` digits with no leading zero (e.g. ERC-1155 token ids). */
  decimalDigits(digits: number): string {
    let out = String(this.range(1, 9));
    while (out.length < digits) out += String(this.int(10));
    return out;
  }
}

/**
 * A seeded integer hash: the same inputs always give the same unsigned 32-bit value. For values drawn per index
 * (per minute, per trade) where building an `Rng` stream for each would cost too much; `key` is typically a stream's
 * first `next()`. Inputs are safe integers; each is folded in as two 32-bit halves.
 */
export function hashInts(key: number, ...ints: number[]): number {
  let h = key >>> 0;
  for (const v of ints) {
    h = mix(h ^ (v >>> 0));
    h = mix(h ^ (Math.floor(v / 0x100000000) >>> 0) ^ 0x9e3779b9);
  }
  return mix(h);
}

/** murmur3's 32-bit finaliser. */
function mix(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
