import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { errorHandler, notFoundHandler } from './errors';
import { healthRoutes, type ReadinessCheck } from './health';
import { ConfigError } from './env';
import type { Lifecycle } from './lifecycle';
import { metricsHandler } from './metrics';
import { createRequestTracker } from './request-context';
import type { AccessLogValue } from './logger';

export interface ServiceAppOptions {
  logger: Logger;
  registry: Registry;
  lifecycle: Lifecycle;
  readiness: ReadinessCheck[];
  /** Reverse proxies whose X-Forwarded-For is trusted; a count, never `true`. */
  trustProxyHops: number;
  /** Request id, metrics and access log for every request; built from the options below when absent. */
  tracker?: (req: IncomingMessage, res: ServerResponse) => void;
  accessLog?: boolean;
  /** Extra fields of the access log line, read when the response is done. */
  accessLogFields?: (req: IncomingMessage, res: ServerResponse) => Record<string, AccessLogValue>;
  /** Low-cardinality label of a request for metrics, read when the response is done. */
  routeLabel?: (req: IncomingMessage, res: ServerResponse) => string;
  /** Mounts the service's own routes between the common prelude and the 404/error handlers. */
  mount: (app: Express) => void;
}

/**
 * The shape every depthgate HTTP service shares: request tracking (id, metrics, access log), `/health`, `/ready`,
 * `/metrics`, then the service's routes, then one 404 and one error handler rendering `{"error","message"}`.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const track =
    options.tracker ??
    createRequestTracker({
      registry: options.registry,
      accessLog: options.accessLog ? options.logger : undefined,
      route: options.routeLabel ?? (() => 'all'),
      fields: options.accessLogFields,
    });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxyHops);
  app.use((req, res, next) => {
    track(req, res);
    next();
  });
  app.use(healthRoutes({ lifecycle: options.lifecycle, checks: options.readiness }));
  app.get('/metrics', metricsHandler(options.registry));
  options.mount(app);
  app.use(notFoundHandler());
  app.use(errorHandler(options.logger));
  return app;
}

/** Runs an entrypoint; a bad configuration prints its list of problems, anything else its stack; exit 1. */
export function runMain(main: () => Promise<unknown>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  });
}
