/**
 * One client WebSocket connection: its platform's protocol session, its subscriptions (attached to the platform's
 * shared topics), the bound on what it may have unsent (a client that cannot keep up is closed, never left to fall
 * behind), the bound on what it may send, and its part of its key's limits.
 */
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { jsonCarriesApiKey, type KeyLimits } from '@depthgate/auth';
import { MessageRate, SerialInbox } from '@depthgate/feeds';
import { drained, type Logger } from '@depthgate/service-kit';
import { CLOSE } from './close-codes';
import { Frame } from './frame';
import type { StreamHub, SubscriberOwner } from './hub';
import type { PlatformWsMetrics } from './metrics';
import type { ClientContext, ClientLink, ClientSession, Outgoing, PlatformStream, Subscriber } from './types';

/** A closing client that does not finish the closing handshake is cut this much later. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Clients written to in this turn of the event loop, their sockets corked: every frame a client gets in one turn
 * (the fan-out of all the upstream messages read in that turn) leaves in one write, not one system call per frame —
 * most of the cost of fanning out to many clients.
 */
const corked: ClientConnection[] = [];
let uncorkScheduled = false;
/** Clients that had bytes unsent at the last uncork (the only ones whose unsent bytes can be above zero since). */
const behind = new Set<ClientConnection>();

/**
 * What the process's clients hold unsent, for the upstream connections' admission of messages (a turn's fan-out is
 * bounded, and nothing more is read while the clients together are too far behind).
 */
const outbound = {
  /** Bytes written to clients in this turn (not yet uncorked). */
  turnBytes: 0,
  /** Bytes the clients' sockets held unsent at the last uncork (or the last `measure()`). */
  unsent: 0,
  /** Measures `unsent` again. */
  measure(): number {
    let unsent = 0;
    for (const c of behind) {
      const b = c.open ? c.buffered : 0;
      if (b === 0) behind.delete(c);
      else unsent += b;
    }
    this.unsent = unsent;
    return unsent;
  },
};

function uncorkAll(): void {
  uncorkScheduled = false;
  for (const client of corked.splice(0)) {
    client.uncork();
    behind.add(client);
  }
  outbound.turnBytes = 0;
  outbound.measure();
}

/**
 * The upstream connections' admission of their next message: while this turn's writes stay under `turnBytes` and,
 * with them, what all clients hold unsent stays under `totalBytes`.
 */
export function admitUpstream(turnBytes: number, totalBytes: number): () => boolean {
  return () => {
    if (outbound.turnBytes >= turnBytes) return false;
    if (outbound.unsent + outbound.turnBytes <= totalBytes) return true;
    return outbound.measure() + outbound.turnBytes <= totalBytes;
  };
}

export interface ClientOptions {
  id: number;
  /** Unique across replicas: its entry in the key's shared count. */
  connId: string;
  ws: WebSocket;
  /** The connection's socket (the upgraded HTTP socket `ws` writes to). */
  socket: Duplex;
  platform: string;
  hub: StreamHub;
  stream: PlatformStream;
  keyId: string;
  maxSubscriptions: number;
  limits: KeyLimits;
  onlyChannel: string | undefined;
  maxBufferedBytes: number;
  messagesPerSecond: number;
  metrics: PlatformWsMetrics;
  logger: Logger;
  onClosed: (client: ClientConnection, code: number, reason: string) => void;
}

/** Messages of one connection read ahead of the one being handled, at most (SerialInbox: then the socket stops reading). */
const MAX_PENDING_MESSAGES = 32;

export class ClientConnection implements ClientLink, SubscriberOwner {
  readonly id: number;
  open = true;
  /** Answered the last ping. */
  alive = true;
  readonly subs = new Set<Subscriber>();
  readonly openedAt = Date.now();
  messagesIn = 0;
  messagesOut = 0;
  private readonly session: ClientSession;
  /** Client messages, one at a time, in order; one that fails unexpectedly closes the connection (1011). */
  private readonly inbox: SerialInbox;
  private readonly rate: MessageRate;
  private corked = false;
  /** Wakes the message waiting for room (`room`), if one is. */
  private roomWake: AbortController | undefined;

  constructor(private readonly o: ClientOptions) {
    this.id = o.id;
    this.rate = new MessageRate(o.messagesPerSecond);
    this.session = o.stream.openClient(this.context());
    this.inbox = new SerialInbox(o.ws, MAX_PENDING_MESSAGES, (err) => {
      o.logger.error({ err, conn: this.id }, 'client message failed');
      this.close(CLOSE.internal.code, CLOSE.internal.reason);
    });
    o.ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    o.ws.on('pong', () => {
      this.alive = true;
    });
    o.ws.on('error', () => o.ws.terminate());
    o.ws.on('close', (code, reason) => this.closed(code, reason.toString()));
  }

  get keyId(): string {
    return this.o.keyId;
  }

  get platform(): string {
    return this.o.platform;
  }

  private context(): ClientContext<unknown> {
    const o = this.o;
    const conn = o.connId;
    return {
      logger: o.logger,
      onlyChannel: o.onlyChannel,
      send: (text) => this.send(text),
      close: (code, reason) => this.close(code, reason),
      reserve: async (n, topics = n) => {
        if (topics > 0 && o.hub.room() < topics) {
          return `the gateway holds as many upstream subscriptions of this platform as it may; retry later`;
        }
        if (n > 0 && !(await o.limits.reserve(conn, n, o.maxSubscriptions)))
          return `subscription limit reached: this API key may hold ${o.maxSubscriptions} subscriptions (channel × market) across its connections`;
        // Closed meanwhile (or before: a frame handled after the close): nothing may be attached to it.
        if (!this.open) {
          if (n > 0) o.limits.release(conn, n);
          return 'connection closed';
        }
        return undefined;
      },
      attach: (channel, market, handle) => {
        const sub = o.hub.attach(this, this, channel, market, handle);
        this.subs.add(sub);
        return sub;
      },
      detach: (subs, keep = 0) => {
        let n = 0;
        for (const sub of subs) {
          if (!this.subs.delete(sub)) continue;
          o.hub.detach(sub);
          n++;
        }
        o.limits.release(conn, n - Math.min(n, keep));
      },
      release: (n) => o.limits.release(conn, n),
    };
  }

  /** The hub dropped a subscription (its topic failed upstream); the client was told in the platform's form. */
  dropped(sub: Subscriber): void {
    if (!this.subs.delete(sub)) return;
    this.o.limits.release(this.o.connId, 1);
    this.session.dropped?.(sub);
  }

  /** Bytes waiting to be sent to the client. */
  get buffered(): number {
    return this.o.ws.bufferedAmount;
  }

  send(data: Outgoing): void {
    if (!this.open) return;
    if (!this.corked) {
      // What is still unsent from earlier turns is how far behind the client is (this turn's frames wait for the
      // uncork, and a burst is not a slow consumer).
      if (this.o.ws.bufferedAmount > this.o.maxBufferedBytes) {
        this.cut('slowConsumer', 'slow_consumer');
        return;
      }
      this.corked = true;
      this.o.socket.cork();
      corked.push(this);
      if (!uncorkScheduled) {
        uncorkScheduled = true;
        setImmediate(uncorkAll);
      }
    }
    // The frame is written straight to the socket `ws` owns (ws/frame.ts): one write, no copy of a shared message.
    const bytes = data instanceof Frame ? data.bytes : Frame.encode(data);
    this.o.socket.write(bytes);
    outbound.turnBytes += bytes.length;
    this.messagesOut++;
  }

  uncork(): void {
    this.corked = false;
    this.o.socket.uncork();
    // A message waiting for room (`room`) goes on once the client is back within its bound, even if traffic keeps
    // its socket from ever emptying (`drain`).
    if (this.roomWake !== undefined && this.buffered <= this.o.maxBufferedBytes) this.roomWake.abort();
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (!this.open) return;
    this.messagesIn++;
    this.o.metrics.clientMessagesIn.inc();
    if (!this.rate.take()) return this.cut('tooManyMessages', 'too_many_messages');
    if (isBinary) return this.cut('unsupportedData', 'binary_frame');
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as Buffer).toString();
    // Its markets and ids go upstream, its refusals quote them back, the hub logs topics: a key stops here.
    if (jsonCarriesApiKey(text)) return this.cut('keyInMessage', 'api_key_in_message');
    // A subscribe waits for the key's limit (Redis) before the next message is handled; a slow Redis cannot make
    // the messages of one connection pile up in memory (at most MAX_PENDING_MESSAGES are read ahead). Each message
    // is handled once what the client has unsent is back under its bound (`room`).
    const handle = () => (this.open ? this.session.onMessage(text) : undefined);
    this.inbox.push(() => {
      const wait = this.room();
      return wait === undefined ? handle() : wait.then(handle);
    });
  }

  /**
   * Undefined when the client's unsent bytes are within its bound, else a promise that settles once they are again:
   * at an uncork that finds them so (`uncork`), when its socket has sent everything (`drain`), or when it closed. A
   * client's next message waits for it: answers that each queue a lot at once (Kalshi's `get_snapshot`, a subscribe
   * to many markets) are then paced by the client's own reading. Without it, a burst of such requests read in one turn
   * was answered whole within that turn (hundreds of MB for a client holding many books), because the slow-consumer
   * check (`send`) runs on a turn's first frame only. Below the socket's high-water mark no `drain` is due, and what
   * is unsent is small: no wait.
   */
  private room(): Promise<void> | undefined {
    const socket = this.o.socket;
    if (this.buffered <= this.o.maxBufferedBytes || !socket.writableNeedDrain) return undefined;
    const wake = new AbortController();
    this.roomWake = wake;
    return drained(socket, wake.signal).finally(() => {
      if (this.roomWake === wake) this.roomWake = undefined;
    });
  }

  /** Closes with one of the gateway's close codes and counts it. */
  cut(name: keyof typeof CLOSE, reason: string): void {
    if (!this.open) return;
    this.o.metrics.drops.inc({ reason });
    this.close(CLOSE[name].code, CLOSE[name].reason);
  }

  close(code: number, reason: string): void {
    if (!this.open) return;
    this.open = false;
    const ws = this.o.ws;
    try {
      ws.close(code, reason);
    } catch {
      ws.terminate();
    }
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** The gateway's liveness check: a client that did not answer the previous ping is closed. */
  ping(): void {
    if (!this.open) return;
    if (!this.alive) return this.cut('unresponsive', 'unresponsive');
    this.alive = false;
    try {
      this.o.ws.ping();
    } catch {
      /* closing */
    }
  }

  private closed(code: number, reason: string): void {
    this.open = false;
    for (const sub of this.subs) this.o.hub.detach(sub);
    this.subs.clear();
    this.o.limits.close(this.o.connId);
    this.o.onClosed(this, code, reason);
  }
}
