/**
 * Worker-thread entry of the generator: generates its share of the tickers with its own ClickHouse client and
 * reports rows (for progress) and the end of each ticker's series to the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HistoryStore, type HistoryStoreOptions } from '@depthgate/history-store';
import { generateInto, type GenerationPlan } from './generate';

export interface WorkerInput {
  store: HistoryStoreOptions;
  plan: GenerationPlan;
}

export type WorkerMessage =
  | { type: 'rows'; rows: number }
  | { type: 'done'; ends: { exchange: string; ticker: string; lastTs: number }[] }
  | { type: 'error'; message: string };

async function run(): Promise<void> {
  const input = workerData as WorkerInput;
  const port = parentPort;
  if (!port) throw new Error('generator worker started outside a worker thread');
  const store = new HistoryStore({ ...input.store, maxConnections: 4 });
  let pending = 0;
  let lastPost = Date.now();
  try {
    const ends = await generateInto(store, input.plan, (rows) => {
      pending += rows;
      if (Date.now() - lastPost > 200) {
        port.postMessage({ type: 'rows', rows: pending } satisfies WorkerMessage);
        pending = 0;
        lastPost = Date.now();
      }
    });
    if (pending > 0) port.postMessage({ type: 'rows', rows: pending } satisfies WorkerMessage);
    port.postMessage({ type: 'done', ends } satisfies WorkerMessage);
  } catch (err) {
    port.postMessage({ type: 'error', message: (err as Error).message } satisfies WorkerMessage);
  } finally {
    await store.close();
  }
}

void run();
