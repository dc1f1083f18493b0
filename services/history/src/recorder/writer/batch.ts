/**
 * Batches of TabSeparated rows on their way to one table. Rows are rendered to text once, as they are produced
 * (no row objects on the hot path); a batch holds its text in chunks of about 64 KiB, the natural key of its last
 * row (for probe-before-retry), its rows and bytes per exchange (for the per-platform buffer and spool gauges) and
 * the event times of its rows in 10 ms runs (for the lag histogram, observed when ClickHouse acknowledges it).
 */
import { EXCHANGE_KEYS, type ExchangeKey } from '@depthgate/auth';
import type { InsertTable } from '../../clickhouse/inserts';

export const EXCHANGE_INDEX: Readonly<Record<ExchangeKey, number>> = { venue_b: 0, venue_c: 1, venue_a_us: 2 };
export { EXCHANGE_KEYS };

/** The natural key of a batch's last row: present in the table ⇔ the (atomic) batch was written. */
export type ProbeKey =
  | { table: 'deltas'; exchange: ExchangeKey; ticker: string; ts: number; sequence: number }
  | { table: 'snapshots'; exchange: ExchangeKey; ticker: string; ts: number }
  | {
      table: 'gaps';
      exchange: ExchangeKey;
      ticker: string;
      fromTs: number;
      toTs: number;
      reason: string;
      detectedAt: number;
    };

export interface SealedBatch {
  /** Process-unique id (log lines, tests). */
  id: number;
  table: InsertTable;
  /** TabSeparated text in chunks (ASCII only: the ticker grammar, digits, enums, reasons). */
  chunks: string[];
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
}

const CHUNK = 65_536;
const RUN_MS = 10;
let nextBatchId = 1;

/** One batch being filled. */
export class OpenBatch {
  readonly chunks: string[] = [];
  current = '';
  rows = 0;
  bytes = 0;
  readonly rowsByExchange = [0, 0, 0];
  readonly bytesByExchange = [0, 0, 0];
  readonly runs: number[] = [];
  private readonly lastRun = [-1, -1, -1];
  probe: ProbeKey | undefined;

  constructor(
    readonly table: InsertTable,
    readonly month: number,
    readonly createdAt: number,
  ) {}

  /** Appends rendered lines (one row or a whole book) of one exchange; `rows` rows at event time `ts`. */
  append(text: string, ex: number, rows: number, ts: number): void {
    this.current += text;
    if (this.current.length >= CHUNK) {
      this.chunks.push(this.current);
      this.current = '';
    }
    this.rows += rows;
    this.bytes += text.length;
    this.rowsByExchange[ex] = (this.rowsByExchange[ex] ?? 0) + rows;
    this.bytesByExchange[ex] = (this.bytesByExchange[ex] ?? 0) + text.length;
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
    if (this.current.length > 0) this.chunks.push(this.current);
    this.current = '';
    if (this.probe === undefined) throw new Error('sealing an empty batch');
    return {
      id: nextBatchId++,
      table: this.table,
      chunks: this.chunks,
      rows: this.rows,
      bytes: this.bytes,
      rowsByExchange: this.rowsByExchange,
      bytesByExchange: this.bytesByExchange,
      runs: this.runs,
      probe: this.probe,
      maybeWritten: false,
    };
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
  return batch.chunks.join('');
}
