/**
 * `GatewayClient`: the gateway's `/api/v1/{platform}/{resource}` (docs/gateway.md) as typed calls. The
 * gateway forwards the resource and query to the platform and signs for it; this client sends the depthgate key
 * (`X-API-Key`, or HTTP Basic with `keyIn: 'basic'`), retries 429 and 503 after their `Retry-After` (bounded),
 * and turns error answers — the gateway's own `{"error","message"}` or an upstream's body passed through — into
 * `HttpError`s carrying the status, the request id and the body.
 *
 * POSTs are the read-only batch reads the gateway forwards (each platform's route module lists them); their paths
 * are typed, so a POST the gateway would answer 405 does not compile.
 */
import { DataError, InvalidArgumentError } from './errors.js';
import { Transport, type ClientOptions } from './http.js';

/** The gateway's platform keys. */
export type PlatformKey = 'venue-a' | 'venue-a-clob' | 'venue-a-us' | 'venue-b' | 'venue-c' | 'venue-d' | 'venue-e';
/** The real platform names the gateway accepts as aliases of its keys. */
export type PlatformAlias =
  'polymarket' | 'polymarket-clob' | 'polymarket-us' | 'kalshi' | 'gemini' | 'coinbase' | 'forecastex' | 'ibkr';
export type Platform = PlatformKey | PlatformAlias;

/**
 * The read-only POST paths per platform, as the gateway's route modules list them
 * (`services/gateway/src/platforms/<key>.ts`; docs/gateway.md, "Read-only POSTs").
 */
export interface ReadOnlyPosts {
  'venue-a-clob':
    'books' | 'midpoints' | 'prices' | 'spreads' | 'last-trades-prices' | 'batch-prices-history' | 'orders-scoring';
  'polymarket-clob': ReadOnlyPosts['venue-a-clob'];
  'venue-a-us': 'v1/order/preview' | 'order/preview';
  'polymarket-us': ReadOnlyPosts['venue-a-us'];
}

export type QueryValue = string | number | boolean;
export type Query = Record<string, QueryValue | readonly QueryValue[] | undefined>;

/** An answer of the gateway (2xx or 3xx). */
export interface GatewayResponse<T> {
  status: number;
  /** The body parsed as JSON when its type is JSON, else its text. */
  data: T;
  headers: Headers;
  /** `X-Request-Id`. */
  requestId: string | undefined;
  /** `X-Cache`: `HIT`, `MISS` or `COALESCED` (forwarded answers). */
  cache: string | undefined;
}

export interface CallOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

const SEGMENT = /^[^/?#]+$/;

export class GatewayClient {
  private readonly http: Transport;

  constructor(options: ClientOptions) {
    this.http = new Transport(options);
  }

  /** `GET /api/v1/{platform}/{resource}?{query}`; `resource` is a path such as `markets/KX…/orderbook`. */
  get<T = unknown>(platform: Platform, resource: string, query?: Query, options?: CallOptions) {
    return this.call<T>('GET', platform, resource, query, undefined, options);
  }

  /** A read-only POST with a JSON body (one of the platform's `ReadOnlyPosts`). */
  post<T = unknown, P extends keyof ReadOnlyPosts = keyof ReadOnlyPosts>(
    platform: P,
    resource: ReadOnlyPosts[P],
    body: unknown,
    query?: Query,
    options?: CallOptions,
  ) {
    return this.call<T>('POST', platform, resource, query, JSON.stringify(body), options);
  }

  private async call<T>(
    method: 'GET' | 'POST',
    platform: string,
    resource: string,
    query: Query | undefined,
    body: string | undefined,
    options: CallOptions = {},
  ): Promise<GatewayResponse<T>> {
    if (!/^[a-z0-9-]{1,32}$/i.test(platform))
      throw new InvalidArgumentError(`not a platform: ${JSON.stringify(platform)}`);
    const segments = resource.replace(/^\/+/, '').split('/');
    if (resource !== '' && resource !== '/' && !segments.every((s) => SEGMENT.test(s) && s !== '.' && s !== '..')) {
      throw new InvalidArgumentError(`not a resource path: ${JSON.stringify(resource)}`);
    }
    let url = this.http.url(
      `/api/v1/${platform}/${resource === '/' ? '' : segments.map(encodeURIComponent).join('/')}`,
    );
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
    }
    // (Not `q.size`: runtimes before Node 18.16 and Safari 17 have none, and the query went missing.)
    const search = q.toString();
    if (search) url += `?${search}`;
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const answer = await this.http.request(url, { method, headers, body, signal: options.signal });
    const text = await answer.text();
    const type = answer.response.headers.get('content-type') ?? '';
    let data: unknown = text;
    if (/^application\/([a-z0-9.+-]*\+)?json/i.test(type) && text !== '') {
      try {
        data = JSON.parse(text);
      } catch {
        throw new DataError('malformed_body', `a ${type} body that is not JSON`, {
          url: `${method} ${url}`,
          requestId: answer.requestId,
          text: text.slice(0, 200),
        });
      }
    }
    return {
      status: answer.response.status,
      data: data as T,
      headers: answer.response.headers,
      requestId: answer.requestId,
      cache: answer.response.headers.get('x-cache') ?? undefined,
    };
  }
}
