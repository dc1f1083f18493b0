/**
 * Query parameters of the history endpoints, read through their schemas (contract/params.ts: the one definition of
 * each, which the OpenAPI document is generated from), in the order the endpoints check them. Each failure is an
 * AppError with the code and message the caller sees (docs/history.md, "Errors").
 */
import type { BarInterval, ExtraField, TradeExtraField } from '@depthgate/history-store';
import { AppError } from '@depthgate/service-kit';
import {
  atParam,
  depthParam,
  endTsParam,
  fieldsParam,
  formatParam,
  includeParam,
  intervalParam,
  pageLimitParam,
  paramText,
  parseParam,
  readParam,
  startTsParam,
  streamLimitParam,
  tradeFieldsParam,
  type QueryParam,
  type RowFormat,
} from '../contract/params';

export { parseMoment, parseRfc3339 } from '@depthgate/service-kit';

export interface TimeRange {
  /** Inclusive, epoch ms; undefined when not given. */
  start?: number;
  /** Inclusive, epoch ms; undefined when not given. */
  end?: number;
}

export function parseTimeRange(query: Record<string, unknown>): TimeRange {
  // Both are checked for repetition before either is parsed.
  const startText = paramText(query, startTsParam);
  const endText = paramText(query, endTsParam);
  const range: TimeRange = {};
  const start = parseParam(startTsParam, startText);
  const end = parseParam(endTsParam, endText);
  if (start !== undefined) range.start = start;
  if (end !== undefined) range.end = end;
  if (start !== undefined && end !== undefined && start > end) {
    throw new AppError('invalid_timestamp', 'start_ts is after end_ts');
  }
  return range;
}

/** The parameters whose schema the configuration sets, built once per setting (an app has one: the last is kept). */
function memo<A extends number[], T>(build: (...args: A) => QueryParam<T>): (...args: A) => QueryParam<T> {
  let last: { args: A; param: QueryParam<T> } | undefined;
  return (...args) => {
    if (last === undefined || args.some((a, i) => a !== last?.args[i])) last = { args, param: build(...args) };
    return last.param;
  };
}
const pageLimit = memo((defaultLimit: number, maxLimit: number) => pageLimitParam({ defaultLimit, maxLimit }));
const depth = memo(depthParam);

/** `limit` of a JSON page: a positive decimal integer up to `max`; absent → `defaultLimit`. */
export function parseLimit(query: Record<string, unknown>, defaultLimit: number, max: number): number {
  return readParam(query, pageLimit(defaultLimit, max)) ?? defaultLimit;
}

/**
 * `limit` of a bulk stream (NDJSON, CSV, Parquet): optional — the whole range by default — and any positive integer, since a
 * stream's memory does not grow with it.
 */
export function parseStreamLimit(query: Record<string, unknown>): number {
  return readParam(query, streamLimitParam) ?? Infinity;
}

/** `at` (the book endpoint): an RFC 3339 moment (sub-milliseconds rounded down) or epoch milliseconds; undefined when not given. */
export function parseAt(query: Record<string, unknown>): number | undefined {
  return readParam(query, atParam);
}

/** `depth` (the book endpoint): levels per side, a positive integer up to `max`; undefined (every level) when absent. */
export function parseDepth(query: Record<string, unknown>, max: number): number | undefined {
  return readParam(query, depth(max));
}

/** Media types of the row formats, as `Accept` and `format=` name them. */
const MEDIA_TYPES: Record<string, RowFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'text/csv': 'csv',
  'application/vnd.apache.parquet': 'parquet',
  'application/*': 'json',
  '*/*': 'json',
};

/**
 * The answer's format: `format=json|ndjson|csv|parquet` when given (it wins), else the `Accept` type of highest
 * quality among JSON, NDJSON (`application/x-ndjson`, `application/ndjson`), CSV (`text/csv`) and Parquet
 * (`application/vnd.apache.parquet`); JSON when it names none of them (as before formats existed: a client sending
 * `Accept: text/html` still gets JSON). `explicit`: `format` was given.
 */
export function parseFormat(
  query: Record<string, unknown>,
  accept: string | undefined,
): { format: RowFormat; explicit: boolean } {
  const format = readParam(query, formatParam);
  if (format !== undefined) return { format, explicit: true };
  let best: { format: RowFormat; q: number; wildcard: boolean } | undefined;
  for (const part of (accept ?? '').split(',')) {
    const [type = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const format = MEDIA_TYPES[type];
    if (format === undefined) continue;
    const qParam = params.find((x) => x.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > 0)) continue;
    const wildcard = type.includes('*');
    // The highest quality wins; at equal quality the first listed, except that a named type beats a wildcard.
    if (best === undefined || q > best.q || (q === best.q && best.wildcard && !wildcard))
      best = { format, q, wildcard };
  }
  return { format: best?.format ?? 'json', explicit: false };
}

/** `fields`: extra fields of the rows, comma-separated; only `received_ts` exists. */
export function parseFields(query: Record<string, unknown>): ExtraField[] {
  const names = readParam(query, fieldsParam);
  return names === undefined ? [] : [...new Set(names)];
}

/** `fields` of the trades endpoint: received_ts, venue_side, sequence. */
export function parseTradeFields(query: Record<string, unknown>): TradeExtraField[] {
  const names = readParam(query, tradeFieldsParam);
  return names === undefined ? [] : [...new Set(names)];
}

/** `include`: what to add among the rows, comma-separated: `gaps`, `trades`. */
export function parseInclude(query: Record<string, unknown>): { gaps: boolean; trades: boolean } {
  const names = readParam(query, includeParam) ?? [];
  return { gaps: names.includes('gaps'), trades: names.includes('trades') };
}

/** `interval` of the bars (required). */
export function parseInterval(query: Record<string, unknown>): BarInterval {
  return readParam(query, intervalParam) as BarInterval;
}
