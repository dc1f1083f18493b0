/**
 * Builds the Explorer page (`GET /explorer` of the history service) into services/history/dist/explorer-page:
 * index.html and content-hashed assets under assets/, which the service serves from memory with a year of caching
 * (src/explorer/assets.ts). Run by the root `pnpm build` (after `tsc -b`, which builds @depthgate/client's ES
 * modules that the page imports) and by the history Dockerfile.
 *
 * Nothing is inlined (no data: URIs, no inline script or style): the page runs under `script-src 'self'` and
 * `style-src 'self'`. `pnpm exec vite --config services/history/explorer/vite.config.mts` serves it for development,
 * with /api proxied to a history service on 127.0.0.1:7081 (`./dev up`).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/explorer/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/explorer-page', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:7081' },
  },
});
