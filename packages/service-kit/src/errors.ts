import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { withoutApiKeys } from './logger';

/**
 * Every error either service answers with. One enum, one status mapping, one renderer:
 * bodies are always `{"error": code, "message": text}`.
 */
export const ERROR_CODES = [
  'invalid_request',
  'invalid_path',
  'invalid_timestamp',
  'invalid_limit',
  'invalid_cursor',
  'invalid_depth',
  'invalid_format',
  'invalid_fields',
  'invalid_include',
  'invalid_interval',
  'unauthorized',
  'forbidden',
  'not_found',
  'unknown_platform',
  'unknown_channel',
  'unknown_exchange',
  'unknown_ticker',
  'method_not_allowed',
  'request_timeout',
  'payload_too_large',
  'unsupported_media_type',
  'expectation_failed',
  'headers_too_large',
  'rate_limited',
  'upstream_rate_limited',
  'too_many_connections',
  'internal_error',
  'bad_gateway',
  'service_unavailable',
  'upstream_unavailable',
  'query_timeout',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function statusFor(code: ErrorCode): number {
  switch (code) {
    case 'invalid_request':
    case 'invalid_path':
    case 'invalid_timestamp':
    case 'invalid_limit':
    case 'invalid_cursor':
    case 'invalid_depth':
    case 'invalid_format':
    case 'invalid_fields':
    case 'invalid_include':
    case 'invalid_interval':
      return 400;
    case 'unauthorized':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
    case 'unknown_platform':
    case 'unknown_channel':
    case 'unknown_exchange':
    case 'unknown_ticker':
      return 404;
    case 'method_not_allowed':
      return 405;
    case 'request_timeout':
      return 408;
    case 'payload_too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'expectation_failed':
      return 417;
    case 'headers_too_large':
      return 431;
    case 'rate_limited':
    case 'upstream_rate_limited':
    case 'too_many_connections':
      return 429;
    case 'internal_error':
      return 500;
    case 'bad_gateway':
      return 502;
    case 'service_unavailable':
    case 'upstream_unavailable':
    case 'query_timeout':
      return 503;
    default: {
      const unreachable: never = code;
      throw new Error(`no status for error code ${String(unreachable)}`);
    }
  }
}

export interface ErrorBody {
  error: ErrorCode;
  message: string;
}

/**
 * The JSON body of an error answer, every one of them (sendError, client-errors.ts): a message quotes what the request
 * said (an unknown ticker, a parameter's value, a path), and a key sent in one of those places is masked in it —
 * keys never appear in a response (withoutApiKeys, as the logs mask them).
 */
export function errorBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ error: code, message: withoutApiKeys(message) } satisfies ErrorBody);
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: { headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return statusFor(this.code);
  }
}

/**
 * Writes an error response. When the response has already started (a stream failed half-way), the only honest
 * thing left is to cut the connection so the client sees a truncated body rather than a well-formed lie.
 */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = errorBody(code, message);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.statusCode = statusFor(code);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** 404 for any route no router claimed. */
export function notFoundHandler(): RequestHandler {
  return (req, res) => sendError(res, 'not_found', `No route for ${req.method} ${req.path}`);
}

/** The one error middleware: AppError → its status; body-parser errors → 400; anything else → 500 without details. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (err instanceof AppError) {
      sendError(res, err.code, err.message, { ...err.headers });
      return;
    }
    const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : 500;
    if (status >= 400 && status < 500) {
      sendError(res, 'invalid_request', 'The request could not be understood');
      return;
    }
    logger.error({ err, req_id: req.id, method: req.method, path: req.path }, 'unhandled error');
    sendError(res, 'internal_error', 'Internal server error');
  };
}
