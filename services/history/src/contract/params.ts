/**
 * The history endpoints' parameters, each defined once: the zod schema that parses its text (order-books/params.ts
 * reads every parameter through it), the error code and message a caller gets when it does not parse, and the
 * description the OpenAPI document shows (contract/openapi.ts). Built once, at module load or (for what the
 * configuration sets) once per app; never per request.
 *
 * A parameter's schema takes the query string's text and returns the typed value. Numbers and lists are read from
 * their text by a `preprocess` step and checked by the schema after it, so the document shows the typed value
 * (`integer`, an `enum`, an `array`), as OpenAPI describes query parameters; timestamps stay strings (RFC 3339,
 * `format: date-time`, or epoch milliseconds, a pattern) with their parser as a transform.
 */
import * as z from 'zod';
import { EXCHANGES, unknownExchange, type ExchangeKey, type Exchanges } from '@depthgate/auth';
import {
  BAR_INTERVALS,
  EXTRA_FIELDS,
  TICKER_PATTERN,
  TRADE_EXTRA_FIELDS,
  type BarInterval,
  type ExtraField,
  type TradeExtraField,
} from '@depthgate/history-store';
import {
  AppError,
  EPOCH_MS_PATTERN,
  invalidTimestampMessage,
  parseMoment,
  type ErrorCode,
} from '@depthgate/service-kit';

/** A query parameter: its name, the schema that parses its text, and how a failure reads. */
export interface QueryParam<T> {
  name: string;
  code: ErrorCode;
  /** Parses the parameter's text; absent (undefined) gives the schema's default, or undefined. */
  schema: z.ZodType<T | undefined, unknown>;
  /** The message of a text the schema refused. */
  message: (text: string, issue: z.core.$ZodIssue) => string;
  /** For the OpenAPI document. */
  description: string;
  /** A list given comma-separated (OpenAPI `style: form, explode: false`). */
  list?: boolean;
}

/** The text of a query parameter, or undefined; a repeated parameter is an error (with the parameter's code). */
export function paramText(query: Record<string, unknown>, param: QueryParam<unknown>): string | undefined {
  const value = query[param.name];
  if (value !== undefined && typeof value !== 'string') {
    throw new AppError(param.code, `${param.name} must be given at most once`);
  }
  return value;
}

/** A parameter's value from its text (undefined: absent) by its schema; a refused text is an error. */
export function parseParam<T>(param: QueryParam<T>, text: string | undefined): T | undefined {
  const result = param.schema.safeParse(text);
  if (result.success) return result.data;
  throw new AppError(param.code, param.message(text ?? '', result.error.issues[0] as z.core.$ZodIssue));
}

/** The value of a query parameter by its schema (`paramText`, then `parseParam`). */
export function readParam<T>(query: Record<string, unknown>, param: QueryParam<T>): T | undefined {
  return parseParam(param, paramText(query, param));
}

const quoted = (text: string) => `"${text.slice(0, 40)}"`;

/** The text of a positive decimal integer of at most `digits` digits as a number; any other value as it is. */
const integerText = (digits: number) => {
  const pattern = new RegExp(`^[0-9]{1,${digits}}$`);
  return (value: unknown) => (typeof value === 'string' && pattern.test(value) ? Number(value) : value);
};

/** A comma-separated list as its trimmed names; any other value as it is. */
const listText = (value: unknown) => (typeof value === 'string' ? value.split(',').map((n) => n.trim()) : value);

/** The name a list's refusal is about: the element at the issue's path. */
const listItem = (text: string, issue: z.core.$ZodIssue) => {
  const names = text.split(',').map((n) => n.trim());
  const at = issue.path[0];
  return typeof at === 'number' ? (names[at] ?? '') : text;
};

// ---------------------------------------------------------------------------------------------------------------
// Path parameters

/**
 * `{exchange}`: an exchange key, a real platform name (alias), in any case; the value is the neutral key. The keys
 * and aliases are the registry's recorded exchanges (@depthgate/platforms' `EXCHANGES`, or a test's with a fixture):
 * this is the one place the history API takes them from.
 */
export function exchangeParamOf(exchanges: Exchanges<ExchangeKey>) {
  return z
    .preprocess((v) => (typeof v === 'string' ? (exchanges.canonical(v) ?? v) : v), z.enum(exchanges.keys))
    .meta({
      param: {
        id: 'exchange',
        description: `Neutral exchange key; real platform names are accepted as aliases, in any case: ${exchanges.describe()}.`,
      },
    });
}

/** The product's `{exchange}` (its OpenAPI document describes this one). */
export const exchangeParam = exchangeParamOf(EXCHANGES);

/** Reads an `{exchange}` against a registry's exchanges: the neutral key, or the 404 naming every one and its aliases. */
export function exchangeReader(exchanges: Exchanges<ExchangeKey> = EXCHANGES) {
  const param = exchanges === EXCHANGES ? exchangeParam : exchangeParamOf(exchanges);
  return {
    read(given: string): ExchangeKey | undefined {
      const result = param.safeParse(given);
      return result.success ? result.data : undefined;
    },
    unknown(given: string): AppError {
      return unknownExchange(exchanges, given);
    },
  };
}

/** `{ticker}`: the stored ticker's grammar; anything else is a ticker that does not exist (404 unknown_ticker). */
export const tickerParam = z
  .string()
  .regex(TICKER_PATTERN)
  .meta({
    param: {
      id: 'ticker',
      description: 'Matched exactly, else case-insensitively when exactly one stored ticker matches.',
    },
  });

// ---------------------------------------------------------------------------------------------------------------
// Query parameters

/** The forms, for a parameter's description. */
const TIMESTAMP_FORMS =
  'An RFC 3339 timestamp (any offset) or integer epoch milliseconds (13 digits, e.g. 1772841600000; epoch seconds are refused)';

/**
 * A moment parameter: RFC 3339 or integer epoch milliseconds (service-kit's `parseMoment`, the one parser of every
 * timestamp parameter) to epoch ms; RFC 3339's sub-milliseconds rounded as `rounding` says.
 */
function timestampParam(name: string, rounding: 'floor' | 'ceil', description: string): QueryParam<number> {
  return {
    name,
    code: 'invalid_timestamp',
    schema: z
      .union([z.string().meta({ format: 'date-time' }), z.string().regex(EPOCH_MS_PATTERN)])
      .transform((text, ctx) => {
        const ms = parseMoment(text, rounding);
        if (ms === undefined) {
          ctx.issues.push({ code: 'custom', message: 'not a timestamp', input: text });
          return z.NEVER;
        }
        return ms;
      })
      .optional(),
    message: (text) => invalidTimestampMessage(name, text),
    description: `${TIMESTAMP_FORMS}; ${description}`,
  };
}

export const startTsParam = timestampParam(
  'start_ts',
  'ceil',
  'rows at or after it (sub-milliseconds round up). Clamped to the caller’s window (max_data_age_days, anonymous: last day) and to 2026-03-07T00:00:00Z.',
);
export const endTsParam = timestampParam(
  'end_ts',
  'floor',
  'rows at or before it (sub-milliseconds round down). Default: no upper bound.',
);
export const atParam = timestampParam(
  'at',
  'floor',
  'the moment (sub-milliseconds round down); default: now (the newest state). Before the caller’s window: 400 invalid_timestamp naming the window’s start.',
);

export const prefixParam: QueryParam<string> = {
  name: 'prefix',
  code: 'invalid_request',
  schema: z.string().optional(),
  message: () => 'prefix is not text',
  description:
    'Case-insensitive prefix filter. Taken literally (_ and % are not wildcards); a prefix outside the ticker grammar ([A-Za-z0-9._-], at most 128) matches no ticker: the list is empty.',
};

export const cursorParam: QueryParam<string> = {
  name: 'cursor',
  code: 'invalid_cursor',
  schema: z.string().optional(),
  message: () => 'cursor is not text',
  description:
    'Continue a walk: the next_cursor of the previous page (or the cursor of its Link header), as it came. It carries the range, so start_ts and end_ts may not be given with it; it is bound to this exchange, ticker, endpoint and caller (else 400 invalid_cursor). The next page begins exactly after the previous one: no row twice, none skipped, whole books for snapshots.',
};

export interface LimitOptions {
  defaultLimit: number;
  maxLimit: number;
}

const limitDescription = (o: LimitOptions) =>
  `Maximum rows, applied after sorting by ts so the earliest rows are kept. JSON: default ${o.defaultLimit}, maximum ${o.maxLimit} (a larger value is answered 400 invalid_limit). NDJSON and CSV: no default (the whole range) and no maximum. Snapshots are rounded up to whole books. An answer the limit cut carries next_cursor (and, when its body is at most 1 MiB, a Link header).`;

/** `limit` of a JSON page: 1 to `maxLimit`, `defaultLimit` when absent. */
export function pageLimitParam(o: LimitOptions): QueryParam<number> {
  return {
    name: 'limit',
    code: 'invalid_limit',
    schema: z.preprocess(integerText(12), z.number().int().min(1).max(o.maxLimit)).prefault(o.defaultLimit),
    message: (text, issue) =>
      issue.code === 'too_big'
        ? `limit ${Number(text)} is above the maximum of ${o.maxLimit}`
        : `limit must be a positive integer (at most ${o.maxLimit}), got ${quoted(text)}`,
    description: limitDescription(o),
  };
}

const streamLimitSchema = z.preprocess(integerText(15), z.number().int().min(1));

/** `limit` of a bulk stream (NDJSON, CSV): any positive integer, none (the whole range) when absent. */
export const streamLimitParam: QueryParam<number> = {
  name: 'limit',
  code: 'invalid_limit',
  schema: streamLimitSchema.optional(),
  message: (text) => `limit must be a positive integer, got ${quoted(text)}`,
  description: 'Maximum rows of a stream',
};

/** `limit` as the document shows it: either reading (a page's or a stream's), with the page's default. */
export function documentedLimitParam(o: LimitOptions): QueryParam<number> {
  return { ...streamLimitParam, schema: streamLimitSchema.prefault(o.defaultLimit), description: limitDescription(o) };
}

export const TEXT_FORMATS = ['json', 'ndjson', 'csv'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];
/**
 * The formats of a rows answer: the text ones, Parquet (a bulk stream's rows as a columnar file), and digest (the
 * snapshots stream's books as one NDJSON line each: their digest instead of their rows).
 */
export const ROW_FORMATS = [...TEXT_FORMATS, 'parquet', 'digest'] as const;
export type RowFormat = (typeof ROW_FORMATS)[number];

export const formatParam: QueryParam<RowFormat> = {
  name: 'format',
  code: 'invalid_format',
  schema: z.preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), z.enum(ROW_FORMATS)).optional(),
  message: (text) =>
    `format must be json, ndjson, csv, parquet or digest, got ${quoted(text)} (or ask with Accept: application/x-ndjson, text/csv or application/vnd.apache.parquet)`,
  description:
    'json (the default), ndjson, csv or parquet; wins over Accept (application/json, application/x-ndjson or application/ndjson, text/csv, application/vnd.apache.parquet). NDJSON, CSV and Parquet are bulk streams of the whole range; NDJSON and CSV end with a line that says how they ended, Parquet says it in its footer’s key-value metadata (depthgate.count, depthgate.next_cursor, depthgate.gaps). On the snapshots endpoint also digest: an NDJSON stream of one line per book, {"ts","levels","digest"} (the book digest, docs/history.md), ending like NDJSON with count = books.',
};

export const fieldsParam: QueryParam<ExtraField[]> = {
  name: 'fields',
  code: 'invalid_fields',
  schema: z.preprocess(listText, z.array(z.enum(EXTRA_FIELDS))).optional(),
  message: (text, issue) =>
    `fields names fields to add to the rows: ${EXTRA_FIELDS.join(', ')}; ${quoted(listItem(text, issue))} is not one`,
  description:
    'Fields to add to every row, comma-separated, in this order after the others: received_ts (when the recorder received the row, UTC RFC 3339; rows recorded before receive times were kept have their ts), venue_seq (the venue’s own ordering of the message the row came from — Kalshi sid:seq, Coinbase sequence, … — or empty where the venue has none and on rows recorded before it was kept). With include=trades, the trade lines get them too.',
  list: true,
};

/** `fields` of the trades endpoint. */
export const tradeFieldsParam: QueryParam<TradeExtraField[]> = {
  name: 'fields',
  code: 'invalid_fields',
  schema: z.preprocess(listText, z.array(z.enum(TRADE_EXTRA_FIELDS))).optional(),
  message: (text, issue) =>
    `fields names fields to add to the trades: ${TRADE_EXTRA_FIELDS.join(', ')}; ${quoted(listItem(text, issue))} is not one`,
  description:
    'Fields to add to every trade, comma-separated, written in this order after the others: received_ts (when the recorder received it, UTC RFC 3339), venue_side (the venue’s own side field as sent, or empty), sequence (the ticker’s counter shared with its deltas: (ts, sequence) orders trades and deltas as they arrived), venue_seq (the venue’s own ordering of the message the trade came from, or empty).',
  list: true,
};

export const INCLUDES = ['gaps', 'trades'] as const;
export type Include = (typeof INCLUDES)[number];

export const includeParam: QueryParam<Include[]> = {
  name: 'include',
  code: 'invalid_include',
  schema: z.preprocess(listText, z.array(z.enum(INCLUDES))).optional(),
  message: (text, issue) => `include may name gaps and trades only; ${quoted(listItem(text, issue))} is not known`,
  description:
    'What to add among the rows, comma-separated. gaps: the recorded gaps of the range (NDJSON: {"type":"gap",…} lines, CSV: #gap lines, in time order; JSON: a gaps array) — the book’s gaps, and on the trades endpoint the trades’; trades (deltas only, not with format=parquet): the ticker’s trades interleaved with the deltas in one time order, (ts, sequence) — NDJSON and JSON rows {"type":"trade",…}, CSV #trade lines — with include=gaps also the trades’ gaps ({"type":"trades_gap",…}, #trades_gap, a trades_gaps array). The limit counts trades and deltas alike.',
  list: true,
};

/** `interval` of the bars: one of BAR_INTERVALS, required. */
export const intervalParam: QueryParam<BarInterval> = {
  name: 'interval',
  code: 'invalid_interval',
  schema: z.enum(Object.keys(BAR_INTERVALS) as [BarInterval, ...BarInterval[]]),
  message: (text) =>
    text === ''
      ? `interval is required: ${Object.keys(BAR_INTERVALS).join(', ')}`
      : `interval must be ${Object.keys(BAR_INTERVALS).join(', ')}, got ${quoted(text)}`,
  description:
    'The bars’ length: 1m, 5m, 1h or 1d. Bars start at whole multiples of it since 1970-01-01T00:00:00Z (1d: UTC days).',
};

/** `depth` (the book): levels per side, 1 to `max`; every level when absent. */
export function depthParam(max: number): QueryParam<number> {
  return {
    name: 'depth',
    code: 'invalid_depth',
    schema: z.preprocess(integerText(12), z.number().int().min(1).max(max)).optional(),
    message: (text) => `depth must be a positive integer of levels per side, at most ${max}, got ${quoted(text)}`,
    description: `Levels per side, best first; default: every level. 1 to ${max} (else 400 invalid_depth).`,
  };
}
