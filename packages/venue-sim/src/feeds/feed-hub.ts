import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import type { RecordedRequest } from '../http/types';

export const FEED_FAULT_KINDS = ['drop', 'disconnect', 'stall'] as const;
/** Client messages a feed keeps for inspection. */
const RECEIVED_KEPT = 10_000;
export type FeedFaultKind = (typeof FEED_FAULT_KINDS)[number];

/** One client connection of a feed, with what it subscribed to and its stall state. */
export class FeedConnection {
  readonly tickers = new Set<string>();
  stalledUntil = 0;
  readonly backlog: string[] = [];
  /** Per-platform state (Kalshi subscriptions, Polymarket US request ids, ...). */
  state: unknown;

  constructor(readonly ws: WebSocket) {}
}

interface PendingDrop {
  id: string;
  ticker?: string;
  remaining: number;
}

/**
 * Connections of one feed and the faults injected into it. Messages go out in order; a stalled connection keeps
 * them in its backlog and sends them all when the stall ends (like a network that stops delivering for a while).
 */
export class FeedHub {
  readonly wss: WebSocketServer;
  readonly connections = new Set<FeedConnection>();
  private drops: PendingDrop[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private heartbeat: NodeJS.Timeout | undefined;
  private nextId = 1;
  /** Messages not sent because of a drop fault. */
  dropped = 0;
  /**
   * A connection whose unsent data exceeds this is cut, as exchanges drop consumers that cannot keep up; without it a
   * stuck client would grow the simulator's memory without bound.
   */
  maxBufferedBytes = 64 * 1024 * 1024;
  /** Connections cut for being too slow. */
  slowDisconnects = 0;
  /** The last text messages clients sent (at most RECEIVED_KEPT), oldest first: what reached the platform. */
  readonly received: string[] = [];

  constructor(private readonly clock: () => number) {
    this.wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1024 * 1024 });
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
        this.received.push(String(data));
        if (this.received.length > RECEIVED_KEPT) this.received.splice(0, this.received.length - RECEIVED_KEPT);
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

  /** Whether the next message about `ticker` is to be dropped (consumes one pending drop). */
  shouldDrop(ticker: string): boolean {
    if (this.drops.length === 0) return false;
    for (const d of this.drops) {
      if (d.ticker !== undefined && d.ticker !== ticker) continue;
      d.remaining--;
      if (d.remaining <= 0) this.drops = this.drops.filter((x) => x !== d);
      this.dropped++;
      return true;
    }
    return false;
  }

  injectDrop(count: number, ticker?: string): string {
    const id = `drop-${this.nextId++}`;
    this.drops.push({ id, remaining: count, ...(ticker !== undefined ? { ticker } : {}) });
    return id;
  }

  pendingDrops(): number {
    return this.drops.reduce((n, d) => n + d.remaining, 0);
  }

  private select(ticker?: string): FeedConnection[] {
    return [...this.connections].filter((c) => ticker === undefined || c.tickers.has(ticker));
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

  clearFaults(): void {
    this.drops = [];
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

/** Parses a client message as a JSON object, or undefined. */
export function parseJsonObject(data: RawData): Record<string, unknown> | undefined {
  try {
    const text = Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.from(data as ArrayBuffer).toString();
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
