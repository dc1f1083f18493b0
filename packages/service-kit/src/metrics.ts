import type { RequestHandler } from 'express';
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

/** Requests by route and status, and their duration. */
export function httpMetrics(registry: Registry): HttpMetrics {
  return {
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route and status code',
      labelNames: ['route', 'status'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request to the end of the response',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
