import type { RequestHandler, Request, Response } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A registry per app instance (two instances in one test process must not share counters). */
export function createRegistry(service: string, options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  return registry;
}

export function metricsHandler(registry: Registry): RequestHandler {
  return async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  };
}

export interface HttpMetrics {
  requests: Counter<'route' | 'status'>;
  duration: Histogram<'route'>;
}

/** Requests by route and status, and their duration. `route` must be low-cardinality (a platform, an endpoint). */
export function httpMetrics(
  registry: Registry,
  route: (req: Request, res: Response) => string,
): { middleware: RequestHandler; metrics: HttpMetrics } {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route and status code',
    labelNames: ['route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to the end of the response',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const middleware: RequestHandler = (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const r = route(req, res);
      requests.inc({ route: r, status: String(res.statusCode) });
      duration.observe({ route: r }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
  return { middleware, metrics: { requests, duration } };
}
