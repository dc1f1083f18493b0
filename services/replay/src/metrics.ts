import type { QueryObserver } from '@depthgate/history-store';
import { Counter, Gauge, Histogram, type Registry } from '@depthgate/service-kit';

/** Metrics of the replay service, on its registry (its own names: its ClickHouse budget is its own). */
export class ReplayMetrics {
  readonly queryDuration: Histogram<'query' | 'outcome'>;
  readonly queueWaiting: Gauge;
  readonly queueWait: Histogram;
  readonly messages: Counter<'exchange'>;
  readonly replays: Counter<'exchange' | 'outcome'>;
  readonly limitsDegraded: Gauge;
  /** What the store's querier reports, into the metrics above. */
  readonly queries: QueryObserver = {
    waiting: (delta) => (delta > 0 ? this.queueWaiting.inc() : this.queueWaiting.dec()),
    waited: (seconds) => this.queueWait.observe(seconds),
    ended: (name, outcome, seconds) => this.queryDuration.observe({ query: name, outcome }, seconds),
  };

  constructor(registry: Registry) {
    this.queryDuration = new Histogram({
      name: 'replay_clickhouse_query_duration_seconds',
      help: 'Duration of the replay service’s ClickHouse queries, by outcome',
      labelNames: ['query', 'outcome'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.queueWaiting = new Gauge({
      name: 'replay_clickhouse_queue_waiting',
      help: 'Queries waiting for a place under REPLAY_QUERY_CONCURRENCY',
      registers: [registry],
    });
    this.queueWait = new Histogram({
      name: 'replay_clickhouse_queue_wait_seconds',
      help: 'Time a query waited for a place under REPLAY_QUERY_CONCURRENCY before it was sent',
      buckets: [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    });
    this.messages = new Counter({
      name: 'replay_messages_total',
      help: 'Native venue messages sent to callers',
      labelNames: ['exchange'] as const,
      registers: [registry],
    });
    this.replays = new Counter({
      name: 'replay_streams_total',
      help: 'Replays answered, by how they ended: complete, cancelled (the caller went away), cut (a failure after the first line)',
      labelNames: ['exchange', 'outcome'] as const,
      registers: [registry],
    });
    this.limitsDegraded = new Gauge({
      name: 'replay_ws_limits_degraded',
      help: '1 while Redis is unreachable and per-key replay socket limits are counted per process',
      registers: [registry],
    });
  }
}
