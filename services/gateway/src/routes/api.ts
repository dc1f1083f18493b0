import type { IncomingMessage, ServerResponse } from 'node:http';
import { carriesApiKey, jsonCarriesApiKey, type Auth, type PlatformKey } from '@depthgate/auth';
import { AppError, sendError, type Logger } from '@depthgate/service-kit';
import type { GatewayConfig } from '../config';
import '../context';
import type { GatewayPlatforms } from '../platforms/registry';
import type { Platform, Route } from '../platforms/types';
import { readJsonBody } from '../proxy/body';
import type { Forwarder } from '../proxy/forwarder';
import {
  memoizedTargetParser,
  parseGatewayTarget,
  parseHostedTarget,
  type ParsedResource,
  type Parsed,
  type ParseResult,
} from '../proxy/path';

const READ_METHODS = 'GET, HEAD';
const READ_METHODS_AND_POST = 'GET, HEAD, POST';
// The query goes upstream byte for byte; anything outside printable ASCII must arrive percent-encoded.
const QUERY_OK = /^[\x21-\x7e]*$/;

/**
 * Method (405 with `Allow`: GET and HEAD everywhere, POST where the route's target lists the path as a read-only
 * POST), the key's platform allowlist (403), a disabled platform (503), the query (400: raw non-ASCII or control
 * characters), an API key in the path or query (400), then the forwarder; a POST after its body has been read and
 * checked (413, 415, and 400 for a key in it).
 */
function forwardTo(
  req: IncomingMessage,
  res: ServerResponse,
  deps: ApiDeps,
  platform: Platform,
  target: ParsedResource,
): void {
  const { config, forwarder } = deps;
  const key = platform.key;
  req.platform = key;
  const method = req.method;
  let route: Route | undefined;
  if (method !== 'GET' && method !== 'HEAD') {
    route = platform.route(target, target.query);
    const allow = route.target.post?.has(route.path) ? READ_METHODS_AND_POST : READ_METHODS;
    if (method !== 'POST' || allow === READ_METHODS) {
      return sendError(res, 'method_not_allowed', `${method} is not forwarded for this path; it accepts ${allow}`, {
        Allow: allow,
      });
    }
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
  // The path and query go upstream as they came: a key in them (beside the header that authenticated) would leave too.
  if (carriesApiKey(target.segments.join('/'))) return refuseKeyIn(res, 'path');
  if (carriesApiKey(target.query)) return refuseKeyIn(res, 'query string');
  if (route === undefined) {
    forwarder.forward(req, res, platform, platform.route(target, target.query), target.segments);
    return;
  }
  const post = route;
  readJsonBody(req, res, config.GATEWAY_MAX_BODY_BYTES, (body) => {
    if (body instanceof AppError) return sendError(res, body.code, body.message, { ...body.headers });
    if (jsonCarriesApiKey(body.text)) return refuseKeyIn(res, 'body');
    forwarder.forward(req, res, platform, post, target.segments, body);
  });
}

/** 400: a caller's key in what would be forwarded upstream (the path, the query, a POST's body). */
function refuseKeyIn(res: ServerResponse, where: string): void {
  sendError(
    res,
    'invalid_request',
    `The request's ${where} carries an API key, which would be forwarded upstream; send the key as X-API-Key or HTTP Basic only`,
  );
}

type Router = (req: IncomingMessage, res: ServerResponse, deps: ApiDeps, platform: Platform | undefined) => void;

/** `/api/v1/{platform}/{resource}`: the path (400 `invalid_path`: nothing reaches an upstream), the platform (404). */
const routeByPath: Router = (req, res, deps) => {
  const parsed = deps.targets(req.url ?? '');
  if (!parsed.ok) return sendError(res, 'invalid_path', `Invalid path: ${parsed.reason}`);
  const { target } = parsed;
  const platform = deps.platforms.resolve(target.platform);
  if (!platform) {
    return sendError(res, 'unknown_platform', deps.platforms.unknown(target.platform, 'valid platforms'));
  }
  forwardTo(req, res, deps, platform, target);
};

/** A request routed by its Host to `platform`: the whole path is the resource (400 `invalid_path` as above). */
const routeByHost: Router = (req, res, deps, platform) => {
  const parsed = deps.hostedTargets(req.url ?? '');
  if (!parsed.ok) return sendError(res, 'invalid_path', `Invalid path: ${parsed.reason}`);
  forwardTo(req, res, deps, platform as Platform, parsed.target);
};

interface ApiDeps extends ApiOptions {
  targets: (rawTarget: string) => ParseResult;
  hostedTargets: (rawTarget: string) => Parsed<ParsedResource>;
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

export interface ApiHandler {
  /** A request under `/api/`. */
  (req: IncomingMessage, res: ServerResponse): void;
  /** A request routed by its Host to `platform`: the whole path is the resource. */
  hosted(req: IncomingMessage, res: ServerResponse, platform: Platform): void;
}

/**
 * Everything under `/api/` and everything routed by Host: request tracking, the key (401), the caller's rate limit
 * (429), then the route (routeByPath, or the Host's platform with the path as the resource) and forwardTo. A plain
 * node:http handler rather than Express routes: this is the hot path, and Express's per-request machinery was
 * measured at about half of a cache hit's cost (docs/benchmarks.md).
 */
export function createApiHandler(options: ApiOptions): ApiHandler {
  const deps: ApiDeps = {
    ...options,
    targets: memoizedTargetParser(parseGatewayTarget, 2000),
    hostedTargets: memoizedTargetParser(parseHostedTarget, 2000),
  };
  const { auth, logger } = deps;
  const fail = (res: ServerResponse, err: unknown) => {
    if (err instanceof AppError) return sendError(res, err.code, err.message, { ...err.headers });
    logger.error({ err }, 'unhandled error');
    sendError(res, 'internal_error', 'Internal server error');
  };
  // No closure per request beyond the two callbacks the key and rate-limit checks need: this is the hot path.
  const pipeline = (req: IncomingMessage, res: ServerResponse, route: Router, platform: Platform | undefined) => {
    deps.track(req, res);
    auth.requireKey(req, res, (err) => {
      if (err) return fail(res, err);
      auth.rateLimit(req, res, (limitErr) => {
        if (limitErr) return fail(res, limitErr);
        try {
          route(req, res, deps, platform);
        } catch (routeErr) {
          fail(res, routeErr);
        }
      });
    });
  };
  const handler = ((req, res) => pipeline(req, res, routeByPath, undefined)) as ApiHandler;
  handler.hosted = (req, res, platform) => pipeline(req, res, routeByHost, platform);
  return handler;
}
