/**
 * One WebSocket connection of a platform's feed and the tickers it records: the connection itself (fresh handshake
 * headers each time, pings, stall detection, jittered exponential backoff) is `@depthgate/feeds`' FeedSocket, shared
 * with the gateway's WebSocket proxy; this subscribes and hands messages to the platform's session. When a
 * connection ends, every ticker on it loses its book (a gap from the connection's watermark) until its fresh
 * snapshot arrives on the next connection, and its trades stop (a window, read back from REST once they flow again).
 */
import { FeedSocket } from '@depthgate/feeds';
import type { Logger } from '@depthgate/service-kit';
import type { RecorderMetrics } from '../metrics';
import type { GapReason } from '../rows';
import type { TickerRecorder } from '../ticker';
import type { RestClient } from './rest';
import type { SessionContext, VenueProtocol, VenueSession } from './types';

export interface FeedOptions {
  protocol: VenueProtocol;
  rest: RestClient;
  logger: Logger;
  metrics: RecorderMetrics;
  now: () => number;
  recorder: (ticker: string) => TickerRecorder | undefined;
  rejectTicker: (ticker: string, message: string) => void;
  stallTimeoutMs: number;
  pingIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export class FeedShard {
  readonly tickers = new Set<string>();
  private readonly socket: FeedSocket<GapReason>;
  private session: VenueSession | undefined;
  /** Counts connections: a session acts on the connection it was opened on only. */
  private epoch = 0;
  private readonly log: Logger;

  constructor(
    private readonly o: FeedOptions,
    readonly id: number,
  ) {
    this.log = o.logger.child({ exchange: o.protocol.exchange, connection: id });
    const { protocol } = o;
    this.socket = new FeedSocket<GapReason>({
      logger: this.log,
      handshake: (nowMs) => ({ url: protocol.feedUrl, headers: protocol.handshakeHeaders(nowMs) }),
      stallMs: o.stallTimeoutMs,
      pingMs: o.pingIntervalMs,
      pongTimeoutMs: o.stallTimeoutMs,
      ...(protocol.keepAliveText === undefined ? {} : { keepAliveText: protocol.keepAliveText }),
      reconnectMinMs: o.reconnectMinMs,
      reconnectMaxMs: o.reconnectMaxMs,
      now: o.now,
      causes: { disconnect: 'disconnect', stall: 'stall', unusable: 'disconnect' },
      onOpen: () => {
        o.metrics.connections.inc({ exchange: protocol.exchange });
        this.log.info({ url: protocol.feedUrl, tickers: this.tickers.size }, 'feed connected');
        this.session = protocol.createSession(this.context(++this.epoch));
        if (this.tickers.size > 0) this.session.subscribe([...this.tickers]);
      },
      onMessage: (text, receivedAt) => {
        o.metrics.messages.inc({ exchange: protocol.exchange });
        this.session?.onMessage(text, receivedAt);
      },
      onClose: (e) => this.closed(e),
    });
  }

  get isOpen(): boolean {
    return this.socket.isOpen;
  }

  /**
   * When the open connection last received a frame (data, heartbeat, control, a ping from the venue); 0 while it is
   * not open. Frames come in order, so everything the venue sent before that frame has arrived.
   */
  get heardAt(): number {
    return this.socket.heardAt;
  }

  start(): void {
    this.socket.start();
  }

  private context(epoch: number): SessionContext {
    const current = () => this.epoch === epoch && this.socket.isOpen;
    return {
      exchange: this.o.protocol.exchange,
      logger: this.log,
      send: (text) => {
        if (current()) this.socket.send(text);
      },
      ticker: (t) => (this.tickers.has(t) ? this.o.recorder(t) : undefined),
      now: this.o.now,
      rejectTicker: (t, message) => {
        this.tickers.delete(t);
        this.o.rejectTicker(t, message);
      },
      reconnect: (reason) => {
        if (current()) this.socket.replace(reason);
      },
      rest: this.o.rest,
      malformed: (problem, text) => {
        this.o.metrics.malformed.inc({ exchange: this.o.protocol.exchange });
        this.log.warn({ problem, text: text.slice(0, 200), length: text.length }, 'malformed venue message');
      },
      checksum: (result) => this.o.metrics.checksums.inc({ exchange: this.o.protocol.exchange, result }),
    };
  }

  /** Every ticker on the connection loses its book, from the connection's watermark; a reconnect follows. */
  private closed(e: { code: number; reason: string; cause: GapReason; wasOpen: boolean; stopping: boolean }): void {
    const protocol = this.o.protocol;
    if (e.wasOpen) this.o.metrics.connections.dec({ exchange: protocol.exchange });
    const watermark = this.session?.watermark() ?? -1;
    this.session?.close();
    this.session = undefined;
    this.epoch++;
    for (const t of this.tickers) {
      const rec = this.o.recorder(t);
      if (!rec) continue;
      rec.lose(e.cause, Math.max(rec.lastTs, watermark));
      rec.interruptTrades(watermark);
    }
    if (e.stopping) return;
    this.o.metrics.reconnects.inc({ exchange: protocol.exchange, reason: e.cause });
    this.log.warn(
      { code: e.code, reason: e.reason, cause: e.cause, attempt: this.socket.attempts },
      'feed connection closed',
    );
  }

  add(tickers: readonly string[]): void {
    const fresh = tickers.filter((t) => !this.tickers.has(t));
    for (const t of fresh) this.tickers.add(t);
    if (this.isOpen && fresh.length > 0) this.session?.subscribe(fresh);
  }

  remove(tickers: readonly string[]): void {
    const present = tickers.filter((t) => this.tickers.has(t));
    for (const t of present) this.tickers.delete(t);
    if (this.isOpen && present.length > 0) this.session?.unsubscribe(present);
  }

  resync(tickers: readonly string[]): void {
    const present = tickers.filter((t) => this.tickers.has(t));
    if (this.isOpen && present.length > 0) this.session?.resync(present);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Closes the connection and stops reconnecting. Tickers are left as they are (nothing more is recorded). */
  stop(): Promise<void> {
    return this.socket.stop('recorder stopping');
  }
}
