import express, { type Express } from 'express';
import type { Auth } from '@depthgate/auth';
import { createServiceApp, type Lifecycle, type Logger, type Registry } from '@depthgate/service-kit';
import type { GatewayConfig } from './config';
import { openApiDocument } from './openapi';
import type { Platforms } from './platforms/registry';
import type { Forwarder } from './proxy/forwarder';
import { apiRoute } from './routes/api';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  auth: Auth;
  registry: Registry;
  lifecycle: Lifecycle;
  platforms: Platforms;
  forwarder: Forwarder;
}

/** Builds the gateway app. No side effects: everything it talks to arrives in `deps`. */
export function createApp(deps: GatewayDeps): Express {
  const { config, auth, platforms, forwarder } = deps;
  const openapi = JSON.stringify(openApiDocument(platforms));
  return createServiceApp({
    ...deps,
    readiness: config.READY_REQUIRES_REDIS ? [auth.readiness] : [],
    trustProxyHops: config.TRUST_PROXY_HOPS,
    accessLog: config.ACCESS_LOG,
    accessLogFields: (_req, res) => ({ platform: res.locals.platform, cache: res.locals.cache }),
    routeLabel: (_req, res) => (typeof res.locals.platform === 'string' ? res.locals.platform : 'other'),
    mount: (app) => {
      app.get('/openapi.json', (_req, res) => {
        res.type('application/json').send(openapi);
      });
      const api = express.Router();
      api.use(auth.requireKey, auth.rateLimit);
      api.use('/v1', apiRoute({ config, platforms, forwarder }));
      app.use('/api', api);
    },
  });
}
