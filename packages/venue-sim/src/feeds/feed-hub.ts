import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { jsonObject } from '@depthgate/feeds';
import type { RecordedRequest } from '../http/types';

export const FEED_FAULT_KINDS = ['drop', 'disconnect', 'stall', 'reorder', 'corrupt_checksum'] as const;
/** Client messages a feed keeps for inspection. */
const RECEIVED_KEPT = 10_000;
const RECEIVED_KEPT_CHARS = 16 * 1024 * 1024;
export type FeedFaultKind = (typeof FEED_FAULT_KINDS)[number];
/** The faults that act on the books' next messages (the others act on connections). */
export type MessageFaultKind = 'drop' | 'reorder' | 'corrupt_checksum';

/**
 * What a feed's protocol lets its faults be: `reorder` only where no sequence number would reveal a swap (a feed
 * whose messages carry one, Kalshi's, refuses it), `corrupt_checksum` only where messages carry a checksum (the
 * Polymarket CLOB's `hash`). Every feed takes `drop`, `disconnect` and `stall`.
 */
export interface FeedFaultSupport {
  reorder?: boolean;
  checksum?: boolean;
}

/**
 * One message of the books to some connections: the same text for all, or per connection (undefined: none; several
 * where a connection has several subscriptions to the same thing, as Polymarket US's request ids).
 */
export type Outgoing = string | ((conn: FeedConnection) => string | readonly string[] | undefined);

/** A connection's texts of an outgoing message. */
function textsFor(message: Outgoing, conn: FeedConnection): readonly string[] {
  if (typeof message === 'string') return [message];
  const m = message(conn);
  return m === undefined ? [] : typeof m === 'string' ? [m] : m;
}

/** One client connection of a feed, with what it subscribed to and its stall state. */
export class FeedConnection {
  readonly tickers = new Set<string>();
  /** Whether the connection follows every ticker (a subscription of every market): faults of any ticker reach it. */
  everyTicker = false;
  stalledUntil = 0;
  readonly backlog: string[] = [];
  /** Per-platform state (Kalshi subscriptions, Polymarket US request ids, ...). */
  state: unknown;

  constructor(readonly ws: WebSocket) {}

  /**
   * The platform's handler of this connection's client messages. A message it cannot handle (a bug, or input it did
   * not expect) closes this connection with 1011; it never reaches the process as an uncaught exception (the
   * WebSocket library calls listeners from the socket's data event, where a throw would end every feed).
   */
  onMessage(handler: (data: RawData, isBinary: boolean) => void): void {
    this.ws.on('message', (data, isBinary) => {
      try {
        handler(data, isBinary);
      } catch {
        this.ws.close(1011, 'the simulator could not handle the message');
      }
    });
  }
}

interface PendingFault {
  id: string;
  kind: MessageFaultKind;
  ticker?: string;
  remaining: number;
  /**
   * reorder: the message held back, per connection, until that connection's next message about one of the same
   * tickers has gone out.
   */
  held?: { tickers: readonly string[]; messages: Map<FeedConnection, readonly string[]> };
}

/**
 * Connections of one feed and the faults injected into it. Messages go out in order; a stalled connection keeps
 * them in its backlog and sends them all when the stall ends (like a network that stops delivering for a while).
 *
 * The books' messages go through `publish` (or `shouldDrop`, for a feed that numbers messages per connection), where
 * the pending message faults act: `drop` (the message is not sent), `reorder` (it is held back and sent right after
 * the next message about the same ticker: the two are swapped) and `corrupt_checksum` (the platform asks
 * `takeFault` while it builds a message with a checksum and writes a wrong one).
 */
export class FeedHub {
  readonly wss: WebSocketServer;
  readonly connections = new Set<FeedConnection>();
  /** The fault kinds this feed takes (FeedFaultSupport). */
  readonly kinds: readonly FeedFaultKind[];
  private faults: PendingFault[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private heartbeat: NodeJS.Timeout | undefined;
  private nextId = 1;
  /** Messages not sent because of a drop fault. */
  dropped = 0;
  /** Messages swapped with the next by a reorder fault (one per swap, however many connections saw it). */
  reordered = 0;
  /** Messages sent with a wrong checksum by a corrupt_checksum fault. */
  corrupted = 0;
  /**
   * A connection whose unsent data exceeds this is cut, as exchanges drop consumers that cannot keep up; without it a
   * stuck client would grow the simulator's memory without bound.
   */
  maxBufferedBytes = 64 * 1024 * 1024;
  /** Connections cut for being too slow. */
  slowDisconnects = 0;
  /**
   * Subscriptions one connection may hold, as (channel, market) pairs with duplicates counted. On the feeds where
   * every subscribe adds one of its own (Kalshi's sids, Polymarket US's request ids), a client repeating a subscribe
   * would otherwise grow the simulator's memory, and the messages it sends per change, without bound. The default is
   * well above what the gateway holds on one connection (1,000 topics) and the recorder (1,000 markets × 2 Kalshi
   * channels, about twice that while a resync subscribes them again before dropping the old sids).
   */
  maxSubscriptions = 10_000;
  /** Subscribes refused for maxSubscriptions. */
  subscriptionRefusals = 0;

  /** Whether a connection holding `held` subscriptions may take `adding` more (a refusal is counted when not). */
  admits(held: number, adding: number): boolean {
    if (held + adding <= this.maxSubscriptions) return true;
    this.subscriptionRefusals++;
    return false;
  }
  /** The last text messages clients sent (at most RECEIVED_KEPT), oldest first: what reached the platform. */
  readonly received: string[] = [];
  private receivedChars = 0;

  /** Forgets the messages received so far. */
  clearReceived(): void {
    this.received.length = 0;
    this.receivedChars = 0;
  }

  constructor(
    private readonly clock: () => number,
    support: FeedFaultSupport = {},
  ) {
    this.wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1024 * 1024 });
    this.kinds = FEED_FAULT_KINDS.filter(
      (k) => (k !== 'reorder' || support.reorder === true) && (k !== 'corrupt_checksum' || support.checksum === true),
    );
  }

  /** Completes a verified handshake; `onOpen` gets the new connection. */
  accept(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    record: RecordedRequest,
    onOpen: (c: FeedConnection) => void,
  ): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      record.status = 101;
      const conn = new FeedConnection(ws);
      this.connections.add(conn);
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        const text = String(data);
        this.received.push(text);
        this.receivedChars += text.length;
        // At most RECEIVED_KEPT messages and RECEIVED_KEPT_CHARS characters (frames may be up to 1 MiB each).
        let drop = 0;
        while (
          this.received.length - drop > 1 &&
          (this.received.length - drop > RECEIVED_KEPT || this.receivedChars > RECEIVED_KEPT_CHARS)
        )
          this.receivedChars -= (this.received[drop++] as string).length;
        if (drop > 0) this.received.splice(0, drop);
      });
      ws.on('close', () => this.connections.delete(conn));
      ws.on('error', () => ws.terminate());
      onOpen(conn);
    });
  }

  /** Refuses a handshake with an HTTP status and body. */
  static refuse(
    socket: Duplex,
    record: RecordedRequest,
    status: number,
    body: string,
    contentType = 'application/json',
  ): void {
    record.status = status;
    const reason = status === 401 ? 'Unauthorized' : status === 404 ? 'Not Found' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }

  send(conn: FeedConnection, message: string): void {
    if (conn.stalledUntil !== 0) {
      conn.backlog.push(message);
      return;
    }
    if (conn.ws.readyState !== WebSocket.OPEN) return;
    if (conn.ws.bufferedAmount > this.maxBufferedBytes) {
      this.slowDisconnects++;
      conn.ws.terminate();
      return;
    }
    conn.ws.send(message);
  }

  /**
   * Consumes one pending fault of `kind` that applies to a message about `tickers` (a fault without a ticker applies
   * to every message); false when none is pending.
   */
  takeFault(kind: MessageFaultKind, tickers: string | readonly string[]): boolean {
    if (this.faults.length === 0) return false;
    const f = this.find(kind, tickers);
    if (!f) return false;
    if (--f.remaining <= 0) this.faults = this.faults.filter((x) => x !== f);
    if (kind === 'drop') this.dropped++;
    else if (kind === 'corrupt_checksum') this.corrupted++;
    return true;
  }

  /** Whether the next message about `ticker` is to be dropped (consumes one pending drop). */
  shouldDrop(ticker: string): boolean {
    return this.takeFault('drop', ticker);
  }

  /**
   * Sends one message of the books, about `tickers`, to `conns` through the pending faults: a drop drops it (false
   * is returned and `build` is not called), then as `deliver`. `build` runs at most once, before anything is sent.
   */
  publish(tickers: string | readonly string[], conns: Iterable<FeedConnection>, build: () => Outgoing): boolean {
    if (this.faults.length === 0) {
      this.sendAll(conns, build());
      return true;
    }
    if (this.takeFault('drop', tickers)) return false;
    this.deliver(tickers, conns, build());
    return true;
  }

  /**
   * Sends a message about `tickers` through a pending reorder (no drop): the first message about them is held back,
   * for each of its connections, and sent right after that connection's next message about one of the same tickers,
   * so each sees the two swapped.
   */
  deliver(tickers: string | readonly string[], conns: Iterable<FeedConnection>, message: Outgoing): void {
    if (this.faults.length === 0) return this.sendAll(conns, message);
    const list = typeof tickers === 'string' ? [tickers] : tickers;
    const holding = this.faults.filter((f) => f.held?.tickers.some((t) => list.includes(t)));
    const reorder = holding.length === 0 ? this.find('reorder', list) : undefined;
    if (reorder) {
      const messages = new Map<FeedConnection, readonly string[]>();
      for (const c of conns) {
        const texts = textsFor(message, c);
        if (texts.length > 0) messages.set(c, texts);
      }
      if (messages.size > 0) reorder.held = { tickers: list, messages };
      return;
    }
    for (const c of conns) {
      const texts = textsFor(message, c);
      if (texts.length === 0) continue;
      for (const m of texts) this.send(c, m);
      for (const f of holding) {
        const held = f.held?.messages.get(c);
        if (held === undefined) continue;
        f.held?.messages.delete(c);
        for (const m of held) this.send(c, m);
      }
    }
    for (const f of holding) {
      const messages = f.held?.messages as Map<FeedConnection, readonly string[]>;
      for (const c of messages.keys()) if (!this.connections.has(c)) messages.delete(c);
      if (messages.size > 0) continue;
      f.held = undefined;
      this.reordered++;
      if (--f.remaining <= 0) this.faults = this.faults.filter((x) => x !== f);
    }
  }

  private sendAll(conns: Iterable<FeedConnection>, message: Outgoing): void {
    if (typeof message === 'string') {
      for (const c of conns) this.send(c, message);
      return;
    }
    for (const c of conns) for (const m of textsFor(message, c)) this.send(c, m);
  }

  /** The first pending fault of `kind` for a message about `tickers` (not one holding a message back). */
  private find(kind: MessageFaultKind, tickers: string | readonly string[]): PendingFault | undefined {
    return this.faults.find(
      (f) =>
        f.kind === kind &&
        f.held === undefined &&
        (f.ticker === undefined || (typeof tickers === 'string' ? f.ticker === tickers : tickers.includes(f.ticker))),
    );
  }

  /** Adds a message fault: the next `count` messages (or swaps, for reorder) about `ticker`, or about any. */
  injectFault(kind: MessageFaultKind, count: number, ticker?: string): string {
    const id = `${kind}-${this.nextId++}`;
    this.faults.push({ id, kind, remaining: count, ...(ticker !== undefined ? { ticker } : {}) });
    return id;
  }

  injectDrop(count: number, ticker?: string): string {
    return this.injectFault('drop', count, ticker);
  }

  /** Messages (drop, corrupt_checksum) or swaps (reorder) still to come of the pending faults of `kind`. */
  pending(kind: MessageFaultKind): number {
    return this.faults.reduce((n, f) => n + (f.kind === kind ? f.remaining : 0), 0);
  }

  pendingDrops(): number {
    return this.pending('drop');
  }

  private select(ticker?: string): FeedConnection[] {
    return [...this.connections].filter((c) => ticker === undefined || c.everyTicker || c.tickers.has(ticker));
  }

  /** Cuts connections abruptly (no close frame); returns how many. */
  disconnect(ticker?: string): number {
    const list = this.select(ticker);
    for (const c of list) c.ws.terminate();
    return list.length;
  }

  /** Stops sending to connections for `ms` (the books keep moving); the backlog follows afterwards. */
  stall(ms: number, ticker?: string): number {
    const list = this.select(ticker);
    const until = this.clock() + ms;
    for (const c of list) c.stalledUntil = Math.max(c.stalledUntil, until);
    const t = setTimeout(() => {
      this.timers.delete(t);
      for (const c of list) {
        if (c.stalledUntil > this.clock() + 1) continue;
        c.stalledUntil = 0;
        const backlog = c.backlog.splice(0);
        if (c.ws.readyState === WebSocket.OPEN) for (const m of backlog) c.ws.send(m);
      }
    }, ms);
    this.timers.add(t);
    return list.length;
  }

  /** Forgets the pending message faults; a message a reorder holds back is sent now. */
  clearFaults(): void {
    const held = this.faults.flatMap((f) => [...(f.held?.messages ?? [])]);
    this.faults = [];
    for (const [c, texts] of held) for (const m of texts) this.send(c, m);
  }

  /** Runs `beat` for every unstalled connection every `intervalMs` (0 = never). */
  startHeartbeat(intervalMs: number, beat: (conn: FeedConnection) => void): void {
    if (intervalMs <= 0) return;
    this.heartbeat = setInterval(() => {
      for (const c of this.connections) if (c.stalledUntil === 0 && c.ws.readyState === WebSocket.OPEN) beat(c);
    }, intervalMs);
    this.heartbeat.unref();
  }

  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const c of this.connections) c.ws.terminate();
    this.connections.clear();
    this.wss.close();
  }
}

/** A frame's bytes as UTF-8 text. */
export function rawText(data: RawData): string {
  return Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.from(data as ArrayBuffer).toString();
}

/** Parses a client message as a JSON object, or undefined. */
export function parseJsonObject(data: RawData): Record<string, unknown> | undefined {
  return jsonObject(rawText(data));
}
