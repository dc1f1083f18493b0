/**
 * The recorder, put together: feeds → tickers → TSV sink → writer → ClickHouse (docs/history.md, "Recorder").
 * `startRecorder` is what main.ts runs and what the integration tests run in-process; `stop()` is the SIGTERM path.
 */
import { EXCHANGE_KEYS, signNow, type ExchangeKey } from '@depthgate/platforms';
import { RecorderStore, waitForSchema, type HistoryStore } from '@depthgate/history-store';
import type { Logger } from '@depthgate/service-kit';
import type { RecorderConfig } from './config';
import { CanonicalMemo } from '@depthgate/feeds';
import type { RecorderMetrics } from './metrics';
import { geminiProtocol } from './venues/gemini';
import { kalshiProtocol } from './venues/kalshi';
import { polymarketUsProtocol } from './venues/polymarket-us';
import { RestClient } from './venues/rest';
import type { VenueProtocol } from './venues/types';
import { Venue } from './venues/venue';
import { EXCHANGE_INDEX } from './writer/batch';
import { TsvSink } from './writer/sink';
import { Writer } from './writer/writer';

export interface RecorderDeps {
  config: RecorderConfig;
  logger: Logger;
  metrics: RecorderMetrics;
  store: HistoryStore;
}

export interface Recorder {
  readonly venues: ReadonlyMap<ExchangeKey, Venue>;
  readonly writer: Writer;
  readonly sink: TsvSink;
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

function protocolFor(exchange: ExchangeKey, config: RecorderConfig): VenueProtocol {
  switch (exchange) {
    case 'venue_b':
      return kalshiProtocol({
        feedUrl: config.platforms['venue-b'].feeds.main,
        signer: config.platforms['venue-b'].signer,
        subscribeBatch: config.RECORDER_SUBSCRIBE_BATCH,
      });
    case 'venue_c':
      return geminiProtocol({
        feedUrl: config.platforms['venue-c'].feeds.main,
        subscribeBatch: config.RECORDER_SUBSCRIBE_BATCH,
        resubscribeDelayMs: config.RECORDER_GEMINI_RESUBSCRIBE_DELAY_MS,
      });
    case 'venue_a_us':
      return polymarketUsProtocol({
        feedUrl: config.platforms['venue-a-us'].feeds.main,
        signer: config.platforms['venue-a-us'].signer,
        subscribeBatch: config.RECORDER_SUBSCRIBE_BATCH,
        debounced: config.RECORDER_POLYMARKET_US_DEBOUNCED,
      });
  }
}

function restFor(exchange: ExchangeKey, config: RecorderConfig): RestClient {
  const common = { ratePerSecond: config.venues[exchange].restRate, timeoutMs: config.RECORDER_REST_TIMEOUT_MS };
  switch (exchange) {
    case 'venue_b': {
      // Kalshi: every call signed when credentials are set (newer specs mark the orderbook endpoints private).
      const { urls, signer } = config.platforms['venue-b'];
      const host = new URL(urls.main).host;
      return new RestClient({
        ...common,
        baseUrl: urls.main,
        sign: signer
          ? (method, path, now) => signNow(signer, { method, path, query: '', body: '', host }, now)
          : undefined,
      });
    }
    case 'venue_c':
      return new RestClient({ ...common, baseUrl: config.platforms['venue-c'].urls.main });
    case 'venue_a_us':
      // The public host (gateway.polymarket.us) serves listings and books without authentication [V].
      return new RestClient({ ...common, baseUrl: config.platforms['venue-a-us'].urls.main });
  }
}

export async function startRecorder(deps: RecorderDeps): Promise<Recorder> {
  const { config, logger, metrics } = deps;
  const now = monotoneClock();
  const venues = new Map<ExchangeKey, Venue>();
  let started = false;
  let stopping: Promise<void> | undefined;

  // The recorder never migrates: the history service or its migrate CLI does.
  await waitForSchema(deps.store, { timeoutMs: config.CLICKHOUSE_STARTUP_TIMEOUT_MS, logger });
  const store = new RecorderStore(deps.store);

  const writer = new Writer({
    store,
    spoolDir: config.RECORDER_SPOOL_DIR,
    maxMemoryBytes: config.RECORDER_BUFFER_MAX_BYTES,
    maxSpoolBytes: config.RECORDER_SPOOL_MAX_BYTES,
    spoolFileBytes: config.RECORDER_SPOOL_FILE_BYTES,
    insertTimeoutMs: config.RECORDER_INSERT_TIMEOUT_MS,
    logger: logger.child({ component: 'writer' }),
    now,
    onPressure: (paused) => {
      metrics.paused.set(paused ? 1 : 0);
      for (const v of venues.values()) {
        if (paused) v.pause();
        else v.resume();
      }
    },
    onWritten: (batch, ackAt) => {
      for (let i = 0; i < 3; i++) {
        const n = batch.rowsByExchange[i] ?? 0;
        if (n > 0) metrics.rowsWritten.inc({ exchange: EXCHANGE_KEYS[i] as string, table: batch.table }, n);
      }
      if (batch.table === 'gaps') return;
      const runs = batch.runs;
      for (let i = 0; i + 2 < runs.length; i += 3) {
        const exchange = EXCHANGE_KEYS[runs[i] as number] as string;
        metrics.lag.observe({ exchange }, Math.max(0, ackAt - (runs[i + 1] as number)) / 1000, runs[i + 2] as number);
      }
    },
    onInsert: (table, outcome, seconds, kind) => {
      if (outcome === 'ok') metrics.inserts.observe({ table, outcome }, seconds);
      else metrics.insertFailures.inc({ table, kind: kind ?? 'error' });
    },
    onProbe: (result) => metrics.probes.inc({ result }),
    onRejected: (batch) => metrics.rejectedRows.inc({ table: batch.table }, batch.rows),
  });
  const sink = new TsvSink(
    {
      maxRows: config.RECORDER_BATCH_MAX_ROWS,
      maxBytes: config.RECORDER_BATCH_MAX_BYTES,
      maxDelayMs: config.RECORDER_BATCH_MAX_DELAY_MS,
    },
    now,
    (batch) => writer.enqueue(batch),
  );
  writer.start();

  // What an earlier run spooled goes first: each ticker's resume point must include it.
  if (!writer.spoolEmpty) {
    logger.info({ bytes: writer.spoolBytes() }, 'replaying the spool before recording');
    while (!writer.spoolEmpty) await new Promise((r) => setTimeout(r, 100));
    logger.info('spool replayed');
  }

  const price = new CanonicalMemo();
  for (const exchange of config.exchanges) {
    const protocol = protocolFor(exchange, config);
    if (protocol.missingCredentials) {
      logger.warn(
        { exchange, platform: protocol.platform },
        `${protocol.platform}'s book feed needs credentials and none are configured: not recorded`,
      );
      continue;
    }
    const settings = config.venues[exchange];
    venues.set(
      exchange,
      new Venue({
        protocol,
        rest: restFor(exchange, config),
        store,
        sink,
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
        stallTimeoutMs: config.RECORDER_STALL_TIMEOUT_MS,
        pingIntervalMs: config.RECORDER_PING_INTERVAL_MS,
        reconnectMinMs: config.RECORDER_RECONNECT_MIN_MS,
        reconnectMaxMs: config.RECORDER_RECONNECT_MAX_MS,
        reconcileIntervalMs: settings.reconcile ? config.RECORDER_RECONCILE_INTERVAL_MS : 0,
        reconcileGraceMs: config.RECORDER_RECONCILE_GRACE_MS,
      }),
    );
  }

  const produced = { deltas: [0, 0, 0], snapshots: [0, 0, 0], gaps: [0, 0, 0] };
  const gauges = () => {
    const buffered = writer.bufferedRows();
    const open = sink.openRows();
    const spooled = writer.spoolBytesByExchange();
    for (const exchange of EXCHANGE_KEYS) {
      const i = EXCHANGE_INDEX[exchange];
      metrics.bufferRows.set({ exchange }, (buffered[i] ?? 0) + (open[i] ?? 0));
      metrics.spoolBytes.set({ exchange }, spooled[i] ?? 0);
      for (const table of ['deltas', 'snapshots', 'gaps'] as const) {
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
    sink.tick(t);
    gauges();
  }, 100);
  sweep.unref();

  await Promise.all([...venues.values()].map((v) => v.start()));
  started = true;
  logger.info({ exchanges: [...venues.keys()] }, 'recording');

  return {
    venues,
    writer,
    sink,
    ready: () => started && stopping === undefined,
    stop() {
      stopping ??= (async () => {
        logger.info('recorder stopping: closing the feeds, flushing buffered rows');
        await Promise.all([...venues.values()].map((v) => v.stop()));
        clearInterval(sweep);
        sink.tick(now(), true);
        await writer.close(config.RECORDER_SHUTDOWN_FLUSH_MS);
        gauges();
        logger.info('recorder stopped');
      })();
      return stopping;
    },
  };
}
