/**
 * One clock for one or several replay sockets (issue 25, item 2). Every replay socket plays inside a session: its own
 * (no `session` parameter) or one shared by the caller's sockets that name the same `session`, so that a cross-venue
 * strategy sees the events of all its venues in their true order.
 *
 * - Members join at the handshake. All members of a session have the same window, speed and clock (a socket asking
 *   for others is refused at its handshake); a session belongs to one caller (its key, or anonymous by client
 *   address), so another caller naming the same `session` gets a session of its own.
 * - The session starts when every member has its streams ready (subscribes settled, windows read) and no member has
 *   joined for the settle time; a socket that arrives after the start is refused (it would have missed the clock).
 * - One merge of every member's markets by the clock (mergeByClock: ties in join order), one pacing, each message sent
 *   on its member's socket. A member whose socket is slow holds the whole session (true order is the point); one that
 *   leaves is dropped from the merge and the others go on. The session ends when every member's streams are done (each
 *   socket then closes with 1000 "replay finished") or every member has gone.
 */
import { AppError } from '@depthgate/service-kit';
import { mergeByClock, paced, type ClockField, type MergedMessage, type NativeMessage, type PageWait } from '../engine';

/** A batch of messages is written (the sockets uncorked) at about this many bytes. */
const BATCH_BYTES = 64 * 1024;

/** What a session needs of a member socket. */
export interface SessionMember {
  /**
   * Sends one message, returning its size in bytes, or (the socket holds too much unsent) a promise of that size
   * that resolves when the socket can take more (backpressure).
   */
  send(text: string): number | Promise<number>;
  /** Holds what is sent from now on in the process, to be written together (`uncork`). */
  cork(): void;
  /** Writes what `cork` held. */
  uncork(): void;
  /** Whether the socket has gone (its messages are skipped from then on). */
  gone(): boolean;
  /** Every message of the member was sent. */
  finished(sent: number): void;
  /** The session's merge failed while reading this member's streams (recorded rows that contradict themselves). */
  failed(err: Error): void;
}

export interface SessionTerms {
  from: number;
  to: number;
  speed: number | 'max';
  clock: ClockField;
}

/** One market's messages as a session plays them. */
export interface SessionStream {
  messages: Iterator<NativeMessage | PageWait>;
  /**
   * Whether the client still wants the market's messages of the message's channel (NativeMessage.channel; absent:
   * always), asked again as each one is about to be sent: the merge reads each stream's next message ahead and the
   * pacing holds one until it is due, and once the market — or that channel of it — is unsubscribed those are
   * dropped, as the venue sends nothing of a subscription after its unsubscribe.
   */
  wanted?: (channel?: string) => boolean;
}

interface Joined {
  member: SessionMember;
  streams: SessionStream[] | undefined;
  left: boolean;
}

export class Session {
  private readonly members: Joined[] = [];
  /** Places held by sockets admitted at their handshake that have not yet joined or given up (`reserve`). */
  private readonly places = new Set<object>();
  private started = false;
  private settleTimer: NodeJS.Timeout | undefined;
  /** Aborted when every member has left: the pacing's wait ends, and the session with it. */
  private readonly halt = new AbortController();
  /** Ends the pacing's current wait early, if it is waiting (`wake`). */
  private wakeWait: (() => void) | undefined;

  constructor(
    readonly terms: SessionTerms,
    private readonly settleMs: number,
    private readonly onEnd: () => void,
  ) {}

  get isStarted(): boolean {
    return this.started;
  }

  /** Whether a socket of `terms` may join now: refused (AppError) once the session has started or on other terms. */
  admit(terms: SessionTerms): void {
    if (this.started)
      throw new AppError('invalid_request', 'this session has started: a socket must join it before its replay starts');
    const t = this.terms;
    if (t.from !== terms.from || t.to !== terms.to || t.speed !== terms.speed || t.clock !== terms.clock)
      throw new AppError(
        'invalid_request',
        'every socket of a session replays the same from, to, speed and clock: this one asks for others',
      );
  }

  /**
   * Admits a socket at its handshake (as `admit` says) and holds its place until `release`: the session is not
   * forgotten while a socket admitted to it is still upgrading.
   */
  reserve(terms: SessionTerms): object {
    this.admit(terms);
    const place = {};
    this.places.add(place);
    return place;
  }

  /**
   * The socket that held `place` has joined, or will not (its upgrade failed, or it failed before joining): a
   * session that has not started, with no member left and no place held, ends (a named one is forgotten).
   */
  release(place: object): void {
    if (this.places.delete(place)) this.endIfAbandoned();
  }

  /** Adds a member (as `admit` says). */
  join(member: SessionMember, terms: SessionTerms): void {
    this.admit(terms);
    this.members.push({ member, streams: undefined, left: false });
    this.arm();
  }

  /** A member's streams are ready (its subscribes settled, its windows read). */
  ready(member: SessionMember, streams: SessionStream[]): void {
    const m = this.members.find((j) => j.member === member);
    if (m) m.streams = streams;
    this.arm();
  }

  /** A member leaves before (or while) the session plays: it is no longer waited for. */
  leave(member: SessionMember): void {
    const m = this.members.find((j) => j.member === member);
    if (m) m.left = true;
    if (this.members.every((j) => j.left)) {
      this.halt.abort();
      this.endIfAbandoned();
    } else {
      this.arm();
      this.wake();
    }
  }

  /**
   * What a member wants may have changed (an unsubscribe, a member gone): the pacing looks again at the message it is
   * waiting for, and drops it at once when it is no longer wanted instead of waiting for its time — a socket with
   * nothing left to replay finishes then.
   */
  wake(): void {
    this.wakeWait?.();
  }

  /** Ends a session that has not started when every member has left and no handshake holds a place in it. */
  private endIfAbandoned(): void {
    if (!this.started && this.places.size === 0 && this.members.every((j) => j.left)) this.end();
  }

  private arm(): void {
    if (this.started) return;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.maybeStart(), this.settleMs);
  }

  private maybeStart(): void {
    this.settleTimer = undefined;
    if (this.started) return;
    const live = this.members.filter((j) => !j.left);
    if (live.length === 0 || live.some((j) => j.streams === undefined)) return;
    this.started = true;
    void this.run(live);
  }

  private end(): void {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.onEnd();
  }

  private async run(members: Joined[]): Promise<void> {
    // Every member's markets in one merge; `owner[i]` is the member of stream i, `wanted[i]` its client's wish.
    const owner: Joined[] = [];
    const wanted: SessionStream['wanted'][] = [];
    const streams: Iterator<NativeMessage | PageWait>[] = [];
    for (const j of members)
      for (const s of j.streams ?? []) {
        owner.push(j);
        wanted.push(s.wanted);
        // A member that has gone stops being read (its markets end).
        streams.push({
          next: () => (j.left || j.member.gone() ? { done: true, value: undefined } : s.messages.next()),
        });
      }
    const sent = new Map<Joined, number>(members.map((j) => [j, 0]));
    // Messages go out in batches: each socket corked while a batch is written (one write of many frames, not one
    // system call per message), uncorked when the batch is full, before any wait, and at the end; after a full batch
    // the loop yields to the event loop, so a replay at `max` never holds the process.
    const corked = new Set<Joined>();
    let batchBytes = 0;
    const flush = () => {
      for (const j of corked) j.member.uncork();
      corked.clear();
      batchBytes = 0;
    };
    /** Whether a message is still to be sent: its member there, its market (and channel) still subscribed. */
    const keep = (m: MergedMessage) => {
      const j = owner[m.source] as Joined;
      return !j.left && !j.member.gone() && wanted[m.source]?.(m.message.channel) !== false;
    };
    const messages = paced(mergeByClock(streams, this.terms.clock), {
      speed: this.terms.speed,
      from: this.terms.from,
      now: Date.now,
      idle: flush,
      signal: this.halt.signal,
      wanted: keep,
      sleep: (ms) =>
        new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.halt.signal.removeEventListener('abort', done);
            if (this.wakeWait === done) this.wakeWait = undefined;
            resolve();
          };
          const timer = setTimeout(done, ms);
          this.wakeWait = done;
          if (this.halt.signal.aborted) done();
          else this.halt.signal.addEventListener('abort', done);
        }),
    });
    try {
      for await (const m of messages) {
        const j = owner[m.source] as Joined;
        if (!keep(m)) continue;
        if (members.every((x) => x.left || x.member.gone())) break;
        if (!corked.has(j)) {
          j.member.cork();
          corked.add(j);
        }
        const size = j.member.send(m.message.text);
        if (typeof size === 'number') batchBytes += size;
        else {
          // The socket is full: what is held is written, then the session waits for it to drain.
          flush();
          await size;
        }
        sent.set(j, (sent.get(j) ?? 0) + 1);
        if (batchBytes >= BATCH_BYTES) {
          flush();
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      flush();
      for (const j of members) if (!j.left && !j.member.gone()) j.member.finished(sent.get(j) ?? 0);
    } catch (err) {
      flush();
      // A stream's rows contradict themselves (ReplayDataError): the session cannot go on in true order, and every
      // member still there is told why.
      for (const j of members) if (!j.left && !j.member.gone()) j.member.failed(err as Error);
    } finally {
      this.end();
    }
  }
}

/** The live sessions, by caller and name. */
export class Sessions {
  private readonly byKey = new Map<string, Session>();

  constructor(private readonly settleMs: number) {}

  get size(): number {
    return this.byKey.size;
  }

  /** The session `name` of `owner` (created on first use); without a name, a session of one. */
  session(owner: string, name: string | undefined, terms: SessionTerms): Session {
    if (name === undefined) return new Session(terms, this.settleMs, () => {});
    const key = `${owner}\u0000${name}`;
    let s = this.byKey.get(key);
    if (!s) {
      s = new Session(terms, this.settleMs, () => {
        if (this.byKey.get(key) === s) this.byKey.delete(key);
      });
      this.byKey.set(key, s);
    }
    return s;
  }
}
