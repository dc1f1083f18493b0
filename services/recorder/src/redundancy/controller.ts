/**
 * The controller of redundant recording (issue 27; /work/notes/redundant-design.md §3.5 and the session's decisions):
 * which recorder records which ticker, and how a ticker moves. It drives the other pieces through pieces.ts.
 *
 * One state machine per (exchange, ticker), this recorder's role:
 *
 *     standby ──(owner dead / released / offered / none, and our book is live)──▶ taking ──▶ owner
 *        ▲                                                       │ (claim lost or failed: back to standby)
 *        │                                                       ▼
 *        ├──────────── releasing ◀──(SIGTERM, write trouble; a live peer)── owner
 *        └──────────── offering  ◀──(the book was lost; a live peer)─────── owner
 *                          └──(nobody took it within RECORDER_OFFER_TIMEOUT_MS)──▶ owner, writes its own gap
 *
 * - standby: the ticker's rows go to the StandbyBuffer (RoutingSink.setOwner false).
 * - taking (decision 1): claim in Redis (compare-and-set `from` → `ours|splicing`; of two claimers one wins); if the
 *   old term is dead (not a release): wait one lease TTL, then `store.killWriter(T)`; `store.landedEnds` → S = L + 1
 *   per ticker; `store.insertHandovers` (awaited) BEFORE any row of ours; then, synchronously per ticker,
 *   `buffer.splice` into the writer's sink, `routing.setOwner(true)`, `tickers.resumeSequence`; then `confirm`
 *   (`ours|owned`). A failure before the splice leaves the claim `ours|splicing` and the ticker standby: the next
 *   poll retries from the same `from`.
 * - releasing (SIGTERM; inserts failing ≥ RECORDER_HANDOVER_ON_WRITE_FAILURE_MS; spool full): only tickers a live
 *   peer is live on. Stop routing to the writer (rows go to our buffer: we are its standby now) → `writer.drained()` →
 *   `ours|released` → the peer takes it as above, without a kill. SIGTERM waits until the peers own them or a timeout.
 * - offering (decision 4): the owner lost the book (`onLost`). With a live peer: as releasing, state `offered`; the
 *   peer's claim within the offer timeout means no gap at all. Nobody claims: `ours|offered` → `ours|owned`, rows go
 *   to the writer again and the ticker writes its own gap (`writeOwnGap`). Without a live peer: the gap at once.
 * - forgotten (`forget`: the venue stopped recording the ticker): owned, released as at SIGTERM (with or without a live
 *   peer: if the market comes back, a peer may take it); then no role, out of our live set, and the routing forgets it
 *   (`ControlRouting.forget`).
 *
 * A peer's term is alive while its lease key exists; a term is "live on" a ticker when the ticker is in its live set
 * (this recorder publishes its own every poll). The poll runs every second; loss offers and SIGTERM act at once.
 *
 * Start order (the recorder binds it): `Lease.acquire` (new term) → the writer replays its spool, asking
 * `resolveTerm(T)` once per term found there (it waits until no ticker is owned by T any more — a live peer takes
 * those it is live on; this recorder claims the rest, no handovers row since its own spool is replayed whole — and
 * returns T's handovers rows: the fence) → `spoolReplayed()` → each venue `admit`s its selected tickers before
 * reading their resume points: standby where a live owner (or a live peer that will take over) exists, owner of
 * tickers nobody owns (today's `recorder_start` gap) and of dead terms' tickers no peer can take (after the TTL wait
 * and the kill, with a handovers row fencing the dead term's spool) → `start()` (the poll).
 *
 * A deposed lease (deadline passed, key gone) is the end of this term: the writer's gate (`lease.canInsert`) already
 * spools everything; `onFatal` tells the recorder to stop and start again as a new term.
 */
import { performance } from 'node:perf_hooks';
import type { ExchangeKey } from '@depthgate/platforms';
import { Counter, Gauge, Histogram, type Logger, type Registry } from '@depthgate/service-kit';
import type { RowSink } from '../rows';
import { UNHELD_KEPT_MS, type Owner, type Ownership } from './ownership';
import type {
  ControlBuffer,
  ControlLease,
  ControlRouting,
  ControlStore,
  ControlTickers,
  ControlWriter,
  HandoverKind,
  HandoverRow,
  LandedEnd,
} from './pieces';

export type Role = 'standby' | 'taking' | 'owner' | 'releasing' | 'offering';

export interface Clock {
  /** Monotonic ms. */
  monotonic(): number;
  /** Wall-clock ms (S when nothing is landed; `detected_at`). */
  wall(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: Clock = {
  monotonic: () => performance.now(),
  wall: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** How long a ticker's book must have been live before peers may hand it over (ControllerOptions.liveSettleMs). */
export const LIVE_SETTLE_MS = 1000;

export interface ControllerOptions {
  lease: ControlLease;
  ownership: Ownership;
  store: ControlStore;
  writer: ControlWriter;
  buffer: ControlBuffer;
  routing: ControlRouting;
  tickers: ControlTickers;
  /** The writer's sink: where a splice writes. */
  sink: RowSink;
  exchanges: readonly ExchangeKey[];
  /** RECORDER_LEASE_TTL_MS. */
  ttlMs: number;
  /** RECORDER_OFFER_TIMEOUT_MS. */
  offerTimeoutMs: number;
  /** RECORDER_HANDOVER_ON_WRITE_FAILURE_MS. */
  writeFailureMs: number;
  /** SIGTERM waits this long for the peers to own the released tickers (default 3 × ttl). */
  releaseTimeoutMs?: number;
  /**
   * A hand-over waits this long for the writer to land what it holds (default 2 × ttl); then the writer spools it
   * instead: ClickHouse being away must not keep a hand-over (or a stop) waiting.
   */
  drainTimeoutMs?: number;
  /** Default 1000. */
  pollMs?: number;
  /**
   * A ticker enters the live set peers read only once its book has been live this long (default LIVE_SETTLE_MS): a
   * release to a book that began inside the old owner's last ms cannot be split exactly (a one-ms divergence gap).
   */
  liveSettleMs?: number;
  /** `/ready` at the latest this long after the start (default 120 000). */
  readyAfterMs?: number;
  registry?: Registry;
  logger: Logger;
  clock?: Clock;
  /** The lease is lost: the recorder must stop and start again (a new term). */
  onFatal?: (reason: string) => void;
}

class ControlMetrics {
  readonly role: Gauge<'exchange' | 'role'>;
  readonly handovers: Counter<'kind' | 'result'>;
  readonly takeoverSeconds: Histogram<'kind'>;

  constructor(registry: Registry) {
    this.role = new Gauge({
      name: 'recorder_role',
      help: "Tickers by this recorder's role: owner (its writer records them) or standby (a peer does)",
      labelNames: ['exchange', 'role'],
      registers: [registry],
    });
    this.handovers = new Counter({
      name: 'recorder_handovers_total',
      help: 'Tickers moved between recorders: kind release|takeover|offer; result taken|lost|failed (the new owner), handed|timeout|returned (the old one)',
      labelNames: ['kind', 'result'],
      registers: [registry],
    });
    this.takeoverSeconds = new Histogram({
      name: 'recorder_takeover_seconds',
      help: 'From the claim to the splice of a takeover (a dead owner: one lease TTL of it is the wait before the kill)',
      labelNames: ['kind'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 20, 30, 60],
      registers: [registry],
    });
  }
}

/** The kind of a takeover by the value it takes over from. */
function kindOf(from: Owner | null): HandoverKind {
  if (from?.state === 'released') return 'release';
  if (from?.state === 'offered') return 'offer';
  return 'takeover';
}

/** A takeover of this value needs the TTL wait and the kill: its writer may still be inserting. */
function needsKill(from: Owner | null): boolean {
  return from !== null && (from.state === 'owned' || from.state === 'splicing');
}

function key(exchange: string, ticker: string): string {
  return `${exchange}\u0000${ticker}`;
}

export class Controller {
  private readonly roles = new Map<ExchangeKey, Map<string, Role>>();
  /** What a claim of ours took over from, until its splice is done (a retry uses it). */
  private readonly claimedFrom = new Map<string, Owner | null>();
  private readonly published = new Map<ExchangeKey, Set<string>>();
  /** When (monotonic) this term released a ticker that no peer has taken yet. */
  private readonly releasedAt = new Map<string, number>();
  /** Since when (monotonic) this recorder's book of a ticker is live without a break, as the polls saw it. */
  private readonly liveSince = new Map<string, number>();
  /**
   * Dead terms whose inserts were ended (endDeadTerm), or are being ended (`settled` false), until no owner value in
   * Redis nor a claim of ours still names the term (`forgetEndedTerms`).
   */
  private readonly deadTermsEnded = new Map<number, { ended: Promise<void>; settled: boolean }>();
  /** Tickers the recorder stopped recording (`forget`), per exchange, until the poll forgets them. */
  private readonly left = new Map<ExchangeKey, Set<string>>();
  /** Ends of tickers being released, taken when their routing left the writer, until published. */
  private readonly released = new Map<string, LandedEnd>();
  private readonly clock: Clock;
  private readonly metrics: ControlMetrics | undefined;
  private readonly startedAt: number;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private stopping = false;
  private fatal = false;
  private replayed = false;
  private spoolFull = false;
  /** The current write-trouble episode already released what it could. */
  private troubleHandled = false;

  constructor(private readonly o: ControllerOptions) {
    this.clock = o.clock ?? realClock;
    this.metrics = o.registry ? new ControlMetrics(o.registry) : undefined;
    this.startedAt = this.clock.monotonic();
    for (const e of o.exchanges) this.roles.set(e, new Map());
    o.lease.on('deposed', (reason) => {
      if (this.fatal) return;
      this.fatal = true;
      this.o.logger.error({ term: this.term, reason }, 'deposed: this term records nothing more; restarting');
      this.o.onFatal?.(`lease ${reason}`);
    });
  }

  get term(): number {
    return this.o.lease.term;
  }

  role(exchange: ExchangeKey, ticker: string): Role | undefined {
    return this.roles.get(exchange)?.get(ticker);
  }

  // ---------------------------------------------------------------------------------------------------- start

  /**
   * The writer's fence input for a term found in the spool: waits until no ticker is owned by `term` any more (a live
   * peer takes what it is live on; this recorder claims the rest, after the TTL wait and the kill), then until the
   * term's handovers rows hold every ticker a peer took (the peer's claim, `splicing`, comes before its TTL wait, kill
   * and handovers row: a fence read at the claim would miss the row, and the term's spooled rows after S would be
   * replayed over the peer's — found on the cluster), at most `3 × ttl + poll` more; then returns them.
   */
  async resolveTerm(term: number): Promise<HandoverRow[]> {
    /** Tickers of the term a live peer takes (exchange\0ticker): each gets a handovers row from the term. */
    const byPeers = new Set<string>();
    if (term !== this.term && term !== 0) {
      const giveUpAt = this.clock.monotonic() + 3 * this.o.ttlMs + (this.o.pollMs ?? 1000);
      for (;;) {
        let left = 0;
        const alive = this.aliveCache();
        for (const exchange of this.o.exchanges) {
          const owners = await this.o.ownership.owners(exchange);
          const live = await this.o.ownership.liveSets(exchange);
          const ofTerm = [...owners].filter(([, owner]) => owner.term === term);
          if (ofTerm.length === 0) continue;
          if (await alive(term)) {
            left += ofTerm.length; // its lease has not expired yet: wait
            continue;
          }
          const mine: Array<[string, Owner]> = [];
          for (const [ticker, owner] of ofTerm) {
            if (this.clock.monotonic() < giveUpAt && (await this.livePeer(live, ticker, alive))) {
              left++;
              byPeers.add(key(exchange, ticker));
            } else mine.push([ticker, owner]);
          }
          // Our own earlier term: its spool is ours and replays whole, so no handovers row (nothing to fence).
          for (const { from, tickers } of groupByValue(mine).values()) {
            left += tickers.length - (await this.claimAtStart(exchange, from, tickers, false));
          }
        }
        if (left === 0) break;
        await this.clock.sleep(this.o.pollMs ?? 1000);
      }
    }
    const giveUpAt = this.clock.monotonic() + 3 * this.o.ttlMs + (this.o.pollMs ?? 1000);
    for (;;) {
      const rows = await this.o.store.handoversOf(term);
      for (const r of rows) if (r.fromTerm === term) byPeers.delete(key(r.exchange, r.ticker));
      // Those this recorder claimed in the end (no peer took them) get no row. A peer's claim still splicing may be of
      // this term's ticker (claimed before this recorder looked): waited for too.
      let splicing = 0;
      for (const exchange of this.o.exchanges) {
        for (const [ticker, owner] of await this.o.ownership.owners(exchange)) {
          if (owner.term === this.term) byPeers.delete(key(exchange, ticker));
          else if (owner.state === 'splicing') splicing++;
        }
      }
      if (byPeers.size === 0 && splicing === 0) return rows;
      if (this.clock.monotonic() >= giveUpAt) {
        this.o.logger.warn(
          { term, tickers: byPeers.size, splicing },
          'tickers a peer took from a term in the spool have no handovers row yet: their spooled rows replay unfenced',
        );
        return rows;
      }
      await this.clock.sleep(this.o.pollMs ?? 1000);
    }
  }

  /** The spool is replayed: readiness may count. */
  spoolReplayed(): void {
    this.replayed = true;
  }

  /**
   * A venue's selected tickers, before their resume points are read: this recorder's role for each (routing set
   * accordingly). Tickers nobody owns become ours; a dead term's tickers no live peer can take become ours after the
   * kill (with a handovers row); the rest are standby.
   */
  async admit(exchange: ExchangeKey, tickers: readonly string[]): Promise<Map<string, Role>> {
    const roles = this.rolesOf(exchange);
    for (const t of tickers) this.left.get(exchange)?.delete(t);
    const fresh = tickers.filter((t) => !roles.has(t));
    if (fresh.length > 0) {
      const owners = await this.o.ownership.owners(exchange);
      const live = await this.o.ownership.liveSets(exchange);
      const alive = this.aliveCache();
      const unowned: string[] = [];
      const dead: Array<[string, Owner]> = [];
      const ownBack: Array<[string, Owner]> = [];
      for (const ticker of fresh) {
        const owner = owners.get(ticker);
        if (owner === undefined) unowned.push(ticker);
        else if (owner.term === this.term && (owner.state === 'released' || owner.state === 'offered')) {
          ownBack.push([ticker, owner]);
        } else if (owner.term === this.term) {
          // Ours from resolveTerm; a claim of ours still splicing is finished by the poll (as a takeover).
          const unfinished = owner.state === 'splicing' && this.claimedFrom.has(key(exchange, ticker));
          this.setRole(exchange, ticker, unfinished ? 'standby' : 'owner');
        } else if (await alive(owner.term)) this.setRole(exchange, ticker, 'standby');
        else if (await this.livePeer(live, ticker, alive)) this.setRole(exchange, ticker, 'standby');
        else dead.push([ticker, owner]);
      }
      // Released (or offered) by us and admitted again (a market that came back): owned again here, by compare-and-set,
      // not at the next poll — a peer may delete an entry nobody held (dropUnheld) meanwhile. Gone: unowned.
      for (const { from, tickers: group } of groupByValue(ownBack).values()) {
        const won = new Set(await this.o.ownership.swap(exchange, group, from, { term: this.term, state: 'owned' }));
        for (const t of group) {
          if (won.has(t)) this.setRole(exchange, t, 'owner');
          else unowned.push(t);
        }
      }
      if (unowned.length > 0) {
        const won = new Set(await this.o.ownership.swap(exchange, unowned, null, { term: this.term, state: 'owned' }));
        for (const t of unowned) this.setRole(exchange, t, won.has(t) ? 'owner' : 'standby');
      }
      for (const { from, tickers: group } of groupByValue(dead).values()) {
        await this.claimAtStart(exchange, from, group, true);
      }
      for (const t of fresh) if (!roles.has(t)) this.setRole(exchange, t, 'standby');
    }
    return new Map(tickers.map((t) => [t, roles.get(t) as Role]));
  }

  /** Starts the 1 s poll. */
  start(): void {
    const tick = () => {
      this.timer = setTimeout(() => {
        void this.poll().finally(() => {
          if (!this.stopping && !this.fatal) tick();
        });
      }, this.o.pollMs ?? 1000);
      this.timer.unref();
    };
    tick();
  }

  /**
   * `/ready`: the spool replayed and live on ≥ 99 % of the selected tickers (none admitted yet: not ready), or
   * `readyAfterMs` passed.
   */
  ready(): boolean {
    if (!this.replayed || this.fatal) return false;
    if (this.clock.monotonic() - this.startedAt >= (this.o.readyAfterMs ?? 120_000)) return true;
    // Live as the peers see it (published in the live sets): a peer releasing to us needs that, not our own view.
    let all = 0;
    let live = 0;
    for (const [exchange, roles] of this.roles) {
      const published = this.published.get(exchange);
      for (const ticker of roles.keys()) {
        all++;
        if (this.o.tickers.live(exchange, ticker) && published?.has(ticker) === true) live++;
      }
    }
    return all > 0 && live >= 0.99 * all;
  }

  // ---------------------------------------------------------------------------------------------------- poll

  /** One round: publish the live set, take over what can be taken, hand tickers over on write trouble. */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    if (this.fatal) return;
    try {
      const alive = this.aliveCache();
      const takeovers: Array<[ExchangeKey, Owner | null, string[]]> = [];
      /** The terms named by an owner value, on every exchange. */
      const named = new Set<number>();
      for (const exchange of this.o.exchanges) {
        await this.publishLive(exchange);
        if (this.stopping) continue;
        await this.forgetLeft(exchange);
        const liveSets = await this.dropDeadLive(exchange, alive);
        const owners = await this.o.ownership.owners(exchange);
        for (const owner of owners.values()) named.add(owner.term);
        const roles = this.rolesOf(exchange);
        const take: Array<[string, Owner | null]> = [];
        const confirm: string[] = [];
        const back: string[] = [];
        const reclaim: Array<[string, Owner]> = [];
        for (const [ticker, role] of roles) {
          const owner = owners.get(ticker);
          if (role === 'owner') {
            if (owner === undefined || owner.term !== this.term) {
              // Someone took it from us (we were thought dead): never write it again.
              this.o.logger.error({ exchange, ticker, owner }, 'a ticker of ours is owned by another term: standby');
              this.o.routing.setOwner(exchange, ticker, false);
              this.setRole(exchange, ticker, 'standby');
            } else if (owner.state === 'splicing') confirm.push(ticker);
            // Ours here, released or offered there: a release or offer that failed midway and could not be undone
            // then (Redis away). Owned again, before a peer takes it while this recorder writes it.
            else if (owner.state === 'released' || owner.state === 'offered') reclaim.push([ticker, owner]);
            continue;
          }
          if (role !== 'standby' || !this.o.tickers.live(exchange, ticker)) continue;
          if (owner === undefined) take.push([ticker, null]);
          else if (owner.term === this.term) {
            // Our own claim whose splice failed: retry from what it took over.
            if (owner.state === 'splicing' && this.claimedFrom.has(key(exchange, ticker))) {
              take.push([ticker, owner]);
            }
            // Released (write trouble) and not taken for three lease TTLs: no peer can, write it on ourselves.
            const at = this.releasedAt.get(key(exchange, ticker));
            if (owner.state === 'released' && at !== undefined && this.clock.monotonic() - at >= 3 * this.o.ttlMs) {
              back.push(ticker);
            }
          } else if (owner.state === 'released' || owner.state === 'offered') {
            take.push([ticker, owner]);
          } else if (this.coversDeath(exchange, ticker) && !(await alive(owner.term))) {
            // A dead owner's series is continued from what landed, up to a few seconds before its lease expired:
            // only a buffer live since before then reaches back (a recorder that just started would write a gap
            // where its peer has the rows; it takes the ticker only if nobody else has for that long).
            take.push([ticker, owner]);
          }
        }
        if (confirm.length > 0) await this.o.ownership.confirm(exchange, confirm, this.term);
        for (const { from, tickers } of groupByValue(reclaim).values()) {
          await this.o.ownership.swap(exchange, tickers, from as Owner, { term: this.term, state: 'owned' });
        }
        await this.takeBack(exchange, back, 'released');
        for (const { from, tickers } of groupByValue(take).values()) takeovers.push([exchange, from, tickers]);
        // A clean-up: its failure (Redis) must not hold back the rest of the poll (takeovers above all).
        await this.dropUnheld(exchange, owners, roles, liveSets).catch((err: unknown) =>
          this.o.logger.warn(
            { exchange, err: { message: (err as Error).message } },
            'forgetting unheld tickers failed',
          ),
        );
      }
      if (!this.stopping) this.forgetEndedTerms(named);
      // Every exchange's at once: a dead owner's takeovers wait one lease TTL each, not one after another.
      await Promise.all(takeovers.map(([exchange, from, tickers]) => this.takeOver(exchange, from, tickers)));
      await this.checkWriteTrouble();
      this.updateRoleGauge();
    } catch (err) {
      this.o.logger.warn({ err: { message: (err as Error).message } }, 'redundancy poll failed; retried next second');
    }
  }

  /**
   * The recorder stopped recording a ticker (its venue dropped it, and what it had to write is written): the next poll
   * releases it if it is ours, as a stop does (if the market comes back, a live peer may take it), and forgets it —
   * its role, its entry in our live set and what the routing keeps of it. A ticker admitted again before then is kept.
   */
  forget(exchange: ExchangeKey, ticker: string): void {
    let left = this.left.get(exchange);
    if (!left) this.left.set(exchange, (left = new Set()));
    left.add(ticker);
  }

  /** `forget`: the left tickers released (ours) and forgotten; one being taken, released or offered once it settles. */
  private async forgetLeft(exchange: ExchangeKey): Promise<void> {
    const left = this.left.get(exchange);
    if (left === undefined || left.size === 0) return;
    const roles = this.rolesOf(exchange);
    // A release failing midway leaves them ours: the next poll tries again.
    await this.release([exchange], 'released', (e) =>
      Promise.resolve([...left].filter((t) => this.rolesOf(e).get(t) === 'owner')),
    );
    // After the release: a ticker admitted again meanwhile is no longer in `left`.
    const gone = [...left].filter((t) => (roles.get(t) ?? 'standby') === 'standby');
    const sent = this.published.get(exchange);
    const unpublish = gone.filter((t) => sent?.has(t) === true);
    if (unpublish.length > 0) await this.o.ownership.setLive(exchange, this.term, [], unpublish);
    for (const t of unpublish) sent?.delete(t);
    for (const t of gone) {
      // Admitted again while Redis answered: kept (with its role; the next poll publishes it again when live).
      if (!left.has(t)) continue;
      const k = key(exchange, t);
      roles.delete(t);
      left.delete(t);
      this.liveSince.delete(k);
      this.releasedAt.delete(k);
      this.claimedFrom.delete(k);
      this.released.delete(k);
      this.o.routing.forget(exchange, t);
    }
  }

  /**
   * Forgets the live sets of terms whose lease is gone (each restart leaves one behind); the live sets of the others
   * (this term's included).
   */
  private async dropDeadLive(
    exchange: ExchangeKey,
    alive: (term: number) => Promise<boolean>,
  ): Promise<Map<number, Set<string>>> {
    const live = await this.o.ownership.liveSets(exchange);
    for (const term of [...live.keys()]) {
      if (term !== this.term && !(await alive(term))) {
        await this.o.ownership.dropLive(exchange, term);
        live.delete(term);
      }
    }
    return live;
  }

  /**
   * Deletes the owner entries of released tickers that no recorder holds — no role here and in no live term's live
   * set — for UNHELD_KEPT_MS (an hour: far longer than a restart or a rolling deploy), counted from when a recorder's
   * poll first saw them so (`unheldSince`, shared: a restarted recorder goes on counting; a recorder that holds one
   * forgets its time, so the hour starts again once nobody does). The times are the recorders' wall clocks: a clock
   * behind by Δ makes its peers delete Δ early, which only means an earlier fresh claim if the market comes back.
   * Without this, every market a venue ever dropped (Kalshi's expire daily) stayed in the owner hash, which every
   * recorder reads whole each poll. A market that comes back after that is unowned, and claimed afresh as any new one
   * (spliced at what landed, as a takeover is; without a hand-over row); what its released owner left is durable.
   * Compare-and-delete: an entry claimed meanwhile stays. The releaser admitting it again owns it back at once (`admit`),
   * so a delete cannot come between. `offered` entries (an owner that lost the book) are left to a peer's takeover.
   */
  private async dropUnheld(
    exchange: ExchangeKey,
    owners: ReadonlyMap<string, Owner>,
    roles: ReadonlyMap<string, Role>,
    liveSets: ReadonlyMap<number, ReadonlySet<string>>,
  ): Promise<void> {
    const ownership = this.o.ownership;
    const since = await ownership.unheldSince(exchange);
    const unheld = new Set<string>();
    const add: string[] = [];
    const drop: Array<[string, Owner]> = [];
    const at = this.clock.wall();
    for (const [ticker, owner] of owners) {
      if (owner.state !== 'released' || roles.has(ticker)) continue;
      let live = false;
      for (const set of liveSets.values()) live ||= set.has(ticker);
      if (live) continue;
      unheld.add(ticker);
      const first = since.get(ticker);
      if (first === undefined) add.push(ticker);
      else if (at - first >= UNHELD_KEPT_MS) drop.push([ticker, owner]);
    }
    // Forgotten: those held now, and those dropped (deleted, or changed meanwhile: counted afresh if unheld again).
    const forget = [...since.keys()].filter((t) => !unheld.has(t));
    for (const { from, tickers } of groupByValue(drop).values()) {
      const gone = await ownership.swap(exchange, tickers, from, null);
      forget.push(...tickers);
      if (gone.length > 0)
        this.o.logger.info({ exchange, tickers: gone.length }, 'released tickers nobody holds: forgotten');
    }
    await ownership.noteUnheld(exchange, add, at, forget);
  }

  /**
   * Whether this recorder's book of the ticker has been live long enough to take over from a dead owner: since
   * before the owner's last landed rows (a lease TTL for the expiry, a poll, and the writer's batch delay and insert).
   */
  private coversDeath(exchange: ExchangeKey, ticker: string): boolean {
    const since = this.liveSince.get(key(exchange, ticker));
    return since !== undefined && this.clock.monotonic() - since >= this.o.ttlMs + 2 * (this.o.pollMs ?? 1000);
  }

  private async publishLive(exchange: ExchangeKey): Promise<void> {
    let sent = this.published.get(exchange);
    if (!sent) this.published.set(exchange, (sent = new Set()));
    const add: string[] = [];
    const remove: string[] = [];
    for (const ticker of this.rolesOf(exchange).keys()) {
      const live = this.o.tickers.live(exchange, ticker);
      const k = key(exchange, ticker);
      if (!live) this.liveSince.delete(k);
      else if (!this.liveSince.has(k)) this.liveSince.set(k, this.clock.monotonic());
      const settled =
        live && this.clock.monotonic() - (this.liveSince.get(k) as number) >= (this.o.liveSettleMs ?? LIVE_SETTLE_MS);
      if (settled && !sent.has(ticker)) add.push(ticker);
      else if (!live && sent.has(ticker)) remove.push(ticker);
    }
    if (add.length === 0 && remove.length === 0) return;
    await this.o.ownership.setLive(exchange, this.term, add, remove);
    for (const t of add) sent.add(t);
    for (const t of remove) sent.delete(t);
  }

  // ---------------------------------------------------------------------------------------------------- takeover

  /**
   * Decision 1: claim → (dead owner: TTL wait, kill) → landed ends → handovers rows → per ticker splice, route to the
   * writer, resume the sequence → confirm. `from` is the value claimed over (null: nobody owned them); a value of our
   * own term is the retry of a claim whose splice failed.
   */
  private async takeOver(exchange: ExchangeKey, from: Owner | null, tickers: readonly string[]): Promise<void> {
    const retry = from !== null && from.term === this.term;
    const startedAt = this.clock.monotonic();
    let claimed: string[];
    if (retry) {
      claimed = [...tickers];
    } else {
      claimed = await this.o.ownership.claim(exchange, tickers, from, this.term);
      this.count(kindOf(from), 'lost', tickers.length - claimed.length);
      for (const t of claimed) this.claimedFrom.set(key(exchange, t), from);
    }
    // A retry groups its tickers by their original `from`.
    const groups = retry
      ? groupByValue(claimed.map((t) => [t, this.claimedFrom.get(key(exchange, t)) ?? null] as [string, Owner | null]))
      : new Map([[from === null ? '' : `${from.term}|${from.state}`, { from, tickers: claimed }]]);
    for (const { from: original, tickers: group } of groups.values()) {
      if (group.length === 0) continue;
      const kind = kindOf(original);
      for (const t of group) this.setRole(exchange, t, 'taking');
      try {
        if (needsKill(original)) await this.endDeadTerm((original as Owner).term);
        const ends = await this.endsOf(exchange, original, group);
        const detectedAt = this.clock.wall();
        const points = group.map((ticker) => {
          const end = ends.get(ticker);
          return {
            ticker,
            s: end ? end.lastTs + 1 : detectedAt,
            sequence: end?.sequence ?? 0,
            lastTradeTs: end?.lastTradeTs ?? -1,
            deltasAtLast: end?.deltasAtLast ?? [],
            ...(end?.digest === undefined ? {} : { digest: end.digest }),
          };
        });
        if (original !== null) {
          await this.o.store.insertHandovers(
            points.map((p) => ({
              exchange,
              ticker: p.ticker,
              ts: p.s,
              fromTerm: original.term,
              toTerm: this.term,
              kind,
              detectedAt,
            })),
          );
        }
        // Synchronous from here to the routing switch: no row of the ticker can slip between splice and routing.
        let beyondWindow = 0;
        for (const p of points) {
          const result = this.o.buffer.splice(exchange, p.ticker, p, this.o.sink);
          if (result.beyondWindow) beyondWindow++;
          this.o.routing.setOwner(exchange, p.ticker, true);
          this.o.tickers.resumeSequence(exchange, p.ticker, result.sequence, p.s, result.pendingGap);
          this.setRole(exchange, p.ticker, 'owner');
          this.claimedFrom.delete(key(exchange, p.ticker));
        }
        await this.o.ownership.confirm(exchange, group, this.term).catch((err: Error) => {
          // Ours already (the claim); the poll confirms again.
          this.o.logger.warn({ err: { message: err.message }, exchange }, 'confirming a takeover failed; retried');
        });
        this.count(kind, 'taken', group.length);
        // How long the takeover took from its decision (a dead owner's: the TTL wait, the kill and the reads), and how
        // far back the splice had to reach (from the oldest S to when the ends were read).
        const tookMs = this.clock.monotonic() - startedAt;
        this.metrics?.takeoverSeconds.observe({ kind }, tookMs / 1000);
        const reachMs = detectedAt - Math.min(...points.map((p) => p.s));
        this.o.logger.info(
          {
            exchange,
            tickers: group.length,
            from: original,
            kind,
            term: this.term,
            reachMs,
            tookMs,
          },
          'took tickers over',
        );
        if (beyondWindow > 0) {
          this.o.logger.warn(
            { exchange, tickers: beyondWindow, from: original, kind, reachMs },
            'the standby buffer no longer reached back to S: handover gaps written (raise RECORDER_STANDBY_BUFFER_MS)',
          );
        }
      } catch (err) {
        for (const t of group) if (this.role(exchange, t) === 'taking') this.setRole(exchange, t, 'standby');
        this.count(kind, 'failed', group.length);
        this.o.logger.warn(
          { err: { message: (err as Error).message }, exchange, tickers: group.length },
          'takeover failed before the splice; retried next poll',
        );
      }
    }
  }

  /**
   * At the start, before the tickers exist (nothing buffered, no splice): claims tickers of a dead term as ours;
   * after the TTL wait and the kill, the ticker reads its resume point from what landed (today's `recorder_start`
   * gap). Returns how many it claimed. `fence`: a handovers row at S = L + 1, so that the dead term's own spool drops what we now record.
   */
  private async claimAtStart(
    exchange: ExchangeKey,
    from: Owner | null,
    tickers: readonly string[],
    fence: boolean,
  ): Promise<number> {
    const claimed = await this.o.ownership.claim(exchange, tickers, from, this.term);
    if (claimed.length === 0) return 0;
    const kind = kindOf(from);
    try {
      if (needsKill(from)) await this.endDeadTerm((from as Owner).term);
      if (fence && from !== null) {
        const ends = await this.o.store.landedEnds(exchange, claimed);
        const detectedAt = this.clock.wall();
        await this.o.store.insertHandovers(
          claimed.map((ticker) => ({
            exchange,
            ticker,
            ts: (ends.get(ticker)?.lastTs ?? detectedAt - 1) + 1,
            fromTerm: from.term,
            toTerm: this.term,
            kind,
            detectedAt,
          })),
        );
      }
    } catch (err) {
      this.o.logger.warn(
        { err: { message: (err as Error).message }, exchange, tickers: claimed.length, from },
        'taking a dead term’s tickers at the start failed; given back',
      );
      this.count(kind, 'failed', claimed.length);
      // Give the claim back (the value we took it from); if even that fails, the poll finishes it as a takeover.
      const back = await this.o.ownership
        .swap(exchange, claimed, { term: this.term, state: 'splicing' }, from as Owner)
        .catch(() => [] as string[]);
      const stuck = claimed.filter((t) => !back.includes(t));
      for (const t of stuck) this.claimedFrom.set(key(exchange, t), from);
      return 0;
    }
    for (const t of claimed) this.setRole(exchange, t, 'owner');
    await this.o.ownership.confirm(exchange, claimed, this.term);
    this.count(kind, 'taken', claimed.length);
    return claimed.length;
  }

  // ---------------------------------------------------------------------------------------------------- release

  /**
   * SIGTERM: hands every owned ticker a live peer is live on to that peer, and waits until the peers own them (or the
   * release timeout). The recorder's normal stop follows (then `stop()`).
   */
  async releaseAll(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    if (this.fatal) return;
    // Never rejects: the recorder's stop goes on to close the feeds and flush what it holds whatever happens here.
    try {
      await this.handOverAll();
    } catch (err) {
      this.o.logger.warn({ err: { message: (err as Error).message } }, 'handing tickers over at the stop failed');
    }
  }

  private async handOverAll(): Promise<void> {
    // A stopping recorder takes nothing over: out of the live sets first, so that no peer releases to it meanwhile.
    for (const exchange of this.o.exchanges) {
      await this.o.ownership.dropLive(exchange, this.term).catch(() => undefined);
    }
    const deadline = this.clock.monotonic() + (this.o.releaseTimeoutMs ?? 3 * this.o.ttlMs);
    const released = await this.releaseToPeers('released');
    for (;;) {
      // Tickers no peer was live on yet: a peer that has just started may become live before the deadline.
      if (this.owns()) {
        for (const [exchange, more] of await this.releaseToPeers('released')) {
          const all = released.get(exchange);
          if (all) for (const t of more) all.add(t);
          else released.set(exchange, more);
        }
      }
      let waiting = 0;
      for (const [exchange, tickers] of released) {
        const owners = await this.o.ownership.owners(exchange);
        for (const t of tickers) {
          const owner = owners.get(t);
          if (owner === undefined || owner.term === this.term) waiting++;
          else tickers.delete(t);
        }
      }
      if (waiting === 0) break;
      if (this.clock.monotonic() >= deadline) {
        this.count('release', 'timeout', waiting);
        this.o.logger.warn({ tickers: waiting }, 'released tickers not taken before the timeout: writing them on');
        for (const [exchange, tickers] of released) await this.takeBack(exchange, [...tickers], 'released');
        break;
      }
      await this.clock.sleep(100);
    }
  }

  /**
   * Releases (state `released`) every owned ticker some live peer is live on: routing to our buffer, the writer
   * drained, then the state. Returns what was released, per exchange.
   */
  private async releaseToPeers(state: 'released' | 'offered'): Promise<Map<ExchangeKey, Set<string>>> {
    const alive = this.aliveCache();
    const out = await this.release(this.o.exchanges, state, async (exchange) => {
      const live = await this.o.ownership.liveSets(exchange);
      const tickers: string[] = [];
      for (const [ticker, role] of this.rolesOf(exchange)) {
        if (role === 'owner' && (await this.livePeer(live, ticker, alive))) tickers.push(ticker);
      }
      return tickers;
    });
    for (const done of out.values()) this.count('release', 'handed', done.size);
    return out;
  }

  /**
   * Releases (`state`) the owned tickers `pick` chooses on each exchange: routing to our buffer, the writer drained,
   * their ends published, then the state; standby here. Returns what was released, per exchange. A failure midway
   * leaves the tickers not released ours (`resume`).
   */
  private async release(
    exchanges: readonly ExchangeKey[],
    state: 'released' | 'offered',
    pick: (exchange: ExchangeKey) => Promise<string[]>,
  ): Promise<Map<ExchangeKey, Set<string>>> {
    const out = new Map<ExchangeKey, Set<string>>();
    const chosen = new Map<ExchangeKey, string[]>();
    const settled = new Set<string>();
    try {
      for (const exchange of exchanges) {
        const tickers = await pick(exchange);
        chosen.set(exchange, tickers);
        for (const t of tickers) {
          this.setRole(exchange, t, 'releasing');
          // Taken at the switch: the book now is the one after the last row routed to the writer.
          const end = this.o.routing.endOf(exchange, t);
          if (end) this.released.set(key(exchange, t), { ...end, digest: this.o.tickers.bookDigest(exchange, t) });
          this.o.routing.setOwner(exchange, t, false);
        }
      }
      if ([...chosen.values()].every((tickers) => tickers.length === 0)) return out;
      await this.drained();
      for (const [exchange, tickers] of chosen) {
        if (tickers.length === 0) continue;
        await this.publishEnds(exchange, tickers);
        const done = await this.o.ownership.release(exchange, tickers, this.term, state);
        for (const t of tickers) {
          this.setRole(exchange, t, 'standby');
          settled.add(key(exchange, t));
        }
        for (const t of done) this.releasedAt.set(key(exchange, t), this.clock.monotonic());
        out.set(exchange, new Set(done));
      }
    } catch (err) {
      // (Redis failed midway.) The tickers not released are ours again, whatever Redis says of them now: left
      // 'releasing', nobody would record them (the poll passes them by; the peer does not own them).
      this.o.logger.warn({ err: { message: (err as Error).message } }, 'releasing tickers failed; writing them on');
      for (const [exchange, tickers] of chosen) {
        const left = tickers.filter((t) => !settled.has(key(exchange, t)));
        if (left.length > 0) await this.resume(exchange, left, state);
      }
    }
    return out;
  }

  /** writer.drained(), bounded (drainTimeoutMs). */
  private drained(): Promise<void> {
    return this.o.writer.drained(this.o.drainTimeoutMs ?? 2 * this.o.ttlMs);
  }

  /**
   * Tickers whose release or offer failed midway: owned again in Redis when it still has them as ours (released or
   * offered: swapped back), and here in any case unless another term owns them — routed to the writer, their rows
   * buffered meanwhile written as produced (as `takeBack`). A Redis that cannot answer leaves them ours here: if a
   * peer took them meanwhile, the next poll sees it and stands this recorder down.
   */
  private async resume(
    exchange: ExchangeKey,
    tickers: readonly string[],
    state: 'released' | 'offered',
  ): Promise<void> {
    const owners = await this.o.ownership.owners(exchange).catch(() => undefined);
    const ours = owners === undefined ? tickers : tickers.filter((t) => owners.get(t)?.term === this.term);
    if (owners) {
      await this.o.ownership
        .swap(exchange, ours, { term: this.term, state }, { term: this.term, state: 'owned' })
        .catch(() => undefined);
    }
    for (const t of tickers) {
      this.released.delete(key(exchange, t));
      if (!ours.includes(t)) {
        this.setRole(exchange, t, 'standby');
        continue;
      }
      this.writeOn(exchange, t);
    }
  }

  /**
   * Tickers this term released or offered that no peer took: ours again (compare-and-set back to `owned`), their rows
   * buffered meanwhile written as produced (`writeOwnGap`: the RoutingSink's hand-back), routed to the writer again.
   */
  private async takeBack(
    exchange: ExchangeKey,
    tickers: readonly string[],
    state: 'released' | 'offered',
  ): Promise<void> {
    if (tickers.length === 0) return;
    const back = await this.o.ownership.swap(
      exchange,
      tickers,
      { term: this.term, state },
      { term: this.term, state: 'owned' },
    );
    for (const t of back) {
      this.releasedAt.delete(key(exchange, t));
      this.writeOn(exchange, t);
    }
    this.count(state === 'released' ? 'release' : 'offer', 'returned', back.length);
  }

  /**
   * A ticker this recorder keeps (a release or offer nobody took, or one undone): routed to the writer again, the rows
   * buffered meanwhile written as produced, its own gap included (the RoutingSink's hand-back).
   */
  private writeOn(exchange: ExchangeKey, ticker: string): void {
    this.o.routing.setOwner(exchange, ticker, true);
    this.setRole(exchange, ticker, 'owner');
    this.o.tickers.writeOwnGap(exchange, ticker);
  }

  /** Whether this recorder owns any ticker. */
  private owns(): boolean {
    for (const roles of this.roles.values()) for (const role of roles.values()) if (role === 'owner') return true;
    return false;
  }

  /** Reports a full spool (the writer's backpressure): a reason to hand the tickers to a peer. */
  onSpoolFull(full: boolean): void {
    this.spoolFull = full;
    if (full) void this.poll();
  }

  private async checkWriteTrouble(): Promise<void> {
    const troubleMs = this.o.writer.writeTroubleForMs();
    const trouble = this.spoolFull || (troubleMs !== undefined && troubleMs >= this.o.writeFailureMs);
    if (!trouble) {
      this.troubleHandled = false;
      return;
    }
    if (this.troubleHandled || this.stopping) return;
    this.troubleHandled = true;
    this.o.logger.warn({ spoolFull: this.spoolFull }, 'cannot write: handing the tickers to live peers');
    await this.releaseToPeers('released');
  }

  // ---------------------------------------------------------------------------------------------------- offers

  /**
   * The owner lost a ticker's book (decision 4). Resolves once it is decided: a live peer took the ticker (no gap),
   * or nobody did and the ticker wrote its own gap.
   */
  async onLost(exchange: ExchangeKey, ticker: string, bound: number, reason: string): Promise<'peer' | 'gap'> {
    const own = () => {
      this.writeOn(exchange, ticker);
      return 'gap' as const;
    };
    // A standby's loss is its buffer's (a gap row there); stopping or deposed: no offer.
    if (this.role(exchange, ticker) !== 'owner') return 'gap';
    if (this.stopping || this.fatal) return own();
    try {
      const live = await this.o.ownership.liveSets(exchange);
      if (!(await this.livePeer(live, ticker, this.aliveCache()))) return own();
      this.setRole(exchange, ticker, 'offering');
      const end = this.o.routing.endOf(exchange, ticker);
      this.o.routing.setOwner(exchange, ticker, false);
      await this.drained();
      if (end) await this.o.ownership.publishEnds(exchange, this.term, new Map([[ticker, JSON.stringify(end)]]));
      const offered = await this.o.ownership.release(exchange, [ticker], this.term, 'offered');
      if (offered.length === 0) return own();
      this.o.logger.info({ exchange, ticker, bound, reason }, 'lost the book: offered to a live peer');
      const deadline = this.clock.monotonic() + this.o.offerTimeoutMs;
      for (;;) {
        const owner = (await this.o.ownership.owners(exchange)).get(ticker);
        if (owner !== undefined && owner.term !== this.term) {
          this.setRole(exchange, ticker, 'standby');
          this.count('offer', 'handed', 1);
          return 'peer';
        }
        if (this.clock.monotonic() >= deadline) break;
        await this.clock.sleep(Math.min(100, this.o.offerTimeoutMs));
      }
      const back = await this.o.ownership.swap(
        exchange,
        [ticker],
        { term: this.term, state: 'offered' },
        { term: this.term, state: 'owned' },
      );
      if (back.length === 0) {
        // Taken at the last moment.
        this.setRole(exchange, ticker, 'standby');
        this.count('offer', 'handed', 1);
        return 'peer';
      }
      this.count('offer', 'returned', 1);
      return own();
    } catch (err) {
      this.o.logger.warn({ err: { message: (err as Error).message }, exchange, ticker }, 'offer failed: own gap');
      const owner = await this.o.ownership
        .owners(exchange)
        .then((m) => m.get(ticker))
        .catch(() => undefined);
      if (owner?.term === this.term && owner.state === 'offered') {
        await this.o.ownership
          .swap(exchange, [ticker], owner, { term: this.term, state: 'owned' })
          .catch(() => undefined);
      }
      return own();
    }
  }

  // ---------------------------------------------------------------------------------------------------- stop

  /** After the normal stop: no more polls, the live sets and the lease go (peers see this term dead at once). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    for (const exchange of this.o.exchanges) {
      await this.o.ownership.dropLive(exchange, this.term).catch(() => undefined);
    }
    await this.o.lease.stop();
  }

  // ---------------------------------------------------------------------------------------------------- helpers

  /**
   * The TTL wait and the kill of a dead term's inserts (decision 1, step 1), once per term: after them nothing of the
   * term can land, so the takeovers of its tickers on the other exchanges (one takeover per exchange, one after the
   * other) need neither again. Each waiting its own TTL made a dead owner of five exchanges take five TTLs to replace:
   * the last exchanges' splices no longer reached back into the standby buffer (handover gaps). A failure is not kept.
   */
  private endDeadTerm(term: number): Promise<void> {
    const known = this.deadTermsEnded.get(term);
    if (known) return known.ended;
    const entry = {
      ended: (async () => {
        await this.clock.sleep(this.o.ttlMs);
        await this.o.store.killWriter(term);
      })(),
      settled: false,
    };
    this.deadTermsEnded.set(term, entry);
    entry.ended.then(
      () => (entry.settled = true),
      () => this.deadTermsEnded.delete(term),
    );
    return entry.ended;
  }

  /**
   * Forgets the ended dead terms nothing can ask `endDeadTerm` for again: a takeover needs the kill only of an owner
   * value read from Redis (`owned` or `splicing` of the term) or of a claim of ours still to splice (`claimedFrom`),
   * and a dead term owns nothing new. `named`: the terms of every exchange's owner values, read this poll (after a term
   * went from them, a claim from it fails its compare-and-set). One still being ended is kept (a takeover awaits it).
   */
  private forgetEndedTerms(named: ReadonlySet<number>): void {
    const claimed = new Set<number>();
    for (const from of this.claimedFrom.values()) if (from !== null) claimed.add(from.term);
    for (const [term, { settled }] of this.deadTermsEnded) {
      if (settled && !named.has(term) && !claimed.has(term)) this.deadTermsEnded.delete(term);
    }
  }

  /** Publishes the ends of tickers about to be released (read before their routing left the writer). */
  private async publishEnds(exchange: ExchangeKey, tickers: readonly string[]): Promise<void> {
    const ends = new Map<string, string>();
    for (const t of tickers) {
      const end = this.released.get(key(exchange, t));
      if (end) ends.set(t, JSON.stringify(end));
      this.released.delete(key(exchange, t));
    }
    await this.o.ownership.publishEnds(exchange, this.term, ends);
  }

  /**
   * Where each ticker's stored series ends: what a releasing owner published (it produced that much, landed or
   * spooled: its spool replays it), else what landed (a dead owner: its unlanded rows are fenced off), with the landed
   * book's digest where the clock is the recorders' own (ControlStore.landedDigest).
   */
  private async endsOf(
    exchange: ExchangeKey,
    from: Owner | null,
    tickers: readonly string[],
  ): Promise<Map<string, LandedEnd>> {
    const out = new Map<string, LandedEnd>();
    if (from !== null && (from.state === 'released' || from.state === 'offered')) {
      for (const [t, text] of await this.o.ownership.publishedEnds(exchange, from.term, tickers)) {
        out.set(t, JSON.parse(text) as LandedEnd);
      }
    }
    const rest = tickers.filter((t) => !out.has(t));
    if (rest.length === 0) return out;
    const landed = await this.o.store.landedEnds(exchange, rest);
    const digestOf = this.o.store.landedDigest?.bind(this.o.store);
    const ofLanded = [...landed];
    // On a receive clock the split needs the landed book's digest (a few tickers at a time: four reads each).
    for (let i = 0; i < ofLanded.length; i += 8) {
      await Promise.all(
        ofLanded.slice(i, i + 8).map(async ([t, end]) => {
          const digest = digestOf && end.lastTs >= 0 ? await digestOf(exchange, t, end.lastTs) : undefined;
          out.set(t, digest === undefined ? end : { ...end, digest });
        }),
      );
    }
    return out;
  }

  private rolesOf(exchange: ExchangeKey): Map<string, Role> {
    let roles = this.roles.get(exchange);
    if (!roles) this.roles.set(exchange, (roles = new Map()));
    return roles;
  }

  private setRole(exchange: ExchangeKey, ticker: string, role: Role): void {
    const before = this.rolesOf(exchange).get(ticker);
    this.rolesOf(exchange).set(ticker, role);
    if (before === undefined && (role === 'owner' || role === 'standby')) {
      this.o.routing.setOwner(exchange, ticker, role === 'owner');
    }
  }

  /** Lease checks of other terms, memoised for one round. */
  private aliveCache(): (term: number) => Promise<boolean> {
    const known = new Map<number, Promise<boolean>>();
    return (term) => {
      if (term === this.term) return Promise.resolve(!this.fatal);
      let p = known.get(term);
      if (!p) known.set(term, (p = this.o.lease.alive(term)));
      return p;
    };
  }

  /** Some other alive term is live on the ticker. */
  private async livePeer(
    live: Map<number, Set<string>>,
    ticker: string,
    alive: (term: number) => Promise<boolean>,
  ): Promise<boolean> {
    for (const [term, set] of live) {
      if (term !== this.term && set.has(ticker) && (await alive(term))) return true;
    }
    return false;
  }

  private count(kind: HandoverKind, result: string, n: number): void {
    if (n > 0) this.metrics?.handovers.inc({ kind, result }, n);
  }

  private updateRoleGauge(): void {
    if (!this.metrics) return;
    for (const [exchange, roles] of this.roles) {
      let owner = 0;
      let standby = 0;
      for (const role of roles.values()) {
        if (role === 'owner' || role === 'releasing' || role === 'offering') owner++;
        else standby++;
      }
      this.metrics.role.set({ exchange, role: 'owner' }, owner);
      this.metrics.role.set({ exchange, role: 'standby' }, standby);
    }
  }
}

/** Groups (ticker, value) pairs by value: one claim (compare-and-set) per distinct value. */
function groupByValue(
  pairs: ReadonlyArray<[string, Owner | null]>,
): Map<string, { from: Owner | null; tickers: string[] }> {
  const out = new Map<string, { from: Owner | null; tickers: string[] }>();
  for (const [ticker, owner] of pairs) {
    const k = owner === null ? '' : `${owner.term}|${owner.state}`;
    let g = out.get(k);
    if (!g) out.set(k, (g = { from: owner, tickers: [] }));
    g.tickers.push(ticker);
  }
  return out;
}
