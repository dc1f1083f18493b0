import { createAuth, waitForRedis, type Auth } from '@depthgate/auth';
import {
  Lifecycle,
  createRegistry,
  serve,
  type Logger,
  type Registry,
  type RunningServer,
} from '@depthgate/service-kit';
import { createHandler } from './app';
import type { GatewayConfig } from './config';
import { startKeepAlives } from './keep-alive';
import { GatewayMetrics } from './metrics';
import { createPlatforms, type GatewayPlatforms } from './platforms/registry';
import { UpstreamBudgets } from './proxy/budget';
import { Forwarder } from './proxy/forwarder';
import { WsMetrics } from './ws/metrics';
import { WsGateway } from './ws/server';

export interface RunningGateway extends RunningServer {
  auth: Auth;
  registry: Registry;
  platforms: GatewayPlatforms;
  forwarder: Forwarder;
  lifecycle: Lifecycle;
  /** The WebSocket proxy (undefined with WS_ENABLED=false). */
  ws: WsGateway | undefined;
}

/**
 * Builds everything the gateway talks to, once, and starts serving: Redis (keys, limits, budgets), platforms and
 * their signers, the forwarder, keep-alive calls. `exit: false` keeps signals and process exit out of it (tests).
 */
export async function startGateway(
  config: GatewayConfig,
  options: {
    logger: Logger;
    exit?: boolean;
    /** Route modules by platform key (default: every platform's, ROUTES); tests add a fixture platform's. */
    routes?: Parameters<typeof createPlatforms>[1];
    /** The upstream calls' clock (circuits, micro-cache, signatures; default Date.now): tests move one of their own. */
    now?: () => number;
  },
): Promise<RunningGateway> {
  const { logger } = options;
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
  const platforms = createPlatforms(config, options.routes);
  metrics.budgets(Object.values(platforms.byKey).flatMap((p) => p.targets));
  const forwarder = new Forwarder({ config, budgets, metrics, logger, now: options.now });
  lifecycle.onShutdown('upstreams', () => forwarder.close());
  const running = await serve(createHandler({ config, logger, auth, registry, lifecycle, platforms, forwarder }), {
    port: config.GATEWAY_PORT,
    host: config.GATEWAY_HOST,
    logger,
    lifecycle,
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
    drainTimeoutMs: config.DRAIN_TIMEOUT_MS,
    exit: options.exit,
    reusePort: config.GATEWAY_REUSE_PORT,
  });
  const ws = config.WS_ENABLED
    ? new WsGateway({
        config,
        logger,
        auth,
        metrics: new WsMetrics(registry),
        platforms,
        forwarder,
        draining: () => lifecycle.draining,
      })
    : undefined;
  if (ws) {
    running.server.on('upgrade', (req, socket, head) => ws.upgrade(req, socket, head));
    // Open WebSockets never end by themselves: at drain they are told to reconnect elsewhere.
    lifecycle.onDrain('websockets', () => ws.stop());
  }
  // Keep-alive calls take upstream budget from Redis: start them once Redis answers (or after 5 s without it, when
  // the budget falls back to counting in process), so a normal start logs no spurious "budgets degraded".
  await waitForRedis(auth.redis, 5000).catch(() =>
    logger.warn('Redis not reachable yet; starting keep-alive calls anyway'),
  );
  lifecycle.onShutdown('keep-alives', startKeepAlives(platforms, forwarder, logger));
  logger.info(
    {
      platforms: Object.values(platforms.byKey).map((p) => ({
        key: p.key,
        targets: p.targets.map((t) => ({ id: t.id, origin: t.origin, signed: t.signer?.name ?? null })),
      })),
      disabled: [...config.disabled],
    },
    'gateway configured',
  );
  return { ...running, auth, registry, platforms, forwarder, lifecycle, ws };
}
