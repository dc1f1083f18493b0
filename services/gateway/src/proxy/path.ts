/**
 * The gateway path `/api/v1/{platform}/{resource}` (or, for a request routed by its Host, the whole path as the
 * resource) taken apart once, from the raw request target, before anything decodes it. The resource becomes a list
 * of decoded segments and one canonical re-encoding of them; nothing else ever builds an upstream path, so a request
 * cannot leave its platform's base: `.` and `..` segments (also with `;` path parameters, `..;`, which servers that
 * strip them would treat as `..`), encoded slashes or backslashes (`%2f`, `%5c`), double-encoded dots and slashes
 * (`%252e`), empty segments (`//host`), control characters, malformed escapes and absolute-form targets
 * (`GET http://host/...`) are all refused with 400 before any upstream is chosen. No resource at all (`/api/v1/x/`,
 * or `/` on a platform's host) is the platform's root, `/`.
 */

const API_PREFIX = '/api/v1/';
const MAX_TARGET_LENGTH = 4096;
const MAX_SEGMENT_LENGTH = 512;

/** A resource path and query, as checked and canonically re-encoded. */
export interface ParsedResource {
  /** Decoded resource segments; a trailing slash is kept as a final empty segment; the root is none. */
  segments: string[];
  /** Canonical encoding of `segments`, always starting with `/` (`/` for the root). */
  path: string;
  /** The raw query string without `?` (passed upstream byte for byte). */
  query: string;
}

interface GatewayTarget extends ParsedResource {
  /** The platform segment as given (lower-cased); resolved against keys and aliases by the caller. */
  platform: string;
}

export type Parsed<T> = { ok: true; target: T } | { ok: false; reason: string };
export type ParseResult = Parsed<GatewayTarget>;

// RFC 3986 pchar minus what must stay encoded; anything else is percent-encoded.
const SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;

export function encodeSegment(segment: string): string {
  let out = '';
  for (const ch of segment) {
    if (SAFE.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const DOUBLE_ENCODED = /%(2e|2f|5c)/i;

/** `.` or `..`, also once `;` path parameters are stripped (`..;x`: Tomcat, Spring and Jetty read it as `..`). */
function isDotSegment(value: string): boolean {
  const semi = value.indexOf(';');
  const bare = semi === -1 ? value : value.slice(0, semi);
  return bare === '.' || bare === '..';
}

function checkSegment(raw: string, last: boolean): { ok: true; value: string } | { ok: false; reason: string } {
  if (raw === '') return last ? { ok: true, value: '' } : { ok: false, reason: 'empty path segment' };
  if (raw.length > MAX_SEGMENT_LENGTH) return { ok: false, reason: 'path segment too long' };
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return { ok: false, reason: 'malformed percent-encoding' };
  }
  if (isDotSegment(value)) return { ok: false, reason: 'dot segments are not allowed' };
  if (value.includes('/') || value.includes('\\'))
    return { ok: false, reason: 'encoded slash or backslash in a segment' };
  if (CONTROL.test(value)) return { ok: false, reason: 'control character in the path' };
  if (DOUBLE_ENCODED.test(value)) return { ok: false, reason: 'double-encoded dot, slash or backslash' };
  return { ok: true, value };
}

/** A target in origin form, not too long, without backslashes in its path: its raw path and query. */
function splitTarget(rawTarget: string): Parsed<{ rawPath: string; query: string }> {
  if (!rawTarget.startsWith('/')) return { ok: false, reason: 'only origin-form request targets are accepted' };
  if (rawTarget.length > MAX_TARGET_LENGTH) return { ok: false, reason: 'request target too long' };
  const q = rawTarget.indexOf('?');
  const rawPath = q === -1 ? rawTarget : rawTarget.slice(0, q);
  if (rawPath.includes('\\')) return { ok: false, reason: 'backslash in the path' };
  return { ok: true, target: { rawPath, query: q === -1 ? '' : rawTarget.slice(q + 1) } };
}

/** The resource after the platform: its raw path (no leading `/`; '' for the root) and query. */
function parseRest(resource: string, query: string): Parsed<ParsedResource> {
  const segments: string[] = [];
  if (resource !== '') {
    const rawSegments = resource.split('/');
    for (let i = 0; i < rawSegments.length; i++) {
      const checked = checkSegment(rawSegments[i] ?? '', i === rawSegments.length - 1 && i > 0);
      if (!checked.ok) return checked;
      segments.push(checked.value);
    }
  }
  return { ok: true, target: { segments, path: `/${segments.map(encodeSegment).join('/')}`, query } };
}

/** Parses a raw request target (`req.url`) of the form `/api/v1/{platform}/{resource}`. */
export function parseGatewayTarget(rawTarget: string): ParseResult {
  const split = splitTarget(rawTarget);
  if (!split.ok) return split;
  const { rawPath, query } = split.target;
  if (!rawPath.startsWith(API_PREFIX)) return { ok: false, reason: `paths start with ${API_PREFIX}` };
  const rest = rawPath.slice(API_PREFIX.length);
  const slash = rest.indexOf('/');
  const platformRaw = slash === -1 ? rest : rest.slice(0, slash);
  const platform = checkSegment(platformRaw, false);
  if (!platform.ok) return platform;
  const resource = parseRest(slash === -1 ? '' : rest.slice(slash + 1), query);
  if (!resource.ok) return resource;
  return { ok: true, target: { platform: platform.value.toLowerCase(), ...resource.target } };
}

/** Parses the raw target of a request routed by its Host: the whole path is the resource (`/` is the root). */
export function parseHostedTarget(rawTarget: string): Parsed<ParsedResource> {
  const split = splitTarget(rawTarget);
  return split.ok ? parseRest(split.target.rawPath.slice(1), split.target.query) : split;
}

/**
 * `parse` with the results of the most recent distinct targets kept (bots poll the same URLs), least recently used
 * first out. Results are frozen: they are shared between requests.
 */
export function memoizedTargetParser<T extends ParsedResource>(
  parse: (rawTarget: string) => Parsed<T>,
  capacity: number,
): (rawTarget: string) => Parsed<T> {
  const memo = new Map<string, Parsed<T>>();
  return (rawTarget) => {
    let result = memo.get(rawTarget);
    if (result) {
      memo.delete(rawTarget);
    } else {
      result = parse(rawTarget);
      if (result.ok) Object.freeze(result.target.segments);
      Object.freeze(result);
      if (memo.size >= capacity) memo.delete(memo.keys().next().value as string);
    }
    memo.set(rawTarget, result);
    return result;
  };
}
