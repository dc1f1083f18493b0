/**
 * The recorder, put together: feeds → tickers → TSV sink → writer → ClickHouse (docs/history-internals.md, "Recorder").
 * `startRecorder` is what main.ts runs and what the integration tests run in-process; `stop()` is the SIGTERM path.
 */
import { feedLiveness, signNow, type ExchangeKey } from '@depthgate/platforms';
import { RecorderStore, verifyExchanges, waitForSchema, type HistoryStore } from '@depthgate/history-store';
import type { Logger, Registry } from '@depthgate/service-kit';
import type { RecorderConfig } from './config';
import { CanonicalMemo } from '@depthgate/feeds';
import type { RecorderMetrics } from './metrics';
import { RestClient } from './venues/rest';
import { venueProtocol, type VenueProtocol } from './venues/types';
import type { TradeHistory } from './venues/trades';
import { Venue } from './venues/venue';
import { exchangeIndex } from './writer/batch';
import { SINK_TABLES, TsvSink, type SinkTable } from './writer/sink';
import { Writer } from './writer/writer';
import { startRedundancy, type Redundancy } from './redundancy/redundancy';

export interface RecorderDeps {
  config: RecorderConfig;
  logger: Logger;
  metrics: RecorderMetrics;
  store: HistoryStore;
  /** Where the redundancy's metrics register (redundant mode; main.ts passes the service's registry). */
  registry?: Registry;
  /**
   * Redundant mode: this recorder's lease is lost (deposed); it must stop and start again as a new term. Default:
   * the recorder stops itself.
   */
  onFatal?: (reason: string) => void;
  /**
   * The recorder as soon as it can be stopped, before its feeds start: a SIGTERM while a venue is still discovering
   * (another may record already) stops and flushes it. The same object startRecorder resolves with.
   */
  onStopable?: (recorder: Recorder) => void;
}

export interface Recorder {
  readonly venues: ReadonlyMap<ExchangeKey, Venue>;
  readonly writer: Writer;
  readonly sink: TsvSink;
  /** Redundant mode's parts (undefined: solo). */
  readonly redundancy: Redundancy | undefined;
  /** Started (spool replayed, feeds running) and not stopping. */
  ready(): boolean;
  /** Stops reading the feeds, flushes what is buffered (or spools it), closes. Idempotent. */
  stop(): Promise<void>;
}

/** Epoch ms that never goes backwards (a clock step back must not reorder our receive-time stamps). */
export function monotoneClock(): () => number {
  let last = 0;
  return () => {
    const t = Date.now();
    if (t > last) last = t;
    return last;
  };
}

/** The feed protocol and REST client of one recorded exchange, from its adapter (venues/registry.ts). */
function venueParts(
  exchange: ExchangeKey,
  config: RecorderConfig,
): { protocol: VenueProtocol; rest: RestClient; trades: TradeHistory | undefined } {
  const info = config.registry.info(exchange);
  const adapter = config.adapters[exchange];
  const platform = config.platforms[info.platform];
  if (!adapter || !platform) throw new Error(`${exchange} has no recorder adapter or platform configuration`);
  const settings = config.venues[exchange];
  const { signer } = platform;
  const protocol = venueProtocol(
    adapter.protocol({
      settings: settings.adapter,
      subscribeBatch: config.RECORDER_SUBSCRIBE_BATCH,
      trades: config.RECORDER_TRADES,
      signer,
      credentials: platform.credentials,
    }),
    { exchange, platform: info.title, feedUrl: platform.feeds.main as string, signer },
  );
  const baseUrl = platform.urls.main as string;
  const host = new URL(baseUrl).host;
  const rest = new RestClient({
    baseUrl,
    ratePerSecond: settings.restRate,
    timeoutMs: config.RECORDER_REST_TIMEOUT_MS,
    sign:
      adapter.signedRest && signer
        ? (method, path, now) => signNow(signer, { method, path, query: '', body: '', host }, now)
        : undefined,
  });
  return { protocol, rest, trades: config.RECORDER_TRADES ? adapter.trades : undefined };
}

/** How the exchange's feed is judged alive: its venue's heartbeat rhythm (the gateway's rule too), or the override. */
function liveness(exchange: ExchangeKey, config: RecorderConfig) {
  const platform = config.platforms[config.registry.info(exchange).platform];
  if (!platform) throw new Error(`${exchange}: its platform is not configured`);
  return feedLiveness(platform.descriptor, {
    stallMs: config.RECORDER_STALL_TIMEOUT_MS,
    pingMs: config.RECORDER_PING_INTERVAL_MS,
    // A false alarm here is a recorded gap, not a resubscription: one whole heartbeat may be missed.
    falseAlarm: 'gap',
  });
}

export async function startRecorder(deps: RecorderDeps): Promise<Recorder> {
  const { config, logger, metrics } = deps;
  const now = monotoneClock();
  /** The exchange behind a per-exchange counter's index (a spool of an older build may count one no longer known). */
  const exchangeAt = (i: number): string => config.registry.byCode(i + 1) ?? `code_${i + 1}`;
  const venues = new Map<ExchangeKey, Venue>();
  let started = false;
  let stopping: Promise<void> | undefined;

  // The recorder never migrates: the history service or its migrate CLI does.
  await waitForSchema(deps.store, { timeoutMs: config.CLICKHOUSE_STARTUP_TIMEOUT_MS, logger });
  await verifyExchanges(deps.store, config.registry);
  const store = new RecorderStore(deps.store);
  // Redundant mode (RECORDER_REDIS_URL): a new term and its lease before anything is written.
  const self: { stop?: () => void } = {};
  const redundancy = await startRedundancy({
    config,
    logger,
    registry: deps.registry,
    store,
    now,
    onFatal: (reason) => {
      if (deps.onFatal) deps.onFatal(reason);
      else self.stop?.();
    },
  });

  const writer = new Writer({
    store,
    ...redundancy?.writerOptions(),
    spoolDir: config.RECORDER_SPOOL_DIR,
    maxMemoryBytes: config.RECORDER_BUFFER_MAX_BYTES,
    maxSpoolBytes: config.RECORDER_SPOOL_MAX_BYTES,
    spoolFileBytes: config.RECORDER_SPOOL_FILE_BYTES,
    insertTimeoutMs: config.RECORDER_INSERT_TIMEOUT_MS,
    logger: logger.child({ component: 'writer' }),
    now,
    onPressure: (paused) => {
      metrics.paused.set(paused ? 1 : 0);
      redundancy?.controller?.onSpoolFull(paused);
      for (const v of venues.values()) {
        if (paused) v.pause();
        else v.resume();
      }
    },
    onWritten: (batch, ackAt) => {
      for (let i = 0; i < batch.rowsByExchange.length; i++) {
        const n = batch.rowsByExchange[i] ?? 0;
        if (n > 0) metrics.rowsWritten.inc({ exchange: exchangeAt(i), table: batch.table }, n);
      }
      // Gaps and verification points are about the rows, not rows of the feeds: no lag of their own.
      if (batch.table === 'gaps' || batch.table === 'verifications') return;
      const runs = batch.runs;
      for (let i = 0; i + 2 < runs.length; i += 3) {
        const exchange = exchangeAt(runs[i] as number);
        metrics.lag.observe({ exchange }, Math.max(0, ackAt - (runs[i + 1] as number)) / 1000, runs[i + 2] as number);
      }
    },
    onInsert: (table, outcome, seconds, kind) => {
      if (outcome === 'ok') metrics.inserts.observe({ table, outcome }, seconds);
      else metrics.insertFailures.inc({ table, kind: kind ?? 'error' });
    },
    onProbe: (result) => metrics.probes.inc({ result }),
    onRejected: (batch) => metrics.rejectedRows.inc({ table: batch.table }, batch.rows),
    onSpoolFailure: () => metrics.spoolWriteFailures.inc(),
  });
  const sink = new TsvSink(
    {
      maxRows: config.RECORDER_BATCH_MAX_ROWS,
      maxBytes: config.RECORDER_BATCH_MAX_BYTES,
      maxDelayMs: config.RECORDER_BATCH_MAX_DELAY_MS,
    },
    now,
    (batch) => writer.enqueue(batch),
    config.registry.codes,
    // Counted where the rows are taken to be stored: a standby's gaps (held in its buffer, most never written) are not.
    (exchange, reason, stream) =>
      stream === 'trades' ? metrics.tradeGaps.inc({ exchange, reason }) : metrics.gap(exchange, reason),
  );
  // Redundant mode: the tickers write through the routing sink (owned: the writer's sink; standby: the buffer).
  const bound = redundancy?.bind({ writer, sink, venues });
  const tickerSink = bound?.routing ?? sink;
  writer.start();

  // What an earlier run spooled goes first: each ticker's resume point must include it.
  if (!writer.spoolEmpty) {
    logger.info({ bytes: writer.spoolBytes() }, 'replaying the spool before recording');
    while (!writer.spoolEmpty) await new Promise((r) => setTimeout(r, 100));
    logger.info('spool replayed');
  }
  bound?.controller.spoolReplayed();

  const price = new CanonicalMemo();
  for (const exchange of config.exchanges) {
    const { protocol, rest, trades } = venueParts(exchange, config);
    if (protocol.missingCredentials) {
      logger.warn(
        { exchange, platform: protocol.platform },
        `${protocol.platform}'s book feed needs credentials and none are configured: not recorded`,
      );
      continue;
    }
    const settings = config.venues[exchange];
    const alive = liveness(exchange, config);
    venues.set(
      exchange,
      new Venue({
        protocol,
        rest,
        store,
        sink: tickerSink,
        metrics,
        logger,
        now,
        price,
        selection: { tickers: settings.tickers, prefixes: settings.prefixes, series: settings.series },
        maxTickers: config.RECORDER_MAX_TICKERS,
        discoveryIntervalMs: config.RECORDER_DISCOVERY_INTERVAL_MS,
        tickersPerConnection: config.RECORDER_TICKERS_PER_CONNECTION,
        snapshotIntervalMs: config.RECORDER_SNAPSHOT_INTERVAL_MS,
        quietMs: config.RECORDER_SNAPSHOT_QUIET_MS,
        stallTimeoutMs: alive.stallMs,
        pingIntervalMs: alive.pingMs,
        reconnectMinMs: config.RECORDER_RECONNECT_MIN_MS,
        reconnectMaxMs: config.RECORDER_RECONNECT_MAX_MS,
        reconcileIntervalMs: settings.reconcile ? config.RECORDER_RECONCILE_INTERVAL_MS : 0,
        reconcileGraceMs: config.RECORDER_RECONCILE_GRACE_MS,
        reconcileReadsPerSecond: settings.reconcileReadsPerSecond,
        trades,
        backfillMaxPages: config.RECORDER_TRADES_BACKFILL_MAX_PAGES,
        backfillDelayMs: config.RECORDER_TRADES_BACKFILL_DELAY_MS,
        tradeAuditIntervalMs: config.RECORDER_TRADES_AUDIT_INTERVAL_MS,
        ...(bound && redundancy
          ? {
              roles: (e: ExchangeKey, tickers: readonly string[]) => bound.controller.admit(e, tickers),
              left: (e: ExchangeKey, ticker: string) => bound.controller.forget(e, ticker),
              onLost: (rec, fromTs, reason) => redundancy.onLost(rec, fromTs, reason),
            }
          : {}),
      }),
    );
  }

  const produced: Record<SinkTable, number[]> = { deltas: [], snapshots: [], trades: [], gaps: [], verifications: [] };
  const gauges = () => {
    const buffered = writer.bufferedRows();
    const open = sink.openRows();
    const spooled = writer.spoolBytesByExchange();
    metrics.bufferBytes.set(writer.bufferedBytes());
    for (const e of config.registry.list) {
      const exchange = e.key;
      const i = exchangeIndex(e.code);
      metrics.bufferRows.set({ exchange }, (buffered[i] ?? 0) + (open[i] ?? 0));
      metrics.spoolBytes.set({ exchange }, spooled[i] ?? 0);
      for (const table of SINK_TABLES) {
        const n = (sink.produced[table][i] ?? 0) - (produced[table][i] ?? 0);
        if (n > 0) {
          metrics.rowsProduced.inc({ exchange, table }, n);
          produced[table][i] = sink.produced[table][i] ?? 0;
        }
      }
    }
  };
  const sweep = setInterval(() => {
    const t = now();
    for (const v of venues.values()) v.sweep(t);
    redundancy?.sweep(t);
    sink.tick(t);
    gauges();
  }, 100);
  sweep.unref();

  const recorder: Recorder = {
    venues,
    writer,
    sink,
    redundancy,
    ready: () =>
      started &&
      stopping === undefined &&
      (bound === undefined || ([...venues.values()].every((v) => v.settled) && bound.controller.ready())),
    stop() {
      stopping ??= (async () => {
        // A reconciliation read in flight is answered while the tickers are still recorded here (Venue).
        await Promise.all([...venues.values()].map((v) => v.finishReconciliation()));
        // Redundant mode: the tickers a live peer can take are handed over first (the peer records on).
        await bound?.controller.releaseAll();
        logger.info('recorder stopping: closing the feeds, flushing buffered rows');
        await Promise.all([...venues.values()].map((v) => v.stop()));
        clearInterval(sweep);
        sink.tick(now(), true);
        await writer.close(config.RECORDER_SHUTDOWN_FLUSH_MS);
        gauges();
        await redundancy?.close();
        logger.info('recorder stopped');
      })();
      return stopping;
    },
  };
  self.stop = () => void recorder.stop();
  deps.onStopable?.(recorder);

  await Promise.all([...venues.values()].map((v) => v.start()));
  // Stopped while the venues started (a SIGTERM during discovery): nothing more to start.
  if (stopping !== undefined) return recorder;
  bound?.controller.start();
  started = true;
  logger.info({ exchanges: [...venues.keys()] }, 'recording');
  return recorder;
}
