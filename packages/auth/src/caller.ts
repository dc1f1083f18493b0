import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { sendError } from '@depthgate/service-kit';
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

/**
 * `required` (gateway): no key → 401. `optional` (history): no key → anonymous caller.
 * In both modes a key that is present (presentedKey: header or Basic) but unknown, malformed or revoked is 401 with
 * the spec's body.
 */
export function apiKeyAuth(auth: Authenticator, mode: 'required' | 'optional', metrics?: AuthMetrics): NodeMiddleware {
  const apply = (result: VerifyResult, req: IncomingMessage, res: ServerResponse, next: () => void) => {
    switch (result.status) {
      case 'valid':
        req.caller = { kind: 'key', key: result.key };
        next();
        return;
      case 'invalid':
      case 'revoked':
        sendError(res, 'unauthorized', INVALID_KEY_MESSAGE);
        return;
      case 'unavailable':
        sendError(res, 'service_unavailable', 'API keys cannot be verified right now; retry shortly', {
          'Retry-After': '5',
        });
        return;
    }
  };
  return (req, res, next) => {
    const key = presentedKey(req.headers);
    if (key === undefined) {
      metrics?.verifications.inc({ result: 'missing' });
      if (mode === 'required') {
        sendError(res, 'unauthorized', INVALID_KEY_MESSAGE);
        return;
      }
      // Express computes `ip` from its `trust proxy` hop count (the history service is an Express app).
      req.caller = { kind: 'anonymous', ip: (req as { ip?: string }).ip ?? req.socket.remoteAddress ?? 'unknown' };
      next();
      return;
    }
    const result = auth.verify(key);
    if (result instanceof Promise) {
      result.then((r) => apply(r, req, res, next), next);
    } else {
      apply(result, req, res, next);
    }
  };
}
