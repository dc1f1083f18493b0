/**
 * The wire grammar of a moment in a request, read to epoch milliseconds (the `start_ts`, `end_ts` and `at`
 * parameters, contract/params.ts; also the seed CLI's times).
 *
 * RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`. `T` may be `t` or a space and `Z` may be `z`
 * (RFC 3339 §5.6). A space where the offset's `+` should be is read as `+`: an unencoded `+` in a query string
 * arrives as a space, and nothing else can be meant there.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+\- ])(\d{2}):(\d{2}))$/;

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
  const digits = (frac ?? '').padEnd(9, '0');
  const millis = Number(digits.slice(0, 3));
  const below = Number(digits.slice(3)) > 0;
  const base = utcMillis(year, month, day, hour, minute, second, millis);
  return base - offsetMinutes * 60_000 + (below && rounding === 'ceil' ? 1 : 0);
}
