import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Auth } from '@depthgate/auth';
import {
  createRequestTracker,
  createServiceApp,
  type Lifecycle,
  type Logger,
  type Registry,
} from '@depthgate/service-kit';
import type { GatewayConfig } from './config';
import './context';
import { openApiDocument } from './openapi';
import { asyncApiDocument } from './ws/asyncapi';
import type { GatewayPlatforms } from './platforms/registry';
import type { Forwarder } from './proxy/forwarder';
import { createApiHandler } from './routes/api';
import { hostRouter } from './routes/hosts';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  auth: Auth;
  registry: Registry;
  lifecycle: Lifecycle;
  platforms: GatewayPlatforms;
  forwarder: Forwarder;
}

/**
 * The gateway's request handler: a request whose Host names a platform under GATEWAY_BASE_DOMAIN, and `/api/…`, go
 * to the API pipeline (routes/api.ts); everything else (`/health`, `/ready`, `/metrics`, `/openapi.json`,
 * `/asyncapi.json`, 404) to an
 * Express app. One tracker serves both, so ids, metrics and the access log are the same whichever way a request
 * went. No side effects: everything arrives in `deps`.
 */
export function createHandler(deps: GatewayDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { config, auth, logger } = deps;
  const track = createRequestTracker({
    registry: deps.registry,
    accessLog: config.ACCESS_LOG ? logger : undefined,
    route: (req) => req.platform ?? (req.url?.startsWith('/api/') ? 'api' : 'internal'),
    fields: (req) => ({ platform: req.platform, cache: req.cacheStatus }),
  });
  const openapi = JSON.stringify(openApiDocument(deps.platforms));
  const asyncapi = JSON.stringify(asyncApiDocument(deps.platforms));
  const ops = createServiceApp({
    ...deps,
    tracker: track,
    readiness: auth.readiness,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    mount: (app) => {
      app.get('/openapi.json', (_req, res) => {
        res.type('application/json').send(openapi);
      });
      app.get('/asyncapi.json', (_req, res) => {
        res.type('application/json').send(asyncapi);
      });
    },
  });
  const api = createApiHandler({ ...deps, track });
  const byHost = config.baseDomain === undefined ? undefined : hostRouter(config.baseDomain, deps.platforms);
  // Absolute-form targets (`GET http://host/...`) also go to the API pipeline, which refuses them with 400.
  return (req, res) => {
    if (byHost) {
      const platform = byHost(req.headers.host);
      if (platform) return api.hosted(req, res, platform);
    }
    const url = req.url ?? '';
    if (url.startsWith('/api/') || !url.startsWith('/')) api(req, res);
    else ops(req, res);
  };
}
