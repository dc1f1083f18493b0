/**
 * `GET /explorer`: the Explorer page (docs/explorer.md), from the files the build produced (assets.ts).
 *
 * - `/explorer` answers index.html, revalidated on every load (`Cache-Control: no-cache` and a strong ETag), so a new
 *   deployment is picked up at once; `/explorer/` redirects to it.
 * - `/explorer/assets/<name>` answers the content-hashed files with a year of caching (`immutable`): a new build
 *   has new names. Only names the build produced exist; anything else is 404.
 * - Brotli or gzip as the request accepts (`Vary: Accept-Encoding`), compressed once at start-up.
 * - A strict Content-Security-Policy: scripts, styles, images and API calls from this origin only, no inline script
 *   or style, no framing, Trusted Types for the DOM's script sinks; with the usual hardening headers.
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '@depthgate/service-kit';
import type { ExplorerAssets, ExplorerFile } from './assets';

export const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** Headers of every Explorer answer (the page and its assets). */
const HARDENING: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Headers of the page itself. */
const PAGE: Record<string, string> = {
  ...HARDENING,
  'Content-Security-Policy': EXPLORER_CSP,
  'Cross-Origin-Opener-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  'Cache-Control': 'no-cache',
};

const ASSET: Record<string, string> = {
  ...HARDENING,
  'Cache-Control': 'public, max-age=31536000, immutable',
};

function send(req: Request, res: Response, file: ExplorerFile, headers: Record<string, string>): void {
  res.set(headers);
  res.setHeader('Content-Type', file.type);
  res.setHeader('ETag', file.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  const match = req.headers['if-none-match'];
  if (match !== undefined && match.split(',').some((t) => t.trim().replace(/^W\//, '') === file.etag)) {
    res.status(304).end();
    return;
  }
  // Brotli whenever it is accepted (smaller than gzip for the same text), else gzip, else the bytes as built; a file
  // kept only as built (already compressed in its own format) is sent as it is, with no Content-Encoding.
  let body = file.body;
  if (file.br && req.acceptsEncodings('br') === 'br') {
    body = file.br;
    res.setHeader('Content-Encoding', 'br');
  } else if (file.gzip && req.acceptsEncodings('gzip') === 'gzip') {
    body = file.gzip;
    res.setHeader('Content-Encoding', 'gzip');
  }
  res.setHeader('Content-Length', body.length);
  res.status(200).end(body);
}

/** The Explorer's routes; without built assets, `/explorer` says so (503) instead of a blank page. */
export function explorerRoutes(assets: ExplorerAssets | undefined): Router {
  const router = express.Router({ strict: true, caseSensitive: true });
  router.get('/explorer', (req, res, next) => {
    if (!assets) {
      next(
        new AppError(
          'service_unavailable',
          'The Explorer page was not built into this deployment (the build of @depthgate/explorer writes it to packages/explorer/dist)',
        ),
      );
      return;
    }
    send(req, res, assets.index, PAGE);
  });
  router.get('/explorer/', (_req, res) => {
    res.redirect(308, '/explorer');
  });
  router.get('/explorer/assets/:name', (req, res, next) => {
    const file = assets?.assets.get(String(req.params.name));
    if (!file) {
      next(new AppError('not_found', 'No such file of the Explorer page'));
      return;
    }
    send(req, res, file, ASSET);
  });
  return router;
}
