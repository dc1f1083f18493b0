// What the gateway benchmarks share: Redis, the venue simulator as every upstream, a bench key, gateway processes.
import path from 'node:path';
import { ROOT, createKey, start, startRedis, startSim } from '../lib.mjs';

/**
 * Redis and the simulator (seed 1, no rate limits, 20 Kalshi tickers, books still) in `dir`, and a key allowed
 * 100M requests a minute. Returns what the gateways need; `stop()` stops Redis (the simulator with stopAll()).
 */
export async function startStack(dir) {
  const redis = await startRedis(dir);
  const sim = await startSim(dir, ['--tickers', 'kalshi=20', '--updates-per-second', '0', '--log-level', 'warn']);
  return {
    simEnv: sim.env,
    simBase: sim.base,
    redisUrl: redis.url,
    apiKey: createKey(redis.url, ['--requests-per-minute', '100000000']),
    stop: redis.stop,
  };
}

/** The environment of a benchmarked gateway process: as deployed, except what `extra` says. */
export function gatewayEnv(stack, port, extra = {}) {
  return {
    ...stack.simEnv,
    REDIS_URL: stack.redisUrl,
    GATEWAY_PORT: String(port),
    LOG_LEVEL: 'info',
    ACCESS_LOG: 'true',
    UPSTREAM_BUDGETS: 'venue-d=0',
    CACHE_ROUTES: 'venue-d:/products/*/book=1000',
    IBKR_TICKLE_INTERVAL_MS: '0',
    // As deployed (infra/k8s/base/gateway/deployment.yaml).
    NODE_OPTIONS: '--max-old-space-size=384 --max-semi-space-size=8',
    ...extra,
  };
}

/**
 * The gateway as a 2-core host runs it: `processes` processes on one port (GATEWAY_REUSE_PORT), each an independent
 * replica. `root` is the checkout whose build runs (another worktree to compare builds); `nodeFlags` go before the
 * script (e.g. --trace-gc).
 */
export function startGateways(stack, { name, port, processes = 2, env = {}, root = ROOT, nodeFlags = [], logDir }) {
  return Array.from(
    { length: processes },
    (_, i) =>
      start(`${name}-${i}`, process.execPath, [...nodeFlags, path.join(root, 'services/gateway/dist/main.js')], {
        env: gatewayEnv(stack, port, { GATEWAY_REUSE_PORT: 'true', ...env }),
        logDir,
      }).pid,
  );
}
