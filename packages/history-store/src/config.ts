/**
 * The ClickHouse settings every deployable that uses the store reads (the history API, its CLIs, the recorder):
 * one shape, spread into each deployable's own schema. docs/configuration.md lists every one of them.
 */
import { z } from 'zod';
import { envInt, envOptionalString, envString, parseEnv } from '@depthgate/service-kit';
import type { HistoryStoreOptions } from './store';
import { CLUSTER_PATTERN, IDENTIFIER_PATTERN } from './literals';

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

export const clickHouseEnvShape = {
  /** ClickHouse HTTP interface; may carry credentials (`http://user:pass@127.0.0.1:8123`). */
  CLICKHOUSE_URL: clickHouseUrl('http://127.0.0.1:7123'),
  /** Database holding the history tables; created by the migrations when missing. An identifier: it reaches SQL
   * through the identifier literal only. */
  CLICKHOUSE_DATABASE: envString('depthgate').pipe(z.string().regex(IDENTIFIER_PATTERN, 'not a database name')),
  /**
   * Cluster mode: the name of the ClickHouse cluster (in the servers' `remote_servers`) the history tables are
   * spread over — Replicated tables per shard and Distributed tables over them (docs/history-internals.md, "Cluster mode").
   * Unset: one server, plain MergeTree tables. The history API, its CLIs and the recorder must agree.
   */
  CLICKHOUSE_CLUSTER: envOptionalString().pipe(z.string().regex(CLUSTER_PATTERN, 'not a cluster name').optional()),
  /** Sockets the process keeps open to ClickHouse for data queries (control queries have their own few). */
  CLICKHOUSE_MAX_CONNECTIONS: envInt(64, { min: 1, max: 1024 }),
  /** How long start-up keeps retrying to reach ClickHouse (and to apply or find the schema) before giving up. */
  CLICKHOUSE_STARTUP_TIMEOUT_MS: envInt(60_000, { min: 0, max: 3_600_000 }),
};

/** The ClickHouse settings alone (CLIs that do not serve HTTP). */
export const clickHouseEnvSchema = z.object(clickHouseEnvShape);
export type ClickHouseConfig = z.output<typeof clickHouseEnvSchema>;

/** The store of a deployable's configuration (URL, database, cluster, sockets); the caller adds its own options. */
export function storeOptions(config: ClickHouseConfig): HistoryStoreOptions {
  return {
    url: config.CLICKHOUSE_URL,
    database: config.CLICKHOUSE_DATABASE,
    cluster: config.CLICKHOUSE_CLUSTER,
    maxConnections: config.CLICKHOUSE_MAX_CONNECTIONS,
  };
}

export function loadClickHouseConfig(env: Record<string, string | undefined> = process.env): ClickHouseConfig {
  return parseEnv(clickHouseEnvSchema, env);
}
