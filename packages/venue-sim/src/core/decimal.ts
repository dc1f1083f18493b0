/**
 * Exact decimals. Prices and quantities live as safe integers scaled by 10^decimals (ticks and lots) and are only
 * ever turned into text here; no JavaScript floating point touches them.
 */

const POW10: readonly number[] = Array.from({ length: 16 }, (_, i) => 10 ** i);

function assertScaled(value: number | bigint, decimals: number): void {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new RangeError(`not a safe integer: ${value}`);
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 15) throw new RangeError(`bad decimals: ${decimals}`);
}

/**
 * `formatScaled(4500, 4)` → `"0.4500"`; `formatScaled(-2000, 2)` → `"-20.00"`. A bigint for sums that may outgrow a
 * safe integer (a market's quantity traded since the start).
 */
export function formatScaled(value: number | bigint, decimals: number): string {
  assertScaled(value, decimals);
  const negative = value < 0;
  const digits = String(value).replace('-', '');
  if (decimals === 0) return negative ? `-${digits}` : digits;
  const padded = digits.padStart(decimals + 1, '0');
  const cut = padded.length - decimals;
  const text = `${padded.slice(0, cut)}.${padded.slice(cut)}`;
  return negative ? `-${text}` : text;
}

/** Like formatScaled, with trailing fractional zeros (and a bare point) removed: `"185934.20"` → `"185934.2"`. */
export function formatScaledTrimmed(value: number, decimals: number): string {
  const text = formatScaled(value, decimals);
  if (!text.includes('.')) return text;
  return text.replace(/0+$/, '').replace(/\.$/, '');
}

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

/**
 * Parses a decimal string into a scaled integer. Returns null when the text is not a plain decimal, has more
 * fractional digits than `decimals` (other than trailing zeros), or does not fit a safe integer.
 */
export function parseScaled(text: string, decimals: number): number | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) return null;
  const whole = m[2] ?? '0';
  const value = Number(whole) * (POW10[decimals] ?? 0) + (fraction ? Number(fraction.padEnd(decimals, '0')) : 0);
  if (!Number.isSafeInteger(value)) return null;
  return m[1] ? -value : value;
}

/**
 * A scaled integer as a JSON number, for platforms whose format is a number (`scaledNumber(35, 1)` → 3.5): parsed
 * from the exact decimal text, so it serialises back to that text.
 */
export function scaledNumber(value: number, decimals: number): number {
  return Number(formatScaledTrimmed(value, decimals));
}
