/**
 * What a ClickHouse failure means for a caller. The client library does not parse 18.16's error format
 * (`Code: 159, e.displayText() = …`), so the code is read from the message here for both old and new servers.
 */
export type ClickHouseFailureKind =
  /** Connection refused/reset, DNS, socket timeout, authentication, overload: the store cannot serve now. */
  | 'unavailable'
  /** The server stopped the query at its time limit (`max_execution_time`). */
  | 'timeout'
  /** We cancelled it (client went away, deadline) — the abort or `KILL QUERY` reached it. */
  | 'cancelled'
  /** Anything else: a bug or a schema problem on our side. */
  | 'error';

export interface ClickHouseFailure {
  kind: ClickHouseFailureKind;
  /** ClickHouse error code when the server sent one. */
  code?: number;
  message: string;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
]);

/** Server codes that mean "not now" rather than "wrong". */
const UNAVAILABLE_SERVER_CODES = new Set([
  192, // UNKNOWN_USER
  193, // WRONG_PASSWORD
  194, // REQUIRED_PASSWORD
  195, // IP_ADDRESS_NOT_ALLOWED
  201, // QUOTA_EXPIRED
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  203, // NO_FREE_CONNECTION
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  241, // MEMORY_LIMIT_EXCEEDED
  242, // TABLE_IS_READ_ONLY
  252, // TOO_MANY_PARTS
  516, // AUTHENTICATION_FAILED
]);
const TIMEOUT_SERVER_CODES = new Set([
  159, // TIMEOUT_EXCEEDED
  160, // TOO_SLOW
]);
const CANCELLED_SERVER_CODES = new Set([
  394, // QUERY_WAS_CANCELLED
]);

export function serverErrorCode(message: string): number | undefined {
  const m = /Code: (\d+)[.,]/.exec(message);
  return m ? Number(m[1]) : undefined;
}

export function classifyClickHouseError(err: unknown): ClickHouseFailure {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = serverErrorCode(message);
  if (code !== undefined) {
    if (TIMEOUT_SERVER_CODES.has(code)) return { kind: 'timeout', code, message };
    if (CANCELLED_SERVER_CODES.has(code)) return { kind: 'cancelled', code, message };
    if (UNAVAILABLE_SERVER_CODES.has(code)) return { kind: 'unavailable', code, message };
    return { kind: 'error', code, message };
  }
  if (e?.name === 'AbortError' || message === 'The user aborted a request.' || /aborted/i.test(message)) {
    return { kind: 'cancelled', message };
  }
  if (typeof e?.code === 'string' && NETWORK_CODES.has(e.code)) return { kind: 'unavailable', message };
  if (/socket hang up|Timeout error|ECONNREFUSED|ECONNRESET|connect E/i.test(message)) {
    return { kind: 'unavailable', message };
  }
  return { kind: 'error', message };
}
