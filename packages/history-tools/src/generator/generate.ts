/**
 * Generates the series of a set of tickers — snapshots, deltas and the trades that took liquidity from the book —
 * and streams them into ClickHouse as TabSeparated inserts (the current row format of @depthgate/history-store,
 * `received_ts` last).
 *
 * Time-major: every ticker advances one hour, then the next hour, so each insert holds a stretch of time for all
 * of its tickers and lands in few partitions (one part per month touched). Inserts rotate every `batchRows` rows
 * (one part each) and at most two per table are in flight, so memory stays flat whatever the total.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { ExchangeKey } from '@depthgate/platforms';
import { insertTsv, type HistoryStore, type InsertTable, type Side } from '@depthgate/history-store';
import { formatUnits } from './profiles';
import { TickerSeries, type GeneratedTrade } from './series';

export interface TickerRef {
  exchange: ExchangeKey;
  ticker: string;
}

export interface GenerationPlan {
  tickers: TickerRef[];
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  snapshotIntervalMs: number;
  eventsPerMinute: number;
  seed: string;
  /** Rows per insert (one part each). */
  batchRows: number;
}

export interface TickerEnd extends TickerRef {
  /** Last ts generated (-1 when nothing was). */
  lastTs: number;
}

const STEP_MS = 3_600_000;
const FLUSH_BYTES = 256 * 1024;

/** Streams TSV text into successive inserts of about `batchRows` rows each. */
class BatchedInserter {
  private current: { stream: PassThrough; done: Promise<unknown>; rows: number } | undefined;
  private readonly inflight: Promise<unknown>[] = [];
  private failure: unknown;

  constructor(
    private readonly store: HistoryStore,
    private readonly table: InsertTable,
    private readonly batchRows: number,
  ) {}

  async write(text: string, rows: number): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.current) {
      const stream = new PassThrough();
      const done = insertTsv(this.store, this.table, stream).catch((err: unknown) => {
        this.failure ??= err;
        stream.destroy();
        throw err;
      });
      done.catch(() => undefined);
      this.current = { stream, done, rows: 0 };
    }
    const { stream, done } = this.current;
    if (!stream.write(text)) await Promise.race([once(stream, 'drain'), done]);
    if (this.failure) throw this.failure;
    this.current.rows += rows;
    if (this.current.rows >= this.batchRows) {
      stream.end();
      this.inflight.push(done);
      this.current = undefined;
      while (this.inflight.length >= 2) await this.inflight.shift();
    }
  }

  async close(): Promise<void> {
    if (this.current) {
      this.current.stream.end();
      this.inflight.push(this.current.done);
      this.current = undefined;
    }
    await Promise.all(this.inflight.splice(0));
    if (this.failure) throw this.failure;
  }
}

/**
 * Generates every ticker of the plan over [from, to) and inserts the rows. `onRows` is called with each batch of
 * rows handed to ClickHouse (for progress).
 */
export async function generateInto(
  store: HistoryStore,
  plan: GenerationPlan,
  onRows: (rows: number) => void = () => undefined,
  signal?: AbortSignal,
): Promise<TickerEnd[]> {
  const snapshots = new BatchedInserter(store, 'snapshots', plan.batchRows);
  const deltas = new BatchedInserter(store, 'deltas', plan.batchRows);
  const trades = new BatchedInserter(store, 'trades', plan.batchRows);
  let snapText = '';
  let snapRows = 0;
  let deltaText = '';
  let deltaRows = 0;
  let tradeText = '';
  let tradeRows = 0;
  const series = plan.tickers.map(
    (t) =>
      new TickerSeries({
        exchange: t.exchange,
        ticker: t.ticker,
        seed: plan.seed,
        from: plan.from,
        to: plan.to,
        snapshotIntervalMs: plan.snapshotIntervalMs,
        eventsPerMinute: plan.eventsPerMinute,
      }),
  );
  const flush = async (force: boolean) => {
    if (snapRows > 0 && (force || snapText.length >= FLUSH_BYTES)) {
      const [text, rows] = [snapText, snapRows];
      snapText = '';
      snapRows = 0;
      await snapshots.write(text, rows);
      onRows(rows);
    }
    if (deltaRows > 0 && (force || deltaText.length >= FLUSH_BYTES)) {
      const [text, rows] = [deltaText, deltaRows];
      deltaText = '';
      deltaRows = 0;
      await deltas.write(text, rows);
      onRows(rows);
    }
    if (tradeRows > 0 && (force || tradeText.length >= FLUSH_BYTES)) {
      const [text, rows] = [tradeText, tradeRows];
      tradeText = '';
      tradeRows = 0;
      await trades.write(text, rows);
      onRows(rows);
    }
  };
  let failure: unknown;
  try {
    for (let t = plan.from; t < plan.to; t += STEP_MS) {
      for (const s of series) {
        if (signal?.aborted) throw new Error('generation aborted');
        const prefix = `${s.options.exchange}\t${s.options.ticker}\t`;
        const { priceScale, qtyScale } = s.profile;
        const prices = new Map<number, string>();
        const price = (units: number) => {
          let text = prices.get(units);
          if (text === undefined) {
            text = formatUnits(units, priceScale);
            prices.set(units, text);
          }
          return text;
        };
        s.advance(t + STEP_MS, {
          snapshotLevel(ts: number, side: Side, p: number, q: number, received: number) {
            snapText += `${prefix}${ts}\t${side}\t${price(p)}\t${formatUnits(q, qtyScale)}\t${received}\n`;
            snapRows++;
          },
          delta(ts: number, sequence: number, side: Side, p: number, change: number, received: number) {
            deltaText += `${prefix}${ts}\t${sequence}\t${side}\t${price(p)}\t${formatUnits(change, qtyScale)}\t${received}\n`;
            deltaRows++;
          },
          trade(t: GeneratedTrade) {
            tradeText += `${prefix}${t.ts}\t${t.sequence}\t${t.tradeId}\t${price(t.price)}\t${formatUnits(t.size, qtyScale)}\t${t.side}\t${t.venueSide}\t${t.receivedTs}\n`;
            tradeRows++;
          },
        });
        await flush(false);
      }
    }
    await flush(true);
  } catch (err) {
    failure = err;
  }
  // Finish what was started even after a failure, so no insert is left hanging; the first error wins.
  const closing = await Promise.allSettled([snapshots.close(), deltas.close(), trades.close()]);
  if (failure !== undefined) throw failure;
  const failed = closing.find((c): c is PromiseRejectedResult => c.status === 'rejected');
  if (failed) throw failed.reason;
  return series.map((s) => ({ exchange: s.options.exchange, ticker: s.options.ticker, lastTs: s.lastTs }));
}
