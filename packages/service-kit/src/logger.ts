import querystring from 'node:querystring';
import pino, { type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Log paths that may carry secrets. Caller keys, upstream credentials and signatures are replaced before a line is
 * written; tests assert that no key or secret ever reaches a log line.
 */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'apiKey',
  'api_key',
  'key',
  'secret',
  'passphrase',
  'password',
  'privateKey',
  'private_key',
  'signature',
  'token',
  '*.apiKey',
  '*.api_key',
  '*.key',
  '*.secret',
  '*.passphrase',
  '*.password',
  '*.privateKey',
  '*.private_key',
  '*.signature',
  '*.token',
];

export interface LoggerConfig {
  level: string;
  name: string;
  /** Write synchronously (tests, CLIs). Services write asynchronously in 4 KiB chunks. */
  sync?: boolean;
  destination?: NodeJS.WritableStream;
}

function baseOptions(config: Pick<LoggerConfig, 'name' | 'level'>): LoggerOptions {
  return {
    name: config.name,
    level: config.level,
    base: { service: config.name },
    timestamp: () => `,"time":"${isoNow()}"`,
    formatters: { level: (label) => ({ level: label }) },
  };
}

let isoMs = -1;
let isoText = '';

/**
 * The current time as a log line's `time` (UTC, RFC 3339 with milliseconds), made once per millisecond: a `Date` and
 * `toISOString` cost ~450 ns, and a busy process writes several lines in one millisecond.
 */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

export function createLogger(config: LoggerConfig): Logger {
  const options: LoggerOptions = { ...baseOptions(config), redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  if (config.destination) return pino(options, config.destination);
  return pino(options, pino.destination({ dest: 1, sync: config.sync ?? false, minLength: config.sync ? 0 : 4096 }));
}

export type AccessLogValue = string | number | boolean | undefined;

/**
 * Writes access-log lines in the logger's format to the logger's own stream (whole lines, so they never interleave
 * with the logger's own), without pino's per-record serialisation and redaction passes, which cost more than the
 * rest of a cached answer. Only for records whose every field the caller builds from safe values (the request
 * tracker: method, masked URL, status, timings, request id). Undefined when the logger is above `info`.
 *
 * Lines are collected and handed to the stream together, every ACCESS_LOG_FLUSH_MS or when ACCESS_LOG_BATCH bytes
 * are full (as nginx's `access_log … buffer=64k flush=1s`): pino's file stream (sonic-boom) measures the UTF-8 length
 * of its whole pending text on every write, and each of its writes to the file wakes a thread of libuv's pool; both
 * cost more than building the line (measured in docs/benchmarks.md). They are collected as bytes in one buffer, so
 * a line's string dies young instead of living until the next write (held strings cost collections). Lines still
 * pending when the process exits are written then.
 */
export function accessLogWriter(logger: Logger): ((fields: Record<string, AccessLogValue>) => void) | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  const stream = (logger as unknown as Record<symbol, NodeJS.WritableStream | undefined>)[pino.symbols.streamSym];
  if (!stream) return undefined;
  const bindings = JSON.stringify(logger.bindings()).slice(1, -1);
  const tail = `${bindings ? `,${bindings}` : ''}`;
  const pending = Buffer.allocUnsafe(ACCESS_LOG_BATCH);
  let used = 0;
  const flush = (atExit?: boolean): void => {
    unflushed.delete(flush);
    if (used === 0) return;
    const text = pending.toString('utf8', 0, used);
    used = 0;
    stream.write(text);
    // At exit pino has already flushed its file stream synchronously; this text needs the same.
    if (atExit === true) (stream as { flushSync?: () => void }).flushSync?.();
  };
  return (fields) => {
    let line = `{"level":"info","time":"${isoNow()}"${tail}`;
    for (const key in fields) {
      const value = fields[key];
      if (value !== undefined) line += `,"${key}":${typeof value === 'string' ? JSON.stringify(value) : String(value)}`;
    }
    line += ',"msg":"request"}\n';
    // At most 3 bytes a UTF-16 unit: a line that might not fit goes after what is held.
    if (used + 3 * line.length > ACCESS_LOG_BATCH) flush();
    if (3 * line.length > ACCESS_LOG_BATCH) {
      stream.write(line);
      return;
    }
    used += pending.write(line, used, 'utf8');
    if (!unflushed.has(flush)) {
      if (!exitHooked) hookExit();
      unflushed.add(flush);
      setTimeout(flush, ACCESS_LOG_FLUSH_MS, false).unref();
    }
  };
}

/** @internal Access-log lines are handed to the stream when this many bytes are full… */
export const ACCESS_LOG_BATCH = 64 * 1024;
/** @internal …or this long after the first of them, whichever comes first. */
export const ACCESS_LOG_FLUSH_MS = 100;
/** Access-log writers with lines not yet written: written when the process exits first. */
const unflushed = new Set<(atExit?: boolean) => void>();
let exitHooked = false;

function hookExit(): void {
  exitHooked = true;
  process.once('exit', () => {
    for (const flush of [...unflushed]) flush(true);
  });
}

/** Query parameter names (percent-decoded, any case) whose values commonly carry secrets. */
const SECRET_NAMES = '(?:x[-_]?)?api[-_]?key|key|token|access[-_]?token|signature|secret|password';
const SECRET_NAME = new RegExp(`^(?:${SECRET_NAMES})$`, 'i');
/** The same names' values in a URL with nothing encoded, in one pass. */
const SECRET_PARAMS = new RegExp(`([?&](?:${SECRET_NAMES})=)[^&]*`, 'gi');
/** What makes a URL need the parameter-by-parameter reading: an escape, a `+`, or key-shaped text. */
const NEEDS_READING = /[%+]|dg_/;

/**
 * A depthgate API key wherever it stands: `dg_` and 39 letters and digits (packages/auth api-key.ts). Keys are
 * recognisable by design, so one is masked whatever the parameter (or path) that carries it.
 */
const KEY_SHAPED = /dg_[0-9A-Za-z]{39}/;
const KEYS_SHAPED = new RegExp(KEY_SHAPED.source, 'g');
const holdsKey = (s: string): boolean => s.length >= 42 && KEY_SHAPED.test(s);

/** A query component as URLSearchParams reads it (`+` is a space; a malformed escape stays as it is). */
function decodeComponent(s: string): string {
  return s.includes('%') || s.includes('+') ? querystring.unescape(s.replace(/\+/g, ' ')) : s;
}

/** A path segment with a key-shaped text in it masked, as written or once its escapes are decoded (whole, then). */
function maskedSegment(segment: string): string {
  if (segment.includes('dg_')) return segment.replace(KEYS_SHAPED, '[redacted]');
  return segment.includes('%') && holdsKey(decodeComponent(segment)) ? '[redacted]' : segment;
}

/** A key or the start of one (messages cut what they quote: 40 characters of a parameter's value hold 37 of a key's). */
const KEY_PARTS = /dg_[0-9A-Za-z]{16,}/g;

/**
 * `text` with every key-shaped part masked, as written or, when it has escapes, once percent-decoded: what an error
 * answer quotes of its request (a ticker, a parameter's value, a path) never repeats a key sent in the wrong place,
 * as a log line never does (errors.ts `errorBody`).
 */
export function withoutApiKeys(text: string): string {
  const masked = text.includes('dg_') ? text.replace(KEY_PARTS, '[redacted]') : text;
  if (!masked.includes('%')) return masked;
  const decoded = decodeComponent(masked);
  return decoded.includes('dg_') ? decoded.replace(KEY_PARTS, '[redacted]') : masked;
}

/**
 * A URL safe to log. Each query parameter is read as the services read it (percent-decoded): the value of one whose
 * name commonly carries secrets (`api_key`, `x-api-key`, `token`, `signature`, …, however encoded) is masked, and
 * so is any name or value that holds something shaped like an API key. Key-shaped text in the path is masked too,
 * percent-encoded or not.
 */
export function loggableUrl(url: string): string {
  // Most URLs have no escape and no key: their raw names are their decoded ones, and one replace masks the same
  // values as the reading below, at a third of its cost (this runs for every access-log line).
  if (!NEEDS_READING.test(url)) return url.includes('=') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url;
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  const path =
    rawPath.includes('dg_') || rawPath.includes('%') ? rawPath.split('/').map(maskedSegment).join('/') : rawPath;
  if (q === -1) return path;
  const params = url.slice(q + 1).split('&');
  for (let i = 0; i < params.length; i++) {
    const param = params[i] as string;
    const eq = param.indexOf('=');
    const name = eq === -1 ? param : param.slice(0, eq);
    const decodedName = decodeComponent(name);
    if (holdsKey(decodedName)) {
      params[i] = '[redacted]';
    } else if (eq !== -1 && (SECRET_NAME.test(decodedName) || holdsKey(decodeComponent(param.slice(eq + 1))))) {
      params[i] = `${name}=[redacted]`;
    }
  }
  return `${path}?${params.join('&')}`;
}
