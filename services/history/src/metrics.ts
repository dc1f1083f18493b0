import type { QueryObserver } from '@depthgate/history-store';
import { Counter, Gauge, Histogram, type Registry } from '@depthgate/service-kit';

export type Endpoint = 'tickers' | 'snapshots' | 'deltas' | 'trades' | 'bars' | 'coverage' | 'book';

/** Query metrics of the history service, registered on the service's registry. */
export class HistoryMetrics {
  readonly queryDuration: Histogram<'query' | 'outcome'>;
  readonly rowsStreamed: Counter<'endpoint'>;
  readonly timeouts: Counter<'endpoint'>;
  readonly cancellations: Counter<'endpoint'>;
  readonly windows: Histogram<'endpoint'>;
  readonly catalogueCache: Counter<'result'>;
  readonly cutStreams: Counter<'endpoint'>;
  readonly queueWaiting: Gauge;
  readonly queueWait: Histogram;
  /** What the store's querier reports (queries `catalogue`, `tickers`, `window`), into the metrics above. */
  readonly queries: QueryObserver = {
    waiting: (delta) => (delta > 0 ? this.queueWaiting.inc() : this.queueWaiting.dec()),
    waited: (seconds) => this.queueWait.observe(seconds),
    ended: (name, outcome, seconds) => this.queryDuration.observe({ query: name, outcome }, seconds),
  };

  constructor(registry: Registry) {
    this.queryDuration = new Histogram({
      name: 'history_clickhouse_query_duration_seconds',
      help: 'Duration of ClickHouse queries (a window query includes streaming its rows to the caller), by outcome',
      labelNames: ['query', 'outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.rowsStreamed = new Counter({
      name: 'history_rows_streamed_total',
      help: 'Snapshot, delta and trade rows sent to callers',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    });
    this.timeouts = new Counter({
      name: 'history_query_timeouts_total',
      help: 'Requests whose ClickHouse work ran over its time budget (answered 503 query_timeout, or cut mid-stream)',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    });
    this.cancellations = new Counter({
      name: 'history_query_cancellations_total',
      help: 'Requests whose caller went away before the answer was complete; their queries were killed',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    });
    this.windows = new Histogram({
      name: 'history_response_windows',
      help: 'Time windows (ClickHouse queries) needed for one snapshots/deltas/trades/bars response',
      labelNames: ['endpoint'] as const,
      buckets: [1, 2, 3, 4, 6, 8, 12],
      registers: [registry],
    });
    this.catalogueCache = new Counter({
      name: 'history_catalogue_cache_total',
      help: 'Ticker catalogue lookups served from the in-process cache (hit) or read from ClickHouse (miss)',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    this.cutStreams = new Counter({
      name: 'history_cut_streams_total',
      help: 'Responses cut mid-stream because ClickHouse failed after the first rows were sent',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    });
    this.queueWaiting = new Gauge({
      name: 'history_clickhouse_queue_waiting',
      help: 'Queries waiting for a place under CLICKHOUSE_QUERY_CONCURRENCY',
      registers: [registry],
    });
    this.queueWait = new Histogram({
      name: 'history_clickhouse_queue_wait_seconds',
      help: 'Time a query waited for a place under CLICKHOUSE_QUERY_CONCURRENCY before it was sent',
      buckets: [0.0001, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  }
}
