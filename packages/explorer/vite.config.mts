/**
 * Builds the Explorer page (`GET /explorer` of the history service) into packages/explorer/dist: index.html and
 * content-hashed assets under assets/, which the history service serves from memory with a year of caching
 * (services/history/src/explorer/assets.ts). Run by the root `pnpm build` (after `tsc -b`, which builds
 * @depthgate/client's ES modules that the page imports) and by the history Dockerfile.
 *
 * Nothing is inlined (no data: URIs, no inline script or style): the page runs under `script-src 'self'` and
 * `style-src 'self'`. `pnpm --filter @depthgate/explorer dev` serves it for development,
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
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
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
