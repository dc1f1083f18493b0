/**
 * One platform's recording: which tickers (configured lists, prefixes and series, discovery through the REST
 * listing, refreshed periodically; markets that leave the listing are dropped), their recorders (resumed from what
 * ClickHouse holds), the feed connections they are spread over, the REST reconciliation of their books, and the
 * REST backfill of the trades their feed missed.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TICKER_PATTERN, type RecorderStore } from '@depthgate/history-store';
import type { ExchangeKey } from '@depthgate/platforms';
import type { Logger } from '@depthgate/service-kit';
import type { CanonicalMemo } from '@depthgate/feeds';
import type { RecorderMetrics } from '../metrics';
import type { GapReason, RowSink } from '../rows';
import { TickerRecorder, type TickerResume } from '../ticker';
import { TradeBackfiller } from './backfill';
import { FeedShard } from './feed';
import type { RestClient } from './rest';
import { canBackfill, type TradeHistory } from './trades';
import type { VenueProtocol } from './types';

/** How often the reconciliation schedule looks whether its next read is due. */
const RECONCILE_POLL_MS = 20;
/**
 * How long a stop waits for a reconciliation read in flight, so that the venue's answer is compared with the book and
 * its verification point written with the last rows (packages/k8s-check counts it in the shutdown budget).
 */
export const RECONCILE_STOP_WAIT_MS = 2000;

/**
 * How long a ticker that left the recording (closed, delisted, refused) is remembered, so that one back within it
 * continues where it left, after a gap `resubscribe` (Venue.forgetRetired).
 */
export const RETIRED_KEEP_MS = 24 * 3600_000;

/**
 * The longest a ticker the venue refused (listed, yet "unknown market" to its feed) waits before it is asked for
 * again (Venue.refuse: the discovery interval, doubling at each refusal in a row up to this).
 */
export const REFUSED_RETRY_MAX_MS = 3600_000;

/**
 * Milliseconds between two reconciliation reads of an exchange: the interval spread over its live tickers (each is
 * compared about every `intervalMs`), but never closer than its budget allows (`readsPerSecond`: the fraction
 * RECORDER_RECONCILE_BUDGET of the platform's documented limit) — so with many tickers each is compared less often
 * rather than the budget exceeded.
 */
export function reconcileSpacingMs(intervalMs: number, liveTickers: number, readsPerSecond: number): number {
  return Math.max(intervalMs / Math.max(1, liveTickers), 1000 / readsPerSecond);
}

export interface Selection {
  /** Always recorded (while the venue accepts them). */
  tickers: string[];
  /** Listed markets whose ticker starts with one of these (case-insensitive); `*` is every listed market. */
  prefixes: string[];
  /** Every listed market of these series (Kalshi series ticker, Gemini event series, Polymarket US series slug/id). */
  series: string[];
}

export interface VenueOptions {
  protocol: VenueProtocol;
  rest: RestClient;
  /** Where each ticker's stored series ends (its resume point). */
  store: Pick<RecorderStore, 'storedTickers'>;
  sink: RowSink;
  metrics: RecorderMetrics;
  logger: Logger;
  now: () => number;
  price: CanonicalMemo;
  selection: Selection;
  maxTickers: number;
  discoveryIntervalMs: number;
  tickersPerConnection: number;
  snapshotIntervalMs: number;
  quietMs: number;
  stallTimeoutMs: number;
  pingIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** 0: no reconciliation. */
  reconcileIntervalMs: number;
  reconcileGraceMs: number;
  /**
   * Reconciliation reads per second at most (RECORDER_RECONCILE_BUDGET × the platform's documented limit; 0 or
   * less: no reconciliation).
   */
  reconcileReadsPerSecond: number;
  /** How the adapter reads missed trades back (or why it cannot); undefined: trades are not recorded. */
  trades: TradeHistory | undefined;
  /** REST requests one window's backfill may make (RECORDER_TRADES_BACKFILL_MAX_PAGES). */
  backfillMaxPages: number;
  /** A window is read this long after the feed carries the ticker's trades again (RECORDER_TRADES_BACKFILL_DELAY_MS). */
  backfillDelayMs: number;
  /** Each ticker's trades are read back this often where the venue can (RECORDER_TRADES_AUDIT_INTERVAL_MS; 0: never). */
  tradeAuditIntervalMs: number;
  /**
   * Redundant recording (absent in solo mode): this recorder's role for each new ticker is settled (the controller's
   * `admit`: owner or standby, a dead term's tickers taken over) before their resume points are read.
   */
  roles?: (exchange: ExchangeKey, tickers: readonly string[]) => Promise<unknown>;
  /**
   * Redundant recording: the venue stopped recording a ticker and wrote all it had for it (its trades read back);
   * the controller forgets it (`Controller.forget`).
   */
  left?: (exchange: ExchangeKey, ticker: string) => void;
  /** Redundant recording: a ticker lost its book (TickerEnv.onLost). */
  onLost?: (rec: TickerRecorder, fromTs: number, reason: GapReason) => void;
}

export class Venue {
  readonly recorders = new Map<string, TickerRecorder>();
  private readonly shards: FeedShard[] = [];
  /**
   * Tickers that left the recording and wrote all they had: where their series ended (and when), for when they come
   * back — for RETIRED_KEEP_MS, or while the listing still wants them (forgetRetired). One still writing is `leaving`.
   */
  private readonly retired = new Map<string, { resume: TickerResume; at: number }>();
  /**
   * Recorders of tickers that left while a window of their trades was still to be read back: the backfiller still
   * writes for them until it is (then `retired`, past what it wrote), unless the ticker comes back first.
   */
  private readonly leaving = new Map<string, TickerRecorder>();
  /**
   * Refused by the venue (unknown market): not asked for again before `until` (a later discovery: refuse), and how
   * many times in a row, which sets the next wait.
   */
  private readonly refused = new Map<string, { until: number; times: number; at: number }>();
  private desired = new Set<string>();
  private awaiting = new Set<string>();
  private timers: NodeJS.Timeout[] = [];
  /** The one pending retry of `admit` (resume points unreadable), and the failures in a row that set its delay. */
  private admitRetry: NodeJS.Timeout | undefined;
  private admitFailures = 0;
  private stopped = false;
  private paused = false;
  private cappedWarned = false;
  private discoveredOnce = false;
  private discovering: Promise<void> | undefined;
  private reconcileCursor = 0;
  /** The reconciliation read in flight, if any: one at a time, and a stop waits for it. */
  private reconciliation: Promise<void> | undefined;
  /** No reconciliation read starts any more (the recorder is stopping: finishReconciliation). */
  private reconcileClosed = false;
  /** The next reconciliation read may start at this wall time (its spacing after the previous one's answer). */
  private reconcileAt = 0;
  /** The reconciliation schedule's REST client: the exchange's rate, on the background lane. */
  private readonly reconcileRest: RestClient;
  /** Reads back the trades the feeds missed (undefined: trades are not recorded). */
  private readonly backfiller: TradeBackfiller | undefined;
  private readonly log: Logger;

  constructor(private readonly o: VenueOptions) {
    this.log = o.logger.child({ exchange: o.protocol.exchange });
    this.reconcileRest = o.rest.background();
    this.backfiller =
      o.trades === undefined
        ? undefined
        : new TradeBackfiller({
            exchange: o.protocol.exchange,
            history: o.trades,
            rest: o.rest,
            metrics: o.metrics,
            logger: this.log,
            now: o.now,
            maxPages: o.backfillMaxPages,
            delayMs: o.backfillDelayMs,
            current: (rec) => (this.recorders.get(rec.ticker) ?? this.leaving.get(rec.ticker)) === rec,
            settled: (rec) => {
              if (this.leaving.get(rec.ticker) !== rec || rec.tradeWindows.length > 0) return;
              this.leaving.delete(rec.ticker);
              this.done(rec);
            },
          });
  }

  get exchange() {
    return this.o.protocol.exchange;
  }

  /**
   * The first discovery is done and every wanted ticker has its recorder (or was refused by the venue): the
   * redundant recorder's `/ready` waits for it, so that a rolling restart never stops a peer before this recorder
   * can take every ticker over.
   */
  get settled(): boolean {
    return this.discoveredOnce && [...this.awaiting].every((t) => this.refused.has(t));
  }

  /** Its rows are stamped with the venue's clock (false: our receive clock, Gemini). */
  get venueClock(): boolean {
    return this.o.protocol.venueClock;
  }

  /** First discovery, then feeds; discovery and reconciliation repeat on their intervals. */
  async start(): Promise<void> {
    await this.discover();
    if (this.stopped) return; // stopped while discovering: no intervals to start
    if (this.o.discoveryIntervalMs > 0 && this.listingWanted()) {
      const t = setInterval(() => void this.discover(), this.o.discoveryIntervalMs);
      t.unref();
      this.timers.push(t);
    }
    if (this.o.reconcileIntervalMs > 0 && this.o.reconcileReadsPerSecond > 0) {
      const t = setInterval(() => this.reconcileNext(), RECONCILE_POLL_MS);
      t.unref();
      this.timers.push(t);
    }
  }

  private listingWanted(): boolean {
    return this.o.selection.prefixes.length > 0 || this.o.selection.series.length > 0;
  }

  /** Recomputes the wanted tickers from the configuration and the listing, then applies the difference. */
  discover(): Promise<void> {
    this.discovering ??= this.discoverOnce().finally(() => {
      this.discovering = undefined;
    });
    return this.discovering;
  }

  private async discoverOnce(): Promise<void> {
    const { selection, protocol } = this.o;
    const wanted: string[] = selection.tickers.map((t) => protocol.normalizeTicker(t));
    if (this.listingWanted()) {
      // Prefixes need the whole listing; series alone only their members.
      const all = selection.prefixes.length > 0;
      let listed: string[];
      let bySeries: Set<string>;
      try {
        listed = await protocol.listActive(this.o.rest, selection.series, all);
        bySeries =
          selection.series.length === 0
            ? new Set()
            : all
              ? new Set(await protocol.listActive(this.o.rest, selection.series, false))
              : new Set(listed);
        this.o.metrics.discoveries.inc({ exchange: this.exchange, outcome: 'ok' });
      } catch (err) {
        this.o.metrics.discoveries.inc({ exchange: this.exchange, outcome: 'failed' });
        this.log.warn({ err: { message: (err as Error).message } }, 'discovery failed; keeping the current tickers');
        // Configured tickers are recorded even when the listing cannot be read.
        this.apply(new Set([...this.desired, ...wanted]));
        return;
      }
      const prefixes = selection.prefixes.filter((p) => p !== '*').map((p) => p.toLowerCase());
      const every = selection.prefixes.includes('*');
      for (const raw of listed.sort()) {
        const t = protocol.normalizeTicker(raw);
        const lower = t.toLowerCase();
        if (every || prefixes.some((p) => lower.startsWith(p)) || bySeries.has(raw)) wanted.push(t);
      }
    }
    const valid = wanted.filter((t) => {
      if (TICKER_PATTERN.test(t)) return true;
      this.log.warn({ ticker: t.slice(0, 100) }, 'ticker outside the history ticker grammar; not recorded');
      return false;
    });
    let unique = [...new Set(valid)];
    const wantedNow = new Set(unique);
    this.forgetRetired(wantedNow);
    // A refused ticker the listing no longer wants starts afresh if it comes back.
    for (const t of this.refused.keys()) if (!wantedNow.has(t)) this.refused.delete(t);
    if (unique.length > this.o.maxTickers) {
      if (!this.cappedWarned) {
        this.log.warn(
          { wanted: unique.length, max: this.o.maxTickers },
          'more tickers than RECORDER_MAX_TICKERS; recording the configured ones and the first listed',
        );
        this.cappedWarned = true;
      }
      unique = unique.slice(0, this.o.maxTickers);
    }
    this.apply(new Set(unique));
  }

  /**
   * A listing read forgets where a ticker left when it left more than RETIRED_KEEP_MS ago and the read does not want
   * it (not listed, not configured): a market closed that long is not expected back, and if it does come back it
   * resumes from ClickHouse's stored end, as at a start (its rows have landed unless ClickHouse was away that long;
   * even then its new rows follow the stored ones, their sequences following `ts`, and its gap starts earlier). So
   * `retired` holds the tickers that left within that time (and listed ones the cap leaves out), not every market the
   * venue ever delisted. Before `apply`, which retires the ones this read drops.
   */
  private forgetRetired(wanted: ReadonlySet<string>): void {
    const before = this.o.now() - RETIRED_KEEP_MS;
    for (const [t, { at }] of this.retired) if (at < before && !wanted.has(t)) this.retired.delete(t);
  }

  private apply(next: Set<string>): void {
    if (this.stopped) return;
    this.discoveredOnce = true;
    const removed = [...this.desired].filter((t) => !next.has(t));
    const added = [...next].filter((t) => !this.desired.has(t));
    this.desired = next;
    if (removed.length > 0) this.removeTickers(removed);
    for (const t of added) this.awaiting.add(t);
    // The added ones, and refused ones whose wait may have run out (still wanted, so not added again).
    if (added.length > 0 || [...this.awaiting].some((t) => this.refused.has(t))) void this.admit();
  }

  private removeTickers(tickers: string[]): void {
    this.log.info({ tickers: tickers.slice(0, 20), count: tickers.length }, 'tickers leave the recording');
    for (const shard of this.shards) shard.remove(tickers);
    for (const t of tickers) {
      this.awaiting.delete(t);
      const rec = this.recorders.get(t);
      if (!rec) continue;
      this.retire(rec);
    }
  }

  /** Creates recorders for the awaited tickers (resumed from ClickHouse) and gives them to connections. */
  private async admit(): Promise<void> {
    const now = this.o.now();
    const list = [...this.awaiting].filter((t) => !this.recorders.has(t) && !((this.refused.get(t)?.until ?? 0) > now));
    if (list.length === 0 || this.stopped) return;
    const unknown = list.filter((t) => this.leftAt(t) === undefined);
    let stored: Map<string, TickerResume>;
    try {
      await this.o.roles?.(this.exchange, list);
      // The stored trades near their end are known to the restart's trade window (TickerResume.tradesAtEnd).
      stored =
        unknown.length > 0
          ? await this.o.store.storedTickers(this.exchange, unknown, undefined, { tradesBackMs: this.o.quietMs })
          : new Map();
    } catch (err) {
      // Cannot know where their series end: try again (they are not recorded meanwhile), one retry at a time for
      // every ticker waiting, 2 s doubling to a minute while it keeps failing.
      this.admitFailures++;
      this.log.warn({ err: { message: (err as Error).message }, tickers: list.length }, 'cannot resume tickers yet');
      if (this.admitRetry === undefined && !this.stopped) {
        this.admitRetry = setTimeout(
          () => {
            this.admitRetry = undefined;
            void this.admit();
          },
          Math.min(60_000, 2000 * 2 ** Math.min(this.admitFailures - 1, 5)),
        );
        this.admitRetry.unref();
      }
      return;
    }
    this.admitFailures = 0;
    if (this.stopped) return;
    const admitted: string[] = [];
    for (const t of list) {
      if (!this.awaiting.has(t) || this.recorders.has(t)) continue;
      this.awaiting.delete(t);
      // A left recorder whose trades are still being read back writes no more once its ticker comes back.
      const retired = this.leftAt(t);
      const resume: TickerResume = retired ?? stored.get(t) ?? { lastTs: -1, sequence: 0 };
      this.retired.delete(t);
      this.leaving.delete(t);
      const rec = new TickerRecorder(this.exchange, t, resume, {
        sink: this.o.sink,
        now: this.o.now,
        price: this.o.price,
        snapshotIntervalMs: this.o.snapshotIntervalMs,
        quietMs: this.o.quietMs,
        venueClock: this.o.protocol.venueClock,
        provesContinuity: this.o.protocol.provesContinuity,
        onBroken: (r, reason) => this.broken(r, reason),
        onLost: this.o.onLost,
        onTradeWindow: this.backfiller ? (r, w) => this.backfiller?.add(r, w) : undefined,
        tradeAuditIntervalMs: this.o.trades && canBackfill(this.o.trades) ? this.o.tradeAuditIntervalMs : 0,
        metrics: {
          clamped: (exchange) => this.o.metrics.clamped.inc({ exchange }),
          tradeDeduplicated: (exchange) => this.o.metrics.tradesDeduplicated.inc({ exchange }),
          malformed: (exchange) => this.o.metrics.malformed.inc({ exchange }),
          tradeCountExcess: (exchange, ticker, quantity) => {
            this.o.metrics.tradeCountExcess.inc({ exchange });
            this.log.warn(
              { ticker, quantity },
              quantity === undefined
                ? "the venue's traded quantity went back; the trade count audit starts again"
                : 'more trades received than the venue counts; the trade count audit starts again',
            );
          },
        },
      });
      if (retired !== undefined && rec.pendingGap) rec.pendingGap.reason = 'resubscribe';
      this.recorders.set(t, rec);
      admitted.push(t);
    }
    if (admitted.length === 0) return;
    this.log.info({ count: admitted.length, tickers: admitted.slice(0, 20) }, 'recording tickers');
    this.assign(admitted);
  }

  private assign(tickers: string[]): void {
    let rest = tickers;
    for (const shard of this.shards) {
      if (rest.length === 0) break;
      const room = this.o.tickersPerConnection - shard.tickers.size;
      if (room <= 0) continue;
      shard.add(rest.slice(0, room));
      rest = rest.slice(room);
    }
    while (rest.length > 0) {
      const shard = new FeedShard(
        {
          protocol: this.o.protocol,
          rest: this.o.rest,
          logger: this.o.logger,
          metrics: this.o.metrics,
          now: this.o.now,
          recorder: (t) => this.recorders.get(t),
          rejectTicker: (t, message) => this.refuse(t, message),
          stallTimeoutMs: this.o.stallTimeoutMs,
          pingIntervalMs: this.o.pingIntervalMs,
          reconnectMinMs: this.o.reconnectMinMs,
          reconnectMaxMs: this.o.reconnectMaxMs,
        },
        this.shards.length + 1,
      );
      this.shards.push(shard);
      shard.add(rest.slice(0, this.o.tickersPerConnection));
      rest = rest.slice(this.o.tickersPerConnection);
      if (this.paused) shard.pause();
      shard.start();
    }
  }

  private refuse(ticker: string, message: string): void {
    // Asked for again at a later discovery: the next at the first refusal, then waiting twice as long at each refusal
    // in a row, up to REFUSED_RETRY_MAX_MS — so a market the venue lists but will not stream costs a subscribe, a
    // trades read-back and a `resubscribe` gap row that often, not at every discovery. (A refusal after a longer
    // wait than the longest follows a recording: it starts afresh.)
    const now = this.o.now();
    const before = this.refused.get(ticker);
    const times =
      before !== undefined && now - before.at <= REFUSED_RETRY_MAX_MS + this.o.discoveryIntervalMs
        ? before.times + 1
        : 1;
    const wait = Math.min(REFUSED_RETRY_MAX_MS, this.o.discoveryIntervalMs * 2 ** (times - 1));
    this.refused.set(ticker, { until: now + wait - this.o.discoveryIntervalMs / 2, times, at: now });
    this.log.warn(
      { ticker, message, retry_in_ms: wait },
      'the venue refused a ticker; not recorded until a later discovery',
    );
    const rec = this.recorders.get(ticker);
    if (rec) this.retire(rec);
    this.desired.delete(ticker);
  }

  /**
   * A ticker leaves the recording (TickerRecorder.leave): it resumes from where it ended if it comes back. A window of
   * its trades to be read back still is (the backfiller writes for it while it is `leaving`).
   */
  private retire(rec: TickerRecorder): void {
    rec.leave(this.o.now());
    this.recorders.delete(rec.ticker);
    if (rec.tradeWindows.length > 0) this.leaving.set(rec.ticker, rec);
    else this.done(rec);
  }

  /**
   * A ticker that left has written all it had (its trades read back): where it ends is remembered for when it comes
   * back (`retired`), and the controller may forget it (`left`).
   */
  private done(rec: TickerRecorder): void {
    this.retired.set(rec.ticker, { resume: rec.resumePoint(), at: this.o.now() });
    this.o.left?.(this.exchange, rec.ticker);
  }

  /** Where a ticker that left ends (undefined: it did not leave, or that was forgotten): `leaving` or `retired`. */
  private leftAt(ticker: string): TickerResume | undefined {
    return this.leaving.get(ticker)?.resumePoint() ?? this.retired.get(ticker)?.resume;
  }

  /** The ticker's book is in doubt: a gap from its last verification, and a fresh book from the venue. */
  resyncTicker(rec: TickerRecorder, reason: GapReason): void {
    this.broken(rec, reason);
  }

  private broken(rec: TickerRecorder, reason: GapReason): void {
    if (rec.live) rec.lose(reason, rec.verifiedTs >= 0 ? rec.verifiedTs : rec.lastTs);
    this.log.warn({ ticker: rec.ticker, reason }, 'book lost; resyncing the ticker');
    for (const shard of this.shards) shard.resync([rec.ticker]);
  }

  /** Cadence and quiet snapshots, overdue verifications; the tickers gauge. */
  sweep(now: number): void {
    let live = 0;
    const heardAt = new Map<string, number>();
    for (const shard of this.shards) for (const t of shard.tickers) heardAt.set(t, shard.heardAt);
    for (const [ticker, rec] of this.recorders) {
      rec.sweep(now, heardAt.get(ticker) ?? 0);
      if (rec.live) live++;
    }
    this.o.metrics.tickers.set({ exchange: this.exchange, state: 'live' }, live);
    this.o.metrics.tickers.set({ exchange: this.exchange, state: 'syncing' }, this.recorders.size - live);
  }

  /**
   * Compares one live ticker's book with the venue's REST book, round robin. Reads are spaced by
   * `reconcileSpacingMs` (the interval over the live tickers, never closer than the budget allows), counted from the
   * previous read's answer, so that a read held back by the REST rate does not bring the next one closer; they use
   * the background lane of the exchange's REST rate (rest.ts), yielding to discovery, backfill and confirmations.
   */
  private reconcileNext(): void {
    if (this.reconciliation !== undefined || this.reconcileClosed || this.stopped || this.paused) return;
    if (Date.now() < this.reconcileAt) return;
    const live = [...this.recorders.values()].filter((r) => r.live);
    const ready = live.filter((r) => r.openVerifications === 0);
    if (ready.length === 0) return;
    const rec = ready[this.reconcileCursor++ % ready.length] as TickerRecorder;
    const exchange = this.exchange;
    const v = rec.startVerification(this.o.reconcileGraceMs, (result) =>
      this.o.metrics.reconciliations.inc({ exchange, result }),
    );
    if (!v) return;
    this.reconciliation = (async () => {
      try {
        const book = await this.o.protocol.restBook(this.reconcileRest, rec.ticker);
        if (this.recorders.get(rec.ticker) === rec) rec.completeVerification(v, book.bids, book.asks);
        else rec.cancelVerification(v, 'void');
      } catch (err) {
        rec.cancelVerification(v, 'error');
        this.log.debug({ err: { message: (err as Error).message }, ticker: rec.ticker }, 'REST book failed');
      }
      this.reconcileAt =
        Date.now() + reconcileSpacingMs(this.o.reconcileIntervalMs, live.length, this.o.reconcileReadsPerSecond);
    })().finally(() => (this.reconciliation = undefined));
  }

  pause(): void {
    this.paused = true;
    this.backfiller?.pause(true);
    for (const s of this.shards) s.pause();
  }

  resume(): void {
    this.paused = false;
    this.backfiller?.pause(false);
    for (const s of this.shards) s.resume();
  }

  get connectedShards(): number {
    return this.shards.filter((s) => s.isOpen).length;
  }

  /**
   * The recorder's stop, first step: no reconciliation read starts any more, and the one in flight is waited for,
   * RECONCILE_STOP_WAIT_MS at most, with the feeds still open and the tickers still this recorder's (in redundant mode,
   * before they are handed over): its answer is compared with the live book (a closed feed voids it), and a match is a
   * verification point written with the last rows.
   */
  async finishReconciliation(): Promise<void> {
    this.reconcileClosed = true;
    if (this.reconciliation === undefined) return;
    const answered = await Promise.race([
      this.reconciliation.then(() => true),
      delay(RECONCILE_STOP_WAIT_MS, false, { ref: false }),
    ]);
    if (!answered)
      this.log.warn(
        { waitedMs: RECONCILE_STOP_WAIT_MS },
        'stopping: a reconciliation read still in flight is given up',
      );
  }

  /**
   * Stops the feeds and the backfill. Windows not yet read back become trades gaps (`backfill_failed`): after a
   * restart the recorder reads back only what follows the stored end, which may be later than them.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.admitRetry);
    for (const t of this.timers) {
      clearInterval(t);
      clearTimeout(t);
    }
    this.timers = [];
    await Promise.all(this.shards.map((s) => s.stop()));
    // Verification points held for coalescing are written with the last rows.
    for (const rec of this.recorders.values()) rec.writeVerification();
    await this.backfiller?.stop();
  }
}
