/**
 * What the controller (controller.ts) needs of the other pieces of redundant recording, as minimal interfaces, so
 * that the recorder binds the real ones (RecorderStore, Writer, StandbyBuffer, RoutingSink, the venues' tickers) and
 * the tests bind fakes. Names follow the session's plan (/work/notes/i27-helper-context.md, "Interfaces").
 */
import type { SideCode } from '@depthgate/feeds';
import type { ExchangeKey } from '@depthgate/platforms';
import type { RowSink } from '../rows';
import type { SplicePoint, SpliceResult } from './standby-buffer';

/** What ClickHouse holds of a ticker's book tables: its landed end (decision 1 step 2). */
export interface LandedEnd {
  /** L: the largest ts of any landed row of the book tables (deltas, gaps, snapshots). */
  lastTs: number;
  /** q: the largest landed sequence. */
  sequence: number;
  /** The ts of the last landed trade (-1: none). */
  lastTradeTs: number;
  /** The landed deltas at ts = L, in sequence order (the standby completes ms L from them). */
  deltasAtLast: Array<{ side: SideCode; price: string; quantityDelta: string; sequence: number }>;
  /**
   * The digest of the old owner's last book (StandbyBuffer's receive-clock split): a release's as it stopped writing,
   * a takeover's of the landed book (ControlStore.landedDigest).
   */
  digest?: string;
}

export type HandoverKind = 'release' | 'takeover' | 'offer';

/** A row of the `handovers` table: from `ts` (= S) on, the ticker's book rows are `toTerm`'s. */
export interface HandoverRow {
  exchange: ExchangeKey;
  ticker: string;
  ts: number;
  fromTerm: number;
  toTerm: number;
  kind: HandoverKind;
  /** Wall-clock ms when the new owner decided. */
  detectedAt: number;
}

/** RecorderStore (packages/history-store). */
export interface ControlStore {
  landedEnds(exchange: ExchangeKey, tickers: readonly string[]): Promise<Map<string, LandedEnd>>;
  /**
   * The digest (bookDigest) of the book the ticker's landed rows end with at `at`, where the split of a takeover needs
   * it (a receive clock: the dead owner published none); undefined: not needed, or the book is not known there.
   */
  landedDigest?(exchange: ExchangeKey, ticker: string, at: number): Promise<string | undefined>;
  /** `KILL QUERY WHERE query_id LIKE 'rec-{term}-%' SYNC`, on every server. */
  killWriter(term: number): Promise<void>;
  /** A direct, awaited insert (not through the writer). */
  insertHandovers(rows: readonly HandoverRow[]): Promise<void>;
  /** Every handover from or to the term. */
  handoversOf(term: number): Promise<HandoverRow[]>;
}

/** The writer (services/recorder/src/writer). */
export interface ControlWriter {
  /**
   * Resolves once every batch enqueued before the call is landed or spooled; past `timeoutMs` the writer spools what
   * is still in memory instead of waiting on ClickHouse.
   */
  drained(timeoutMs?: number): Promise<void>;
  /** How long (ms, by the writer's own clock) inserts have been failing; undefined while healthy. */
  writeTroubleForMs(): number | undefined;
}

/** The standby's buffer: a splice point with the landed deltas at S − 1 (decision 1 step 4). */
export interface ControlSplicePoint extends SplicePoint {
  deltasAtLast: LandedEnd['deltasAtLast'];
}

export interface ControlBuffer {
  /** Writes into `sink` what continues the stored series from S (synchronous: no row can slip in between). */
  splice(exchange: ExchangeKey, ticker: string, point: ControlSplicePoint, sink: RowSink): SpliceResult;
}

/** The RowSink in front of the writer: a ticker's rows go to the writer (owner) or to the buffer (standby). */
export interface ControlRouting {
  setOwner(exchange: ExchangeKey, ticker: string, owned: boolean): void;
  /**
   * The end of what the owned ticker produced (landed or spooled) since it became ours; undefined: nothing. A release
   * publishes it: the peer continues from there, not from what landed (a spool's rows are not lost to a release).
   */
  endOf(exchange: ExchangeKey, ticker: string): LandedEnd | undefined;
  /**
   * The recorder stopped recording the ticker and the controller forgot it (standby here): what the routing keeps of
   * it goes (where it was handed over, its buffered rows). Nothing of it is written any more.
   */
  forget(exchange: ExchangeKey, ticker: string): void;
}

/** The recorder's tickers (Venue / TickerRecorder). */
export interface ControlTickers {
  /** Whether this recorder's book of the ticker is live (owner or standby): the live set's and `/ready`'s input. */
  live(exchange: ExchangeKey, ticker: string): boolean;
  /**
   * After a splice at `s`: the ticker's sequence continues from `sequence`, no later row goes below `s`; it owes
   * `pendingGap` (if any) to its next snapshot.
   */
  resumeSequence(
    exchange: ExchangeKey,
    ticker: string,
    sequence: number,
    s: number,
    pendingGap?: { from: number; reason: string },
  ): void;
  /** The digest of this recorder's book of the ticker now (undefined: not live). */
  bookDigest(exchange: ExchangeKey, ticker: string): string | undefined;
  /** A loss no peer took (decision 4): the ticker writes the gap it would have written, as the owner. */
  writeOwnGap(exchange: ExchangeKey, ticker: string): void;
}

/** The lease (lease.ts), as the controller uses it. */
export interface ControlLease {
  readonly term: number;
  canInsert(): boolean;
  alive(term: number): Promise<boolean>;
  on(event: 'deposed', listener: (reason: string) => void): unknown;
  stop(): Promise<void>;
}
