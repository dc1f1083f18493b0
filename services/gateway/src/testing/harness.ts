/**
 * Integration-test harness (not part of the build): the simulator, keys in a Redis namespace of their own, gateways
 * configured against the simulator (with or without its credentials), a raw HTTP client and the log lines of every
 * gateway started, so a suite can assert that no key or secret was ever logged.
 *
 * Every answer a gateway of the harness gives itself — /health, /ready, /metrics, /openapi.json, /asyncapi.json,
 * and its own errors — is checked against its generated OpenAPI document (ContractChecker, @depthgate/test-utils);
 * an answer that breaks it fails the test it finished in. Upstream answers passed through (they carry X-Cache) are
 * the upstream's, not the gateway's contract, and are not checked.
 */
import http from 'node:http';
import { RedisKeyStore, createRedisClient, waitForRedis, type NewKeyInput, type Redis } from '@depthgate/auth';
import { createLogger } from '@depthgate/service-kit';
import { ContractChecker, ContractWatch, linesSink, testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { startSimulator, type Simulator, type SimulatorOptions } from '@depthgate/venue-sim';
import { loadConfig } from '../config';
import { openApiDocument } from '../openapi';
import { hostRouter } from '../routes/hosts';
import { startGateway, type RunningGateway } from '../server';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: () => unknown;
}

/** One raw HTTP request (node:http, so any header can be sent, hop-by-hop ones included), with an optional body. */
export function call(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string | Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: bytes,
          text: bytes.toString(),
          json: () => JSON.parse(bytes.toString()),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Fails a test during which an answer broke the contract (this module is imported by the test file itself). */
const contractWatch = new ContractWatch();

export interface GatewayHarness {
  sim: Simulator;
  admin: Redis;
  prefix: string;
  store: RedisKeyStore;
  /** Every line any gateway of this harness logged. */
  logLines: string[];
  /**
   * A gateway on the simulator (with its credentials unless `withCredentials` is false), stopped by close(); `now`:
   * the clock of its upstream calls (startGateway's), for a test that moves time instead of waiting for it.
   */
  gateway(overrides?: Record<string, string>, withCredentials?: boolean, now?: () => number): Promise<RunningGateway>;
  /** A key in this harness's namespace (100 000 requests per minute unless given). */
  newKey(input?: Partial<NewKeyInput>): Promise<string>;
  /** The last request the simulator recorded for a platform (or path prefix). */
  last(filter: { platform?: string; pathPrefix?: string }): ReturnType<Simulator['requests']>[number] | undefined;
  /** The log of every gateway so far, joined. */
  logs(): string;
  close(): Promise<void>;
}

export async function startGatewayHarness(simOptions: SimulatorOptions = {}): Promise<GatewayHarness> {
  const logLines: string[] = [];
  const logger = createLogger({ name: 'gateway-test', level: 'info', destination: linesSink(logLines) });
  const sim = await startSimulator({ seed: 11, updatesPerSecond: 0, rateLimits: false, ...simOptions });
  const admin = createRedisClient(testRedisUrl(), { name: 'gw-test-admin', offlineQueue: true });
  await waitForRedis(admin, 5000);
  const prefix = `${uniqueName('gw')}:`;
  const store = new RedisKeyStore(admin, prefix);
  const gateways: RunningGateway[] = [];
  const checkers: ContractChecker[] = [];
  return {
    sim,
    admin,
    prefix,
    store,
    logLines,
    async gateway(overrides = {}, withCredentials = true, now?: () => number) {
      const env: Record<string, string> = {
        ...(withCredentials
          ? sim.env()
          : Object.fromEntries(
              Object.entries(sim.env()).filter(([k]) => k.startsWith('UPSTREAM_') || k === 'IBKR_PORTAL_CA_FILE'),
            )),
        REDIS_URL: testRedisUrl(),
        REDIS_KEY_PREFIX: prefix,
        GATEWAY_PORT: '0',
        UPSTREAM_TIMEOUT_MS: '1000',
        UPSTREAM_CONNECT_TIMEOUT_MS: '500',
        // Failure tests share a gateway; only circuit tests (own gateways) let failures open a circuit.
        CIRCUIT_FAILURE_THRESHOLD: '1000',
        CIRCUIT_OPEN_MS: '400',
        UPSTREAM_BUDGETS: 'venue-a=0,venue-a-clob=0,venue-a-us=0,venue-b=0,venue-c=0,venue-d=0,venue-e=0',
        CACHE_ROUTES: 'venue-d:/time=400',
        IBKR_TICKLE_INTERVAL_MS: '0',
        ...overrides,
      };
      const config = loadConfig(env);
      const running = await startGateway(config, { logger, exit: false, now });
      await waitForRedis(running.auth.redis, 5000);
      gateways.push(running);
      const byHost = config.baseDomain === undefined ? undefined : hostRouter(config.baseDomain, running.platforms);
      const checker = await ContractChecker.create(openApiDocument(running.platforms), {
        notFound: { status: 404, schema: '#/components/schemas/Error404' },
        wrongMethod: { status: 405, schema: '#/components/schemas/Error405' },
        skip: (answer) => answer.headers['x-cache'] !== undefined,
        // A request to {platform}.GATEWAY_BASE_DOMAIN is /api/v1/{platform}/… (the document says so).
        path: (answer) => {
          const hosted = byHost?.(answer.host);
          return hosted ? `/api/v1/${hosted.key}${answer.url.split('?')[0] ?? ''}` : undefined;
        },
      });
      checkers.push(contractWatch.watch(checker));
      // Ahead of the gateway's own listener, so that everything it writes is seen.
      running.server.prependListener('request', (req, res) => checker.record(req, res));
      return running;
    },
    async newKey(input = {}) {
      return (await store.create({ name: 'gateway-test', requests_per_minute: 100_000, ...input })).key;
    },
    last: (filter) => sim.requests(filter).at(-1),
    logs: () => logLines.join(''),
    async close() {
      await Promise.all(gateways.map((g) => g.shutdown('test')));
      admin.disconnect();
      await sim.stop();
      for (const checker of checkers) contractWatch.release(checker);
    },
  };
}

/** The secrets of the simulator's credentials, none of which may ever appear in a log line. */
export function simSecrets(sim: Simulator): string[] {
  const c = sim.credentials;
  return [
    c.coinbase.secret,
    c.coinbase.passphrase,
    c.polymarketClob.secret,
    c.polymarketClob.passphrase,
    c.polymarketUs.secretKeyBase64,
  ];
}
