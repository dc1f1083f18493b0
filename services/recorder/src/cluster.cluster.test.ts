/**
 * The recorder in cluster mode (CLICKHOUSE_CLUSTER, on the local cluster of `./dev test --cluster`): a replica killed
 * while it takes its shard's inserts, and brought back, costs no row and doubles none; a batch whose insert failed
 * after it was written is sent again and stored once, with no probe.
 */
import { HistoryStore, RecorderStore } from '@depthgate/history-store';
import { ClusterNodeView, createTestDatabase } from '@depthgate/history-store/testing';
import { testCluster, uniqueName, waitFor } from '@depthgate/test-utils';
import { ALL } from './testing/checks';
import { createRecorderHarness, sleep, type RecorderHarness } from './testing/harness';
import { deltaBatch, testWriter } from './testing/support';
import type { WriterStore } from './writer/writer';

jest.setTimeout(240_000);

const cluster = testCluster();
const entry = cluster.node('s1r1');
const TABLES = ['snapshots', 'deltas', 'trades', 'gaps', 'verifications'] as const;

/** The sum of a counter over all its labels. */
async function total(counter: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> {
  return (await counter.get()).values.reduce((n, v) => n + v.value, 0);
}

describe('the recorder on a cluster', () => {
  let h: RecorderHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('loses and doubles no row when replicas die mid-recording and come back (0 lost, 0 duplicated)', async () => {
    h = await createRecorderHarness({
      clickhouseUrl: entry.url,
      sim: { updatesPerSecond: 300, changesPerUpdate: { gemini: 4, 'venue-a-us': 3 } },
      env: { CLICKHOUSE_CLUSTER: cluster.name, RECORDER_INSERT_TIMEOUT_MS: '3000' },
    });
    const recorder = await h.startInProcess();
    const metrics = h.metrics;
    if (!metrics) throw new Error('no metrics');
    await h.waitLive();
    await sleep(2000);
    // Each shard's first replica takes its inserts (the local cluster balances in order). Killed in turn: the
    // second shard's, then the first shard's, which is also the server the recorder talks to.
    for (const victim of [cluster.node('s2r1'), entry]) {
      await cluster.stopNode(victim.name, { kill: true });
      await sleep(4000);
      await cluster.startNode(victim.name);
      await sleep(2000);
    }
    h.sim.books.pause();
    await sleep(500);
    await waitFor(() => recorder.writer.idle && recorder.sink.openRows().every((n) => n === 0), {
      timeoutMs: 60_000,
      what: 'everything written',
    });
    await h.stopInProcess();

    const views = cluster.nodes.map((n) => ({ node: n, view: new ClusterNodeView(n.url, h!.database) }));
    try {
      for (const { view } of views) await view.sync();
      let stored = 0;
      for (const table of TABLES) {
        const perNode = Object.fromEntries(
          await Promise.all(views.map(async ({ node, view }) => [node.name, await view.localRows(table)] as const)),
        );
        // Both replicas of each shard hold the same rows once the victim has caught up.
        expect([table, perNode.s1r1]).toEqual([table, perNode.s1r2]);
        expect([table, perNode.s2r1]).toEqual([table, perNode.s2r2]);
        stored += (perNode.s1r1 ?? 0) + (perNode.s2r1 ?? 0);
      }
      const produced = await total(metrics.rowsProduced);
      const acknowledged = await total(metrics.rowsWritten);
      const failures = await total(metrics.insertFailures);
      const deltas = await h.db.distinctKeys('deltas');
      const snapshots = await h.db.distinctKeys('snapshots');
      const trades = (await Promise.all(ALL.map((e) => h!.rows(e)))).flat().filter((r) => r.kind === 'trade');
      const tradeIds = new Set(trades.map((r) => `${r.exchange} ${r.ticker} ${r.tradeId}`)).size;
      const lost = produced - stored;
      const duplicated = deltas.rows - deltas.keys + (snapshots.rows - snapshots.keys) + (trades.length - tradeIds);
      process.stdout.write(
        `replica killed mid-recording: ${produced} rows produced, ${stored} stored, ${failures} failed inserts ` +
          `resent, ${lost} lost, ${duplicated} duplicated\n`,
      );
      expect(produced).toBeGreaterThan(1000);
      expect({ lost, duplicated, acknowledged }).toEqual({ lost: 0, duplicated: 0, acknowledged: produced });
      expect(await total(metrics.probes)).toBe(0);
    } finally {
      for (const { view } of views) await view.close();
    }
  });

  it('sends a batch whose insert failed after it was written again, with no probe, and stores it once', async () => {
    const db = await createTestDatabase({ url: entry.url, database: uniqueName('clw'), cluster: cluster.name });
    const store = new HistoryStore({ url: entry.url, database: db.database, cluster: cluster.name });
    const real = new RecorderStore(store);
    let failAfterCommit = 1;
    let probes = 0;
    const flaky: WriterStore = {
      retriesDeduplicated: real.retriesDeduplicated,
      async insert(table, source, options) {
        const result = await real.insert(table, source, options);
        if (failAfterCommit-- > 0) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return result;
      },
      probeBatch: async (key) => {
        probes++;
        return real.probeBatch(key);
      },
      ensureQueryEnded: (id) => real.ensureQueryEnded(id),
    };
    const { writer, dispose } = testWriter(flaky);
    try {
      const ts = Date.UTC(2026, 2, 15);
      const sealed = Array.from({ length: 16 }, (_, t) =>
        deltaBatch(40, { exchange: 'venue_c', ticker: `PAIR${t}USD`, ts }),
      );
      writer.start();
      for (const b of sealed) writer.enqueue(b);
      await waitFor(() => writer.idle, { timeoutMs: 30_000 });
      expect(failAfterCommit).toBeLessThan(0);
      expect(probes).toBe(0);
      expect(await db.distinctKeys('deltas')).toEqual({ rows: 640, keys: 640 });
    } finally {
      await dispose();
      await store.close();
      await db.drop();
      await db.close();
    }
  });

  it('stores a batch once when it is sent again after 150 newer blocks of its shard (the other recorder writing meanwhile)', async () => {
    const db = await createTestDatabase({ url: entry.url, database: uniqueName('cld'), cluster: cluster.name });
    const store = new HistoryStore({ url: entry.url, database: db.database, cluster: cluster.name });
    const real = new RecorderStore(store);
    const ts = Date.UTC(2026, 2, 15);
    const row = { exchange: 'venue_c', ticker: 'PAIR0USD' } as const;
    const entryView = new ClusterNodeView(entry.url, db.database);
    const shard = cluster.node(`s${await entryView.shardOf(row.exchange, row.ticker, 2)}r1`);
    const shardView = new ClusterNodeView(shard.url, db.database);
    // What the other recorder writes while this one's resend waits (a backoff, a restart, its own link down): later
    // rows of the same shard, one block each — more than 18.16's default window of 100 blocks.
    const newer = Array.from({ length: 150 }, (_, i) => deltaBatch(2, { ...row, ts: ts + 1000 * (i + 1) }));
    let failAfterCommit = 1;
    const flaky: WriterStore = {
      retriesDeduplicated: real.retriesDeduplicated,
      async insert(table, source, options) {
        const result = await real.insert(table, source, options);
        if (failAfterCommit-- > 0) {
          for (const b of newer) await real.insert('deltas', b.chunks, { rowFormat: b.rowFormat });
          // The shard's leader trims its deduplication log to the table's window (every 30 to 40 s).
          await waitFor(
            async () => {
              const log = await shardView.deduplicationLog('deltas');
              return log.blocks <= log.window;
            },
            { timeoutMs: 120_000, intervalMs: 1000, what: "the shard's deduplication log trimmed to its window" },
          );
          throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        }
        return result;
      },
      probeBatch: (key) => real.probeBatch(key),
      ensureQueryEnded: (id) => real.ensureQueryEnded(id),
    };
    const { writer, dispose } = testWriter(flaky, { insertTimeoutMs: 300_000 });
    try {
      writer.start();
      writer.enqueue(deltaBatch(40, { ...row, ts }));
      await waitFor(() => writer.idle, { timeoutMs: 200_000 });
      expect(failAfterCommit).toBeLessThan(0);
      expect(await db.distinctKeys('deltas')).toEqual({ rows: 340, keys: 340 });
      // The shard still knows the first batch's block: its log holds more than the 151 blocks written.
      expect((await shardView.deduplicationLog('deltas')).blocks).toBeGreaterThan(150);
    } finally {
      await dispose();
      await Promise.all([entryView.close(), shardView.close(), store.close()]);
      await db.drop();
      await db.close();
    }
  });
});
