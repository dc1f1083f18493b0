import express, { type Express, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { errorHandler, notFoundHandler } from './errors';
import { healthRoutes, type ReadinessCheck } from './health';
import { ConfigError } from './env';
import type { Lifecycle } from './lifecycle';
import { httpMetrics, metricsHandler } from './metrics';
import { accessLog, requestId } from './request-context';

export interface ServiceAppOptions {
  logger: Logger;
  registry: Registry;
  lifecycle: Lifecycle;
  readiness: ReadinessCheck[];
  /** Reverse proxies whose X-Forwarded-For is trusted; a count, never `true`. */
  trustProxyHops: number;
  accessLog: boolean;
  /** Extra fields of the access log line, read when the response is done. */
  accessLogFields?: (req: Request, res: Response) => object;
  /** Low-cardinality label of a request for metrics, read when the response is done. */
  routeLabel: (req: Request, res: Response) => string;
  /** Mounts the service's own routes between the common prelude and the 404/error handlers. */
  mount: (app: Express) => void;
}

/**
 * The shape every depthgate HTTP service shares: request id, access log, HTTP metrics, `/health`, `/ready`,
 * `/metrics`, then the service's routes, then one 404 and one error handler rendering `{"error","message"}`.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxyHops);
  app.use(requestId());
  if (options.accessLog) app.use(accessLog(options.logger, options.accessLogFields));
  app.use(httpMetrics(options.registry, options.routeLabel).middleware);
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
