import { createAuth, EXCHANGES } from '@depthgate/auth';
import {
  HistoryStore,
  storeOptions,
  verifyExchanges,
  verifyReadColumns,
  waitForSchema,
} from '@depthgate/history-store';
import { Lifecycle, createLogger, createRegistry, runMain, serve } from '@depthgate/service-kit';
import { createReplayService } from './app';
import { loadConfig } from './config';

runMain(async () => {
  const config = loadConfig();
  const logger = createLogger({ name: 'replay', level: config.LOG_LEVEL });
  const registry = createRegistry('replay');
  const lifecycle = new Lifecycle();
  const store = new HistoryStore({
    ...storeOptions(config),
    // A socket idle this long is dead: the server's max_execution_time ends every query well before.
    requestTimeoutMs: config.REPLAY_QUERY_TIMEOUT_MS + 30_000,
    logger,
  });
  lifecycle.onShutdown('clickhouse', () => store.close());
  // The replay only reads: the history service (or the migrate CLI) applies the migrations; it waits for them.
  await waitForSchema(store, { timeoutMs: config.CLICKHOUSE_STARTUP_TIMEOUT_MS, logger });
  await verifyReadColumns(store);
  await verifyExchanges(store, EXCHANGES);
  logger.info({ database: config.CLICKHOUSE_DATABASE, cluster: config.CLICKHOUSE_CLUSTER }, 'ClickHouse schema found');
  const auth = createAuth(config, { logger, registry, name: 'replay' });
  lifecycle.onShutdown('redis', () => auth.close());
  const { app, sockets } = createReplayService({ config, logger, auth, store, registry, lifecycle });
  // Replay sockets end when the service drains (1001): a replay cannot be handed to another process.
  lifecycle.onDrain('replay sockets', () => sockets.closeAll());
  const running = await serve(app, {
    port: config.REPLAY_PORT,
    host: config.REPLAY_HOST,
    logger,
    lifecycle,
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
    drainTimeoutMs: config.DRAIN_TIMEOUT_MS,
  });
  running.server.on('upgrade', sockets.upgrade);
});
