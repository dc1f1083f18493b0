import type { RequestHandler } from 'express';
import { AppError } from '@depthgate/service-kit';
import { PLATFORM_KEYS, canonicalPlatform, type Platforms } from '../platforms/registry';
import type { Forwarder } from '../proxy/forwarder';
import { parseGatewayTarget } from '../proxy/path';
import type { GatewayConfig } from '../config';

const ALLOWED_METHODS = 'GET, HEAD';
// The query goes upstream byte for byte; anything outside printable ASCII must arrive percent-encoded.
const QUERY_OK = /^[\x21-\x7e]*$/;

/**
 * `GET|HEAD /api/v1/{platform}/{resource}`, after the key and the caller's rate limit have been checked:
 * platform (404 `unknown_platform`), method (405 with `Allow`), the key's platform allowlist (403 `forbidden`),
 * a disabled platform (503), the path (400 `invalid_path`: nothing reaches an upstream), then the forwarder.
 */
export function apiRoute(deps: { config: GatewayConfig; platforms: Platforms; forwarder: Forwarder }): RequestHandler {
  const { config, platforms, forwarder } = deps;
  return (req, res, next) => {
    const parsed = parseGatewayTarget(req.originalUrl);
    if (!parsed.ok) return next(new AppError('invalid_path', `Invalid path: ${parsed.reason}`));
    const { target } = parsed;
    const key = canonicalPlatform(target.platform);
    if (!key) {
      return next(
        new AppError(
          'unknown_platform',
          `Unknown platform "${target.platform}"; valid platforms: ${PLATFORM_KEYS.join(', ')}`,
        ),
      );
    }
    res.locals.platform = key;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return next(
        new AppError('method_not_allowed', `Only ${ALLOWED_METHODS} are forwarded`, {
          headers: { Allow: ALLOWED_METHODS },
        }),
      );
    }
    const caller = req.caller;
    if (caller?.kind === 'key' && caller.key.platforms && !caller.key.platforms.has(key)) {
      return next(new AppError('forbidden', `This API key may not use platform ${key}`));
    }
    if (config.disabled.has(key))
      return next(new AppError('upstream_unavailable', `Platform ${key} is disabled on this gateway`));
    if (!QUERY_OK.test(target.query))
      return next(new AppError('invalid_request', 'The query string contains characters that must be percent-encoded'));
    const platform = platforms[key];
    forwarder.forward(req, res, platform, platform.route(target, target.query), target.path);
  };
}
