import { randomUUID } from 'node:crypto';
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { Logger } from '@depthgate/service-kit';
import { createHttpReads, type HttpReads } from './http-reads';
import { onCluster } from './layout';
import { join, lit, sql, type Sql } from './literals';

/**
 * The connection to ClickHouse over HTTP, built once per process from configuration. It never leaves this package
 * (the main entry exports none of it): callers hold a HistoryStore and run named queries through a querier.
 *
 * Reads (every query of a querier) go through `reads`, node:http directly (http-reads.ts says why). Two clients of
 * the library share the URL: `data` carries inserts, migrations and statements, and `control` the few small
 * statements that must never queue behind data — `KILL QUERY`, readiness probes. `reads` and `data` each have a socket
 * pool sized by configuration.
 * Tables are always named with their database (`db`), so the clients need no default database and work before the
 * database exists (the migrations create it).
 */
export interface Connection {
  readonly reads: HttpReads;
  readonly data: ClickHouseClient;
  readonly control: ClickHouseClient;
  /** The database name as an SQL identifier. */
  readonly db: Sql;
  readonly database: string;
  /** The ClickHouse cluster the tables are spread over (CLICKHOUSE_CLUSTER); undefined: one server. */
  readonly cluster: string | undefined;
  /** The URL with its password masked, for log lines and error messages. */
  readonly where: string;
  /**
   * Settings an insert or a read needs for its correctness that only some servers know (asked once, see
   * `conditionalSettings`); an unknown setting fails a query on 18.16, so each is sent only where it exists.
   */
  settingsFor(kind: 'insert' | 'read'): Promise<ClickHouseSettings>;
  /** A `SELECT 1` on the control client within `timeoutMs`; false on any failure. */
  ping(timeoutMs?: number): Promise<boolean>;
  /**
   * `KILL QUERY … ASYNC` for one query id, on a cluster `ON CLUSTER` (every server: the query runs on whichever the
   * address led it to); never throws (logs instead). Resolves once the statement naming it has been answered; kills
   * asked meanwhile go together in the next statement (killInBatches).
   */
  kill(queryId: string): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectionOptions {
  /** http(s)://[user:pass@]host:port */
  url: string;
  database: string;
  /** The cluster (in the servers' `remote_servers`) the tables are spread over; omitted: one server. */
  cluster?: string;
  /** Sockets of the reads, and of the data client. */
  maxConnections?: number;
  /** Idle-socket timeout of one request of the reads and the data client (the server's own limits end queries earlier). */
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

/**
 * Settings every request carries on a cluster, known to 18.16 and to current releases alike:
 * - an insert through a Distributed table returns only once every shard has committed its rows (not when they are
 *   queued on the server we talk to), so an acknowledged batch is stored and a failed one can be sent again;
 * - a retried block is recognised by each shard's replicated table and not written twice (the default, pinned
 *   because the recorder's retries rely on it: docs/history-internals.md, "Idempotence");
 * - a read never leaves out a shard it cannot reach (it fails instead), and avoids a replica more than 2 s behind
 *   (one catching up after an outage) while another is current.
 */
const CLUSTER_SETTINGS: ClickHouseSettings = {
  insert_distributed_sync: 1,
  insert_deduplicate: 1,
  skip_unavailable_shards: 0,
  max_replica_delay_for_distributed_queries: '2',
  fallback_to_stale_replicas_for_distributed_queries: 1,
};

/**
 * Settings pinned only where the server knows them (asked once through system.settings):
 * - `async_insert = 0` on every insert. Current ClickHouse (26.2 and later) queues inserts server-side by default:
 *   several inserts may merge into one part, and rows already queued are written after their query was cancelled.
 *   Our writers need one insert = one part, all or nothing, committed or not by the time the query has ended (the
 *   recorder's probe-before-retry, and on a cluster the shards' block deduplication, which sees one block per
 *   insert). The recorder already batches (RECORDER_BATCH_*), which is what the queue would do for it.
 * - `optimize_skip_unused_shards = 1` on reads on a cluster: a query for one (exchange, ticker) is sent to the shard
 *   holding it only (19.x and later; 18.16 asks every shard, the others answer from their primary index).
 */
export function conditionalSettings(
  known: ReadonlySet<string>,
  cluster: string | undefined,
): { insert: ClickHouseSettings; read: ClickHouseSettings } {
  const insert: ClickHouseSettings = {};
  const read: ClickHouseSettings = {};
  if (known.has('async_insert')) insert.async_insert = 0;
  if (cluster !== undefined && known.has('optimize_skip_unused_shards')) read.optimize_skip_unused_shards = 1;
  return { insert, read };
}
const CONDITIONAL_SETTING_NAMES = ['async_insert', 'optimize_skip_unused_shards'];

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
  const dataSettings = { ...(options.cluster === undefined ? {} : CLUSTER_SETTINGS), ...options.settings };
  // (The reads and the data client each get this many sockets and this timeout.)
  const maxConnections = options.maxConnections ?? 64;
  const requestTimeoutMs = options.requestTimeoutMs ?? 300_000;
  const reads = createHttpReads({
    origin,
    username,
    password,
    maxSockets: maxConnections,
    requestTimeoutMs,
    settings: dataSettings,
    userAgent: `depthgate (node ${process.version}) ${common.application}`,
  });
  const data = createClient({
    ...common,
    // Every body sent (inserts above all) goes as gzip, level 0: stored blocks, no compression, with the gzip trailer's
    // length and CRC-32. ClickHouse inserts a plain body that ends early — the client killed or its request aborted
    // mid-stream — up to where it stopped, chunked or with a Content-Length (measured on 18.16): a prefix of the batch
    // lands, and the whole batch sent again doubles it (a probe by its last row finds it absent; a shard's block
    // deduplication sees another block). A gzip body cut short fails to inflate and nothing lands: an insert is again
    // all or nothing (docs/history-internals.md, "Idempotence"). Level 0 costs a copy and a CRC (560 MB/s here, against
    // 150 for level 1).
    compression: { request: { codec: 'gzip', level: 0 } },
    max_open_connections: maxConnections,
    request_timeout: requestTimeoutMs,
    clickhouse_settings: dataSettings,
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
  if (options.cluster !== undefined) lit.cluster(options.cluster);
  // Asked once per process, on first use; a failed attempt is asked again by the next insert or read.
  let conditional: Promise<{ insert: ClickHouseSettings; read: ClickHouseSettings }> | undefined;
  const askConditional = async () => {
    const names = join(
      CONDITIONAL_SETTING_NAMES.map((n) => lit.name(n)),
      ', ',
    );
    const rs = await control.query({
      query: sql`SELECT name FROM system.settings WHERE name IN (${names})`.text,
      format: 'JSONEachRow',
    });
    const known = new Set((await rs.json<{ name: string }>()).map((r) => r.name));
    return conditionalSettings(known, options.cluster);
  };

  return {
    reads,
    data,
    control,
    db,
    database: options.database,
    cluster: options.cluster,
    where: loggableClickHouseUrl(options.url),
    async settingsFor(kind) {
      conditional ??= askConditional().catch((err: unknown) => {
        conditional = undefined;
        throw err;
      });
      return (await conditional)[kind];
    },
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
    kill: killInBatches(async (queryIds) => {
      try {
        // On a cluster the query runs on the server the shared address (a Service over every server) led it to, which
        // this request need not reach: the kill goes to every server through the distributed DDL queue, as the
        // migrations do. It is queued, not waited for (`distributed_ddl_task_timeout = 0`: the server answers once the
        // kill is queued), as a server that is down would hold the answer up to the DDL timeout (180 s) on the control
        // client's few sockets (the readiness probes'); that server runs the kill once it is back.
        const ids = join(
          queryIds.map((id) => lit.queryId(id)),
          ', ',
        );
        await control.command({
          query: sql`KILL QUERY${onCluster(options.cluster)} WHERE query_id IN (${ids}) ASYNC`.text,
          ...(options.cluster === undefined ? {} : { clickhouse_settings: { distributed_ddl_task_timeout: '0' } }),
        });
      } catch (err) {
        logger?.warn({ err: { message: (err as Error).message }, query_ids: queryIds }, 'KILL QUERY failed');
      }
    }),
    async close() {
      reads.close();
      await Promise.allSettled([data.close(), control.close()]);
    },
  };
}

/** Query ids one `KILL QUERY` statement names at most (about 50 bytes each: well inside `max_query_size`). */
export const KILL_BATCH_IDS = 500;

/**
 * One kill statement at a time: the first query id goes out at once; those asked while it is on its way wait for its
 * answer and then go together, in statements of at most KILL_BATCH_IDS. A flood of cancelled requests so costs a few
 * statements, not one each — on a cluster each statement is a task of the distributed DDL queue, in ZooKeeper, on
 * every server. `send` is to log its own failures (one is not retried: the server's `max_execution_time` ends the query).
 */
export function killInBatches(send: (queryIds: string[]) => Promise<void>): (queryId: string) => Promise<void> {
  let queued: { id: string; sent: () => void }[] = [];
  let sending = false;
  const pump = async () => {
    sending = true;
    while (queued.length > 0) {
      const batch = queued.slice(0, KILL_BATCH_IDS);
      queued = queued.slice(KILL_BATCH_IDS);
      await send(batch.map((q) => q.id)).catch(() => undefined);
      for (const q of batch) q.sent();
    }
    sending = false;
  };
  return (id) =>
    new Promise<void>((sent) => {
      queued.push({ id, sent });
      if (!sending) void pump();
    });
}
