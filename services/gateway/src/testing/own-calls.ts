import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { createLogger, Registry } from '@depthgate/service-kit';
import { loadConfig } from '../config';
import { GatewayMetrics } from '../metrics';
import type { UpstreamTarget } from '../platforms/types';
import { UpstreamBudgets } from '../proxy/budget';
import { Forwarder } from '../proxy/forwarder';

/**
 * For tests of the gateway's own calls (keep-alive, book reconciliation): `server` listening on a free port, a
 * forwarder (config `env`) and the server as its target within `budget`, counted in memory (Redis away: the same
 * arithmetic). `close` ends the server's connections, the forwarder and the server.
 */
export async function ownCallsTo(
  server: http.Server,
  budget: NonNullable<UpstreamTarget['budget']>,
  env: Record<string, string> = {},
) {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const logger = createLogger({ name: 'test', level: 'silent' });
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const redis = { status: 'end', defineCommand: () => undefined } as unknown as Redis;
  const budgets = new UpstreamBudgets(redis, 'dg:', config.UPSTREAM_BUDGET_MAX_WAIT_MS, logger);
  const forwarder = new Forwarder({ config, budgets, metrics: new GatewayMetrics(new Registry()), logger });
  const target = {
    id: 'test',
    platform: 'test',
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    basePath: '',
    host: 'test',
    budget,
  } as UpstreamTarget;
  const close = async () => {
    server.closeAllConnections();
    await forwarder.close();
    await new Promise((r) => server.close(r));
  };
  return { budgets, forwarder, target, close };
}
