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
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
}

export function createLogger(config: LoggerConfig): Logger {
  const options: LoggerOptions = { ...baseOptions(config), redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  if (config.destination) return pino(options, config.destination);
  return pino(options, pino.destination({ dest: 1, sync: config.sync ?? false, minLength: config.sync ? 0 : 4096 }));
}

/**
 * A twin of `logger` for access-log lines: same level, name and output stream (one buffer, so lines never
 * interleave), but no redaction pass, which costs more than the rest of a line. Only for records whose every field
 * the caller builds from safe values (the request tracker: method, masked URL, status, timings, request id).
 */
export function accessLoggerFor(logger: Logger): Logger {
  const stream = (logger as unknown as Record<symbol, NodeJS.WritableStream>)[pino.symbols.streamSym];
  const name = (logger.bindings() as { service?: string }).service ?? 'service';
  return pino(baseOptions({ name, level: logger.level }), stream);
}

const SENSITIVE_QUERY = /([?&](?:api[_-]?key|apikey|key|token|access[_-]?token|signature|secret|password)=)[^&]*/gi;

/** A URL safe to log: values of query parameters that commonly carry secrets are masked. */
export function loggableUrl(url: string): string {
  return url.replace(SENSITIVE_QUERY, '$1[redacted]');
}
