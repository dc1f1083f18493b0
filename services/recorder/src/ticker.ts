/**
 * One ticker's recording: its book, its clock and its sequence, and the rules that keep the rows it writes
 * reconstructible by the spec's rule 7 at every moment outside a recorded gap.
 *
 * Invariants (docs/history-internals.md, "Recorder"):
 * - A snapshot at S is the book after every recorded delta with ts < S, and no recorded delta with ts >= S is in it.
 *   So a snapshot is written strictly after every row already written for the ticker (S > lastTs), and deltas after
 *   it never get a ts below S (a venue timestamp below the last snapshot is raised to it and counted as clamped).
 * - `sequence` strictly increases per ticker, across reconnects and restarts: a hybrid logical clock,
 *   max(last + 1, ts × 1000), resumed from the largest stored value at start.
 * - When the series is not continuous (disconnect, stall, sequence gap, REST mismatch, restart) a gap row
 *   (from = last moment known good, to = S) is written, then the snapshot at S, then the deltas.
 * - Cadence snapshots are taken from our own book at the boundary before the next delta whose ts exceeds every
 *   written row, which is exact; a ticker that stays quiet gets its snapshot from the sweep instead.
 * - Every row carries its receive time (`received_ts`, the connection's monotone clock): a delta, when its message
 *   arrived; a snapshot, when the newest message it reflects arrived (the venue snapshot itself, or the last change
 *   applied to our book before a cadence snapshot).
 * - Trades are recorded whatever the book's state, at the venue's time (never clamped: the same trade must get the
 *   same ts from the feed and from REST), with the ticker's sequence (so deltas and trades interleave in arrival
 *   order), once per trade id: a bounded set of the ticker's recent ids, and the ids recorded inside each window
 *   being checked, drop a trade already recorded. When the feed stops carrying the ticker's trades
 *   (interruptTrades) and carries them again (the first venue snapshot after it: settle), the window between goes to
 *   `onTradeWindow` to be read back from REST; so does, every audit interval, the window since the last one (trades
 *   lost silently); what cannot be read back becomes a trades gap. Where the venue's book messages count the
 *   traded quantity (`tradesCounted`), trades it counts that never arrived are a trades gap too (`TradeCountAudit`).
 * - Every row of a venue message carries the venue's own ordering of that message (`venue_seq`: Kalshi `sid:seq`,
 *   Coinbase `sequence`), given by the adapter with the event (beginEvent), the snapshot (venueSnapshot) or the trade;
 *   snapshots of our own book (cadence, quiet, a venue snapshot that only confirmed ours) carry ''.
 * - Each moment the book is known equal to the venue's (a venue snapshot or whole book applied, a matching REST book,
 *   a matching venue checksum) is a verification point: `verifiedTs`, and a `verifications` row (coalesced:
 *   VERIFICATION_SPACING_MS).
 */
import type { ExchangeKey } from '@depthgate/platforms';
import {
  ASK,
  BID,
  LocalBook,
  type Level,
  type SideCode,
  formatDecimal,
  parseDecimal,
  type CanonicalMemo,
} from '@depthgate/feeds';
import { VENUE_SEQ_PATTERN, VENUE_TEXT_PATTERN, type VerificationMethod } from '@depthgate/history-store';
import { checkedRowTs, type GapReason, type RowSink, type TradeGapReason } from './rows';
import { TradeCountAudit } from './trade-count';
import type { TradeWindow, VenueTrade } from './venues/trades';

export interface TickerResume {
  /** Largest ts of any stored row of the ticker (-1: none). */
  lastTs: number;
  /** Largest stored sequence (0: none). */
  sequence: number;
  /**
   * Where its stored book ends (-1: none; absent: at `lastTs`): its `recorder_start` gap starts there. The writer lands
   * the book and the trades in lanes of their own, so after a crash one may end before the other.
   */
  bookTs?: number;
  /**
   * Where its stored trades end (-1: none; absent: `lastTs` + 1): trades from `quietMs` before it on are read back or
   * gapped (a venue's trades may arrive up to that far out of their time order, so a crash may have kept a later
   * one and lost an earlier one), back at most TRADES_RESUME_LOOK_BACK_MS before `lastTs`.
   */
  tradesTs?: number;
  /** Its stored trades from `quietMs` before `tradesTs` on (known: read back or replayed, they are not stored again). */
  tradesAtEnd?: ReadonlyArray<{ id: string; ts: number }>;
  /**
   * Where its stored series begins (-1 or absent: unknown): its trades are read back from `quietMs` before it at the
   * earliest (a trade that arrived that far out of order after its first row may have been lost with it), never from
   * further back: a trade before the ticker's recording began was not lost by a restart (a ticker recorded for less
   * than TRADES_RESUME_LOOK_BACK_MS would otherwise get the venue's trades from up to a minute before its first row).
   */
  firstTs?: number;
}

/**
 * How far before a resumed ticker's last stored row its trades are read back (or gapped) at most, when its stored
 * trades end earlier: a ticker that had no trade for days has not lost days of them. The trades lane can end behind
 * the book's after a crash only by what the writer held in memory (seconds; a lane with a spool spools from then on),
 * so this is a margin, not a guess at the market: a lane behind by more loses trades without a gap (docs/history-internals.md).
 */
export const TRADES_RESUME_LOOK_BACK_MS = 60_000;

export interface TickerEnv {
  sink: RowSink;
  /** Wall clock in epoch ms (monotone non-decreasing). */
  now: () => number;
  /** Canonical price text for a venue price string (validated, memoised). */
  price: CanonicalMemo;
  /** Cadence of full-book snapshots. */
  snapshotIntervalMs: number;
  /**
   * How long a ticker must be silent before the sweep writes a wanted snapshot or a pending venue snapshot itself,
   * and how far behind the wall clock that snapshot is put when the venue stamps its own events.
   */
  quietMs: number;
  /** Timestamps are the venue's (Kalshi, Polymarket US), not our receive time (Gemini). */
  venueClock: boolean;
  /**
   * The feed proves its own continuity (Kalshi's `seq`: a lost message shows): the book is known right up to the last
   * message received, so a loss (disconnect, stall, resubscribe) is a gap from the caller's bound. Absent or false
   * (Gemini, Coinbase `level2`, Polymarket US, the CLOB): a message lost silently just before the loss would not show,
   * so the gap starts at the last verification (`verifiedTs`) at the latest.
   */
  provesContinuity?: boolean;
  /** The ticker found its book wrong by itself (a level went negative): the feed must resync it. */
  onBroken: (ticker: TickerRecorder, reason: GapReason) => void;
  /**
   * Redundant recording only (absent in solo mode: nothing changes). The ticker lost its book: a gap from `fromTs`
   * (`reason`) is now pending, to be written before the snapshot that closes it (when the venue's fresh book
   * arrives), as in solo mode. Called synchronously, after the sink's `lost` and before any row of the loss: the
   * controller routes the ticker's rows to the standby buffer here (RoutingSink.setOwned(false)) when it owns the
   * ticker, and offers it to a peer. Then the ticker's gap and closing snapshot go where the ticker is routed: into
   * the buffer (a peer took the ticker: they are the standby's own rows, and reach the store only through a later
   * splice, clipped to its S) or, when nobody took it, handed back to the writer in production order
   * (RoutingSink.handBack: the gap still precedes its snapshot, the rows are those a solo recorder writes).
   */
  onLost?: (ticker: TickerRecorder, fromTs: number, reason: GapReason) => void;
  /**
   * A window of the ticker's trades closed (the feed missed it, or its audit is due): read it back (then
   * `completeTradeWindow`). Absent: trades are not recorded, and no windows are kept.
   */
  onTradeWindow?: (ticker: TickerRecorder, window: OpenTradeWindow) => void;
  /** Every ticker's trades are read back this often, to find trades the feed lost silently (0 or absent: never). */
  tradeAuditIntervalMs?: number;
  metrics?: {
    clamped(exchange: ExchangeKey): void;
    tradeDeduplicated?(exchange: ExchangeKey): void;
    /** A venue message (a REST trade read back) could not be read (`recorder_malformed_messages_total`). */
    malformed?(exchange: ExchangeKey): void;
    /** The trade count audit found more trades than the venue counts (`quantity`), or the count went back. */
    tradeCountExcess?(exchange: ExchangeKey, ticker: string, quantity: string | undefined): void;
  };
}

/**
 * Verification rows of a ticker are at most one per this many ms (wall clock). A CLOB hash matches on every message,
 * a whole book (Polymarket US) verifies every one: a row each would double the rows written. What a row is for is
 * the question "the last agreement before T and the next after": one a second bounds the unverified stretch around any
 * moment to about a second more than the venue's own verification cadence, at a cost of one small row a second per
 * ticker. So a verification within a second of the last row written is held (the newest replaces an older one held),
 * and written by the sweep once the second has passed — or at once when the book is lost, so that the moment a gap
 * starts from (the last verification) is always a stored row.
 */
export const VERIFICATION_SPACING_MS = 1000;

/** How many of a ticker's most recent trade ids it keeps to drop a trade it already recorded. */
export const RECENT_TRADE_IDS = 512;

/** The last `max` trade ids of a ticker (and their ts), oldest forgotten first. */
class RecentTrades {
  private readonly ids = new Set<string>();
  private readonly ring: { id: string; ts: number }[] = [];
  private next = 0;

  constructor(private readonly max: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string, ts: number): void {
    if (this.ring.length < this.max) this.ring.push({ id, ts });
    else {
      const old = this.ring[this.next] as { id: string; ts: number };
      this.ids.delete(old.id);
      this.ring[this.next] = { id, ts };
      this.next = (this.next + 1) % this.max;
    }
    this.ids.add(id);
  }

  /** The kept trades at or after `ts`, as id → ts. */
  since(ts: number): [string, number][] {
    return this.ring.filter((r) => r.ts >= ts).map((r) => [r.id, r.ts]);
  }

  /** The newest kept trade before `ts`. */
  newestBefore(ts: number): { ts: number; id: string } | undefined {
    let best: { id: string; ts: number } | undefined;
    for (const r of this.ring) if (r.ts < ts && (best === undefined || r.ts >= best.ts)) best = r;
    return best && { ts: best.ts, id: best.id };
  }
}

/**
 * A stretch of a ticker's trades [`from`, `to`] checked against the venue's REST trades: one the feed missed (it
 * stopped carrying them, from `gapFrom`, until `to`), or a periodic audit (trades a feed without sequence numbers may
 * have lost silently).
 */
export interface OpenTradeWindow extends TradeWindow {
  /** Trades before this moment were received on the feed: a venue without trade history has a gap from here. */
  gapFrom: number;
  /** Trades recorded at or after `from` (id → ts): a REST copy of one is dropped. */
  known: Map<string, number>;
  /** `missed`: the feed stopped carrying the ticker's trades while it was open; `audit`: a periodic check. */
  kind: 'missed' | 'audit';
  /** The feed stopped while it was open (and has not carried trades again yet, while it is open). */
  broken: boolean;
  /** Wall clock when it opened (its audit is due an interval later). */
  openedAt: number;
}

/** Levels as a venue sends them: [price text, quantity text]. */
export type LevelList = Iterable<readonly [string, string]>;

/**
 * How a reconciliation read ended: the REST book equalled a state of ours (`match`), never did within the grace
 * (`mismatch`: a gap `divergence`), could not be compared (`void`: the ticker lost or re-based its book meanwhile,
 * or left the recording), or the request failed (`error`).
 */
export type ReconcileOutcome = 'match' | 'mismatch' | 'void' | 'error';
export const RECONCILE_OUTCOMES: readonly ReconcileOutcome[] = ['match', 'mismatch', 'void', 'error'];

interface Verification {
  /**
   * ts of the last row written when the REST request was sent: a match of the book as it was then proves it right
   * here; a match of a later state proves it right only at that state's row (a lost change the venue's next size for
   * the level repaired after the request leaves the book wrong before it).
   */
  fromTs: number;
  /**
   * The ticker's last verified moment when the request was sent: a mismatch is a gap from here (a later
   * verification does not prove the book right at the moment the REST book shows).
   */
  verifiedTs: number;
  /** Told once how the read ended. */
  onOutcome?: (outcome: ReconcileOutcome) => void;
  /** Our book when the REST request was sent (`side:price` → quantity). */
  base: Map<string, bigint>;
  /** Changes applied since, in order: `side:price`, the new quantity, the row's ts. */
  log: [string, bigint, number][];
  /** Once the REST book is in: its levels, and the keys where it differs from our book now. */
  rest?: Map<string, bigint>;
  mismatch?: Set<string>;
  graceMs: number;
  deadline: number;
  done: boolean;
  matched: boolean;
}

export class TickerRecorder {
  book = new LocalBook();
  /** Largest ts of any row written for this ticker (delta, snapshot, or the end of a gap). */
  lastTs: number;
  lastSnapshotTs = -1;
  /**
   * The last ts at which our book is known to have equalled the venue's: a venue snapshot, a whole book applied, a
   * REST verification that matched. Cadence snapshots do not count (they are our own book). A loss found without a
   * sign of when it happened (a REST mismatch, a snapshot that differs) is a gap from here.
   */
  verifiedTs = -1;
  sequence: number;
  /** The book is valid: a venue snapshot was applied and nothing has been lost since. */
  live = false;
  /** A loss not yet closed by a snapshot. */
  pendingGap: { from: number; reason: GapReason } | undefined;
  /** Kalshi: a sequence break that may or may not have touched this ticker (decided by the next snapshot). */
  suspect: { from: number; reason: GapReason } | undefined;
  /**
   * A venue snapshot applied to `book` whose ts is not known yet (Kalshi snapshots carry none), and the venue's
   * ordering of its message (its rows' `venue_seq`).
   */
  pendingSnapshot: { receivedAt: number; venueSeq: string } | undefined;
  snapshotWanted = false;
  nextSnapshotAt: number;
  /** Wall time of the last change applied (quiet detection). */
  lastActivityAt = 0;
  /** The venue's ts of the newest event applied since the book was last replaced (a later one older than it is a swap). */
  private lastEventTs = -1;
  /** Receive time of the newest message our book reflects (a snapshot row's received_ts). */
  private knownAt = 0;
  /** Receive time of the event being applied (its delta rows' received_ts). */
  private eventReceivedAt = 0;
  /** The venue's ordering of the event being applied (its delta rows' venue_seq). */
  private eventVenueSeq = '';
  /** The newest verification not yet written (coalesced: VERIFICATION_SPACING_MS), and when the last row was. */
  private heldVerification: { ts: number; method: VerificationMethod; detectedAt: number } | undefined;
  private verificationWrittenAt = Number.NEGATIVE_INFINITY;
  private epoch = 0;
  private readonly verifications: Verification[] = [];
  /** The newest trade recorded (by ts): a window's REST read starts from it. */
  private lastTrade: { ts: number; id: string } | undefined;
  private readonly recentTrades = new RecentTrades(RECENT_TRADE_IDS);
  /** Feed trades before this ts are replays of what was recorded (or stored) before a window: dropped. */
  private replayBefore = -1;
  /**
   * The open window: trades recorded in it are known by id. Audited tickers always have one (closed and read back
   * every audit interval); others only while their feed is stopped.
   */
  tradeWindow: OpenTradeWindow | undefined;
  /** Closed windows waiting for (or in) their REST read. */
  readonly tradeWindows: OpenTradeWindow[] = [];
  /** The feed's trades checked against the venue's traded quantity in its book messages (`tradesCounted`). */
  private readonly tradeCount = new TradeCountAudit();

  constructor(
    readonly exchange: ExchangeKey,
    readonly ticker: string,
    resume: TickerResume,
    private readonly env: TickerEnv,
  ) {
    this.lastTs = resume.lastTs;
    this.sequence = resume.sequence;
    if (resume.lastTs >= 0) {
      const bookTs = resume.bookTs ?? resume.lastTs;
      this.pendingGap = { from: bookTs >= 0 ? bookTs : resume.lastTs, reason: 'recorder_start' };
      // The trades after the stored trades' end are read back once the feed carries them (or are a gap).
      if (env.onTradeWindow) {
        const from =
          resume.tradesTs === undefined
            ? resume.lastTs + 1
            : Math.max(
                resume.tradesTs - env.quietMs,
                resume.lastTs - TRADES_RESUME_LOOK_BACK_MS,
                (resume.firstTs ?? -1) - env.quietMs,
              );
        const known = new Map((resume.tradesAtEnd ?? []).map((t) => [t.id, t.ts] as const));
        this.openTradeWindow(from, known).broken = true;
        (this.tradeWindow as OpenTradeWindow).kind = 'missed';
        this.replayBefore = from;
      }
    }
    // Spread the first cadence snapshots of many tickers over one interval.
    this.nextSnapshotAt = env.now() + Math.floor(Math.random() * env.snapshotIntervalMs);
  }

  // ------------------------------------------------------------------------------------------------------------
  // Losing and regaining the book

  /**
   * The series stops being continuous (disconnect, stall, a REST mismatch): what arrives before the next venue
   * snapshot is ignored. `fromTs` is the last moment the book is known good (the caller's bound: the last message of
   * a connection that then closed, the last verified state, the last snapshot); a pending suspicion moves it earlier.
   * On a feed that cannot prove its continuity (`provesContinuity` false) the book is only known good up to its last
   * verification (a matching REST book, venue checksum or venue snapshot): the gap starts there at the latest. The
   * fresh snapshot after the loss cannot move it later: it shows the book at its own moment, not that no change was
   * lost between the last verification and the loss (levels are absolute sizes, a later change heals a lost one).
   */
  lose(reason: GapReason, fromTs: number = this.lastTs): void {
    // The moment a gap may start from (the last verification) is a stored row before anything else.
    this.writeVerification();
    const pending = this.pendingGap;
    if (this.live && this.pendingSnapshot === undefined) {
      if (this.lastTs >= 0) {
        const bound = this.env.provesContinuity || this.verifiedTs < 0 ? fromTs : Math.min(fromTs, this.verifiedTs);
        this.pendingGap = this.suspect
          ? { from: Math.min(this.suspect.from, bound), reason: this.suspect.reason }
          : { from: bound, reason };
      }
    } else if (this.pendingGap === undefined && this.lastTs >= 0) {
      this.pendingGap = { from: this.lastTs, reason };
    }
    this.live = false;
    this.suspect = undefined;
    this.pendingSnapshot = undefined;
    this.snapshotWanted = false;
    this.endVerifications();
    if (this.pendingGap !== pending) this.tellLost();
  }

  /**
   * The ticker leaves the recording (the listing dropped it, the venue refused it) at `at` (wall clock): nothing more
   * is recorded for it, so what a stop would leave to the next start is written now — its last verification, the gap
   * it owes (a lost book not yet replaced) ending here, and the window of trades its feed stopped carrying closed here
   * (read back, or a trades gap). It resumes after them if it comes back.
   */
  leave(at: number): void {
    this.writeVerification();
    if (this.pendingGap !== undefined) {
      const to = Math.max(at, this.lastTs + 1);
      this.writePendingGap(to);
      this.lastTs = to;
    }
    this.closeBrokenTradeWindow(at);
  }

  /** Writes the gap the ticker owes (a lost book not yet replaced), if any, ending at `to`. */
  private writePendingGap(to: number): void {
    const gap = this.pendingGap;
    if (gap === undefined) return;
    this.env.sink.gap(this.exchange, this.ticker, Math.min(gap.from, to), to, gap.reason, this.env.now());
    this.pendingGap = undefined;
  }

  /** Redundant recording: a gap just became pending (TickerEnv.onLost). */
  private tellLost(): void {
    const gap = this.pendingGap;
    if (this.env.onLost === undefined || gap === undefined) return;
    this.env.sink.lost?.(this.exchange, this.ticker, gap.from, gap.reason);
    this.env.onLost(this, gap.from, gap.reason);
  }

  /**
   * Redundant recording: this recorder took the ticker over by a splice (StandbyBuffer.splice) that wrote a snapshot
   * (or a gap) at `s` and rows up to `sequence`: the hybrid logical clock continues from there, and no later row goes
   * below S (a snapshot of the book is at S). A gap the ticker still owes (its book is not known since its own loss)
   * starts at S at the earliest: before S the rows are the old owner's.
   */
  resumeSequence(sequence: number, s = -1): void {
    this.sequence = sequence;
    if (s > this.lastTs) this.lastTs = s;
    if (s > this.lastSnapshotTs) this.lastSnapshotTs = s;
    if (this.pendingGap !== undefined && this.pendingGap.from < s) this.pendingGap = { ...this.pendingGap, from: s };
  }

  /**
   * Something may have been lost without the book being known wrong (Kalshi: a `seq` skipped on a subscription of
   * many tickers). The book keeps following the feed; the next venue snapshot decides: equal → nothing was lost
   * here, different → a gap from `fromTs`.
   */
  suspectLoss(reason: GapReason, fromTs: number): void {
    if (!this.live || this.pendingSnapshot !== undefined || this.suspect !== undefined) return;
    this.suspect = { from: Math.max(this.lastTs, fromTs), reason };
  }

  /**
   * A venue snapshot. `ts` is when it holds from, if the venue says (Polymarket US: transactTime + 1; Gemini: its
   * receive time); without one (`defer`), its ts is decided by the next timestamped message of the connection
   * (`settle`) or by the sweep. `receivedAt` is when its message arrived (default: now). Returns true when it waits
   * for that. `venueSeq` is the venue's ordering of its message (the snapshot rows' `venue_seq`; default '').
   */
  venueSnapshot(
    bids: LevelList,
    asks: LevelList,
    timing: { ts?: number; defer?: boolean; receivedAt?: number; venueSeq?: string },
  ): boolean {
    const venueSeq = checkedVenueSeq(timing.venueSeq);
    if (timing.ts !== undefined) checkedRowTs(timing.ts, 'snapshot time');
    const book = this.buildBook(bids, asks);
    const receivedAt = timing.receivedAt ?? this.env.now();
    if (this.live && this.pendingSnapshot === undefined) {
      if (book.equals(this.book)) {
        // Nothing was lost: keep the continuous series, and record this snapshot at the next exact boundary.
        this.suspect = undefined;
        this.snapshotWanted = true;
        this.verified(this.lastTs, 'snapshot');
        if (receivedAt > this.knownAt) this.knownAt = receivedAt;
        return false;
      }
      // The venue's own book (a resubscription's snapshot) differs from ours while the feed claimed continuity.
      this.writeVerification();
      const from = this.verifiedTs >= 0 ? this.verifiedTs : this.lastTs;
      this.pendingGap = this.suspect ? { ...this.suspect } : { from, reason: 'divergence' };
      this.tellLost();
    }
    this.suspect = undefined;
    this.book = book;
    this.lastEventTs = -1;
    this.live = true;
    this.endVerifications();
    this.pendingSnapshot = { receivedAt, venueSeq };
    if (timing.defer) return true;
    this.settle(timing.ts ?? receivedAt);
    return false;
  }

  /** Writes a pending venue snapshot at `ts` (or just after the last row written), with its gap first. */
  settle(ts: number): void {
    if (this.pendingSnapshot === undefined) return;
    const s = Math.max(ts, this.lastTs + 1);
    this.writePendingGap(s);
    this.knownAt = this.pendingSnapshot.receivedAt;
    const venueSeq = this.pendingSnapshot.venueSeq;
    this.pendingSnapshot = undefined;
    this.writeSnapshot(s, venueSeq);
    this.verified(s, 'snapshot');
    // The feed that sent this book carries the ticker's trades again (adapters subscribe trades first).
    this.resumeTrades(s);
  }

  /**
   * The book is known equal to the venue's at `ts` (`method`: how). A moment later than the last one known is a
   * verification point: written at once, or held while the last row is less than VERIFICATION_SPACING_MS old.
   */
  private verified(ts: number, method: VerificationMethod): void {
    if (ts <= this.verifiedTs || ts < 0) return;
    this.verifiedTs = ts;
    const now = this.env.now();
    this.heldVerification = { ts, method, detectedAt: now };
    if (now - this.verificationWrittenAt >= VERIFICATION_SPACING_MS) this.writeVerification();
  }

  /** Writes the held verification, if any (the sweep when its second has passed; a loss; the recording's end). */
  writeVerification(): void {
    const v = this.heldVerification;
    if (v === undefined) return;
    this.heldVerification = undefined;
    this.verificationWrittenAt = this.env.now();
    this.env.sink.verification(this.exchange, this.ticker, v.ts, v.method, v.detectedAt);
  }

  /**
   * The venue's own checksum of the book (Polymarket CLOB's `hash`) matched ours as of `ts` (the ts the event's rows
   * got): the book is known right there. A loss found later is a gap from here at the earliest.
   */
  checksumMatched(ts: number): void {
    if (this.live && this.pendingSnapshot === undefined) this.verified(ts, 'checksum');
  }

  /** Writes our book as a snapshot at `s`; `venueSeq` when it is the venue's snapshot as received ('' otherwise). */
  private writeSnapshot(s: number, venueSeq = ''): void {
    this.env.sink.snapshot(this.exchange, this.ticker, s, this.book, this.knownAt, venueSeq);
    this.lastSnapshotTs = s;
    if (s > this.lastTs) this.lastTs = s;
    this.snapshotWanted = false;
    this.nextSnapshotAt = this.env.now() + this.env.snapshotIntervalMs;
  }

  // ------------------------------------------------------------------------------------------------------------
  // Changes

  /**
   * Starts one venue event at the venue's (or receive) time, whose message arrived at `receivedAt` (default: now):
   * writes a pending or wanted snapshot first when due. `venueSeq` is the venue's ordering of its message (the
   * event's rows' `venue_seq`; default ''). Returns the ts the event's rows get, or -1 when the book is not live (the
   * event is ignored).
   */
  beginEvent(ts: number, receivedAt: number = this.env.now(), venueSeq = ''): number {
    checkedRowTs(ts, 'event time');
    this.eventVenueSeq = checkedVenueSeq(venueSeq);
    if (!this.live) return -1;
    let t = ts;
    if (this.pendingSnapshot !== undefined) this.settle(t);
    else if (this.snapshotWanted && t > this.lastTs) this.writeSnapshot(t);
    if (ts < this.lastEventTs && !this.env.provesContinuity) {
      // Older than an event already applied: the feed delivered the venue's events out of order (no sequence showed
      // it). Its rows would land behind newer ones (rule 7 orders by ts), and without it the book misses its change
      // from `ts` on: the book is in doubt from just before it (a verification since does not cover it) until the
      // venue's fresh book.
      if (this.verifiedTs < 0 || this.verifiedTs >= ts) this.verifiedTs = ts - 1;
      this.env.onBroken(this, 'divergence');
      return -1;
    }
    if (ts > this.lastEventTs) this.lastEventTs = ts;
    this.eventReceivedAt = receivedAt;
    if (receivedAt > this.knownAt) this.knownAt = receivedAt;
    if (t < this.lastSnapshotTs) {
      t = this.lastSnapshotTs;
      this.env.metrics?.clamped(this.exchange);
    }
    this.lastActivityAt = this.env.now();
    return t;
  }

  /** A signed change (Kalshi `delta_fp`) at the event's ts `t` (from beginEvent). */
  applyDelta(t: number, side: SideCode, priceText: string, deltaText: string): void {
    const price = this.env.price.get(priceText);
    const delta = parseDecimal(deltaText);
    if (delta === 0n) return;
    const levels = this.book.side(side);
    const level = levels.get(price);
    const q = (level?.q ?? 0n) + delta;
    if (q < 0n) {
      this.env.onBroken(this, 'book_inconsistent');
      return;
    }
    if (q === 0n) levels.delete(price);
    else if (level) {
      level.q = q;
      level.s = '';
    } else levels.set(price, { q, s: '', e: this.epoch });
    this.emit(t, side, price, deltaText, q);
  }

  /** A new absolute size of a level (Gemini `changes`; "0" removes it). */
  applyLevel(t: number, side: SideCode, priceText: string, quantityText: string): void {
    const price = this.env.price.get(priceText);
    const levels = this.book.side(side);
    const level = levels.get(price);
    if (level !== undefined && level.s === quantityText) return;
    const q = parseDecimal(quantityText);
    if (q < 0n) throw new RangeError(`negative size ${quantityText}`);
    const old = level?.q ?? 0n;
    if (q === old) {
      if (level) level.s = quantityText;
      return;
    }
    if (q === 0n) levels.delete(price);
    else if (level) {
      level.q = q;
      level.s = quantityText;
    } else levels.set(price, { q, s: quantityText, e: this.epoch });
    this.emit(t, side, price, formatDecimal(q - old), q);
  }

  /** A whole book (Polymarket US sends one per change): the differences to ours become deltas at `t`. */
  applyWholeBook(t: number, bids: LevelList, asks: LevelList): void {
    const epoch = ++this.epoch;
    this.diffSide(t, BID, bids, epoch);
    this.diffSide(t, ASK, asks, epoch);
    this.verified(t, 'snapshot'); // our book is now the venue's whole book at t
  }

  private diffSide(t: number, side: SideCode, levelsIn: LevelList, epoch: number): void {
    const levels = this.book.side(side);
    for (const [priceText, quantityText] of levelsIn) {
      const price = this.env.price.get(priceText);
      const level = levels.get(price);
      if (level !== undefined && level.s === quantityText) {
        level.e = epoch;
        continue;
      }
      const q = parseDecimal(quantityText);
      if (q < 0n) throw new RangeError(`negative size ${quantityText}`);
      const old = level?.q ?? 0n;
      if (q === 0n) {
        if (level) {
          levels.delete(price);
          this.emit(t, side, price, formatDecimal(-old), 0n);
        }
        continue;
      }
      if (level) {
        level.e = epoch;
        level.s = quantityText;
        if (q === old) continue;
        level.q = q;
      } else levels.set(price, { q, s: quantityText, e: epoch });
      this.emit(t, side, price, formatDecimal(q - old), q);
    }
    for (const [price, level] of levels) {
      if (level.e === epoch) continue;
      levels.delete(price);
      this.emit(t, side, price, formatDecimal(-level.q), 0n);
    }
  }

  private emit(t: number, side: SideCode, price: string, quantityDelta: string, newQuantity: bigint): void {
    const floor = t * 1000;
    this.sequence = this.sequence + 1 > floor ? this.sequence + 1 : floor;
    this.env.sink.delta(
      this.exchange,
      this.ticker,
      t,
      this.sequence,
      side,
      price,
      quantityDelta,
      this.eventReceivedAt,
      this.eventVenueSeq,
    );
    if (t > this.lastTs) this.lastTs = t;
    if (this.verifications.length > 0) this.trackChange(`${side}:${price}`, newQuantity, t);
  }

  // ------------------------------------------------------------------------------------------------------------
  // Trades

  /**
   * A trade the feed brought (`source` 'feed') or REST gave back ('backfill'). Recorded unless the ticker already
   * holds its id (then counted as deduplicated); returns whether it was recorded. Throws on a value the tables cannot
   * hold (an id outside the venue-text grammar, a decimal out of bounds, a size that is not positive).
   */
  trade(t: VenueTrade, receivedAt: number = this.env.now(), source: 'feed' | 'backfill' = 'feed'): boolean {
    if (!this.env.onTradeWindow) return false;
    checkedRowTs(t.ts, 'trade time');
    if (t.id === '' || !VENUE_TEXT_PATTERN.test(t.id)) throw new RangeError(`bad trade id ${JSON.stringify(t.id)}`);
    if (!VENUE_TEXT_PATTERN.test(t.venueSide)) throw new RangeError(`bad trade side ${JSON.stringify(t.venueSide)}`);
    const venueSeq = checkedVenueSeq(t.venueSeq);
    const price = this.env.price.get(t.price);
    const q = parseDecimal(t.size);
    if (q <= 0n) throw new RangeError(`trade size ${t.size} is not positive`);
    if (this.knowsTrade(t.id) || (source === 'feed' && t.ts < this.replayBefore)) {
      this.env.metrics?.tradeDeduplicated?.(this.exchange);
      return false;
    }
    const floor = t.ts * 1000;
    this.sequence = this.sequence + 1 > floor ? this.sequence + 1 : floor;
    this.env.sink.trade({
      exchange: this.exchange,
      ticker: this.ticker,
      ts: t.ts,
      sequence: this.sequence,
      tradeId: t.id,
      price,
      size: formatDecimal(q),
      side: t.side,
      venueSide: t.venueSide,
      receivedTs: receivedAt,
      venueSeq,
    });
    this.recentTrades.add(t.id, t.ts);
    if (source === 'feed') this.tradeCount.trade(q);
    if (this.lastTrade === undefined || t.ts >= this.lastTrade.ts) this.lastTrade = { ts: t.ts, id: t.id };
    const open = this.tradeWindow;
    if (open !== undefined && t.ts >= open.from) open.known.set(t.id, t.ts);
    for (const w of this.tradeWindows) if (t.ts >= w.from && t.ts <= w.to) w.known.set(t.id, t.ts);
    return true;
  }

  private knowsTrade(id: string): boolean {
    if (this.recentTrades.has(id) || this.tradeWindow?.known.has(id)) return true;
    for (const w of this.tradeWindows) if (w.known.has(id)) return true;
    return false;
  }

  private get auditing(): boolean {
    return (this.env.tradeAuditIntervalMs ?? 0) > 0;
  }

  /** A window from `from` (inclusive), read forward from the newest trade held before it (Gemini's `since_tid`). */
  private openTradeWindow(from: number, known = new Map<string, number>()): OpenTradeWindow {
    const w: OpenTradeWindow = {
      from,
      to: -1,
      gapFrom: from,
      last: this.recentTrades.newestBefore(from),
      known,
      kind: 'audit',
      broken: false,
      openedAt: this.env.now(),
    };
    this.tradeWindow = w;
    return w;
  }

  /**
   * The feed stops carrying this ticker's trades (its connection closed or stalled, its subscription is being
   * replaced): the open window (or, when trades are not audited, a new one from the newest trade held) becomes a
   * missed window, read back once the feed carries them again. `fromTs` is the feed's watermark (every event up to it
   * was received; Gemini: our receive clock): a venue without trade history has a gap from there.
   */
  interruptTrades(fromTs: number): void {
    if (!this.env.onTradeWindow) return;
    // The next subscription's first count is the audit's new baseline (this window's gap covers what it missed).
    this.tradeCount.reset();
    const held = this.lastTrade?.ts;
    let gapFrom: number;
    if (this.env.venueClock) gapFrom = Math.max(fromTs, held ?? -1, this.lastTs);
    // Receive-clocked feed: its watermark is not the trades' clock; the newest trade held is.
    else gapFrom = held ?? (fromTs >= 0 ? fromTs - this.env.quietMs : this.lastTs);
    let w = this.tradeWindow;
    if (w === undefined) {
      // Nothing recorded yet: recording starts with the next connection, nothing was missed.
      if (gapFrom < 0) return;
      w = this.openTradeWindow(held ?? gapFrom, new Map(this.recentTrades.since(held ?? gapFrom)));
    }
    if (w.broken) return; // an earlier stop is still open: it keeps its start
    w.broken = true;
    w.kind = 'missed';
    w.gapFrom = Math.max(w.from, gapFrom);
    // What the feed sends again from before the newest trade held was received before (or is read back by REST).
    if (held !== undefined && held > this.replayBefore) this.replayBefore = held;
  }

  /**
   * The feed shows that it lost trades before `to` while it kept running (Coinbase: a `trade_id` skipped on the
   * matches channel, a heartbeat's `last_trade_id` naming a trade never received): the stretch from the newest trade
   * held to `to` is read back from REST (or, where the venue cannot, becomes a trades gap). Call it before recording
   * the trade that showed the loss. Nothing happens while the feed is already stopped (that window covers it).
   */
  tradesMissed(to: number): void {
    if (!this.env.onTradeWindow || this.tradeWindow?.broken) return;
    const held = this.lastTrade?.ts;
    this.interruptTrades(held ?? to);
    this.closeBrokenTradeWindow(to);
  }

  /** The feed carries the ticker's trades again (the first book after a stop, or the very first). */
  private resumeTrades(ts: number): void {
    const w = this.tradeWindow;
    if (w === undefined) {
      // From now on trades flow: audited windows start here (the first audits of many tickers spread over an interval).
      if (this.auditing && this.env.onTradeWindow) {
        this.openTradeWindow(ts).openedAt -= Math.floor(Math.random() * (this.env.tradeAuditIntervalMs ?? 0));
      }
      return;
    }
    this.closeBrokenTradeWindow(ts);
  }

  /** A window of trades the feed stopped carrying is closed at `at` (or where its gap starts, if later). */
  private closeBrokenTradeWindow(at: number): void {
    const w = this.tradeWindow;
    if (w?.broken) this.closeTradeWindow(Math.max(at, w.gapFrom));
  }

  /** Closes the open window at `to` and hands it to `onTradeWindow`; an audited ticker's next window starts there. */
  private closeTradeWindow(to: number): void {
    const w = this.tradeWindow as OpenTradeWindow;
    w.to = to;
    this.tradeWindows.push(w);
    this.tradeWindow = undefined;
    if (this.auditing) {
      const known = new Map<string, number>();
      for (const [id, ts] of w.known) if (ts >= to) known.set(id, ts);
      this.openTradeWindow(to, known);
    }
    this.env.onTradeWindow?.(this, w);
  }

  /**
   * A periodic check of trades the feed may have lost silently (Kalshi's and Gemini's trades carry no sequence):
   * every RECORDER_TRADES_AUDIT_INTERVAL_MS the open window closes at now − quietMs (trades in flight arrive first) and
   * is read back like a missed one — unless the feed is stopped or the previous window is still being read.
   */
  auditTrades(now: number): void {
    const w = this.tradeWindow;
    if (w === undefined || w.broken || this.tradeWindows.length > 0) return;
    if (now - w.openedAt < (this.env.tradeAuditIntervalMs ?? 0) || !this.auditing) return;
    const to = now - this.env.quietMs;
    if (to >= w.from) this.closeTradeWindow(to);
  }

  /**
   * The trade count audit's hook, for adapters whose book messages carry the market's cumulative traded quantity
   * (Polymarket US `stats.sharesTraded`): `total` (exact decimal text) as the book message at venue time `ts` gives it,
   * every trade up to that book's change counted, that change's trades to follow on the feed. Trades it counts that
   * never arrived are a trades gap `missed_trades` from the book of the last check that held to the previous one
   * (`TradeCountAudit`). Throws on a count that is not a non-negative decimal (a malformed message).
   */
  tradesCounted(total: string, ts: number): void {
    if (!this.env.onTradeWindow) return;
    checkedRowTs(ts, 'traded quantity time');
    const count = parseDecimal(total);
    if (count < 0n) throw new RangeError(`negative traded quantity ${total}`);
    const check = this.tradeCount.book(count, ts);
    if (check.kind === 'missed') {
      this.env.sink.gap(this.exchange, this.ticker, check.from, check.to, 'missed_trades', this.env.now(), 'trades');
    } else if (check.kind === 'excess' || check.kind === 'restarted') {
      const quantity = check.kind === 'excess' ? formatDecimal(check.quantity) : undefined;
      this.env.metrics?.tradeCountExcess?.(this.exchange, this.ticker, quantity);
    }
  }

  /**
   * A window's read is over: `trades` (REST's, any order) are recorded in time order where they fall inside it and
   * are not held yet; `missing` parts (clipped to the window) become trades gaps with `reason`, and so does the moment
   * of a trade the tables cannot hold (counted as malformed: one bad trade of a page is not the whole window's read
   * failing). Returns how many trades were recorded, and how many could not be held (`unread`).
   */
  completeTradeWindow(
    w: OpenTradeWindow,
    trades: readonly VenueTrade[],
    missing: readonly { from: number; to: number }[] = [],
    reason: TradeGapReason = 'backfill_incomplete',
    receivedAt: number = this.env.now(),
  ): { recorded: number; unread: number } {
    const i = this.tradeWindows.indexOf(w);
    if (i < 0) return { recorded: 0, unread: 0 };
    let recorded = 0;
    const inside = trades.filter((t) => t.ts >= w.from && t.ts <= w.to).sort((a, b) => a.ts - b.ts);
    const unread: { from: number; to: number }[] = [];
    for (const t of inside) {
      try {
        if (this.trade(t, receivedAt, 'backfill')) recorded++;
      } catch {
        this.env.metrics?.malformed?.(this.exchange);
        unread.push({ from: t.ts, to: t.ts });
      }
    }
    this.tradeWindows.splice(i, 1);
    for (const m of [...missing, ...unread]) {
      const from = Math.max(m.from, w.from);
      const to = Math.min(m.to, w.to);
      if (from > to) continue;
      this.env.sink.gap(this.exchange, this.ticker, from, to, reason, this.env.now(), 'trades');
    }
    return { recorded, unread: unread.length };
  }

  /** Where this ticker's series ends, trades included (it resumes from here if it comes back). */
  resumePoint(): TickerResume {
    return { lastTs: Math.max(this.lastTs, this.lastTrade?.ts ?? -1), sequence: this.sequence };
  }

  // ------------------------------------------------------------------------------------------------------------
  // Cadence and quiet tickers

  /**
   * Called every few hundred ms: due cadence snapshots, snapshots of quiet tickers, overdue verifications.
   * `heardAt`: when the ticker's connection last received a frame (default: now).
   */
  sweep(now: number, heardAt: number = now): void {
    this.auditTrades(now);
    if (this.heldVerification !== undefined && now - this.verificationWrittenAt >= VERIFICATION_SPACING_MS) {
      this.writeVerification();
    }
    if (this.live && this.pendingSnapshot === undefined && now >= this.nextSnapshotAt) this.snapshotWanted = true;
    if (this.pendingSnapshot !== undefined) {
      // No timestamped message followed the venue's snapshot: it holds from when it arrived.
      if (now - this.pendingSnapshot.receivedAt >= this.env.quietMs) this.settle(this.pendingSnapshot.receivedAt);
    } else if (this.snapshotWanted && this.live && now - this.lastActivityAt >= this.env.quietMs) {
      // The venue stamps its own events: one still in flight may carry a time up to quietMs behind ours. And the
      // ticker is quiet, or its feed silently stalled: only a frame received since that time (a heartbeat, another
      // ticker's event) shows that everything sent before it has arrived — else wait (a stall ends in a gap from
      // before this snapshot, which would otherwise hide changes the stall kept back).
      const at = this.env.venueClock ? now - this.env.quietMs : now;
      if (!this.env.venueClock || heardAt >= at) this.writeSnapshot(Math.max(this.lastTs + 1, at));
    }
    for (const v of this.verifications) {
      if (!v.done && v.rest !== undefined && now >= v.deadline) {
        this.finish(v, 'mismatch');
        // The loss happened after the book was last known right (before the request), not necessarily after it.
        this.lose('divergence', v.verifiedTs >= 0 ? v.verifiedTs : v.fromTs);
        this.env.onBroken(this, 'divergence');
        return;
      }
    }
  }

  // ------------------------------------------------------------------------------------------------------------
  // Verification against a REST book (feeds without sequence numbers)

  /**
   * Call when sending a REST book request; pass the result to completeVerification (or cancelVerification).
   * `onOutcome` is told once how it ended. Undefined when not live (nothing is told).
   */
  startVerification(graceMs: number, onOutcome?: (outcome: ReconcileOutcome) => void): Verification | undefined {
    if (!this.live || this.pendingSnapshot !== undefined || this.pendingGap !== undefined) return undefined;
    const v: Verification = {
      fromTs: this.lastTs,
      verifiedTs: this.verifiedTs,
      ...(onOutcome ? { onOutcome } : {}),
      base: this.book.flatten(),
      log: [],
      graceMs,
      deadline: Number.MAX_SAFE_INTEGER,
      done: false,
      matched: false,
    };
    this.verifications.push(v);
    return v;
  }

  /**
   * The REST book arrived. It equals our book at some moment near the request, maybe before (changes we applied
   * since) or after (changes still in flight to us): match if any state from the request's until `graceMs` from now
   * equals it. Resolves 'match', 'pending' (decided later by trackChange or the sweep) or 'void' (not comparable:
   * the ticker lost its book meanwhile).
   */
  completeVerification(v: Verification, bids: LevelList, asks: LevelList): 'match' | 'pending' | 'void' {
    if (v.done || !this.verifications.includes(v)) return 'void';
    const rest = this.buildBook(bids, asks).flatten();
    const state = new Map(v.base);
    const mismatch = new Set<string>();
    for (const [key, q] of rest) if (state.get(key) !== q) mismatch.add(key);
    for (const key of state.keys()) if (!rest.has(key)) mismatch.add(key);
    let matchedAt = mismatch.size === 0 ? v.fromTs : undefined;
    for (const [key, q, ts] of v.log) {
      if (matchedAt !== undefined) break;
      if (q === 0n) state.delete(key);
      else state.set(key, q);
      if ((rest.get(key) ?? 0n) === q) mismatch.delete(key);
      else mismatch.add(key);
      if (mismatch.size === 0) matchedAt = ts;
    }
    if (matchedAt !== undefined) {
      this.verified(matchedAt, 'rest_book');
      this.finish(v, 'match');
      return 'match';
    }
    v.rest = rest;
    v.mismatch = mismatch;
    v.log = [];
    v.deadline = this.env.now() + v.graceMs;
    return 'pending';
  }

  private trackChange(key: string, q: bigint, ts: number): void {
    for (let i = this.verifications.length - 1; i >= 0; i--) {
      const v = this.verifications[i] as Verification;
      if (v.rest === undefined) {
        v.log.push([key, q, ts]);
        continue;
      }
      if ((v.rest.get(key) ?? 0n) === q) v.mismatch?.delete(key);
      else v.mismatch?.add(key);
      if (v.mismatch?.size === 0) {
        this.verified(ts, 'rest_book');
        this.finish(v, 'match');
      }
    }
  }

  /** The REST request failed (`error`), or its answer cannot be compared (`void`): forget the verification. */
  cancelVerification(v: Verification, outcome: 'error' | 'void' = 'error'): void {
    this.finish(v, outcome);
  }

  /** Ends a verification once: out of the open list, its outcome told. */
  private finish(v: Verification, outcome: ReconcileOutcome): void {
    if (v.done) return;
    v.done = true;
    v.matched = outcome === 'match';
    const i = this.verifications.indexOf(v);
    if (i >= 0) this.verifications.splice(i, 1);
    v.onOutcome?.(outcome);
  }

  /** Verifications still open (tests, the reconciler's bookkeeping). */
  get openVerifications(): number {
    return this.verifications.length;
  }

  /** The book was lost or re-based: open verifications cannot be compared any more. */
  private endVerifications(): void {
    for (const v of [...this.verifications]) this.finish(v, 'void');
    this.verifications.length = 0;
  }

  private buildBook(bids: LevelList, asks: LevelList): LocalBook {
    const book = new LocalBook();
    for (const [side, list] of [
      [BID, bids],
      [ASK, asks],
    ] as const) {
      const levels = book.side(side);
      for (const [priceText, quantityText] of list) {
        const q = parseDecimal(quantityText);
        if (q < 0n) throw new RangeError(`negative size ${quantityText}`);
        if (q === 0n) continue;
        const price = this.env.price.get(priceText);
        const existing = levels.get(price);
        if (existing) existing.q += q;
        else levels.set(price, { q, s: quantityText, e: this.epoch } satisfies Level);
      }
    }
    return book;
  }
}

/** A venue ordering as a row may carry it (VENUE_SEQ_PATTERN); throws on another (a malformed message). */
function checkedVenueSeq(v: string | undefined): string {
  if (v === undefined || v === '') return '';
  if (!VENUE_SEQ_PATTERN.test(v)) throw new RangeError(`bad venue sequence ${JSON.stringify(v.slice(0, 60))}`);
  return v;
}

export type { Verification };
