/**
 * The Explorer page's built files (@depthgate/explorer: packages/explorer, built by Vite into its dist/),
 * read once at start-up into memory with their gzip and Brotli forms, so a request costs no file system access and
 * only files the build produced can be answered (no path ever reaches the file system).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Where the Explorer package's build is (its dist/ folder, beside its package.json): the history image ships it. */
export function explorerBuildDir(): string {
  return path.join(path.dirname(require.resolve('@depthgate/explorer/package.json')), 'dist');
}

export interface ExplorerFile {
  body: Buffer;
  /** The compressed forms; undefined for a file already compressed in its own format (`.png`, `.woff2`). */
  gzip: Buffer | undefined;
  br: Buffer | undefined;
  type: string;
  /** A strong ETag of the body. */
  etag: string;
}

export interface ExplorerAssets {
  /** index.html: the page at /explorer. */
  index: ExplorerFile;
  /** assets/<name>: content-hashed file names, served as immutable. */
  assets: ReadonlyMap<string, ExplorerFile>;
}

/** Media types of the built files, by extension (anything else is application/octet-stream). */
export const ASSET_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

function file(fullPath: string): ExplorerFile {
  const body = readFileSync(fullPath);
  const compressible = !/\.(png|woff2)$/.test(fullPath);
  return {
    body,
    gzip: compressible ? gzipSync(body, { level: 9 }) : undefined,
    br: compressible
      ? brotliCompressSync(body, {
          params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
        })
      : undefined,
    type: ASSET_TYPES[path.extname(fullPath)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  };
}

/** The built page in `dir` (its index.html and assets/), or undefined when it was not built there. */
export function loadExplorerAssets(dir: string): ExplorerAssets | undefined {
  const indexPath = path.join(dir, 'index.html');
  if (!existsSync(indexPath)) return undefined;
  const assetsDir = path.join(dir, 'assets');
  const assets = new Map<string, ExplorerFile>();
  if (existsSync(assetsDir)) {
    for (const entry of readdirSync(assetsDir, { withFileTypes: true })) {
      if (entry.isFile()) assets.set(entry.name, file(path.join(assetsDir, entry.name)));
    }
  }
  return { index: file(indexPath), assets };
}
