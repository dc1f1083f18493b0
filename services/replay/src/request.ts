/**
 * What the HTTP replay and the WebSocket replay check alike before reading a window: `from` and `to` (the API's one
 * timestamp rule) and the clock they are on, the ticker as the caller may see it, and `from` inside the caller's window — the history's rules
 * (packages/auth access.ts), with the history's error codes.
 */
import { canSeeTicker, unknownTicker, windowStart, type Caller, type ExchangeKey } from '@depthgate/auth';
import { storedTickerName, TICKER_PATTERN, type OrderBookQueries, type QueryScope } from '@depthgate/history-store';
import { AppError, invalidTimestampMessage, parseMoment } from '@depthgate/service-kit';
import type { ClockField } from './engine';

export const iso = (ts: number) => new Date(ts).toISOString();

/** A required moment parameter (`from`, `to`): RFC 3339 or 13-digit epoch ms, given once. */
function moment(query: Record<string, unknown>, name: 'from' | 'to'): number {
  const value = query[name];
  if (value === undefined || value === null) throw new AppError('invalid_timestamp', `${name} is required`);
  if (typeof value !== 'string') throw new AppError('invalid_timestamp', `${name} must be given at most once`);
  const ms = parseMoment(value, 'floor');
  if (ms === undefined) throw new AppError('invalid_timestamp', invalidTimestampMessage(name, value));
  return ms;
}

/** The window's start and end, checked before any query: both given, `to` not before `from`. */
export function parseWindow(query: Record<string, unknown>): { from: number; to: number } {
  const from = moment(query, 'from');
  const to = moment(query, 'to');
  if (to < from) throw new AppError('invalid_timestamp', `to (${iso(to)}) is before from (${iso(from)})`);
  return { from, to };
}

/**
 * `clock`: the clock `from` and `to` are on — `venue` (the default: the venue's time, `ts`) or `received` (when the
 * recorder received each message, `received_ts`) — and the replay is paced on.
 */
export function parseClock(value: unknown): ClockField {
  if (value === undefined || value === 'venue') return 'ts';
  if (value === 'received') return 'received_ts';
  throw new AppError(
    'invalid_request',
    typeof value === 'string'
      ? `clock must be venue or received, not ${JSON.stringify(value.slice(0, 40))}`
      : 'clock must be given at most once',
  );
}

/**
 * The stored ticker of a request (exact, else the one stored ticker equal to it ignoring case, as the history's
 * catalogue lookup), if the caller may see it; else the answer of a ticker that does not exist.
 */
export async function visibleTicker(
  queries: OrderBookQueries,
  scope: QueryScope,
  caller: Caller | undefined,
  exchange: ExchangeKey,
  requested: string,
): Promise<string> {
  const name = (await visibleTickers(queries, scope, caller, exchange, [requested])).get(requested);
  if (name === undefined) throw unknownTicker(exchange, requested);
  return name;
}

/**
 * `visibleTicker` of several requests, with one catalogue query for all of them: each request's stored ticker, or
 * undefined for one that does not exist for the caller (never recorded, not a ticker, outside its `ticker_prefixes`).
 */
export async function visibleTickers(
  queries: OrderBookQueries,
  scope: QueryScope,
  caller: Caller | undefined,
  exchange: ExchangeKey,
  requested: readonly string[],
): Promise<Map<string, string | undefined>> {
  const valid = requested.filter((t) => TICKER_PATTERN.test(t));
  // The stored spellings by their lower case (a request matches its own case, else the one stored spelling).
  const stored = new Map<string, { ticker: string }[]>();
  for (const span of await queries.catalogues(scope, exchange, valid)) {
    const key = span.ticker.toLowerCase();
    stored.set(key, [...(stored.get(key) ?? []), span]);
  }
  const names = new Map<string, string | undefined>();
  for (const t of requested) {
    const name = TICKER_PATTERN.test(t) ? storedTickerName(stored.get(t.toLowerCase()) ?? [], t) : undefined;
    names.set(t, name !== undefined && canSeeTicker(caller, name) ? name : undefined);
  }
  return names;
}

/**
 * `from` not before the caller's window for the ticker (anonymous: the last day; max_data_age_days; …); returns that
 * window's start (nothing older may be shown: WindowSpec.visibleFrom).
 */
export function checkWindowStart(caller: Caller | undefined, ticker: string, from: number, now: number): number {
  const refusal = windowRefusal(caller, ticker, from, now);
  if (refusal) throw refusal;
  return windowStart(caller, ticker, now);
}

/** The refusal `checkWindowStart` throws (400 invalid_timestamp naming the window's start), or undefined. */
export function windowRefusal(
  caller: Caller | undefined,
  ticker: string,
  from: number,
  now: number,
): AppError | undefined {
  const earliest = windowStart(caller, ticker, now);
  if (from >= earliest) return undefined;
  return new AppError(
    'invalid_timestamp',
    `from ${iso(from)} is before the start of your window for ${ticker}, ${iso(earliest)}`,
  );
}
