/**
 * Timestamps: the service writes UTC RFC 3339 with exactly three fraction digits (`2026-03-26T14:00:01.193Z`) and
 * reads any RFC 3339 date-time. Rows keep the text; the book works in epoch milliseconds, parsed here without a
 * `Date` on the hot path.
 */

/** Days from 1970-01-01 to the given civil date (proleptic Gregorian; H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digits(text: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

let memoText = '';
let memoMs = NaN;
/** The last valid date (`YYYY-MM-DD`) and its epoch ms at midnight. */
let memoDateText = '';
let memoDateMs = NaN;

/**
 * Epoch milliseconds of the service's timestamp form `YYYY-MM-DDTHH:MM:SS.mmmZ`, or NaN for any other text
 * (including impossible dates). Other RFC 3339 forms go through `parseTimestamp`. Rows come in time order: many
 * share a `ts`, and nearly all share the date of the one before, so the last text and the last date are
 * remembered and only the time of day is read.
 */
export function parseServiceTimestamp(text: string): number {
  if (text === memoText) return memoMs;
  if (
    text.length !== 24 ||
    text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(19) !== 46 ||
    text.charCodeAt(23) !== 90
  ) {
    return NaN;
  }
  let day = memoDateMs;
  if (memoDateText.length !== 10 || !text.startsWith(memoDateText)) {
    day = dateMs(text);
    if (Number.isNaN(day)) return NaN;
    memoDateText = text.slice(0, 10);
    memoDateMs = day;
  }
  // The time of day, digit by digit: each (code − 48) must be 0–9 (one unsigned comparison: below 0 wraps).
  const h1 = text.charCodeAt(11) - 48;
  const h2 = text.charCodeAt(12) - 48;
  const m1 = text.charCodeAt(14) - 48;
  const m2 = text.charCodeAt(15) - 48;
  const s1 = text.charCodeAt(17) - 48;
  const s2 = text.charCodeAt(18) - 48;
  const f1 = text.charCodeAt(20) - 48;
  const f2 = text.charCodeAt(21) - 48;
  const f3 = text.charCodeAt(22) - 48;
  if (
    h1 >>> 0 > 9 ||
    h2 >>> 0 > 9 ||
    m1 >>> 0 > 9 ||
    m2 >>> 0 > 9 ||
    s1 >>> 0 > 9 ||
    s2 >>> 0 > 9 ||
    f1 >>> 0 > 9 ||
    f2 >>> 0 > 9 ||
    f3 >>> 0 > 9
  ) {
    return NaN;
  }
  const h = h1 * 10 + h2;
  const mi = m1 * 10 + m2;
  const s = s1 * 10 + s2;
  if (h > 23 || mi > 59 || s > 59) return NaN;
  memoText = text;
  memoMs = day + h * 3_600_000 + mi * 60_000 + s * 1000 + f1 * 100 + f2 * 10 + f3;
  return memoMs;
}

/** Epoch ms at midnight of the `YYYY-MM-DD` the text starts with, or NaN (an impossible date too). */
function dateMs(text: string): number {
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return NaN;
  const y = digits(text, 0, 4);
  const mo = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1) return NaN;
  const leap = mo === 2 && ((y % 4 === 0 && y % 100 !== 0) || y % 400 === 0);
  if (d > (DAYS_IN_MONTH[mo - 1] as number) + (leap ? 1 : 0)) return NaN;
  return daysFromCivil(y, mo, d) * 86_400_000;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * How a moment's sub-milliseconds round, as the history service reads its timestamp parameters (`parseRfc3339`,
 * packages/service-kit): towards the inside of the range they bound — `ceil` for a range's start (`start_ts`: a row at
 * .000 is before .0005), `floor` for its end and for a moment (`end_ts`, `at`).
 */
export type Rounding = 'floor' | 'ceil';

/**
 * Epoch milliseconds of any RFC 3339 date-time (a fraction of any length, sub-milliseconds rounded as `rounding` says:
 * down by default), or NaN. A leap second (`:60`) is the next minute's first, as the service reads it.
 */
export function parseTimestamp(text: string, rounding: Rounding = 'floor'): number {
  const fast = parseServiceTimestamp(text);
  if (!Number.isNaN(fast)) return fast;
  const m = typeof text === 'string' ? RFC3339.exec(text) : null;
  if (!m) return NaN;
  const [, y, mo, d, h, mi, s, frac, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const leap = month === 2 && ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (DAYS_IN_MONTH[month - 1] as number) + (leap ? 1 : 0)) return NaN;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60 || Number(oh ?? 0) > 23 || Number(om ?? 0) > 59) return NaN;
  const offset = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  const ms =
    Number((frac ?? '').padEnd(3, '0').slice(0, 3)) +
    (rounding === 'ceil' && /[1-9]/.test((frac ?? '').slice(3)) ? 1 : 0);
  return (
    daysFromCivil(year, month, day) * 86_400_000 +
    Number(h) * 3_600_000 +
    Number(mi) * 60_000 +
    Number(s) * 1000 +
    ms -
    offset * 60_000
  );
}

/** The service's form of an epoch-ms moment: `2026-03-26T14:00:01.193Z`. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * `formatTimestamp(ms)` for a row's `ts` text already read as `ms`: the text itself when it has the service's form
 * (`YYYY-MM-DDTHH:MM:SS.mmmZ`, seconds below 60: read as `ms`, such a text can only be `formatTimestamp(ms)`), so the
 * replay names a moment per book without a `Date` or reading the text again.
 */
export function formatTimestampLike(text: string, ms: number): string {
  return text.length === 24 &&
    text.charCodeAt(10) === 84 && // T
    text.charCodeAt(17) < 54 && // seconds' first digit 0-5 (a leap second's 60 is the next minute's 00)
    text.charCodeAt(19) === 46 && // .
    text.charCodeAt(23) === 90 // Z
    ? text
    : formatTimestamp(ms);
}

/**
 * Integer epoch milliseconds as text, as the history API takes them: 13 digits, the first not 0 (2001-09-09 to
 * 2286-11-20). Ten digits (epoch seconds) and anything signed, fractional or padded are not a moment.
 */
const EPOCH_MS_TEXT = /^[1-9][0-9]{12}$/;

/**
 * A moment as callers give it — the history API's one rule (docs/history.md, "Parameters and their edges"): epoch
 * milliseconds (a number; or its 13-digit text), a `Date`, or RFC 3339 text. Sub-milliseconds (of a number or the
 * text) round as the service rounds them: a range's `start` up, its `end` and a moment (`at`) down. The client always
 * sends the service RFC 3339 with milliseconds.
 */
export type Moment = number | Date | string;

/** The moments RFC 3339 text can name (years 1970 to 9999), as epoch ms. */
const LAST_MOMENT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Epoch ms of a moment, sub-milliseconds rounded as `rounding` says (down by default; `ceil` for a range's start); NaN
 * when it is not one (a moment of any form outside years 1970–9999 included, as the Python client refuses it).
 */
export function momentMs(m: Moment, rounding: Rounding = 'floor'): number {
  let ms: number;
  if (typeof m === 'number') ms = rounding === 'ceil' ? Math.ceil(m) : Math.floor(m);
  else if (m instanceof Date) ms = m.getTime();
  else if (typeof m === 'string' && EPOCH_MS_TEXT.test(m)) ms = Number(m);
  else ms = parseTimestamp(m, rounding);
  // One range for every form (NaN and the infinities fail it too).
  return ms >= 0 && ms <= LAST_MOMENT ? ms : NaN;
}
