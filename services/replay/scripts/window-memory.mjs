// How much memory one replay holds (docs/replay.md, "Memory"): a Gemini window of N recorded deltas stored on the
// test ClickHouse (TEST_CLICKHOUSE_URL, a database of its own, dropped at the end) is replayed as the service replays
// it — openWindow, then replayPaged page by page, every message's text written — and the JavaScript heap it retains
// above the baseline (after a full collection, every 5,000 messages) is sampled; the peak is reported per N, page by
// page and, for contrast, read whole (the window in memory before its first message, as before paging).
//
//   pnpm run build && node --expose-gc services/replay/scripts/window-memory.mjs [N …] (default 10000 1000000)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  HistoryStore,
  OrderBookQueries,
  benchmarkSql,
  insertDeltaRows,
  insertSnapshotRows,
  migrateWhenReachable,
} from '@depthgate/history-store';
import { geminiEncoder, openWindow, PageWait, readWindow, replay, replayPaged } from '../dist/index.js';

if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
const url = process.env.TEST_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(10_000, 1_000_000);
const pageRows = Number(process.env.REPLAY_PAGE_ROWS ?? 10_000);
const child = process.env.WINDOW_MEMORY_CHILD; // `database n mode`: one measurement, in a fresh process
const database = child ? child.split(' ')[0] : `replay_memory_${process.pid}`;
const T = Date.UTC(2026, 2, 7);
const MiB = 1024 * 1024;

async function sql(query) {
  const res = await fetch(url, { method: 'POST', body: query });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
}

const heap = () => {
  global.gc();
  return process.memoryUsage().heapUsed;
};

/** Drains a replay as the HTTP route does (each text read, batched and thrown away); the peak retained heap. */
async function drain(messages, base) {
  let peak = Number.NEGATIVE_INFINITY;
  let count = 0;
  let batch = '';
  for (let r = messages.next(); !r.done; r = messages.next()) {
    if (r.value instanceof PageWait) {
      await r.value.ready;
      continue;
    }
    batch += `${r.value.text}\n`;
    if (batch.length > 64 * 1024) batch = '';
    if (++count % 5000 === 0) peak = Math.max(peak, heap() - base);
  }
  return { count, peak };
}

/** One measurement in this (fresh) process: the window of `n` rows replayed page by page or read whole. */
async function measure(n, mode) {
  const store = new HistoryStore({ url, database });
  const queries = new OrderBookQueries(store);
  const spec = { exchange: 'venue_c', ticker: `MEM${n}USD`, from: T, to: T + n + 1, pageRows, visibleFrom: T };
  const encoder = () => geminiEncoder({ symbol: spec.ticker });
  const run = async (s) => {
    const scope = store.scope(600_000, { answerStarted: () => true });
    const messages =
      mode === 'paged'
        ? replayPaged(await openWindow(queries, scope, s), encoder())
        : replay(await readWindow(queries, scope, s), encoder());
    return { messages, scope };
  };
  // Warm up (code, the connection) on a millisecond of the window, then the baseline.
  const warm = await run({ ...spec, to: T + 1 });
  await drain(warm.messages, 0);
  warm.scope.dispose();
  const base = heap();
  const started = Date.now();
  const { messages, scope } = await run(spec);
  const { count, peak } = await drain(messages, base);
  scope.dispose();
  await store.close();
  return { count, peak, seconds: (Date.now() - started) / 1000 };
}

if (child) {
  const [, n, mode] = child.split(' ');
  console.log(JSON.stringify(await measure(Number(n), mode)));
} else {
  const store = new HistoryStore({ url, database });
  try {
    await migrateWhenReachable(store, { timeoutMs: 30_000 });
    for (const n of sizes) {
      const ticker = `MEM${n}USD`;
      await insertSnapshotRows(store, [
        { exchange: 'venue_c', ticker, ts: T, side: 'bid', price: '100', quantity: '1' },
        { exchange: 'venue_c', ticker, ts: T, side: 'ask', price: '101', quantity: '1' },
      ]);
      // One delta a millisecond over 200 price levels a side (each added to), received 3 ms later.
      for (let at = 0; at < n; at += 50_000) {
        const rows = [];
        for (let i = at; i < Math.min(n, at + 50_000); i++)
          rows.push({
            exchange: 'venue_c',
            ticker,
            ts: T + 1 + i,
            sequence: i + 1,
            side: i % 2 === 0 ? 'bid' : 'ask',
            price: i % 2 === 0 ? `${99 + (200 - (i % 200)) / 200}` : `${101 + (i % 200) / 200}`,
            quantity_delta: '0.5',
            received_ts: T + 4 + i,
          });
        await insertDeltaRows(store, rows);
      }
    }
    console.log(`pages of ${pageRows} rows; heap retained above the baseline, peak (a full GC every 5,000 messages)`);
    for (const n of sizes)
      for (const mode of ['paged', 'whole']) {
        const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url)], {
          env: { ...process.env, WINDOW_MEMORY_CHILD: `${database} ${n} ${mode}` },
          encoding: 'utf8',
        });
        if (r.status !== 0) throw new Error(`measuring ${n} ${mode} failed: ${r.stderr}`);
        const { count, peak, seconds } = JSON.parse(r.stdout.trim().split('\n').pop());
        console.log(
          `${String(n).padStart(9)} rows  ${mode.padEnd(5)}  ${String(count).padStart(9)} messages  ` +
            `peak ${(peak / MiB).toFixed(1).padStart(6)} MiB  (${seconds.toFixed(1)} s)`,
        );
      }
  } finally {
    await sql(benchmarkSql(database).dropDatabase()).catch(() => {});
    await store.close();
  }
}
