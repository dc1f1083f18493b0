/**
 * The Explorer's routes over a small built page of their own (no database): the page's headers (CSP, no-cache,
 * ETag, 304), hashed assets cached for a year, Brotli/gzip/identity by Accept-Encoding (a .png as built), only built names served,
 * and a clear answer when the page was not built.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { errorHandler, notFoundHandler } from '@depthgate/service-kit';
import { quietLogger } from '../testing/harness';
import { loadExplorerAssets, type ExplorerAssets } from './assets';
import { EXPLORER_CSP, explorerRoutes } from './routes';

let dir: string;
let assets: ExplorerAssets;
const html = `<!doctype html><html><head><script type="module" src="/explorer/assets/index-AbC123xy.js"></script></head><body>${'<p>explorer</p>'.repeat(50)}</body></html>`;
const js = `console.log(${JSON.stringify('x'.repeat(2000))});`;
/** Bytes of a file already compressed in its own format (a PNG's signature and some payload). */
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(600, 7)]);

function app(a: ExplorerAssets | undefined) {
  const e = express();
  e.use(explorerRoutes(a));
  e.use(notFoundHandler());
  e.use(errorHandler(quietLogger()));
  return e;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dg-explorer-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), html);
  writeFileSync(path.join(dir, 'assets', 'index-AbC123xy.js'), js);
  writeFileSync(path.join(dir, 'assets', 'logo-Zz9.png'), png);
  assets = loadExplorerAssets(dir) as ExplorerAssets;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('GET /explorer', () => {
  it('the page: CSP, hardening headers, revalidated every load, 304 on its ETag', async () => {
    const res = await request(app(assets)).get('/explorer').set('accept-encoding', 'identity');
    expect(res.status).toBe(200);
    expect(res.text).toBe(html);
    expect(res.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': EXPLORER_CSP,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      vary: 'Accept-Encoding',
    });
    expect(EXPLORER_CSP).toContain("script-src 'self'");
    expect(EXPLORER_CSP).not.toMatch(/unsafe|\*|https?:/);
    const again = await request(app(assets))
      .get('/explorer')
      .set('if-none-match', res.headers.etag as string);
    expect(again.status).toBe(304);
    expect((await request(app(assets)).head('/explorer')).status).toBe(200);
  });

  it('assets: a year, immutable; Brotli or gzip as accepted, the same bytes once decoded', async () => {
    const url = '/explorer/assets/index-AbC123xy.js';
    const br = await rawGet(url, 'gzip, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(brotliDecompressSync(br.body).toString()).toBe(js);
    const gz = await rawGet(url, 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(js);
    const plain = await rawGet(url, 'identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(js);
  });

  it('a file compressed in its own format (.png) goes as built, with no Content-Encoding, whatever is accepted', async () => {
    for (const accept of ['gzip, br', 'gzip', 'identity']) {
      const res = await rawGet('/explorer/assets/logo-Zz9.png', accept);
      expect([accept, res.headers['content-encoding'], res.headers['content-type']]).toEqual([
        accept,
        undefined,
        'image/png',
      ]);
      expect(res.body.equals(png)).toBe(true);
    }
  });

  it('only names the build produced; /explorer/ redirects; not built → 503 that says so', async () => {
    for (const p of ['/explorer/assets/nope.js', '/explorer/assets/..%2Findex.html', '/explorer/index.html']) {
      const res = await request(app(assets)).get(p);
      expect([p, res.status, res.body.error]).toEqual([p, 404, 'not_found']);
    }
    const slash = await request(app(assets)).get('/explorer/');
    expect([slash.status, slash.headers.location]).toEqual([308, '/explorer']);
    const unbuilt = await request(app(undefined)).get('/explorer');
    expect(unbuilt.status).toBe(503);
    expect(unbuilt.body).toEqual({
      error: 'service_unavailable',
      message:
        'The Explorer page was not built into this deployment (the build of @depthgate/explorer writes it to packages/explorer/dist)',
    });
    expect(loadExplorerAssets(path.join(dir, 'missing'))).toBeUndefined();
  });
});

/** The bytes as sent (no client-side decompression). */
async function rawGet(url: string, acceptEncoding: string) {
  const server = http.createServer(app(assets));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    return await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const port = (server.address() as AddressInfo).port;
      http
        .get({ host: '127.0.0.1', port, path: url, headers: { 'accept-encoding': acceptEncoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
