/**
 * The recorder's entrypoint (`dist/main.js` of its own image, depthgate-recorder; a StatefulSet of one): records the
 * order-book feeds of Kalshi, Gemini and Polymarket US into the history tables. Two of them record redundantly when
 * RECORDER_REDIS_URL is set (redundancy/redundancy.ts). docs/history-internals.md, "Recorder".
 */
import { HistoryStore, storeOptions } from '@depthgate/history-store';
import { Lifecycle, createLogger, createRegistry, createServiceApp, runMain, serve } from '@depthgate/service-kit';
import { loadRecorderConfig } from './config';
import { RecorderMetrics } from './metrics';
import { startRecorder, type Recorder } from './recorder';

runMain(async () => {
  const config = loadRecorderConfig();
  const logger = createLogger({ name: 'recorder', level: config.LOG_LEVEL });
  const registry = createRegistry('recorder');
  const metrics = new RecorderMetrics(registry);
  const lifecycle = new Lifecycle();
  const store = new HistoryStore({
    ...storeOptions(config),
    requestTimeoutMs: config.RECORDER_INSERT_TIMEOUT_MS + 30_000,
    logger,
    application: 'depthgate-recorder',
  });
  lifecycle.onShutdown('clickhouse', () => store.close());
  const running: { recorder?: Recorder } = {};
  // Registered before start-up completes: a SIGTERM during the spool replay exits at once (the spool stays on disk).
  lifecycle.onShutdown('recorder', () => running.recorder?.stop());
  const app = createServiceApp({
    logger,
    registry,
    lifecycle,
    readiness: [{ name: 'recording', check: () => running.recorder?.ready() ?? false }],
    trustProxyHops: 0,
    accessLog: false,
    mount: () => undefined,
  });
  // /health answers from the start; /ready once the spool is replayed and the feeds run.
  await serve(app, {
    port: config.RECORDER_PORT,
    host: config.RECORDER_HOST,
    logger,
    lifecycle,
    shutdownDelayMs: 0,
    drainTimeoutMs: 2000,
  });
  running.recorder = await startRecorder({
    config,
    logger,
    metrics,
    store,
    registry,
    // Redundant mode: a lost lease ends this term. The SIGTERM path stops the recorder (whose writer spools what is
    // left: the lease's gate is shut), the process exits, and the pod starts again as a new term.
    onFatal: () => process.kill(process.pid, 'SIGTERM'),
    // A SIGTERM while the venues start stops (and flushes) what already records.
    onStopable: (recorder) => {
      running.recorder = recorder;
    },
  });
});
