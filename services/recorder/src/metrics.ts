/**
 * The recorder's metrics (docs/operations.md, Metrics; the alert rules use recorder_lag_seconds,
 * recorder_gaps_total, recorder_buffer_rows and recorder_spool_bytes).
 */
import { EXCHANGE_KEYS, type ExchangeKey } from '@depthgate/platforms';
import { Counter, Gauge, Histogram, type Registry } from '@depthgate/service-kit';
import { GAP_REASONS, TRADE_GAP_REASONS } from './rows';
import { RECONCILE_OUTCOMES } from './ticker';

const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 120, 300, 900, 1800, 3600];

/**
 * A histogram that takes an observation with a weight (rows), so that the lag of 100,000 rows per second costs a
 * few dozen increments per batch instead of 100,000 observe() calls. Exposed in Prometheus' histogram format.
 */
export class WeightedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<
    string,
    { labels: Record<string, string>; counts: number[]; sum: number; count: number }
  >();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(labels: Record<string, string>, value: number, weight: number): void {
    const key = JSON.stringify(labels);
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= (this.buckets[i] as number)) {
        s.counts[i] = (s.counts[i] ?? 0) + weight;
        break;
      }
    }
    s.sum += value * weight;
    s.count += weight;
  }

  get(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: { labels: Record<string, string | number>; value: number; metricName: string }[];
  }> {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += s.counts[i] ?? 0;
        values.push({
          labels: { ...s.labels, le: this.buckets[i] as number },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values });
  }

  reset(): void {
    this.series.clear();
  }

  /** Total weight observed with these labels (tests). */
  total(labels: Record<string, string>): number {
    return this.series.get(JSON.stringify(labels))?.count ?? 0;
  }

  /** The smallest bucket bound under which a fraction `q` of the weight lies (benchmarks; Infinity beyond). */
  quantile(labels: Record<string, string> | undefined, q: number): number {
    const all = labels
      ? [this.series.get(JSON.stringify(labels))].filter((s) => s !== undefined)
      : [...this.series.values()];
    const counts = this.buckets.map((_, i) => all.reduce((n, s) => n + (s.counts[i] ?? 0), 0));
    const total = all.reduce((n, s) => n + s.count, 0);
    let cumulative = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      cumulative += counts[i] ?? 0;
      if (cumulative >= q * total) return this.buckets[i] as number;
    }
    return Infinity;
  }
}

export class RecorderMetrics {
  readonly messages: Counter<'exchange'>;
  readonly rowsProduced: Counter<'exchange' | 'table'>;
  readonly rowsWritten: Counter<'exchange' | 'table'>;
  readonly lag: WeightedHistogram;
  readonly gaps: Counter<'exchange' | 'reason'>;
  readonly tradeGaps: Counter<'exchange' | 'reason'>;
  readonly tradesDeduplicated: Counter<'exchange'>;
  readonly tradesBackfilled: Counter<'exchange'>;
  readonly tradeCountExcess: Counter<'exchange'>;
  readonly backfills: Counter<'exchange' | 'kind' | 'outcome'>;
  readonly bufferRows: Gauge<'exchange'>;
  readonly spoolBytes: Gauge<'exchange'>;
  readonly bufferBytes: Gauge;
  readonly inserts: Histogram<'table' | 'outcome'>;
  readonly insertFailures: Counter<'table' | 'kind'>;
  readonly probes: Counter<'result'>;
  readonly rejectedRows: Counter<'table'>;
  readonly spoolWriteFailures: Counter;
  readonly connections: Gauge<'exchange'>;
  readonly reconnects: Counter<'exchange' | 'reason'>;
  readonly tickers: Gauge<'exchange' | 'state'>;
  readonly clamped: Counter<'exchange'>;
  readonly reconciliations: Counter<'exchange' | 'result'>;
  readonly malformed: Counter<'exchange'>;
  readonly checksums: Counter<'exchange' | 'result'>;
  readonly discoveries: Counter<'exchange' | 'outcome'>;
  readonly paused: Gauge;

  /** `exchanges`: the recorded exchanges whose series start at 0 (the product's unless a test adds a fixture). */
  constructor(registry: Registry, exchanges: readonly string[] = EXCHANGE_KEYS) {
    const registers = [registry];
    this.messages = new Counter({
      name: 'recorder_messages_total',
      help: 'Feed messages received (data, heartbeats, control), per exchange',
      labelNames: ['exchange'] as const,
      registers,
    });
    this.rowsProduced = new Counter({
      name: 'recorder_rows_produced_total',
      help: 'Rows derived from the feeds (snapshot levels, deltas, gaps), before they are written',
      labelNames: ['exchange', 'table'] as const,
      registers,
    });
    this.rowsWritten = new Counter({
      name: 'recorder_rows_total',
      help: 'Rows acknowledged by ClickHouse (queryable), per exchange and table',
      labelNames: ['exchange', 'table'] as const,
      registers,
    });
    this.lag = new WeightedHistogram(
      'recorder_lag_seconds',
      'Time from a venue event (its timestamp; Gemini: its receipt) to its row being acknowledged by ClickHouse, per row',
      LAG_BUCKETS,
      registry,
    );
    this.gaps = new Counter({
      name: 'recorder_gaps_total',
      help: 'Gaps recorded in the gaps table, per exchange and reason',
      labelNames: ['exchange', 'reason'] as const,
      registers,
    });
    this.tradeGaps = new Counter({
      name: 'recorder_trade_gaps_total',
      help: 'Trades gaps recorded (windows whose trades could not be read back), per exchange and reason',
      labelNames: ['exchange', 'reason'] as const,
      registers,
    });
    this.tradesDeduplicated = new Counter({
      name: 'recorder_trades_deduplicated_total',
      help: 'Trades dropped because the ticker already holds their id (a replay, a backfill overlapping the feed)',
      labelNames: ['exchange'] as const,
      registers,
    });
    this.tradesBackfilled = new Counter({
      name: 'recorder_trades_backfilled_total',
      help: "Trades read back from the venue's REST API after the feed missed them",
      labelNames: ['exchange'] as const,
      registers,
    });
    this.tradeCountExcess = new Counter({
      name: 'recorder_trade_count_excess_total',
      help: 'Book messages whose count of the traded quantity was below the trades received (the trade count audit; should stay 0)',
      labelNames: ['exchange'] as const,
      registers,
    });
    this.backfills = new Counter({
      name: 'recorder_backfills_total',
      help: 'Trade windows read back from REST, per exchange, kind (missed, audit) and outcome (complete, incomplete, failed, abandoned, none)',
      labelNames: ['exchange', 'kind', 'outcome'] as const,
      registers,
    });
    this.bufferRows = new Gauge({
      name: 'recorder_buffer_rows',
      help: 'Rows received and not yet acknowledged by ClickHouse or spooled, per exchange',
      labelNames: ['exchange'] as const,
      registers,
    });
    this.bufferBytes = new Gauge({
      name: 'recorder_buffer_bytes',
      help: "Bytes of the writer's batches held in memory (not yet inserted or spooled): the feeds pause past RECORDER_BUFFER_MAX_BYTES when the spool cannot take them",
      registers,
    });
    this.spoolBytes = new Gauge({
      name: 'recorder_spool_bytes',
      help: 'Bytes of rows waiting in the spool because ClickHouse did not take them yet, per exchange',
      labelNames: ['exchange'] as const,
      registers,
    });
    this.inserts = new Histogram({
      name: 'recorder_insert_duration_seconds',
      help: 'Duration of ClickHouse inserts, per table and outcome',
      labelNames: ['table', 'outcome'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.insertFailures = new Counter({
      name: 'recorder_insert_failures_total',
      help: 'Failed insert attempts (retried after a probe), per table and kind',
      labelNames: ['table', 'kind'] as const,
      registers,
    });
    this.probes = new Counter({
      name: 'recorder_probes_total',
      help: 'Probes before a retry: was the uncertain batch already written?',
      labelNames: ['result'] as const,
      registers,
    });
    this.rejectedRows = new Counter({
      name: 'recorder_rejected_rows_total',
      help: "Rows ClickHouse refused as malformed (kept in the spool folder's rejected/ for inspection)",
      labelNames: ['table'] as const,
      registers,
    });
    this.connections = new Gauge({
      name: 'recorder_connections',
      help: 'Open feed connections, per exchange',
      labelNames: ['exchange'] as const,
      registers,
    });
    this.reconnects = new Counter({
      name: 'recorder_reconnects_total',
      help: 'Feed connections replaced, per exchange and reason',
      labelNames: ['exchange', 'reason'] as const,
      registers,
    });
    this.tickers = new Gauge({
      name: 'recorder_tickers',
      help: 'Tickers being recorded, per exchange and state (live: book valid; syncing: waiting for a snapshot)',
      labelNames: ['exchange', 'state'] as const,
      registers,
    });
    this.clamped = new Counter({
      name: 'recorder_ts_clamped_total',
      help: 'Deltas whose venue timestamp was below the last snapshot and was raised to it',
      labelNames: ['exchange'] as const,
      registers,
    });
    this.reconciliations = new Counter({
      name: 'recorder_reconciliations_total',
      help: "Reconciliation reads of the venue's REST book, per exchange and result: match (equal to a state of our book), mismatch (never within the grace: a gap 'divergence'), void (the book was lost or re-based meanwhile), error (the request failed)",
      labelNames: ['exchange', 'result'] as const,
      registers,
    });
    this.discoveries = new Counter({
      name: 'recorder_discovery_refreshes_total',
      help: "Refreshes of the ticker lists from the venues' REST listings, per exchange and outcome",
      labelNames: ['exchange', 'outcome'] as const,
      registers,
    });
    this.malformed = new Counter({
      name: 'recorder_malformed_messages_total',
      help: "Venue messages that could not be read (not JSON, cut short, a needed field missing or malformed): each is logged and its books become a gap 'malformed_message'; a trade read back from REST that the tables cannot hold becomes a trades gap at its moment",
      labelNames: ['exchange'] as const,
      registers,
    });
    this.checksums = new Counter({
      name: 'recorder_checksums_total',
      help: "Venue book checksums checked against the recorder's book (Polymarket CLOB hash): match, explained (a REST book's settings reproduce it), divergence (confirmed: a gap), unchecked (the asset's settings not known yet)",
      labelNames: ['exchange', 'result'] as const,
      registers,
    });
    this.paused = new Gauge({
      name: 'recorder_feeds_paused',
      help: '1 while the feeds are paused: the spool is full, or the buffer is and the spool cannot be written',
      registers,
    });
    this.spoolWriteFailures = new Counter({
      name: 'recorder_spool_write_failures_total',
      help: 'Writes to the spool that failed (a full or failing disk): the batches stayed in memory',
      registers,
    });
    for (const exchange of exchanges) {
      this.bufferRows.set({ exchange }, 0);
      this.spoolBytes.set({ exchange }, 0);
      for (const reason of GAP_REASONS) this.gaps.inc({ exchange, reason }, 0);
      for (const reason of TRADE_GAP_REASONS) this.tradeGaps.inc({ exchange, reason }, 0);
      this.tradesDeduplicated.inc({ exchange }, 0);
      this.tradesBackfilled.inc({ exchange }, 0);
      this.tradeCountExcess.inc({ exchange }, 0);
      this.malformed.inc({ exchange }, 0);
      for (const result of RECONCILE_OUTCOMES) this.reconciliations.inc({ exchange, result }, 0);
    }
  }

  gap(exchange: ExchangeKey, reason: string): void {
    this.gaps.inc({ exchange, reason });
  }
}
