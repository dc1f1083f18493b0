import express from 'express';
import request from 'supertest';
import { linesSink } from '@depthgate/test-utils';
import { AppError, ERROR_CODES, errorHandler, notFoundHandler, sendError, statusFor } from './errors';
import { createLogger } from './logger';

function silentLogger() {
  const lines: string[] = [];
  return { logger: createLogger({ name: 'test', level: 'info', destination: linesSink(lines) }), lines };
}

describe('error mapping', () => {
  it('maps every code to a 4xx or 5xx status', () => {
    for (const code of ERROR_CODES) {
      const status = statusFor(code);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
    expect(statusFor('unauthorized')).toBe(401);
    expect(statusFor('unknown_platform')).toBe(404);
    expect(statusFor('bad_gateway')).toBe(502);
    expect(statusFor('upstream_unavailable')).toBe(503);
    expect(statusFor('rate_limited')).toBe(429);
  });

  it('never repeats an API key an answer would quote from its request: path, parameter, percent-encoded', async () => {
    // Key-shaped (`dg_` and 39 letters and digits), as packages/auth makes them.
    const key = `dg_${'aB3'.repeat(13)}`;
    const app = express();
    app.get('/api/:exchange/trades/:ticker', (req) => {
      throw new AppError('unknown_ticker', `Unknown ticker ${JSON.stringify(req.params.ticker)} on venue_d`);
    });
    app.get('/format', (req) => {
      throw new AppError('invalid_format', `format must be json, got ${JSON.stringify(req.query.format)}`);
    });
    // A message that cuts what it quotes (at 40 characters here) holds the start of a key.
    app.get('/limit', (req) => {
      throw new AppError(
        'invalid_limit',
        `limit must be an integer, got ${JSON.stringify(String(req.query.limit).slice(0, 40))}`,
      );
    });
    app.use(notFoundHandler());
    app.use(errorHandler(silentLogger().logger));
    const answers = await Promise.all([
      request(app).get(`/api/venue_d/trades/${key}`),
      request(app).get(`/format?format=BTC-${key}`),
      request(app).get(`/limit?limit=${key}`),
      request(app).get(`/nowhere/${key}`),
      request(app).get(`/nowhere/%64g_${key.slice(3)}`),
    ]);
    expect(answers.map((a) => [a.status, a.body])).toEqual([
      [404, { error: 'unknown_ticker', message: 'Unknown ticker "[redacted]" on venue_d' }],
      [400, { error: 'invalid_format', message: 'format must be json, got "BTC-[redacted]"' }],
      [400, { error: 'invalid_limit', message: 'limit must be an integer, got "[redacted]"' }],
      [404, { error: 'not_found', message: 'No route for GET /nowhere/[redacted]' }],
      [404, { error: 'not_found', message: 'No route for GET /nowhere/[redacted]' }],
    ]);
  });

  it('renders AppError as {error, message} with its headers, and hides unexpected errors', async () => {
    const { logger, lines } = silentLogger();
    const app = express();
    app.get('/known', () => {
      throw new AppError('method_not_allowed', 'Only GET and HEAD', { headers: { Allow: 'GET, HEAD' } });
    });
    app.get('/boom', () => {
      throw new Error('secret internals at /srv/app.js:12');
    });
    app.use(notFoundHandler());
    app.use(errorHandler(logger));

    const known = await request(app).get('/known');
    expect(known.status).toBe(405);
    expect(known.headers.allow).toBe('GET, HEAD');
    expect(known.body).toEqual({ error: 'method_not_allowed', message: 'Only GET and HEAD' });

    const boom = await request(app).get('/boom');
    expect(boom.status).toBe(500);
    expect(boom.body).toEqual({ error: 'internal_error', message: 'Internal server error' });
    expect(JSON.stringify(boom.body)).not.toContain('secret internals');
    logger.flush();
    expect(lines.join('')).toContain('secret internals');

    const missing = await request(app).get('/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
  });

  it('turns a malformed JSON body into a 400, not a 500', async () => {
    const { logger } = silentLogger();
    const app = express();
    app.use(express.json());
    app.post('/x', (_req, res) => void res.json({}));
    app.use(errorHandler(logger));
    const res = await request(app).post('/x').set('Content-Type', 'application/json').send('{"a":');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('cuts the connection instead of appending an error to a started response', async () => {
    const app = express();
    app.get('/half', (_req, res) => {
      res.write('{"rows":[');
      sendError(res, 'service_unavailable', 'gone');
    });
    await expect(request(app).get('/half')).rejects.toThrow();
  });
});
