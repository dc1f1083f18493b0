import express, { type Express } from 'express';
import { EXCHANGES, KeyLimits, RunningRequests, type Auth, type ExchangeKey, type Exchanges } from '@depthgate/auth';
import { OrderBookQueries, QueryGate, type HistoryStore } from '@depthgate/history-store';
import { createServiceApp, type Lifecycle, type Logger, type Registry } from '@depthgate/service-kit';
import type { HistoryConfig } from './config';
import type { ExplorerAssets } from './explorer/assets';
import { explorerRoutes } from './explorer/routes';
import { gzipResponses } from './gzip';
import { HistoryMetrics } from './metrics';
import { openApiDocument } from './contract/openapi';
import { CursorCodec } from './order-books/cursor';
import { OrderBookReader } from './order-books/reader';
import { MAX_BOOK_DEPTH, historyRoutes, resolveExchange } from './order-books/routes';

export interface HistoryDeps {
  config: HistoryConfig;
  logger: Logger;
  auth: Auth;
  store: HistoryStore;
  registry: Registry;
  lifecycle: Lifecycle;
  /** The clock that windows are computed from (tests pin it). */
  now?: () => number;
  /** The Explorer page's built files (explorer/assets.ts); undefined: not built, `/explorer` says so. */
  explorer?: ExplorerAssets;
  /** The recorded exchanges served (default: the product's registry; a test adds a fixture exchange). */
  exchanges?: Exchanges<ExchangeKey>;
}

/** The service's OpenAPI document under `config` (served at /openapi.json; the tests check every answer by it). */
export function historyOpenApi(config: HistoryConfig): ReturnType<typeof openApiDocument> {
  return openApiDocument({
    defaultLimit: config.DEFAULT_LIMIT,
    maxLimit: config.MAX_LIMIT,
    queryTimeoutMs: config.QUERY_TIMEOUT_MS,
    maxBookDepth: MAX_BOOK_DEPTH,
  });
}

/** A running stream's lease in its key's shared count (renewed at a third; a dead replica's streams expire with it). */
const STREAM_LEASE_MS = 60_000;

const ROUTE_LABEL = /^\/api\/[^/]+\/(tickers|snapshots|deltas|trades|bars|coverage|book)(\/|$)/;

/** Builds the history app. No side effects: everything it talks to arrives in `deps`. */
export function createApp(deps: HistoryDeps): Express {
  const { config, auth, store } = deps;
  const exchanges = deps.exchanges ?? EXCHANGES;
  const metrics = new HistoryMetrics(deps.registry);
  const queries = new OrderBookQueries(store, {
    gate: new QueryGate(config.CLICKHOUSE_QUERY_CONCURRENCY),
    observer: metrics.budget.observer,
  });
  const reader = new OrderBookReader(queries, metrics, config.CATALOGUE_CACHE_TTL_MS);
  const cursors = new CursorCodec(config.cursorSecrets, exchanges);
  const openapi = JSON.stringify(historyOpenApi(config));
  // Bulk streams running per key (or address), every replica together: the WebSocket limits' leases, a count of its own.
  const streamLimits = new KeyLimits({
    redis: auth.redis,
    prefix: config.REDIS_KEY_PREFIX,
    namespace: 'history-streams',
    leaseMs: STREAM_LEASE_MS,
    logger: deps.logger,
    onDegraded: (degraded) => metrics.limitsDegraded.set(degraded ? 1 : 0),
  });
  deps.lifecycle.onShutdown('history stream limits', () => streamLimits.stop());
  const streams = new RunningRequests(
    streamLimits,
    { perKey: config.STREAMS_MAX_CONCURRENT_PER_KEY, anonymous: config.STREAMS_MAX_CONCURRENT_ANONYMOUS },
    'bulk streams',
  );
  return createServiceApp({
    ...deps,
    readiness: [...auth.readiness, { name: 'clickhouse', check: () => store.ping(900) }],
    trustProxyHops: config.TRUST_PROXY_HOPS,
    accessLog: config.ACCESS_LOG,
    routeLabel: (req) => {
      const path = req.url ?? '';
      if (path.startsWith('/explorer')) return 'explorer';
      if (!path.startsWith('/api/')) return 'internal';
      return ROUTE_LABEL.exec(path)?.[1] ?? 'api';
    },
    mount: (app) => {
      const gzip = gzipResponses(config.GZIP_LEVEL);
      app.get('/openapi.json', gzip, (_req, res) => {
        res.type('application/json').send(openapi);
      });
      if (config.EXPLORER_ENABLED) app.use(explorerRoutes(deps.explorer));
      const api = express.Router();
      api.use(gzip, auth.optionalKey, auth.rateLimit);
      api.use(
        '/:exchange',
        resolveExchange(exchanges),
        historyRoutes({
          store,
          reader,
          metrics,
          logger: deps.logger,
          queryTimeoutMs: config.QUERY_TIMEOUT_MS,
          writeTimeoutMs: config.WRITE_TIMEOUT_MS,
          streams,
          defaultLimit: config.DEFAULT_LIMIT,
          maxLimit: config.MAX_LIMIT,
          now: deps.now ?? Date.now,
          cursors,
          streamWindowRows: config.STREAM_WINDOW_ROWS,
          draining: () => deps.lifecycle.draining,
        }),
      );
      app.use('/api', api);
    },
  });
}
