/**
 * The rows of the history service, typed as they are on the wire (docs/history.md, "Responses", "Bulk streams",
 * "Trades", "Bars"), and their parsers. Decimals stay strings; `ts` stays the service's text.
 *
 * A row is checked when it is parsed: every field present with its type, `side` `bid` or `ask` (a trade's `buy` or
 * `sell`), decimals in plain notation, `ts` a valid timestamp, `sequence` a non-negative safe integer. Anything else
 * is a `DataError` (`malformed_row`) naming the line; nothing half-parsed reaches a book.
 */
import { DataError, type DataLocation } from './errors.js';
import { isDecimal, PLAIN_DECIMAL } from './decimal.js';
import { parseServiceTimestamp, parseTimestamp } from './timestamps.js';

export type Side = 'bid' | 'ask';
/** A trade's taker side, normalised to the book: `buy` lifted an ask, `sell` hit a bid. */
export type TradeSide = 'buy' | 'sell';
/** A recorded exchange's key (the history service also accepts each one's aliases: `EXCHANGES`). */
export type { Exchange } from './exchanges.js';

/** One price level of a full book at `ts` (every row of a book shares its `ts`). */
export interface SnapshotRow {
  ts: string;
  side: Side;
  price: string;
  /** Never negative. */
  quantity: string;
  /** When the recorder received it (only with `fields: ['received_ts']`). */
  received_ts?: string;
  /** The venue's own ordering of its message, or empty (only with `fields: ['venue_seq']`). */
  venue_seq?: string;
}

/** One level change: add `quantity_delta` to the quantity at (`side`, `price`). */
export interface DeltaRow {
  ts: string;
  /** Orders deltas that share a `ts` (strictly increasing per ticker). */
  sequence: number;
  side: Side;
  price: string;
  quantity_delta: string;
  received_ts?: string;
  venue_seq?: string;
}

/**
 * One trade (`GET /api/{exchange}/trades/{ticker}`): each trade once, in (`ts`, `sequence`) order.
 * `received_ts`, `venue_side`, `sequence` and `venue_seq` only when asked for (`fields`).
 */
export interface TradeRow {
  ts: string;
  /** The venue's trade id, or where the venue gives none a deterministic one (`h:` and 16 hex digits). */
  trade_id: string;
  /** On the book's scale (Kalshi: the YES price). */
  price: string;
  /** Positive. */
  size: string;
  /** The taker's side, normalised to the book. */
  side: TradeSide;
  received_ts?: string;
  /** The venue's own side field as sent (`yes`, `no`, `BUY`, …), or empty (`fields: ['venue_side']`). */
  venue_side?: string;
  /** The ticker's counter shared with its deltas: (`ts`, `sequence`) orders trades and deltas as they arrived. */
  sequence?: number;
  /** The venue's own ordering of the trade's message, or empty (`fields: ['venue_seq']`). */
  venue_seq?: string;
}

/** A trade among the deltas (`include=trades`, the deltas' `trades` option): typed, so it is never taken for one. */
export interface TradeLine {
  type: 'trade';
  ts: string;
  trade_id: string;
  price: string;
  size: string;
  side: TradeSide;
  received_ts?: string;
  venue_seq?: string;
}

/** The bar intervals of `GET /api/{exchange}/bars/{ticker}`. */
export type BarInterval = '1m' | '5m' | '1h' | '1d';
export const BAR_INTERVALS: readonly BarInterval[] = ['1m', '5m', '1h', '1d'];

/** One OHLCV bar: the trades of [`ts`, `ts` + interval) (an interval without trades has no bar). */
export interface Bar {
  /** The bar's start: a whole multiple of the interval since 1970, UTC. */
  ts: string;
  /** The price of the bar's first trade by (`ts`, `sequence`). */
  open: string;
  high: string;
  low: string;
  /** The price of the bar's last trade. */
  close: string;
  /** The sum of the trades' sizes. */
  volume: string;
  /** Σ price × size / volume, exact to 18 decimal places. */
  vwap: string;
  /** How many trades. */
  trades: number;
}

/** A stretch where the recorded series is not continuous: no book can be given for `[from_ts, to_ts)`. */
export interface Gap {
  from_ts: string;
  to_ts: string;
  reason: string;
  detected_at: string;
}

/**
 * A gap as it appears among the rows of a stream (`gaps: true`): among snapshots and deltas a gap of the book, among
 * trades a gap of the trades.
 */
export interface GapMarker extends Gap {
  type: 'gap';
}

/** A gap of the trades among the deltas and trades interleaved (`trades: true, gaps: true`): trades may be missing. */
export interface TradesGapMarker extends Gap {
  type: 'trades_gap';
}

/** The last line of an NDJSON stream: the row count, and where to continue when the stream stopped early. */
export interface EndLine {
  type: 'end';
  count: number;
  next_cursor: string | null;
}

/** The row endpoints: snapshots, deltas, trades (these three stream) and bars (JSON pages). */
export type RowKind = 'snapshot' | 'delta' | 'trade' | 'bar';
/** The endpoints that stream lines (NDJSON). */
export type LineKind = 'snapshot' | 'delta' | 'trade';
export type RowOf<K extends RowKind> = K extends 'snapshot'
  ? SnapshotRow
  : K extends 'delta'
    ? DeltaRow
    : K extends 'trade'
      ? TradeRow
      : Bar;

const malformed = (why: string, where: DataLocation) => new DataError('malformed_row', why, where);

function checkTs(value: unknown, name: string, where: DataLocation): string {
  if (typeof value !== 'string' || Number.isNaN(parseTimestamp(value))) {
    throw malformed(`${name} is not an RFC 3339 timestamp`, where);
  }
  return value;
}

function checkDecimal(value: unknown, name: string, where: DataLocation): string {
  if (typeof value !== 'string' || !isDecimal(value)) throw malformed(`${name} is not a decimal string`, where);
  return value;
}

function checkSide(value: unknown, where: DataLocation): Side {
  if (value !== 'bid' && value !== 'ask') throw malformed('side is neither "bid" nor "ask"', where);
  return value;
}

function checkString(value: unknown, name: string, where: DataLocation): string {
  if (typeof value !== 'string') throw malformed(`${name} is not a string`, where);
  return value;
}

function checkTradeSide(value: unknown, where: DataLocation): TradeSide {
  if (value !== 'buy' && value !== 'sell') throw malformed('side is neither "buy" nor "sell"', where);
  return value;
}

function checkSequence(value: unknown, where: DataLocation): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw malformed('sequence is not a non-negative integer', where);
  }
  if (!Number.isSafeInteger(value)) {
    throw malformed('sequence is above 2^53 − 1, which this client cannot hold exactly', where);
  }
  return value;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The fields of a trade (a row of the trades endpoint, or a trade line among the deltas). */
function checkTradeFields(value: Record<string, unknown>, where: DataLocation): void {
  checkTs(value.ts, 'ts', where);
  checkString(value.trade_id, 'trade_id', where);
  checkDecimal(value.price, 'price', where);
  checkDecimal(value.size, 'size', where);
  checkTradeSide(value.side, where);
}

/** Checks a parsed JSON value as a row of `kind`; returns it typed, or throws `malformed_row`. */
export function checkRow<K extends RowKind>(kind: K, value: unknown, where: DataLocation): RowOf<K> {
  if (!isObject(value)) throw malformed('a row is not a JSON object', where);
  if (value.type !== undefined) throw malformed(`a ${kind} row has a type (${JSON.stringify(value.type)})`, where);
  if (kind === 'bar') {
    checkTs(value.ts, 'ts', where);
    for (const f of ['open', 'high', 'low', 'close', 'volume', 'vwap'] as const) checkDecimal(value[f], f, where);
    if (typeof value.trades !== 'number' || !Number.isSafeInteger(value.trades) || value.trades < 1) {
      throw malformed('trades is not a positive integer', where);
    }
    return value as unknown as RowOf<K>;
  }
  if (kind === 'trade') {
    checkTradeFields(value, where);
    if (value.venue_side !== undefined) checkString(value.venue_side, 'venue_side', where);
    if (value.sequence !== undefined) checkSequence(value.sequence, where);
  } else {
    checkTs(value.ts, 'ts', where);
    checkSide(value.side, where);
    checkDecimal(value.price, 'price', where);
    if (kind === 'delta') {
      checkSequence(value.sequence, where);
      checkDecimal(value.quantity_delta, 'quantity_delta', where);
    } else {
      checkDecimal(value.quantity, 'quantity', where);
    }
  }
  if (value.received_ts !== undefined) checkTs(value.received_ts, 'received_ts', where);
  if (value.venue_seq !== undefined) checkString(value.venue_seq, 'venue_seq', where);
  return value as unknown as RowOf<K>;
}

/** Checks a parsed JSON value as a trade line among the deltas (`{"type":"trade",…}`). */
export function checkTradeLine(value: unknown, where: DataLocation): TradeLine {
  if (!isObject(value) || value.type !== 'trade') throw malformed('not a trade line', where);
  checkTradeFields(value, where);
  if (value.received_ts !== undefined) checkTs(value.received_ts, 'received_ts', where);
  if (value.venue_seq !== undefined) checkString(value.venue_seq, 'venue_seq', where);
  return value as unknown as TradeLine;
}

/** A row of a JSON page of `kind`: deltas with `trades` hold trade lines among their rows. */
export function checkPageRow(kind: RowKind, value: unknown, where: DataLocation): unknown {
  if (kind === 'delta' && isObject(value) && value.type === 'trade') return checkTradeLine(value, where);
  return checkRow(kind, value, where);
}

export function checkGap(value: unknown, where: DataLocation): Gap {
  if (!isObject(value)) throw malformed('a gap is not a JSON object', where);
  checkTs(value.from_ts, 'from_ts', where);
  checkTs(value.to_ts, 'to_ts', where);
  if (typeof value.reason !== 'string') throw malformed('a gap has no reason', where);
  if (value.detected_at !== undefined) checkTs(value.detected_at, 'detected_at', where);
  return value as unknown as Gap;
}

// ---------------------------------------------------------------------------------------------------------------
// NDJSON lines. The service writes every row with its fields in one order and no spaces; the fast path reads
// exactly that shape with one sticky regular expression per kind (with the timestamps read, 0.83× the time of a bare
// JSON.parse and 0.79× of the string scans it replaced: docs/benchmarks.md, client), and anything else — other key
// orders, whitespace, escapes — goes through JSON.parse and the same checks, so both paths accept the same rows.

/**
 * The service's timestamp form; `parseServiceTimestamp` then reads it and refuses impossible dates. (Spelled out: any
 * 24 characters, `[^"]{24}`, made the whole read about 9 % slower.)
 */
const TS = String.raw`(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)`;
/** A decimal as checkDecimal accepts it. */
const DEC = `(${PLAIN_DECIMAL})`;
/** What may follow a row's last decimal: its end, or `received_ts` and its end. */
const TAIL = String.raw`"(?:,"received_ts":"${TS}")?\}`;
/**
 * A delta row (groups: ts, sequence, side, price, quantity_delta, received_ts). Sequences of up to 16 digits without
 * a leading zero (the recorder's are ts × 1000, 16 digits); longer ones go the checked way, which refuses what a
 * number cannot hold exactly.
 */
const DELTA_LINE = new RegExp(
  String.raw`\{"ts":"${TS}","sequence":(0|[1-9]\d{0,15}),"side":"(bid|ask)","price":"${DEC}","quantity_delta":"${DEC}${TAIL}`,
  'y',
);
/** A snapshot row (groups: ts, side, price, quantity, received_ts). */
const SNAPSHOT_LINE = new RegExp(
  String.raw`\{"ts":"${TS}","side":"(bid|ask)","price":"${DEC}","quantity":"${DEC}${TAIL}`,
  'y',
);

/** Epoch ms of the `ts` (or a gap's `from_ts`) of the line `parseLineAt` read last; NaN for an end line. */
let lastTs = NaN;

/** @internal The `ts` of the line parsed last, in epoch ms (the stream readers keep it beside the row). */
export function lastParsedTs(): number {
  return lastTs;
}

/**
 * A line of a rows stream: a row, a gap marker, or the end line; among deltas also trade lines and the trades' gap
 * markers (`include=trades`).
 */
export type StreamLine<K extends LineKind> =
  RowOf<K> | GapMarker | EndLine | (K extends 'delta' ? TradeLine | TradesGapMarker : never);

/** The `ts` text the fast paths read last, and its epoch ms ('' before the first). */
let fastTsText = '';
let fastTsMs = NaN;

/**
 * The fast paths' `ts`: the text kept and read into `lastTs`, or undefined when it is not a valid timestamp. Rows
 * come in time order and many share a `ts` (a snapshot's every row, a moment's deltas): those share one string
 * (the book compares a delta's `ts` with the last one's) and it is read once.
 */
function fastTs(ts: string): string | undefined {
  if (ts !== fastTsText) {
    const ms = parseServiceTimestamp(ts);
    if (Number.isNaN(ms)) return undefined;
    fastTsText = ts;
    fastTsMs = ms;
  }
  lastTs = fastTsMs;
  return fastTsText;
}

/** `pattern` matched at `text[s]` up to exactly `end`, else null. */
function matchLine(pattern: RegExp, text: string, s: number, end: number): RegExpExecArray | null {
  pattern.lastIndex = s;
  const m = pattern.exec(text);
  return m !== null && pattern.lastIndex === end ? m : null;
}

/**
 * The fast path for a delta line at `text[s, end)` (the chunk's text: no string is made for the line itself);
 * undefined when the line is not in the service's exact shape.
 */
function fastDelta(text: string, s: number, end: number): DeltaRow | undefined {
  const m = matchLine(DELTA_LINE, text, s, end);
  if (m === null) return undefined;
  const sequence = Number(m[2]);
  const received = m[6];
  if (sequence > Number.MAX_SAFE_INTEGER) return undefined;
  if (received !== undefined && Number.isNaN(parseServiceTimestamp(received))) return undefined;
  const ts = fastTs(m[1] as string);
  if (ts === undefined) return undefined;
  const row: DeltaRow = { ts, sequence, side: m[3] as Side, price: m[4] as string, quantity_delta: m[5] as string };
  if (received !== undefined) row.received_ts = received;
  return row;
}

function fastSnapshot(text: string, s: number, end: number): SnapshotRow | undefined {
  const m = matchLine(SNAPSHOT_LINE, text, s, end);
  if (m === null) return undefined;
  const received = m[5];
  if (received !== undefined && Number.isNaN(parseServiceTimestamp(received))) return undefined;
  const ts = fastTs(m[1] as string);
  if (ts === undefined) return undefined;
  const row: SnapshotRow = { ts, side: m[2] as Side, price: m[3] as string, quantity: m[4] as string };
  if (received !== undefined) row.received_ts = received;
  return row;
}

/**
 * The `{"type":"end","count","next_cursor"}` line of a stream (rows or book digests): `count` a whole number,
 * `next_cursor` a string or null. Throws `malformed_row` for anything else.
 */
export function checkEndLine(value: Record<string, unknown>, where: DataLocation): EndLine {
  const { count, next_cursor: next } = value;
  if (!Number.isSafeInteger(count) || (count as number) < 0 || !(next === null || typeof next === 'string')) {
    throw malformed('an end line without count and next_cursor', where);
  }
  return value as unknown as EndLine;
}

/**
 * Parses one NDJSON line of a snapshots, deltas or trades stream: a row, a `{"type":"gap",…}` marker or the
 * `{"type":"end",…}` line; among deltas also `{"type":"trade",…}` and `{"type":"trades_gap",…}` lines. Throws
 * `malformed_row` (with the line number in `where`) for anything else.
 */
export function parseLine<K extends LineKind>(kind: K, line: string, where: DataLocation): StreamLine<K> {
  return parseLineAt(kind, line, 0, line.length, where);
}

/** `parseLine` of the line at `text[start, end)` (a chunk of a stream holds many lines). */
export function parseLineAt<K extends LineKind>(
  kind: K,
  text: string,
  start: number,
  end: number,
  where: DataLocation,
): StreamLine<K> {
  // Trades go the checked way (JSON.parse): a trade id may hold escapes, and trades are far fewer than deltas.
  const fast =
    kind === 'delta' ? fastDelta(text, start, end) : kind === 'snapshot' ? fastSnapshot(text, start, end) : undefined;
  if (fast !== undefined) return fast as RowOf<K>;
  const line = start === 0 && end === text.length ? text : text.slice(start, end);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw malformed('not a JSON line', { ...where, text: line });
  }
  const at = { ...where, text: line };
  if (isObject(value) && 'type' in value) {
    if (value.type === 'gap' || (kind === 'delta' && value.type === 'trades_gap')) {
      const gap = { ...checkGap(value, at), type: value.type } as GapMarker | TradesGapMarker;
      lastTs = parseTimestamp(gap.from_ts);
      return gap as StreamLine<K>;
    }
    if (kind === 'delta' && value.type === 'trade') {
      const trade = checkTradeLine(value, at);
      lastTs = parseTimestamp(trade.ts);
      return trade as StreamLine<K>;
    }
    lastTs = NaN;
    if (value.type === 'end') return checkEndLine(value, at);
    throw malformed(`unknown line type ${JSON.stringify(value.type)}`, at);
  }
  const row = checkRow(kind, value, at);
  lastTs = parseTimestamp(row.ts);
  return row;
}
