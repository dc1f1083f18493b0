/**
 * The RowSink the tickers write to: renders each row as a TabSeparated line (row format 4 of @depthgate/history-store,
 * LATEST_ROW_FORMAT: `received_ts` then `venue_seq` last; verification points in their own table) straight into the
 * open batch of its table and month, and seals batches when they reach RECORDER_BATCH_MAX_ROWS /
 * RECORDER_BATCH_MAX_BYTES or are RECORDER_BATCH_MAX_DELAY_MS old. A batch never spans two months (so one insert is one part, all or nothing), and
 * a snapshot's book never spans two batches (so the probe of its last book is conclusive).
 *
 * Ordered book generations (redundant recording, docs/history-internals.md): the three book tables (deltas, gaps,
 * snapshots) are sealed together — a size or age seal of one seals the other two — and handed to the writer in the
 * order deltas → gaps → snapshots, which is the order its single book lane inserts them in. Within one generation a
 * ticker's rows are then in that order too: a book gap and the snapshot closing it end their ticker's part of the
 * generation (the next delta or book gap of that ticker seals the generation first; the closing snapshot stays in
 * the generation it comes in, and that generation ends for its ticker the same way). So
 * whatever prefix of the inserts lands, the landed deltas, gaps and gap-closing snapshots of each ticker are a prefix
 * of what was produced for it (only cadence snapshots, which repeat what the deltas say, may be missing in between).
 */
import { EXCHANGE_CODES, type ExchangeKey } from '@depthgate/platforms';
import type { GapStream, InsertTable, VerificationMethod } from '@depthgate/history-store';
import { SIDE_NAME, type LocalBook, type SideCode, formatDecimal } from '@depthgate/feeds';
import type { RecordedTrade, RowSink } from '../rows';
import { MonthOf, OpenBatch, addCounts, exchangeIndex, type SealedBatch } from './batch';

export interface BatchLimits {
  maxRows: number;
  maxBytes: number;
  maxDelayMs: number;
}

class TableBatcher {
  private readonly open = new Map<number, OpenBatch>();

  constructor(
    private readonly table: InsertTable,
    private readonly limits: BatchLimits,
    private readonly now: () => number,
    private readonly seal: (batch: SealedBatch) => void,
  ) {}

  batch(month: number): OpenBatch {
    let b = this.open.get(month);
    if (b === undefined) {
      b = new OpenBatch(this.table, month, this.now());
      this.open.set(month, b);
    }
    return b;
  }

  /** Whether `b` reached a size bound. */
  full(b: OpenBatch): boolean {
    return b.rows >= this.limits.maxRows || b.bytes >= this.limits.maxBytes;
  }

  /** Seals `b` if it reached a size bound. */
  check(b: OpenBatch): void {
    if (this.full(b)) this.sealOne(b);
  }

  /** Whether a batch is older than the delay bound. */
  due(now: number): boolean {
    for (const b of this.open.values()) if (now - b.createdAt >= this.limits.maxDelayMs) return true;
    return false;
  }

  private sealOne(b: OpenBatch): void {
    this.open.delete(b.month);
    if (b.rows > 0) this.seal(b.seal());
    else b.discard();
  }

  /** Seals batches older than the delay bound (all of them with `all`). */
  tick(now: number, all = false): void {
    for (const b of [...this.open.values()]) {
      if (all || now - b.createdAt >= this.limits.maxDelayMs) this.sealOne(b);
    }
  }

  get rowsOpen(): number[] {
    const out: number[] = [];
    for (const b of this.open.values()) addCounts(out, b.rowsByExchange);
    return out;
  }
}

/** The tables the sink writes. */
export const SINK_TABLES = [
  'deltas',
  'snapshots',
  'trades',
  'gaps',
  'verifications',
] as const satisfies readonly InsertTable[];
export type SinkTable = (typeof SINK_TABLES)[number];

export class TsvSink implements RowSink {
  private readonly deltas: TableBatcher;
  private readonly snapshots: TableBatcher;
  private readonly trades: TableBatcher;
  private readonly gaps: TableBatcher;
  private readonly verifications: TableBatcher;
  private readonly month = new MonthOf();
  /**
   * `exchange\tticker` of the tickers with a book gap or the snapshot closing one in the open generation: their next
   * delta or book gap seals it first.
   */
  private readonly gapped = new Set<string>();
  /** `exchange\tticker` of the tickers whose last book gap has no closing snapshot yet (across generations). */
  private readonly unclosed = new Set<string>();
  /** Rows produced, per exchange and table (what the feeds gave; rows written are counted by the writer). */
  readonly produced: Record<SinkTable, number[]> = {
    deltas: [],
    snapshots: [],
    trades: [],
    gaps: [],
    verifications: [],
  };

  /** `codes`: each exchange's stored code (its per-exchange counters sit at code − 1); the product's by default. */
  constructor(
    limits: BatchLimits,
    now: () => number,
    seal: (batch: SealedBatch) => void,
    private readonly codes: Readonly<Record<string, number>> = EXCHANGE_CODES,
    /** Told of every gap row this sink takes: the rows to be stored (recorder_gaps_total, recorder_trade_gaps_total). */
    private readonly onGap?: (exchange: ExchangeKey, reason: string, stream: GapStream) => void,
  ) {
    this.deltas = new TableBatcher('deltas', limits, now, seal);
    this.snapshots = new TableBatcher('snapshots', limits, now, seal);
    this.trades = new TableBatcher('trades', limits, now, seal);
    this.gaps = new TableBatcher('gaps', limits, now, seal);
    this.verifications = new TableBatcher('verifications', limits, now, seal);
  }

  delta(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    sequence: number,
    side: SideCode,
    price: string,
    quantityDelta: string,
    receivedTs: number,
    venueSeq: string,
  ): void {
    if (this.gapped.size > 0 && this.gapped.has(`${exchange}\t${ticker}`)) this.sealBook();
    const ex = exchangeIndex(this.codes[exchange] as number);
    const b = this.deltas.batch(this.month.get(ts));
    b.append(
      `${exchange}\t${ticker}\t${ts}\t${sequence}\t${SIDE_NAME[side]}\t${price}\t${quantityDelta}\t${receivedTs}\t${venueSeq}\n`,
      ex,
      1,
      ts,
    );
    b.probe = { table: 'deltas', exchange, ticker, ts, sequence };
    this.produced.deltas[ex] = (this.produced.deltas[ex] ?? 0) + 1;
    if (this.deltas.full(b)) this.sealBook();
  }

  snapshot(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    book: LocalBook,
    receivedTs: number,
    venueSeq: string,
  ): void {
    if (book.size === 0) return; // an empty book has no rows to write (docs/history-internals.md, "Recorder")
    const ex = exchangeIndex(this.codes[exchange] as number);
    const head = `${exchange}\t${ticker}\t${ts}\t`;
    const tail = `\t${receivedTs}\t${venueSeq}\n`;
    let text = '';
    for (const [price, level] of book.bids) text += `${head}bid\t${price}\t${level.s || formatDecimal(level.q)}${tail}`;
    for (const [price, level] of book.asks) text += `${head}ask\t${price}\t${level.s || formatDecimal(level.q)}${tail}`;
    if (this.unclosed.size > 0) {
      const key = `${exchange}\t${ticker}`;
      if (this.unclosed.delete(key)) this.gapped.add(key);
    }
    const b = this.snapshots.batch(this.month.get(ts));
    b.append(text, ex, book.size, ts);
    b.probe = { table: 'snapshots', exchange, ticker, ts };
    this.produced.snapshots[ex] = (this.produced.snapshots[ex] ?? 0) + book.size;
    if (this.snapshots.full(b)) this.sealBook();
  }

  trade(t: RecordedTrade): void {
    const { exchange, ticker, ts, tradeId, receivedTs } = t;
    const ex = exchangeIndex(this.codes[exchange] as number);
    const b = this.trades.batch(this.month.get(ts));
    // The lag of a trade runs from its receipt: a trade read back from REST after a disconnect is late by design.
    b.append(
      `${exchange}\t${ticker}\t${ts}\t${t.sequence}\t${tradeId}\t${t.price}\t${t.size}\t${t.side}\t${t.venueSide}\t${receivedTs}\t${t.venueSeq}\n`,
      ex,
      1,
      receivedTs,
    );
    b.probe = { table: 'trades', exchange, ticker, ts, tradeId };
    this.produced.trades[ex] = (this.produced.trades[ex] ?? 0) + 1;
    this.trades.check(b);
  }

  gap(
    exchange: ExchangeKey,
    ticker: string,
    fromTs: number,
    toTs: number,
    reason: string,
    detectedAt: number,
    stream: GapStream = 'book',
  ): void {
    if (stream === 'book') {
      const key = `${exchange}\t${ticker}`;
      if (this.gapped.has(key)) this.sealBook();
      this.gapped.add(key);
      this.unclosed.add(key);
    }
    const ex = exchangeIndex(this.codes[exchange] as number);
    const b = this.gaps.batch(0);
    b.append(`${exchange}\t${ticker}\t${fromTs}\t${toTs}\t${reason}\t${detectedAt}\t${stream}\n`, ex, 1, toTs);
    b.probe = { table: 'gaps', exchange, ticker, fromTs, toTs, reason, detectedAt };
    this.produced.gaps[ex] = (this.produced.gaps[ex] ?? 0) + 1;
    this.onGap?.(exchange, reason, stream);
    if (this.gaps.full(b)) this.sealBook();
  }

  /** A verification point: its month's batch (the table is partitioned by the month of `ts`, like the rows). */
  verification(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    method: VerificationMethod,
    detectedAt: number,
  ): void {
    const ex = exchangeIndex(this.codes[exchange] as number);
    const b = this.verifications.batch(this.month.get(ts));
    b.append(`${exchange}\t${ticker}\t${ts}\t${method}\t${detectedAt}\n`, ex, 1, ts);
    b.probe = { table: 'verifications', exchange, ticker, ts, method, detectedAt };
    this.produced.verifications[ex] = (this.produced.verifications[ex] ?? 0) + 1;
    this.verifications.check(b);
  }

  /** Ends the book generation: seals every open batch of the three book tables, deltas → gaps → snapshots. */
  private sealBook(): void {
    this.gapped.clear();
    this.deltas.tick(0, true);
    this.gaps.tick(0, true);
    this.snapshots.tick(0, true);
  }

  /** Seals what is old enough; everything with `all` (shutdown, tests). */
  tick(now: number, all = false): void {
    if (all || this.deltas.due(now) || this.gaps.due(now) || this.snapshots.due(now)) this.sealBook();
    this.trades.tick(now, all);
    this.verifications.tick(now, all);
  }

  /** Rows in open batches, per exchange index. */
  openRows(): number[] {
    const out: number[] = [];
    for (const t of [this.deltas, this.snapshots, this.trades, this.gaps, this.verifications]) {
      addCounts(out, t.rowsOpen);
    }
    return out;
  }
}
