/**
 * Exact decimals for order books: prices and quantities travel as the venue's strings and are parsed, where
 * arithmetic is needed, into BigInt integers scaled by 10^18. The bounds are those of the history tables'
 * `Decimal(38, 18)` (20 integer and 18 fraction digits; history-store's DECIMAL, which a recorder test holds equal),
 * so every value the recorder stores is exact here too, and every quantity a platform sends fits. Never a
 * JavaScript float.
 */

/** Plain decimal text within the bounds above: no exponent, no `+`, no spaces. */
export const DECIMAL = /^-?[0-9]{1,20}(\.[0-9]{1,18})?$/;

/** Fraction digits of the scaled integers. */
export const SCALE = 18;
const ZEROS = '0'.repeat(SCALE);

export class DecimalError extends TypeError {
  constructor(value: unknown) {
    super(
      `not an exact decimal (at most 20 integer and 18 fraction digits): ${JSON.stringify(String(value)).slice(0, 60)}`,
    );
    this.name = 'DecimalError';
  }
}

/** `"20.25"` → 20250000000000000000n. Throws DecimalError on anything else (exponents, `+`, spaces, too many digits). */
export function parseDecimal(text: string): bigint {
  if (typeof text !== 'string' || !DECIMAL.test(text)) throw new DecimalError(text);
  const dot = text.indexOf('.');
  if (dot < 0) return BigInt(text + ZEROS);
  const fraction = text.slice(dot + 1);
  return BigInt(text.slice(0, dot) + fraction + ZEROS.slice(fraction.length));
}

/** The canonical text of a scaled integer: no exponent, no `+`, no trailing fraction zeros, no bare point. */
export function formatDecimal(value: bigint): string {
  const negative = value < 0n;
  let digits = (negative ? -value : value).toString();
  if (digits.length <= SCALE) digits = digits.padStart(SCALE + 1, '0');
  const integer = digits.slice(0, digits.length - SCALE);
  let end = SCALE;
  const fraction = digits.slice(digits.length - SCALE);
  while (end > 0 && fraction.charCodeAt(end - 1) === 48) end--;
  const text = end === 0 ? integer : `${integer}.${fraction.slice(0, end)}`;
  return negative && text !== '0' ? `-${text}` : text;
}

/** `"0.4800"` → `"0.48"`, validating on the way. */
export function canonicalDecimal(text: string): string {
  return formatDecimal(parseDecimal(text));
}

/**
 * `1 − p` with p's number of fraction digits (`"0.5400"` → `"0.4600"`): Kalshi's NO bid at p is a YES ask at 1 − p.
 * Prices outside [0, 1] are refused.
 */
export function complementOfOne(text: string): string {
  if (!DECIMAL.test(text) || text.startsWith('-')) throw new DecimalError(text);
  const dot = text.indexOf('.');
  const places = dot < 0 ? 0 : text.length - dot - 1;
  const scaled = BigInt(dot < 0 ? text : text.slice(0, dot) + text.slice(dot + 1));
  const one = 10n ** BigInt(places);
  const rest = one - scaled;
  if (rest < 0n) throw new DecimalError(text);
  if (places === 0) return rest.toString();
  const digits = rest.toString().padStart(places + 1, '0');
  return `${digits.slice(0, digits.length - places)}.${digits.slice(digits.length - places)}`;
}

/** Kalshi's legacy integer cents (`41`) as a dollar string (`"0.41"`). */
export function centsToDollars(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new DecimalError(cents);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/**
 * A bounded memo of venue strings → canonical text. Prices sit on a grid and repeat endlessly, so the validation and
 * canonicalisation of a price is paid once; the memo forgets everything when it grows past its bound.
 */
export class CanonicalMemo {
  private readonly map = new Map<string, string>();
  constructor(
    private readonly transform: (text: string) => string = canonicalDecimal,
    private readonly max = 20_000,
  ) {}

  get(text: string): string {
    let out = this.map.get(text);
    if (out === undefined) {
      out = this.transform(text);
      if (this.map.size >= this.max) this.map.clear();
      this.map.set(text, out);
    }
    return out;
  }
}

/** Digits after the point of decimal text (`"20.25"` → 2, `"3"` → 0). */
export function fractionDigits(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/**
 * A scaled integer as text with at least `places` fraction digits (more when the value needs them): the format a
 * venue uses for a quantity it computed, e.g. Kalshi's counts with 2 decimals (`300` → `"300.00"`).
 */
export function formatFixed(value: bigint, places: number): string {
  const text = formatDecimal(value);
  const have = fractionDigits(text);
  if (have >= places) return text;
  return `${text}${have === 0 ? '.' : ''}${'0'.repeat(places - have)}`;
}
