/**
 * Batches of TabSeparated rows on their way to one table. Rows are rendered to text once, as they are produced
 * (no row objects on the hot path), and copied at once into 256 KiB buffers taken from a pool and given back when
 * the batch is in ClickHouse (or on disk): what waits for ClickHouse lives outside the JavaScript heap, so the
 * garbage collector neither copies nor promotes it, and the strings of the hot path die young. A batch also holds
 * the natural key of its last row (for probe-before-retry), its rows and bytes per exchange (for the per-platform
 * buffer and spool gauges) and the event times of its rows in 10 ms runs (for the lag histogram, observed when
 * ClickHouse acknowledges it).
 */
import { LATEST_ROW_FORMAT, type InsertTable, type ProbeKey, type RowFormat } from '@depthgate/history-store';

/**
 * Per-exchange counts (rows, bytes, lag runs) are arrays indexed by the exchange's stored code − 1 (the descriptor's
 * code, @depthgate/platforms): stable across builds, so a spool written by one build is counted right by the next.
 */
export function exchangeIndex(code: number): number {
  return code - 1;
}

/** Adds `from` into `into` (times `sign`), growing it as needed. */
export function addCounts(into: number[], from: readonly number[], sign = 1): void {
  while (into.length < from.length) into.push(0);
  for (let i = 0; i < from.length; i++) into[i] = (into[i] ?? 0) + sign * (from[i] ?? 0);
}

export interface SealedBatch {
  /** Process-unique id (log lines, tests). */
  id: number;
  table: InsertTable;
  /**
   * The line format of `chunks` (@depthgate/history-store ROW_FORMATS): the newest (LATEST_ROW_FORMAT, 4: `venue_seq`,
   * verifications) for batches made by this build; a batch replayed from a spool written by an older build keeps the
   * format it was written in.
   */
  rowFormat: RowFormat;
  /** TabSeparated rows, in order (ASCII only: the ticker grammar, digits, enums, reasons). */
  chunks: Buffer[];
  /** Pool buffers behind `chunks`, given back by releaseBatch(). */
  pooled: Buffer[];
  rows: number;
  bytes: number;
  rowsByExchange: number[];
  bytesByExchange: number[];
  /** Flat triples (exchange index, ts rounded down to 10 ms, rows). */
  runs: number[];
  probe: ProbeKey;
  /**
   * An insert of it may have reached ClickHouse (an attempt failed ambiguously, or it comes from the spool): probe
   * before (re)inserting.
   */
  maybeWritten: boolean;
  /** Set while it lives in the spool: where. */
  spool?: { file: string; offset: number; length: number };
  /** Query id of the last insert attempt (to make sure it is not still running before probing). */
  lastQueryId?: string;
  /**
   * The recorder term it was produced under (redundant recording; 0 solo): set by the writer when the sink hands it
   * over, kept by the spool, and the key of the fence a replay filters it with.
   */
  term?: number;
}

export const CHUNK_BYTES = 256 * 1024;
const RUN_MS = 10;
let nextBatchId = 1;

/** Free 256 KiB buffers, reused by the batches (at most `max` kept). */
class ChunkPool {
  private readonly free: Buffer[] = [];
  constructor(private readonly max: number) {}

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
  }

  give(b: Buffer): void {
    if (b.length === CHUNK_BYTES && this.free.length < this.max) this.free.push(b);
  }

  get size(): number {
    return this.free.length;
  }
}

export const chunkPool = new ChunkPool(64);

/** Gives a written (or spooled) batch's buffers back to the pool; the batch must not be used afterwards. */
export function releaseBatch(batch: SealedBatch): void {
  for (const b of batch.pooled) chunkPool.give(b);
  batch.pooled = [];
  batch.chunks = [];
}

/** One batch being filled. */
export class OpenBatch {
  private readonly full: Buffer[] = [];
  private cur: Buffer = chunkPool.take();
  private pos = 0;
  rows = 0;
  bytes = 0;
  readonly rowsByExchange: number[] = [];
  readonly bytesByExchange: number[] = [];
  readonly runs: number[] = [];
  private readonly lastRun: number[] = [];
  probe: ProbeKey | undefined;

  constructor(
    readonly table: InsertTable,
    readonly month: number,
    readonly createdAt: number,
  ) {}

  /** Appends rendered lines (one row or a whole book) of one exchange; `rows` rows at event time `ts`. */
  append(text: string, ex: number, rows: number, ts: number): void {
    const length = text.length;
    if (this.cur.length - this.pos >= length) {
      this.pos += this.cur.write(text, this.pos, length, 'latin1');
    } else {
      // Across buffers: a line may be split, the insert body is their concatenation.
      let offset = 0;
      while (offset < length) {
        if (this.pos === this.cur.length) {
          this.full.push(this.cur);
          this.cur = chunkPool.take();
          this.pos = 0;
        }
        const n = Math.min(length - offset, this.cur.length - this.pos);
        this.pos += this.cur.write(text.slice(offset, offset + n), this.pos, n, 'latin1');
        offset += n;
      }
    }
    this.rows += rows;
    this.bytes += length;
    // Dense arrays up to the highest exchange index seen (spool headers keep them as JSON).
    while (this.rowsByExchange.length <= ex) {
      this.rowsByExchange.push(0);
      this.bytesByExchange.push(0);
    }
    this.rowsByExchange[ex] = (this.rowsByExchange[ex] ?? 0) + rows;
    this.bytesByExchange[ex] = (this.bytesByExchange[ex] ?? 0) + length;
    const bucket = ts - (ts % RUN_MS);
    const at = this.lastRun[ex] ?? -1;
    if (at >= 0 && this.runs[at + 1] === bucket) {
      this.runs[at + 2] = (this.runs[at + 2] ?? 0) + rows;
    } else {
      this.lastRun[ex] = this.runs.length;
      this.runs.push(ex, bucket, rows);
    }
  }

  seal(): SealedBatch {
    if (this.probe === undefined) throw new Error('sealing an empty batch');
    const pooled = [...this.full, this.cur];
    const chunks = [...this.full];
    if (this.pos > 0) chunks.push(this.cur.subarray(0, this.pos));
    return {
      id: nextBatchId++,
      table: this.table,
      rowFormat: LATEST_ROW_FORMAT,
      chunks,
      pooled,
      rows: this.rows,
      bytes: this.bytes,
      rowsByExchange: this.rowsByExchange,
      bytesByExchange: this.bytesByExchange,
      runs: this.runs,
      probe: this.probe,
      maybeWritten: false,
    };
  }

  /** Gives the buffers back without sealing (an empty batch). */
  discard(): void {
    for (const b of [...this.full, this.cur]) chunkPool.give(b);
  }
}

/** UTC month of an epoch-ms timestamp as yyyymm (the tables' partition), with the last month's range cached. */
export class MonthOf {
  private lo = 0;
  private hi = -1;
  private value = 0;

  get(ts: number): number {
    if (ts >= this.lo && ts < this.hi) return this.value;
    const d = new Date(ts);
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    this.lo = Date.UTC(y, m, 1);
    this.hi = Date.UTC(y, m + 1, 1);
    this.value = y * 100 + m + 1;
    return this.value;
  }
}

export function batchText(batch: Pick<SealedBatch, 'chunks'>): string {
  return Buffer.concat(batch.chunks).toString('latin1');
}
