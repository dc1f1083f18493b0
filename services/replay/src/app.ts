import express, { type Express } from 'express';
import { EXCHANGES, KeyLimits, RunningRequests, type Auth, type ExchangeKey, type Exchanges } from '@depthgate/auth';
import { OrderBookQueries, QueryGate, type HistoryStore } from '@depthgate/history-store';
import { createServiceApp, type Lifecycle, type Logger, type Registry } from '@depthgate/service-kit';
import type { ReplayConfig } from './config';
import { replayRoutes } from './http/replay-route';
import { ReplayMetrics } from './metrics';
import { ReplaySockets } from './ws/server';

export interface ReplayDeps {
  config: ReplayConfig;
  logger: Logger;
  auth: Auth;
  /** The replay's own store: its own sockets to ClickHouse (CLICKHOUSE_MAX_CONNECTIONS of this process). */
  store: HistoryStore;
  registry: Registry;
  lifecycle: Lifecycle;
  /** The clock that callers' windows are computed from (tests pin it). */
  now?: () => number;
  exchanges?: Exchanges<ExchangeKey>;
}

const ROUTE_LABEL = /^\/api\/[^/]+\/replay(\/|$)/;

/**
 * Builds the replay service: the HTTP app and the WebSocket replay's `upgrade` listener, on one query budget. No side
 * effects: everything it talks to arrives in `deps`.
 */
export function createReplayService(deps: ReplayDeps): { app: Express; sockets: ReplaySockets } {
  const { config, auth, store } = deps;
  const now = deps.now ?? Date.now;
  const metrics = new ReplayMetrics(deps.registry);
  // Its own query gate: a replay load waits here, not in the history API's.
  const queries = new OrderBookQueries(store, {
    gate: new QueryGate(config.REPLAY_QUERY_CONCURRENCY),
    observer: metrics.budget.observer,
  });
  const sockets = new ReplaySockets({
    auth,
    store,
    queries,
    metrics,
    logger: deps.logger,
    queryTimeoutMs: config.REPLAY_QUERY_TIMEOUT_MS,
    pageRows: config.REPLAY_PAGE_ROWS,
    now,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    settleMs: config.REPLAY_SUBSCRIBE_SETTLE_MS,
    subscribeTimeoutMs: config.REPLAY_SUBSCRIBE_TIMEOUT_MS,
    messagesPerSecond: config.REPLAY_WS_MESSAGES_PER_SECOND,
    writeTimeoutMs: config.REPLAY_WS_WRITE_TIMEOUT_MS,
    connections: {
      perKey: config.REPLAY_WS_MAX_CONNECTIONS_PER_KEY,
      anonymous: config.REPLAY_WS_MAX_CONNECTIONS_ANONYMOUS,
      leaseMs: config.REPLAY_WS_KEY_LEASE_MS,
      redisKeyPrefix: config.REDIS_KEY_PREFIX,
    },
    subscriptions: {
      perKey: config.REPLAY_WS_MAX_SUBSCRIPTIONS_PER_KEY,
      anonymous: config.REPLAY_WS_MAX_SUBSCRIPTIONS_ANONYMOUS,
    },
  });
  // HTTP replays running per key (or address), every replica together: the sockets' mechanism, a count of its own.
  const httpLimits = new KeyLimits({
    redis: auth.redis,
    prefix: config.REDIS_KEY_PREFIX,
    namespace: 'replay-http',
    leaseMs: config.REPLAY_WS_KEY_LEASE_MS,
    logger: deps.logger,
    onDegraded: (degraded) => metrics.limitsDegraded.set(degraded ? 1 : 0),
  });
  deps.lifecycle.onShutdown('replay http limits', () => httpLimits.stop());
  const app = createServiceApp({
    ...deps,
    readiness: [...auth.readiness, { name: 'clickhouse', check: () => store.ping(900) }],
    trustProxyHops: config.TRUST_PROXY_HOPS,
    accessLog: config.ACCESS_LOG,
    routeLabel: (req) => {
      const path = req.url ?? '';
      if (!path.startsWith('/api/')) return 'internal';
      return ROUTE_LABEL.test(path) ? 'replay' : 'api';
    },
    mount: (app) => {
      const api = express.Router();
      // Keys exactly as the history reads them: optional (anonymous: the last day), rate-limited per key or IP.
      api.use(auth.optionalKey, auth.rateLimit);
      api.use(
        replayRoutes({
          store,
          queries,
          metrics,
          logger: deps.logger,
          exchanges: deps.exchanges ?? EXCHANGES,
          queryTimeoutMs: config.REPLAY_QUERY_TIMEOUT_MS,
          pageRows: config.REPLAY_PAGE_ROWS,
          now,
          running: new RunningRequests(
            httpLimits,
            {
              perKey: config.REPLAY_HTTP_MAX_CONCURRENT_PER_KEY,
              anonymous: config.REPLAY_HTTP_MAX_CONCURRENT_ANONYMOUS,
            },
            'HTTP replays',
          ),
          writeTimeoutMs: config.REPLAY_HTTP_WRITE_TIMEOUT_MS,
        }),
      );
      app.use('/api', api);
    },
  });
  return { app, sockets };
}

/** The HTTP app alone. */
export function createApp(deps: ReplayDeps): Express {
  return createReplayService(deps).app;
}
