/**
 * Streaming inserts of snapshot, delta, trade, gap and verification rows, for the recorder (through RecorderStore)
 * and the data generator. Inserts do not go through the querier: they are not gated, and their writer owns their deadline and
 * abort (the recorder probes before it retries one; see queries/recorder.ts).
 *
 * Rows travel as TabSeparated text, one line per row, so decimals stay the exact strings the venue sent (JSON
 * numbers would go through floating point on some paths, and 18.16 rejects decimals given as JSON strings).
 * Row formats, in column order (docs/history-internals.md, "Writing: formats and idempotence"), row format 4 (the
 * newest, since migration 4; what the encoders below write):
 *
 *   snapshots      exchange  ticker  ts  side  price  quantity  received_ts  venue_seq
 *   deltas         exchange  ticker  ts  sequence  side  price  quantity_delta  received_ts  venue_seq
 *   trades         exchange  ticker  ts  sequence  trade_id  price  size  side  venue_side  received_ts  venue_seq
 *   gaps           exchange  ticker  from_ts  to_ts  reason  detected_at  stream
 *   verifications  exchange  ticker  ts  method  detected_at
 *   handovers      exchange  ticker  ts  from_term  to_term  kind  detected_at
 *
 * `exchange` is a recorded exchange's key (`venue_b`, …: the stored Enum8's members); `ticker` matches `[A-Za-z0-9._-]{1,128}`; `ts`, `received_ts`,
 * `from_ts`, `to_ts`, `detected_at` are epoch milliseconds (UTC); `side` is `bid` | `ask`; `sequence` is an unsigned
 * 64-bit integer; decimals are plain decimal strings (`-?D{1,20}(.D{1,18})?`, no exponent); `reason` is a short
 * token. The encoders check every field, so a malformed row fails before it reaches the table.
 *
 * `side` of a trade is the taker's, `buy` | `sell`; `trade_id` and `venue_side` are venue text (printable ASCII, no
 * tab or backslash, at most 128 characters: VENUE_TEXT_PATTERN); `stream` of a gap is `book` | `trades`;
 * `venue_seq` is the venue's own ordering of the row's message (VENUE_SEQ_PATTERN: at most 48 characters of
 * `[A-Za-z0-9:._/+=-]`, '' where it has none); `method` of a verification is `rest_book` | `checksum` | `snapshot`.
 *
 * Hand-overs (migration 6, redundant recording) are inserted directly by the recorder that takes a ticker, awaited,
 * never batched or spooled: they have no older format, and insert with format 4's lines; `from_term` and `to_term` are
 * recorders' terms (unsigned integers), `kind` is `release` | `takeover` | `offer`.
 *
 * Row format 3 is format 4 without `venue_seq` and without verifications (what the generator writes until it moves
 * to 4, and what recorders before 4 spooled: inserted with `rowFormat: 3`, the default of `insertTsv`, their rows
 * read `venue_seq` ''; the recorder's batches carry their format and write 4); format
 * 2 is format 3 without trades and without a gap's `stream` (what recorders before migration 3 spooled: their gaps are
 * book gaps, the column's default); format 1 is format 2 without `received_ts` (before migration 2): inserted with
 * `rowFormat: 1`, its rows take the column's default, their `ts`.
 *
 * One insert of at most `max_insert_block_size` rows (1,048,576 by default) that falls in one month is written as
 * one part: it lands entirely or not at all (`async_insert` is pinned off where the server has it: connection.ts).
 * That is what makes probe-before-retry possible for the recorder on one server; on a cluster the insert goes
 * through the Distributed table, synchronously, and each shard's replicated table deduplicates a block sent again.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { EXCHANGE_KEY_PATTERN, type ExchangeKey } from '@depthgate/platforms';
import { newQueryId } from './connection';
import { SIDES, TICKER_PATTERN, VENUE_SEQ_PATTERN, VENUE_TEXT_PATTERN, lit, sql, type Side } from './literals';
import {
  HANDOVER_KINDS,
  STREAM_CODES,
  TRADE_SIDE_CODES,
  VERIFICATION_METHODS,
  type GapStream,
  type HandoverKind,
  type TradeSide,
  type VerificationMethod,
} from './schema';
import { connectionOf, type HistoryStore } from './store';

const TRADE_SIDES = Object.keys(TRADE_SIDE_CODES) as TradeSide[];
const GAP_STREAMS = Object.keys(STREAM_CODES) as GapStream[];

export interface SnapshotRow {
  exchange: ExchangeKey;
  ticker: string;
  /** Epoch milliseconds of the book. */
  ts: number;
  side: Side;
  price: string;
  /** The level's size: a non-negative decimal string. */
  quantity: string;
  /** When the book was received (epoch ms); default: `ts`. */
  received_ts?: number;
  /** The venue's own ordering of the message the book came from (VENUE_SEQ_PATTERN); default: '' (none). */
  venue_seq?: string;
}

export interface DeltaRow {
  exchange: ExchangeKey;
  ticker: string;
  /** Epoch milliseconds of the change. */
  ts: number;
  /** Orders changes that share a `ts`; strictly increasing per ticker in our data. */
  sequence: number | bigint;
  side: Side;
  price: string;
  /** Signed change of the level's size. */
  quantity_delta: string;
  /** When the change was received (epoch ms); default: `ts`. */
  received_ts?: number;
  /** The venue's own ordering of the message the change came from (VENUE_SEQ_PATTERN); default: '' (none). */
  venue_seq?: string;
}

export interface TradeRow {
  exchange: ExchangeKey;
  ticker: string;
  /** Epoch milliseconds of the trade (the venue's time). */
  ts: number;
  /** The ticker's sequence, shared with its deltas: (ts, sequence) orders both in arrival order. */
  sequence: number | bigint;
  /** The venue's trade id, or a deterministic one from the message (docs/history-internals.md, "Recorder", "Trades"). */
  trade_id: string;
  price: string;
  /** A positive decimal string. */
  size: string;
  /** The taker's side, normalised to the book. */
  side: TradeSide;
  /** The venue's side field as sent ('' when it has none). */
  venue_side: string;
  /** When the trade was received (epoch ms); default: `ts`. */
  received_ts?: number;
  /** The venue's own ordering of the message the trade came from (VENUE_SEQ_PATTERN); default: '' (none). */
  venue_seq?: string;
}

export interface GapRow {
  exchange: ExchangeKey;
  ticker: string;
  /** Last good data before the gap (epoch ms). */
  from_ts: number;
  /** First good data after it, or when the gap was closed (epoch ms). */
  to_ts: number;
  /** A short token: `seed_end`, `sequence_gap`, `disconnect`, … */
  reason: string;
  detected_at: number;
  /** What the gap interrupts; default: the book. */
  stream?: GapStream;
}

/** A moment the recorder found its book equal to the venue's (docs/history.md#verified-books). */
export interface VerificationRow {
  exchange: ExchangeKey;
  ticker: string;
  /** The moment the book agreed: the venue's time of the state compared (epoch ms). */
  ts: number;
  /** How: the venue's REST book, a venue checksum, or a venue snapshot. */
  method: VerificationMethod;
  /** When the recorder established it (epoch ms). */
  detected_at: number;
}

/**
 * A ticker moved from one recorder's term to another's (redundant recording): from `ts` (the splice point) on, its
 * rows are `to_term`'s.
 */
export interface HandoverRow {
  exchange: ExchangeKey;
  ticker: string;
  /** The splice point: the first ms the new owner is responsible for (epoch ms). */
  ts: number;
  from_term: number;
  to_term: number;
  kind: HandoverKind;
  /** When the new owner recorded it (epoch ms). */
  detected_at: number;
}

export class RowFormatError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'RowFormatError';
  }
}

/** A decimal the tables' `Decimal(38, 18)` columns take as text: no exponent, ≤ 20 integer and ≤ 18 fraction digits. */
export const DECIMAL = /^-?[0-9]{1,20}(\.[0-9]{1,18})?$/;
const UNSIGNED_DECIMAL = /^[0-9]{1,20}(\.[0-9]{1,18})?$/;
const REASON = /^[a-z0-9._-]{1,64}$/;
const POSITIVE_DECIMAL = /^(?!0+(\.0+)?$)[0-9]{1,20}(\.[0-9]{1,18})?$/;
const UINT64_MAX = 2n ** 64n - 1n;

function exchange(v: unknown): string {
  if (typeof v !== 'string' || !EXCHANGE_KEY_PATTERN.test(v)) throw new RowFormatError(`bad exchange ${String(v)}`);
  return v as string;
}
function ticker(v: unknown): string {
  if (typeof v !== 'string' || !TICKER_PATTERN.test(v)) throw new RowFormatError(`bad ticker ${JSON.stringify(v)}`);
  return v;
}
function millis(field: string, v: unknown): string {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new RowFormatError(`bad ${field} ${String(v)}`);
  return String(v);
}
function side(v: unknown): string {
  if (!(SIDES as readonly unknown[]).includes(v)) throw new RowFormatError(`bad side ${String(v)}`);
  return v as string;
}
function decimal(field: string, v: unknown, pattern = DECIMAL): string {
  if (typeof v !== 'string' || !pattern.test(v)) throw new RowFormatError(`bad ${field} ${JSON.stringify(v)}`);
  return v;
}
function text(field: string, v: unknown): string {
  if (typeof v !== 'string' || !VENUE_TEXT_PATTERN.test(v))
    throw new RowFormatError(`bad ${field} ${JSON.stringify(v)}`);
  return v;
}
/** A row format this build knows (not, say, an array index passed by `map`). */
function known(rowFormat: unknown): RowFormat {
  if (!(ROW_FORMATS as readonly unknown[]).includes(rowFormat))
    throw new RowFormatError(`no row format ${String(rowFormat)}`);
  return rowFormat as RowFormat;
}
function venueSeq(v: unknown): string {
  if (v === undefined) return '';
  if (typeof v !== 'string' || !VENUE_SEQ_PATTERN.test(v))
    throw new RowFormatError(`bad venue_seq ${JSON.stringify(v)}`);
  return v;
}
/** A recorder's term (redundant recording): a non-negative safe integer (Redis INCR). */
function term(field: string, v: unknown): string {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new RowFormatError(`bad ${field} ${String(v)}`);
  return String(v);
}
function sequence(v: unknown): string {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'bigint' && v >= 0n && v <= UINT64_MAX) return v.toString();
  throw new RowFormatError(`bad sequence ${String(v)}`);
}

/**
 * The encoders write the newest row format (4) unless told another: an older one leaves out the fields it does not
 * have (`received_ts` below 2, `venue_seq` below 4) and refuses a row that would lose a venue sequence.
 */
function tail(r: { ts: number; received_ts?: number; venue_seq?: string }, rowFormat: RowFormat): string {
  known(rowFormat);
  const received = rowFormat >= 2 ? `\t${millis('received_ts', r.received_ts ?? r.ts)}` : '';
  const seq = venueSeq(r.venue_seq);
  if (rowFormat >= 4) return `${received}\t${seq}\n`;
  if (seq !== '') throw new RowFormatError(`row format ${rowFormat} has no venue_seq`);
  return `${received}\n`;
}

export function encodeSnapshotRow(r: SnapshotRow, rowFormat: RowFormat = LATEST_ROW_FORMAT): string {
  return `${exchange(r.exchange)}\t${ticker(r.ticker)}\t${millis('ts', r.ts)}\t${side(r.side)}\t${decimal('price', r.price)}\t${decimal('quantity', r.quantity, UNSIGNED_DECIMAL)}${tail(r, rowFormat)}`;
}

export function encodeDeltaRow(r: DeltaRow, rowFormat: RowFormat = LATEST_ROW_FORMAT): string {
  return `${exchange(r.exchange)}\t${ticker(r.ticker)}\t${millis('ts', r.ts)}\t${sequence(r.sequence)}\t${side(r.side)}\t${decimal('price', r.price)}\t${decimal('quantity_delta', r.quantity_delta)}${tail(r, rowFormat)}`;
}

export function encodeTradeRow(r: TradeRow, rowFormat: RowFormat = LATEST_ROW_FORMAT): string {
  if (known(rowFormat) < 3) throw new RowFormatError(`row format ${rowFormat} has no trades`);
  if (!(TRADE_SIDES as readonly unknown[]).includes(r.side)) throw new RowFormatError(`bad side ${String(r.side)}`);
  const id = text('trade_id', r.trade_id);
  if (id === '') throw new RowFormatError('empty trade_id');
  return `${exchange(r.exchange)}\t${ticker(r.ticker)}\t${millis('ts', r.ts)}\t${sequence(r.sequence)}\t${id}\t${decimal('price', r.price)}\t${decimal('size', r.size, POSITIVE_DECIMAL)}\t${r.side}\t${text('venue_side', r.venue_side)}${tail(r, rowFormat)}`;
}

export function encodeGapRow(r: GapRow, rowFormat: RowFormat = LATEST_ROW_FORMAT): string {
  if (typeof r.reason !== 'string' || !REASON.test(r.reason)) throw new RowFormatError(`bad reason ${r.reason}`);
  if (r.to_ts < r.from_ts) throw new RowFormatError('gap ends before it starts');
  const stream = r.stream ?? 'book';
  if (!(GAP_STREAMS as readonly unknown[]).includes(stream)) throw new RowFormatError(`bad stream ${String(stream)}`);
  if (known(rowFormat) < 3 && stream !== 'book') throw new RowFormatError(`row format ${rowFormat} has no gap stream`);
  const head = `${exchange(r.exchange)}\t${ticker(r.ticker)}\t${millis('from_ts', r.from_ts)}\t${millis('to_ts', r.to_ts)}\t${r.reason}\t${millis('detected_at', r.detected_at)}`;
  return rowFormat >= 3 ? `${head}\t${stream}\n` : `${head}\n`;
}

export function encodeVerificationRow(r: VerificationRow, rowFormat: RowFormat = LATEST_ROW_FORMAT): string {
  if (known(rowFormat) < 4) throw new RowFormatError(`row format ${rowFormat} has no verifications`);
  if (!(VERIFICATION_METHODS as readonly unknown[]).includes(r.method))
    throw new RowFormatError(`bad method ${String(r.method)}`);
  return `${exchange(r.exchange)}\t${ticker(r.ticker)}\t${millis('ts', r.ts)}\t${r.method}\t${millis('detected_at', r.detected_at)}\n`;
}

export function encodeHandoverRow(r: HandoverRow, rowFormat: RowFormat = LATEST_ROW_FORMAT): string {
  if (known(rowFormat) < 4) throw new RowFormatError(`row format ${rowFormat} has no handovers`);
  if (!(HANDOVER_KINDS as readonly unknown[]).includes(r.kind)) throw new RowFormatError(`bad kind ${String(r.kind)}`);
  return `${exchange(r.exchange)}\t${ticker(r.ticker)}\t${millis('ts', r.ts)}\t${term('from_term', r.from_term)}\t${term('to_term', r.to_term)}\t${r.kind}\t${millis('detected_at', r.detected_at)}\n`;
}

/** The columns of each table's TabSeparated lines, in the newest row format (4). */
export const INSERT_COLUMNS = {
  snapshots: ['exchange', 'ticker', 'ts', 'side', 'price', 'quantity', 'received_ts', 'venue_seq'],
  deltas: ['exchange', 'ticker', 'ts', 'sequence', 'side', 'price', 'quantity_delta', 'received_ts', 'venue_seq'],
  trades: [
    'exchange',
    'ticker',
    'ts',
    'sequence',
    'trade_id',
    'price',
    'size',
    'side',
    'venue_side',
    'received_ts',
    'venue_seq',
  ],
  gaps: ['exchange', 'ticker', 'from_ts', 'to_ts', 'reason', 'detected_at', 'stream'],
  verifications: ['exchange', 'ticker', 'ts', 'method', 'detected_at'],
  handovers: ['exchange', 'ticker', 'ts', 'from_term', 'to_term', 'kind', 'detected_at'],
} as const;
export type InsertTable = keyof typeof INSERT_COLUMNS;

/**
 * Versions of the line formats: 1 before migration 2 (no `received_ts`), 2 before migration 3 (no trades, no gap
 * `stream`), 3 before migration 4 (no `venue_seq`, no verifications), 4 since. A writer that keeps encoded lines (the
 * recorder's spool) records the version with them, so lines written by an older build still insert.
 */
export const ROW_FORMATS = [1, 2, 3, 4] as const;
export type RowFormat = (typeof ROW_FORMATS)[number];
/** The newest format: the one the encoders of this module write (`insert*Rows` insert with it). */
export const LATEST_ROW_FORMAT: RowFormat = 4;
/**
 * The format of lines given without one (`insertTsv`'s default): 3, what the generator writes until it writes
 * `venue_seq` (the recorder's batches record their own format, LATEST_ROW_FORMAT); it becomes LATEST_ROW_FORMAT then.
 */
export const CURRENT_ROW_FORMAT: RowFormat = 3;

/** The columns of a table's lines in a row format. */
export function insertColumns(table: InsertTable, rowFormat: RowFormat = CURRENT_ROW_FORMAT): string[] {
  if (table === 'trades' && rowFormat < 3) throw new RowFormatError(`row format ${rowFormat} has no trades`);
  if ((table === 'verifications' || table === 'handovers') && rowFormat < 4)
    throw new RowFormatError(`row format ${rowFormat} has no ${table}`);
  const columns: readonly string[] = INSERT_COLUMNS[table];
  return columns.filter(
    (c) =>
      (rowFormat >= 2 || c !== 'received_ts') &&
      (rowFormat >= 3 || c !== 'stream') &&
      (rowFormat >= 4 || c !== 'venue_seq'),
  );
}

export interface InsertOptions {
  /** Query id of the insert (default: a fresh one); lets a writer probe or kill it. */
  queryId?: string;
  signal?: AbortSignal;
  /**
   * The line format of the text: `insertTsv`'s default is CURRENT_ROW_FORMAT (lines written elsewhere), the
   * `insert*Rows` functions' LATEST_ROW_FORMAT (they encode the lines in it).
   */
  rowFormat?: RowFormat;
}

/**
 * The query id of a recorder's insert into `table`. Under a term (redundant recording: term > 0, from the recorder's
 * lease) `rec-<term>-<table>-<uuid>`, so that the recorder taking its tickers over can end every insert of that term
 * still running (RecorderStore.killWriter); a recorder alone (term 0) keeps newQueryId's `dg-insert-<table>-<uuid>`.
 * `place` (lowercase letters, digits, `-`) stands instead of the uuid where every insert of the same rows must carry
 * the same id, in any life of the process (a spooled record's: the next start can end one a dead process left running).
 */
export function recorderQueryId(term: number, table: InsertTable, place?: string): string {
  if (!Number.isSafeInteger(term) || term < 0) throw new TypeError(`not a term: ${term}`);
  if (place !== undefined && !/^[a-z0-9-]{1,48}$/.test(place)) throw new TypeError(`not a query id place: ${place}`);
  if (place === undefined && term === 0) return newQueryId(`insert-${table}`);
  return `${term === 0 ? 'dg-insert-' : recorderQueryPrefix(term)}${table}-${place ?? randomUUID()}`;
}

/** What every insert query id of a term starts with (`rec-<term>-`). */
export function recorderQueryPrefix(term: number): string {
  if (!Number.isSafeInteger(term) || term <= 0) throw new TypeError(`not a term: ${term}`);
  return `rec-${term}-`;
}

/**
 * Streams already-encoded TabSeparated text into a table. The caller guarantees the format (the encoders above,
 * or the generator, which builds lines from validated parts). Resolves when the server has committed the insert.
 */
export async function insertTsv(
  store: HistoryStore,
  table: InsertTable,
  source: Readable | AsyncIterable<string | Buffer> | Iterable<string | Buffer>,
  options: InsertOptions = {},
): Promise<{ queryId: string }> {
  const ch = connectionOf(store);
  const stream = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  const queryId = options.queryId ?? newQueryId(`insert-${table}`);
  const settings = await ch.settingsFor('insert');
  await ch.data.insert({
    table: sql`${ch.db}.${lit.identifier(table)}`.text,
    columns: insertColumns(table, options.rowFormat) as [string, ...string[]],
    values: stream,
    format: 'TabSeparated',
    query_id: queryId,
    abort_signal: options.signal,
    clickhouse_settings: settings,
  });
  return { queryId };
}

/** Batches encoded lines into ~64 KiB strings, so the socket sees few large writes. */
async function* batched<T>(rows: Iterable<T> | AsyncIterable<T>, encode: (row: T) => string): AsyncGenerator<string> {
  let buffer = '';
  for await (const row of rows) {
    buffer += encode(row);
    if (buffer.length >= 65_536) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer.length > 0) yield buffer;
}

/** Encodes rows in the insert's row format (default: the newest) and inserts them. */
function insertRows<T>(
  store: HistoryStore,
  table: InsertTable,
  rows: Iterable<T> | AsyncIterable<T>,
  encode: (row: T, rowFormat: RowFormat) => string,
  options: InsertOptions = {},
): Promise<{ queryId: string }> {
  const rowFormat = options.rowFormat ?? LATEST_ROW_FORMAT;
  return insertTsv(
    store,
    table,
    batched(rows, (r) => encode(r, rowFormat)),
    { ...options, rowFormat },
  );
}

export function insertSnapshotRows(
  store: HistoryStore,
  rows: Iterable<SnapshotRow> | AsyncIterable<SnapshotRow>,
  options?: InsertOptions,
): Promise<{ queryId: string }> {
  return insertRows(store, 'snapshots', rows, encodeSnapshotRow, options);
}

export function insertDeltaRows(
  store: HistoryStore,
  rows: Iterable<DeltaRow> | AsyncIterable<DeltaRow>,
  options?: InsertOptions,
): Promise<{ queryId: string }> {
  return insertRows(store, 'deltas', rows, encodeDeltaRow, options);
}

export function insertTradeRows(
  store: HistoryStore,
  rows: Iterable<TradeRow> | AsyncIterable<TradeRow>,
  options?: InsertOptions,
): Promise<{ queryId: string }> {
  return insertRows(store, 'trades', rows, encodeTradeRow, options);
}

export function insertGapRows(
  store: HistoryStore,
  rows: Iterable<GapRow> | AsyncIterable<GapRow>,
  options?: InsertOptions,
): Promise<{ queryId: string }> {
  return insertRows(store, 'gaps', rows, encodeGapRow, options);
}

export function insertVerificationRows(
  store: HistoryStore,
  rows: Iterable<VerificationRow> | AsyncIterable<VerificationRow>,
  options?: InsertOptions,
): Promise<{ queryId: string }> {
  return insertRows(store, 'verifications', rows, encodeVerificationRow, options);
}

export function insertHandoverRows(
  store: HistoryStore,
  rows: Iterable<HandoverRow> | AsyncIterable<HandoverRow>,
  options?: InsertOptions,
): Promise<{ queryId: string }> {
  return insertRows(store, 'handovers', rows, encodeHandoverRow, options);
}
