/**
 * The write pipeline: sealed batches → per-table lanes → ClickHouse, with a bounded memory queue, the spool behind
 * it, probe-before-retry, exponential backoff while ClickHouse is away, and backpressure.
 *
 * - Three lanes insert one batch at a time each, oldest first (memory queue, then the spool, which only ever holds
 *   batches younger than the memory queue's): `book` (deltas, gaps, snapshots, in the order the sink sealed them:
 *   one generation's deltas → gaps → snapshots, then the next generation's — so what lands of each ticker's book is a
 *   prefix of what was produced, TsvSink), `trades` and `verifications` (independent).
 * - Redundant recording: batches carry the writer's `term` (spool records keep it; insert query ids name it, so a new
 *   owner can kill a deposed term's inserts); `gate()` is asked before every insert attempt (false: the lane's
 *   batches go to the spool, in order, until it opens again — no failure); the spool is replayed through the term's
 *   `fence` (rows of tickers handed over from that term are dropped, redundancy/spool-fence.ts).
 * - A sealed batch goes to memory while the memory queue holds less than RECORDER_BUFFER_MAX_BYTES and its lane's
 *   spool is empty; otherwise it is appended to the spool (write + fdatasync) — order per table is kept. While a
 *   lane's spool holds batches, every younger one goes behind them, the spool full or not (the feeds are paused then,
 *   so this is bounded); one the spool cannot take (a write error) waits in memory behind the spool (the lane's
 *   tail), and is inserted after it or spooled at the next write that works — the next batch's, or a lane's next retry
 *   of a failed insert while memory is past its bound.
 * - A failed insert is ambiguous (the server may have committed it before the connection broke, or may still be
 *   running it): before the next attempt the lane makes sure the old query is gone (the store kills it and waits
 *   for it to leave the server's process list) and probes for the batch's last row; present means written. Batches
 *   are single-part inserts (one month, under max_insert_block_size rows) sent as gzip (a body cut short by an abort
 *   or a crash inserts nothing: history-store's createConnection), so present-or-absent is all-or-nothing.
 *   On a cluster (`retriesDeduplicated`) there is no probe: the same bytes go again, and every shard's replicated
 *   table drops the block it already holds (a batch spread over shards may have reached some and not others, which
 *   a probe of one row could not tell). Retries back off exponentially (with jitter) up to 5 s. Rows ClickHouse refuses as malformed (which the encoders make impossible) are moved to
 *   `<spool>/rejected/` with an error log instead of blocking the lane forever.
 * - When the spool holds RECORDER_SPOOL_MAX_BYTES, or memory holds more than RECORDER_BUFFER_MAX_BYTES (only a spool
 *   that cannot be written leaves batches there beyond it), `onPressure(true)` asks the feeds to stop reading; they are
 *   resumed below 80 % of both bounds. So with ClickHouse away and the spool failing, memory holds the bound and what
 *   the feeds had already read, not more.
 * - close(): seal everything, keep inserting the memory queue until it is empty or the deadline passes, then
 *   abort what is in flight and spool every batch still in memory. Nothing is dropped.
 * - drained(timeoutMs): a hand-over waits until what was enqueued before it is durable; past the timeout (ClickHouse
 *   away) the lanes' in-flight inserts are aborted and the memory batches spooled, as close() does, so a hand-over or
 *   a stop never waits on ClickHouse.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  classifyClickHouseError,
  recorderQueryId,
  type InsertTable,
  type ProbeKey,
  type RecorderStore,
  type VerificationMethod,
} from '@depthgate/history-store';
import type { ExchangeKey } from '@depthgate/platforms';
import type { Logger } from '@depthgate/service-kit';
import { fenceRows, lastLineOfEachTicker, type Fence } from '../redundancy/spool-fence';
import { addCounts, batchText, releaseBatch, type SealedBatch } from './batch';
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
  /** A write to the spool failed (a full or failing disk): the batches stay in memory. */
  onSpoolFailure?: () => void;
  /** The recorder term its batches are produced under (redundant recording; 0, the default: solo). */
  term?: number;
  /** Asked before every insert attempt: false (the lease's local deadline passed) → the batch is spooled instead. */
  gate?: () => boolean;
  /** The fence of a term's spooled rows, asked once per term before its first record is replayed. */
  fence?: (term: number) => Promise<Fence | undefined>;
}

/**
 * The query id of an insert: `rec-{term}-{table}-{uuid}` under a term (a new owner kills the deposed term's inserts
 * by that prefix), today's form solo. A spooled record's is named by its place in the spool (file and offset) instead
 * of a uuid, the same at every attempt and after a restart: the probe before a replay first makes sure no insert of it
 * is still running — one a dead process left committing could land after the probe said absent (the record twice).
 */
function insertQueryId(term: number, table: InsertTable, spool?: SealedBatch['spool']): string {
  const place = spool && `spool-${path.basename(spool.file, '.spool').toLowerCase()}-${spool.offset}`;
  return recorderQueryId(term, table, place);
}

/** The probe key of a (kept) TabSeparated line of `table`: the same fields the sink keys its batches by. */
function probeOfLine(table: InsertTable, f: readonly string[]): ProbeKey {
  const exchange = f[0] as ExchangeKey;
  const ticker = f[1] as string;
  const ts = Number(f[2]);
  switch (table) {
    case 'deltas':
      return { table, exchange, ticker, ts, sequence: Number(f[3]) };
    case 'snapshots':
      return { table, exchange, ticker, ts };
    case 'trades':
      return { table, exchange, ticker, ts, tradeId: f[4] as string };
    case 'gaps':
      return {
        table,
        exchange,
        ticker,
        fromTs: ts,
        toTs: Number(f[3]),
        reason: f[4] as string,
        detectedAt: Number(f[5]),
      };
    case 'verifications':
      return {
        table,
        exchange,
        ticker,
        ts,
        method: f[3] as VerificationMethod,
        detectedAt: Number(f[4]),
      };
    case 'handovers':
      // Written directly by the controller (RecorderStore.insertHandovers), never through a lane or the spool.
      throw new TypeError('handovers rows are not spooled');
  }
}

/** ClickHouse error codes that mean "these rows are malformed" (retrying cannot help). */
const REJECTING_CODES = new Set([6, 25, 26, 27, 38, 41, 53, 69, 70, 72, 117, 131, 407]);

type LaneName = 'book' | 'trades' | 'verifications';
const LANES: LaneName[] = ['book', 'trades', 'verifications'];
const BOOK_TABLES = ['deltas', 'gaps', 'snapshots'] as const;
const laneOf = (table: InsertTable): LaneName => (table === 'trades' || table === 'verifications' ? table : 'book');

interface DrainWaiter {
  left: Set<SealedBatch>;
  resolve: () => void;
}

/** The lane's memory (queue or tail) holds a batch the drained() caller waits for. */
const holdsFor = (lane: Lane, waiter: DrainWaiter): boolean =>
  lane.queue.some((b) => waiter.left.has(b)) || lane.tail.some((b) => waiter.left.has(b));

class Lane {
  /** Memory batches older than anything in the spool. */
  readonly queue: SealedBatch[] = [];
  /**
   * Memory batches younger than the spool, which the spool could not take (a write error): spooled at the next write
   * that works, or moved to the queue once the spool is replayed. Never in flight.
   */
  readonly tail: SealedBatch[] = [];
  inflight: SealedBatch | undefined;
  /** drained() ran out of time: the memory batches are to go to the spool (the insert in flight is aborted). */
  evict = false;
  /** Ends the retry pause the lane is in, if any. */
  wakeSleep: (() => void) | undefined;
  abort: AbortController | undefined;
  private wake: (() => void) | undefined;
  running: Promise<void> | undefined;
  failures = 0;
  /** now() of the first failed insert since the last success. */
  troubleSince: number | undefined;
  /** Every spool it replays: an older build's per-table spools (book lane) first, then its own (`spool`). */
  readonly spools: TableSpool[];

  constructor(
    readonly name: LaneName,
    readonly spool: TableSpool,
    legacy: TableSpool[] = [],
  ) {
    this.spools = [...legacy, spool];
  }

  get spoolEmpty(): boolean {
    return this.spools.every((s) => s.empty);
  }

  /** The oldest spooled batch and the spool it is in. */
  peekSpool(): { batch: SealedBatch; spool: TableSpool } | undefined {
    for (const spool of this.spools) {
      const batch = spool.peek();
      if (batch) return { batch, spool };
    }
    return undefined;
  }

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
  private readonly lanes: Record<LaneName, Lane>;
  private memoryBytes = 0;
  private readonly memoryRows: number[] = [];
  private stopping = false;
  private paused = false;
  private readonly now: () => number;
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private readonly term: number;
  /** drained() callers: the memory batches each still waits for. */
  private drainWaiters: DrainWaiter[] = [];
  /** Fences by term (asked once per term). */
  private readonly fences = new Map<number, Fence | undefined>();
  /** Spooled batches filtered by their fence: at which fence epoch (invalidateFence() starts a new one). */
  private readonly fencedAt = new WeakMap<SealedBatch, number>();
  private fenceEpoch = 0;
  /**
   * Memory batches spoolOlder wrote to the spool while they were in flight (they stayed in memory too), with the
   * query id their copy names: a retry since has another, which a copy must name for its replay to make sure it ended.
   */
  private readonly copied = new WeakMap<SealedBatch, string | undefined>();

  constructor(private readonly o: WriterOptions) {
    this.now = o.now ?? Date.now;
    this.term = o.term ?? 0;
    mkdirSync(o.spoolDir, { recursive: true });
    const spool = (name: string) => new TableSpool(o.spoolDir, name, o.spoolFileBytes, o.logger);
    // Per-table book spools of an older build (one lane per table) are replayed before anything of this one.
    const legacy = BOOK_TABLES.filter((t) => existsSync(path.join(o.spoolDir, t))).map(spool);
    this.lanes = {
      book: new Lane('book', spool('book'), legacy),
      trades: new Lane('trades', spool('trades')),
      verifications: new Lane('verifications', spool('verifications')),
    };
    const spooled = this.allSpools().reduce((n, s) => n + s.pendingRecords, 0);
    if (spooled > 0) {
      o.logger.info({ batches: spooled, bytes: this.spoolBytes() }, 'spool holds batches from an earlier run');
    }
  }

  private allSpools(): TableSpool[] {
    return LANES.flatMap((l) => this.lanes[l].spools);
  }

  start(): void {
    for (const lane of Object.values(this.lanes)) lane.running = this.run(lane);
  }

  /** Takes a sealed batch (from the sink); it carries the writer's term from here on. */
  enqueue(batch: SealedBatch): void {
    batch.term ??= this.term;
    const lane = this.lanes[laneOf(batch.table)];
    if (this.stopping && lane.running === undefined) {
      lane.spool.append(batch);
      releaseBatch(batch);
      return;
    }
    const spoolFull = this.spoolBytes() >= this.o.maxSpoolBytes;
    if (lane.spoolEmpty && lane.tail.length === 0) {
      if (this.memoryBytes + batch.bytes <= this.o.maxMemoryBytes || spoolFull) {
        // (With the spool full, memory takes it beyond its bound: the feeds are paused, so this is bounded.)
        this.pushMemory(lane.queue, batch);
        this.checkPressure();
        lane.signal();
        return;
      }
    }
    // Behind everything older, the spool full or not: a batch younger than a spooled one is never inserted before it.
    try {
      this.spoolMemoryBehind(lane);
      lane.spool.append(batch);
      releaseBatch(batch);
    } catch (err) {
      this.spoolFailed(err, { table: batch.table }, 'cannot write the spool; keeping the batch in memory');
      this.pushMemory(lane.spoolEmpty && lane.tail.length === 0 ? lane.queue : lane.tail, batch);
    }
    this.checkPressure();
    lane.signal();
  }

  /**
   * Before a batch goes to the spool while older ones wait in memory: those go to the spool first, in order — the one
   * being inserted as a copy (it stays in memory; its record is probed before a replay, so it never lands twice). A
   * crash then loses no older batch while a younger spooled one survives: what lands is a prefix of production per
   * lane (the book tables' exact resume point, and the redundant recorders' landed end, rely on it).
   */
  private spoolOlder(lane: Lane): void {
    if (lane.queue.length === 0) return;
    const inflight = lane.inflight !== undefined && lane.queue[0] === lane.inflight ? lane.inflight : undefined;
    // Only the one in flight, its copy already spooled under its current query id: nothing to write.
    if (lane.queue.length === 1 && inflight && this.hasCopy(inflight)) return;
    // Written first: a spool that cannot be written leaves the queue as it was (throws).
    lane.spool.prepend(lane.queue);
    if (inflight) this.copied.set(inflight, inflight.lastQueryId);
    this.leaveMemory(lane.queue.splice(inflight === undefined ? 0 : 1));
  }

  /** spoolOlder, then spoolTail: what the lane holds in memory goes to the spool, in order (throws as they do). */
  private spoolMemoryBehind(lane: Lane): void {
    this.spoolOlder(lane);
    this.spoolTail(lane);
  }

  /**
   * Memory is past its bound (the feeds are paused), the spool not full: only a spool that could not be written left
   * batches there. At every retry of a failed insert the lane tries it again (as the next batch would): a spool that
   * works again takes the lane's memory batches (in order) and the feeds resume, ClickHouse still away.
   */
  private relieveMemory(lane: Lane): void {
    if (this.memoryBytes <= this.o.maxMemoryBytes || this.spoolFull) return;
    // (The batch in flight stays in memory either way: nothing to do for a lane that holds only it.)
    const inflight = lane.inflight !== undefined && lane.queue[0] === lane.inflight ? 1 : 0;
    if (lane.queue.length - inflight + lane.tail.length === 0) return;
    if (!this.trySpoolMemory(lane, () => this.spoolMemoryBehind(lane))) return; // the pause holds
    this.o.logger.warn({ lane: lane.name }, 'the spool takes batches again: memory batches spooled');
    this.checkPressure();
  }

  /** A spool write failed: said (error log) and counted (recorder_spool_write_failures_total). */
  private spoolFailed(err: unknown, fields: Record<string, unknown>, message: string): void {
    this.o.logger.error({ err, ...fields }, message);
    this.o.onSpoolFailure?.();
  }

  /** The batch's copy in the spool names its current query id. */
  private hasCopy(batch: SealedBatch): boolean {
    return this.copied.has(batch) && this.copied.get(batch) === batch.lastQueryId;
  }

  /** Appends the lane's tail to the spool, in order (throws at the first batch the spool cannot take, keeping it). */
  private spoolTail(lane: Lane): number {
    let rows = 0;
    while (lane.tail.length > 0) {
      const batch = lane.tail[0] as SealedBatch;
      lane.spool.append(batch);
      lane.tail.shift();
      rows += batch.rows;
      this.leaveMemory([batch]);
    }
    return rows;
  }

  private pushMemory(list: SealedBatch[], batch: SealedBatch): void {
    list.push(batch);
    this.memoryBytes += batch.bytes;
    addCounts(this.memoryRows, batch.rowsByExchange);
  }

  /** A memory batch landed (the first of `list`). */
  private popMemory(list: SealedBatch[]): void {
    const batch = list.shift();
    if (!batch) return;
    this.memoryBytes -= batch.bytes;
    addCounts(this.memoryRows, batch.rowsByExchange, -1);
    this.settled([batch]);
  }

  /** Batches taken out of memory into the spool: released, and drained() callers waiting for them may go on. */
  private leaveMemory(batches: SealedBatch[]): void {
    for (const b of batches) {
      this.memoryBytes -= b.bytes;
      addCounts(this.memoryRows, b.rowsByExchange, -1);
      releaseBatch(b);
    }
    this.settled(batches);
  }

  /**
   * Moves the lane's memory queue in front of its spool (it is older), durably, then its tail behind it; the batches
   * are released. Throws when the spool cannot be written (what was not written stays in memory).
   */
  private spoolMemory(lane: Lane): number {
    // (A batch spoolOlder copied to the spool while it was in flight is there already, in front — unless it was sent
    // again since, under a query id its copy does not name: then a fresh copy goes in front of the old one.)
    lane.spool.prepend(lane.queue.filter((b) => !this.hasCopy(b)));
    const batches = lane.queue.splice(0);
    this.leaveMemory(batches);
    return batches.reduce((n, b) => n + b.rows, 0) + this.spoolTail(lane);
  }

  /** Batches that left memory (landed, rejected or spooled): drained() callers waiting for them may go on. */
  private settled(batches: SealedBatch[]): void {
    if (this.drainWaiters.length === 0) return;
    this.drainWaiters = this.drainWaiters.filter((w) => {
      for (const b of batches) w.left.delete(b);
      if (w.left.size > 0) return true;
      w.resolve();
      return false;
    });
  }

  /**
   * Resolves when every batch enqueued before the call is in ClickHouse or in the spool (durable either way). Rows
   * still in the sink's open batches are not enqueued yet: seal them first (TsvSink.tick(now, true)).
   */
  drained(timeoutMs?: number): Promise<void> {
    const left = new Set(LANES.flatMap((l) => [...this.lanes[l].queue, ...this.lanes[l].tail]));
    if (left.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: DrainWaiter = { left, resolve };
      this.drainWaiters.push(waiter);
      if (timeoutMs === undefined) return;
      const timers: NodeJS.Timeout[] = [];
      waiter.resolve = () => {
        for (const t of timers) clearTimeout(t);
        resolve();
      };
      timers.push(
        setTimeout(() => {
          this.o.logger.warn(
            { batches: waiter.left.size, timeoutMs },
            'ClickHouse did not take the rows in time: spooling them instead',
          );
          this.evict(waiter);
          // A spool that cannot be written either: give up waiting (said loudly), rather than wait on both forever.
          timers.push(
            setTimeout(() => {
              this.o.logger.error(
                { batches: waiter.left.size },
                'rows are neither in ClickHouse nor in the spool: going on without them being durable',
              );
              this.drainWaiters = this.drainWaiters.filter((w) => w !== waiter);
              waiter.resolve();
            }, timeoutMs),
          );
        }, timeoutMs),
      );
    });
  }

  /** A drained() caller waits for a batch of the lane's memory. */
  private waitedFor(lane: Lane): boolean {
    return this.drainWaiters.some((w) => holdsFor(lane, w));
  }

  /** The lanes holding batches `waiter` waits for spool their memory batches (aborting the insert in flight). */
  private evict(waiter: DrainWaiter): void {
    for (const lane of Object.values(this.lanes)) {
      if (!holdsFor(lane, waiter)) continue;
      lane.evict = true;
      lane.abort?.abort(new Error('spooled: ClickHouse did not take the batch in time'));
      lane.wakeSleep?.();
      lane.signal();
    }
  }

  /** How long inserts have been failing without a success in between (on any lane), by the writer's clock. */
  writeTroubleForMs(): number | undefined {
    const since = this.writeTroubleSince();
    return since === undefined ? undefined : this.now() - since;
  }

  /** now() since when inserts have been failing without a success in between (on any lane); undefined: healthy. */
  writeTroubleSince(): number | undefined {
    let since: number | undefined;
    for (const l of Object.values(this.lanes)) {
      if (l.troubleSince !== undefined && (since === undefined || l.troubleSince < since)) since = l.troubleSince;
    }
    return since;
  }

  /**
   * Backpressure: the feeds are paused when the spool is full or memory is past its bound (the spool cannot be
   * written), and resumed once both are below 80 % of their bounds.
   */
  private checkPressure(): void {
    const spool = this.spoolBytes();
    const memory = this.memoryBytes;
    const bounds = {
      spool_bytes: spool,
      max_spool_bytes: this.o.maxSpoolBytes,
      memory_bytes: memory,
      max_memory_bytes: this.o.maxMemoryBytes,
    };
    const spoolFull = spool >= this.o.maxSpoolBytes;
    if (!this.paused && (spoolFull || memory > this.o.maxMemoryBytes)) {
      this.paused = true;
      this.o.logger.error(
        bounds,
        spoolFull
          ? 'spool full: pausing the feeds until ClickHouse takes rows again (venues may disconnect us; recorded as gaps)'
          : 'memory full and the spool cannot be written: pausing the feeds until ClickHouse or the spool takes rows again (venues may disconnect us; recorded as gaps)',
      );
      this.o.onPressure?.(true);
    } else if (this.paused && spool < this.o.maxSpoolBytes * 0.8 && memory < this.o.maxMemoryBytes * 0.8) {
      this.paused = false;
      this.o.logger.warn(bounds, 'spool and memory below their bounds again: resuming the feeds');
      this.o.onPressure?.(false);
    }
  }

  /** Rows in memory (queued or in flight), per exchange index. */
  bufferedRows(): number[] {
    return [...this.memoryRows];
  }

  /** Bytes of the batches held in memory: what RECORDER_BUFFER_MAX_BYTES bounds (`recorder_buffer_bytes`). */
  bufferedBytes(): number {
    return this.memoryBytes;
  }

  /** Payload bytes waiting in the spool, per exchange index. */
  spoolBytesByExchange(): number[] {
    const out: number[] = [];
    for (const s of this.allSpools()) addCounts(out, s.pendingBytesByExchange);
    return out;
  }

  spoolBytes(): number {
    return this.allSpools().reduce((n, s) => n + s.pendingBytes, 0);
  }

  /** Nothing waits in memory or in the spool. */
  get idle(): boolean {
    return Object.values(this.lanes).every(
      (l) => l.queue.length === 0 && l.tail.length === 0 && l.spoolEmpty && l.inflight === undefined,
    );
  }

  get spoolEmpty(): boolean {
    return Object.values(this.lanes).every((l) => l.spoolEmpty);
  }

  /** The spool holds RECORDER_SPOOL_MAX_BYTES (the feeds are paused; onPressure(true) said so). */
  get spoolFull(): boolean {
    return this.spoolBytes() >= this.o.maxSpoolBytes;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  private async run(lane: Lane): Promise<void> {
    while (!this.stopping) {
      // The spool replayed, the tail (younger than it) is the oldest in memory: it joins the queue.
      if (lane.tail.length > 0 && lane.spoolEmpty) lane.queue.push(...lane.tail.splice(0));
      const fromMemory = lane.queue[0];
      const spooled = fromMemory ? undefined : lane.peekSpool();
      const batch = fromMemory ?? spooled?.batch;
      if (batch === undefined) {
        await lane.waitForWork();
        continue;
      }
      if (spooled && this.o.fence && this.fencedAt.get(batch) !== this.fenceEpoch) {
        const kept = await this.applyFence(batch);
        if (kept === undefined) continue; // the fence is not known yet (retried after a pause)
        if (!kept) {
          spooled.spool.ack(batch);
          this.checkPressure();
          continue;
        }
      }
      lane.inflight = batch;
      const outcome = await this.deliver(lane, batch);
      lane.inflight = undefined;
      const evicting = lane.evict;
      lane.evict = false;
      if (outcome === 'stopped') break;
      if (outcome === 'refence') {
        lane.evict = evicting; // the same spooled batch, filtered again first
        continue;
      }
      if (outcome === 'gated' || outcome === 'evicted') {
        // The lease's local deadline passed, or drained() ran out of time: what waits in memory goes to the spool
        // (in order), and the lane replays it from there (once the gate opens again).
        this.trySpoolMemory(lane);
        this.checkPressure();
        while (!this.stopping && this.o.gate?.() === false) await this.sleep(50);
        continue;
      }
      if (fromMemory) this.popMemory(lane.queue);
      else spooled?.spool.ack(batch);
      // Landed before the eviction took effect: the batches behind it that a drained() caller waits for go too.
      if (evicting && this.waitedFor(lane)) lane.evict = true;
      // A refused batch left the lane, but none of its rows is in ClickHouse (recorder_rejected_rows_total counts them).
      if (outcome === 'done') this.o.onWritten?.(batch, this.now());
      releaseBatch(batch);
      this.checkPressure();
    }
  }

  /**
   * Filters a spooled batch through its term's fence: true when rows are left to insert (the batch now holds only
   * them, keyed by the last), false when every row was fenced, undefined when the fence could not be read.
   */
  private async applyFence(batch: SealedBatch): Promise<boolean | undefined> {
    const term = batch.term ?? 0;
    if (!this.fences.has(term)) {
      try {
        this.fences.set(term, await (this.o.fence as NonNullable<WriterOptions['fence']>)(term));
      } catch (err) {
        this.o.logger.warn({ term, err: { message: (err as Error).message } }, 'cannot read the fence of a term');
        await this.sleep(1000);
        return undefined;
      }
    }
    this.fencedAt.set(batch, this.fenceEpoch);
    const fence = this.fences.get(term);
    if (fence === undefined) return true;
    const text = batchText(batch);
    let r = fenceRows(batch.table, text, fence);
    if (r.dropped === 0 && r.clipped === 0) return true;
    if (this.o.store.retriesDeduplicated) {
      // Changed, the record is another block than the one that may have landed: its tickers already stored go whole.
      let stored: Set<string>;
      try {
        stored = await this.storedTickers(batch.table, text);
      } catch (err) {
        this.o.logger.warn({ term, err: { message: (err as Error).message } }, 'cannot probe a fenced spool record');
        await this.sleep(1000);
        return undefined;
      }
      if (stored.size > 0) r = fenceRows(batch.table, text, fence, stored);
    }
    this.o.logger.info(
      { table: batch.table, term, kept: r.rows, dropped: r.dropped, clipped: r.clipped, stored: r.stored },
      'spooled rows of tickers handed over from their term are fenced off',
    );
    if (r.last === undefined) return false;
    const body = Buffer.from(r.text, 'latin1');
    batch.chunks = [body];
    batch.bytes = body.length;
    batch.rows = r.rows;
    batch.probe = probeOfLine(batch.table, r.last);
    return true;
  }

  /**
   * The tickers (`exchange\tticker`) whose last line in `text` is in the table: the record landed on their shard
   * (spool-fence.ts). Eight probes at a time.
   */
  private async storedTickers(table: InsertTable, text: string): Promise<Set<string>> {
    const last = [...lastLineOfEachTicker(text)];
    const stored = new Set<string>();
    for (let i = 0; i < last.length; i += 8) {
      await Promise.all(
        last.slice(i, i + 8).map(async ([key, f]) => {
          if (await this.o.store.probeBatch(probeOfLine(table, f))) stored.add(key);
        }),
      );
    }
    return stored;
  }

  /**
   * Forgets the fence of `term` (a ticker was handed over from it since it was read): spooled records, the one a lane
   * is retrying included, are filtered by a fresh one before their next insert attempt.
   */
  invalidateFence(term: number): void {
    this.fences.delete(term);
    this.fenceEpoch++;
  }

  /**
   * Inserts a batch, retrying until it is in ClickHouse ('done') or refused as malformed ('rejected': kept in
   * rejected/, not written), the writer stops ('stopped'), the gate closes
   * ('gated') or a spooled batch's fence changed ('refence'), the last two checked before every attempt.
   */
  private async deliver(
    lane: Lane,
    batch: SealedBatch,
  ): Promise<'done' | 'rejected' | 'stopped' | 'gated' | 'refence' | 'evicted'> {
    const table = batch.table;
    for (let attempt = 0; ; attempt++) {
      if (this.stopping) return 'stopped';
      if (this.o.gate?.() === false) return 'gated';
      if (lane.evict) return 'evicted';
      if (batch.spool && this.o.fence && this.fencedAt.get(batch) !== this.fenceEpoch) return 'refence';
      try {
        // On a cluster a batch sent again is dropped by every shard that already has it (RecorderStore): no probe.
        // Trades are sent again without one: a trade is read once by (ts, trade_id), so a second copy costs storage,
        // never an answer; and a probe by the last trade is not conclusive (a peer recorder, at a hand-over, or a REST
        // backfill may have stored that trade while the rest of this batch never landed: chaos runs lost trades so).
        if (batch.maybeWritten && !this.o.store.retriesDeduplicated && table !== 'trades') {
          // The last attempt's (a record spooled at a stop names it), and every replay's of a spooled record.
          const replay = batch.spool && insertQueryId(batch.term ?? this.term, table, batch.spool);
          for (const id of new Set([batch.lastQueryId, replay])) if (id) await this.o.store.ensureQueryEnded(id);
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
              { batch: batch.id, table, rows: batch.rows },
              'batch found in ClickHouse after an uncertain insert: not inserted again',
            );
            this.recovered(lane);
            return 'done';
          }
        }
        batch.maybeWritten = true;
        batch.lastQueryId = insertQueryId(batch.term ?? this.term, table, batch.spool);
        const abort = new AbortController();
        lane.abort = abort;
        const timer = setTimeout(() => abort.abort(new Error('insert timeout')), this.o.insertTimeoutMs);
        const started = process.hrtime.bigint();
        try {
          await this.o.store.insert(table, batch.chunks, {
            queryId: batch.lastQueryId,
            signal: abort.signal,
            rowFormat: batch.rowFormat,
          });
        } finally {
          clearTimeout(timer);
          lane.abort = undefined;
        }
        this.o.onInsert?.(table, 'ok', Number(process.hrtime.bigint() - started) / 1e9);
        this.recovered(lane);
        return 'done';
      } catch (err) {
        const failure = classifyClickHouseError(err);
        this.o.onInsert?.(table, 'failed', 0, failure.kind);
        if (failure.code !== undefined && REJECTING_CODES.has(failure.code)) {
          this.reject(batch, failure.message);
          return 'rejected';
        }
        if (lane.failures === 0 || lane.failures % 20 === 0) {
          this.o.logger.warn(
            { table, batch: batch.id, rows: batch.rows, kind: failure.kind, err: failure.message },
            'insert failed; retrying (probe first)',
          );
        }
        lane.failures++;
        lane.troubleSince ??= this.now();
        if (this.stopping) return 'stopped';
        if (lane.evict) return 'evicted';
        this.relieveMemory(lane);
        await this.sleep(Math.min(5000, 100 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2), lane);
      }
    }
  }

  private recovered(lane: Lane): void {
    if (lane.failures > 0) {
      this.o.logger.info({ lane: lane.name, failures: lane.failures }, 'ClickHouse takes inserts again');
    }
    lane.failures = 0;
    lane.troubleSince = undefined;
  }

  private reject(batch: SealedBatch, message: string): void {
    const dir = path.join(this.o.spoolDir, 'rejected');
    const file = path.join(dir, `${batch.table}-${this.now()}-${batch.id}.tsv`);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, Buffer.concat(batch.chunks));
    } catch (err) {
      this.o.logger.error({ err }, 'cannot write the rejected batch');
    }
    this.o.logger.error(
      { table: batch.table, rows: batch.rows, file, err: message },
      'ClickHouse refused a batch as malformed; kept in the rejected folder',
    );
    this.o.onRejected?.(batch);
  }

  /** A pause that close() ends, and with `lane`, the lane's eviction (drained() out of time) too. */
  private sleep(ms: number, lane?: Lane): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(entry.timer);
        this.sleeps.delete(entry);
        if (lane && lane.wakeSleep === done) lane.wakeSleep = undefined;
        resolve();
      };
      const entry = { timer: setTimeout(done, ms), resolve: done };
      this.sleeps.add(entry);
      if (lane) lane.wakeSleep = done;
    });
  }

  /**
   * spoolMemory (or `spool`), a spool that cannot be written said and left in memory (inserted from there later);
   * false then.
   */
  private trySpoolMemory(lane: Lane, spool: () => unknown = () => this.spoolMemory(lane)): boolean {
    try {
      spool();
      return true;
    } catch (err) {
      this.spoolFailed(err, { lane: lane.name }, 'cannot write the spool; keeping the batches in memory');
      return false;
    }
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
      // The memory queue is older than anything in the spool: it goes in front (its tail behind).
      try {
        spooled += this.spoolMemory(lane);
      } catch (err) {
        const lost = [...lane.queue, ...lane.tail].reduce((n, b) => n + b.rows, 0);
        this.spoolFailed(err, { lane: lane.name, rows: lost }, 'cannot write the spool at close: rows lost');
      }
      lane.running = undefined;
    }
    this.memoryBytes = 0;
    this.memoryRows.fill(0);
    if (spooled > 0)
      this.o.logger.warn({ rows: spooled }, 'rows not yet in ClickHouse were spooled for the next start');
    for (const s of this.allSpools()) s.close();
  }
}
