/**
 * The handle a process holds on the history tables: one per process, built at start-up (main.ts) and closed at
 * shutdown. It carries the connection, which never leaves this package: what callers do with a store is run the
 * named operations of this package on it — startup (migrateWhenReachable, verifyReadColumns, waitForSchema), the
 * reads of the history API (OrderBookQueries), the recorder's writes and probes (RecorderStore), the generator's
 * inserts — each through the querier (gate, time budget, cancellation, tag) or the insert functions.
 */
import { createConnection, type Connection, type ConnectionOptions } from './connection';
import { QueryScope } from './scope';

export type HistoryStoreOptions = ConnectionOptions;

/** Store → its connection, readable only by the modules of this package (index.ts does not export it). */
const connections = new WeakMap<HistoryStore, Connection>();

export class HistoryStore {
  /** The database holding the history tables. */
  readonly database: string;

  constructor(options: HistoryStoreOptions) {
    connections.set(this, createConnection(options));
    this.database = options.database;
  }

  /** Whether ClickHouse answers a trivial query within `timeoutMs` (readiness); never throws. */
  ping(timeoutMs?: number): Promise<boolean> {
    return connectionOf(this).ping(timeoutMs);
  }

  /**
   * The ClickHouse side of one unit of work (an HTTP request, a recorder operation): a time budget of `budgetMs`,
   * cancellation, and the queries it has running (killed when it is aborted). `answerStarted` tells the scope when
   * the caller's answer has begun, from which moment the budget is left to the server (see QueryScope).
   */
  scope(budgetMs: number, options: { answerStarted?: () => boolean } = {}): QueryScope {
    const connection = connectionOf(this);
    return new QueryScope((queryId) => connection.kill(queryId), budgetMs, options.answerStarted);
  }

  close(): Promise<void> {
    return connectionOf(this).close();
  }
}

/** The connection behind a store: for this package's modules and its testing entry only. */
export function connectionOf(store: HistoryStore): Connection {
  const connection = connections.get(store);
  if (!connection) throw new TypeError('not a HistoryStore');
  return connection;
}
