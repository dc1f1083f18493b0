import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { accessLogWriter, loggableUrl, type AccessLogValue } from './logger';
import { httpMetrics } from './metrics';

declare module 'node:http' {
  interface IncomingMessage {
    /** Request id: the caller's `X-Request-Id` when well-formed, else a fresh UUID. Echoed on every response. */
    id: string;
  }
}

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Sets `req.id`: the caller's `X-Request-Id` when well-formed, else a fresh UUID (also for answers written by hand). */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  req.id = typeof given === 'string' && VALID_REQUEST_ID.test(given) ? given : randomUUID();
  return req.id;
}

/** Sets `req.id` and the `X-Request-Id` response header. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const id = requestIdOf(req);
  res.setHeader('X-Request-Id', id);
  return id;
}

export function requestId(): RequestHandler {
  return (req, res, next) => {
    assignRequestId(req, res);
    next();
  };
}

export interface RequestTrackerOptions {
  registry: Registry;
  /** One JSON line per finished request; omit for none. */
  accessLog?: Logger;
  /** Low-cardinality label of a request for metrics, read when the response is done. */
  route: (req: IncomingMessage, res: ServerResponse) => string;
  /** Extra access-log fields, read when the response is done. */
  fields?: (req: IncomingMessage, res: ServerResponse) => Record<string, AccessLogValue>;
}

/**
 * What every request gets, whichever way it is served: a request id, HTTP metrics (requests by route and status,
 * duration) and an access-log line (method, URL with secrets masked, status, duration, request id, whether the
 * client left early), from a single `close` listener.
 */
export function createRequestTracker(
  options: RequestTrackerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { requests, duration } = httpMetrics(options.registry);
  const { route, fields } = options;
  const write = options.accessLog && accessLogWriter(options.accessLog);
  // Label lookups hash their arguments; a child per label set is looked up once.
  const counters = new Map<string, ReturnType<typeof requests.labels>>();
  const histograms = new Map<string, ReturnType<typeof duration.labels>>();
  return (req, res) => {
    assignRequestId(req, res);
    const started = performance.now();
    res.once('close', () => {
      const seconds = (performance.now() - started) / 1000;
      const label = route(req, res);
      const status = res.statusCode;
      const countKey = `${label} ${status}`;
      let counter = counters.get(countKey);
      if (!counter) counters.set(countKey, (counter = requests.labels(label, String(status))));
      counter.inc();
      let histogram = histograms.get(label);
      if (!histogram) histograms.set(label, (histogram = duration.labels(label)));
      histogram.observe(seconds);
      if (write) {
        const line: Record<string, AccessLogValue> = {
          req_id: req.id,
          method: req.method,
          url: loggableUrl(req.url ?? ''),
          status,
          ms: Math.round(seconds * 100_000) / 100,
          aborted: !res.writableFinished,
        };
        write(fields ? Object.assign(line, fields(req, res)) : line);
      }
    });
  };
}
