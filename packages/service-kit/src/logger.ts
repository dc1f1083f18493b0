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

export type AccessLogValue = string | number | boolean | undefined;

/**
 * Writes access-log lines in the logger's format to the logger's own stream (one buffer, so lines never
 * interleave), without pino's per-record serialisation and redaction passes, which cost more than the rest of a
 * cached answer. Only for records whose every field the caller builds from safe values (the request tracker:
 * method, masked URL, status, timings, request id). Undefined when the logger is above `info`.
 */
export function accessLogWriter(logger: Logger): ((fields: Record<string, AccessLogValue>) => void) | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  const stream = (logger as unknown as Record<symbol, NodeJS.WritableStream | undefined>)[pino.symbols.streamSym];
  if (!stream) return undefined;
  const bindings = JSON.stringify(logger.bindings()).slice(1, -1);
  const tail = `${bindings ? `,${bindings}` : ''}`;
  return (fields) => {
    let line = `{"level":"info","time":"${new Date().toISOString()}"${tail}`;
    for (const key in fields) {
      const value = fields[key];
      if (value !== undefined) line += `,"${key}":${typeof value === 'string' ? JSON.stringify(value) : String(value)}`;
    }
    stream.write(`${line},"msg":"request"}\n`);
  };
}

const SENSITIVE_QUERY = /([?&](?:api[_-]?key|apikey|key|token|access[_-]?token|signature|secret|password)=)[^&]*/gi;

/** A URL safe to log: values of query parameters that commonly carry secrets are masked. */
export function loggableUrl(url: string): string {
  return url.replace(SENSITIVE_QUERY, '$1[redacted]');
}
