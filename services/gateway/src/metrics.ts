import { Counter, Gauge, Histogram, type Registry } from '@depthgate/service-kit';

/** Gateway-specific metrics (requests by platform and status come from service-kit's http metrics). */
export class GatewayMetrics {
  readonly upstreamRequests: Counter<'platform' | 'target' | 'outcome'>;
  readonly upstreamDuration: Histogram<'platform'>;
  readonly cache: Counter<'platform' | 'result'>;
  readonly budgetRejections: Counter<'platform'>;
  readonly budgetWaits: Counter<'platform'>;
  readonly budgetDegraded: Gauge;
  readonly budgetPerSecond: Gauge<'platform' | 'target'>;
  readonly circuitState: Gauge<'target'>;
  readonly inflight: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.upstreamRequests = new Counter({
      name: 'gateway_upstream_requests_total',
      help: 'Upstream calls by platform, target and outcome (2xx..5xx, timeout, error)',
      labelNames: ['platform', 'target', 'outcome'] as const,
      registers,
    });
    this.upstreamDuration = new Histogram({
      name: 'gateway_upstream_duration_seconds',
      help: 'Time from sending an upstream request to its response headers',
      labelNames: ['platform'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.cache = new Counter({
      name: 'gateway_cache_total',
      help: 'How requests were answered: HIT (micro-cache), MISS (own upstream call), COALESCED (shared call)',
      labelNames: ['platform', 'result'] as const,
      registers,
    });
    this.budgetRejections = new Counter({
      name: 'gateway_upstream_budget_rejections_total',
      help: 'Requests refused with 429 upstream_rate_limited because the upstream budget was exhausted',
      labelNames: ['platform'] as const,
      registers,
    });
    this.budgetWaits = new Counter({
      name: 'gateway_upstream_budget_waits_total',
      help: 'Upstream calls that waited for a budget slot',
      labelNames: ['platform'] as const,
      registers,
    });
    this.budgetDegraded = new Gauge({
      name: 'gateway_budget_degraded',
      help: '1 while Redis is unreachable and upstream budgets are enforced per replica',
      registers,
    });
    this.budgetPerSecond = new Gauge({
      name: 'gateway_upstream_budget_per_second',
      help: 'The upstream budget of each target (requests per second, shared by every replica); absent: unlimited',
      labelNames: ['platform', 'target'] as const,
      registers,
    });
    this.circuitState = new Gauge({
      name: 'gateway_circuit_state',
      help: 'Circuit per upstream target: 0 closed, 1 half-open, 2 open',
      labelNames: ['target'] as const,
      registers,
    });
    this.inflight = new Gauge({
      name: 'gateway_upstream_inflight',
      help: 'Upstream calls in flight',
      registers,
    });
  }

  /** The budget of every target that has one (budget use on a dashboard: its upstream calls' rate over this). */
  budgets(targets: readonly { id: string; platform: string; budget: { perSecond: number } | null }[]): void {
    for (const t of targets) {
      if (t.budget !== null) this.budgetPerSecond.set({ platform: t.platform, target: t.id }, t.budget.perSecond);
    }
  }
}
