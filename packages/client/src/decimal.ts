/**
 * Exact decimals. Prices and sizes travel as decimal strings (`"0.48"`, `"-150"`, `"0.00121425"`) and are never
 * JavaScript numbers; where arithmetic is needed they become a `Decimal`: a BigInt of units and a scale (the number
 * of fraction digits), so every sum, difference and product is exact.
 *
 * The accepted text is plain decimal notation: an optional `-`, digits, optionally a point and digits
 * (`-?[0-9]+(\.[0-9]+)?`). No exponent, no `+`, no spaces, no bare point: what the history service writes
 * (docs/history.md, "Decimals"), and what a venue sends. Leading and trailing zeros are allowed on input;
 * `toString()` gives the canonical text the service writes (no trailing fraction zeros, no bare point, no `-0`),
 * so two equal values always print the same.
 */
import { DataError } from './errors.js';

/** @internal A decimal in plain notation (`-?digits[.digits]`), as a pattern's source (rows.ts reads lines with it). */
export const PLAIN_DECIMAL = String.raw`-?[0-9]+(?:\.[0-9]+)?`;
const PLAIN = new RegExp(`^${PLAIN_DECIMAL}$`);
/** The canonical text the service writes: `0`, `12`, `-0.5`, `0.48`; no `-0`, no trailing fraction zero. */
const CANONICAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?$/;

function invalid(text: unknown): DataError {
  const shown = typeof text === 'string' ? text : String(text);
  return new DataError('invalid_decimal', 'not a decimal number in plain notation', { text: shown });
}

/** True when `text` is a decimal in the canonical form (so text equality is value equality). */
export function isCanonicalDecimal(text: string): boolean {
  return CANONICAL.test(text) && text !== '-0';
}

/** True when `text` is a decimal in plain notation (`-?digits[.digits]`). */
export function isDecimal(text: string): boolean {
  return typeof text === 'string' && PLAIN.test(text);
}

/** The canonical text of a decimal string (`"0.4800"` → `"0.48"`, `"-0"` → `"0"`); throws `invalid_decimal`. */
export function canonicalDecimal(text: string): string {
  if (isCanonicalDecimal(text)) return text;
  return Decimal.parse(text).toString();
}

/**
 * Compares two decimal strings by value, exactly, without allocating: negative, zero or positive as `a` is below,
 * equal to or above `b`. Both must be canonical (`isCanonicalDecimal`); the order of other text is undefined.
 */
export function compareCanonical(a: string, b: string): number {
  const negA = a.charCodeAt(0) === 45;
  const negB = b.charCodeAt(0) === 45;
  if (negA !== negB) return negA ? -1 : 1;
  const m = compareMagnitude(a, negA ? 1 : 0, b, negB ? 1 : 0);
  return negA ? -m : m;
}

function compareMagnitude(a: string, ia: number, b: string, ib: number): number {
  let dotA = a.indexOf('.', ia);
  let dotB = b.indexOf('.', ib);
  if (dotA < 0) dotA = a.length;
  if (dotB < 0) dotB = b.length;
  const intA = dotA - ia;
  const intB = dotB - ib;
  if (intA !== intB) return intA - intB;
  for (let i = 0; i < intA; i++) {
    const d = a.charCodeAt(ia + i) - b.charCodeAt(ib + i);
    if (d !== 0) return d;
  }
  // Fractions: compare digit by digit, a missing digit being a zero.
  const fa = a.length - dotA - 1;
  const fb = b.length - dotB - 1;
  const n = Math.max(fa, fb);
  for (let i = 1; i <= n; i++) {
    const ca = i <= fa ? a.charCodeAt(dotA + i) : 48;
    const cb = i <= fb ? b.charCodeAt(dotB + i) : 48;
    if (ca !== cb) return ca - cb;
  }
  return 0;
}

const TEN = 10n;
const POW10: bigint[] = [1n];
function pow10(n: number): bigint {
  for (let i = POW10.length; i <= n; i++) POW10.push((POW10[i - 1] as bigint) * TEN);
  return POW10[n] as bigint;
}

/**
 * An exact decimal number: `units × 10^-scale` with BigInt units. Immutable; every operation returns a new value,
 * normalised (no trailing zero units at a positive scale), so equal values have equal `units` and `scale`.
 *
 * ```ts
 * Decimal.parse('0.1').add(Decimal.parse('0.2')).toString(); // '0.3'
 * Decimal.parse('0.47').add('0.48').half().toString();       // '0.475'
 * ```
 */
export class Decimal {
  static readonly ZERO = new Decimal(0n, 0);

  private constructor(
    /** The value times 10^scale. */
    readonly units: bigint,
    /** Fraction digits (≥ 0). */
    readonly scale: number,
  ) {}

  /** Parses plain decimal text; throws a `DataError` (`invalid_decimal`) for anything else. */
  static parse(text: string): Decimal {
    if (typeof text !== 'string' || !PLAIN.test(text)) throw invalid(text);
    const dot = text.indexOf('.');
    if (dot < 0) return new Decimal(BigInt(text), 0);
    return Decimal.of(BigInt(text.slice(0, dot) + text.slice(dot + 1)), text.length - dot - 1);
  }

  /** A Decimal from text or a Decimal. */
  static from(value: string | Decimal): Decimal {
    return value instanceof Decimal ? value : Decimal.parse(value);
  }

  /** `units × 10^-scale`, normalised. */
  static of(units: bigint, scale = 0): Decimal {
    if (!Number.isInteger(scale) || scale < 0) throw new RangeError(`scale must be a non-negative integer: ${scale}`);
    while (scale > 0 && units % TEN === 0n) {
      units /= TEN;
      scale--;
    }
    return new Decimal(units, scale);
  }

  add(other: string | Decimal): Decimal {
    const o = Decimal.from(other);
    const s = Math.max(this.scale, o.scale);
    return Decimal.of(this.units * pow10(s - this.scale) + o.units * pow10(s - o.scale), s);
  }

  sub(other: string | Decimal): Decimal {
    return this.add(Decimal.from(other).neg());
  }

  mul(other: string | Decimal): Decimal {
    const o = Decimal.from(other);
    return Decimal.of(this.units * o.units, this.scale + o.scale);
  }

  /** Exactly half (one more fraction digit when the last one is odd). */
  half(): Decimal {
    return Decimal.of(this.units * 5n, this.scale + 1);
  }

  neg(): Decimal {
    return new Decimal(-this.units, this.scale);
  }

  abs(): Decimal {
    return this.units < 0n ? this.neg() : this;
  }

  /** -1, 0 or 1. */
  sign(): -1 | 0 | 1 {
    return this.units < 0n ? -1 : this.units > 0n ? 1 : 0;
  }

  /** Negative, zero or positive as this is below, equal to or above `other`. */
  cmp(other: string | Decimal): -1 | 0 | 1 {
    const o = Decimal.from(other);
    const s = Math.max(this.scale, o.scale);
    const a = this.units * pow10(s - this.scale);
    const b = o.units * pow10(s - o.scale);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  eq(other: string | Decimal): boolean {
    return this.cmp(other) === 0;
  }
  lt(other: string | Decimal): boolean {
    return this.cmp(other) < 0;
  }
  lte(other: string | Decimal): boolean {
    return this.cmp(other) <= 0;
  }
  gt(other: string | Decimal): boolean {
    return this.cmp(other) > 0;
  }
  gte(other: string | Decimal): boolean {
    return this.cmp(other) >= 0;
  }
  isZero(): boolean {
    return this.units === 0n;
  }

  /** The canonical text: `"0.48"`, `"-150"`, `"0"`. */
  toString(): string {
    return formatUnits(this.units, this.scale);
  }

  toJSON(): string {
    return this.toString();
  }
}

/** The canonical text of `units × 10^-scale` (trailing fraction zeros dropped). */
export function formatUnits(units: bigint, scale: number): string {
  const negative = units < 0n;
  let digits = (negative ? -units : units).toString();
  if (scale === 0) return negative ? `-${digits}` : digits;
  if (digits.length <= scale) digits = digits.padStart(scale + 1, '0');
  const cut = digits.length - scale;
  let end = digits.length;
  while (end > cut && digits.charCodeAt(end - 1) === 48) end--;
  const text = end === cut ? digits.slice(0, cut) : `${digits.slice(0, cut)}.${digits.slice(cut, end)}`;
  return negative && text !== '0' ? `-${text}` : text;
}

const SMALL_POW10: bigint[] = Array.from({ length: 40 }, (_, i) => 10n ** BigInt(i));
/** 10^0 … 10^15 as doubles (exact). */
const POW10_NUMBER: number[] = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * Units of 10^-scale of a plain decimal text, or undefined when it is not plain decimal text or has more than
 * `scale` fraction digits (so it cannot be held exactly at that scale). The book's hot path: up to 15 digits are
 * gathered in a number (exact: below 2^53) and scaled as one BigInt, without building strings; longer text goes
 * through BigInt's own parser.
 */
export function parseScaled(text: string, scale: number): bigint | undefined {
  const n = text.length;
  const negative = text.charCodeAt(0) === 45;
  let i = negative ? 1 : 0;
  let dot = -1;
  let digits = 0;
  let value = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (dot >= 0 || digits === 0) return undefined;
      dot = i;
    } else if (c >= 48 && c <= 57) {
      digits++;
      value = value * 10 + (c - 48);
    } else return undefined;
  }
  if (digits === 0 || dot === n - 1) return undefined;
  const fraction = dot < 0 ? 0 : n - dot - 1;
  if (fraction > scale || scale >= SMALL_POW10.length) return undefined;
  let units: bigint;
  const shift = scale - fraction;
  if (digits <= 15) {
    // One BigInt when the scaled value is still an exact integer in a double (below 2^53), else two.
    const scaled = value * (POW10_NUMBER[shift] as number);
    units =
      shift < POW10_NUMBER.length && scaled <= Number.MAX_SAFE_INTEGER
        ? BigInt(scaled)
        : BigInt(value) * (SMALL_POW10[shift] as bigint);
  } else {
    const start = negative ? 1 : 0;
    const all = dot < 0 ? text.slice(start) : text.slice(start, dot) + text.slice(dot + 1);
    units = BigInt(all) * (SMALL_POW10[scale - fraction] as bigint);
  }
  return negative ? -units : units;
}
