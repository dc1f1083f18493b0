import { createSecretKey, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/**
 * A host the simulator serves, named as the gateway names its targets: `venue-b`, `venue-a-us/auth`, … (the
 * topology assigns them: topology.ts).
 */
export type HostId = string;

type AuthState = 'valid' | 'invalid' | 'absent' | 'not_required';

/** What the simulator saw of one request (HTTP or WebSocket handshake). */
export interface RecordedRequest {
  /** Monotonic id within one simulator. */
  id: number;
  platform: HostId;
  method: string;
  /** The path as received, without the query string. */
  path: string;
  /** The raw query string without `?`; '' when there is none. */
  query: string;
  /** Header names lower-cased, values as received (repeated headers joined by Node's rules). */
  headers: IncomingHttpHeaders;
  /** Whether a signature was required and whether it verified. */
  auth: AuthState;
  /** Why verification failed (or why the session was refused), when it did. */
  authError?: string;
  /** Status answered; 0 when no status line was sent (connection reset, hang, still pending). */
  status: number;
  /** The fault applied to this request, if any. */
  fault?: string;
  /** Epoch milliseconds of arrival. */
  receivedAt: number;
  /** True for a WebSocket handshake. */
  websocket?: boolean;
}

export interface SimRequest {
  platform: HostId;
  method: string;
  path: string;
  query: string;
  params: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Path parameters of the matched route, decoded. */
  pathParams: Record<string, string>;
  record: RecordedRequest;
  raw: IncomingMessage;
}

export interface SimResponse {
  status: number;
  body: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export type Handler = (req: SimRequest) => SimResponse | Promise<SimResponse>;

/** `none`: public (a signature, if sent, is still checked); `required`: 401 unless the signature verifies. */
export type RouteAuth = 'none' | 'required';

/** Result of checking a request's credentials. `absent` = no credential headers at all. */
export interface AuthCheck {
  state: 'valid' | 'invalid' | 'absent';
  error?: string;
}

export interface AuthInput {
  method: string;
  path: string;
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Each platform's own error bodies. */
/** Which rate budget a request took: the host's, or its authenticated routes' own (rate-limit.ts). */
export type RateBudget = 'public' | 'authenticated';

export interface PlatformErrors {
  notFound(req: { path: string }): SimResponse;
  unauthorized(reason: string): SimResponse;
  /** A 429; `budget` says which budget ran out (a platform with a budget for its authenticated routes words it). */
  rateLimited(budget?: RateBudget): SimResponse;
  serverError(status: number): SimResponse;
}

export function json(status: number, value: unknown, headers?: Record<string, string>): SimResponse {
  return { status, body: JSON.stringify(value), contentType: 'application/json; charset=utf-8', headers };
}

/** A body serialised once (catalogue answers that never change). */
export function rawJson(status: number, body: string): SimResponse {
  return { status, body, contentType: 'application/json; charset=utf-8' };
}

export function text(status: number, body: string, contentType = 'text/plain; charset=utf-8'): SimResponse {
  return { status, body, contentType };
}

export function header(req: { headers: IncomingHttpHeaders }, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const hmacKeys = new Map<string, KeyObject>();

/**
 * The HMAC key of a secret as issued (base64 or url-safe base64), made once per secret. Node 24's `createHmac` takes
 * about 8× longer given the key's bytes than given a KeyObject (it tells the two apart by catching a thrown error).
 */
export function hmacKey(secret: string): KeyObject {
  let key = hmacKeys.get(secret);
  if (key === undefined) {
    if (hmacKeys.size >= 64) hmacKeys.clear();
    key = createSecretKey(Buffer.from(secret, 'base64'));
    hmacKeys.set(secret, key);
  }
  return key;
}
