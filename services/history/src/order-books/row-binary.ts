/**
 * Turns ClickHouse's `RowBinary` output of a window query into the rows of the answer: the members of the response's
 * JSON array, NDJSON lines or CSV lines (docs/history.md, "Bulk streams"), with `received_ts` when asked for.
 *
 * Why here and not in ClickHouse: rendering a row's JSON text in SQL (`concat`, `formatDateTime`, a decimal trim)
 * cost ClickHouse 18.16 about 2 ms of its CPU per 1,000-row answer — half of everything it did for the request —
 * while the raw columns in `RowBinary` cost it the least of every output format. ClickHouse is the shared, stateful
 * part of the system and the service is the part that scales out, so the text is made here, by straight-line code
 * over the bytes (no per-row objects, no strings): measured in docs/benchmarks.md.
 *
 * The layouts are fixed by the window queries' column lists and the tables' column types, both in
 * @depthgate/history-store (READ_COLUMNS; checked against the live tables at start-up by `verifyReadColumns`):
 *
 *   delta:    ts Int64 | sequence UInt64 | side Enum8 | price Decimal(38,18) | quantity_delta Decimal(38,18)  (49 bytes)
 *   snapshot: ts Int64 | side Enum8 | price Decimal(38,18) | quantity Decimal(38,18)                             (41 bytes)
 *
 * and, when a request asks for it, `received_ts Int64` after them (57 and 49 bytes). All little-endian; a
 * Decimal(38,18) is a 128-bit two's-complement integer of units of 1e-18.
 *
 * The output is the canonical text of docs/history.md ("Formats"): `ts` as UTC RFC 3339 with milliseconds, decimals
 * in plain notation with trailing fractional zeros (and a bare point) removed, `sequence` as a JSON integer.
 *
 * It also guards the stream. When ClickHouse fails after it started sending (a time limit reached, a killed query), it
 * appends the exception text to a body already sent with status 200. Every row carries a byte that can only be 1 or
 * 2 (`side`) and a timestamp that must fall between 1970 and 9999; exception text is printable ASCII, so the first
 * row it overlaps fails those checks, and a result that does not end on a row boundary is rejected at its end.
 *
 * It can hold rows back (`holdFrom`, `takeHeld`) so that its caller passes on only some of them (`pass`): the rest of
 * one book (the never-cut-a-book rule, `cutAtBook`, applied by the order-book reader), or none (the look-ahead row
 * that tells a delta page it was cut). It remembers the key of the last row it passed on (`lastKey`: ts, sequence and
 * how many rows in a row carried them), where a next page continues. And it places gap markers among the rows
 * (`setMarkers`): a marker at F goes after every row with ts ≤ F and before the first with ts > F.
 */
import type { RowKind } from '@depthgate/history-store';

export class CorruptStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptStreamError';
  }
}

/** How rows are written: members of a JSON array, NDJSON lines, or CSV lines. */
export type TextFormat = 'json' | 'ndjson' | 'csv';

interface Layout {
  /** Bytes per row. */
  size: number;
  /** Offset of the `side` byte. */
  side: number;
  /** The row carries `received_ts` after its own columns. */
  received: boolean;
  /**
   * Renders the row at `src[o]` into `out[p]` (a JSON object, or a CSV line without its newline), with `received_ts`
   * when `received`; returns the new end.
   */
  render: (src: Buffer, o: number, out: Buffer, p: number, received: boolean) => number;
  /** Longest text of one row (every field at its widest), plus one for the separator. */
  maxText: number;
}

const SIDE_BID = 1;
const SIDE_ASK = 2;
/** 9999-12-31T23:59:59.999Z: the last instant with a four-digit year. */
const MAX_TS = 253_402_300_799_999;
const TWO_31 = 2_147_483_648;
const TWO_32 = 4_294_967_296;
const E9 = 1_000_000_000;
const COMMA = 0x2c;
const NEWLINE = 0x0a;

/** ASCII of the literal parts of a row. */
const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');
const T_DELTA_BID = bytes(',"side":"bid","price":"');
const T_DELTA_ASK = bytes(',"side":"ask","price":"');
const T_SNAPSHOT_BID = bytes('bid","price":"');
const T_SNAPSHOT_ASK = bytes('ask","price":"');
const T_QUANTITY_DELTA = bytes('","quantity_delta":"');
const T_QUANTITY = bytes('","quantity":"');
const T_END = bytes('"}');
const T_CSV_BID = bytes(',bid,');
const T_CSV_ASK = bytes(',ask,');
const T_COMMA = bytes(',');

/** "00".."99" as byte pairs. */
const PAIRS = Buffer.alloc(200);
for (let i = 0; i < 100; i++) {
  PAIRS[2 * i] = 0x30 + Math.floor(i / 10);
  PAIRS[2 * i + 1] = 0x30 + (i % 10);
}
const DIGITS = Buffer.alloc(24);

/** Unsigned 32-bit little-endian word (as a double: no sign trouble above 2^31). */
function u32(src: Buffer, o: number): number {
  return i32(src, o) >>> 0;
}

/**
 * Signed 32-bit little-endian word. The hot paths below read words this way: an int32 stays a small integer that V8
 * passes and stores unboxed, where a word above 2^31 as a double becomes a heap number at every call or store (tens
 * of MB of garbage per million rows).
 */
function i32(src: Buffer, o: number): number {
  return (
    (src[o] as number) | ((src[o + 1] as number) << 8) | ((src[o + 2] as number) << 16) | ((src[o + 3] as number) << 24)
  );
}

/** `text` into `out` at `p`: byte by byte when short, else by `set` (a memory copy, about 10 ns whatever its length). */
function copy(text: Buffer, out: Buffer, p: number): number {
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

/** Direct-mapped cache of rendered decimals (prices repeat: a book moves on a grid). 4,096 slots of 40 bytes. */
const CACHE_BITS = 12;
const CACHE_KEYS = new Int32Array(4 << CACHE_BITS);
const CACHE_LENGTH = Buffer.alloc(1 << CACHE_BITS);
const CACHE_TEXT = Buffer.alloc(40 << CACHE_BITS);

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
    for (let i = 0, t = slot * 40; i < cached; i++) out[p + i] = CACHE_TEXT[t + i] as number;
    return p + cached;
  }
  const end = formatDecimal18(w0, w1, w2, w3, out, p);
  CACHE_KEYS[k] = w0;
  CACHE_KEYS[k + 1] = w1;
  CACHE_KEYS[k + 2] = w2;
  CACHE_KEYS[k + 3] = w3;
  CACHE_LENGTH[slot] = end - p;
  for (let i = 0, t = slot * 40; i < end - p; i++) CACHE_TEXT[t + i] = out[p + i] as number;
  return end;
}

/**
 * The text of a Decimal(38, 18) given as four little-endian 32-bit words (int32, as read). The magnitude is split
 * into 16-bit limbs and divided twice by 1e9 in doubles (every intermediate stays below 2^53, so each step is exact);
 * the two remainders are the 18 fractional digits and the quotient is the integer part. Magnitudes below 2^64 units
 * (18.4) skip the upper limbs; those of 2^96 units (7.9e10) and more go through BigInt. Every value passed on is
 * below 2^31 (see i32).
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
  // Limbs of 16 bits, most significant first: c d (w1), e f (w0), below w2 (one limb of 32 bits). Each step below
  // divides (remainder · 65536 + next limb) < 1e9 · 65536 by 1e9.
  const c = w1 >>> 16;
  const d = w1 & 0xffff;
  const e = w0 >>> 16;
  const f = w0 & 0xffff;
  let cur: number;
  if (w2 === 0) {
    // First division by 1e9 over c d e f; the quotient (< 2^64 / 1e9 < 2^35) is exact as a double.
    cur = c * 65536 + d;
    const qd = div9(cur);
    cur = (cur - qd * E9) * 65536 + e;
    const qe = div9(cur);
    cur = (cur - qe * E9) * 65536 + f;
    const qf = div9(cur);
    cur -= qf * E9;
    const quotient = (qd * 65536 + qe) * 65536 + qf;
    // Integer part (< 19) and the upper nine fractional digits.
    const ip = div9(quotient);
    return writeParts(0, ip, quotient - ip * E9, cur, out, p);
  }
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
class TimestampField {
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
  const h = Math.floor(ms / 3_600_000);
  ms -= h * 3_600_000;
  const m = Math.floor(ms / 60_000);
  ms -= m * 60_000;
  const s = Math.floor(ms / 1000);
  ms -= s * 1000;
  const hundreds = Math.floor(ms / 100);
  const rest = (ms - hundreds * 100) * 2;
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
const MAX_DECIMAL_TEXT = 40;
/** Widest UInt64 in decimal. */
const MAX_SEQUENCE_TEXT = 20;

/** Epoch ms of the Int64 at `src[o]` (a valid row's: between 0 and MAX_TS, so exact as a double). */
function readTs(src: Buffer, o: number): number {
  return i32(src, o + 4) * TWO_32 + (i32(src, o) >>> 0);
}

/**
 * The decimal text of the last sequence's thousands (its digits but the last three), kept: sequences of a ticker
 * mostly count up, so a thousand rows in a row share them. `SEQUENCE_THOUSANDS[0]` is their value (-1: none).
 */
const SEQUENCE_THOUSANDS = new Float64Array([-1]);
const SEQUENCE_PREFIX = Buffer.alloc(MAX_SEQUENCE_TEXT);
let sequencePrefixLength = 0;

/** A UInt64 at `src[o]` in decimal (exact above 2^53 too); returns the new end of `out`. */
function writeSequence(src: Buffer, o: number, out: Buffer, p: number): number {
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

const DELTA_OPENING = new TimestampField('{"ts":"', '","sequence":');
const SNAPSHOT_OPENING = new TimestampField('{"ts":"', '","side":"');
const RECEIVED_CLOSING = new TimestampField('","received_ts":"', '"}');
const CSV_TS = new TimestampField('', ',');
const CSV_SNAPSHOT_TS = new TimestampField('', '');
const CSV_RECEIVED = new TimestampField(',', '');

/** `received_ts` is read after the layout's own columns (the window queries' `extra`). */
const RECEIVED_BYTES = 8;

// One plain function per row shape, `received` a flag: a renderer's call site sees at most four functions (V8 keeps
// such a call polymorphic and fast; one closure per variant would make it megamorphic).

function renderDeltaJson(src: Buffer, o: number, out: Buffer, p: number, received: boolean): number {
  p = DELTA_OPENING.write(src, o, out, p);
  p = writeSequence(src, o + 8, out, p);
  p = copy(src[o + 16] === SIDE_BID ? T_DELTA_BID : T_DELTA_ASK, out, p);
  p = writeDecimal18(src, o + 17, out, p);
  p = copy(T_QUANTITY_DELTA, out, p);
  p = writeDecimal18(src, o + 33, out, p);
  return received ? RECEIVED_CLOSING.write(src, o + 49, out, p) : copy(T_END, out, p);
}

function renderSnapshotJson(src: Buffer, o: number, out: Buffer, p: number, received: boolean): number {
  p = SNAPSHOT_OPENING.write(src, o, out, p);
  p = copy(src[o + 8] === SIDE_BID ? T_SNAPSHOT_BID : T_SNAPSHOT_ASK, out, p);
  p = writeDecimal18(src, o + 9, out, p);
  p = copy(T_QUANTITY, out, p);
  p = writeDecimal18(src, o + 25, out, p);
  return received ? RECEIVED_CLOSING.write(src, o + 41, out, p) : copy(T_END, out, p);
}

/** `ts,sequence,side,price,quantity_delta[,received_ts]` */
function renderDeltaCsv(src: Buffer, o: number, out: Buffer, p: number, received: boolean): number {
  p = CSV_TS.write(src, o, out, p);
  p = writeSequence(src, o + 8, out, p);
  p = copy(src[o + 16] === SIDE_BID ? T_CSV_BID : T_CSV_ASK, out, p);
  p = writeDecimal18(src, o + 17, out, p);
  p = copy(T_COMMA, out, p);
  p = writeDecimal18(src, o + 33, out, p);
  return received ? CSV_RECEIVED.write(src, o + 49, out, p) : p;
}

/** `ts,side,price,quantity[,received_ts]` */
function renderSnapshotCsv(src: Buffer, o: number, out: Buffer, p: number, received: boolean): number {
  p = CSV_SNAPSHOT_TS.write(src, o, out, p);
  p = copy(src[o + 8] === SIDE_BID ? T_CSV_BID : T_CSV_ASK, out, p);
  p = writeDecimal18(src, o + 9, out, p);
  p = copy(T_COMMA, out, p);
  p = writeDecimal18(src, o + 25, out, p);
  return received ? CSV_RECEIVED.write(src, o + 41, out, p) : p;
}

const DELTA_JSON_TEXT =
  DELTA_OPENING.length + MAX_SEQUENCE_TEXT + T_DELTA_BID.length + 2 * MAX_DECIMAL_TEXT + T_QUANTITY_DELTA.length;
const SNAPSHOT_JSON_TEXT = SNAPSHOT_OPENING.length + T_SNAPSHOT_BID.length + 2 * MAX_DECIMAL_TEXT + T_QUANTITY.length;
const DELTA_CSV_TEXT = CSV_TS.length + MAX_SEQUENCE_TEXT + T_CSV_BID.length + 2 * MAX_DECIMAL_TEXT + 1;
const SNAPSHOT_CSV_TEXT = CSV_SNAPSHOT_TS.length + T_CSV_BID.length + 2 * MAX_DECIMAL_TEXT + 1;

function layout(kind: RowKind, csv: boolean, received: boolean): Layout {
  const delta = kind === 'delta';
  const closing = csv ? (received ? CSV_RECEIVED.length : 0) : received ? RECEIVED_CLOSING.length : T_END.length;
  return {
    size: (delta ? 49 : 41) + (received ? RECEIVED_BYTES : 0),
    side: delta ? 16 : 8,
    received,
    render: delta ? (csv ? renderDeltaCsv : renderDeltaJson) : csv ? renderSnapshotCsv : renderSnapshotJson,
    // (plus one for the separator)
    maxText:
      (delta ? (csv ? DELTA_CSV_TEXT : DELTA_JSON_TEXT) : csv ? SNAPSHOT_CSV_TEXT : SNAPSHOT_JSON_TEXT) + closing + 1,
  };
}

const LAYOUTS = {
  delta: {
    json: [layout('delta', false, false), layout('delta', false, true)],
    csv: [layout('delta', true, false), layout('delta', true, true)],
  },
  snapshot: {
    json: [layout('snapshot', false, false), layout('snapshot', false, true)],
    csv: [layout('snapshot', true, false), layout('snapshot', true, true)],
  },
} as const;

function layoutOf(kind: RowKind, format: TextFormat, receivedTs: boolean): Layout {
  return LAYOUTS[kind][format === 'csv' ? 'csv' : 'json'][receivedTs ? 1 : 0];
}

/** The CSV header line of a kind's rows. */
export function csvHeader(kind: RowKind, receivedTs: boolean): string {
  const columns = kind === 'delta' ? 'ts,sequence,side,price,quantity_delta' : 'ts,side,price,quantity';
  return `${columns}${receivedTs ? ',received_ts' : ''}\n`;
}

/** Bytes per RowBinary row of a kind (tests and the benchmark build rows with it). */
export function rowBinarySize(kind: RowKind, receivedTs = false): number {
  return layoutOf(kind, 'json', receivedTs).size;
}

/** The key of a row: its ts, and for deltas its sequence. */
export interface RowKey {
  ts: number;
  sequence: bigint;
}

/** The key of the row at `src[o]`. */
export function rowKey(kind: RowKind, src: Buffer, o: number): RowKey {
  return {
    ts: readTs(src, o),
    sequence: kind === 'delta' ? (BigInt(u32(src, o + 12)) << 32n) | BigInt(u32(src, o + 8)) : 0n,
  };
}

/**
 * The never-cut-a-book rule over raw snapshot rows of one query (`raw`, whole rows of `size` bytes): of the first
 * `want` rows, keep them and the rest of the want-th row's book (rows of a book share their ts). Returns how many
 * rows to pass on, and what lies beyond them: `another-book` (a later book is there: the book is complete),
 * `book-may-continue` (the query stopped at its LIMIT inside that book: read its end exactly), or `none` (the query
 * returned everything there is; fewer than `want` rows is this case too).
 */
export function cutAtBook(
  raw: Buffer,
  size: number,
  want: number,
  stoppedAtLimit: boolean,
): { rows: number; beyond: 'another-book' | 'book-may-continue' | 'none' } {
  const total = raw.length / size;
  if (total < want || want < 1)
    return { rows: total, beyond: stoppedAtLimit && total > 0 ? 'book-may-continue' : 'none' };
  const at = (want - 1) * size;
  let n = want;
  while (n < total && raw.compare(raw, at, at + 8, n * size, n * size + 8) === 0) n++;
  if (n < total) return { rows: n, beyond: 'another-book' };
  return { rows: total, beyond: stoppedAtLimit ? 'book-may-continue' : 'none' };
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

/**
 * The raw rows of one query, held in the chunks they arrived in. Not copied into one buffer: a bulk stream's
 * windows are a quarter of a million rows, and buffers that size, allocated window after window, were what the
 * process kept of its streams after they ended (malloc does not give back memory freed in the middle of its heap).
 */
export class RowChunks {
  readonly chunks: Buffer[] = [];
  bytes = 0;

  constructor(readonly size: number) {}

  /** Whole rows held (an incomplete last one is not counted; the renderer rejects it). */
  get rows(): number {
    return Math.floor(this.bytes / this.size);
  }

  add(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /** The first `rows` rows (sharing their bytes). */
  first(rows: number): RowChunks {
    const out = new RowChunks(this.size);
    let left = rows * this.size;
    for (const chunk of this.chunks) {
      if (left <= 0) break;
      out.add(chunk.length <= left ? chunk : chunk.subarray(0, left));
      left -= chunk.length;
    }
    return out;
  }

  /** These rows, then those of `more`. */
  concat(more: RowChunks): RowChunks {
    const out = new RowChunks(this.size);
    for (const chunk of [...this.chunks, ...more.chunks]) out.add(chunk);
    return out;
  }

  /** Row `i`'s bytes (a view when they lie in one chunk, else a copy). */
  row(i: number): Buffer {
    return this.slice(i * this.size, (i + 1) * this.size);
  }

  /** Rows `from` to the last as one buffer (a copy when they span chunks). */
  from(i: number): Buffer {
    return this.slice(i * this.size, this.rows * this.size);
  }

  private slice(begin: number, end: number): Buffer {
    let at = 0;
    let k = 0;
    while (k < this.chunks.length && at + (this.chunks[k] as Buffer).length <= begin)
      at += (this.chunks[k++] as Buffer).length;
    const first = this.chunks[k];
    if (first !== undefined && end - at <= first.length) return first.subarray(begin - at, end - at);
    const out = Buffer.allocUnsafe(end - begin);
    for (let p = 0; p < out.length && k < this.chunks.length; k++) {
      const chunk = this.chunks[k] as Buffer;
      const from = Math.max(0, begin - at);
      p += chunk.copy(out, p, from, Math.min(chunk.length, from + out.length - p));
      at += chunk.length;
    }
    return out;
  }
}

/**
 * Rendering space shared by every converter of the process: `push` renders into it and copies the result out before
 * returning, so it is never in use across an await. Grows to the largest chunk seen.
 */
let scratch = Buffer.allocUnsafe(256 * 1024);

export interface RenderOptions {
  /** Default `json`: members of an array, comma-separated. `ndjson` and `csv`: one line per row. */
  format?: TextFormat;
  /** Rows carry `received_ts` after their own columns (RowBinary and text). */
  receivedTs?: boolean;
}

export class RowRenderer {
  /** Rows passed on so far. */
  rows = 0;
  /** Rows received so far (passed on, held or dropped). */
  received = 0;
  /** Gap markers placed so far (written, for line formats; only counted for JSON). */
  markersPassed = 0;
  readonly size: number;
  private readonly layout: Layout;
  private readonly lines: boolean;
  /** The start of a row split across chunks. */
  private readonly carry: Buffer;
  private carried = 0;
  private anyRow = false;
  /** When set, the row with this index (0-based, over all received rows) and every later one are held back. */
  private holdIndex: number | undefined;
  private held: Buffer[] | undefined;
  /** The last row passed on: its ts and sequence (two 32-bit halves), and how many rows in a row carried them. */
  private lastTs = -1;
  private lastSeqHi = 0;
  private lastSeqLo = 0;
  private lastRun = 0;
  /** Gap markers: their ts (F) in order, and their text for line formats. */
  private markerTs: readonly number[] = [];
  private markerText: readonly Buffer[] | undefined;
  private nextMarkerTs = Infinity;
  /** Bytes of the marker text not yet placed: reserved in the scratch with the rows. */
  private markerBytesLeft = 0;

  constructor(
    private readonly kind: RowKind,
    options: RenderOptions = {},
  ) {
    const format = options.format ?? 'json';
    this.layout = layoutOf(kind, format, options.receivedTs ?? false);
    this.size = this.layout.size;
    this.lines = format !== 'json';
    this.carry = Buffer.alloc(this.layout.size);
  }

  /**
   * Gap markers to place among the rows: `ts` (each a gap's from_ts, ascending) and, for line formats, the text of
   * each (one line each). A marker goes after every row with ts ≤ its ts and before the first with ts > it; for JSON
   * they are only counted (`markersPassed`), the caller lists them apart.
   */
  setMarkers(ts: readonly number[], text?: readonly Buffer[]): void {
    this.markerTs = ts;
    this.markerText = this.lines ? text : undefined;
    this.nextMarkerTs = ts[this.markersPassed] ?? Infinity;
    this.markerBytesLeft = (this.markerText ?? []).slice(this.markersPassed).reduce((n, t) => n + t.length, 0);
  }

  /** Places every marker not yet placed (the end of a complete answer): their text for line formats. */
  passRemainingMarkers(): Buffer | undefined {
    const from = this.markersPassed;
    this.markersPassed = this.markerTs.length;
    this.nextMarkerTs = Infinity;
    this.markerBytesLeft = 0;
    if (!this.markerText || from >= this.markerText.length) return undefined;
    return Buffer.concat(this.markerText.slice(from));
  }

  /**
   * Converts one chunk of RowBinary output, or several one after another. Returns the text to send (JSON: rows separated by commas, a comma before
   * the first when rows went out before; line formats: a line per row), or undefined when there is none yet: in
   * `into` when it is long enough (a buffer the caller no longer needs), else in a new buffer. Throws
   * CorruptStreamError on bytes that cannot be a row.
   */
  push(input: Buffer | readonly Buffer[], into?: Buffer): Buffer | undefined {
    let p = 0;
    if (Buffer.isBuffer(input)) p = this.take(input, p);
    else for (const chunk of input) p = this.take(chunk, p);
    if (p === 0) return undefined;
    const out = into !== undefined && into.length >= p ? into.subarray(0, p) : Buffer.allocUnsafe(p);
    scratch.copy(out, 0, 0, p);
    return out;
  }

  /** Renders the whole rows of `chunk` (and the one it completes) into the scratch from `p` on; the new end. */
  private take(chunk: Buffer, p: number): number {
    const size = this.layout.size;
    let start = 0;
    if (this.carried > 0) {
      const take = Math.min(size - this.carried, chunk.length);
      chunk.copy(this.carry, this.carried, 0, take);
      this.carried += take;
      if (this.carried < size) return p;
      this.carried = 0;
      start = take;
      p = this.rowsAt(Buffer.from(this.carry), 0, 1, p);
    }
    const whole = Math.floor((chunk.length - start) / size);
    p = this.rowsAt(chunk, start, whole, p);
    const rest = start + whole * size;
    if (rest < chunk.length) {
      chunk.copy(this.carry, 0, rest);
      this.carried = chunk.length - rest;
    }
    return p;
  }

  /** The end of one query's output: it must end at a row boundary. */
  endOfQuery(): void {
    if (this.carried > 0) {
      const partial = this.carry.subarray(0, this.carried);
      this.carried = 0;
      throw new CorruptStreamError(`the result ended in the middle of a row: ${describe(partial, 0)}`);
    }
  }

  /** Rows received from index `index` on (0-based, over the whole response) are held back, not passed on. */
  holdFrom(index: number): void {
    this.holdIndex = index;
  }

  /**
   * Ends holding: the rows held back since `holdFrom` (whole rows, raw), or undefined when no row reached the hold
   * index. Nothing of them has been passed on or counted in `rows`.
   */
  takeHeld(): Buffer | undefined {
    const held = this.held;
    this.held = undefined;
    this.holdIndex = undefined;
    if (!held) return undefined;
    return held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held);
  }

  /** Passes on the first `count` of raw rows (as `push` passes rows on): their text. */
  pass(raw: Buffer, count: number): Buffer {
    this.ensureScratch(count);
    let p = 0;
    for (let i = 0; i < count; i++) p = this.renderRow(raw, i * this.layout.size, p);
    this.noteLastKey(raw, 0, count);
    const out = Buffer.allocUnsafe(p);
    scratch.copy(out, 0, 0, p);
    return out;
  }

  /**
   * The key of the last row passed on, and how many rows passed on in a row carried it (a next page resumes there,
   * leaving those out); undefined when none was.
   */
  lastKey(): (RowKey & { run: number }) | undefined {
    if (this.lastTs < 0) return undefined;
    return {
      ts: this.lastTs,
      sequence: this.kind === 'delta' ? (BigInt(this.lastSeqHi) << 32n) | BigInt(this.lastSeqLo) : 0n,
      run: this.lastRun,
    };
  }

  /** Takes `count` whole rows from `src[start]`: renders them into the scratch from `p` on, or holds them. */
  private rowsAt(src: Buffer, start: number, count: number, p: number): number {
    const { size, side } = this.layout;
    this.ensureScratch(count, p);
    let rendered = 0;
    for (let i = 0, o = start; i < count; i++, o += size) {
      const s = src[o + side];
      const hi = i32(src, o + 4);
      if ((s !== SIDE_BID && s !== SIDE_ASK) || hi < 0 || hi * TWO_32 + (i32(src, o) >>> 0) > MAX_TS)
        throw new CorruptStreamError(`unexpected data in the result stream: ${describe(src, o)}`);
      if (this.held) this.held.push(src.subarray(o, o + size));
      else if (this.received === this.holdIndex) this.held = [src.subarray(o, o + size)];
      else {
        p = this.renderRow(src, o, p);
        rendered++;
      }
      this.received++;
    }
    // The rows passed on come first (holding starts after them).
    this.noteLastKey(src, start, rendered);
    // Held rows may point into `src`; when it is the carry, it was copied first (push).
    return p;
  }

  private renderRow(src: Buffer, o: number, p: number): number {
    if (this.markerTs.length > 0) {
      const ts = readTs(src, o);
      if (ts > this.nextMarkerTs) p = this.placeMarkers(ts, p);
    }
    const layout = this.layout;
    if (this.lines) {
      p = layout.render(src, o, scratch, p, layout.received);
      scratch[p++] = NEWLINE;
    } else {
      if (this.anyRow) scratch[p++] = COMMA;
      p = layout.render(src, o, scratch, p, layout.received);
    }
    this.anyRow = true;
    this.rows++;
    return p;
  }

  /**
   * Notes the key of the last of `count` rows passed on from `src[start]` (one after another), and how many rows in a
   * row carried it: counted back from the last, on to the rows passed on before when all of these carry it.
   */
  private noteLastKey(src: Buffer, start: number, count: number): void {
    if (count === 0) return;
    const size = this.layout.size;
    const last = start + (count - 1) * size;
    const keyBytes = this.kind === 'delta' ? 16 : 8;
    let run = 1;
    while (
      run < count &&
      src.compare(src, last - run * size, last - run * size + keyBytes, last, last + keyBytes) === 0
    )
      run++;
    const ts = readTs(src, last);
    const seqLo = this.kind === 'delta' ? u32(src, last + 8) : 0;
    const seqHi = this.kind === 'delta' ? u32(src, last + 12) : 0;
    const continues = run === count && ts === this.lastTs && seqLo === this.lastSeqLo && seqHi === this.lastSeqHi;
    this.lastRun = continues ? this.lastRun + run : run;
    this.lastTs = ts;
    this.lastSeqLo = seqLo;
    this.lastSeqHi = seqHi;
  }

  /**
   * Places the markers whose ts is below `ts` (the next row's) at `scratch[p]` (room for them was reserved with the
   * rows'); returns the new end.
   */
  private placeMarkers(ts: number, p: number): number {
    while (ts > this.nextMarkerTs) {
      const text = this.markerText?.[this.markersPassed];
      if (text) {
        p = copy(text, scratch, p);
        this.markerBytesLeft -= text.length;
      }
      this.markersPassed++;
      this.nextMarkerTs = this.markerTs[this.markersPassed] ?? Infinity;
    }
    return p;
  }

  /** Room in the scratch for `rows` rows (and every marker not yet placed) after `used` bytes. */
  private ensureScratch(rows: number, used = 0): void {
    const need = used + rows * this.layout.maxText + this.markerBytesLeft;
    if (scratch.length >= need) return;
    const bigger = Buffer.allocUnsafe(Math.max(need, scratch.length * 2));
    scratch.copy(bigger, 0, 0, used);
    scratch = bigger;
  }
}

/** A readable excerpt of bytes that are not a row (typically ClickHouse's exception text). */
function describe(src: Buffer, at: number): string {
  const text = Buffer.from(src.subarray(at, at + 200))
    .toString('latin1')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return text === '' ? '(binary data)' : text;
}
