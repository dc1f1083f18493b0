/**
 * Response compression: gzip only (spec rule 6), through the `compression` middleware at a configurable level.
 *
 * `compression` would prefer Brotli when a client offers it, and Brotli is several times slower than gzip level 3
 * on streamed JSON. So the request's Accept-Encoding is first reduced to what we serve: `gzip` (also offered by
 * `*`) and `identity`, keeping their q-values. A client that only accepts other codings gets identity.
 *
 * What is compressed: what `compression` takes as compressible (JSON, CSV and other text types), and NDJSON, which
 * its media-type database does not list.
 *
 * A response sent in one piece (`res.end(body)` with nothing written before: every JSON page, book, coverage and
 * error answer) of up to ONE_SHOT_MAX_BYTES, at levels up to ONE_SHOT_MAX_LEVEL (the default is 3), is compressed in
 * one synchronous zlib call here, and `compression`, seeing it already encoded, passes it through. Its zlib stream
 * costs, beside the compression itself, about 0.2 ms a response of thread-pool hand-offs and stream events: for a
 * 1,000-row page (~90 KB) 0.67 ms against 0.46 ms for one call, and one call took the service's CPU per gzip request
 * from 1.91–2.01 to 1.69–1.70 ms in the latency benchmark (docs/benchmarks.md). Larger bodies, and everything written in pieces (bulk streams, long pages), go
 * through `compression`'s stream, off the event loop.
 */
import { gzipSync } from 'node:zlib';
import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';
import Negotiator from 'negotiator';

/**
 * Output zlib makes per round trip to its thread (Node's default is 16 KiB). Each round trip needs this thread to
 * take the output and hand over the next piece: at 16 KiB a bulk stream's rendering stalled the compression every
 * few hundred µs, at 64 KiB one rendered slice (4,096 rows) is compressed in one go while the next is rendered
 * (docs/benchmarks.md: gzip rows/s of bulk streams).
 */
const GZIP_CHUNK_BYTES = 64 * 1024;

/**
 * The request's Accept-Encoding reduced to what we serve: `gzip` (`x-gzip` is its alias) and `identity` with their
 * parameters; `*` stands for gzip only when gzip is not named itself (RFC 9110 §12.5.3: `*` matches the codings not
 * listed, so `gzip;q=0, *` refuses gzip). Nothing left: identity.
 */
export function gzipOnlyAcceptEncoding(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const parts = header.split(',').map((part) => {
    const [rawName, ...params] = part.trim().split(';');
    const name = (rawName ?? '').trim().toLowerCase();
    return { name: name === 'x-gzip' ? 'gzip' : name, params };
  });
  const gzipNamed = parts.some((p) => p.name === 'gzip');
  const kept: string[] = [];
  for (const { name, params } of parts) {
    if (name === 'gzip' || name === 'identity') kept.push([name, ...params].join(';'));
    else if (name === '*' && !gzipNamed) kept.push(['gzip', ...params].join(';'));
  }
  return kept.length > 0 ? kept.join(', ') : 'identity';
}

/** Bodies below this are sent as they are (`compression`'s threshold too). */
const THRESHOLD_BYTES = 1024;
/**
 * Largest body compressed in one call on the event loop, at levels up to ONE_SHOT_MAX_LEVEL (1.0–1.4 ms for 256 KiB
 * of JSON here); larger ones take the stream. A 1,000-row page is about 100 KB.
 */
export const ONE_SHOT_MAX_BYTES = 256 * 1024;
/**
 * Above this level one call would hold the event loop too long (256 KiB of JSON: 1.9 ms at 5, 3.5 ms at 6, 16–19 ms
 * at 8–9): every answer then takes the stream, off the event loop.
 */
const ONE_SHOT_MAX_LEVEL = 4;

/** The media types we compress (the same test for both paths). */
function compressibleType(req: Request, res: Response): boolean {
  return compression.filter(req, res) || String(res.getHeader('Content-Type') ?? '').startsWith('application/x-ndjson');
}

/**
 * Whether a body sent in one piece is gzipped here: the conditions `compression` sets for its stream (media type,
 * `Cache-Control: no-transform`, size, no encoding set yet, not HEAD, and Accept-Encoding negotiated by the library
 * it uses, the same way, on the header as gzipOnlyAcceptEncoding left it), and not above ONE_SHOT_MAX_BYTES.
 */
function oneShot(req: Request, res: Response, bytes: number): boolean {
  if (res.headersSent || bytes < THRESHOLD_BYTES || bytes > ONE_SHOT_MAX_BYTES) return false;
  if (res.statusCode === 204 || res.statusCode === 304 || req.method === 'HEAD') return false;
  if (!compressibleType(req, res)) return false;
  if (/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(String(res.getHeader('Cache-Control') ?? ''))) return false;
  if ((res.getHeader('Content-Encoding') ?? 'identity') !== 'identity') return false;
  // Negotiator 0.6.4 takes the preferred encodings second (its types do not say so), as `compression` passes them.
  const negotiate = new Negotiator(req) as unknown as { encoding(available: string[], preferred: string[]): string };
  return negotiate.encoding(['gzip', 'identity'], ['gzip']) === 'gzip';
}

type End = (this: Response, chunk?: unknown, encoding?: unknown, cb?: unknown) => Response;
type Write = (this: Response, ...args: unknown[]) => boolean;

export function gzipResponses(level: number): RequestHandler {
  const compress = compression({
    level,
    chunkSize: GZIP_CHUNK_BYTES,
    threshold: THRESHOLD_BYTES,
    filter: compressibleType,
  });
  return (req, res, next) => {
    const normalized = gzipOnlyAcceptEncoding(req.headers['accept-encoding']);
    if (normalized === undefined) delete req.headers['accept-encoding'];
    else req.headers['accept-encoding'] = normalized;
    if (level > ONE_SHOT_MAX_LEVEL) {
      compress(req, res, next);
      return;
    }
    compress(req, res, () => {
      // Over compression's own wrappers: a body in one piece may be gzipped here and handed on, already encoded.
      const end = res.end as unknown as End;
      const write = res.write as unknown as Write;
      let written = false;
      res.write = function (this: Response, ...args: unknown[]) {
        written = true;
        return write.apply(this, args);
      } as typeof res.write;
      res.end = function (this: Response, chunk?: unknown, encoding?: unknown, cb?: unknown) {
        if (!written && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) {
          const charset = typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8';
          const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk, charset) : chunk.length;
          if (oneShot(req, this, bytes)) {
            const gz = gzipSync(typeof chunk === 'string' ? Buffer.from(chunk, charset) : chunk, { level });
            this.setHeader('Content-Encoding', 'gzip');
            this.vary('Accept-Encoding');
            this.setHeader('Content-Length', gz.length);
            return end.call(this, gz, typeof encoding === 'function' ? encoding : cb);
          }
        }
        return end.call(this, chunk, encoding, cb);
      } as typeof res.end;
      next();
    });
  };
}
