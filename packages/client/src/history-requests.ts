/**
 * The history service's one-request calls: the URL of each endpoint, its query built from checked arguments, and its
 * JSON answer checked before it is returned (a malformed body is a `DataError`, never a wrong result).
 */
import { DataError, InvalidArgumentError } from './errors.js';
import type { Answer, Transport } from './http.js';
import type { BarPage, Coverage, DeltaPage, Page, ServiceBook } from './history-types.js';
import { BAR_INTERVALS, checkGap, checkPageRow, type BarInterval, type RowKind, type RowOf } from './rows.js';
import { formatTimestamp, momentMs, type Moment, type Rounding } from './timestamps.js';

/** An exchange key or one of its aliases (`polymarket-us`): a path segment that needs no escaping. */
const EXCHANGE = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Epoch ms of a caller's moment (undefined when not given), its sub-milliseconds rounded as the service rounds them:
 * `ceil` for a range's start, else down; `InvalidArgumentError` when it is not a moment.
 */
export function assertMoment(
  value: Moment | undefined,
  name: string,
  rounding: Rounding = 'floor',
): number | undefined {
  if (value === undefined) return undefined;
  const ms = momentMs(value, rounding);
  if (Number.isNaN(ms))
    throw new InvalidArgumentError(`${name} is not a moment (epoch ms, Date, or RFC 3339 or 13-digit epoch-ms text)`);
  return ms;
}

/** A count a caller gives (`limit`, `depth`, `pageSize`): undefined, or a positive integer; else `InvalidArgumentError`. */
export function assertCount(value: number | undefined, name: string): void {
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
    throw new InvalidArgumentError(`${name} must be a positive integer`);
  }
}

export const iso = (ms: number | undefined) => (ms === undefined ? undefined : formatTimestamp(ms));

/** The path segment of each row endpoint. */
export const ENDPOINTS: Record<RowKind, string> = {
  snapshot: 'snapshots',
  delta: 'deltas',
  trade: 'trades',
  bar: 'bars',
};

/** A JSON page of a kind's rows, as the endpoint answers it. */
export type PageOf<K extends RowKind> = K extends 'delta' ? DeltaPage : K extends 'bar' ? BarPage : Page<RowOf<K>>;

/** What a rows request may carry besides its range (every kind takes what applies to it). */
export interface RowsQuery {
  start?: Moment;
  end?: Moment;
  limit?: number;
  cursor?: string;
  fields?: readonly string[];
  gaps?: boolean;
  /** Deltas: the trades interleaved (`include=trades`). */
  trades?: boolean;
  /** Bars: the interval. */
  interval?: BarInterval;
  signal?: AbortSignal;
}

export function assertInterval(interval: unknown): BarInterval {
  if (!(BAR_INTERVALS as readonly unknown[]).includes(interval)) {
    throw new InvalidArgumentError(`interval must be one of ${BAR_INTERVALS.join(', ')}`);
  }
  return interval as BarInterval;
}

/** `include=` of a request: gaps and/or trades. */
export function includeOf(o: { gaps?: boolean; trades?: boolean }): string | undefined {
  const list = [o.gaps ? 'gaps' : '', o.trades ? 'trades' : ''].filter(Boolean);
  return list.length ? list.join(',') : undefined;
}

/** The path of an endpoint (`/api/{exchange}/{endpoint}[/{ticker}]`), the exchange key checked. */
export function historyPath(exchange: string, endpoint: string, ticker?: string): string {
  if (!EXCHANGE.test(exchange)) throw new InvalidArgumentError(`not an exchange key: ${JSON.stringify(exchange)}`);
  // An empty ticker would name another endpoint (`/api/x/deltas/`), whose 404 the replay reads as "no coverage".
  if (ticker === '') {
    throw new InvalidArgumentError(`not a ticker: ${JSON.stringify(ticker)}`);
  }
  return `/api/${exchange}/${endpoint}${ticker === undefined ? '' : `/${encodeURIComponent(ticker)}`}`;
}

async function getJson(
  http: Transport,
  path: string,
  query: Record<string, string | number | undefined>,
  signal?: AbortSignal,
) {
  const answer = await http.request(http.url(path, query), {
    signal,
    headers: { Accept: 'application/json' },
  });
  return parseJsonBody(answer, await answer.text());
}

/** `GET /api/{exchange}/tickers`: the tickers with data in the caller's window. */
export async function getTickers(
  http: Transport,
  exchange: string,
  options: { prefix?: string; signal?: AbortSignal },
): Promise<string[]> {
  const body = await getJson(http, historyPath(exchange, 'tickers'), { prefix: options.prefix }, options.signal);
  const tickers = (body as { tickers?: unknown }).tickers;
  if (!Array.isArray(tickers) || !tickers.every((t) => typeof t === 'string')) {
    throw new DataError('malformed_body', 'a tickers answer without a "tickers" list of strings');
  }
  return tickers as string[];
}

/** One JSON page of a kind's rows. */
export async function getPage<K extends RowKind>(
  http: Transport,
  kind: K,
  exchange: string,
  ticker: string,
  options: RowsQuery,
): Promise<PageOf<K>> {
  // Checked here, as the Python client checks it (a NaN, 0 or 1.5 went to the service, to come back a 400).
  assertCount(options.limit, 'limit');
  const answer = await http.request(
    http.url(historyPath(exchange, ENDPOINTS[kind], ticker), {
      interval: kind === 'bar' ? assertInterval(options.interval) : undefined,
      start_ts: iso(assertMoment(options.start, 'start', 'ceil')),
      end_ts: iso(assertMoment(options.end, 'end')),
      limit: options.limit,
      cursor: options.cursor,
      fields: options.fields?.length ? options.fields.join(',') : undefined,
      include: includeOf(options),
      // By name, so that the page says where the next begins (next_cursor) whatever its size (history-series.ts).
      format: kind === 'bar' ? undefined : 'json',
    }),
    { signal: options.signal, headers: { Accept: 'application/json' } },
  );
  return checkPage(kind, answer, await answer.text());
}

/** `GET /api/{exchange}/coverage/{ticker}`: what is recorded in a window, and every gap overlapping it. */
export async function getCoverage(
  http: Transport,
  exchange: string,
  ticker: string,
  options: { start?: Moment; end?: Moment; signal?: AbortSignal },
): Promise<Coverage> {
  const body = (await getJson(
    http,
    historyPath(exchange, 'coverage', ticker),
    { start_ts: iso(assertMoment(options.start, 'start', 'ceil')), end_ts: iso(assertMoment(options.end, 'end')) },
    options.signal,
  )) as unknown as Coverage;
  if (!Array.isArray(body.gaps) || typeof body.snapshots !== 'object' || typeof body.deltas !== 'object') {
    throw new DataError('malformed_body', 'a coverage answer without "snapshots", "deltas" and "gaps"');
  }
  body.gaps.forEach((g, i) => checkGap(g, { line: i + 1 }));
  return body;
}

/** `GET /api/{exchange}/book/{ticker}`: the service's book at a moment. */
export async function getBook(
  http: Transport,
  exchange: string,
  ticker: string,
  options: { at?: Moment; depth?: number; signal?: AbortSignal },
): Promise<ServiceBook> {
  assertCount(options.depth, 'depth');
  const body = (await getJson(
    http,
    historyPath(exchange, 'book', ticker),
    { at: iso(assertMoment(options.at, 'at')), depth: options.depth },
    options.signal,
  )) as unknown as ServiceBook;
  if (body.status === 'in_gap') checkGap(body.gap, {});
  if (body.status !== 'ok') {
    const status: unknown = body.status;
    if (status !== 'in_gap' && status !== 'no_data') {
      throw new DataError('malformed_body', `a book answer with status ${JSON.stringify(status)}`);
    }
    return body;
  }
  for (const side of ['bids', 'asks'] as const) {
    const levels: unknown = body[side];
    if (!Array.isArray(levels)) throw new DataError('malformed_body', `a book answer without "${side}"`);
    levels.forEach((l: { price?: unknown; quantity?: unknown } | null, i) => {
      if (typeof l?.price !== 'string' || typeof l?.quantity !== 'string') {
        throw new DataError('malformed_body', `${side}[${i}] is not {price, quantity}`, { text: JSON.stringify(l) });
      }
    });
  }
  return body;
}

function parseJsonBody(answer: Answer, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const cut = text.startsWith('{') && !text.trimEnd().endsWith('}');
    throw new DataError(
      cut ? 'stream_cut' : 'malformed_body',
      cut ? 'the JSON body ends early' : 'the body is not JSON',
      {
        url: answer.url,
        requestId: answer.requestId,
        text: text.slice(0, 200),
      },
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DataError('malformed_body', 'the body is not a JSON object', {
      url: answer.url,
      requestId: answer.requestId,
    });
  }
  return value as Record<string, unknown>;
}

/**
 * A JSON page of rows, checked: its rows (among deltas, trade lines too), `count`, gaps (the trades' gaps too) and
 * `next_cursor`; a bars page's `interval`.
 */
export function checkPage<K extends RowKind>(kind: K, answer: Answer, text: string): PageOf<K> {
  const body = parseJsonBody(answer, text);
  const where = { url: answer.url, requestId: answer.requestId };
  if (!Array.isArray(body.rows) || typeof body.count !== 'number') {
    throw new DataError('malformed_body', 'a rows answer without "rows" and "count"', where);
  }
  if (body.count !== body.rows.length) {
    throw new DataError('malformed_body', `"count" is ${body.count} but ${body.rows.length} rows came`, where);
  }
  body.rows.forEach((r, i) => checkPageRow(kind, r, { ...where, line: i + 1 }));
  for (const name of ['gaps', 'trades_gaps'] as const) {
    const list = body[name];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new DataError('malformed_body', `"${name}" is not a list`, where);
    list.forEach((g, i) => checkGap(g, { ...where, line: i + 1 }));
  }
  if (body.next_cursor !== undefined && body.next_cursor !== null && typeof body.next_cursor !== 'string') {
    throw new DataError('malformed_body', '"next_cursor" is neither a string nor null', where);
  }
  if (kind === 'bar') {
    if (body.next_cursor === undefined)
      throw new DataError('malformed_body', 'a bars page without "next_cursor"', where);
    if (!(BAR_INTERVALS as readonly unknown[]).includes(body.interval)) {
      throw new DataError('malformed_body', `a bars page of interval ${JSON.stringify(body.interval)}`, where);
    }
  }
  return body as unknown as PageOf<K>;
}
