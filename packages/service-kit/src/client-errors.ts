import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { errorBody, sendError, statusFor, type ErrorCode } from './errors';
import { assignRequestId, requestIdOf } from './request-context';

/** After a last answer on a raw socket (a refused request or handshake), the connection is given this long to drain, then cut. */
const LINGER_MS = 1000;

/**
 * Answers an error on a raw connection (a request Node could not parse, a CONNECT, a refused WebSocket handshake) and
 * ends it, then cuts it LINGER_MS later unless it has closed by then. An HTTP server's sockets are half-open
 * (`allowHalfOpen`): `end` only closes the server's side, and a peer that never closes its own (nor sends anything
 * more) would otherwise hold the socket for good.
 */
export function endWithError(
  socket: Duplex,
  code: ErrorCode,
  message: string,
  headers?: Readonly<Record<string, string>>,
  requestId?: string,
): void {
  socket.end(rawErrorResponse(code, message, headers, requestId));
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * What a request Node's HTTP parser refused is answered with (its `clientError` codes, lib/_http_server.js):
 * headers over `--max-http-header-size` → 431, chunk extensions over their limit → 413, a request not received
 * within the server's `requestTimeout`/`headersTimeout` → 408, anything else (a malformed request line, header or
 * chunk) → 400. `undefined`: the peer is gone, there is no one to answer.
 */
export function clientErrorAnswer(code: string | undefined): { code: ErrorCode; message: string } | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'headers_too_large', message: 'The request line and headers exceed the size limit' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'payload_too_large', message: 'The chunk extensions exceed the size limit' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', message: 'The request was not received in time' };
    default:
      return { code: 'invalid_request', message: 'Malformed HTTP request' };
  }
}

/**
 * A whole HTTP/1.1 error response as bytes for the socket: the documented `{"error","message"}` (with `headers`,
 * e.g. Retry-After), then close.
 */
export function rawErrorResponse(
  code: ErrorCode,
  message: string,
  headers: Readonly<Record<string, string>> = {},
  requestId: string = randomUUID(),
): string {
  const status = statusFor(code);
  const body = errorBody(code, message);
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The events of a `ws` WebSocketServer that handshake answers come from (structural: service-kit needs no `ws`). */
export interface HandshakeEvents {
  on(event: 'headers', listener: (headers: string[], req: IncomingMessage) => void): unknown;
  on(event: 'wsClientError', listener: (err: Error, socket: Duplex, req: IncomingMessage) => void): unknown;
}

/**
 * Every answer a WebSocket server gives a handshake, as the service's other answers: the 101 carries the request id
 * (`req.id`: the upgrade listener sets it first, with requestIdOf), and a handshake the library refuses itself goes to
 * `refuse` as the service's error (wsHandshakeRefusal) instead of the library's text.
 */
export function answerHandshakes(
  wss: HandshakeEvents,
  refuse: (
    req: IncomingMessage,
    socket: Duplex,
    code: ErrorCode,
    message: string,
    headers: Record<string, string>,
  ) => void,
): void {
  wss.on('headers', (headers, req) => headers.push(`X-Request-Id: ${req.id}`));
  wss.on('wsClientError', (err, socket, req) => {
    const { code, message, headers } = wsHandshakeRefusal(err.message);
    refuse(req, socket, code, message, headers);
  });
}

/**
 * A WebSocket handshake the `ws` library refuses (its `wsClientError` event: the reason as its message) as the
 * service's error: 405 for another method than GET, else 400 `invalid_request` with the library's reason (a missing
 * or malformed Sec-WebSocket-Key, an unsupported Sec-WebSocket-Version, a malformed Sec-WebSocket-Protocol).
 */
function wsHandshakeRefusal(reason: string): {
  code: ErrorCode;
  message: string;
  headers: Record<string, string>;
} {
  if (reason === 'Invalid HTTP method')
    return { code: 'method_not_allowed', message: 'A WebSocket opens with GET', headers: { Allow: 'GET' } };
  // RFC 6455 §4.4: the versions the server speaks.
  const headers: Record<string, string> = reason.includes('Sec-WebSocket-Version')
    ? { 'Sec-WebSocket-Version': '13' }
    : {};
  return { code: 'invalid_request', message: reason, headers };
}

/** Answers one `clientError`: the error response, then the connection closes (at once when nothing can be said). */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, logger: Logger): void {
  const answer = clientErrorAnswer(err.code);
  // A response of this connection already under way cannot be followed by another (Node's own rule).
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writableEnded) return; // answered already; the linger timer closes it
  if (!answer || !socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  logger.debug({ err: { code: err.code, message: err.message }, status: statusFor(answer.code) }, 'request refused');
  endWithError(socket, answer.code, answer.message);
}

/**
 * A CONNECT request (Node hands it to the server's `connect` listeners, and destroys the connection unanswered when
 * there is none): these services are no proxy. 405 with an empty `Allow` — a CONNECT names a host and port, not a
 * resource of the service, so no method is allowed on it (RFC 9110 §10.2.1, §15.5.6) — then close.
 */
function refuseConnect(req: IncomingMessage, socket: Duplex, logger: Logger): void {
  if (!socket.writable) return void socket.destroy();
  logger.debug({ method: req.method, status: statusFor('method_not_allowed') }, 'request refused');
  endWithError(
    socket,
    'method_not_allowed',
    'CONNECT is not supported: this service is not a proxy',
    { Allow: '' },
    requestIdOf(req),
  );
}

/** HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own check answers an empty 400, so the server checks it here. */
export function missingHost(req: IncomingMessage): boolean {
  return req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
}

/** Answers a request without Host: 400 `invalid_request` in the documented form, connection closed. */
export function refuseMissingHost(req: IncomingMessage, res: ServerResponse): void {
  assignRequestId(req, res);
  res.setHeader('Connection', 'close');
  sendError(res, 'invalid_request', 'An HTTP/1.1 request must carry a Host header');
}

/**
 * Errors Node's HTTP layer would answer itself, as plain text, with an empty body or not at all, are answered in the
 * documented JSON form instead: requests its parser refuses (`clientError`: 400, 408, 413, 431), expectations other
 * than `100-continue` (`checkExpectation`: 417) and CONNECT (`connect`: 405). Each closes the connection. Requests without Host are refused by the
 * request listener (see `missingHost`), which requires `requireHostHeader: false` on the server.
 */
export function answerHttpLayerErrors(server: http.Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket, logger));
  server.on('connect', (req: IncomingMessage, socket: Duplex) => refuseConnect(req, socket, logger));
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    assignRequestId(req, res);
    res.setHeader('Connection', 'close');
    sendError(res, 'expectation_failed', 'Only "Expect: 100-continue" is supported');
  });
}
