import { once } from 'node:events';
import { request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import express from 'express';
import { ONE_SHOT_MAX_BYTES, gzipOnlyAcceptEncoding, gzipResponses } from './gzip';

describe('gzipOnlyAcceptEncoding', () => {
  it.each([
    [undefined, undefined],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'gzip'],
    ['br, gzip;q=0.5', 'gzip;q=0.5'],
    ['br', 'identity'],
    ['zstd, br', 'identity'],
    ['*', 'gzip'],
    ['*;q=0.1', 'gzip;q=0.1'],
    ['identity', 'identity'],
    ['gzip;q=0, identity', 'gzip;q=0, identity'],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['', 'identity'],
    ['gzip;q=0, *', 'gzip;q=0'],
    ['*, x-gzip;q=0', 'gzip;q=0'],
    ['*;q=0.1, gzip', 'gzip'],
    ['identity, *', 'identity, gzip'],
  ])('%j → %j', (header, expected) => {
    expect(gzipOnlyAcceptEncoding(header)).toBe(expected);
  });
});

describe('gzipResponses', () => {
  const text = (bytes: number, seed: string) => {
    let s = '';
    for (let i = 0; s.length < bytes; i++) s += `{"seed":"${seed}","i":${i},"price":"${(i * 7919) % 100003}.25"},`;
    return `[${s.slice(0, bytes - 2)}]`;
  };
  const bodies = { small: text(600, 'a'), page: text(100_000, 'b'), big: text(ONE_SHOT_MAX_BYTES + 50_000, 'c') };
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = express();
    app.use(gzipResponses(3));
    app.get('/one/:size', (req, res) => {
      res.type('application/json').send(bodies[req.params.size as keyof typeof bodies]);
    });
    app.get('/pieces', (_req, res) => {
      res.type('application/json');
      res.write(bodies.page.slice(0, 50_000));
      res.end(bodies.page.slice(50_000));
    });
    app.get('/no-transform', (_req, res) => {
      res.set('Cache-Control', 'public, no-transform').type('application/json').send(bodies.page);
    });
    app.get('/binary', (_req, res) => {
      res.type('image/png').send(Buffer.from(bodies.page));
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function get(path: string, acceptEncoding?: string, method = 'GET') {
    const url = new URL(path, base);
    return new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = request(
        url,
        { method, headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('gzips a body sent in one piece in one go, with its compressed length', async () => {
    const r = await get('/one/page', 'gzip');
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers['content-length']).toBe(String(r.body.length));
    expect(r.headers['transfer-encoding']).toBeUndefined();
    expect(r.headers.vary).toMatch(/accept-encoding/i);
    expect(gunzipSync(r.body).toString()).toBe(bodies.page);
  });

  it('streams larger bodies and bodies written in pieces through compression (chunked, no length)', async () => {
    for (const [path, body] of [
      ['/one/big', bodies.big],
      ['/pieces', bodies.page],
    ] as const) {
      const r = await get(path, 'gzip');
      expect(r.headers['content-encoding']).toBe('gzip');
      expect(r.headers['transfer-encoding']).toBe('chunked');
      expect(gunzipSync(r.body).toString()).toBe(body);
    }
  });

  it.each([
    ['no Accept-Encoding', '/one/page', undefined],
    ['gzip refused', '/one/page', 'gzip;q=0, identity'],
    ['only other codings', '/one/page', 'br'],
    ['gzip refused, anything else welcome', '/one/page', 'gzip;q=0, *'],
    ['below the threshold', '/one/small', 'gzip'],
    ['Cache-Control: no-transform', '/no-transform', 'gzip'],
    ['a type that is not text', '/binary', 'gzip'],
  ])('sends the body as it is: %s', async (_why, path, acceptEncoding) => {
    const r = await get(path, acceptEncoding);
    expect(r.headers['content-encoding']).toBeUndefined();
    const expected = path === '/one/small' ? bodies.small : bodies.page;
    expect(r.body.toString()).toBe(expected);
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(expected)));
  });

  it('prefers gzip when identity is offered first at the same quality, as compression does', async () => {
    const r = await get('/one/page', 'identity, gzip');
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(r.body).toString()).toBe(bodies.page);
  });

  it('takes the stream for every answer above level 4 (one call would hold the event loop too long)', async () => {
    const app = express();
    app.use(gzipResponses(6));
    app.get('/page', (_req, res) => {
      res.type('application/json').send(bodies.page);
    });
    const level6 = app.listen(0, '127.0.0.1');
    await once(level6, 'listening');
    try {
      const r = await get(`http://127.0.0.1:${(level6.address() as AddressInfo).port}/page`, 'gzip');
      expect(r.headers['content-encoding']).toBe('gzip');
      expect(r.headers['transfer-encoding']).toBe('chunked');
      expect(gunzipSync(r.body).toString()).toBe(bodies.page);
    } finally {
      await new Promise<void>((resolve) => level6.close(() => resolve()));
    }
  });

  it('answers HEAD with the headers only', async () => {
    const r = await get('/one/page', 'gzip', 'HEAD');
    expect(r.body.length).toBe(0);
  });
});
