/**
 * The RowBinary layouts of the window queries and how each row shape is rendered. The layouts are fixed by the
 * window queries' column lists and the tables' column types, both in @depthgate/history-store (READ_COLUMNS; checked
 * against the live tables at start-up by `verifyReadColumns`):
 *
 *   delta:    ts Int64 | sequence UInt64 | side Enum8 | price Decimal(38,18) | quantity_delta Decimal(38,18)  (49 bytes)
 *   snapshot: ts Int64 | side Enum8 | price Decimal(38,18) | quantity Decimal(38,18)                             (41 bytes)
 *
 * and, when a request asks for it, `received_ts Int64` after them (57 and 49 bytes). All little-endian.
 */
import type { RowKind } from '@depthgate/history-store';
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

export interface Layout {
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

export const SIDE_BID = 1;
export const SIDE_ASK = 2;
/** 9999-12-31T23:59:59.999Z: the last instant with a four-digit year. */
export const MAX_TS = 253_402_300_799_999;

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

/** The layout of a kind's rows in a format (CSV, or JSON for both JSON formats), with `received_ts` or not. */
export function layoutOf(kind: RowKind, format: TextFormat, receivedTs: boolean): Layout {
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
