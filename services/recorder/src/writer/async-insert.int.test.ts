/**
 * The recorder against a current ClickHouse (chdb's engine behind its HTTP stand-in, which models the server-side
 * insert queue that `async_insert = 1`, the default since 26.2, brings: rows queued as soon as they are read, written
 * later, also after their query was given up). The ambiguous failure is forced at the worst moment — the insert
 * never answers (or answers with a dropped connection), and the queue is held until the writer has probed and sent
 * the batch again — and the batch must be stored exactly once. A control run, against a server that ignores the
 * client's `async_insert = 0`, shows the same scenario doubling the batch: what the pinned setting prevents.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { HistoryStore, RecorderStore } from '@depthgate/history-store';
import { createTestDatabase, startCurrentClickHouse, type CurrentClickHouse } from '@depthgate/history-store/testing';
import { createLogger } from '@depthgate/service-kit';
import { uniqueName, waitFor } from '@depthgate/test-utils';
import type { SealedBatch } from './batch';
import { TsvSink } from './sink';
import { Writer } from './writer';

jest.setTimeout(120_000);

const logger = createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const TS = Date.UTC(2026, 2, 20, 12, 0, 0);

function batchOf(rows: number): SealedBatch {
  const sealed: SealedBatch[] = [];
  const sink = new TsvSink(
    { maxRows: 1_000_000, maxBytes: 1 << 24, maxDelayMs: 1000 },
    () => 0,
    (b) => sealed.push(b),
  );
  for (let i = 0; i < rows; i++) sink.delta('venue_b', 'KXASYNC-1', TS + i, i + 1, i % 2 ? 1 : 2, '0.4200', '-3.50');
  sink.tick(0, true);
  return sealed[0] as SealedBatch;
}

/** Runs one batch through a writer while the server fails its first insert as told; returns rows and distinct keys. */
async function scenario(
  failure: 'stall' | 'commit-then-drop',
  server: { ignoreClientAsyncInsert: boolean },
): Promise<{ rows: number; keys: number; probes: string[]; queuedInserts: number }> {
  const current: CurrentClickHouse = await startCurrentClickHouse();
  const spoolDir = mkdtempSync(path.join(os.tmpdir(), 'dg-async-spool-'));
  const db = await createTestDatabase({ url: current.url, database: uniqueName('async') });
  const store = new HistoryStore({ url: current.url, database: db.database, logger });
  const probes: string[] = [];
  const writer = new Writer({
    store: new RecorderStore(store),
    spoolDir,
    maxMemoryBytes: 1 << 24,
    maxSpoolBytes: 1 << 30,
    spoolFileBytes: 1 << 24,
    insertTimeoutMs: 1000,
    logger,
    onProbe: (result) => probes.push(result),
  });
  try {
    if (server.ignoreClientAsyncInsert) await current.ignoreSetting('async_insert');
    await current.holdQueue();
    await current.failNextInsert(failure);
    writer.start();
    writer.enqueue(batchOf(500));
    // The writer has given up on its first attempt and probed; only now may the server write what it queued.
    await waitFor(() => probes.length > 0, { timeoutMs: 30_000, what: 'the probe after the failed insert' });
    await current.releaseQueue();
    await waitFor(() => writer.idle, { timeoutMs: 30_000, what: 'the batch written' });
    await current.releaseQueue();
    const { rows, keys } = await db.distinctKeys('deltas');
    const queuedInserts = (await current.state()).inserts.filter((i) => i.queued).length;
    return { rows, keys, probes, queuedInserts };
  } finally {
    await writer.close(1000);
    await store.close();
    await db.close();
    await current.close();
    rmSync(spoolDir, { recursive: true, force: true });
  }
}

describe('a recorder on a current ClickHouse (inserts queued server-side by default)', () => {
  it.each(['stall', 'commit-then-drop'] as const)(
    'stores a batch whose insert failed ambiguously (%s) exactly once: async_insert = 0 is pinned',
    async (failure) => {
      const result = await scenario(failure, { ignoreClientAsyncInsert: false });
      expect(result.queuedInserts).toBe(0);
      expect(result.probes).toEqual([failure === 'stall' ? 'absent' : 'present']);
      expect(result).toMatchObject({ rows: 500, keys: 500 });
    },
  );

  it('control: a server that queues the insert anyway writes the batch twice (the probe ran before the queue did)', async () => {
    const result = await scenario('stall', { ignoreClientAsyncInsert: true });
    expect(result.queuedInserts).toBeGreaterThan(0);
    expect(result.probes).toEqual(['absent']);
    expect(result).toMatchObject({ rows: 1000, keys: 500 });
  });
});
