import type { IncomingMessage, ServerResponse } from 'node:http';
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

/**
 * `required` (gateway): no key → 401. `optional` (history): no key → anonymous caller.
 * In both modes a key that is present but unknown, malformed or revoked is 401 with the spec's body.
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
    const header = req.headers['x-api-key'];
    if (header === undefined || header === '') {
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
    const result = auth.verify(Array.isArray(header) ? header.join(',') : header);
    if (result instanceof Promise) {
      result.then((r) => apply(r, req, res, next), next);
    } else {
      apply(result, req, res, next);
    }
  };
}
