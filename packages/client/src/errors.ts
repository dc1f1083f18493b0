/**
 * Every failure the client reports is a `DepthgateError` with a `code` that names what happened, so a caller can
 * switch on it without parsing messages. Subclasses carry what is known about where it happened: the HTTP status
 * and request id of an answer, the line of a malformed row, the delta that drove a level negative.
 */

/** What went wrong, one word each (the `code` of every error this package throws). */
export type ErrorCode =
  /** The service answered with an error status and a JSON `{"error","message"}` body. */
  | 'http_error'
  /** The service answered with an error status whose body is not the JSON error object (a proxy's HTML page…). */
  | 'non_json_error_body'
  /** The request never got an answer: connection refused or reset, DNS failure. */
  | 'network_error'
  /** No answer (or no further bytes of a streamed answer) within the timeout. */
  | 'timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** A redirect not followed: to another origin (the key is never sent there), or the sixth within the service's. */
  | 'redirect'
  /** A 2xx body that is not what the endpoint answers (not JSON, a missing envelope field). */
  | 'malformed_body'
  /** One row (or line of a stream) is not a valid row: a missing field, a bad decimal, a bad timestamp. */
  | 'malformed_row'
  /** A stream ended without its end line, or a JSON body ended before its closing brace. */
  | 'stream_cut'
  /** Text that is not a decimal number (exponent, `+`, spaces, empty). */
  | 'invalid_decimal'
  /** A caller's argument is out of range (a bad timestamp, depth ≤ 0…). */
  | 'invalid_argument'
  /** A delta would leave a level with a negative quantity, or a snapshot holds one. */
  | 'negative_level'
  /** The best bid is at or above the best ask once every delta of a moment is applied. */
  | 'crossed_book'
  /** Deltas out of (ts, sequence) order, or a delta before the snapshot it is applied to. */
  | 'out_of_order'
  /** A book replayed from deltas differs from the recorded snapshot of the same moment, outside any gap. */
  | 'snapshot_mismatch'
  /** The moment asked for lies inside a recorded gap, so no book can be given for it. */
  | 'in_gap'
  /** There is no snapshot at or before the moment asked for, so rule 7 cannot start. */
  | 'no_snapshot';

export class DepthgateError extends Error {
  override name = 'DepthgateError';
  constructor(
    /** What happened; an HttpError's is the service's own error code (`unknown_ticker`, `rate_limited`, …). */
    readonly code: ErrorCode | ServiceErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * An error code a depthgate service answers with (`{"error": code, "message": …}`: `unauthorized`, `rate_limited`,
 * `unknown_ticker`, `invalid_timestamp`, … — the services' OpenAPI documents list them per status). Any string: a
 * newer service may add codes.
 */
export type ServiceErrorCode = string & {};

/**
 * An error answer. Its `code` is the service's own error code when the body carries one (`unknown_ticker`,
 * `rate_limited`, …); `http_error` when the body is JSON without one (an upstream's own error object, passed through
 * by the gateway: see `json`); `non_json_error_body` when the body is not JSON.
 */
export class HttpError extends DepthgateError {
  override name = 'HttpError';
  /** HTTP status of the answer. */
  readonly status: number;
  /**
   * The service's error code, as `code` (undefined when the body has none).
   * @deprecated since 0.2.0: read `code`.
   */
  readonly error: string | undefined;
  /** The body parsed as JSON (an upstream's own error object through the gateway); undefined when not JSON. */
  readonly json: unknown;
  /** The answer's `X-Request-Id` (quote it when reporting a problem). */
  readonly requestId: string | undefined;
  /** The request's method and URL (without credentials). */
  readonly url: string;
  /** `Retry-After` of the answer, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The first 500 characters of the body. */
  readonly body: string;
  constructor(init: {
    status: number;
    error: string | undefined;
    json: unknown;
    message: string;
    requestId: string | undefined;
    url: string;
    retryAfterMs: number | undefined;
    body: string;
  }) {
    super(
      init.error ?? (init.json === undefined ? 'non_json_error_body' : 'http_error'),
      `${init.url} → ${init.status}${init.error ? ` ${init.error}` : ''}: ${init.message}${
        init.requestId ? ` (request id ${init.requestId})` : ''
      }`,
    );
    this.status = init.status;
    this.error = init.error;
    this.json = init.json;
    this.requestId = init.requestId;
    this.url = init.url;
    this.retryAfterMs = init.retryAfterMs;
    this.body = init.body;
  }
}

/** No usable answer: `network_error`, `timeout`, `aborted` or `redirect`. */
export class TransportError extends DepthgateError {
  override name = 'TransportError';
  constructor(
    code: 'network_error' | 'timeout' | 'aborted' | 'redirect',
    message: string,
    /** The request's method and URL. */
    readonly url: string,
    /** Our `X-Request-Id` for the request (the service logs it). */
    readonly requestId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** Where in an answer a data error was found. */
export interface DataLocation {
  /** The request's URL, when the data came from one. */
  url?: string;
  /** The answer's request id. */
  requestId?: string;
  /** 1-based line of a line format (NDJSON, CSV), or the row's index + 1 in a JSON `rows` array. */
  line?: number;
  /** The offending text (at most 200 characters). */
  text?: string;
}

/** Data that cannot be trusted: `malformed_body`, `malformed_row`, `stream_cut` or `invalid_decimal`. */
export class DataError extends DepthgateError {
  override name = 'DataError';
  constructor(
    code: 'malformed_body' | 'malformed_row' | 'stream_cut' | 'invalid_decimal',
    message: string,
    readonly where: DataLocation = {},
    options?: { cause?: unknown },
  ) {
    super(code, describe(message, where), options);
  }
}

/** Where in a series a book error happened. */
export interface BookLocation {
  exchange?: string;
  ticker?: string;
  /** Epoch ms of the row or moment. */
  ts?: number;
  sequence?: number;
  side?: 'bid' | 'ask';
  price?: string;
}

/** A book that would be wrong: `negative_level`, `crossed_book`, `out_of_order`, `in_gap` or `no_snapshot`. */
export class BookError extends DepthgateError {
  override name = 'BookError';
  constructor(
    code: 'negative_level' | 'crossed_book' | 'out_of_order' | 'snapshot_mismatch' | 'in_gap' | 'no_snapshot',
    message: string,
    readonly where: BookLocation = {},
  ) {
    super(code, `${message}${whereText(where)}`);
  }
}

export class InvalidArgumentError extends DepthgateError {
  override name = 'InvalidArgumentError';
  constructor(message: string) {
    super('invalid_argument', message);
  }
}

function describe(message: string, where: DataLocation): string {
  const parts: string[] = [];
  if (where.line !== undefined) parts.push(`line ${where.line}`);
  if (where.url) parts.push(where.url);
  if (where.requestId) parts.push(`request id ${where.requestId}`);
  const text = where.text === undefined ? '' : `: ${JSON.stringify(where.text.slice(0, 200))}`;
  return `${message}${parts.length ? ` (${parts.join(', ')})` : ''}${text}`;
}

function whereText(w: BookLocation): string {
  const parts: string[] = [];
  if (w.exchange !== undefined) parts.push(w.exchange);
  if (w.ticker !== undefined) parts.push(w.ticker);
  if (w.ts !== undefined) parts.push(`ts ${new Date(w.ts).toISOString()}`);
  if (w.sequence !== undefined) parts.push(`sequence ${w.sequence}`);
  if (w.side !== undefined) parts.push(w.side);
  if (w.price !== undefined) parts.push(`price ${w.price}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
