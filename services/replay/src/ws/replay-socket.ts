/**
 * One replay socket, the same for every venue (the venue's own part is its ReplayProtocol, protocol.ts):
 *
 * 1. Frames go through the protocol; replies (the venue's errors, pongs) are sent at once, a subscribe is handled in
 *    the order it came: each named market resolved as the history resolves it (stored name, `ticker_prefixes`) and
 *    checked against the caller's window (`from` not before its start), a market that cannot be replayed answered the
 *    venue's way (`refuse`), the subscribe's acks sent (`accept`).
 * 2. When no subscribe has come for the settle time (so a library that subscribes market by market, or waits for each
 *    ack before the next, gets all of them into the replay), each market's window is opened (source.ts: its book at
 *    `from` and first page of rows) and the socket's streams handed to its session (session.ts), which paces and
 *    sends them, each market's later pages read as the session reaches them (replayPaged) under the socket's one
 *    QueryScope, which lives as long as the replay. A subscribe after that is the protocol's (`frame(…, started =
 *    true)`: the venue's refusal).
 * 3. The end: 1000 "replay finished" when every message was sent; when reading failed, 1013 (try again later) for
 *    a time budget run out or ClickHouse unavailable, 1011 "replay failed" for anything else (read-failure.ts: what
 *    HTTP answers 503 and 500); 1001 at shutdown.
 */
import { jsonCarriesApiKey, KEY_IN_MESSAGE_CLOSE, unknownTicker, windowStart, type Caller } from '@depthgate/auth';
import { MessageRate, SerialInbox, slowConsumerClose, TOO_MANY_MESSAGES_CLOSE } from '@depthgate/feeds';
import type { HistoryStore, OrderBookQueries, QueryScope } from '@depthgate/history-store';
import type { Logger } from '@depthgate/service-kit';
import type { WebSocket } from 'ws';
import { replayPaged, sliced, type PagedWindow } from '../engine';
import type { ReplayMetrics } from '../metrics';
import { visibleTickers, windowRefusal } from '../request';
import { closeFor, readFailure } from '../read-failure';
import { openWindow } from '../source';
import type { MarketStream, ReplayProtocol, SubscribeRequest, VenueSocket } from './protocol';
import type { Session, SessionMember, SessionStream, SessionTerms } from './session';

export const CLOSE_FINISHED = { code: 1000, reason: 'replay finished' } as const;

/** Above this many unsent bytes the replay waits for the socket before sending more. */
const HIGH_WATER_BYTES = 1024 * 1024;
/** A client that stopped reading (REPLAY_WS_WRITE_TIMEOUT_MS): closed as the gateway's proxy closes a slow consumer. */
const SLOW_CONSUMER = slowConsumerClose('nothing read for too long');
/** Frames read ahead of the one being handled, at most (SerialInbox: then the socket stops reading). */
const MAX_PENDING_FRAMES = 64;
/**
 * Rows of a market the engine plays at most between two turns of the event loop, whatever they give (engine
 * slices.ts): a page of rows that give nothing (a book applied but not sent) never holds the process for long.
 */
const ROWS_PER_TURN = 1000;

/**
 * A market's messages as its socket replays them: its window played at most ROWS_PER_TURN rows per turn of the
 * event loop, no longer read once nobody wants any of it (`wanted`), and what was read ahead of a market or of a
 * channel of it the client has since unsubscribed then dropped (SessionStream).
 */
export function marketReplay(window: PagedWindow, stream: MarketStream): SessionStream {
  const messages = replayPaged(sliced(window, ROWS_PER_TURN), stream.encoder);
  const { wanted } = stream;
  if (!wanted) return { messages };
  return {
    messages: {
      next: () => {
        if (wanted()) return messages.next();
        messages.return(undefined);
        return { done: true, value: undefined };
      },
    },
    wanted,
  };
}

/**
 * The caller's subscriptions (channel × market) across its replay sockets: places taken (`reserve`: undefined when
 * granted, else why not, as a sentence) and given back (`release`); whatever a socket holds is given back when it
 * closes.
 */
export interface SubscriptionPlaces {
  reserve(n: number): Promise<string | undefined>;
  release(n: number): void;
}

export interface ReplaySocketDeps {
  ws: WebSocket;
  venue: VenueSocket;
  caller: Caller;
  /** This socket's places in its caller's subscription limit. */
  places: SubscriptionPlaces;
  session: Session;
  /** This socket's window, speed and clock (those of its session). */
  terms: SessionTerms;
  store: HistoryStore;
  queries: OrderBookQueries;
  metrics: ReplayMetrics;
  logger: Logger;
  queryTimeoutMs: number;
  /** Rows per read of a window (REPLAY_PAGE_ROWS). */
  pageRows: number;
  /** Quiet time after the last subscribe before the replay starts. */
  settleMs: number;
  /** The latest start, from the opening (REPLAY_SUBSCRIBE_TIMEOUT_MS); nothing replayable subscribed by then: 1008. */
  subscribeTimeoutMs: number;
  /** Client frames a socket may send per second, bursts of twice as many (more: closed 4429). */
  messagesPerSecond: number;
  /** A socket whose client reads nothing of what waits for this long is closed 4009 (REPLAY_WS_WRITE_TIMEOUT_MS). */
  writeTimeoutMs: number;
  /**
   * When the handshake was accepted (epoch ms): the moment the caller's window is computed from, once (packages/auth
   * `windowStart`: anonymous, the day before it), for every subscribe's check and every market's read, as the
   * history computes it once per request — not again when a subscribe comes or the replay starts.
   */
  acceptedAt: number;
}

export class ReplaySocket implements SessionMember {
  private readonly protocol: ReplayProtocol;
  private state: 'open' | 'reading' | 'ready' | 'done' = 'open';
  private subscribed = false;
  /**
   * Frames are handled one after another (a subscribe resolves its markets before the next frame is looked at); one
   * that fails unexpectedly ends the socket with 1011.
   */
  private readonly inbox: SerialInbox;
  private settleTimer: NodeJS.Timeout | undefined;
  /** Its client's frames per second (REPLAY_WS_MESSAGES_PER_SECOND): each subscribe costs a catalogue query. */
  private readonly rate: MessageRate;
  /**
   * REPLAY_SUBSCRIBE_TIMEOUT_MS after the socket opened: the replay starts then if anything replayable was subscribed
   * (subscribes that keep coming, each restarting the settle, hold it back no longer), else the socket is closed.
   */
  private startDeadline: NodeJS.Timeout | undefined;
  private scope: QueryScope | undefined;
  /** Subscriptions this socket holds of its caller's limit (`places`). */
  private holding = 0;
  /** Settles when the WebSocket has closed. */
  private readonly closed: Promise<void>;

  constructor(private readonly d: ReplaySocketDeps) {
    this.closed = new Promise((resolve) => d.ws.once('close', () => resolve()));
    this.protocol = d.venue.create();
    d.session.join(this, d.terms);
    this.startDeadline = setTimeout(() => {
      if (this.state !== 'open') return;
      if (this.subscribed) {
        if (this.settleTimer) clearTimeout(this.settleTimer);
        void this.read();
      } else this.end(1008, `no subscribe to a replayable market within ${Math.round(d.subscribeTimeoutMs / 1000)} s`);
    }, d.subscribeTimeoutMs);
    this.inbox = new SerialInbox(d.ws, MAX_PENDING_FRAMES, (err) => {
      this.d.logger.error({ err: { message: (err as Error).message } }, 'replay frame failed');
      this.end(1011, 'replay failed');
    });
    this.rate = new MessageRate(d.messagesPerSecond);
    d.ws.on('message', (data, isBinary) => {
      // Each subscribe is a query of the history's catalogue: a client sending faster than its rate is closed, as the
      // gateway's proxy closes one, before anything of the frame is looked at.
      if (!this.rate.take()) return this.end(TOO_MANY_MESSAGES_CLOSE.code, TOO_MANY_MESSAGES_CLOSE.reason);
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
      // Its markets go into the catalogue query and the venues' refusals quote them (and ids) back: a key stops
      // here, binary frames too, before anything of the frame is looked at.
      if (jsonCarriesApiKey(text)) return this.end(KEY_IN_MESSAGE_CLOSE.code, KEY_IN_MESSAGE_CLOSE.reason);
      this.inbox.push(() => this.frame(text, isBinary));
    });
    d.ws.on('close', () => {
      const wasRunning = this.state === 'ready';
      if (this.settleTimer) clearTimeout(this.settleTimer);
      if (this.startDeadline) clearTimeout(this.startDeadline);
      this.release();
      if (this.state !== 'done') {
        this.state = 'done';
        if (wasRunning || this.subscribed) this.count('cancelled');
      }
      d.session.leave(this);
    });
  }

  gone(): boolean {
    return this.state === 'done' || this.d.ws.readyState !== this.d.ws.OPEN;
  }

  send(text: string): number | Promise<number> {
    const { ws } = this.d;
    // Characters, not bytes: a batch's size need not be exact.
    const size = text.length;
    if (ws.bufferedAmount > HIGH_WATER_BYTES) return this.written(text).then(() => size);
    ws.send(text);
    return size;
  }

  /**
   * Sends `text`: settles once the socket has written it out, or has closed. A client that takes none of it for
   * REPLAY_WS_WRITE_TIMEOUT_MS is a reader that stopped: the socket is closed 4009 (its session goes on without it).
   */
  private written(text: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.d.logger.info({ exchange: this.d.venue.exchange }, 'replay socket closed: its client stopped reading');
        this.end(SLOW_CONSUMER.code, SLOW_CONSUMER.reason);
        resolve();
      }, this.d.writeTimeoutMs);
    });
    const sent = new Promise<void>((resolve) => this.d.ws.send(text, () => resolve()));
    return Promise.race([sent, this.closed, stalled]).finally(() => clearTimeout(timer));
  }

  /** The socket under the WebSocket (ws keeps it as `_socket`): corked around a batch of frames. */
  private get raw(): { cork(): void; uncork(): void } | undefined {
    return (this.d.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
  }

  cork(): void {
    this.raw?.cork();
  }

  uncork(): void {
    this.raw?.uncork();
  }

  finished(sent: number): void {
    this.d.metrics.messages.inc({ exchange: this.d.venue.exchange }, sent);
    this.release();
    this.state = 'done';
    this.count('complete');
    this.d.ws.close(CLOSE_FINISHED.code, CLOSE_FINISHED.reason);
  }

  failed(err: Error): void {
    this.fail(err, this.scope, 'reading the window');
  }

  /** A read failed: the socket ends with the close its failure calls for (read-failure.ts). */
  private fail(err: unknown, scope: QueryScope | undefined, what: string): void {
    if (this.state === 'done') {
      // The socket ended first (its client left, or it was closed): its reads were cancelled with it, no failure.
      this.d.logger.debug({ what }, 'WebSocket replay ended with its socket: its reads cancelled');
      return;
    }
    const failure = readFailure(err, scope);
    this.d.logger.warn(
      { err: { message: failure.message.slice(0, 300) }, failure: failure.kind, code: failure.code },
      'WebSocket replay failed',
    );
    const close = closeFor(failure, what);
    this.end(close.code, close.reason);
  }

  private count(outcome: 'complete' | 'cancelled' | 'cut'): void {
    this.d.metrics.replays.inc({ exchange: this.d.venue.exchange, outcome });
  }

  /** The replay's reads are over: its scope's timer stopped (a read still running is cancelled). */
  private release(): void {
    const scope = this.scope;
    this.scope = undefined;
    scope?.abort('cancelled');
    scope?.dispose();
  }

  /** The socket ends here: nothing more starts for it (a replay armed to start, a subscribe's reads). */
  private end(code: number, reason: string): void {
    if (this.state === 'done') return;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    if (this.startDeadline) clearTimeout(this.startDeadline);
    this.release();
    this.state = 'done';
    this.count('cut');
    this.d.ws.close(code, reason);
  }

  /**
   * Sends replies to the client's frames (the venue's errors, pongs, acks). With more than HIGH_WATER_BYTES unsent
   * after them, as Session's sends, the frame that asked for them settles only once the socket has written them out:
   * the frames after it wait, and with MAX_PENDING_FRAMES waiting the socket stops reading (SerialInbox). A client
   * that sends and never reads is slowed by TCP, not answered into the process's memory.
   */
  private reply(texts: readonly string[]): Promise<void> | undefined {
    const { ws } = this.d;
    for (let i = 0; i < texts.length && ws.readyState === ws.OPEN; i++) {
      const text = texts[i] as string;
      if (i < texts.length - 1 || ws.bufferedAmount + text.length <= HIGH_WATER_BYTES) ws.send(text);
      else return this.written(text);
    }
    return undefined;
  }

  private async frame(text: string, isBinary: boolean): Promise<void> {
    if (this.state === 'done') return;
    const f = this.protocol.frame(text, isBinary, this.state !== 'open');
    // An unsubscribe gives its places back, and what the session's pacing waits to send may no longer be wanted.
    this.giveBack();
    if (f.kind === 'reply') {
      this.d.session.wake();
      return this.reply(f.texts);
    }
    if (f.kind === 'close') return this.end(f.code, f.reason);
    if (this.state !== 'open') return;
    await this.subscribe(f.request);
  }

  private async subscribe(request: SubscribeRequest): Promise<void> {
    const { d } = this;
    const scope = d.store.scope(d.queryTimeoutMs);
    this.scope = scope;
    let names: Map<string, string | undefined>;
    try {
      // Every market of the frame in one catalogue query (protocols take at most MAX_MARKETS_PER_SUBSCRIBE).
      names = await visibleTickers(d.queries, scope, d.caller, d.venue.exchange, request.tickers);
    } catch (err) {
      // Resolving failed (ClickHouse cannot answer, or its time budget): the socket cannot go on.
      return this.fail(err, scope, 'resolving the markets');
    } finally {
      scope.dispose();
      this.scope = undefined;
    }
    if (this.state !== 'open') return;
    const tickers = new Set<string>();
    const refusals: string[] = [];
    for (const requested of request.tickers) {
      const ticker = names.get(requested);
      const refusal =
        ticker === undefined
          ? unknownTicker(d.venue.exchange, requested)
          : windowRefusal(d.caller, ticker, d.terms.from, d.acceptedAt);
      if (refusal === undefined) {
        tickers.add(ticker as string);
        continue;
      }
      const r = this.protocol.refuse(request, requested, refusal);
      if (r.close) return this.end(r.close.code, r.close.reason);
      if (r.reject) return this.reply(r.texts);
      refusals.push(...r.texts);
    }
    // The subscriptions it adds, from the caller's limit.
    const more = this.protocol.held(request, [...tickers]) - this.holding;
    if (more > 0) {
      const refused = await d.places.reserve(more);
      if (this.state !== 'open') {
        if (refused === undefined) d.places.release(more);
        return;
      }
      if (refused !== undefined) return this.reply([...refusals, ...this.protocol.limited(request, refused)]);
      this.holding += more;
    }
    const sent = this.reply([...refusals, ...this.protocol.accept(request, [...tickers])]);
    // (A subscribe that replaces one may hold fewer.)
    this.giveBack();
    // A subscribe that named nothing replayable (every market refused the venue's way) starts nothing.
    if (tickers.size > 0 || this.subscribed) {
      this.subscribed = true;
      if (this.settleTimer) clearTimeout(this.settleTimer);
      this.settleTimer = setTimeout(() => void this.read(), d.settleMs);
    }
    await sent;
  }

  /** Gives back the places of subscriptions the socket no longer holds. */
  private giveBack(): void {
    const held = this.protocol.held();
    if (held >= this.holding) return;
    this.d.places.release(this.holding - held);
    this.holding = held;
  }

  /** The subscribes have settled: every market's window read, the streams handed to the session. */
  private async read(): Promise<void> {
    // A subscribe still being resolved finishes first (its acks go out before the replay's first message).
    await this.inbox.settled;
    if (this.state !== 'open') return;
    this.state = 'reading';
    const { d } = this;
    const streams = this.protocol.streams();
    // One scope for the replay's reads: the opening ones within the time budget, each later page within it too
    // (once the replay has started the budget is each query's, `max_execution_time`); released when the socket ends.
    const scope = d.store.scope(d.queryTimeoutMs, { answerStarted: () => this.state === 'ready' });
    this.scope = scope;
    try {
      const replays: SessionStream[] = [];
      for (const s of streams) {
        const window = await openWindow(d.queries, scope, {
          exchange: d.venue.exchange,
          ticker: s.ticker,
          from: d.terms.from,
          to: d.terms.to,
          clock: d.terms.clock,
          pageRows: d.pageRows,
          visibleFrom: windowStart(d.caller, s.ticker, d.acceptedAt),
        });
        replays.push(marketReplay(window, s));
      }
      if ((this.state as string) === 'done') return;
      this.state = 'ready';
      d.session.ready(this, replays);
    } catch (err) {
      if ((this.state as string) === 'done') return;
      this.fail(err, scope, 'reading the window');
    }
  }
}
