import { createAuth } from '@depthgate/auth';
import { Lifecycle, createLogger, createRegistry, runMain, serve } from '@depthgate/service-kit';
import { createApp } from './app';
import { loadConfig } from './config';
import { startKeepAlives } from './keep-alive';
import { GatewayMetrics } from './metrics';
import { createPlatforms } from './platforms/registry';
import { UpstreamBudgets } from './proxy/budget';
import { Forwarder } from './proxy/forwarder';

runMain(async () => {
  const config = loadConfig();
  const logger = createLogger({ name: 'gateway', level: config.LOG_LEVEL });
  const registry = createRegistry('gateway');
  const lifecycle = new Lifecycle();
  const auth = createAuth(config, { logger, registry, name: 'gateway' });
  lifecycle.onShutdown('redis', () => auth.close());
  const metrics = new GatewayMetrics(registry);
  const budgets = new UpstreamBudgets(
    auth.redis,
    config.REDIS_KEY_PREFIX,
    config.UPSTREAM_BUDGET_MAX_WAIT_MS,
    logger,
    (d) => metrics.budgetDegraded.set(d ? 1 : 0),
  );
  const platforms = createPlatforms(config);
  const forwarder = new Forwarder({ config, budgets, metrics, logger });
  lifecycle.onShutdown('upstreams', () => forwarder.close());
  await serve(createApp({ config, logger, auth, registry, lifecycle, platforms, forwarder }), {
    port: config.GATEWAY_PORT,
    host: config.GATEWAY_HOST,
    logger,
    lifecycle,
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
    drainTimeoutMs: config.DRAIN_TIMEOUT_MS,
  });
  const stopKeepAlives = startKeepAlives(platforms, forwarder, logger);
  lifecycle.onShutdown('keep-alives', stopKeepAlives);
  logger.info(
    {
      platforms: Object.values(platforms).map((p) => ({
        key: p.key,
        targets: p.targets.map((t) => ({ id: t.id, origin: t.origin, signed: t.signer?.name ?? null })),
      })),
      disabled: [...config.disabled],
    },
    'gateway configured',
  );
});
