/**
 * One upstream WebSocket connection of a platform and the topics subscribed on it. The connection itself (fresh
 * handshake headers, signed where the platform needs it; ping frames or the platform's text ping; stall detection;
 * jittered exponential backoff) is `@depthgate/feeds`' FeedSocket, shared with the recorder; this batches topics into
 * the module's subscribe messages, paces what it sends to the platform's message limit, and hands the module's
 * session every message. When it ends, or an attempt to open it fails, every topic on it is resynced on the next
 * connection; the hub tells their subscribers.
 */
import { FeedSocket } from '@depthgate/feeds';
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
  /** Whether the next message may be handled now; false holds it (and reading) for a moment. */
  admit?: () => boolean;
  /** Waits for the platform's connection budget (new connections per second). */
  connectSlot: () => Promise<void>;
  /** The hub's side of the session context (everything but sending and this connection's topics). */
  hub: Omit<UpstreamContext, 'send' | 'topics' | 'topic' | 'reconnect' | 'logger'>;
  onOpen: (link: UpstreamConnection) => void;
  /** The connection ended, or an attempt to open one failed (`wasOpen` false): its topics are to be resynced. */
  onLost: (link: UpstreamConnection, reason: ResyncReason, wasOpen: boolean) => void;
  onMessage: () => void;
  onSent: () => void;
}

export class UpstreamConnection implements UpstreamLinkRef {
  /** Topics by key. */
  readonly topics = new Map<string, Topic>();
  private readonly socket: FeedSocket<ResyncReason>;
  private session: UpstreamSession | undefined;
  /** Counts connections: a session acts on the connection it was opened on only. */
  private epoch = 0;
  /** Messages waiting for the platform's message budget. */
  private readonly queue: string[] = [];
  private tokens: number;
  private lastRefill = Date.now();
  private drainTimer: NodeJS.Timeout | undefined;
  /**
   * Topics to drop, and to subscribe, in one batch at the end of this turn; subscribes wait while messages wait for the
   * budget (`flush`). A topic added and removed again before it was sent is never sent.
   */
  private readonly pendingSubscribe = new Set<Topic>();
  private readonly pendingUnsubscribe = new Set<Topic>();
  private flushScheduled = false;
  private flushing = false;
  private readonly log: Logger;

  constructor(
    private readonly o: UpstreamOptions,
    readonly id: number,
  ) {
    this.log = o.logger.child({ platform: o.platform, upstream: id });
    this.tokens = o.messagesPerSecond;
    const keepAlive = o.stream.keepAlive;
    this.socket = new FeedSocket<ResyncReason>({
      logger: this.log,
      handshake: (nowMs) => o.stream.handshake(nowMs),
      stallMs: o.stallMs,
      pingMs: o.pingMs,
      ...(keepAlive === 'ping' ? {} : { keepAliveText: keepAlive.text }),
      reconnectMinMs: o.reconnectMinMs,
      reconnectMaxMs: o.reconnectMaxMs,
      ...(o.admit ? { admit: o.admit } : {}),
      beforeConnect: o.connectSlot,
      causes: { disconnect: 'upstream_disconnect', stall: 'upstream_stall', unusable: 'upstream_error' },
      onOpen: () => this.opened(),
      onMessage: (text) => {
        o.onMessage();
        this.session?.onMessage(text);
      },
      onClose: (e) => this.closed(e),
    });
  }

  get open(): boolean {
    return this.socket.isOpen;
  }

  start(): void {
    this.socket.start();
  }

  private opened(): void {
    this.log.info({ topics: this.topics.size }, 'upstream connected');
    this.session = this.o.stream.openSession(this.context(++this.epoch));
    this.pendingSubscribe.clear();
    this.pendingUnsubscribe.clear();
    if (this.topics.size > 0) this.session.subscribe([...this.topics.values()]);
    this.o.onOpen(this);
  }

  private context(epoch: number): UpstreamContext {
    const current = () => this.epoch === epoch && this.socket.isOpen;
    return {
      ...this.o.hub,
      logger: this.log,
      send: (text) => {
        if (current()) this.enqueue(text);
      },
      topic: (channel, market) => this.topics.get(`${channel} ${market}`),
      topics: () => this.topics.values(),
      reconnect: (reason) => {
        if (current()) this.socket.replace(reason);
      },
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
    while (this.queue.length > 0 && this.tokens >= 1 && this.socket.send(this.queue[0] as string)) {
      this.queue.shift();
      this.tokens -= 1;
      this.o.onSent();
    }
    if (this.queue.length === 0 && this.pendingSubscribe.size > 0) this.flush();
    if (this.queue.length > 0 && this.socket.isOpen && !this.drainTimer) {
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
    this.pendingSubscribe.add(topic);
    this.scheduleFlush();
  }

  remove(topic: Topic): void {
    this.topics.delete(topic.key);
    topic.link = undefined;
    if (!this.pendingSubscribe.delete(topic)) this.pendingUnsubscribe.add(topic);
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
      this.flush();
    });
  }

  /**
   * Sends the pending unsubscribes, and the pending subscribes unless messages are still waiting for the platform's
   * budget: those go once the queue is empty (`drain` calls this again). Subscription churn (markets subscribed and
   * dropped faster than the budget sends) then gathers in the pending set, where an add and a remove of one topic
   * cancel out and the rest go in one batch, instead of growing the queue by a message per turn. Unsubscribes are not
   * held: they go in order as before (a topic dropped and added again is unsubscribed before it is subscribed, with
   * the queue's pacing between the two, which Gemini's resubscribe needs), and they free the platform's capacity.
   */
  private flush(): void {
    // Not from within a flush (the session's send drains the queue, which flushes): a session's unsubscribe is over
    // before its subscribe starts.
    if (this.flushing || !this.open || !this.session) return; // subscribed all at once when the connection opens
    this.flushing = true;
    try {
      if (this.pendingUnsubscribe.size > 0) {
        const unsub = [...this.pendingUnsubscribe];
        this.pendingUnsubscribe.clear();
        this.session.unsubscribe(unsub);
      }
      if (this.pendingSubscribe.size === 0 || this.queue.length > 0) return;
      const sub = [...this.pendingSubscribe];
      this.pendingSubscribe.clear();
      this.session.subscribe(sub);
    } finally {
      this.flushing = false;
    }
  }

  private closed(e: { code: number; reason: string; cause: ResyncReason; wasOpen: boolean; stopping: boolean }): void {
    this.session = undefined;
    this.epoch++;
    this.queue.length = 0;
    if (e.stopping) return;
    this.log.warn(
      { code: e.code, reason: e.reason, cause: e.cause, attempt: this.socket.attempts, topics: this.topics.size },
      'upstream closed',
    );
    this.o.onLost(this, e.cause, e.wasOpen);
  }

  /** Closes the connection and stops reconnecting. */
  stop(): Promise<void> {
    if (this.drainTimer) clearTimeout(this.drainTimer);
    return this.socket.stop('gateway stopping');
  }
}
