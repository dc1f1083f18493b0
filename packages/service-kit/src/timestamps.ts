/**
 * Timestamps as the history API reads them (its query parameters, the seed CLI's bounds): one parser, exact to the
 * millisecond. A moment is given either as RFC 3339 text or as integer epoch milliseconds (`parseMoment`).
 */

/**
 * RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, the fraction of any number of digits (the RFC sets
 * no limit). `T` may be `t` or a space and `Z` may be `z` (RFC 3339 §5.6). A space where the offset's `+` should be
 * is read as `+`: an unencoded `+` in a query string arrives as a space, and nothing else can be meant there.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+\- ])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Date.UTC without its 1900 offset for years 0–99. */
function utcMillis(year: number, month: number, day: number, h: number, mi: number, s: number, ms: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, mi, s, ms);
  return d.getTime();
}

/**
 * Parses an RFC 3339 timestamp to epoch milliseconds. Sub-millisecond digits are rounded towards the inside of the
 * range they bound: `start_ts` rounds up (`ceil`: a row at .000 is before .0005), `end_ts` rounds down (`floor`).
 * Returns undefined when the text is not RFC 3339.
 */
export function parseRfc3339(text: string, rounding: 'floor' | 'ceil' = 'floor'): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // 60 is a leap second (RFC 3339 §5.7); it is counted as the first millisecond ranges of the next minute.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (!z) {
    const offH = Number(oh);
    const offM = Number(om);
    if (offH > 23 || offM > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (offH * 60 + offM);
  }
  const digits = frac ?? '';
  const millis = Number(digits.slice(0, 3).padEnd(3, '0'));
  // Sub-milliseconds: whether any digit past the third is not 0, read as text (a fraction may have any length).
  const below = /[1-9]/.test(digits.slice(3));
  const base = utcMillis(year, month, day, hour, minute, second, millis);
  const moment = base - offsetMinutes * 60_000 + (below && rounding === 'ceil' ? 1 : 0);
  // The offset can carry a moment past the four-digit years (9999-12-31T23:59:59.999-00:01): no RFC 3339 UTC text
  // names it, so nothing could echo it back.
  return moment < FIRST_MOMENT || moment > LAST_MOMENT ? undefined : moment;
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the moments RFC 3339 UTC text can name. */
const FIRST_MOMENT = -62_167_219_200_000;
const LAST_MOMENT = 253_402_300_799_999;

/**
 * Integer epoch milliseconds as text: 13 digits, the first not 0 — every millisecond from 2001-09-09T01:46:40Z to
 * 2286-11-20T17:46:39.999Z, the form `Date.now()` and most libraries give. Shorter numbers are refused rather than
 * guessed at: 10 digits are epoch seconds. No sign, no fraction, no exponent, no padding.
 */
export const EPOCH_MS_PATTERN = /^[1-9][0-9]{12}$/;

/** Integer epoch seconds of the same span (10 digits): the mistake `parseMoment`'s refusals name. */
const EPOCH_SECONDS_PATTERN = /^[1-9][0-9]{9}$/;

/**
 * A moment as the history API takes it, to epoch milliseconds: RFC 3339 (`parseRfc3339`, sub-milliseconds rounded
 * as `rounding` says) or integer epoch milliseconds (`EPOCH_MS_PATTERN`, exact). Undefined when the text is
 * neither.
 */
export function parseMoment(text: string, rounding: 'floor' | 'ceil' = 'floor'): number | undefined {
  return EPOCH_MS_PATTERN.test(text) ? Number(text) : parseRfc3339(text, rounding);
}

/** Whether a text `parseMoment` refused reads as epoch seconds (so the refusal can say to multiply by 1000). */
export function looksLikeEpochSeconds(text: string): boolean {
  return EPOCH_SECONDS_PATTERN.test(text);
}

/** The one rule of every timestamp parameter, as its refusal and its OpenAPI description state it. */
export const TIMESTAMP_HINT =
  'expected an RFC 3339 timestamp such as 2026-03-07T00:00:00Z or 2026-03-07T01:00:00.250+01:00, or integer epoch milliseconds (13 digits) such as 1772841600000';

/** The message of a timestamp parameter `name` whose text `parseMoment` refused (the history API's and the replay's). */
export function invalidTimestampMessage(name: string, text: string): string {
  return looksLikeEpochSeconds(text)
    ? `${name} is not a valid timestamp (${text} looks like epoch seconds; give milliseconds, ${text}000): ${TIMESTAMP_HINT}`
    : `${name} is not a valid timestamp: ${TIMESTAMP_HINT}`;
}
