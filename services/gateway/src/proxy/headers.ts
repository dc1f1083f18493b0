import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/**
 * Header hygiene, both ways, by allowlist: only these caller headers reach an upstream (never `X-API-Key`,
 * `Authorization`, cookies, hop-by-hop or forwarding headers, nor one of these that `Connection` names), and only these upstream headers reach the caller
 * (never `Set-Cookie`, `Server`, upstream rate-limit, tracing or CDN headers). `Accept-Encoding` passes, so a
 * compressed upstream body streams through untouched with its `Content-Encoding`.
 */
const FORWARDED_REQUEST_HEADERS = [
  'accept',
  'accept-encoding',
  'accept-language',
  'if-none-match',
  'if-modified-since',
] as const;

const FORWARDED_RESPONSE_HEADERS = new Set([
  'content-type',
  'content-encoding',
  'content-length',
  'content-language',
  'content-range',
  'accept-ranges',
  'cache-control',
  'expires',
  'etag',
  'last-modified',
  'vary',
  'retry-after',
]);

const USER_AGENT = 'depthgate-gateway/1.0';

/**
 * Header names the caller lists in `Connection` (RFC 9110 §7.6.1): hop-by-hop by declaration, so never forwarded,
 * even when otherwise allowed. `undefined` for the usual `keep-alive` / `close` (no per-request work then).
 */
const PLAIN_CONNECTION = /^[ \t]*(?:keep-alive|close)[ \t]*$/i;

export function connectionNamed(connection: string | undefined): Set<string> | undefined {
  if (connection === undefined || PLAIN_CONNECTION.test(connection)) return undefined;
  const names = new Set<string>();
  for (const token of connection.split(',')) {
    const name = token.trim().toLowerCase();
    if (name !== '' && name !== 'keep-alive' && name !== 'close') names.add(name);
  }
  return names.size === 0 ? undefined : names;
}

export function upstreamRequestHeaders(incoming: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = { 'user-agent': USER_AGENT };
  const hopByHop = connectionNamed(incoming.connection);
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = incoming[name];
    if (typeof value === 'string' && value !== '' && !hopByHop?.has(name)) out[name] = value;
  }
  return out;
}

export function callerResponseHeaders(upstream: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value !== undefined && FORWARDED_RESPONSE_HEADERS.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  }
  return out;
}

/** A conditional request cannot share an upstream answer with requests that did not ask the same question. */
export function isConditional(incoming: IncomingHttpHeaders): boolean {
  return incoming['if-none-match'] !== undefined || incoming['if-modified-since'] !== undefined;
}

/** The request headers that shape an upstream answer: part of the coalescing and cache key. */
export function varyKey(incoming: IncomingHttpHeaders): string {
  return `${incoming.accept ?? ''}|${incoming['accept-encoding'] ?? ''}|${incoming['accept-language'] ?? ''}`;
}
