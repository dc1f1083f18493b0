import express from 'express';
import request from 'supertest';
import { requestId } from './request-context';
import { loggableUrl } from './logger';

describe('request id', () => {
  const app = express();
  app.use(requestId());
  app.get('/', (req, res) => void res.json({ id: req.id }));

  it('echoes a well-formed caller id', async () => {
    const res = await request(app).get('/').set('X-Request-Id', 'abc-123_x.y:z');
    expect(res.headers['x-request-id']).toBe('abc-123_x.y:z');
    expect(res.body.id).toBe('abc-123_x.y:z');
  });

  it('replaces a malformed or oversized id with a fresh UUID', async () => {
    for (const bad of ['has space', 'a'.repeat(129), 'line\u00e9', '<script>']) {
      const res = await request(app).get('/').set('X-Request-Id', bad);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const none = await request(app).get('/');
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('loggableUrl', () => {
  it('masks values of secret-looking query parameters and keeps the rest', () => {
    expect(loggableUrl('/a?api_key=dg_abc&limit=5&token=t1&signature=s')).toBe(
      '/a?api_key=[redacted]&limit=5&token=[redacted]&signature=[redacted]',
    );
    expect(loggableUrl('/a?monkey=1')).toBe('/a?monkey=1');
  });
});
