import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Auth, PlatformKey } from '@depthgate/auth';
import { AppError, sendError, type Logger } from '@depthgate/service-kit';
import type { GatewayConfig } from '../config';
import '../context';
import type { GatewayPlatforms } from '../platforms/registry';
import type { Forwarder } from '../proxy/forwarder';
import { memoizedTargetParser, type ParseResult } from '../proxy/path';

const ALLOWED_METHODS = 'GET, HEAD';
// The query goes upstream byte for byte; anything outside printable ASCII must arrive percent-encoded.
const QUERY_OK = /^[\x21-\x7e]*$/;

function routeAndForward(req: IncomingMessage, res: ServerResponse, deps: ApiDeps): void {
  const { config, platforms, forwarder } = deps;
  const parsed = deps.targets(req.url ?? '');
  if (!parsed.ok) return sendError(res, 'invalid_path', `Invalid path: ${parsed.reason}`);
  const { target } = parsed;
  const platform = platforms.resolve(target.platform);
  if (!platform) {
    return sendError(
      res,
      'unknown_platform',
      `Unknown platform "${target.platform}"; valid platforms: ${platforms.keys.join(', ')}`,
    );
  }
  const key = platform.key;
  req.platform = key;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, 'method_not_allowed', `Only ${ALLOWED_METHODS} are forwarded`, { Allow: ALLOWED_METHODS });
  }
  const caller = req.caller;
  if (caller?.kind === 'key' && caller.key.platforms && !caller.key.platforms.has(key as PlatformKey)) {
    return sendError(res, 'forbidden', `This API key may not use platform ${key}`);
  }
  if (config.disabled.has(key))
    return sendError(res, 'upstream_unavailable', `Platform ${key} is disabled on this gateway`);
  if (!QUERY_OK.test(target.query)) {
    return sendError(res, 'invalid_request', 'The query string contains characters that must be percent-encoded');
  }
  forwarder.forward(req, res, platform, platform.route(target, target.query), target.segments);
}

interface ApiDeps extends ApiOptions {
  targets: (rawTarget: string) => ParseResult;
}

export interface ApiOptions {
  config: GatewayConfig;
  platforms: GatewayPlatforms;
  forwarder: Forwarder;
  auth: Auth;
  logger: Logger;
  /** Request id, metrics and access log (the same tracker the operational endpoints use). */
  track: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * Everything under `/api/`: request tracking, the key (401), the caller's rate limit (429), then
 * `/api/v1/{platform}/{resource}`: platform (404 `unknown_platform`), method (405 with `Allow`), the key's platform
 * allowlist (403), a disabled platform (503), the path (400 `invalid_path`: nothing reaches an upstream), and the
 * forwarder. A plain node:http handler rather than Express routes: this is the hot path, and Express's
 * per-request machinery was measured at about half of a cache hit's cost (docs/benchmarks.md).
 */
export function createApiHandler(options: ApiOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const deps: ApiDeps = { ...options, targets: memoizedTargetParser(2000) };
  const { auth, logger } = deps;
  const fail = (res: ServerResponse, err: unknown) => {
    if (err instanceof AppError) return sendError(res, err.code, err.message, { ...err.headers });
    logger.error({ err }, 'unhandled error');
    sendError(res, 'internal_error', 'Internal server error');
  };
  return (req, res) => {
    deps.track(req, res);
    auth.requireKey(req, res, (err) => {
      if (err) return fail(res, err);
      auth.rateLimit(req, res, (limitErr) => {
        if (limitErr) return fail(res, limitErr);
        try {
          routeAndForward(req, res, deps);
        } catch (routeErr) {
          fail(res, routeErr);
        }
      });
    });
  };
}
