import { setFlagsFromString } from 'node:v8';
import { createAuth } from '@depthgate/auth';
import { EXCHANGES } from '@depthgate/auth';
import {
  HistoryStore,
  migrateWhenReachable,
  storeOptions,
  verifyExchanges,
  verifyReadColumns,
} from '@depthgate/history-store';
import { Lifecycle, createLogger, createRegistry, runMain, serve } from '@depthgate/service-kit';
import { createApp } from './app';
import { loadConfig } from './config';
import { explorerBuildDir, loadExplorerAssets } from './explorer/assets';

// V8 starts incremental marking from a task once the old generation's free space below its limit is no more than the
// young generation's capacity. This process's live heap is small (~20 MB) and its limit after a mark-compact only about
// that capacity above it (12 MB with 4 MiB semi-spaces), so marking began right after every mark-compact: under
// back-to-back bulk streams a full collection every two or three requests (123–132 in the bulk benchmark). Started once
// a quarter of the free space is used instead: 48, and the bulk streams faster in 22 of 24 figures (deltas NDJSON
// 0.93–0.98× → 0.99–1.12× of ClickHouse's rows/s), the slow-reader RSS within its noise (docs/benchmarks.md,
// "Incremental marking"). The hard trigger keeps V8's immediate start near the limit, which setting only the soft one
// turns off. Set here, as the gateway sets its own flag, so that every way of starting the process has it.
setFlagsFromString('--incremental-marking-soft-trigger=25 --incremental-marking-hard-trigger=90');

runMain(async () => {
  const config = loadConfig();
  const logger = createLogger({ name: 'history', level: config.LOG_LEVEL });
  const registry = createRegistry('history');
  const lifecycle = new Lifecycle();
  const store = new HistoryStore({
    ...storeOptions(config),
    // A socket idle this long is dead: the server's max_execution_time ends every query well before.
    requestTimeoutMs: config.QUERY_TIMEOUT_MS + 30_000,
    logger,
  });
  lifecycle.onShutdown('clickhouse', () => store.close());
  const migrated = await migrateWhenReachable(store, { timeoutMs: config.CLICKHOUSE_STARTUP_TIMEOUT_MS, logger });
  await verifyReadColumns(store);
  await verifyExchanges(store, EXCHANGES);
  logger.info(
    { database: config.CLICKHOUSE_DATABASE, cluster: config.CLICKHOUSE_CLUSTER, ...migrated },
    'ClickHouse schema up to date',
  );
  if (config.cursorSecrets.secret === undefined) {
    logger.warn(
      'HISTORY_CURSOR_SECRET is not set: page cursors are signed with a random secret of this process and fail on any other replica or after a restart',
    );
  }
  // The Explorer page, as @depthgate/explorer's build left it.
  const explorer = config.EXPLORER_ENABLED ? loadExplorerAssets(explorerBuildDir()) : undefined;
  if (config.EXPLORER_ENABLED && !explorer) {
    logger.warn({ dir: explorerBuildDir() }, 'the Explorer page was not built: /explorer answers 503');
  }
  const auth = createAuth(config, { logger, registry, name: 'history' });
  lifecycle.onShutdown('redis', () => auth.close());
  await serve(createApp({ config, logger, auth, store, registry, lifecycle, explorer }), {
    port: config.HISTORY_PORT,
    host: config.HISTORY_HOST,
    logger,
    lifecycle,
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
    drainTimeoutMs: config.DRAIN_TIMEOUT_MS,
  });
});
