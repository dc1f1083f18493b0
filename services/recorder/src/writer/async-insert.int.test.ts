/**
 * The recorder against a current ClickHouse (chdb's engine behind its HTTP stand-in, which models the server-side
 * insert queue that `async_insert = 1`, the default since 26.2, brings: rows queued as soon as they are read, written
 * later, also after their query was given up). The ambiguous failure is forced at the worst moment — the insert
 * never answers (or answers with a dropped connection), and the queue is held until the writer has probed and sent
 * the batch again — and the batch must be stored exactly once. A control run, against a server that ignores the
 * client's `async_insert = 0`, shows the same scenario doubling the batch: what the pinned setting prevents.
 */
import { HistoryStore, RecorderStore } from '@depthgate/history-store';
import { createTestDatabase, startCurrentClickHouse, type CurrentClickHouse } from '@depthgate/history-store/testing';
import { uniqueName, waitFor } from '@depthgate/test-utils';
import { deltaBatch, testWriter } from '../testing/support';

jest.setTimeout(120_000);

const TS = Date.UTC(2026, 2, 20, 12, 0, 0);

/** Runs one batch through a writer while the server fails its first insert as told; returns rows and distinct keys. */
async function scenario(
  failure: 'stall' | 'commit-then-drop',
  server: { ignoreClientAsyncInsert: boolean },
): Promise<{ rows: number; keys: number; probes: string[]; queuedInserts: number }> {
  const current: CurrentClickHouse = await startCurrentClickHouse();
  const db = await createTestDatabase({ url: current.url, database: uniqueName('async') });
  const store = new HistoryStore({ url: current.url, database: db.database });
  const probes: string[] = [];
  const { writer, dispose } = testWriter(new RecorderStore(store), {
    insertTimeoutMs: 1000,
    onProbe: (result) => probes.push(result),
  });
  try {
    if (server.ignoreClientAsyncInsert) await current.ignoreSetting('async_insert');
    await current.holdQueue();
    await current.failNextInsert(failure);
    writer.start();
    writer.enqueue(deltaBatch(500, { exchange: 'venue_b', ticker: 'KXASYNC-1', ts: TS }));
    // The writer has given up on its first attempt and probed; only now may the server write what it queued.
    await waitFor(() => probes.length > 0, { timeoutMs: 30_000, what: 'the probe after the failed insert' });
    await current.releaseQueue();
    await waitFor(() => writer.idle, { timeoutMs: 30_000, what: 'the batch written' });
    await current.releaseQueue();
    const { rows, keys } = await db.distinctKeys('deltas');
    const queuedInserts = (await current.state()).inserts.filter((i) => i.queued).length;
    return { rows, keys, probes, queuedInserts };
  } finally {
    await dispose();
    await store.close();
    await db.close();
    await current.close();
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
