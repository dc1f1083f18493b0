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

export function createLogger(config: LoggerConfig): Logger {
  const options: LoggerOptions = {
    name: config.name,
    level: config.level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: config.name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (config.destination) return pino(options, config.destination);
  return pino(options, pino.destination({ dest: 1, sync: config.sync ?? false, minLength: config.sync ? 0 : 4096 }));
}

const SENSITIVE_QUERY = /([?&](?:api[_-]?key|apikey|key|token|access[_-]?token|signature|secret|password)=)[^&]*/gi;

/** A URL safe to log: values of query parameters that commonly carry secrets are masked. */
export function loggableUrl(url: string): string {
  return url.replace(SENSITIVE_QUERY, '$1[redacted]');
}
