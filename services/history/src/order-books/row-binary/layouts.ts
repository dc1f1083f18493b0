/**
 * The RowBinary layouts of the window queries and how each row shape is rendered. The layouts are fixed by the
 * window queries' column lists and the tables' column types, both in @depthgate/history-store (READ_COLUMNS; checked
 * against the live tables at start-up by `verifyReadColumns`):
 *
 *   delta:       ts Int64 | sequence UInt64 | side Enum8 | price Decimal(38,18) | quantity_delta Decimal(38,18) (49 bytes)
 *   snapshot:    ts Int64 | side Enum8 | price Decimal(38,18) | quantity Decimal(38,18)                            (41 bytes)
 *   trade:       ts Int64 | sequence UInt64 | side Enum8 (buy, sell) | price Decimal(38,18) | size Decimal(38,18)  (49 bytes)
 *                [| received_ts Int64] [| venue_seq FixedString(48)] [| venue_side String] | trade_id String
 *   interleaved: ts Int64 | sequence UInt64 | row_kind UInt8 (1 delta, 2 trade) | side UInt8 | price | amount
 *                (quantity_delta or size) Decimal(38,18)                                                            (50 bytes)
 *                [| received_ts Int64] [| venue_seq FixedString(48)] | trade_id String ('' for a delta)
 *
 * and, when a request asks for them, `received_ts Int64` and then `venue_seq FixedString(48)` after the fixed columns
 * of the book rows too (`fields=received_ts`: 57 and 49 bytes; `fields=venue_seq`: 48 bytes more, the venue's text
 * padded with zero bytes, so every book row still has one width). All little-endian. A String is its length (ULEB128) and its bytes: the rows of the trade layouts have a variable width,
 * and the renderer finds where each ends (`rowLength`). Stored trade ids and venue sides are printable ASCII of at
 * most 128 characters (VENUE_TEXT_PATTERN), so a longer length is bytes that are not a row.
 */
import { VENUE_SEQ_BYTES as HISTORY_VENUE_SEQ_BYTES, type RowKind } from '@depthgate/history-store';
import {
  bytes,
  copy,
  MAX_DECIMAL_TEXT,
  MAX_SEQUENCE_TEXT,
  readTs,
  TimestampField,
  u32,
  writeDecimal18,
  writeSequence,
} from './text';

/** How rows are written: members of a JSON array, NDJSON lines, or CSV lines. */
export type TextFormat = 'json' | 'ndjson' | 'csv';

/**
 * What a window read returns: book rows of a kind, trades, or a ticker's deltas and trades interleaved (the deltas
 * endpoint with `include=trades`).
 */
export type SeriesKind = RowKind | 'trade' | 'interleaved';

/** Optional fields a row renders (bits): `received_ts`, `venue_seq`; trades also `venue_side` and `sequence`. */
export const FIELD_RECEIVED = 1;
export const FIELD_VENUE_SIDE = 2;
export const FIELD_SEQUENCE = 4;
export const FIELD_VENUE_SEQ = 8;
/** The optional fields every kind of row has (book rows, trades, the interleaved stream's lines). */
const FIELDS_OF_EVERY_ROW = FIELD_RECEIVED | FIELD_VENUE_SEQ;

export interface Layout {
  /** Bytes of the fixed columns (of the whole row, when it has no String). */
  size: number;
  /** String columns after the fixed ones (0: every row is `size` bytes). */
  strings: number;
  /** Offset of the `side` byte (1 or 2 in every valid row). */
  side: number;
  /** Offset of the row-kind byte (interleaved rows: 1 or 2), or -1. */
  kind: number;
  /** The optional fields (FIELD_*) the rows carry and render. */
  fields: number;
  /**
   * Renders the row at `src[o]` into `out[p]` (a JSON object, or a CSV line without its newline) with the optional
   * `fields`; returns the new end.
   */
  render: (src: Buffer, o: number, out: Buffer, p: number, fields: number) => number;
  /** Longest text of one row's fixed columns (every field at its widest), plus one for the separator. */
  maxText: number;
}

export const SIDE_BID = 1;
export const SIDE_ASK = 2;
/** 9999-12-31T23:59:59.999Z: the last instant with a four-digit year. */
export const MAX_TS = 253_402_300_799_999;
/** Longest stored venue text (VENUE_TEXT_PATTERN). */
export const MAX_VENUE_TEXT = 128;
/** Bytes of a `venue_seq` as window reads take it (history-store VENUE_SEQ_BYTES): zero-padded. */
export const VENUE_SEQ_BYTES = HISTORY_VENUE_SEQ_BYTES;

/** ASCII of the literal parts of a row. */
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
const T_PRICE = bytes(',"price":"');
const T_SIZE = bytes('","size":"');
const T_SIDE_BUY = bytes('","side":"buy"');
const T_SIDE_SELL = bytes('","side":"sell"');
const T_VENUE_SIDE = bytes(',"venue_side":');
const T_SEQUENCE = bytes(',"sequence":');
const T_VENUE_SEQ = bytes(',"venue_seq":');
const T_QUOTE = bytes('"');
const T_CLOSE = bytes('}');
const T_CSV_BUY = bytes(',buy');
const T_CSV_SELL = bytes(',sell');
const T_CSV_TRADE = bytes('#trade,');

const DELTA_OPENING = new TimestampField('{"ts":"', '","sequence":');
const SNAPSHOT_OPENING = new TimestampField('{"ts":"', '","side":"');
const TRADE_OPENING = new TimestampField('{"ts":"', '","trade_id":');
const TRADE_LINE_OPENING = new TimestampField('{"type":"trade","ts":"', '","trade_id":');
const RECEIVED_FIELD = new TimestampField(',"received_ts":"', '"');
const CSV_TS = new TimestampField('', ',');
const CSV_SNAPSHOT_TS = new TimestampField('', '');
const CSV_RECEIVED = new TimestampField(',', '');

/** `received_ts` is read after the layout's own columns (the window queries' `extra`). */
const RECEIVED_BYTES = 8;

/**
 * The optional fields of a row (`fields`: FIELD_RECEIVED, FIELD_VENUE_SEQ) read from `src[at]` on, as JSON members
 * after a quoted value's last character: closes that value, adds them, closes the object.
 */
function jsonExtras(src: Buffer, at: number, out: Buffer, p: number, fields: number): number {
  if ((fields & FIELDS_OF_EVERY_ROW) === 0) return copy(T_END, out, p);
  p = copy(T_QUOTE, out, p);
  if ((fields & FIELD_RECEIVED) !== 0) {
    p = RECEIVED_FIELD.write(src, at, out, p);
    at += RECEIVED_BYTES;
  }
  if ((fields & FIELD_VENUE_SEQ) !== 0) {
    p = copy(T_VENUE_SEQ, out, p);
    p = writeJsonString(src, at, paddedLength(src, at), out, p);
  }
  return copy(T_CLOSE, out, p);
}

/** The same as CSV columns, after the row's others. */
function csvExtras(src: Buffer, at: number, out: Buffer, p: number, fields: number): number {
  if ((fields & FIELD_RECEIVED) !== 0) {
    p = CSV_RECEIVED.write(src, at, out, p);
    at += RECEIVED_BYTES;
  }
  if ((fields & FIELD_VENUE_SEQ) !== 0) {
    p = copy(T_COMMA, out, p);
    p = writeCsvField(src, at, paddedLength(src, at), out, p);
  }
  return p;
}

/** The length of the zero-padded `venue_seq` at `src[at]`: up to its first zero byte. */
function paddedLength(src: Buffer, at: number): number {
  let n = 0;
  while (n < VENUE_SEQ_BYTES && src[at + n] !== 0) n++;
  return n;
}

// One plain function per row shape, the optional fields a flag: a renderer's call site sees few functions (V8 keeps
// such a call polymorphic and fast; one closure per variant would make it megamorphic).

/**
 * A delta in JSON; `shift` 1 in an interleaved row (its row-kind byte comes before the side), else 0. The deltas
 * endpoint's rows and the interleaved stream's delta lines are this one text.
 */
function writeDeltaJson(src: Buffer, o: number, shift: number, out: Buffer, p: number, fields: number): number {
  p = DELTA_OPENING.write(src, o, out, p);
  p = writeSequence(src, o + 8, out, p);
  p = copy(src[o + 16 + shift] === SIDE_BID ? T_DELTA_BID : T_DELTA_ASK, out, p);
  p = writeDecimal18(src, o + 17 + shift, out, p);
  p = copy(T_QUANTITY_DELTA, out, p);
  p = writeDecimal18(src, o + 33 + shift, out, p);
  return jsonExtras(src, o + 49 + shift, out, p, fields);
}

const renderDeltaJson = (src: Buffer, o: number, out: Buffer, p: number, fields: number): number =>
  writeDeltaJson(src, o, 0, out, p, fields);

function renderSnapshotJson(src: Buffer, o: number, out: Buffer, p: number, fields: number): number {
  p = SNAPSHOT_OPENING.write(src, o, out, p);
  p = copy(src[o + 8] === SIDE_BID ? T_SNAPSHOT_BID : T_SNAPSHOT_ASK, out, p);
  p = writeDecimal18(src, o + 9, out, p);
  p = copy(T_QUANTITY, out, p);
  p = writeDecimal18(src, o + 25, out, p);
  return jsonExtras(src, o + 41, out, p, fields);
}

/** `ts,sequence,side,price,quantity_delta[,received_ts][,venue_seq]` */
/** A delta in CSV (`shift` as in writeDeltaJson). */
function writeDeltaCsv(src: Buffer, o: number, shift: number, out: Buffer, p: number, fields: number): number {
  p = CSV_TS.write(src, o, out, p);
  p = writeSequence(src, o + 8, out, p);
  p = copy(src[o + 16 + shift] === SIDE_BID ? T_CSV_BID : T_CSV_ASK, out, p);
  p = writeDecimal18(src, o + 17 + shift, out, p);
  p = copy(T_COMMA, out, p);
  p = writeDecimal18(src, o + 33 + shift, out, p);
  return csvExtras(src, o + 49 + shift, out, p, fields);
}

const renderDeltaCsv = (src: Buffer, o: number, out: Buffer, p: number, fields: number): number =>
  writeDeltaCsv(src, o, 0, out, p, fields);

/** `ts,side,price,quantity[,received_ts][,venue_seq]` */
function renderSnapshotCsv(src: Buffer, o: number, out: Buffer, p: number, fields: number): number {
  p = CSV_SNAPSHOT_TS.write(src, o, out, p);
  p = copy(src[o + 8] === SIDE_BID ? T_CSV_BID : T_CSV_ASK, out, p);
  p = writeDecimal18(src, o + 9, out, p);
  p = copy(T_COMMA, out, p);
  p = writeDecimal18(src, o + 25, out, p);
  return csvExtras(src, o + 41, out, p, fields);
}

/**
 * The length of the String at `src[q]` (ULEB128: one byte below 128, two up to 16,383), or -1 when its length bytes
 * run past `end`. A stored venue text is at most MAX_VENUE_TEXT long: a longer length returns -2 (not a row).
 */
function stringLength(src: Buffer, q: number, end: number): number {
  if (q >= end) return -1;
  const b0 = src[q] as number;
  if (b0 < 0x80) return b0;
  if (q + 1 >= end) return -1;
  const b1 = src[q + 1] as number;
  const n = (b0 & 0x7f) | (b1 << 7);
  return b1 >= 0x80 || n > MAX_VENUE_TEXT ? -2 : n;
}

/** Bytes the length of a String of `n` bytes takes (n ≤ MAX_VENUE_TEXT). */
const lengthBytes = (n: number): number => (n < 0x80 ? 1 : 2);

/**
 * Bytes of the row at `src[o]` when it lies whole before `end`; -1 when it does not (yet); -2 when its bytes cannot
 * be a row (a String longer than any stored one).
 */
export function rowLength(layout: Layout, src: Buffer, o: number, end: number): number {
  let q = o + layout.size;
  if (layout.strings === 0) return q <= end ? layout.size : -1;
  for (let k = 0; k < layout.strings; k++) {
    const n = stringLength(src, q, end);
    if (n < 0) return n;
    q += lengthBytes(n) + n;
  }
  return q <= end ? q - o : -1;
}

/** A stored venue text as a JSON string: `"` and `\` escaped, control characters as \u00XX (none are stored). */
function writeJsonString(src: Buffer, q: number, n: number, out: Buffer, p: number): number {
  out[p++] = 0x22;
  for (let i = 0; i < n; i++) {
    const c = src[q + i] as number;
    if (c === 0x22 || c === 0x5c) {
      out[p++] = 0x5c;
      out[p++] = c;
    } else if (c < 0x20) {
      out[p++] = 0x3f; // '?': never stored (VENUE_TEXT_PATTERN); not passed on as a control character
    } else out[p++] = c;
  }
  out[p++] = 0x22;
  return p;
}

/** A stored venue text as a CSV field: quoted (RFC 4180, quotes doubled) when it holds a comma or a quote. */
function writeCsvField(src: Buffer, q: number, n: number, out: Buffer, p: number): number {
  let quote = false;
  for (let i = 0; i < n; i++) {
    const c = src[q + i] as number;
    if (c === 0x2c || c === 0x22 || c < 0x20) {
      quote = true;
      break;
    }
  }
  if (!quote) {
    for (let i = 0; i < n; i++) out[p + i] = src[q + i] as number;
    return p + n;
  }
  out[p++] = 0x22;
  for (let i = 0; i < n; i++) {
    const c = src[q + i] as number;
    if (c === 0x22) out[p++] = 0x22;
    out[p++] = c < 0x20 ? 0x3f : c;
  }
  out[p++] = 0x22;
  return p;
}

/**
 * Where the Strings of a trade begin: `venue` (when the row carries it) and the trade id, as offsets of their length
 * bytes, in TRADE_STRINGS (never in use across calls: each render reads it at once). `shift`: 1 in an interleaved
 * row (its row-kind byte comes before the side), else 0.
 */
const TRADE_STRINGS = new Int32Array(2);
function tradeStrings(src: Buffer, o: number, shift: number, fields: number): void {
  let q = o + 49 + shift + extraBytes(fields);
  if ((fields & FIELD_VENUE_SIDE) !== 0) {
    TRADE_STRINGS[0] = q;
    const n = src[q] as number;
    q += n < 0x80 ? 1 + n : 2 + ((n & 0x7f) | ((src[q + 1] as number) << 7));
  }
  TRADE_STRINGS[1] = q;
}

/** Bytes of the optional fixed fields a row carries after its own columns (received_ts, venue_seq). */
const extraBytes = (fields: number): number =>
  ((fields & FIELD_RECEIVED) !== 0 ? RECEIVED_BYTES : 0) + ((fields & FIELD_VENUE_SEQ) !== 0 ? VENUE_SEQ_BYTES : 0);

/** The String whose length bytes are at `src[q]` as JSON (or CSV) text. */
function writeStringAt(src: Buffer, q: number, out: Buffer, p: number, csv: boolean): number {
  const b0 = src[q] as number;
  const n = b0 < 0x80 ? b0 : (b0 & 0x7f) | ((src[q + 1] as number) << 7);
  const at = q + lengthBytes(n);
  return csv ? writeCsvField(src, at, n, out, p) : writeJsonString(src, at, n, out, p);
}

/** The texts around a trade's values in one format: a trade row, or a trade line of the interleaved stream. */
interface TradeText {
  csv: boolean;
  /** Before the ts (CSV's `#trade,` of a trade line), empty for the others. */
  prefix: Buffer;
  /** The ts and what comes before the trade id. */
  opening: TimestampField;
  price: Buffer;
  size: Buffer;
  buy: Buffer;
  sell: Buffer;
  received: TimestampField;
  venueSide: Buffer;
  sequence: Buffer;
  venueSeq: Buffer;
  close: Buffer;
}

const EMPTY = Buffer.alloc(0);
const JSON_TRADE: TradeText = {
  csv: false,
  prefix: EMPTY,
  opening: TRADE_OPENING,
  price: T_PRICE,
  size: T_SIZE,
  buy: T_SIDE_BUY,
  sell: T_SIDE_SELL,
  received: RECEIVED_FIELD,
  venueSide: T_VENUE_SIDE,
  sequence: T_SEQUENCE,
  venueSeq: T_VENUE_SEQ,
  close: T_CLOSE,
};
const JSON_TRADE_LINE: TradeText = { ...JSON_TRADE, opening: TRADE_LINE_OPENING };
const CSV_TRADE: TradeText = {
  csv: true,
  prefix: EMPTY,
  opening: CSV_TS,
  price: T_COMMA,
  size: T_COMMA,
  buy: T_CSV_BUY,
  sell: T_CSV_SELL,
  received: CSV_RECEIVED,
  venueSide: T_COMMA,
  sequence: T_COMMA,
  venueSeq: T_COMMA,
  close: EMPTY,
};
const CSV_TRADE_LINE: TradeText = { ...CSV_TRADE, prefix: T_CSV_TRADE };

/**
 * A trade in one format (`t`), every format through this one function: JSON
 * `{"ts","trade_id","price","size","side"[,"received_ts"][,"venue_side"][,"sequence"][,"venue_seq"]}` (a trade line
 * opens with `"type":"trade"`), CSV `ts,trade_id,price,size,side[,received_ts][,venue_side][,sequence][,venue_seq]`
 * (a trade line opens with `#trade,`). `shift` as in tradeStrings; an interleaved row's `fields` carry received_ts
 * and venue_seq at most (its layout).
 */
function renderTrade(
  src: Buffer,
  o: number,
  shift: number,
  out: Buffer,
  p: number,
  fields: number,
  t: TradeText,
): number {
  tradeStrings(src, o, shift, fields);
  if (t.prefix.length > 0) p = copy(t.prefix, out, p);
  p = t.opening.write(src, o, out, p);
  p = writeStringAt(src, TRADE_STRINGS[1] as number, out, p, t.csv);
  p = copy(t.price, out, p);
  p = writeDecimal18(src, o + 17 + shift, out, p);
  p = copy(t.size, out, p);
  p = writeDecimal18(src, o + 33 + shift, out, p);
  p = copy(src[o + 16 + shift] === SIDE_BID ? t.buy : t.sell, out, p);
  if ((fields & FIELD_RECEIVED) !== 0) p = t.received.write(src, o + 49 + shift, out, p);
  if ((fields & FIELD_VENUE_SIDE) !== 0) {
    p = copy(t.venueSide, out, p);
    p = writeStringAt(src, TRADE_STRINGS[0] as number, out, p, t.csv);
  }
  if ((fields & FIELD_SEQUENCE) !== 0) {
    p = copy(t.sequence, out, p);
    p = writeSequence(src, o + 8, out, p);
  }
  if ((fields & FIELD_VENUE_SEQ) !== 0) {
    const at = o + 49 + shift + ((fields & FIELD_RECEIVED) !== 0 ? RECEIVED_BYTES : 0);
    p = copy(t.venueSeq, out, p);
    const n = paddedLength(src, at);
    p = t.csv ? writeCsvField(src, at, n, out, p) : writeJsonString(src, at, n, out, p);
  }
  return t.close.length > 0 ? copy(t.close, out, p) : p;
}

const renderTradeJson = (src: Buffer, o: number, out: Buffer, p: number, fields: number): number =>
  renderTrade(src, o, 0, out, p, fields, JSON_TRADE);
const renderTradeCsv = (src: Buffer, o: number, out: Buffer, p: number, fields: number): number =>
  renderTrade(src, o, 0, out, p, fields, CSV_TRADE);

const ROW_KIND_DELTA = 1;

/**
 * An interleaved row: a delta row as the deltas endpoint writes it, or a trade line
 * `{"type":"trade","ts","trade_id","price","size","side"[,"received_ts"][,"venue_seq"]}`. (Offsets one byte on from the delta
 * layout's: the row-kind byte comes before the side.)
 */
function renderInterleavedJson(src: Buffer, o: number, out: Buffer, p: number, fields: number): number {
  if (src[o + 16] !== ROW_KIND_DELTA) return renderTrade(src, o, 1, out, p, fields, JSON_TRADE_LINE);
  return writeDeltaJson(src, o, 1, out, p, fields);
}

/** A delta line in the header's columns, or `#trade,ts,trade_id,price,size,side[,received_ts][,venue_seq]`. */
function renderInterleavedCsv(src: Buffer, o: number, out: Buffer, p: number, fields: number): number {
  if (src[o + 16] !== ROW_KIND_DELTA) return renderTrade(src, o, 1, out, p, fields, CSV_TRADE_LINE);
  return writeDeltaCsv(src, o, 1, out, p, fields);
}

const DELTA_JSON_TEXT =
  DELTA_OPENING.length + MAX_SEQUENCE_TEXT + T_DELTA_BID.length + 2 * MAX_DECIMAL_TEXT + T_QUANTITY_DELTA.length;
const SNAPSHOT_JSON_TEXT = SNAPSHOT_OPENING.length + T_SNAPSHOT_BID.length + 2 * MAX_DECIMAL_TEXT + T_QUANTITY.length;
const DELTA_CSV_TEXT = CSV_TS.length + MAX_SEQUENCE_TEXT + T_CSV_BID.length + 2 * MAX_DECIMAL_TEXT + 1;
const SNAPSHOT_CSV_TEXT = CSV_SNAPSHOT_TS.length + T_CSV_BID.length + 2 * MAX_DECIMAL_TEXT + 1;
/** A trade's fixed text, every optional field included (its Strings are counted apart: `stringText`). */
const TRADE_TEXT =
  TRADE_LINE_OPENING.length +
  T_PRICE.length +
  T_SIZE.length +
  2 * MAX_DECIMAL_TEXT +
  T_SIDE_SELL.length +
  RECEIVED_FIELD.length +
  T_VENUE_SIDE.length +
  T_SEQUENCE.length +
  MAX_SEQUENCE_TEXT +
  T_CSV_TRADE.length +
  8;

/** Longest text a String of `n` bytes becomes (every byte escaped or doubled, and its quotes). */
export const stringText = (n: number): number => 2 * n + 2;

/** Longest text of the optional fields of every row (`jsonExtras`, `csvExtras`; JSON is the longer). */
const extrasText = (fields: number): number =>
  (fields & FIELDS_OF_EVERY_ROW) === 0
    ? T_END.length
    : T_QUOTE.length +
      ((fields & FIELD_RECEIVED) !== 0 ? RECEIVED_FIELD.length : 0) +
      ((fields & FIELD_VENUE_SEQ) !== 0 ? T_VENUE_SEQ.length + stringText(VENUE_SEQ_BYTES) : 0) +
      T_CLOSE.length;

function bookLayout(kind: RowKind, csv: boolean, fields: number): Layout {
  const delta = kind === 'delta';
  return {
    size: (delta ? 49 : 41) + extraBytes(fields),
    strings: 0,
    side: delta ? 16 : 8,
    kind: -1,
    fields,
    render: delta ? (csv ? renderDeltaCsv : renderDeltaJson) : csv ? renderSnapshotCsv : renderSnapshotJson,
    // (plus one for the separator)
    maxText:
      (delta ? (csv ? DELTA_CSV_TEXT : DELTA_JSON_TEXT) : csv ? SNAPSHOT_CSV_TEXT : SNAPSHOT_JSON_TEXT) +
      extrasText(fields) +
      1,
  };
}

function tradeLayout(kind: 'trade' | 'interleaved', csv: boolean, fields: number): Layout {
  const trade = kind === 'trade';
  const venue = trade && (fields & FIELD_VENUE_SIDE) !== 0;
  const venueSeq = (fields & FIELD_VENUE_SEQ) !== 0 ? T_VENUE_SEQ.length + stringText(VENUE_SEQ_BYTES) : 0;
  return {
    size: (trade ? 49 : 50) + extraBytes(fields),
    strings: venue ? 2 : 1,
    side: trade ? 16 : 17,
    kind: trade ? -1 : 16,
    fields: trade ? fields : fields & FIELDS_OF_EVERY_ROW,
    render: trade ? (csv ? renderTradeCsv : renderTradeJson) : csv ? renderInterleavedCsv : renderInterleavedJson,
    maxText: Math.max(TRADE_TEXT + venueSeq, DELTA_JSON_TEXT + extrasText(fields)) + 1,
  };
}

/** The book layouts, per kind and format, by their optional fields (received_ts and venue_seq: 0 to 3). */
const bookLayouts = (kind: RowKind, csv: boolean): Layout[] =>
  [0, FIELD_RECEIVED, FIELD_VENUE_SEQ, FIELD_RECEIVED | FIELD_VENUE_SEQ].map((f) => bookLayout(kind, csv, f));
const BOOK_LAYOUTS = {
  delta: { json: bookLayouts('delta', false), csv: bookLayouts('delta', true) },
  snapshot: { json: bookLayouts('snapshot', false), csv: bookLayouts('snapshot', true) },
} as const;

/**
 * The layout of a kind's rows in a format (CSV, or JSON for both JSON formats; Parquet reads the rows of the JSON
 * layout), with the optional fields asked for (FIELD_*; `true`: `received_ts`).
 */
export function layoutOf(kind: SeriesKind, format: TextFormat | 'parquet', fields: number | boolean = 0): Layout {
  const flags = fields === true ? FIELD_RECEIVED : fields === false ? 0 : fields;
  const csv = format === 'csv';
  if (kind === 'trade' || kind === 'interleaved') return tradeLayout(kind, csv, flags);
  const index = ((flags & FIELD_RECEIVED) !== 0 ? 1 : 0) + ((flags & FIELD_VENUE_SEQ) !== 0 ? 2 : 0);
  return BOOK_LAYOUTS[kind][csv ? 'csv' : 'json'][index] as Layout;
}

/** The CSV header line of a kind's rows (interleaved: the deltas', trade lines being `#trade` lines). */
export function csvHeader(kind: SeriesKind, fields: number | boolean): string {
  const flags = fields === true ? FIELD_RECEIVED : fields === false ? 0 : fields;
  const received = (flags & FIELD_RECEIVED) !== 0 ? ',received_ts' : '';
  const venueSeq = (flags & FIELD_VENUE_SEQ) !== 0 ? ',venue_seq' : '';
  if (kind === 'trade') {
    const venue = (flags & FIELD_VENUE_SIDE) !== 0 ? ',venue_side' : '';
    const sequence = (flags & FIELD_SEQUENCE) !== 0 ? ',sequence' : '';
    return `ts,trade_id,price,size,side${received}${venue}${sequence}${venueSeq}\n`;
  }
  const columns = kind === 'snapshot' ? 'ts,side,price,quantity' : 'ts,sequence,side,price,quantity_delta';
  return `${columns}${received}${venueSeq}\n`;
}

/** Bytes per RowBinary row of a book kind (tests and the benchmark build rows with it). */
export function rowBinarySize(kind: RowKind, receivedTs = false): number {
  return layoutOf(kind, 'json', receivedTs).size;
}

/** The key of a row: its ts, and (every kind but snapshots) its sequence. */
export interface RowKey {
  ts: number;
  sequence: bigint;
}

/** The key of the row at `src[o]`. */
export function rowKey(kind: SeriesKind, src: Buffer, o: number): RowKey {
  return {
    ts: readTs(src, o),
    sequence: kind !== 'snapshot' ? (BigInt(u32(src, o + 12)) << 32n) | BigInt(u32(src, o + 8)) : 0n,
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
