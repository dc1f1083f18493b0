/**
 * Query parameters of the history endpoints, parsed strictly. Each failure is an AppError with the code and
 * message the caller sees (docs/history.md, "Errors").
 */
import { EXTRA_FIELDS, type ExtraField } from '@depthgate/history-store';
import { AppError, parseRfc3339, type ErrorCode } from '@depthgate/service-kit';
import type { TextFormat } from './row-binary';

export { parseRfc3339 } from '@depthgate/service-kit';

const TIMESTAMP_HINT = 'expected an RFC 3339 timestamp such as 2026-03-07T00:00:00Z or 2026-03-07T01:00:00.250+01:00';

/** A single string value of a query parameter, or undefined; a repeated parameter is an error. */
export function singleParam(query: Record<string, unknown>, name: string, code: ErrorCode): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AppError(code, `${name} must be given at most once`);
  return v;
}

export interface TimeRange {
  /** Inclusive, epoch ms; undefined when not given. */
  start?: number;
  /** Inclusive, epoch ms; undefined when not given. */
  end?: number;
}

export function parseTimeRange(query: Record<string, unknown>): TimeRange {
  const range: TimeRange = {};
  const startText = singleParam(query, 'start_ts', 'invalid_timestamp');
  const endText = singleParam(query, 'end_ts', 'invalid_timestamp');
  if (startText !== undefined) {
    range.start = parseRfc3339(startText, 'ceil');
    if (range.start === undefined) {
      throw new AppError('invalid_timestamp', `start_ts is not a valid timestamp: ${TIMESTAMP_HINT}`);
    }
  }
  if (endText !== undefined) {
    range.end = parseRfc3339(endText, 'floor');
    if (range.end === undefined) {
      throw new AppError('invalid_timestamp', `end_ts is not a valid timestamp: ${TIMESTAMP_HINT}`);
    }
  }
  if (range.start !== undefined && range.end !== undefined && range.start > range.end) {
    throw new AppError('invalid_timestamp', 'start_ts is after end_ts');
  }
  return range;
}

/** `limit`: a positive decimal integer up to `max`; absent → `defaultLimit`. */
export function parseLimit(query: Record<string, unknown>, defaultLimit: number, max: number): number {
  const text = singleParam(query, 'limit', 'invalid_limit');
  if (text === undefined) return defaultLimit;
  if (!/^[0-9]{1,12}$/.test(text)) {
    throw new AppError(
      'invalid_limit',
      `limit must be a positive integer (at most ${max}), got "${text.slice(0, 40)}"`,
    );
  }
  const n = Number(text);
  if (n < 1) throw new AppError('invalid_limit', `limit must be a positive integer (at most ${max}), got "${text}"`);
  if (n > max) throw new AppError('invalid_limit', `limit ${n} is above the maximum of ${max}`);
  return n;
}

/**
 * `limit` of a bulk stream (NDJSON, CSV): optional — the whole range by default — and any positive integer, since a
 * stream's memory does not grow with it.
 */
export function parseStreamLimit(query: Record<string, unknown>): number {
  const text = singleParam(query, 'limit', 'invalid_limit');
  if (text === undefined) return Infinity;
  const n = /^[0-9]{1,15}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1)) throw new AppError('invalid_limit', `limit must be a positive integer, got "${text.slice(0, 40)}"`);
  return n;
}

/** `at` (the book endpoint): an RFC 3339 moment, sub-milliseconds rounded down; undefined when not given. */
export function parseAt(query: Record<string, unknown>): number | undefined {
  const text = singleParam(query, 'at', 'invalid_timestamp');
  if (text === undefined) return undefined;
  const at = parseRfc3339(text, 'floor');
  if (at === undefined) throw new AppError('invalid_timestamp', `at is not a valid timestamp: ${TIMESTAMP_HINT}`);
  return at;
}

/** `depth` (the book endpoint): levels per side, a positive integer up to `max`; undefined (every level) when absent. */
export function parseDepth(query: Record<string, unknown>, max: number): number | undefined {
  const text = singleParam(query, 'depth', 'invalid_depth');
  if (text === undefined) return undefined;
  const n = /^[0-9]{1,12}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= max)) {
    throw new AppError(
      'invalid_depth',
      `depth must be a positive integer of levels per side, at most ${max}, got "${text.slice(0, 40)}"`,
    );
  }
  return n;
}

/** Media types of the row formats, as `Accept` and `format=` name them. */
const MEDIA_TYPES: Record<string, TextFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'text/csv': 'csv',
  'application/*': 'json',
  '*/*': 'json',
};
const FORMATS: readonly TextFormat[] = ['json', 'ndjson', 'csv'];

/**
 * The answer's format: `format=json|ndjson|csv` when given (it wins), else the `Accept` type of highest quality among
 * JSON, NDJSON (`application/x-ndjson`, `application/ndjson`) and CSV (`text/csv`); JSON when it names none of them
 * (as before formats existed: a client sending `Accept: text/html` still gets JSON). `explicit`: `format` was given.
 */
export function parseFormat(
  query: Record<string, unknown>,
  accept: string | undefined,
): { format: TextFormat; explicit: boolean } {
  const text = singleParam(query, 'format', 'invalid_format');
  if (text !== undefined) {
    const format = FORMATS.find((f) => f === text.toLowerCase());
    if (format === undefined) {
      throw new AppError(
        'invalid_format',
        `format must be json, ndjson or csv, got "${text.slice(0, 40)}" (or ask with Accept: application/x-ndjson or text/csv)`,
      );
    }
    return { format, explicit: true };
  }
  let best: { format: TextFormat; q: number; wildcard: boolean } | undefined;
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
  const text = singleParam(query, 'fields', 'invalid_fields');
  if (text === undefined) return [];
  const names = text.split(',').map((n) => n.trim());
  for (const name of names) {
    if (!(EXTRA_FIELDS as readonly string[]).includes(name)) {
      throw new AppError(
        'invalid_fields',
        `fields names fields to add to the rows: ${EXTRA_FIELDS.join(', ')}; "${name.slice(0, 40)}" is not one`,
      );
    }
  }
  return [...new Set(names)] as ExtraField[];
}

/** `include`: what to add among the rows, comma-separated; only `gaps` exists. */
export function parseInclude(query: Record<string, unknown>): { gaps: boolean } {
  const text = singleParam(query, 'include', 'invalid_include');
  if (text === undefined) return { gaps: false };
  const names = text.split(',').map((n) => n.trim());
  for (const name of names) {
    if (name !== 'gaps') {
      throw new AppError('invalid_include', `include may name gaps only; "${name.slice(0, 40)}" is not known`);
    }
  }
  return { gaps: true };
}
