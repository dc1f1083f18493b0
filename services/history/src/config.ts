import { z } from 'zod';
import { authEnvShape } from '@depthgate/auth';
import { clickHouseEnvShape } from '@depthgate/history-store';
import { envBool, envInt, envLogLevel, envString, parseEnv } from '@depthgate/service-kit';

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
     * arrival order (the query gate of @depthgate/history-store).
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
