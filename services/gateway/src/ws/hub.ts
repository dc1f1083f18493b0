/**
 * One platform's shared subscriptions: its topics (one upstream subscription per channel and market, however many
 * clients want it), the upstream connections they are spread over within the platform's limits, the fan-out of
 * every upstream message to the topic's subscribers, and resync: when a connection is lost, cannot be opened, or goes
 * silent beyond the venue's heartbeat rhythm, or a topic's book is in doubt (sequence gap, impossible change, a REST
 * book that disagrees), every subscriber gets the gateway's notice `stale` at once, then the platform's own fresh
 * snapshot, then `resynced` (both naming the reason); it is never left silently stale, nor silently waiting.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { canonicalDecimal, parseDecimal } from '@depthgate/feeds';
import type { Logger } from '@depthgate/service-kit';
import { Frame } from './frame';
import type { PlatformWsMetrics, WsMetrics } from './metrics';
import {
  Topic,
  type ClientLink,
  type Notice,
  type Outgoing,
  type PerSubscriber,
  type PlatformStream,
  type Reconcile,
  type ReconcileResult,
  type ResyncReason,
  type RestAccess,
  type Subscriber,
  type UpstreamContext,
  type UpstreamError,
  type UpstreamLimits,
} from './types';
import { UpstreamConnection } from './upstream';

export interface HubOptions {
  platform: string;
  title: string;
  stream: PlatformStream;
  limits: UpstreamLimits;
  logger: Logger;
  metrics: WsMetrics;
  /** Silence threshold of an upstream connection (the venue's heartbeat rhythm plus the margin, or the override). */
  stallMs: number;
  /** Keep-alive interval (ping frames, or the platform's text ping, which its answer proves). */
  pingMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  lingerMs: number;
  reconcileIntervalMs: number;
  reconcileGraceMs: number;
  /** The fraction of the platform's REST budget reconciliation may use (WS_RECONCILE_BUDGET). */
  reconcileBudget: number;
  /** The platform's REST book, for reconciliation. */
  rest?: RestAccess;
  /** Whether an upstream message may be handled now (see admitUpstream in client.ts). */
  admit?: () => boolean;
}

/** Each subscriber's client is told when the hub drops it (its topic failed). */
export interface SubscriberOwner {
  dropped(sub: Subscriber): void;
}

export class StreamHub {
  readonly topics = new Map<string, Topic>();
  private readonly links: UpstreamConnection[] = [];
  private readonly owners = new Map<Subscriber, SubscriberOwner>();
  private nextLinkId = 1;
  private connectTokens: number;
  private connectRefill = Date.now();
  private readonly reconcileTimer: NodeJS.Timeout | undefined;
  private reconcileCursor = 0;
  /** The reconciliation under way, if any (one at a time); stop cancels it (`stopping`) and waits for its end. */
  private reconciliation: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private stopped = false;
  private readonly log: Logger;
  private readonly m: PlatformWsMetrics;

  constructor(private readonly o: HubOptions) {
    this.log = o.logger.child({ platform: o.platform });
    this.connectTokens = o.limits.connectsPerSecond;
    this.m = o.metrics.forPlatform(o.platform);
    if (o.stream.reconcile && o.rest && o.reconcileIntervalMs > 0) {
      this.reconcileTimer = setInterval(() => {
        this.reconciliation ??= this.reconcileNext().finally(() => (this.reconciliation = undefined));
      }, 250);
      this.reconcileTimer.unref();
    }
  }

  /** Room for `n` more topics within the platform's connection and subscription limits. */
  room(): number {
    const { topicsPerConnection, maxConnections } = this.o.limits;
    return topicsPerConnection * maxConnections - this.topics.size;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Subscribers

  /**
   * Attaches a subscriber: the topic is created (and subscribed upstream) if it is new; a subscriber joining a live
   * topic gets the platform's snapshot (or last message) first, then the live messages.
   */
  attach<H>(client: ClientLink, owner: SubscriberOwner, channel: string, market: string, handle: H): Subscriber<H> {
    const key = `${channel} ${market}`;
    let topic = this.topics.get(key);
    if (!topic) {
      topic = new Topic(key, channel, market);
      this.topics.set(key, topic);
      this.m.upstreamSubscriptions.set(this.topics.size);
      this.place(topic);
    } else if (topic.lingerTimer) {
      clearTimeout(topic.lingerTimer);
      topic.lingerTimer = undefined;
    }
    const sub: Subscriber<H> = { client, topic, handle };
    topic.subscribers.add(sub);
    this.owners.set(sub, owner);
    this.m.subscriptions.inc();
    // Live: its snapshot (or last message) first. Resyncing: told as the others were; the fresh snapshot follows.
    const first =
      topic.status === 'live'
        ? this.o.stream.join(topic, sub)
        : topic.status === 'resyncing' && topic.resyncReason !== undefined
          ? this.o.stream.notice(sub, 'stale', topic.resyncReason)
          : undefined;
    if (first !== undefined) {
      client.send(first);
      this.m.messagesOut.inc();
    }
    return sub;
  }

  detach(sub: Subscriber): void {
    const topic = sub.topic;
    if (!topic.subscribers.delete(sub)) return;
    this.owners.delete(sub);
    this.m.subscriptions.dec();
    if (topic.subscribers.size > 0 || this.topics.get(topic.key) !== topic) return;
    if (this.o.lingerMs === 0) this.drop(topic);
    else {
      topic.lingerTimer = setTimeout(() => {
        topic.lingerTimer = undefined;
        if (topic.subscribers.size === 0) this.drop(topic);
      }, this.o.lingerMs);
      topic.lingerTimer.unref();
    }
  }

  private drop(topic: Topic): void {
    if (this.topics.get(topic.key) !== topic) return;
    this.topics.delete(topic.key);
    this.m.upstreamSubscriptions.set(this.topics.size);
    const link = topic.link as UpstreamConnection | undefined;
    link?.remove(topic);
    if (link && link.topics.size === 0) this.retire(link);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Upstream connections

  /** Puts a new topic on a connection with room, opening one within the platform's limits. */
  private place(topic: Topic): void {
    const { topicsPerConnection, maxConnections } = this.o.limits;
    let link = this.links.find((l) => l.topics.size < topicsPerConnection);
    if (!link && this.links.length < maxConnections) {
      link = this.openLink();
    }
    // reserve() refused what does not fit; a race between two reserves may still land here: share the fullest.
    (link ?? (this.links[0] as UpstreamConnection)).add(topic);
  }

  private openLink(): UpstreamConnection {
    const hub: Omit<UpstreamContext, 'send' | 'topics' | 'topic' | 'reconnect' | 'logger'> = {
      snapshot: (t, out) => this.snapshot(t, out),
      deliver: (t, out) => this.deliver(t, out),
      live: (t) => this.live(t),
      gap: (t, reason) => this.gap(t, reason),
      fail: (t, error) => this.fail(t, error),
    };
    const link = new UpstreamConnection(
      {
        platform: this.o.platform,
        stream: this.o.stream,
        logger: this.o.logger,
        stallMs: this.o.stallMs,
        pingMs: this.o.pingMs,
        reconnectMinMs: this.o.reconnectMinMs,
        reconnectMaxMs: this.o.reconnectMaxMs,
        ...(this.o.admit ? { admit: this.o.admit } : {}),
        messagesPerSecond: this.o.limits.messagesPerSecond,
        connectSlot: () => this.connectSlot(),
        hub,
        onOpen: () => this.m.upstreamConnections.inc(),
        onLost: (l, reason, wasOpen) => this.lost(l, reason, wasOpen),
        onMessage: () => this.m.messagesIn.inc(),
        onSent: () => this.m.upstreamMessagesOut.inc(),
      },
      this.nextLinkId++,
    );
    this.links.push(link);
    link.start();
    return link;
  }

  private retire(link: UpstreamConnection): void {
    const i = this.links.indexOf(link);
    if (i >= 0) this.links.splice(i, 1);
    if (link.open) this.m.upstreamConnections.dec();
    void link.stop();
  }

  /** The platform's budget of new connections (a token bucket of `connectsPerSecond`). */
  private async connectSlot(): Promise<void> {
    const rate = this.o.limits.connectsPerSecond;
    for (;;) {
      const now = Date.now();
      this.connectTokens = Math.min(rate, this.connectTokens + ((now - this.connectRefill) * rate) / 1000);
      this.connectRefill = now;
      if (this.connectTokens >= 1) {
        this.connectTokens -= 1;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.connectTokens) * 1000) / rate)));
    }
  }

  /**
   * A connection ended, or an attempt to open one failed (an upstream unreachable, a refused handshake): its topics
   * wait for their (fresh) snapshot on the next one; their subscribers are told.
   */
  private lost(link: UpstreamConnection, reason: ResyncReason, wasOpen: boolean): void {
    if (wasOpen) this.m.upstreamConnections.dec();
    for (const topic of link.topics.values()) this.resyncing(topic, reason);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // What the modules report

  /**
   * A topic's book (or stream) lost continuity: its subscribers are told `stale` at once (once per resync). A pending
   * topic's too: its first snapshot is held up (its connection failed, or never came up), and its subscribers would
   * otherwise wait in silence for as long as the upstream is away; `resynced` follows that first snapshot.
   */
  private resyncing(topic: Topic, reason: ResyncReason): void {
    if (topic.status === 'resyncing') return; // its subscribers were told
    topic.status = 'resyncing';
    topic.resyncReason = reason;
    this.m.resyncs.inc({ reason });
    this.notify(topic, 'stale', reason);
  }

  private notify(topic: Topic, notice: Notice, reason: ResyncReason): void {
    for (const sub of topic.subscribers) {
      const m = this.o.stream.notice(sub, notice, reason);
      if (m !== undefined) {
        sub.client.send(m);
        this.m.messagesOut.inc();
      }
    }
  }

  /**
   * A topic is live (again): subscribed, for a topic without snapshots (ticker, trades), or its (fresh) snapshot
   * delivered. After a resync its subscribers are told `resynced`.
   */
  live(topic: Topic): void {
    const reason = topic.status === 'resyncing' ? topic.resyncReason : undefined;
    topic.status = 'live';
    topic.resyncReason = undefined;
    if (reason !== undefined) this.notify(topic, 'resynced', reason);
  }

  gap(topic: Topic, reason: ResyncReason): void {
    if (topic.status === 'resyncing') return;
    this.log.warn({ topic: topic.key, reason }, 'resyncing a topic');
    this.resyncing(topic, reason);
    (topic.link as UpstreamConnection | undefined)?.resync(topic);
  }

  /** A topic's (fresh) snapshot: every subscriber's book is replaced, then the topic is live. */
  snapshot(topic: Topic, out: Outgoing | PerSubscriber): void {
    topic.version++;
    this.deliver(topic, out);
    this.live(topic);
  }

  deliver(topic: Topic, out: Outgoing | PerSubscriber): void {
    if (topic.subscribers.size === 0) return;
    let sent = 0;
    if (typeof out === 'function') {
      for (const sub of topic.subscribers) {
        const m = out(sub);
        if (m === undefined) continue;
        sub.client.send(m);
        sent++;
      }
    } else {
      // Framed once for every client.
      const frame = out instanceof Frame ? out : Frame.text(out);
      for (const sub of topic.subscribers) sub.client.send(frame);
      sent = topic.subscribers.size;
    }
    this.m.messagesOut.inc(sent);
  }

  fail(topic: Topic, error: UpstreamError): void {
    this.log.warn({ topic: topic.key, error }, 'the upstream refused a subscription');
    for (const sub of [...topic.subscribers]) {
      const m = this.o.stream.failed(sub, error);
      if (m !== undefined) sub.client.send(m);
      const owner = this.owners.get(sub);
      this.detach(sub);
      owner?.dropped(sub);
    }
    this.drop(topic);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // REST reconciliation (feeds without sequence numbers)

  /**
   * One live topic at a time, each at most once every WS_RECONCILE_INTERVAL_MS whatever the outcome (a read the
   * budget refused or the upstream failed is tried again an interval later, not at the next tick): the kept book is
   * compared with the REST book. Each read takes a slot of WS_RECONCILE_BUDGET of the platform's budget before its
   * slot of the whole (UpstreamBudgets.share), so callers always keep the rest; with more books than that share reads
   * in an interval, each is compared less often. A difference counts only when it is certain: the topic received
   * nothing during either of two REST reads WS_RECONCILE_GRACE_MS apart, both reads agree, and the kept book differs
   * from them. Then something was lost.
   */
  private async reconcileNext(): Promise<void> {
    if (this.stopped) return;
    const reconcile = this.o.stream.reconcile;
    const rest = this.o.rest;
    if (!reconcile || !rest) return;
    const now = Date.now();
    const due = [...this.topics.values()].filter(
      (t) => t.status === 'live' && now - t.reconciledAt >= this.o.reconcileIntervalMs && reconcile.kept(t),
    );
    if (due.length === 0) return;
    const topic = due[this.reconcileCursor++ % due.length] as Topic;
    topic.reconciledAt = now;
    try {
      const result = await this.compare(topic, reconcile, rest);
      this.m.reconciliations.inc({ result });
      if (result === 'mismatch') this.gap(topic, 'book_mismatch');
    } catch (err) {
      if (this.stopped) return; // cancelled by stop: no outcome
      this.m.reconciliations.inc({ result: 'failed' });
      this.log.debug({ err: { message: (err as Error).message }, topic: topic.key }, 'REST book failed');
    }
  }

  /** One comparison of a topic's kept book with the REST book (throws when a read fails, or stop cancels it). */
  private async compare(topic: Topic, reconcile: Reconcile, rest: RestAccess): Promise<ReconcileResult> {
    const { signal } = this.stopping;
    /** The REST book, normalised; or why there is none to compare: no budget slot, the topic moved meanwhile. */
    const read = async (): Promise<{ book: string } | { result: ReconcileResult }> => {
      // Reconciliation's share of the budget first: its slot is waited for (up to an interval), before the read.
      if (!(await rest.forwarder.share(rest.target, this.o.reconcileBudget, this.o.reconcileIntervalMs, signal)))
        return { result: 'no_budget' };
      const v = topic.version;
      const body = await rest.forwarder.readJson(rest.target, ...splitPath(reconcile.path(topic.market)), signal);
      if (body === undefined) return { result: 'no_budget' };
      if (topic.version !== v || topic.status !== 'live') return { result: 'inconclusive' };
      return { book: JSON.stringify(normalise(reconcile.parse(body))) };
    };
    const kept = () => JSON.stringify(normalise(reconcile.kept(topic) ?? { bids: [], asks: [] }));
    const first = await read();
    if ('result' in first) return first.result;
    const keptAtFirst = kept();
    if (first.book === keptAtFirst) return 'match';
    const version = topic.version;
    await delay(this.o.reconcileGraceMs, undefined, { signal });
    const second = await read();
    if ('result' in second) return second.result;
    if (topic.version !== version) return 'inconclusive';
    return second.book === first.book && kept() === keptAtFirst ? 'mismatch' : 'inconclusive';
  }

  /** Closes the upstream connections; a reconciliation under way is cancelled (its waits and read) and waited for. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    for (const t of this.topics.values()) if (t.lingerTimer) clearTimeout(t.lingerTimer);
    await Promise.all([...this.links.map((l) => l.stop()), this.reconciliation]);
  }
}

function splitPath(pathAndQuery: string): [string, string] {
  const q = pathAndQuery.indexOf('?');
  return q < 0 ? [pathAndQuery, ''] : [pathAndQuery.slice(0, q), pathAndQuery.slice(q + 1)];
}

/** Levels as exact values in price order, so that equal books compare equal whatever their spelling. */
function normalise(book: { bids: [string, string][]; asks: [string, string][] }) {
  const side = (levels: [string, string][], desc: boolean) =>
    levels
      .map(([p, q]) => [canonical(p), canonical(q)] as const)
      .filter(([, q]) => q !== '0')
      .sort((a, b) => compareDecimal(a[0], b[0]) * (desc ? -1 : 1));
  return { bids: side(book.bids, true), asks: side(book.asks, false) };
}

function canonical(text: string): string {
  return canonicalDecimal(text);
}

function compareDecimal(a: string, b: string): number {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
