import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { loggableUrl } from './logger';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Request id: the caller's `X-Request-Id` when well-formed, else a fresh UUID. Echoed on every response. */
      id: string;
    }
  }
}

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && VALID_REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

/** One JSON line per finished request: method, path (secrets masked), status, duration, request id. */
export function accessLog(
  logger: Logger,
  fields: (req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1]) => object = () => ({}),
): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        {
          req_id: req.id,
          method: req.method,
          url: loggableUrl(req.originalUrl),
          status: res.statusCode,
          ms: Math.round(ms * 100) / 100,
          aborted: !res.writableFinished,
          ...fields(req, res),
        },
        'request',
      );
    });
    next();
  };
}
