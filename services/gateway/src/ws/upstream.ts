/**
 * One upstream WebSocket connection of a platform and the topics subscribed on it: connects with fresh handshake
 * headers (signed where the platform needs it), hands the module's session every message, keeps it alive (ping
 * frames or the platform's text ping), notices stalls, paces what it sends to the platform's message limit, and
 * reconnects with jittered exponential backoff. When it ends, every topic on it is resynced on the next
 * connection; the hub tells their subscribers.
 */
import WebSocket from 'ws';
import type { Logger } from '@depthgate/service-kit';
import type { PlatformStream, ResyncReason, Topic, UpstreamContext, UpstreamLinkRef, UpstreamSession } from './types';

export interface UpstreamOptions {
  platform: string;
  stream: PlatformStream;
  logger: Logger;
  stallMs: number;
  pingMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  messagesPerSecond: number;
  /** Waits for the platform's connection budget (new connections per second). */
  connectSlot: () => Promise<void>;
  /** The hub's side of the session context (everything but sending and this connection's topics). */
  hub: Omit<UpstreamContext, 'send' | 'topics' | 'topic' | 'reconnect' | 'logger'>;
  onOpen: (link: UpstreamConnection) => void;
  /** The connection ended: its topics are to be resynced (`reason`). */
  onLost: (link: UpstreamConnection, reason: ResyncReason) => void;
  onMessage: () => void;
  onSent: () => void;
}

export class UpstreamConnection implements UpstreamLinkRef {
  /** Topics by key. */
  readonly topics = new Map<string, Topic>();
  open = false;
  private ws: WebSocket | undefined;
  private session: UpstreamSession | undefined;
  private attempt = 0;
  private openedAt = 0;
  private lastFrameAt = 0;
  private lastPingAt = 0;
  private lostReason: ResyncReason | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly watchdog: NodeJS.Timeout;
  private stopped = false;
  /** Messages waiting for the platform's message budget. */
  private readonly queue: string[] = [];
  private tokens: number;
  private lastRefill = Date.now();
  private drainTimer: NodeJS.Timeout | undefined;
  /** Topics to subscribe (or drop) in one batch at the end of this turn. */
  private pendingSubscribe: Topic[] = [];
  private pendingUnsubscribe: Topic[] = [];
  private flushScheduled = false;
  private readonly log: Logger;

  constructor(
    private readonly o: UpstreamOptions,
    readonly id: number,
  ) {
    this.log = o.logger.child({ platform: o.platform, upstream: id });
    this.tokens = o.messagesPerSecond;
    const tick = Math.max(20, Math.min(1000, Math.floor(Math.min(o.stallMs, o.pingMs) / 4)));
    this.watchdog = setInterval(() => this.check(), tick);
    this.watchdog.unref();
  }

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    await this.o.connectSlot();
    if (this.stopped) return;
    let url: string;
    let headers: Record<string, string> | undefined;
    try {
      ({ url, headers } = this.o.stream.handshake(Date.now()));
    } catch (err) {
      this.log.error({ err }, 'cannot build the upstream handshake');
      this.scheduleReconnect();
      return;
    }
    const ws = new WebSocket(url, {
      headers,
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
      maxPayload: 256 * 1024 * 1024,
      skipUTF8Validation: true,
    });
    this.ws = ws;
    this.lostReason = undefined;
    ws.on('open', () => {
      if (this.ws !== ws) return;
      this.open = true;
      this.openedAt = Date.now();
      this.lastFrameAt = this.openedAt;
      this.lastPingAt = this.openedAt;
      this.log.info({ topics: this.topics.size }, 'upstream connected');
      this.session = this.o.stream.openSession(this.context(ws));
      this.pendingSubscribe = [];
      this.pendingUnsubscribe = [];
      if (this.topics.size > 0) this.session.subscribe([...this.topics.values()]);
      this.o.onOpen(this);
    });
    ws.on('message', (data: Buffer | Buffer[] | ArrayBuffer) => {
      if (this.ws !== ws) return;
      this.lastFrameAt = Date.now();
      this.o.onMessage();
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.isBuffer(data)
          ? data.toString('utf8')
          : Buffer.from(data).toString('utf8');
      try {
        this.session?.onMessage(text);
      } catch (err) {
        this.log.error({ err, message: text.slice(0, 300) }, 'unusable upstream message; reconnecting');
        this.replace('upstream_error');
      }
    });
    // Liveness is what the upstream sends by itself (messages, heartbeats, its pings, answers to the platform's
    // text ping). A pong only answers our ping frame: it proves the connection, not the feed.
    ws.on('ping', () => {
      if (this.ws === ws) this.lastFrameAt = Date.now();
    });
    ws.on('unexpected-response', (_req, res) => {
      if (this.ws !== ws) return;
      this.log.warn({ status: res.statusCode }, 'upstream refused the handshake');
      res.resume();
      ws.terminate();
    });
    ws.on('error', (err) => {
      if (this.ws === ws) this.log.warn({ err: { message: err.message } }, 'upstream connection error');
    });
    ws.on('close', (code, reason) => {
      if (this.ws === ws) this.closed(code, reason.toString());
    });
  }

  private context(ws: WebSocket): UpstreamContext {
    return {
      ...this.o.hub,
      logger: this.log,
      send: (text) => {
        if (this.ws === ws) this.enqueue(text);
      },
      topic: (channel, market) => this.topics.get(`${channel} ${market}`),
      topics: () => this.topics.values(),
      reconnect: (reason) => this.replace(reason),
    };
  }

  private enqueue(text: string): void {
    this.queue.push(text);
    this.drain();
  }

  /** Sends what the budget allows now; the rest when tokens are back. */
  private drain(): void {
    const now = Date.now();
    const rate = this.o.messagesPerSecond;
    this.tokens = Math.min(rate, this.tokens + ((now - this.lastRefill) * rate) / 1000);
    this.lastRefill = now;
    const ws = this.ws;
    while (this.queue.length > 0 && this.tokens >= 1 && ws && ws.readyState === WebSocket.OPEN) {
      ws.send(this.queue.shift() as string);
      this.tokens -= 1;
      this.o.onSent();
    }
    if (this.queue.length > 0 && !this.drainTimer) {
      this.drainTimer = setTimeout(
        () => {
          this.drainTimer = undefined;
          this.drain();
        },
        Math.ceil(1000 / rate),
      );
    }
  }

  /** Adds topics; they are subscribed in one batch at the end of the current turn. */
  add(topic: Topic): void {
    this.topics.set(topic.key, topic);
    topic.link = this;
    this.pendingSubscribe.push(topic);
    this.scheduleFlush();
  }

  remove(topic: Topic): void {
    this.topics.delete(topic.key);
    topic.link = undefined;
    const pending = this.pendingSubscribe.indexOf(topic);
    if (pending >= 0) this.pendingSubscribe.splice(pending, 1);
    else this.pendingUnsubscribe.push(topic);
    this.scheduleFlush();
  }

  resync(topic: Topic): void {
    if (this.open && this.topics.get(topic.key) === topic) this.session?.resync(topic);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      if (!this.open || !this.session) return; // subscribed all at once when the connection opens
      const sub = this.pendingSubscribe.splice(0);
      const unsub = this.pendingUnsubscribe.splice(0);
      if (unsub.length > 0) this.session.unsubscribe(unsub);
      if (sub.length > 0) this.session.subscribe(sub);
    });
  }

  /** Closes the connection for `reason`; the close handler resyncs its topics and reconnects. */
  private replace(reason: ResyncReason): void {
    if (!this.ws) return;
    this.lostReason = reason;
    this.ws.terminate();
  }

  private closed(code: number, reason: string): void {
    const wasOpen = this.open;
    this.open = false;
    this.session = undefined;
    this.ws = undefined;
    this.queue.length = 0;
    const cause = this.lostReason ?? 'upstream_disconnect';
    if (this.stopped) return;
    if (wasOpen && Date.now() - this.openedAt > 60_000) this.attempt = 0;
    this.log.warn({ code, reason, cause, attempt: this.attempt, topics: this.topics.size }, 'upstream closed');
    this.o.onLost(this, cause);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const { reconnectMinMs: min, reconnectMaxMs: max } = this.o;
    const ceiling = Math.min(max, min * 2 ** Math.min(this.attempt, 20));
    const delay = min / 2 + Math.random() * Math.max(0, ceiling - min / 2);
    this.attempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
  }

  private check(): void {
    if (!this.open || !this.ws) return;
    const now = Date.now();
    if (now - this.lastFrameAt > this.o.stallMs) {
      this.log.warn({ silentMs: now - this.lastFrameAt }, 'upstream stalled: replacing the connection');
      this.replace('upstream_stall');
      return;
    }
    if (now - this.lastPingAt >= this.o.pingMs) {
      this.lastPingAt = now;
      const keepAlive = this.o.stream.keepAlive;
      if (keepAlive === 'ping') {
        try {
          this.ws.ping();
        } catch {
          /* closing */
        }
      } else {
        this.enqueue(keepAlive.text);
      }
    }
  }

  /** Closes the connection and stops reconnecting. */
  stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.drainTimer) clearTimeout(this.drainTimer);
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
      else ws.close(1000, 'gateway stopping');
    });
  }
}
