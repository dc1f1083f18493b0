/**
 * Response compression: gzip only (spec rule 6), through the `compression` middleware at a configurable level.
 *
 * `compression` would prefer Brotli when a client offers it, and Brotli is several times slower than gzip level 3
 * on streamed JSON. So the request's Accept-Encoding is first reduced to what we serve: `gzip` (also offered by
 * `*`) and `identity`, keeping their q-values. A client that only accepts other codings gets identity.
 *
 * What is compressed: what `compression` takes as compressible (JSON, CSV and other text types), and NDJSON, which
 * its media-type database does not list.
 */
import compression from 'compression';
import type { RequestHandler } from 'express';

/**
 * Output zlib makes per round trip to its thread (Node's default is 16 KiB). Each round trip needs this thread to
 * take the output and hand over the next piece: at 16 KiB a bulk stream's rendering stalled the compression every
 * few hundred µs, at 64 KiB one rendered slice (4,096 rows) is compressed in one go while the next is rendered
 * (docs/benchmarks.md: gzip rows/s of bulk streams).
 */
const GZIP_CHUNK_BYTES = 64 * 1024;

export function gzipOnlyAcceptEncoding(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const kept: string[] = [];
  for (const part of header.split(',')) {
    const [rawName, ...params] = part.trim().split(';');
    const name = (rawName ?? '').trim().toLowerCase();
    if (name === 'gzip' || name === 'x-gzip' || name === 'identity')
      kept.push([name === 'x-gzip' ? 'gzip' : name, ...params].join(';'));
    else if (name === '*') kept.push(['gzip', ...params].join(';'));
  }
  return kept.length > 0 ? kept.join(', ') : 'identity';
}

export function gzipResponses(level: number): RequestHandler {
  const compress = compression({
    level,
    chunkSize: GZIP_CHUNK_BYTES,
    threshold: 1024,
    filter: (req, res) =>
      compression.filter(req, res) || String(res.getHeader('Content-Type') ?? '').startsWith('application/x-ndjson'),
  });
  return (req, res, next) => {
    const normalized = gzipOnlyAcceptEncoding(req.headers['accept-encoding']);
    if (normalized === undefined) delete req.headers['accept-encoding'];
    else req.headers['accept-encoding'] = normalized;
    compress(req, res, next);
  };
}
