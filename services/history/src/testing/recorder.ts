/**
 * The recorder as deployed (its built entrypoint, services/recorder/dist/main.js, started as a process — a service
 * never imports another), recording from an in-process simulator into a harness's ClickHouse database, with short
 * intervals so a test records gaps, snapshots and resumptions in seconds.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EXCHANGE_KEYS } from '@depthgate/auth';
import { startServiceProcess } from '@depthgate/test-utils';
import type { Simulator } from '@depthgate/venue-sim';
import type { Harness } from './harness';

export interface Recorder {
  process: ChildProcess;
  /** SIGTERM, and wait for the exit; removes the spool. */
  stop(): Promise<void>;
}

export async function startRecorder(h: Harness, sim: Simulator, env: Record<string, string> = {}): Promise<Recorder> {
  const spool = mkdtempSync(path.join(os.tmpdir(), 'dg-hist-rec-'));
  try {
    const recorder = await startServiceProcess({
      entry: 'services/recorder/dist/main.js',
      portVariable: 'RECORDER_PORT',
      what: 'the recorder',
      env: {
        ...process.env,
        ...sim.env(),
        LOG_LEVEL: 'warn',
        CLICKHOUSE_URL: h.config.CLICKHOUSE_URL,
        CLICKHOUSE_DATABASE: h.ch.database,
        RECORDER_SPOOL_DIR: spool,
        RECORDER_RECONNECT_MIN_MS: '50',
        RECORDER_RECONNECT_MAX_MS: '400',
        RECORDER_STALL_TIMEOUT_MS: '1500',
        RECORDER_PING_INTERVAL_MS: '500',
        RECORDER_SNAPSHOT_INTERVAL_MS: '3000',
        RECORDER_SNAPSHOT_QUIET_MS: '500',
        RECORDER_RECONCILE_INTERVAL_MS: '600',
        // Reconciliation may use each venue's whole documented limit here (the default is a tenth): on the feeds that
        // cannot prove their continuity a disconnect's gap reaches back to the last verification, so Gemini's books
        // (1.9 requests/s) must be verified every few seconds for most moments of a short run to lie outside a gap.
        RECORDER_RECONCILE_BUDGET: '1',
        RECORDER_RECONCILE_GRACE_MS: '800',
        RECORDER_BATCH_MAX_DELAY_MS: '100',
        RECORDER_DISCOVERY_INTERVAL_MS: '0',
        // No REST pacing for any recorded exchange (the simulator's rate limits are the test's to set).
        RECORDER_REST_RATES: EXCHANGE_KEYS.map((e) => `${e}=0`).join(','),
        ...env,
      },
    });
    return {
      process: recorder.child,
      stop: async () => {
        await recorder.stop();
        rmSync(spool, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(spool, { recursive: true, force: true });
    throw err;
  }
}
