import { QueryBudgetMetrics } from '@depthgate/history-store';
import { Counter, Gauge, Histogram, type Registry } from '@depthgate/service-kit';

export type Endpoint = 'tickers' | 'snapshots' | 'deltas' | 'trades' | 'bars' | 'coverage' | 'book';

/** Query metrics of the history service, registered on the service's registry. */
export class HistoryMetrics {
  /** Its query budget's (history_clickhouse_*: durations, the gate's queue). */
  readonly budget: QueryBudgetMetrics;
  readonly rowsStreamed: Counter<'endpoint'>;
  readonly timeouts: Counter<'endpoint'>;
  readonly cancellations: Counter<'endpoint'>;
  readonly windows: Histogram<'endpoint'>;
  readonly catalogueCache: Counter<'result'>;
  readonly cutStreams: Counter<'endpoint'>;
  readonly stalledReaders: Counter<'endpoint'>;
  readonly limitsDegraded: Gauge;

  constructor(registry: Registry) {
    this.budget = new QueryBudgetMetrics(registry, {
      prefix: 'history',
      concurrencySetting: 'CLICKHOUSE_QUERY_CONCURRENCY',
      durationHelp: 'ClickHouse queries (a window query includes streaming its rows to the caller)',
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
    this.limitsDegraded = new Gauge({
      name: 'history_stream_limits_degraded',
      help: '1 while Redis is unreachable and the bulk streams per key are counted per process instead of shared',
      registers: [registry],
    });
    this.stalledReaders = new Counter({
      name: 'history_stalled_readers_total',
      help: 'Responses cut because their caller took nothing of what waited to be sent for WRITE_TIMEOUT_MS',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    });
  }
}
