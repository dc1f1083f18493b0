import express, { type Express } from 'express';
import type { Auth } from '@depthgate/auth';
import { createServiceApp, type Lifecycle, type Logger, type Registry } from '@depthgate/service-kit';
import type { HistoryConfig } from './config';

export interface HistoryDeps {
  config: HistoryConfig;
  logger: Logger;
  auth: Auth;
  registry: Registry;
  lifecycle: Lifecycle;
}

/** Builds the history app. No side effects: everything it talks to arrives in `deps`. */
export function createApp(deps: HistoryDeps): Express {
  const { config, auth } = deps;
  return createServiceApp({
    ...deps,
    readiness: [auth.readiness],
    trustProxyHops: config.TRUST_PROXY_HOPS,
    accessLog: config.ACCESS_LOG,
    routeLabel: (req) => (req.url?.startsWith('/api/') ? 'api' : 'internal'),
    mount: (app) => {
      const api = express.Router();
      api.use(auth.optionalKey, auth.rateLimit);
      app.use('/api', api);
    },
  });
}
