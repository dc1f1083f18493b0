/**
 * Integration-test harness (src/testing/: not part of the build): a history app on the real Redis and ClickHouse of
 * `./dev test`, with its own ClickHouse database (migrated) and Redis key prefix, a pinned clock, and a way to
 * issue keys. `close()` drops the database and closes every handle.
 *
 * Every answer the app finishes — to supertest, fetch, node:http or a client over `listen()` — is checked against
 * the service's generated OpenAPI document (ContractChecker, @depthgate/test-utils): an answer that breaks the
 * contract fails the test during which it finished (the check runs after each test of a file that uses the
 * harness), or `close()` when it finished after the last one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import {
  RedisKeyStore,
  createAuth,
  createRedisClient,
  redisTarget,
  waitForRedis,
  type Auth,
  type NewKeyInput,
} from '@depthgate/auth';
import { storeOptions, type HistoryStore } from '@depthgate/history-store';
import { createTestDatabase, type TestDatabase } from '@depthgate/history-store/testing';
import { Lifecycle, createLogger, createRegistry, type Registry } from '@depthgate/service-kit';
import { ContractChecker, ContractWatch, testClickHouseUrl, testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { createApp, historyOpenApi } from '../app';
import { loadConfig, type HistoryConfig } from '../config';
import { loadExplorerAssets } from '../explorer/assets';

/** Fails a test during which an answer broke the contract (this module is imported by the test file itself). */
const contractWatch = new ContractWatch();

export const quietLogger = () =>
  createLogger({ name: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

export interface Harness {
  app: Express;
  /** The app's store (inserts go through it). */
  ch: HistoryStore;
  /** The harness's database, for what tests read or make beside the app. */
  db: TestDatabase;
  auth: Auth;
  registry: Registry;
  config: HistoryConfig;
  clock: { now: number };
  /** The app's lifecycle (tests set `draining`). */
  lifecycle: Lifecycle;
  /** Checks every answer of `app` against the generated OpenAPI document. */
  contract: ContractChecker;
  /** Issues a key in this harness's Redis namespace; returns the key string. */
  key(input: Omit<NewKeyInput, 'name'> & { name?: string }): Promise<string>;
  /** Revokes a key issued by `key()`. */
  revoke(key: string): Promise<void>;
  /** Serves the app on a loopback port (for tests that need a real socket). */
  listen(): Promise<{ url: string; server: http.Server }>;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  close(): Promise<void>;
}

export async function createHarness(
  options: {
    env?: Record<string, string>;
    clickhouseUrl?: string;
    now?: number;
    /** Serve the Explorer page built into this directory (packages/explorer/dist). */
    explorerDir?: string;
  } = {},
): Promise<Harness> {
  const database = uniqueName('hist');
  const prefix = `${uniqueName('t')}:`;
  const clickhouseUrl = options.clickhouseUrl ?? testClickHouseUrl();
  const config = loadConfig({
    REDIS_URL: testRedisUrl(),
    REDIS_KEY_PREFIX: prefix,
    CLICKHOUSE_URL: clickhouseUrl,
    CLICKHOUSE_DATABASE: database,
    CATALOGUE_CACHE_TTL_MS: '0',
    ACCESS_LOG: 'false',
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const logger = quietLogger();
  const registry = createRegistry('history-test', { defaultMetrics: false });
  const db = await createTestDatabase({
    ...storeOptions(config),
    requestTimeoutMs: config.QUERY_TIMEOUT_MS + 30_000,
    logger,
  });
  const ch = db.store;
  const auth = createAuth(config, { logger, registry, name: 'history-test' });
  await waitForRedis(auth.redis, 5000);
  const admin = createRedisClient(redisTarget(config), { name: 'test-admin', offlineQueue: true });
  await waitForRedis(admin, 10_000);
  const store = new RedisKeyStore(admin, prefix);
  const clock = { now: options.now ?? Date.now() };
  const lifecycle = new Lifecycle();
  const contract = await ContractChecker.create(historyOpenApi(config), {
    notFound: { status: 404, schema: '#/components/schemas/Error404' },
  });
  contractWatch.watch(contract);
  const app = contract.observe(
    createApp({
      config,
      logger,
      auth,
      store: ch,
      registry,
      lifecycle,
      now: () => clock.now,
      explorer: options.explorerDir === undefined ? undefined : loadExplorerAssets(options.explorerDir),
    }),
  );
  const servers: http.Server[] = [];
  const issued = new Map<string, string>();
  return {
    app,
    ch,
    db,
    auth,
    registry,
    config,
    clock,
    lifecycle,
    contract,
    async key(input) {
      const { key, record } = await store.create({ name: 'test', ...input });
      issued.set(key, record.id);
      return key;
    },
    async revoke(key) {
      const id = issued.get(key);
      if (id === undefined) throw new Error('revoke: not a key of this harness');
      await store.revoke(id);
    },
    async listen() {
      const server = http.createServer(app);
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
    },
    async metric(name, labels = {}) {
      const m = await registry.getSingleMetric(name)?.get();
      return (m?.values ?? [])
        .filter((v) =>
          Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
        )
        .filter((v) => !('metricName' in v) || !String((v as { metricName?: string }).metricName).endsWith('_bucket'))
        .reduce((sum, v) => sum + v.value, 0);
    },
    async close() {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
      await db.drop();
      await Promise.allSettled([auth.close(), db.close()]);
      admin.disconnect();
      contractWatch.release(contract);
    },
  };
}
