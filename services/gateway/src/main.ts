import { createAuth } from '@depthgate/auth';
import { Lifecycle, createLogger, createRegistry, runMain, serve } from '@depthgate/service-kit';
import { createApp } from './app';
import { loadConfig } from './config';

runMain(async () => {
  const config = loadConfig();
  const logger = createLogger({ name: 'gateway', level: config.LOG_LEVEL });
  const registry = createRegistry('gateway');
  const lifecycle = new Lifecycle();
  const auth = createAuth(config, { logger, registry, name: 'gateway' });
  lifecycle.onShutdown('redis', () => auth.close());
  await serve(createApp({ config, logger, auth, registry, lifecycle }), {
    port: config.GATEWAY_PORT,
    host: config.GATEWAY_HOST,
    logger,
    lifecycle,
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
    drainTimeoutMs: config.DRAIN_TIMEOUT_MS,
  });
});
