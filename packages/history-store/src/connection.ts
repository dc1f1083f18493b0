import { randomUUID } from 'node:crypto';
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { Logger } from '@depthgate/service-kit';
import { lit, sql, type Sql } from './literals';

/**
 * The connection to ClickHouse over HTTP, built once per process from configuration. It never leaves this package
 * (the main entry exports none of it): callers hold a HistoryStore and run named queries through a querier.
 *
 * Two clients share the URL: `data` carries queries and inserts (its socket pool is sized by configuration), and
 * `control` carries the few small statements that must never queue behind data — `KILL QUERY`, readiness probes.
 * Tables are always named with their database (`db`), so the clients need no default database and work before the
 * database exists (the migrations create it).
 */
export interface Connection {
  readonly data: ClickHouseClient;
  readonly control: ClickHouseClient;
  /** The database name as an SQL identifier. */
  readonly db: Sql;
  readonly database: string;
  /** The URL with its password masked, for log lines and error messages. */
  readonly where: string;
  /** A `SELECT 1` on the control client within `timeoutMs`; false on any failure. */
  ping(timeoutMs?: number): Promise<boolean>;
  /** `KILL QUERY … ASYNC` for one query id; never throws (logs instead). */
  kill(queryId: string): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectionOptions {
  /** http(s)://[user:pass@]host:port */
  url: string;
  database: string;
  /** Sockets of the data client. */
  maxConnections?: number;
  /** Idle-socket timeout of one request on the data client (the server's own limits end queries earlier). */
  requestTimeoutMs?: number;
  /** Settings sent with every data request. */
  settings?: ClickHouseSettings;
  logger?: Logger;
  /** Shown in system.processes as `http_user_agent` suffix. */
  application?: string;
}

/** Splits credentials out of the URL so they are sent as basic auth and never appear in logs. */
export function parseClickHouseUrl(raw: string): { origin: string; username?: string; password?: string } {
  const url = new URL(raw);
  const username = url.username === '' ? undefined : decodeURIComponent(url.username);
  const password = url.password === '' ? undefined : decodeURIComponent(url.password);
  return { origin: `${url.protocol}//${url.host}`, username, password };
}

/** The URL with its password masked, for log lines and error messages. */
export function loggableClickHouseUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString().replace(/\/$/, '');
  } catch {
    return '(unparseable URL)';
  }
}

/** Routes the client library's own log lines into pino at debug level: failures reach us as errors anyway. */
function loggerClass(logger: Logger | undefined) {
  return class {
    trace() {}
    debug() {}
    info() {}
    warn(params: { module: string; message: string }) {
      logger?.debug({ ch_module: params.module }, params.message);
    }
    error(params: { module: string; message: string; err: Error }) {
      logger?.debug({ ch_module: params.module, err: { message: params.err?.message } }, params.message);
    }
  };
}

const QUERY_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/**
 * A fresh query id, `dg-<name>-<uuid>`: the name tags the query in system.processes and the query log (and is its
 * metrics label), the UUID makes it unique so it can be killed or probed.
 */
export function newQueryId(name: string): string {
  if (!QUERY_NAME.test(name)) throw new TypeError(`not a query name: ${JSON.stringify(name)}`);
  return `dg-${name}-${randomUUID()}`;
}

export function createConnection(options: ConnectionOptions): Connection {
  const { origin, username, password } = parseClickHouseUrl(options.url);
  const common = {
    url: origin,
    username: username ?? 'default',
    password: password ?? '',
    application: options.application ?? 'depthgate-history',
    log: { LoggerClass: loggerClass(options.logger) },
  };
  const data = createClient({
    ...common,
    max_open_connections: options.maxConnections ?? 64,
    request_timeout: options.requestTimeoutMs ?? 300_000,
    clickhouse_settings: options.settings ?? {},
    keep_alive: { enabled: true, idle_socket_ttl: 2500 },
  });
  const control = createClient({
    ...common,
    max_open_connections: 4,
    request_timeout: 5000,
    keep_alive: { enabled: true, idle_socket_ttl: 2500 },
  });
  const db = lit.identifier(options.database);
  const logger = options.logger;

  return {
    data,
    control,
    db,
    database: options.database,
    where: loggableClickHouseUrl(options.url),
    async ping(timeoutMs = 1000) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      try {
        const rs = await control.query({ query: 'SELECT 1', format: 'TabSeparated', abort_signal: controller.signal });
        return (await rs.text()).trim() === '1';
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    async kill(queryId: string) {
      try {
        await control.command({ query: sql`KILL QUERY WHERE query_id = ${lit.queryId(queryId)} ASYNC`.text });
      } catch (err) {
        logger?.warn({ err: { message: (err as Error).message }, query_id: queryId }, 'KILL QUERY failed');
      }
    },
    async close() {
      await Promise.allSettled([data.close(), control.close()]);
    },
  };
}
