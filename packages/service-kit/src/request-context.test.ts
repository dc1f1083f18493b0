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
  // Shaped like a depthgate key (`dg_` + 39 letters and digits; packages/auth tests it with generated keys).
  const KEY = `dg_${'a1B2c3D4e5'.repeat(3)}F6g7h8I9j`;

  it('masks values of secret-looking query parameters and keeps the rest', () => {
    expect(loggableUrl('/a?api_key=dg_abc&limit=5&token=t1&signature=s')).toBe(
      '/a?api_key=[redacted]&limit=5&token=[redacted]&signature=[redacted]',
    );
    expect(loggableUrl('/a?monkey=1')).toBe('/a?monkey=1');
    expect(loggableUrl('/a?ticker=KXBTC&limit=5&q=dg_short')).toBe('/a?ticker=KXBTC&limit=5&q=dg_short');
    expect(loggableUrl('/a')).toBe('/a');
  });

  it('reads a parameter name as the services do: percent-decoded, any case, x-api-key too', () => {
    expect(loggableUrl(`/ws/v1/kalshi?api%5Fkey=${KEY}`)).toBe('/ws/v1/kalshi?api%5Fkey=[redacted]');
    expect(loggableUrl(`/a?x-api-key=${KEY}&limit=5`)).toBe('/a?x-api-key=[redacted]&limit=5');
    expect(loggableUrl('/a?X-Api-Key=not-a-key')).toBe('/a?X-Api-Key=[redacted]');
    // Nothing encoded (one pass) and something encoded (parameter by parameter) read the same.
    expect(loggableUrl('/a?token=t&limit=5&Access_Token=u&x_api_key=v&apikey=w')).toBe(
      '/a?token=[redacted]&limit=5&Access_Token=[redacted]&x_api_key=[redacted]&apikey=[redacted]',
    );
    expect(loggableUrl('/a?token=t&limit=5%2C6&Access_Token=u&x_api_key=v&apikey=w')).toBe(
      '/a?token=[redacted]&limit=5%2C6&Access_Token=[redacted]&x_api_key=[redacted]&apikey=[redacted]',
    );
    expect(loggableUrl('/a?%61pi_key=x%zz')).toBe('/a?%61pi_key=[redacted]');
  });

  it('masks anything shaped like a key, whatever carries it, encoded or not', () => {
    const encoded = `dg%5F${KEY.slice(3)}`;
    for (const url of [
      `/a?q=${KEY}`,
      `/a?q=${encoded}`,
      `/a?q=Bearer+${KEY}`,
      `/a?${KEY}`,
      `/a?${encoded}=1`,
      `/a/${KEY}/b?limit=5`,
      `/a/${encoded}/b`,
      `/a/x%2D${encoded}.json?limit=5`,
    ]) {
      const logged = loggableUrl(url);
      expect(logged).toContain('[redacted]');
      expect(logged).not.toContain(KEY.slice(3));
    }
    expect(loggableUrl(`/a?limit=5&q=${KEY}&b=2`)).toBe('/a?limit=5&q=[redacted]&b=2');
    expect(loggableUrl(`/a/${encoded}/b%2Dc?x=1`)).toBe('/a/[redacted]/b%2Dc?x=1');
  });
});
