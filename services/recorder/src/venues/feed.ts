/**
 * One WebSocket connection of a platform's feed and the tickers it records: connects (with fresh handshake
 * headers each time), subscribes, hands messages to the platform's session, pings, notices stalls, and reconnects
 * with jittered exponential backoff. When a connection ends, every ticker on it loses its book (a gap from the
 * connection's watermark) until its fresh snapshot arrives on the next connection.
 */
import WebSocket from 'ws';
import type { Logger } from '@depthgate/service-kit';
import type { RecorderMetrics } from '../metrics';
import type { GapReason } from '../rows';
import type { TickerRecorder } from '../ticker';
import type { SessionContext, VenueProtocol, VenueSession } from './types';

export interface FeedOptions {
  protocol: VenueProtocol;
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
  private ws: WebSocket | undefined;
  private session: VenueSession | undefined;
  private open = false;
  private attempt = 0;
  private openedAt = 0;
  private lastFrameAt = 0;
  private closeReason: GapReason | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly watchdog: NodeJS.Timeout;
  private lastPingAt = 0;
  private awaitingPongSince = 0;
  private stopped = false;
  private paused = false;
  private readonly log: Logger;

  constructor(
    private readonly o: FeedOptions,
    readonly id: number,
  ) {
    this.log = o.logger.child({ exchange: o.protocol.exchange, connection: id });
    this.watchdog = setInterval(() => this.check(), Math.max(50, Math.min(1000, Math.floor(o.stallTimeoutMs / 4))));
    this.watchdog.unref();
  }

  get isOpen(): boolean {
    return this.open;
  }

  /**
   * When the open connection last received a frame (data, heartbeat, control, a ping from the venue); 0 while it is
   * not open. Frames come in order, so everything the venue sent before that frame has arrived.
   */
  get heardAt(): number {
    return this.open ? this.lastFrameAt : 0;
  }

  start(): void {
    this.connect();
  }

  private connect(): void {
    if (this.stopped) return;
    const { protocol } = this.o;
    let headers: Record<string, string> | undefined;
    try {
      headers = protocol.handshakeHeaders(Date.now());
    } catch (err) {
      this.log.error({ err }, 'cannot sign the feed handshake');
      this.scheduleReconnect();
      return;
    }
    const ws = new WebSocket(protocol.feedUrl, {
      headers,
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
      maxPayload: 256 * 1024 * 1024,
      skipUTF8Validation: true,
    });
    this.ws = ws;
    this.closeReason = undefined;
    ws.on('open', () => {
      if (this.ws !== ws) return;
      this.open = true;
      this.openedAt = this.o.now();
      this.lastFrameAt = this.openedAt;
      this.awaitingPongSince = 0;
      this.o.metrics.connections.inc({ exchange: protocol.exchange });
      this.log.info({ url: protocol.feedUrl, tickers: this.tickers.size }, 'feed connected');
      this.session = protocol.createSession(this.context(ws));
      if (this.paused) ws.pause();
      if (this.tickers.size > 0) this.session.subscribe([...this.tickers]);
    });
    ws.on('message', (data: Buffer | Buffer[] | ArrayBuffer) => {
      if (this.ws !== ws) return;
      const now = this.o.now();
      this.lastFrameAt = now;
      this.o.metrics.messages.inc({ exchange: protocol.exchange });
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.isBuffer(data)
          ? data.toString('utf8')
          : Buffer.from(data).toString('utf8');
      try {
        this.session?.onMessage(text, now);
      } catch (err) {
        // A message we cannot use (malformed decimal, unexpected shape): the books it touched cannot be trusted.
        this.log.error({ err, message: text.slice(0, 300) }, 'unusable feed message; reconnecting');
        this.replace('disconnect');
      }
    });
    // Liveness is what the venue sends by itself: messages, heartbeats, its pings. A pong only answers our ping
    // (a server whose feed stalled may still answer pings): it proves the connection, not the feed.
    ws.on('ping', () => {
      if (this.ws === ws) this.lastFrameAt = this.o.now();
    });
    ws.on('pong', () => {
      if (this.ws === ws) this.awaitingPongSince = 0;
    });
    ws.on('error', (err) => {
      if (this.ws === ws) this.log.warn({ err: { message: err.message } }, 'feed connection error');
    });
    ws.on('close', (code, reason) => {
      if (this.ws === ws) this.closed(code, reason.toString());
    });
  }

  private context(ws: WebSocket): SessionContext {
    return {
      exchange: this.o.protocol.exchange,
      logger: this.log,
      send: (text) => {
        if (this.ws === ws && ws.readyState === WebSocket.OPEN) ws.send(text);
      },
      ticker: (t) => (this.tickers.has(t) ? this.o.recorder(t) : undefined),
      now: this.o.now,
      rejectTicker: (t, message) => {
        this.tickers.delete(t);
        this.o.rejectTicker(t, message);
      },
      reconnect: (reason) => this.replace(reason),
    };
  }

  /** Closes the connection for `reason`; the close handler records the losses and reconnects. */
  private replace(reason: GapReason): void {
    if (!this.ws) return;
    this.closeReason = reason;
    this.ws.terminate();
  }

  private closed(code: number, reason: string): void {
    const protocol = this.o.protocol;
    const wasOpen = this.open;
    this.open = false;
    if (wasOpen) this.o.metrics.connections.dec({ exchange: protocol.exchange });
    const watermark = this.session?.watermark() ?? -1;
    this.session?.close();
    this.session = undefined;
    this.ws = undefined;
    const gapReason = this.closeReason ?? 'disconnect';
    for (const t of this.tickers) {
      const rec = this.o.recorder(t);
      if (rec) rec.lose(gapReason, Math.max(rec.lastTs, watermark));
    }
    if (this.stopped) return;
    this.o.metrics.reconnects.inc({ exchange: protocol.exchange, reason: gapReason });
    // A connection that lived a while starts the backoff afresh.
    if (wasOpen && this.o.now() - this.openedAt > 60_000) this.attempt = 0;
    this.log.warn({ code, reason, cause: gapReason, attempt: this.attempt }, 'feed connection closed');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const ceiling = Math.min(this.o.reconnectMaxMs, this.o.reconnectMinMs * 2 ** Math.min(this.attempt, 20));
    // "Full jitter": many recorders (or shards) reconnecting after one outage do not come back in step.
    const delay = this.o.reconnectMinMs / 2 + Math.random() * (ceiling - this.o.reconnectMinMs / 2);
    this.attempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect();
    }, delay);
  }

  /** Stall detection and client pings. */
  private check(): void {
    if (!this.open || !this.ws || this.paused) return;
    const now = this.o.now();
    if (now - this.lastFrameAt > this.o.stallTimeoutMs) {
      this.log.warn({ silentMs: now - this.lastFrameAt }, 'feed stalled: replacing the connection');
      this.replace('stall');
      return;
    }
    if (this.awaitingPongSince > 0 && now - this.awaitingPongSince > this.o.stallTimeoutMs) {
      this.log.warn({ silentMs: now - this.awaitingPongSince }, 'no pong: the connection is dead; replacing it');
      this.replace('stall');
      return;
    }
    if (this.o.pingIntervalMs > 0 && now - this.lastPingAt >= this.o.pingIntervalMs) {
      this.lastPingAt = now;
      if (this.awaitingPongSince === 0) this.awaitingPongSince = now;
      try {
        this.ws.ping();
      } catch {
        /* closing */
      }
    }
  }

  add(tickers: readonly string[]): void {
    const fresh = tickers.filter((t) => !this.tickers.has(t));
    for (const t of fresh) this.tickers.add(t);
    if (this.open && fresh.length > 0) this.session?.subscribe(fresh);
  }

  remove(tickers: readonly string[]): void {
    const present = tickers.filter((t) => this.tickers.has(t));
    for (const t of present) this.tickers.delete(t);
    if (this.open && present.length > 0) this.session?.unsubscribe(present);
  }

  resync(tickers: readonly string[]): void {
    const present = tickers.filter((t) => this.tickers.has(t));
    if (this.open && present.length > 0) this.session?.resync(present);
  }

  pause(): void {
    this.paused = true;
    this.ws?.pause();
  }

  resume(): void {
    this.paused = false;
    this.lastFrameAt = this.o.now();
    this.awaitingPongSince = 0;
    this.ws?.resume();
  }

  /** Closes the connection and stops reconnecting. Tickers are left as they are (nothing more is recorded). */
  stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const ws = this.ws;
    if (!ws) return Promise.resolve();
    return new Promise((resolve) => {
      const done = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2000);
      ws.once('close', () => {
        clearTimeout(done);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, 'recorder stopping');
    });
  }
}
