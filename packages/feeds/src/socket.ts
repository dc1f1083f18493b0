/**
 * One WebSocket connection to a platform's feed that does not give up: it connects with fresh handshake headers each
 * time (signed where the platform needs it), hands every text message on, proves the feed alive by what the feed
 * sends by itself, keeps the connection alive (ping frames, or the platform's text ping), replaces a connection that
 * stalls or carries a message its owner cannot use, and reconnects with jittered exponential backoff. Its owner (the
 * recorder's feed shard, the gateway's upstream connection) subscribes on `onOpen` and decides on `onClose` what a
 * lost connection cost. One mechanism for both, so that they cannot drift apart.
 */
import WebSocket from 'ws';

/** What the socket logs (pino's logger is one). */
export interface FeedLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface FeedSocketOptions<C extends string> {
  logger: FeedLogger;
  /**
   * The URL and headers of the next handshake; may throw (a signer that cannot sign): retried with backoff, as is a
   * URL the WebSocket library refuses (logged each time).
   */
  handshake(nowMs: number): { url: string; headers?: Record<string, string> };
  /**
   * No message, heartbeat or ping from the feed for this long: the connection is replaced (`causes.stall`). Its
   * owner derives it from the venue's heartbeat rhythm (@depthgate/platforms `feedLiveness`).
   */
  stallMs: number;
  /** The socket's own keep-alive every this long; 0: none. */
  pingMs: number;
  /** Sends this text as the keep-alive instead of a ping frame (the Polymarket CLOB's `PING`). */
  keepAliveText?: string;
  /**
   * With ping frames: a ping unanswered this long means the connection is dead (`causes.stall`). A pong proves the
   * connection, never the feed (a server whose feed stalled may still answer pings). Default: no such check.
   */
  pongTimeoutMs?: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /**
   * Asked before each message is handed over: false holds it, and every message after it, with reading paused, until
   * it answers true (asked again a millisecond later). The owner's bound on the work and memory one turn of the event
   * loop may take (one read of the socket can hold hundreds of messages). Held messages go with their connection;
   * while any are held the feed is not checked for stalls (it is not silent, it is not read).
   */
  admit?: () => boolean;
  /** Receive clock (default Date.now). */
  now?: () => number;
  /** Waits for the platform's connection budget before each attempt. */
  beforeConnect?: () => Promise<void>;
  /** The owner's names for why a connection ended. */
  causes: { disconnect: C; stall: C; unusable: C };
  onOpen(): void;
  /** A text message; throwing replaces the connection (`causes.unusable`). */
  onMessage(text: string, receivedAt: number): void;
  /**
   * The connection ended, or an attempt to open one failed (`wasOpen` false; also a handshake that could not be built
   * or a URL the library refused); `stopping` when by `stop()` (no reconnect follows).
   */
  onClose(e: { code: number; reason: string; cause: C; wasOpen: boolean; stopping: boolean }): void;
}

export class FeedSocket<C extends string> {
  private ws: WebSocket | undefined;
  private open = false;
  private attempt = 0;
  private openedAt = 0;
  /** Liveness: the last frame, or when checking resumed after a pause or a hold. */
  private lastFrameAt = 0;
  /** The last frame received (the handshake's answer counts as the first). */
  private lastHeardAt = 0;
  private lastPingAt = 0;
  private awaitingPongSince = 0;
  private cause: C | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly watchdog: NodeJS.Timeout;
  /** The watchdog's interval, and when it last ran (check; its creation before that). */
  private readonly tick: number;
  private lastCheckAt: number;
  private stopped = false;
  private paused = false;
  /** Messages received but not yet admitted, in order, with the connection they came on. */
  private held: Array<{ ws: WebSocket; text: string; at: number }> = [];
  private releaseTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly o: FeedSocketOptions<C>) {
    this.now = o.now ?? Date.now;
    // Every 100 ms at most: a stall is found within 100 ms of its threshold (the thresholds' margin is 500 ms,
    // @depthgate/platforms silence.ts); a check is two subtractions.
    const ticks = [o.stallMs, o.pingMs, o.pongTimeoutMs ?? 0].filter((ms) => ms > 0);
    this.tick = Math.max(20, Math.min(100, Math.floor(Math.min(...ticks) / 4)));
    this.lastCheckAt = this.now();
    this.watchdog = setInterval(() => this.check(), this.tick);
    this.watchdog.unref();
  }

  get isOpen(): boolean {
    return this.open;
  }

  /**
   * When the open connection last received a frame (data, heartbeat, control, a ping from the feed); 0 while it is
   * not open. Frames come in order, so everything the feed sent before that frame has arrived. Unlike the stall
   * clock, resuming after a pause or a hold does not move it: nothing was heard then.
   */
  get heardAt(): number {
    return this.open ? this.lastHeardAt : 0;
  }

  start(): void {
    void this.connect();
  }

  /** Never rejects (it runs unawaited): what fails before a connection exists is logged and retried with backoff. */
  private async connect(): Promise<void> {
    if (this.stopped) return;
    let ws: WebSocket;
    try {
      await this.o.beforeConnect?.();
      if (this.stopped) return;
      const handshake = this.o.handshake(Date.now());
      // Throws at once for a URL `ws` cannot use (not ws/wss/http/https, a fragment).
      ws = new WebSocket(handshake.url, {
        headers: handshake.headers,
        perMessageDeflate: false,
        handshakeTimeout: 15_000,
        maxPayload: 256 * 1024 * 1024,
        skipUTF8Validation: true,
      });
    } catch (err) {
      this.o.logger.error({ err }, 'cannot open a feed connection (its handshake or URL)');
      // A failed attempt, as one the feed refused: the owner hears of it (its subscribers may be waiting).
      const reason = (err as Error).message;
      this.o.onClose({ code: 1006, reason, cause: this.o.causes.disconnect, wasOpen: false, stopping: false });
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    this.cause = undefined;
    ws.on('open', () => {
      if (this.ws !== ws) return;
      this.open = true;
      this.openedAt = this.now();
      this.lastFrameAt = this.openedAt;
      this.lastHeardAt = this.openedAt;
      this.lastPingAt = this.openedAt;
      this.awaitingPongSince = 0;
      if (this.paused) ws.pause();
      this.o.onOpen();
    });
    ws.on('message', (data: Buffer | Buffer[] | ArrayBuffer) => {
      if (this.ws !== ws) return;
      const now = this.now();
      this.lastFrameAt = now;
      this.lastHeardAt = now;
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.isBuffer(data)
          ? data.toString('utf8')
          : Buffer.from(data).toString('utf8');
      if (this.held.length > 0 || (this.o.admit !== undefined && !this.o.admit())) {
        this.held.push({ ws, text, at: now });
        if (this.held.length === 1) {
          ws.pause();
          this.scheduleRelease();
        }
        return;
      }
      this.deliver(text, now);
    });
    ws.on('ping', () => {
      if (this.ws !== ws) return;
      this.lastFrameAt = this.now();
      this.lastHeardAt = this.lastFrameAt;
    });
    ws.on('pong', () => {
      if (this.ws === ws) this.awaitingPongSince = 0;
    });
    ws.on('unexpected-response', (_req, res) => {
      if (this.ws !== ws) return;
      this.o.logger.warn({ status: res.statusCode }, 'the feed refused the handshake');
      res.resume();
      ws.terminate();
    });
    ws.on('error', (err) => {
      if (this.ws === ws) this.o.logger.warn({ err: { message: err.message } }, 'feed connection error');
    });
    ws.on('close', (code, reason) => {
      if (this.ws === ws) this.closed(code, reason.toString());
    });
  }

  private deliver(text: string, at: number): void {
    try {
      this.o.onMessage(text, at);
    } catch (err) {
      // A message the owner cannot use (malformed decimal, unexpected shape): what it touched is in doubt.
      this.o.logger.error({ err, message: text.slice(0, 300) }, 'unusable feed message; reconnecting');
      this.replace(this.o.causes.unusable);
    }
  }

  private scheduleRelease(): void {
    this.releaseTimer ??= setTimeout(() => {
      this.releaseTimer = undefined;
      this.release();
    }, 1);
  }

  /** Hands over held messages while the owner admits them; reading resumes when none is left. */
  private release(): void {
    for (;;) {
      const next = this.held[0];
      if (next === undefined) break;
      if (next.ws !== this.ws) {
        this.held = [];
        break;
      }
      if (this.o.admit !== undefined && !this.o.admit()) {
        this.scheduleRelease();
        return;
      }
      this.held.shift();
      this.deliver(next.text, next.at);
    }
    // Liveness was not checked while messages were held (the feed was not silent; it was not read).
    this.lastFrameAt = this.now();
    if (!this.paused) this.ws?.resume();
  }

  /** Sends a text frame; false when the connection is not open. */
  send(text: string): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(text);
    return true;
  }

  /** Closes the connection for `cause`; the owner's onClose follows, then a reconnect. */
  replace(cause: C): void {
    if (!this.ws) return;
    this.cause = cause;
    this.ws.terminate();
  }

  private closed(code: number, reason: string): void {
    const wasOpen = this.open;
    this.open = false;
    this.ws = undefined;
    this.held = [];
    // A connection that lived a while starts the backoff afresh.
    if (wasOpen && this.now() - this.openedAt > 60_000) this.attempt = 0;
    const cause = this.cause ?? this.o.causes.disconnect;
    this.o.onClose({ code, reason, cause, wasOpen, stopping: this.stopped });
    this.scheduleReconnect();
  }

  /** The number of the next attempt since the last connection that lived (for logs). */
  get attempts(): number {
    return this.attempt;
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const { reconnectMinMs: min, reconnectMaxMs: max } = this.o;
    const ceiling = Math.min(max, min * 2 ** Math.min(this.attempt, 20));
    // "Full jitter": many connections reconnecting after one outage do not come back in step.
    const delay = min / 2 + Math.random() * Math.max(0, ceiling - min / 2);
    this.attempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
  }

  /**
   * Stall detection and keep-alives. A check that runs more than half the stall threshold after the previous one
   * finds the process itself was away (a long pause, a busy loop, the CPU given to others): that time, beyond the
   * watchdog's own interval, was not listened to, so it is not counted as silence (when the process comes back its
   * timers run before the frames that came meanwhile are read, and a late interval runs twice in a row). Silence still
   * grows by an interval at every check, so a process that late at every check still finds a stall, later.
   */
  private check(): void {
    const now = this.now();
    const since = now - this.lastCheckAt;
    this.lastCheckAt = now;
    if (!this.open || !this.ws || this.paused || this.held.length > 0) return;
    if (since > this.o.stallMs / 2) {
      const away = since - this.tick;
      this.lastFrameAt = Math.min(now, this.lastFrameAt + away);
      if (this.awaitingPongSince > 0) this.awaitingPongSince = Math.min(now, this.awaitingPongSince + away);
    }
    if (now - this.lastFrameAt > this.o.stallMs) {
      this.o.logger.warn({ silentMs: now - this.lastFrameAt }, 'feed stalled: replacing the connection');
      this.replace(this.o.causes.stall);
      return;
    }
    const pongTimeout = this.o.pongTimeoutMs;
    if (pongTimeout !== undefined && this.awaitingPongSince > 0 && now - this.awaitingPongSince > pongTimeout) {
      this.o.logger.warn({ silentMs: now - this.awaitingPongSince }, 'no pong: the connection is dead; replacing it');
      this.replace(this.o.causes.stall);
      return;
    }
    if (this.o.pingMs > 0 && now - this.lastPingAt >= this.o.pingMs) {
      this.lastPingAt = now;
      if (this.o.keepAliveText !== undefined) {
        this.send(this.o.keepAliveText);
        return;
      }
      if (this.awaitingPongSince === 0) this.awaitingPongSince = now;
      try {
        this.ws.ping();
      } catch {
        /* closing */
      }
    }
  }

  /** Stops reading (backpressure); liveness is not checked meanwhile. */
  pause(): void {
    this.paused = true;
    this.ws?.pause();
  }

  resume(): void {
    this.paused = false;
    this.lastFrameAt = this.now();
    this.awaitingPongSince = 0;
    if (this.held.length === 0) this.ws?.resume();
  }

  /** Closes the connection and stops reconnecting. */
  stop(reason = 'stopping'): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.held = [];
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const ws = this.ws;
    if (!ws) return Promise.resolve();
    return new Promise((resolve) => {
      const done = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2000);
      done.unref();
      ws.once('close', () => {
        clearTimeout(done);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, reason);
    });
  }
}
