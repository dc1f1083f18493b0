import { Gauge, Histogram, type Registry } from '@depthgate/service-kit';
import type { QueryObserver } from './querier';

export interface QueryBudgetMetricsOptions {
  /** The service's metric prefix (`history`, `replay`): its query budget is its own, and so are its series. */
  prefix: string;
  /** The setting that bounds its queries at once, named in the help texts. */
  concurrencySetting: string;
  /** What a query's duration includes, for the help text (after "Duration of …"). */
  durationHelp: string;
}

/**
 * The metrics of one service's ClickHouse query budget — query durations by outcome, queries waiting at the gate and
 * how long they waited — and the observer that feeds them (`QuerierOptions.observer`). One definition for every
 * service that reads the history tables (the history API and the replay), each under its own prefix.
 */
export class QueryBudgetMetrics {
  readonly queryDuration: Histogram<'query' | 'outcome'>;
  readonly queueWaiting: Gauge;
  readonly queueWait: Histogram;
  readonly observer: QueryObserver = {
    waiting: (delta) => (delta > 0 ? this.queueWaiting.inc() : this.queueWaiting.dec()),
    waited: (seconds) => this.queueWait.observe(seconds),
    ended: (name, outcome, seconds) => this.queryDuration.observe({ query: name, outcome }, seconds),
  };

  constructor(registry: Registry, o: QueryBudgetMetricsOptions) {
    this.queryDuration = new Histogram({
      name: `${o.prefix}_clickhouse_query_duration_seconds`,
      help: `Duration of ${o.durationHelp}, by outcome`,
      labelNames: ['query', 'outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.queueWaiting = new Gauge({
      name: `${o.prefix}_clickhouse_queue_waiting`,
      help: `Queries waiting for a place under ${o.concurrencySetting}`,
      registers: [registry],
    });
    this.queueWait = new Histogram({
      name: `${o.prefix}_clickhouse_queue_wait_seconds`,
      help: `Time a query waited for a place under ${o.concurrencySetting} before it was sent`,
      buckets: [0.0001, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  }
}
