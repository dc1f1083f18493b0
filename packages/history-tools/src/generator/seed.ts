/**
 * The data generator behind `./dev seed` and `./dev up --sim`: chooses tickers, sizes the delta rate, skips tickers
 * that already hold data in the range, generates (in worker threads when the job is large), shows progress, and
 * marks where each generated series ends with a `seed_end` gap row — so data recorded later reads like a resync.
 * Its one read (which tickers already hold rows) is tickersWithData of @depthgate/history-store.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { EXCHANGE_KEYS, type ExchangeKey } from '@depthgate/platforms';
import { TICKER_PATTERN, insertGapRows, type HistoryStore, type HistoryStoreOptions } from '@depthgate/history-store';
import { generateInto, type GenerationPlan, type TickerEnd, type TickerRef } from './generate';
import { expectedRows } from './series';
import type { WorkerInput, WorkerMessage } from './worker';

export const SEED_END_REASON = 'seed_end';

/** Reads `GET <url>/control/tickers` of the venue simulator: `{"venue_b":[…],"venue_c":[…],"venue_a_us":[…]}`. */
export async function tickersFrom(
  url: string,
  options: { timeoutMs?: number; warn?: (message: string) => void } = {},
): Promise<TickerRef[]> {
  const endpoint = `${url.replace(/\/+$/, '')}/control/tickers`;
  let body: unknown;
  try {
    const res = await fetch(endpoint, { signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    body = await res.json();
  } catch (err) {
    throw new Error(`could not read the ticker list from ${endpoint}: ${(err as Error).message}`, { cause: err });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Error(`${endpoint} did not answer a JSON object of ticker lists per exchange`);
  }
  const out: TickerRef[] = [];
  for (const [name, list] of Object.entries(body as Record<string, unknown>)) {
    if (!(EXCHANGE_KEYS as readonly string[]).includes(name)) {
      options.warn?.(`${endpoint}: ignoring unknown exchange "${name}"`);
      continue;
    }
    if (!Array.isArray(list)) throw new Error(`${endpoint}: "${name}" is not a list of tickers`);
    for (const ticker of new Set(list)) {
      if (typeof ticker !== 'string' || !TICKER_PATTERN.test(ticker)) {
        options.warn?.(`${endpoint}: skipping ${JSON.stringify(ticker)} on ${name}: not a ticker`);
        continue;
      }
      out.push({ exchange: name as ExchangeKey, ticker });
    }
  }
  return out;
}

export interface PlanOptions {
  tickers: TickerRef[];
  from: number;
  to: number;
  snapshotIntervalMs: number;
  seed: string;
  batchRows: number;
  /** Either a fixed rate … */
  eventsPerMinute?: number;
  /** … or a total row target the rate is solved for. */
  targetRows?: number;
}

/** Builds the plan, solving the delta rate for `targetRows` when given. */
export function planGeneration(options: PlanOptions): { plan: GenerationPlan; expectedRows: number } {
  const shape = (epm: number) => {
    let snapshots = 0;
    let deltas = 0;
    for (const t of options.tickers) {
      const e = expectedRows({
        ...t,
        from: options.from,
        to: options.to,
        snapshotIntervalMs: options.snapshotIntervalMs,
        eventsPerMinute: epm,
      });
      snapshots += e.snapshots;
      deltas += e.deltas;
    }
    return { snapshots, deltas };
  };
  let eventsPerMinute = options.eventsPerMinute ?? 6;
  if (options.targetRows !== undefined) {
    const { snapshots, deltas: perEpm } = shape(1);
    if (snapshots >= options.targetRows || perEpm === 0) {
      throw new Error(
        `the snapshots alone come to about ${snapshots} rows, at or above --rows ${options.targetRows}: raise --rows, or use fewer tickers, a shorter range or a longer snapshot interval`,
      );
    }
    eventsPerMinute = (options.targetRows - snapshots) / perEpm;
  }
  const { snapshots, deltas } = shape(eventsPerMinute);
  return {
    plan: {
      tickers: options.tickers,
      from: options.from,
      to: options.to,
      snapshotIntervalMs: options.snapshotIntervalMs,
      eventsPerMinute,
      seed: options.seed,
      batchRows: options.batchRows,
    },
    expectedRows: snapshots + deltas,
  };
}

export interface SeedOptions {
  /** 0: generate in this thread; n: in n worker threads (needs the compiled worker.js). */
  workers: number;
  /** Where the workers insert (each opens its own store). */
  store: HistoryStoreOptions;
  onRows?: (rows: number) => void;
}

/** Runs a plan, then writes one `seed_end` gap row per ticker at the end of its generated series. */
export async function runGeneration(
  store: HistoryStore,
  plan: GenerationPlan,
  options: SeedOptions,
): Promise<TickerEnd[]> {
  const onRows = options.onRows ?? (() => undefined);
  let ends: TickerEnd[];
  const workerFile = path.join(__dirname, 'worker.js');
  if (options.workers <= 0 || plan.tickers.length <= 1 || !existsSync(workerFile)) {
    ends = await generateInto(store, plan, onRows);
  } else {
    const n = Math.min(options.workers, plan.tickers.length);
    const shares: TickerRef[][] = Array.from({ length: n }, () => []);
    plan.tickers.forEach((t, i) => shares[i % n]?.push(t));
    const results = await Promise.all(
      shares.map(
        (tickers) =>
          new Promise<TickerEnd[]>((resolve, reject) => {
            const input: WorkerInput = { store: options.store, plan: { ...plan, tickers } };
            const worker = new Worker(workerFile, { workerData: input });
            let settled = false;
            worker.on('message', (m: WorkerMessage) => {
              if (m.type === 'rows') onRows(m.rows);
              else if (m.type === 'done') {
                settled = true;
                resolve(m.ends as TickerEnd[]);
              } else {
                settled = true;
                reject(new Error(m.message));
              }
            });
            worker.on('error', (err) => {
              settled = true;
              reject(err);
            });
            worker.on('exit', (code) => {
              if (!settled) reject(new Error(`generator worker exited with code ${code}`));
            });
          }),
      ),
    );
    ends = results.flat();
  }
  const detectedAt = Date.now();
  const gaps = ends
    .filter((e) => e.lastTs >= 0)
    .map((e) => ({
      exchange: e.exchange,
      ticker: e.ticker,
      from_ts: e.lastTs,
      to_ts: Math.max(e.lastTs, plan.to),
      reason: SEED_END_REASON,
      detected_at: detectedAt,
    }));
  if (gaps.length > 0) await insertGapRows(store, gaps);
  return ends;
}

/** Progress on stderr: one rewritten line on a terminal, a line every 10 s otherwise. */
export class Progress {
  private rows = 0;
  private readonly started = Date.now();
  private lastDraw = 0;
  private readonly tty: boolean;

  constructor(
    private readonly expected: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly label = 'seeding',
  ) {
    this.tty = Boolean(out.isTTY);
  }

  add(rows: number): void {
    this.rows += rows;
    const now = Date.now();
    if (now - this.lastDraw >= (this.tty ? 250 : 10_000)) {
      this.lastDraw = now;
      this.draw(false);
    }
  }

  done(): void {
    this.draw(true);
  }

  line(): string {
    const secs = Math.max(0.001, (Date.now() - this.started) / 1000);
    const rate = this.rows / secs;
    const pct = this.expected > 0 ? Math.min(100, (100 * this.rows) / this.expected) : 100;
    const eta = rate > 0 && this.expected > this.rows ? (this.expected - this.rows) / rate : 0;
    return `${this.label} ${human(this.rows)} / ~${human(this.expected)} rows (${pct.toFixed(1)}%)  ${human(rate)} rows/s  elapsed ${duration(secs)}  ETA ${duration(eta)}`;
  }

  private draw(final: boolean): void {
    if (this.tty) this.out.write(`\r\x1b[K${this.line()}${final ? '\n' : ''}`);
    else this.out.write(`${this.line()}\n`);
  }
}

function human(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

function duration(secs: number): string {
  const s = Math.round(secs);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
