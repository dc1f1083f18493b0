// https://docs.kalshi.com/api-reference
import { formatScaled } from '../../core/decimal';
import type { Router } from '../../http/router';
import { json, type PlatformErrors, type SimResponse } from '../../http/types';
import { type PlatformContext, boolParam, decodeCursor, encodeCursor, intParam } from '../context';
import type { KalshiCatalog } from './catalog';
import type { KalshiReference } from './reference';
import type { KalshiTape } from './tape';

export const KALSHI_PREFIX = '/trade-api/v2';

/**
 * Kalshi's error envelope `{"error":{"code","message","details"?}}` [V] (SDK ErrorResponse). The 401 body is the
 * one third parties captured ([3P]: `authentication_error` with the reason in `details`); 404 and 429 codes are [U].
 */
export const kalshiErrors: PlatformErrors = {
  notFound: () => json(404, { error: { code: 'not_found', message: 'not found' } }),
  unauthorized: (reason) =>
    json(401, { error: { code: 'authentication_error', message: 'authentication_error', details: reason } }),
  rateLimited: () => json(429, { error: { code: 'too_many_requests', message: 'too many requests' } }),
  serverError: (status) =>
    json(status, { error: { code: 'internal_server_error', message: 'internal server error', service: 'exchange' } }),
};

/** 400 in Kalshi's envelope ([U] code: `bad_request`). */
export const badRequest = (message: string): SimResponse => json(400, { error: { code: 'bad_request', message } });

/** 1e-4 dollars as a 4-decimal dollar string (`4500` → `"0.4500"`). */
export const dollars = (priceE4: number): string => formatScaled(priceE4, 4);

/** 1e-2 contracts as a 2-decimal count string (`1050` → `"10.50"`). */
export const fp = (count: number): string => formatScaled(count, 2);

/** Unix seconds. */
export const unixSeconds = (ms: number): number => Math.floor(ms / 1000);

/** Everything the route families share. */
export interface KalshiApi {
  ctx: PlatformContext;
  catalog: KalshiCatalog;
  reference: KalshiReference;
  tape: KalshiTape;
  /** Epoch ms of the catalogue date. */
  day: number;
  /** When the simulator (and its live tape) started. */
  startedMs: number;
  now(): number;
}

/** A route family registers its routes on the Kalshi router. */
export type RouteFamily = (r: Router, api: KalshiApi) => void;

/**
 * Reads a request's query the way Kalshi does, keeping the first malformed value's 400 in `error` (check it once
 * after reading everything). Integers are Unix seconds, counts and limits; booleans `true`/`false`.
 */
export class Query {
  error: SimResponse | undefined;

  constructor(readonly params: URLSearchParams) {}

  private fail(message: string): undefined {
    this.error ??= badRequest(message);
    return undefined;
  }

  get(name: string): string | undefined {
    const v = this.params.get(name);
    return v === null || v === '' ? undefined : v;
  }

  /** An integer within bounds; undefined when absent. */
  int(name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const v = intParam(this.params, name);
    if (v === null || (v !== undefined && (v < min || v > max))) {
      return this.fail(`${name} must be an integer between ${min} and ${max}`);
    }
    return v;
  }

  /** A required integer (0 after recording the error when absent or malformed). */
  requiredInt(name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    if (this.get(name) === undefined) return this.fail(`${name} is required`) ?? 0;
    return this.int(name, min, max) ?? 0;
  }

  bool(name: string): boolean | undefined {
    const v = boolParam(this.params, name);
    return v === null ? this.fail(`${name} must be true or false`) : v;
  }

  /** One of a fixed set of values; undefined when absent. */
  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    return (values as readonly string[]).includes(v)
      ? (v as T)
      : this.fail(`${name} must be one of ${values.join(', ')}`);
  }

  /**
   * A comma-separated list (`tickers=A,B` on `/markets` [V]: "Comma-separated list"). Only the first occurrence
   * counts, as a form decoder reading one string does.
   */
  commaList(name: string): string[] {
    return split(this.get(name) ?? '');
  }

  /**
   * An array parameter, sent as the OpenAPI default (`form`, exploded): the key repeated (`tickers=A&tickers=B`), as
   * kalshi-typescript sends it [V]. Each occurrence may also be a comma list, as older clients send it.
   */
  array(name: string): string[] {
    return this.params.getAll(name).flatMap(split);
  }

  /**
   * Kalshi's pagination over a fixed list: `limit` (1…max, default), an opaque `cursor` carrying the offset, and the
   * next cursor, empty on the last page [V].
   */
  page<T>(
    items: readonly T[],
    maxLimit: number,
    defaultLimit: number,
    limitName = 'limit',
  ): { items: T[]; cursor: string } {
    const n = this.int(limitName, 1, maxLimit) ?? defaultLimit;
    const offset = decodeCursor(this.params.get('cursor'));
    if (offset === null) {
      this.fail('invalid cursor');
      return { items: [], cursor: '' };
    }
    return {
      items: items.slice(offset, offset + n),
      cursor: offset + n < items.length ? encodeCursor(offset + n) : '',
    };
  }
}

function split(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
