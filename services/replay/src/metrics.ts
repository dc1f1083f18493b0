import { QueryBudgetMetrics } from '@depthgate/history-store';
import { Counter, Gauge, type Registry } from '@depthgate/service-kit';

/** Metrics of the replay service, on its registry (its own names: its ClickHouse budget is its own). */
export class ReplayMetrics {
  /** Its query budget's (replay_clickhouse_*: durations, the gate's queue). */
  readonly budget: QueryBudgetMetrics;
  readonly messages: Counter<'exchange'>;
  readonly replays: Counter<'exchange' | 'outcome'>;
  readonly limitsDegraded: Gauge;

  constructor(registry: Registry) {
    this.budget = new QueryBudgetMetrics(registry, {
      prefix: 'replay',
      concurrencySetting: 'REPLAY_QUERY_CONCURRENCY',
      durationHelp: 'the replay service’s ClickHouse queries',
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
