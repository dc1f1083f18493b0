/**
 * The text primitives of the row renderer: the canonical text of one column value (docs/history.md, "Formats"),
 * written by straight-line code from the RowBinary bytes into a buffer, and the little-endian words those bytes are
 * read as. `ts` is UTC RFC 3339 with milliseconds; a decimal is in plain notation with trailing fractional zeros (and
 * a bare point) removed; `sequence` is a JSON integer. A Decimal(38,18) is a 128-bit two's-complement integer of units
 * of 1e-18.
 *
 * Each writer takes the bytes at `src[o]` and the output at `out[p]` and returns the new end of `out`. Texts that
 * rows repeat are cached (a price grid's decimals, a day's date, a ticker's sequence thousands, a burst's timestamp).
 */

const TWO_31 = 2_147_483_648;
export const TWO_32 = 4_294_967_296;
const E9 = 1_000_000_000;

/** The ASCII bytes of a literal text (the literal parts of a row). */
export const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

/** "00".."99" as byte pairs. */
const PAIRS = Buffer.alloc(200);
for (let i = 0; i < 100; i++) {
  PAIRS[2 * i] = 0x30 + Math.floor(i / 10);
  PAIRS[2 * i + 1] = 0x30 + (i % 10);
}
const DIGITS = Buffer.alloc(24);

/** Unsigned 32-bit little-endian word (as a double: no sign trouble above 2^31). */
export function u32(src: Buffer, o: number): number {
  return i32(src, o) >>> 0;
}

/**
 * Signed 32-bit little-endian word. The hot paths (these writers and the renderer's loop) read words this way: an int32 stays a small integer that V8
 * passes and stores unboxed, where a word above 2^31 as a double becomes a heap number at every call or store (tens
 * of MB of garbage per million rows).
 */
export function i32(src: Buffer, o: number): number {
  return (
    (src[o] as number) | ((src[o + 1] as number) << 8) | ((src[o + 2] as number) << 16) | ((src[o + 3] as number) << 24)
  );
}

/** Epoch ms of the Int64 at `src[o]` (a valid row's: between 0 and MAX_TS, so exact as a double). */
export function readTs(src: Buffer, o: number): number {
  return i32(src, o + 4) * TWO_32 + (i32(src, o) >>> 0);
}

/**
 * A little-endian two's-complement Int128 at `src[o]` (a Decimal(38, 18)'s units) as a BigInt; one 64-bit read when
 * its high half is 0 (prices, quantities and sizes mostly: they are never negative).
 */
export function int128(src: Buffer, o: number): bigint {
  if (src.readUInt32LE(o + 8) === 0 && src.readUInt32LE(o + 12) === 0) return src.readBigUInt64LE(o);
  return BigInt.asIntN(128, (src.readBigUInt64LE(o + 8) << 64n) | src.readBigUInt64LE(o));
}

/** `text` into `out` at `p`: byte by byte when short, else by `set` (a memory copy, about 10 ns whatever its length). */
export function copy(text: Buffer, out: Buffer, p: number): number {
  const n = text.length;
  if (n > 12) out.set(text, p);
  else for (let i = 0; i < n; i++) out[p + i] = text[i] as number;
  return p + n;
}

/** `floor(v / 1e9)` for an integer 0 ≤ v < 2^53: a multiplication by the reciprocal, corrected by one step. */
function div9(v: number): number {
  const q = Math.floor(v * INV_E9);
  const r = v - q * E9;
  return r < 0 ? q - 1 : r >= E9 ? q + 1 : q;
}
const INV_E9 = 1 / E9;

/** `floor(v / 100)` for an integer 0 ≤ v < 2^53, as `div9`. */
function div100(v: number): number {
  const q = Math.floor(v * 0.01);
  const r = v - q * 100;
  return r < 0 ? q - 1 : r >= 100 ? q + 1 : q;
}

/** A non-negative integer below 2^53 in decimal. */
function writeInteger(v: number, out: Buffer, p: number): number {
  if (v < TWO_31) return writeSmallInteger(v, out, p);
  let n = 0;
  while (v >= TWO_31) {
    const q = div100(v);
    const r = (v - q * 100) * 2;
    DIGITS[n++] = PAIRS[r + 1] as number;
    DIGITS[n++] = PAIRS[r] as number;
    v = q;
  }
  p = writeSmallInteger(v, out, p);
  while (n > 0) out[p++] = DIGITS[--n] as number;
  return p;
}

/** A non-negative integer below 2^31 in decimal (int32 arithmetic: `/ 100 | 0` is a multiplication). */
function writeSmallInteger(v: number, out: Buffer, p: number): number {
  const digits =
    v < 100_000
      ? v < 100
        ? v < 10
          ? 1
          : 2
        : v < 1000
          ? 3
          : v < 10_000
            ? 4
            : 5
      : v < 10_000_000
        ? v < 1_000_000
          ? 6
          : 7
        : v < 100_000_000
          ? 8
          : v < 1_000_000_000
            ? 9
            : 10;
  let k = p + digits;
  while (v >= 100) {
    const q = (v / 100) | 0;
    const r = (v - q * 100) * 2;
    out[--k] = PAIRS[r + 1] as number;
    out[--k] = PAIRS[r] as number;
    v = q;
  }
  // What is left (below 100) goes first, at p.
  if (v >= 10) {
    out[p] = PAIRS[v * 2] as number;
    out[p + 1] = PAIRS[v * 2 + 1] as number;
  } else out[p] = 0x30 + v;
  return p + digits;
}

/** Exactly nine digits of `v` (0 ≤ v < 1e9), zero-padded; with `trim`, trailing zeros are left out. */
function writeNine(v: number, out: Buffer, p: number, trim: boolean): number {
  let k = p + 7;
  for (let i = 0; i < 4; i++) {
    const q = (v / 100) | 0;
    const r = (v - q * 100) * 2;
    out[k] = PAIRS[r] as number;
    out[k + 1] = PAIRS[r + 1] as number;
    k -= 2;
    v = q;
  }
  out[p] = 0x30 + v;
  let end = p + 9;
  if (trim) while (out[end - 1] === 0x30) end--;
  return end;
}

/**
 * Direct-mapped cache of rendered decimals (prices repeat: a book moves on a grid). 4,096 slots of 41 bytes: a
 * column's text is at most MAX_DECIMAL_TEXT, a 128-bit value's (a sum, decimalText) one more.
 */
const CACHE_BITS = 12;
const CACHE_SLOT = 41;
const CACHE_KEYS = new Int32Array(4 << CACHE_BITS);
const CACHE_LENGTH = Buffer.alloc(1 << CACHE_BITS);
const CACHE_TEXT = Buffer.alloc(CACHE_SLOT << CACHE_BITS);

/**
 * Magnitudes whose third word is below this (below 0x70000 · 2^64 units, about 8.46 million) have a quotient by 1e9
 * below 2^53: formatDecimal18's short path.
 */
const SHORT_W2 = 0x70000;

/** A Decimal(38, 18) at `src[o]` in canonical text; returns the new end of `out`. */
export function writeDecimal18(src: Buffer, o: number, out: Buffer, p: number): number {
  const w0 = i32(src, o);
  const w1 = i32(src, o + 4);
  const w2 = i32(src, o + 8);
  const w3 = i32(src, o + 12);
  const slot =
    Math.imul(w0 ^ Math.imul(w1, 0x9e3779b1) ^ Math.imul(w2 ^ w3, 0x85ebca6b), 0x2545f491) >>> (32 - CACHE_BITS);
  const k = slot << 2;
  const cached = CACHE_LENGTH[slot] as number;
  if (
    cached !== 0 &&
    CACHE_KEYS[k] === w0 &&
    CACHE_KEYS[k + 1] === w1 &&
    CACHE_KEYS[k + 2] === w2 &&
    CACHE_KEYS[k + 3] === w3
  ) {
    for (let i = 0, t = slot * CACHE_SLOT; i < cached; i++) out[p + i] = CACHE_TEXT[t + i] as number;
    return p + cached;
  }
  const end = formatDecimal18(w0, w1, w2, w3, out, p);
  CACHE_KEYS[k] = w0;
  CACHE_KEYS[k + 1] = w1;
  CACHE_KEYS[k + 2] = w2;
  CACHE_KEYS[k + 3] = w3;
  CACHE_LENGTH[slot] = end - p;
  for (let i = 0, t = slot * CACHE_SLOT; i < end - p; i++) CACHE_TEXT[t + i] = out[p + i] as number;
  return end;
}

/**
 * The text of a Decimal(38, 18) given as four little-endian 32-bit words (int32, as read). The magnitude is split
 * into 16-bit limbs and divided twice by 1e9 in doubles (every intermediate stays below 2^53, so each step is exact);
 * the two remainders are the 18 fractional digits and the quotient is the integer part. Magnitudes below SHORT_W2 ·
 * 2^64 units (8.46 million) take their upper 64 bits as one double and divide the quotient once; those of 2^96 units
 * (7.9e10) and more go through BigInt. Every value passed on is below 2^31 (see i32).
 */
function formatDecimal18(w0: number, w1: number, w2: number, w3: number, out: Buffer, p: number): number {
  if (w3 < 0) {
    out[p++] = 0x2d; // '-'
    // Two's complement: invert and add one.
    w0 = ~w0;
    w1 = ~w1;
    w2 = ~w2;
    w3 = ~w3;
    w0 = (w0 + 1) | 0;
    if (w0 === 0) {
      w1 = (w1 + 1) | 0;
      if (w1 === 0) {
        w2 = (w2 + 1) | 0;
        if (w2 === 0) w3 = (w3 + 1) | 0;
      }
    }
  }
  if (w3 !== 0) return writeWideDecimal18(w0, w1, w2, w3, out, p);
  const e = w0 >>> 16;
  const f = w0 & 0xffff;
  let cur: number;
  if (w2 >= 0 && w2 < SHORT_W2) {
    // The upper 64 bits as one double (w2·2^32 + w1 < 2^51, exact), then two 16-bit limbs: each step divides
    // (remainder · 65536 + limb) < 1e9 · 65536 by 1e9. The quotient (the value in units of 1e-9) stays below 2^53.
    cur = w2 * TWO_32 + (w1 >>> 0);
    const qa = div9(cur);
    cur = (cur - qa * E9) * 65536 + e;
    const qe = div9(cur);
    cur = (cur - qe * E9) * 65536 + f;
    const qf = div9(cur);
    cur -= qf * E9;
    const quotient = (qa * 65536 + qe) * 65536 + qf;
    // Integer part (< 2^53 / 1e9) and the upper nine fractional digits.
    const ip = div9(quotient);
    return writeParts(0, ip, quotient - ip * E9, cur, out, p);
  }
  // Limbs of 16 bits, most significant first: c d (w1), e f (w0), below w2 (one limb of 32 bits).
  const c = w1 >>> 16;
  const d = w1 & 0xffff;
  cur = w2 >>> 0;
  const qb = div9(cur);
  cur = (cur - qb * E9) * 65536 + c;
  const qc = div9(cur);
  cur = (cur - qc * E9) * 65536 + d;
  const qd = div9(cur);
  cur = (cur - qd * E9) * 65536 + e;
  const qe = div9(cur);
  cur = (cur - qe * E9) * 65536 + f;
  const qf = div9(cur);
  cur -= qf * E9;
  // The quotient (< 2^96 / 1e9 < 2^67) has the limbs qb·2^64 + qc·2^48 + qd·2^32 + qe·2^16 + qf: divide it
  // again, limb by limb.
  let top = qb * 65536 + qc;
  const rb = div9(top);
  top = (top - rb * E9) * 65536 + qd;
  const rd = div9(top);
  top = (top - rd * E9) * 65536 + qe;
  const re = div9(top);
  top = (top - re * E9) * 65536 + qf;
  const rf = div9(top);
  // Integer part (< 2^96 / 1e18 < 2^37), in two: its digits above the lower nine, and those nine.
  const integer = ((rb * 65536 + rd) * 65536 + re) * 65536 + rf;
  const upper = div9(integer);
  return writeParts(upper, integer - upper * E9, top - rf * E9, cur, out, p);
}

/**
 * `integer.high low` with the fraction (two groups of nine digits) trimmed of trailing zeros; the integer part is
 * `upper · 1e9 + lower`.
 */
function writeParts(upper: number, lower: number, high: number, low: number, out: Buffer, p: number): number {
  if (upper === 0) p = writeInteger(lower, out, p);
  else {
    p = writeInteger(upper, out, p);
    p = writeNine(lower, out, p, false);
  }
  if (low === 0) {
    if (high === 0) return p;
    out[p] = 0x2e; // '.'
    return writeNine(high, out, p + 1, true);
  }
  out[p] = 0x2e;
  p = writeNine(high, out, p + 1, false);
  return writeNine(low, out, p, true);
}

const SCALE = 10n ** 18n;

function writeWideDecimal18(w0: number, w1: number, w2: number, w3: number, out: Buffer, p: number): number {
  const v = (BigInt(w3 >>> 0) << 96n) | (BigInt(w2 >>> 0) << 64n) | (BigInt(w1 >>> 0) << 32n) | BigInt(w0 >>> 0);
  let text = (v / SCALE).toString();
  const fraction = v % SCALE;
  if (fraction !== 0n) text += `.${fraction.toString().padStart(18, '0').replace(/0+$/, '')}`;
  for (let i = 0; i < text.length; i++) out[p + i] = text.charCodeAt(i);
  return p + text.length;
}

/** The day part `YYYY-MM-DDT` of the last timestamp rendered, cached: rows of a response mostly share their day. */
let cachedDay = Number.NaN;
const DAY_TEXT = Buffer.alloc(11);

/**
 * A row's opening up to its second field, `{"ts":"2026-03-26T14:00:01.193Z","sequence":` for instance, with the text
 * of the last timestamp kept: rows of a book, and bursts of deltas, share their `ts`.
 */
export class TimestampField {
  private readonly text: Buffer;
  /** The Int64 whose text `text` holds, as two int32 words (-1 high: none yet, no valid ts has it). */
  private lo = 0;
  private hi = -1;

  constructor(
    before: string,
    private readonly after: string,
  ) {
    this.text = bytes(`${before}${'0'.repeat(24)}${after}`);
  }

  get length(): number {
    return this.text.length;
  }

  /** The field for the Int64 timestamp at `src[o]` (a valid one: see readTs). */
  write(src: Buffer, o: number, out: Buffer, p: number): number {
    const text = this.text;
    const lo = i32(src, o);
    const hi = i32(src, o + 4);
    if (lo !== this.lo || hi !== this.hi) {
      // Day and millisecond of the day (small integers) go to the formatter, not the timestamp (a boxed double).
      const ts = hi * TWO_32 + (lo >>> 0);
      const day = Math.floor(ts / DAY_MS);
      formatDayTime(day, ts - day * DAY_MS, text, text.length - this.after.length - 24);
      this.lo = lo;
      this.hi = hi;
    }
    return copy(text, out, p);
  }
}

/** `ts` (epoch ms, 0 ≤ ts ≤ MAX_TS) as `YYYY-MM-DDTHH:MM:SS.mmmZ` (tests). */
export function writeTimestamp(ts: number, out: Buffer, p: number): number {
  return formatTimestamp(ts, out, p);
}

const DAY_MS = 86_400_000;

function formatTimestamp(ts: number, out: Buffer, p: number): number {
  const day = Math.floor(ts / DAY_MS);
  return formatDayTime(day, ts - day * DAY_MS, out, p);
}

/** Day `day` (since 1970-01-01) at `ms` milliseconds of that day, as formatTimestamp writes it. */
function formatDayTime(day: number, ms: number, out: Buffer, p: number): number {
  if (day !== cachedDay) {
    const iso = new Date(day * DAY_MS).toISOString();
    for (let i = 0; i < 11; i++) DAY_TEXT[i] = iso.charCodeAt(i);
    cachedDay = day;
  }
  for (let i = 0; i < 11; i++) out[p + i] = DAY_TEXT[i] as number;
  // Below 86,400,000: int32 arithmetic, where a division by a constant is a multiplication.
  let t = ms | 0;
  const h = (t / 3_600_000) | 0;
  t -= h * 3_600_000;
  const m = (t / 60_000) | 0;
  t -= m * 60_000;
  const s = (t / 1000) | 0;
  t -= s * 1000;
  const hundreds = (t / 100) | 0;
  const rest = (t - hundreds * 100) * 2;
  out[p + 11] = PAIRS[h * 2] as number;
  out[p + 12] = PAIRS[h * 2 + 1] as number;
  out[p + 13] = 0x3a;
  out[p + 14] = PAIRS[m * 2] as number;
  out[p + 15] = PAIRS[m * 2 + 1] as number;
  out[p + 16] = 0x3a;
  out[p + 17] = PAIRS[s * 2] as number;
  out[p + 18] = PAIRS[s * 2 + 1] as number;
  out[p + 19] = 0x2e;
  out[p + 20] = 0x30 + hundreds;
  out[p + 21] = PAIRS[rest] as number;
  out[p + 22] = PAIRS[rest + 1] as number;
  out[p + 23] = 0x5a; // 'Z'
  return p + 24;
}

/** Widest decimal text: sign, 20 integer digits, point, 18 fractional digits. */
export const MAX_DECIMAL_TEXT = 40;
/** Widest UInt64 in decimal. */
export const MAX_SEQUENCE_TEXT = 20;

/**
 * The decimal text of the last sequence's thousands (its digits but the last three), kept: sequences of a ticker
 * mostly count up, so a thousand rows in a row share them. `SEQUENCE_THOUSANDS[0]` is their value (-1: none).
 */
const SEQUENCE_THOUSANDS = new Float64Array([-1]);
const SEQUENCE_PREFIX = Buffer.alloc(MAX_SEQUENCE_TEXT);
let sequencePrefixLength = 0;

/** A UInt64 at `src[o]` in decimal (exact above 2^53 too); returns the new end of `out`. */
export function writeSequence(src: Buffer, o: number, out: Buffer, p: number): number {
  const hi = i32(src, o + 4);
  if (hi >= 0 && hi < 0x200000) {
    const v = hi * TWO_32 + (i32(src, o) >>> 0);
    let thousands = Math.floor(v * 0.001);
    let units = v - thousands * 1000;
    // v · 0.001 is rounded: correct the quotient by one step either way.
    if (units < 0) {
      thousands--;
      units += 1000;
    } else if (units >= 1000) {
      thousands++;
      units -= 1000;
    }
    if (thousands === 0) return writeInteger(units, out, p);
    if (thousands !== SEQUENCE_THOUSANDS[0]) {
      sequencePrefixLength = writeInteger(thousands, SEQUENCE_PREFIX, 0);
      SEQUENCE_THOUSANDS[0] = thousands;
    }
    for (let i = 0; i < sequencePrefixLength; i++) out[p + i] = SEQUENCE_PREFIX[i] as number;
    p += sequencePrefixLength;
    const hundreds = (units / 100) | 0;
    const rest = (units - hundreds * 100) * 2;
    out[p] = 0x30 + hundreds;
    out[p + 1] = PAIRS[rest] as number;
    out[p + 2] = PAIRS[rest + 1] as number;
    return p + 3;
  }
  const text = ((BigInt(hi >>> 0) << 32n) | BigInt(i32(src, o) >>> 0)).toString();
  for (let i = 0; i < text.length; i++) out[p + i] = text.charCodeAt(i);
  return p + text.length;
}

/**
 * A decimal held as a scaled BigInt (units of 1e-18, the Decimal(38, 18) columns) in canonical text. Any value of 128
 * bits, which sums of stored amounts stay within.
 */
export function decimalText(value: bigint): string {
  const buf = Buffer.alloc(16);
  const v = BigInt.asUintN(128, value);
  buf.writeBigUInt64LE(v & 0xffff_ffff_ffff_ffffn, 0);
  buf.writeBigUInt64LE(v >> 64n, 8);
  // Sign, 21 integer digits (2^127 / 10^18), point, 18 fractional digits.
  const out = Buffer.alloc(MAX_DECIMAL_TEXT + 2);
  return out.subarray(0, writeDecimal18(buf, 0, out, 0)).toString('latin1');
}

/** `ts` (epoch ms) as the canonical timestamp text, `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export function timestampText(ts: number): string {
  const out = Buffer.alloc(24);
  formatTimestamp(ts, out, 0);
  return out.toString('latin1');
}
