// What both contract suites run against: the simulator, and a gateway started here against it with a key of its own
// (no upstream budgets: each read is one call among hundreds; no keep-alive calls in the simulator's request record).
import { Writable } from 'node:stream';
import { RedisKeyStore, createRedisClient, waitForRedis } from '@depthgate/auth';
import { loadConfig, startGateway, type RunningGateway } from '@depthgate/gateway';
import { createLogger } from '@depthgate/service-kit';
import { testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { startSimulator, type Simulator, type SimulatorOptions } from '@depthgate/venue-sim';

/** `{platform}.gw.test` reaches a platform at its own root (GATEWAY_BASE_DOMAIN); the suites resolve it themselves. */
export const BASE_DOMAIN = 'gw.test';

/** Book updates made before the suites start (about a hundred per instrument, a fifth of them trades). */
const TRADING_STEPS = 3000;

export interface ContractStack {
  sim: Simulator;
  gateway: RunningGateway;
  /** A depthgate key for the gateway. */
  key: string;
  close(): Promise<void>;
}

/** Starts the stack; `name` names the Redis key namespace, connection and logger. */
export async function startContractStack(name: string, simOptions: SimulatorOptions = {}): Promise<ContractStack> {
  const sim = await startSimulator({ seed: 11, updatesPerSecond: 0, rateLimits: false, ...simOptions });
  // Still books, but with a past: a few thousand updates make every book trade, so the trade reads list something.
  sim.books.step(TRADING_STEPS);
  const admin = createRedisClient(testRedisUrl(), { name: `${name}-admin`, offlineQueue: true });
  let gateway: RunningGateway | undefined;
  const close = async () => {
    await gateway?.shutdown('test');
    admin.disconnect();
    await sim.stop();
  };
  try {
    await waitForRedis(admin, 5000);
    const prefix = `${uniqueName(name)}:`;
    const { key } = await new RedisKeyStore(admin, prefix).create({ name, requests_per_minute: 1e6 });
    const silent = new Writable({ write: (_chunk, _enc, cb) => cb() });
    gateway = await startGateway(
      loadConfig({
        ...sim.env(),
        REDIS_URL: testRedisUrl(),
        REDIS_KEY_PREFIX: prefix,
        GATEWAY_PORT: '0',
        GATEWAY_BASE_DOMAIN: BASE_DOMAIN,
        UPSTREAM_BUDGETS: 'venue-a=0,venue-a-clob=0,venue-a-us=0,venue-b=0,venue-c=0,venue-d=0,venue-e=0',
        IBKR_TICKLE_INTERVAL_MS: '0',
      }),
      { logger: createLogger({ name: `${name}-gateway`, level: 'error', destination: silent }), exit: false },
    );
    await waitForRedis(gateway.auth.redis, 5000);
    return { sim, gateway, key, close };
  } catch (err) {
    await close();
    throw err;
  }
}
