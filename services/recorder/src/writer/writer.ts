/**
 * The write pipeline: sealed batches → per-table lanes → ClickHouse, with a bounded memory queue, the spool behind
 * it, probe-before-retry, exponential backoff while ClickHouse is away, and backpressure.
 *
 * - One lane per table inserts one batch at a time, oldest first (memory queue, then the spool, which only ever
 *   holds batches younger than the memory queue's).
 * - A sealed batch goes to memory while the memory queue holds less than RECORDER_BUFFER_MAX_BYTES and that table's
 *   spool is empty; otherwise it is appended to the spool (write + fdatasync) — order per table is kept.
 * - A failed insert is ambiguous (the server may have committed it before the connection broke, or may still be
 *   running it): before the next attempt the lane makes sure the old query is gone (the store kills it and waits
 *   for it to leave the server's process list) and probes for the batch's last row; present means written. Batches
 *   are single-part inserts (one month, under max_insert_block_size rows), so present-or-absent is all-or-nothing.
 *   On a cluster (`retriesDeduplicated`) there is no probe: the same bytes go again, and every shard's replicated
 *   table drops the block it already holds (a batch spread over shards may have reached some and not others, which
 *   a probe of one row could not tell). Retries back off exponentially (with jitter) up to 5 s. Rows ClickHouse refuses as malformed (which the encoders make impossible) are moved to
 *   `<spool>/rejected/` with an error log instead of blocking the lane forever.
 * - When the spool holds RECORDER_SPOOL_MAX_BYTES, `onPressure(true)` asks the feeds to stop reading; they are
 *   resumed below 80 % of both bounds.
 * - close(): seal everything, keep inserting the memory queue until it is empty or the deadline passes, then
 *   abort what is in flight and spool every batch still in memory. Nothing is dropped.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { classifyClickHouseError, newQueryId, type InsertTable, type RecorderStore } from '@depthgate/history-store';
import type { Logger } from '@depthgate/service-kit';
import { addCounts, releaseBatch, type SealedBatch } from './batch';
import { TableSpool } from './spool';

/** What the writer needs of the store (a fake stands in for it in the unit tests). */
export type WriterStore = Pick<RecorderStore, 'insert' | 'probeBatch' | 'ensureQueryEnded' | 'retriesDeduplicated'>;

export interface WriterOptions {
  store: WriterStore;
  spoolDir: string;
  maxMemoryBytes: number;
  maxSpoolBytes: number;
  spoolFileBytes: number;
  insertTimeoutMs: number;
  logger: Logger;
  now?: () => number;
  /** Called with true when the feeds must stop reading, false when they may go on. */
  onPressure?: (paused: boolean) => void;
  /** A batch is in ClickHouse: rows written, and lag runs to observe. */
  onWritten?: (batch: SealedBatch, ackAt: number) => void;
  onInsert?: (table: InsertTable, outcome: 'ok' | 'failed', seconds: number, kind?: string) => void;
  onProbe?: (result: 'present' | 'absent' | 'failed') => void;
  onRejected?: (batch: SealedBatch) => void;
}

/** ClickHouse error codes that mean "these rows are malformed" (retrying cannot help). */
const REJECTING_CODES = new Set([6, 25, 26, 27, 38, 41, 53, 69, 70, 72, 117, 131, 407]);

const TABLES: InsertTable[] = ['gaps', 'snapshots', 'deltas', 'trades', 'verifications'];

class Lane {
  readonly queue: SealedBatch[] = [];
  inflight: SealedBatch | undefined;
  abort: AbortController | undefined;
  private wake: (() => void) | undefined;
  running: Promise<void> | undefined;
  failures = 0;

  constructor(
    readonly table: InsertTable,
    readonly spool: TableSpool,
  ) {}

  signal(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  waitForWork(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }
}

export class Writer {
  private readonly lanes: Record<InsertTable, Lane>;
  private memoryBytes = 0;
  private readonly memoryRows: number[] = [];
  private stopping = false;
  private paused = false;
  private readonly now: () => number;
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  constructor(private readonly o: WriterOptions) {
    this.now = o.now ?? Date.now;
    mkdirSync(o.spoolDir, { recursive: true });
    this.lanes = Object.fromEntries(
      TABLES.map((t) => [t, new Lane(t, new TableSpool(o.spoolDir, t, o.spoolFileBytes, o.logger))]),
    ) as Record<InsertTable, Lane>;
    const spooled = TABLES.map((t) => this.lanes[t].spool.pendingRecords).reduce((a, b) => a + b, 0);
    if (spooled > 0) {
      o.logger.info({ batches: spooled, bytes: this.spoolBytes() }, 'spool holds batches from an earlier run');
    }
  }

  start(): void {
    for (const lane of Object.values(this.lanes)) lane.running = this.run(lane);
  }

  /** Takes a sealed batch (from the sink). */
  enqueue(batch: SealedBatch): void {
    const lane = this.lanes[batch.table];
    if (this.stopping && lane.running === undefined) {
      lane.spool.append(batch);
      releaseBatch(batch);
      return;
    }
    const spoolFull = this.spoolBytes() >= this.o.maxSpoolBytes;
    if (lane.spool.empty && (this.memoryBytes + batch.bytes <= this.o.maxMemoryBytes || spoolFull)) {
      // (With the spool full, memory takes it beyond its bound: the feeds are paused, so this is bounded.)
      this.pushMemory(lane, batch);
    } else if (spoolFull) {
      this.pushMemory(lane, batch);
    } else {
      try {
        lane.spool.append(batch);
        releaseBatch(batch);
      } catch (err) {
        this.o.logger.error({ err, table: lane.table }, 'cannot write the spool; keeping the batch in memory');
        this.pushMemory(lane, batch);
      }
    }
    this.checkPressure();
    lane.signal();
  }

  private pushMemory(lane: Lane, batch: SealedBatch): void {
    lane.queue.push(batch);
    this.memoryBytes += batch.bytes;
    addCounts(this.memoryRows, batch.rowsByExchange);
  }

  private popMemory(lane: Lane): void {
    const batch = lane.queue.shift();
    if (!batch) return;
    this.memoryBytes -= batch.bytes;
    addCounts(this.memoryRows, batch.rowsByExchange, -1);
  }

  private checkPressure(): void {
    const spool = this.spoolBytes();
    if (!this.paused && spool >= this.o.maxSpoolBytes) {
      this.paused = true;
      this.o.logger.error(
        { spool_bytes: spool, max: this.o.maxSpoolBytes },
        'spool full: pausing the feeds until ClickHouse takes rows again (venues may disconnect us; recorded as gaps)',
      );
      this.o.onPressure?.(true);
    } else if (this.paused && spool < this.o.maxSpoolBytes * 0.8 && this.memoryBytes < this.o.maxMemoryBytes * 0.8) {
      this.paused = false;
      this.o.logger.warn({ spool_bytes: spool }, 'spool below its bound again: resuming the feeds');
      this.o.onPressure?.(false);
    }
  }

  /** Rows in memory (queued or in flight), per exchange index. */
  bufferedRows(): number[] {
    return [...this.memoryRows];
  }

  /** Payload bytes waiting in the spool, per exchange index. */
  spoolBytesByExchange(): number[] {
    const out: number[] = [];
    for (const lane of Object.values(this.lanes)) addCounts(out, lane.spool.pendingBytesByExchange);
    return out;
  }

  spoolBytes(): number {
    return Object.values(this.lanes).reduce((n, l) => n + l.spool.pendingBytes, 0);
  }

  /** Nothing waits in memory or in the spool. */
  get idle(): boolean {
    return Object.values(this.lanes).every((l) => l.queue.length === 0 && l.spool.empty && l.inflight === undefined);
  }

  get spoolEmpty(): boolean {
    return Object.values(this.lanes).every((l) => l.spool.empty);
  }

  get isPaused(): boolean {
    return this.paused;
  }

  private async run(lane: Lane): Promise<void> {
    while (!this.stopping) {
      const fromMemory = lane.queue[0];
      const batch = fromMemory ?? lane.spool.peek();
      if (batch === undefined) {
        await lane.waitForWork();
        continue;
      }
      lane.inflight = batch;
      const done = await this.deliver(lane, batch);
      lane.inflight = undefined;
      if (!done) break;
      if (fromMemory) this.popMemory(lane);
      else lane.spool.ack(batch);
      this.o.onWritten?.(batch, this.now());
      releaseBatch(batch);
      this.checkPressure();
    }
  }

  /** Inserts a batch, retrying until it is in ClickHouse (true) or the writer stops (false). */
  private async deliver(lane: Lane, batch: SealedBatch): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopping) return false;
      try {
        // On a cluster a batch sent again is dropped by every shard that already has it (RecorderStore): no probe.
        if (batch.maybeWritten && !this.o.store.retriesDeduplicated) {
          if (batch.lastQueryId) await this.o.store.ensureQueryEnded(batch.lastQueryId);
          let present: boolean;
          try {
            present = await this.o.store.probeBatch(batch.probe);
          } catch (err) {
            this.o.onProbe?.('failed');
            throw err;
          }
          this.o.onProbe?.(present ? 'present' : 'absent');
          if (present) {
            this.o.logger.info(
              { batch: batch.id, table: lane.table, rows: batch.rows },
              'batch found in ClickHouse after an uncertain insert: not inserted again',
            );
            this.recovered(lane);
            return true;
          }
        }
        batch.maybeWritten = true;
        batch.lastQueryId = newQueryId(`insert-${lane.table}`);
        const abort = new AbortController();
        lane.abort = abort;
        const timer = setTimeout(() => abort.abort(new Error('insert timeout')), this.o.insertTimeoutMs);
        const started = process.hrtime.bigint();
        try {
          await this.o.store.insert(lane.table, batch.chunks, {
            queryId: batch.lastQueryId,
            signal: abort.signal,
            rowFormat: batch.rowFormat,
          });
        } finally {
          clearTimeout(timer);
          lane.abort = undefined;
        }
        this.o.onInsert?.(lane.table, 'ok', Number(process.hrtime.bigint() - started) / 1e9);
        this.recovered(lane);
        return true;
      } catch (err) {
        const failure = classifyClickHouseError(err);
        this.o.onInsert?.(lane.table, 'failed', 0, failure.kind);
        if (failure.code !== undefined && REJECTING_CODES.has(failure.code)) {
          this.reject(lane, batch, failure.message);
          return true;
        }
        if (lane.failures === 0 || lane.failures % 20 === 0) {
          this.o.logger.warn(
            { table: lane.table, batch: batch.id, rows: batch.rows, kind: failure.kind, err: failure.message },
            'insert failed; retrying (probe first)',
          );
        }
        lane.failures++;
        if (this.stopping) return false;
        await this.sleep(Math.min(5000, 100 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2));
      }
    }
  }

  private recovered(lane: Lane): void {
    if (lane.failures > 0) {
      this.o.logger.info({ table: lane.table, failures: lane.failures }, 'ClickHouse takes inserts again');
    }
    lane.failures = 0;
  }

  private reject(lane: Lane, batch: SealedBatch, message: string): void {
    const dir = path.join(this.o.spoolDir, 'rejected');
    const file = path.join(dir, `${lane.table}-${this.now()}-${batch.id}.tsv`);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, Buffer.concat(batch.chunks));
    } catch (err) {
      this.o.logger.error({ err }, 'cannot write the rejected batch');
    }
    this.o.logger.error(
      { table: lane.table, rows: batch.rows, file, err: message },
      'ClickHouse refused a batch as malformed; kept in the rejected folder',
    );
    this.o.onRejected?.(batch);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.sleeps.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.sleeps.add(entry);
    });
  }

  /**
   * Stops: waits until the memory queues are written or `deadlineMs` passes, then aborts what is in flight and
   * spools every batch still in memory. The spool keeps what ClickHouse did not take; the next start replays it.
   */
  async close(deadlineMs: number): Promise<void> {
    const deadline = this.now() + deadlineMs;
    while (this.now() < deadline && Object.values(this.lanes).some((l) => l.queue.length > 0)) {
      await new Promise((r) => setTimeout(r, 20));
    }
    this.stopping = true;
    for (const s of this.sleeps) {
      clearTimeout(s.timer);
      s.resolve();
    }
    this.sleeps.clear();
    const abandoned: string[] = [];
    for (const lane of Object.values(this.lanes)) {
      if (lane.abort && lane.inflight?.lastQueryId) abandoned.push(lane.inflight.lastQueryId);
      lane.abort?.abort(new Error('recorder stopping'));
      lane.signal();
    }
    await Promise.all(Object.values(this.lanes).map((l) => l.running));
    // An aborted insert may still be running on the server; make sure it has ended, so that the probe before the
    // replay at the next start cannot miss rows it commits later. If ClickHouse cannot answer now, the spooled
    // record carries the query id and the replay makes sure instead.
    await Promise.all(
      abandoned.map((id) =>
        this.o.store
          .ensureQueryEnded(id, 5000)
          .catch((err: unknown) =>
            this.o.logger.warn(
              { queryId: id, err: { message: (err as Error).message } },
              'could not confirm an aborted insert ended',
            ),
          ),
      ),
    );
    let spooled = 0;
    for (const lane of Object.values(this.lanes)) {
      // The memory queue is older than anything in the spool: it goes in front.
      const batches = lane.queue.splice(0);
      lane.spool.prepend(batches);
      for (const b of batches) releaseBatch(b);
      spooled += batches.reduce((n, b) => n + b.rows, 0);
      lane.running = undefined;
    }
    this.memoryBytes = 0;
    this.memoryRows.fill(0);
    if (spooled > 0)
      this.o.logger.warn({ rows: spooled }, 'rows not yet in ClickHouse were spooled for the next start');
    for (const lane of Object.values(this.lanes)) lane.spool.close();
  }
}
