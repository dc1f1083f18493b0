/**
 * The WebSocket proxy's vocabulary. A client connection speaks one platform's own protocol; each of its
 * subscriptions to one (channel, market) is a Subscriber of a Topic, the one upstream subscription of that
 * (platform, channel, market) the gateway holds for every client that wants it. A platform's StreamModule
 * (ws/<platform key>.ts) knows the protocol on both sides: how clients subscribe and what they receive, how the
 * gateway subscribes upstream and what the upstream sends, and what it keeps of each topic (a book, or the last
 * message) to give a client that joins late the platform's own snapshot. The hub (ws/hub.ts) does the rest once.
 */
import type { AnyDescriptor, ResolvedPlatform } from '@depthgate/platforms';
import type { Logger } from '@depthgate/service-kit';
import type { GatewayConfig } from '../config';
import type { Forwarder } from '../proxy/forwarder';
import type { UpstreamTarget } from '../platforms/types';

import type { Frame } from './frame';

/** What a client is sent: text, or a message framed once for every client that gets it. */
export type Outgoing = string | Buffer | Frame;
/** A message built per subscriber (Kalshi's `sid`/`seq`, Polymarket US's `requestId`); undefined sends nothing. */
export type PerSubscriber = (sub: Subscriber) => Outgoing | undefined;

/** Why a topic's book (or stream) is being resynced; the notice message names it. */
export const RESYNC_REASONS = [
  'upstream_disconnect',
  'upstream_stall',
  'sequence_gap',
  'book_mismatch',
  'upstream_error',
] as const;
export type ResyncReason = (typeof RESYNC_REASONS)[number];

/**
 * The gateway's notices to a subscriber about its topic's continuity (docs/websockets.md, "Resync, never silence"):
 * `stale` as soon as the topic's book (or stream) can no longer be trusted, for any reason (`ResyncReason`: an
 * upstream silent beyond the venue's heartbeat rhythm, lost, or a loss found); then the platform's reset form (its
 * fresh snapshot); then `resynced` once that has been delivered. Both name the reason.
 */
export const NOTICES = ['stale', 'resynced'] as const;
export type Notice = (typeof NOTICES)[number];

/** The upstream's refusal of a subscription: its own code where it has one, and its text. */
export interface UpstreamError {
  code?: number;
  message: string;
}

/** The client end of a subscription: where its messages go. */
export interface ClientLink {
  readonly id: number;
  send(data: Outgoing): void;
  readonly open: boolean;
}

export interface Subscriber<H = unknown> {
  readonly client: ClientLink;
  readonly topic: Topic;
  /** The module's per-subscription state on the client side (Kalshi: the client's `sid` and its `seq`). */
  readonly handle: H;
}

export type TopicStatus = 'pending' | 'live' | 'resyncing';

/** One upstream subscription: (channel, market) of a platform, shared by its subscribers. */
export class Topic<S = unknown> {
  status: TopicStatus = 'pending';
  readonly subscribers = new Set<Subscriber>();
  /** What the module keeps: the book, or the last message. */
  state: S | undefined;
  /** The module's upstream handle (Kalshi `sid`, Polymarket US `requestId`). */
  ref: unknown;
  /** The upstream connection it is subscribed on. */
  link: UpstreamLinkRef | undefined;
  lingerTimer: NodeJS.Timeout | undefined;
  /** Why the topic is resyncing (while `status` is `resyncing`): its subscribers' `resynced` notice names it. */
  resyncReason: ResyncReason | undefined;
  /** Applied book messages (the REST reconciliation compares only while nothing moved). */
  version = 0;
  /** When its kept book was last compared with the REST book (or tried to be). */
  reconciledAt = 0;

  constructor(
    readonly key: string,
    readonly channel: string,
    readonly market: string,
  ) {}
}

/** The upstream connection a topic lives on, as the hub sees it. */
export interface UpstreamLinkRef {
  readonly id: number;
  readonly open: boolean;
}

/** What a module's upstream session may do on its connection. */
export interface UpstreamContext {
  readonly logger: Logger;
  /** Sends a text frame upstream (paced to the platform's message limit). */
  send(text: string): void;
  /** The topic of (channel, market) on this connection, if the gateway holds it. */
  topic(channel: string, market: string): Topic | undefined;
  /** The topics subscribed on this connection. */
  topics(): Iterable<Topic>;
  /** A topic has its (fresh) snapshot: it is live; `out` goes to every subscriber (their book is replaced). */
  snapshot(topic: Topic, out: Outgoing | PerSubscriber): void;
  /** A live message of a topic for every subscriber. */
  deliver(topic: Topic, out: Outgoing | PerSubscriber): void;
  /** A topic without snapshots (ticker, trades) is live from now. */
  live(topic: Topic): void;
  /** The topic's book cannot be trusted (sequence gap, impossible change): resync it. */
  gap(topic: Topic, reason: ResyncReason): void;
  /** The upstream refused the topic (unknown market): its subscribers are told, in the platform's form. */
  fail(topic: Topic, error: UpstreamError): void;
  /** The connection is unusable (a message it cannot parse): it is replaced, every topic resynced. */
  reconnect(reason: ResyncReason): void;
}

export interface UpstreamSession {
  subscribe(topics: readonly Topic[]): void;
  unsubscribe(topics: readonly Topic[]): void;
  /** Asks the upstream for a fresh snapshot of one topic. */
  resync(topic: Topic): void;
  onMessage(text: string): void;
}

/** What a module's client session may do. */
export interface ClientContext<H> {
  readonly logger: Logger;
  /** The channel a `/ws/{platform}/{channel}` connection is limited to, or undefined. */
  readonly onlyChannel: string | undefined;
  send(text: Outgoing): void;
  /** Closes the connection with a close code of its own protocol or the gateway's (ws/close-codes.ts). */
  close(code: number, reason: string): void;
  /**
   * Takes `n` subscriptions from the key's limit, after checking the platform's upstream capacity for `topics` of
   * them (default `n`; a replacement asks the limit for fewer places than it makes topics); undefined when granted,
   * else why not (a sentence for the platform's error reply), taking nothing. Call before replying, then attach each.
   */
  reserve(n: number, topics?: number): Promise<string | undefined>;
  /** Attaches a reserved subscription: a live topic's snapshot follows at once (late joiner). */
  attach(channel: string, market: string, handle: H): Subscriber<H>;
  /**
   * Detaches subscriptions and gives their places back to the key's limit, but for up to `keep` of them, which the
   * caller passes on to subscriptions it attaches next (a replacement).
   */
  detach(subs: Iterable<Subscriber<H>>, keep?: number): void;
  /** Gives back places taken by `reserve` (or kept by `detach`) that no subscription holds. */
  release(n: number): void;
}

export interface ClientSession<H = unknown> {
  onMessage(text: string): void | Promise<void>;
  /** The gateway dropped a subscription (the upstream refused its market); the client was told. */
  dropped?(sub: Subscriber<H>): void;
}

/** Upstream limits of a platform, with their sources. */
export interface UpstreamLimits {
  /** Topics one upstream connection carries at most. */
  topicsPerConnection: number;
  /** Upstream connections at most (per gateway process). */
  maxConnections: number;
  /** New connections per second at most. */
  connectsPerSecond: number;
  /** Messages the gateway sends per second and connection at most. */
  messagesPerSecond: number;
  source: string;
}

/** The REST book a module compares its kept book with (platforms whose feeds carry no sequence numbers). */
/**
 * What one comparison of a kept book with the REST book found (`gateway_ws_reconciliations_total{result}`): the same
 * book; a difference two reads confirmed; nothing certain (the book moved, or the reads disagree); no read, for want
 * of a budget slot; a read that failed (an error status, a failed call, a body that does not parse).
 */
export type ReconcileResult = 'match' | 'mismatch' | 'inconclusive' | 'no_budget' | 'failed';

export interface Reconcile {
  /** Path (and query) of the REST book of a market, relative to the platform's main host. */
  path(market: string): string;
  /** The REST answer as [price, size] text per side. */
  parse(body: unknown): { bids: [string, string][]; asks: [string, string][] };
  /** The topic's kept book, as the same pairs. */
  kept(topic: Topic): { bids: [string, string][]; asks: [string, string][] } | undefined;
}

/** What a platform's stream is built from. */
interface StreamContext<D extends AnyDescriptor = AnyDescriptor> {
  platform: ResolvedPlatform<D>;
  config: GatewayConfig;
  logger: Logger;
}

/** A platform's stream, built once per gateway from its configuration. */
export interface PlatformStream<H = unknown> {
  /** Upstream URL and handshake headers (signed where the platform needs it), fresh for every connection. */
  handshake(nowMs: number): { url: string; headers?: Record<string, string> };
  /** What keeps the upstream alive and proves it: WebSocket pings, or a text message the upstream answers. */
  readonly keepAlive: 'ping' | { text: string; answer: string };
  /**
   * The heartbeat message the platform sends its clients by itself (Polymarket US, Gemini), besides the gateway's
   * pings; sent at the venue's rhythm (its descriptor's `feeds.main.heartbeat`).
   */
  readonly clientHeartbeat?: { message(): string };
  openSession(ctx: UpstreamContext): UpstreamSession;
  openClient(ctx: ClientContext<H>): ClientSession<H>;
  /** What a subscriber joining a live topic gets first: its snapshot, or the last message, or nothing. */
  join(topic: Topic, sub: Subscriber<H>): Outgoing | undefined;
  /**
   * A notice to a subscriber (`stale` when its topic's resync starts, `resynced` after the fresh snapshot), framed as
   * a message of the platform's protocol that its clients skip (a type they do not know).
   */
  notice(sub: Subscriber<H>, notice: Notice, reason: ResyncReason): Outgoing | undefined;
  /** A subscriber whose topic the upstream refused, told in the platform's form. */
  failed(sub: Subscriber<H>, error: UpstreamError): Outgoing | undefined;
  /** Why this platform's stream cannot be served (credentials it needs are not configured), else undefined. */
  readonly unavailable?: string;
  reconcile?: Reconcile;
}

/**
 * One message of a platform's protocol, for the AsyncAPI document: its name, what it is, an example (and more), and
 * the JSON Schema of what the gateway guarantees of it, where it says more than the example.
 */
interface MessageDoc {
  name: string;
  summary: string;
  example: unknown;
  more?: readonly unknown[];
  payload?: object;
}

/**
 * The AsyncAPI message of the gateway's notice in a platform's shape: `example` is a `stale` notice whose `notice`
 * and `reason` are nested at `path` (Kalshi's `msg`, Polymarket US's `depthgateNotice`); its `resynced` is the second
 * example; the schema names both notices and every reason.
 */
export function noticeDoc(name: string, example: Record<string, unknown>, path: readonly string[] = []): MessageDoc {
  const fields = {
    type: 'object',
    required: ['notice', 'reason'],
    properties: {
      notice: { type: 'string', enum: [...NOTICES] },
      reason: { type: 'string', enum: [...RESYNC_REASONS] },
    },
  };
  const as = (notice: Notice) => {
    const copy = structuredClone(example);
    let at: Record<string, unknown> = copy;
    for (const key of path) at = at[key] as Record<string, unknown>;
    at.notice = notice;
    return copy;
  };
  return {
    name,
    summary:
      'The gateway’s notice: `stale` at once when the subscription cannot be served as a continuous stream — it lost continuity, or its upstream has not been reached yet (`upstream_disconnect` before its first snapshot); `reason` says why — then the platform’s fresh (or first) snapshot, then `resynced` (same `reason`); clients that do not know it skip it',
    example: as('stale'),
    more: [as('resynced')],
    payload: path.reduceRight<object>(
      (inner, key) => ({ type: 'object', required: [key], properties: { [key]: inner } }),
      fields,
    ),
  };
}

/** The gateway's part of a platform's stream (one per platform with a feed), registered in ws/registry.ts. */
export interface StreamModule<D extends AnyDescriptor = AnyDescriptor> {
  /** What clients send and receive (AsyncAPI, `/asyncapi.json`); the notice and error forms included. */
  readonly docs: { send: readonly MessageDoc[]; receive: readonly MessageDoc[] };
  /** Channel names accepted in `/ws/{platform}/{channel}`. */
  readonly channels: readonly string[];
  /** The platform's own feed paths, accepted after `/ws/v1/{platform}` and on a host routed to the platform. */
  readonly paths: readonly string[];
  /** The platform's own header that may carry the caller's depthgate key (clients that can set no other). */
  readonly keyHeader?: string;
  readonly limits: UpstreamLimits;
  create(ctx: StreamContext<D>): PlatformStream;
}

/** REST for reconciliation: a GET on the platform's main target, through the forwarder's budget. */
export interface RestAccess {
  forwarder: Forwarder;
  target: UpstreamTarget;
}
