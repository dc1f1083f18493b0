import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { sendError, type ErrorCode } from '@depthgate/service-kit';
import { clientAddress } from './address';
import type { Authenticator, VerifyResult } from './authenticator';
import type { ResolvedKey } from './key-record';
import type { AuthMetrics } from './metrics';

/** Who is calling: a valid key, or (history service only) an anonymous client identified by its IP. */
export type Caller = { kind: 'key'; key: ResolvedKey } | { kind: 'anonymous'; ip: string };

declare module 'node:http' {
  interface IncomingMessage {
    /** Set by apiKeyAuth. */
    caller?: Caller;
  }
}

/**
 * A middleware on Node's own request and response types, so it serves Express apps and plain `node:http` handlers
 * alike (the gateway runs its API path without Express's router, for speed).
 */
export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

export const INVALID_KEY_MESSAGE = 'Invalid API key';

const BASIC = /^basic[ \t]+([A-Za-z0-9+/]*={0,2})[ \t]*$/i;

/**
 * The API key a request presents, or undefined when it presents none: the `X-API-Key` header, else HTTP Basic
 * (RFC 7617) with the key as the user name and the password empty or ignored, as Stripe and several data APIs take
 * theirs: for clients that cannot set a header but can put credentials in a URL (`http://dg_…@host/…`, which axios in
 * Node sends as `Authorization: Basic base64("dg_…:")`). `X-API-Key` wins when both are present. A Basic header that
 * does not decode presents an empty key (refused like any bad key); other schemes are not ours and are ignored.
 * There is no query-parameter form: a key in a URL's query would reach logs and upstreams (the gateway refuses a REST
 * query that carries one, and logs mask any).
 */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (header !== undefined && header !== '') return Array.isArray(header) ? header.join(',') : header;
  const authorization = headers.authorization;
  if (authorization === undefined || !/^basic(?:[ \t]|$)/i.test(authorization)) return undefined;
  const encoded = BASIC.exec(authorization)?.[1];
  if (encoded === undefined) return '';
  const credentials = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  return colon === -1 ? credentials : credentials.slice(0, colon);
}

/** How a refused key is answered (HTTP requests and WebSocket handshakes alike): its error code, message and headers. */
export interface KeyRefusal {
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

/** The answer to a key that is not valid: 401 (unknown, malformed, revoked), 503 (not verifiable now) or 429. */
export function keyRefusal(result: Exclude<VerifyResult, { status: 'valid' }>): KeyRefusal {
  switch (result.status) {
    case 'invalid':
    case 'revoked':
      return { code: 'unauthorized', message: INVALID_KEY_MESSAGE };
    case 'unavailable':
      return {
        code: 'service_unavailable',
        message: 'API keys cannot be verified right now; retry shortly',
        headers: { 'Retry-After': '5' },
      };
    case 'throttled': {
      const seconds = String(Math.ceil(result.retryAfterMs / 1000));
      return {
        code: 'rate_limited',
        message: `Too many unknown API keys from this address; retry in ${seconds} s`,
        headers: { 'Retry-After': seconds },
      };
    }
  }
}

/**
 * `required` (gateway): no key → 401. `optional` (history): no key → anonymous caller, known by its address
 * (clientAddress through `trustProxyHops`). In both modes a key that is present (presentedKey: header or Basic) but
 * not valid is answered by keyRefusal (401 with the spec's body for an unknown, malformed or revoked one).
 */
export function apiKeyAuth(
  auth: Authenticator,
  mode: 'required' | 'optional',
  trustProxyHops: number,
  metrics?: AuthMetrics,
): NodeMiddleware {
  const apply = (result: VerifyResult, req: IncomingMessage, res: ServerResponse, next: () => void) => {
    if (result.status === 'valid') {
      req.caller = { kind: 'key', key: result.key };
      next();
      return;
    }
    const refusal = keyRefusal(result);
    sendError(res, refusal.code, refusal.message, refusal.headers);
  };
  return (req, res, next) => {
    const key = presentedKey(req.headers);
    if (key === undefined) {
      metrics?.verifications.inc({ result: 'missing' });
      if (mode === 'required') {
        sendError(res, 'unauthorized', INVALID_KEY_MESSAGE);
        return;
      }
      req.caller = { kind: 'anonymous', ip: clientAddress(req, trustProxyHops) };
      next();
      return;
    }
    const result = auth.verify(key, { address: () => clientAddress(req, trustProxyHops) });
    if (result instanceof Promise) {
      result.then((r) => apply(r, req, res, next), next);
    } else {
      apply(result, req, res, next);
    }
  };
}
