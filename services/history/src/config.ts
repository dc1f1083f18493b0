import { z } from 'zod';
import { authEnvShape } from '@depthgate/auth';
import { envBool, envInt, envLogLevel, envString, parseEnv } from '@depthgate/service-kit';

/** ClickHouse database names are identifiers: they reach SQL through the identifier helper only. */
export const DATABASE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A ClickHouse URL: http(s), optional credentials (`http://user:pass@host:8123`), no path or query. */
const clickHouseUrl = (defaultValue: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const s = v === undefined || v.trim() === '' ? defaultValue : v.trim();
      let url: URL;
      try {
        url = new URL(s);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not a URL' });
        return z.NEVER;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        ctx.addIssue({ code: 'custom', message: 'must be an http:// or https:// URL' });
        return z.NEVER;
      }
      if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '') {
        ctx.addIssue({ code: 'custom', message: 'must not carry a path or query (set CLICKHOUSE_DATABASE instead)' });
        return z.NEVER;
      }
      return url.toString().replace(/\/$/, '');
    });

/**
 * Settings of the ClickHouse connection, shared by the service, the CLIs (migrate, seed) and the recorder.
 * README.md lists every one of them.
 */
export const clickHouseEnvShape = {
  /** ClickHouse HTTP interface; may carry credentials (`http://user:pass@127.0.0.1:8123`). */
  CLICKHOUSE_URL: clickHouseUrl('http://127.0.0.1:7123'),
  /** Database holding the history tables; created by the migrations when missing. */
  CLICKHOUSE_DATABASE: envString('depthgate').pipe(z.string().regex(DATABASE_NAME_PATTERN, 'not a database name')),
  /** Sockets the service keeps open to ClickHouse for data queries (control queries have their own few). */
  CLICKHOUSE_MAX_CONNECTIONS: envInt(64, { min: 1, max: 1024 }),
  /** How long start-up keeps retrying to reach ClickHouse and apply the migrations before giving up. */
  CLICKHOUSE_STARTUP_TIMEOUT_MS: envInt(60_000, { min: 0, max: 3_600_000 }),
};

/** Every history-service setting, parsed once from the environment. README.md lists them with their defaults. */
export const historyEnvSchema = z
  .object({
    ...authEnvShape,
    ...clickHouseEnvShape,
    HISTORY_PORT: envInt(7081, { min: 0, max: 65535 }),
    HISTORY_HOST: envString('127.0.0.1'),
    LOG_LEVEL: envLogLevel(),
    ACCESS_LOG: envBool(true),
    /** After SIGTERM: readiness turns red, then this long later new connections are refused. */
    SHUTDOWN_DELAY_MS: envInt(0, { min: 0, max: 120_000 }),
    /** After that, in-flight requests get this long to finish. */
    DRAIN_TIMEOUT_MS: envInt(15_000, { min: 0, max: 600_000 }),
    /**
     * Time budget of one ClickHouse query: sent as `max_execution_time` (whole seconds, rounded up) and enforced to
     * the millisecond by the service until the response has started.
     */
    QUERY_TIMEOUT_MS: envInt(10_000, { min: 1, max: 600_000 }),
    /** Rows returned when a request gives no `limit`. */
    DEFAULT_LIMIT: envInt(1000, { min: 1, max: 100_000_000 }),
    /** Largest `limit` accepted; a larger one is answered 400 `invalid_limit`. */
    MAX_LIMIT: envInt(1_000_000, { min: 1, max: 100_000_000 }),
    /** gzip level (1 fastest … 9 smallest) of compressed responses. */
    GZIP_LEVEL: envInt(3, { min: 1, max: 9 }),
    /**
     * Queries this process has ClickHouse work on at once, each until ClickHouse starts answering; more wait in
     * arrival order (history/query-gate.ts).
     */
    CLICKHOUSE_QUERY_CONCURRENCY: envInt(8, { min: 1, max: 1024 }),
    /** How long a ticker's catalogue entry (first/last ts, row count) is reused before it is read again; 0: never. */
    CATALOGUE_CACHE_TTL_MS: envInt(5000, { min: 0, max: 600_000 }),
  })
  .superRefine((c, ctx) => {
    if (c.DEFAULT_LIMIT > c.MAX_LIMIT) {
      ctx.addIssue({ code: 'custom', path: ['DEFAULT_LIMIT'], message: 'must not exceed MAX_LIMIT' });
    }
  });

export type HistoryConfig = z.output<typeof historyEnvSchema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): HistoryConfig {
  return parseEnv(historyEnvSchema, env);
}

/** The ClickHouse settings alone (CLIs that do not serve HTTP). */
export const clickHouseEnvSchema = z.object(clickHouseEnvShape);
export type ClickHouseConfig = z.output<typeof clickHouseEnvSchema>;

export function loadClickHouseConfig(env: Record<string, string | undefined> = process.env): ClickHouseConfig {
  return parseEnv(clickHouseEnvSchema, env);
}
