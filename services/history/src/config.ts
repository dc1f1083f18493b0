import { z } from 'zod';
import { authEnvShape } from '@depthgate/auth';
import { clickHouseEnvShape } from '@depthgate/history-store';
import {
  ConfigError,
  envBool,
  envInt,
  envLogLevel,
  envOptionalString,
  envString,
  parseEnv,
  secret,
} from '@depthgate/service-kit';

/** Every history-service setting, parsed once from the environment. docs/configuration.md lists them with their defaults. */
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
    /**
     * A response whose caller takes nothing of what waits to be sent (the socket's and gzip's buffers) for this long is
     * cut: a reader that stopped would otherwise hold its stream's windows (up to four, tens of MB) and its request for
     * good (docs/history.md, "Bulk streams").
     */
    WRITE_TIMEOUT_MS: envInt(60_000, { min: 100, max: 3_600_000 }),
    /**
     * Bulk streams (NDJSON, CSV, Parquet) a key may have running at once, every replica together: each holds up to four
     * windows (tens of MB) while its caller reads. One more → 429 too_many_connections.
     */
    STREAMS_MAX_CONCURRENT_PER_KEY: envInt(8, { min: 1, max: 1_000_000 }),
    /** The same for callers without a key, per client address. */
    STREAMS_MAX_CONCURRENT_ANONYMOUS: envInt(2, { min: 1, max: 1_000_000 }),
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
    /**
     * Signs page cursors (inline, or `_FILE`: a mounted file). Every replica must have the same one, or a cursor one
     * replica issued fails on another; unset: a random secret per process (cursors then work on that process only).
     */
    HISTORY_CURSOR_SECRET: envOptionalString(),
    HISTORY_CURSOR_SECRET_FILE: envOptionalString(),
    /** The secret before the current one, still accepted (not used to sign) while a new secret rolls out. */
    HISTORY_CURSOR_SECRET_PREVIOUS: envOptionalString(),
    HISTORY_CURSOR_SECRET_PREVIOUS_FILE: envOptionalString(),
    /**
     * Most rows per ClickHouse query of a bulk stream (NDJSON, CSV); each is read whole, two at once, three at most
     * ahead of the caller (docs/history.md, "Bulk streams").
     */
    STREAM_WINDOW_ROWS: envInt(262_144, { min: 1000, max: 1_000_000 }),
    /** Serve the Explorer page at /explorer (docs/explorer.md); false: /explorer is 404 like any unknown path. */
    EXPLORER_ENABLED: envBool(true),
  })
  .superRefine((c, ctx) => {
    if (c.DEFAULT_LIMIT > c.MAX_LIMIT) {
      ctx.addIssue({ code: 'custom', path: ['DEFAULT_LIMIT'], message: 'must not exceed MAX_LIMIT' });
    }
  });

export interface HistoryConfig extends z.output<typeof historyEnvSchema> {
  /** The cursor secrets, resolved (inline or from their files). */
  cursorSecrets: { secret?: string; previous?: string };
}

/** Shortest cursor secret accepted (characters): 32 random bytes in hex or base64 are longer. */
const MIN_SECRET_LENGTH = 32;

export function loadConfig(env: Record<string, string | undefined> = process.env): HistoryConfig {
  const base = parseEnv(historyEnvSchema, env);
  const issues: string[] = [];
  const current = secret(base, 'HISTORY_CURSOR_SECRET', issues);
  const previous = secret(base, 'HISTORY_CURSOR_SECRET_PREVIOUS', issues);
  for (const [name, value] of [
    ['HISTORY_CURSOR_SECRET', current],
    ['HISTORY_CURSOR_SECRET_PREVIOUS', previous],
  ] as const) {
    if (value !== undefined && value.length < MIN_SECRET_LENGTH) {
      issues.push(`${name}: at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`);
    }
  }
  if (previous !== undefined && current === undefined) {
    issues.push('HISTORY_CURSOR_SECRET_PREVIOUS: only with HISTORY_CURSOR_SECRET (the secret that signs)');
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { ...base, cursorSecrets: { secret: current, previous } };
}
