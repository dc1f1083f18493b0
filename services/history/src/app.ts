import express, { type Express } from 'express';
import type { Auth } from '@depthgate/auth';
import { createServiceApp, type Lifecycle, type Logger, type Registry } from '@depthgate/service-kit';
import type { ClickHouse } from './clickhouse/client';
import type { HistoryConfig } from './config';
import { gzipResponses } from './history/gzip';
import { HistoryMetrics } from './history/metrics';
import { QueryGate } from './history/query-gate';
import { historyRoutes, resolveExchange } from './history/routes';
import { HistoryStore } from './history/store';
import { openApiDocument } from './openapi';

export interface HistoryDeps {
  config: HistoryConfig;
  logger: Logger;
  auth: Auth;
  clickhouse: ClickHouse;
  registry: Registry;
  lifecycle: Lifecycle;
  /** The clock that windows are computed from (tests pin it). */
  now?: () => number;
}

const ROUTE_LABEL = /^\/api\/[^/]+\/(tickers|snapshots|deltas)(\/|$)/;

/** Builds the history app. No side effects: everything it talks to arrives in `deps`. */
export function createApp(deps: HistoryDeps): Express {
  const { config, auth, clickhouse } = deps;
  const metrics = new HistoryMetrics(deps.registry);
  const gate = new QueryGate(config.CLICKHOUSE_QUERY_CONCURRENCY);
  const store = new HistoryStore(clickhouse, metrics, config.CATALOGUE_CACHE_TTL_MS, gate);
  const openapi = JSON.stringify(
    openApiDocument({
      defaultLimit: config.DEFAULT_LIMIT,
      maxLimit: config.MAX_LIMIT,
      queryTimeoutMs: config.QUERY_TIMEOUT_MS,
    }),
  );
  return createServiceApp({
    ...deps,
    readiness: [...auth.readiness, { name: 'clickhouse', check: () => clickhouse.ping(900) }],
    trustProxyHops: config.TRUST_PROXY_HOPS,
    accessLog: config.ACCESS_LOG,
    routeLabel: (req) => {
      const path = req.url ?? '';
      if (!path.startsWith('/api/')) return 'internal';
      return ROUTE_LABEL.exec(path)?.[1] ?? 'api';
    },
    mount: (app) => {
      const gzip = gzipResponses(config.GZIP_LEVEL);
      app.get('/openapi.json', gzip, (_req, res) => {
        res.type('application/json').send(openapi);
      });
      const api = express.Router();
      api.use(gzip, auth.optionalKey, auth.rateLimit);
      api.use(
        '/:exchange',
        resolveExchange,
        historyRoutes({
          ch: clickhouse,
          store,
          metrics,
          logger: deps.logger,
          queryTimeoutMs: config.QUERY_TIMEOUT_MS,
          defaultLimit: config.DEFAULT_LIMIT,
          maxLimit: config.MAX_LIMIT,
          now: deps.now ?? Date.now,
        }),
      );
      app.use('/api', api);
    },
  });
}
