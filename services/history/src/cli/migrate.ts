#!/usr/bin/env node
/**
 * Applies the ClickHouse migrations and exits: 0 when the schema is up to date, 1 with a clear message otherwise.
 * Reads CLICKHOUSE_URL, CLICKHOUSE_DATABASE, CLICKHOUSE_CLUSTER and CLICKHOUSE_STARTUP_TIMEOUT_MS
 * (docs/configuration.md).
 *
 *   CLICKHOUSE_URL=http://127.0.0.1:7123 node services/history/dist/cli/migrate.js
 */
import { HistoryStore, loadClickHouseConfig, migrateWhenReachable, storeOptions } from '@depthgate/history-store';
import { ConfigError } from '@depthgate/service-kit';

async function main(): Promise<number> {
  let config;
  try {
    config = loadClickHouseConfig(process.env);
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : String(err));
    return 1;
  }
  const store = new HistoryStore(storeOptions(config));
  try {
    const result = await migrateWhenReachable(store, {
      timeoutMs: Math.min(config.CLICKHOUSE_STARTUP_TIMEOUT_MS, 30_000),
    });
    const where = `database ${config.CLICKHOUSE_DATABASE}${config.CLICKHOUSE_CLUSTER ? ` on cluster ${config.CLICKHOUSE_CLUSTER}` : ''}`;
    console.error(
      result.applied.length > 0
        ? `migrations applied: ${result.applied.join(', ')} (${where} at version ${result.version})`
        : `schema up to date (${where} at version ${result.version})`,
    );
    return 0;
  } catch (err) {
    console.error(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    await store.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
