/**
 * The WebSocket replay's handshakes: `GET /ws/replay/v1/{platform}?from=&to=&speed=&clock=&session=` upgraded to a replay socket that
 * speaks the venue's own protocol (venues.ts: one protocol module per recorded venue). Everything checkable before the
 * upgrade is checked before it, and a refusal is an HTTP answer in the documented `{"error","message"}` form (never
 * an open socket that says nothing): an unknown path (404 not_found), a platform that is not one (404
 * unknown_platform) or not a recorded venue (404 unknown_platform, naming the ones that are), `from`/`to`
 * as the HTTP replay takes them (400 invalid_timestamp), `speed` not `max` nor a positive number, `clock`
 * not `venue` nor `received` (400 invalid_request), a bad key (401), the caller's requests per minute used up (429 rate_limited: a handshake counts
 * as a request of the shared budget, per key or, anonymous, per client address through TRUST_PROXY_HOPS; also the
 * address's unknown keys past RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE, packages/auth RefusedKeys), keys that
 * cannot be checked (503), the caller's replay sockets at their limit (429 too_many_connections: packages/auth
 * `KeyLimits` in the `replay` namespace, every replica together; the place is given back when the socket closes); its
 * subscriptions are counted there too, against the key's `ws_max_subscriptions` (replay-socket.ts). The key is optional as on the HTTP replay:
 * `X-API-Key` or HTTP Basic; without one, the last day.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  callerBucket,
  clientAddress,
  ipBucket,
  KeyLimits,
  keyRefusal,
  presentedKey,
  rateLimitedRefusal,
  type Auth,
  type Caller,
} from '@depthgate/auth';
import type { HistoryStore, OrderBookQueries } from '@depthgate/history-store';
import { canonicalPlatform } from '@depthgate/platforms';
import { AppError, answerHandshakes, endWithError, requestIdOf, type Logger } from '@depthgate/service-kit';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ReplayMetrics } from '../metrics';
import { parseClock, parseWindow } from '../request';
import { ReplaySocket, type SubscriptionPlaces } from './replay-socket';
import { Sessions } from './session';
import { VENUE_SOCKETS } from './venues';

export interface ReplaySocketsDeps {
  auth: Auth;
  store: HistoryStore;
  queries: OrderBookQueries;
  metrics: ReplayMetrics;
  logger: Logger;
  queryTimeoutMs: number;
  pageRows: number;
  now: () => number;
  /** Reverse proxies whose X-Forwarded-For is trusted (TRUST_PROXY_HOPS), as the HTTP app trusts them. */
  trustProxyHops: number;
  /** Quiet time after a socket's last subscribe (and a session's last join) before its replay starts. */
  settleMs: number;
  /** The latest start, from the opening (REPLAY_SUBSCRIBE_TIMEOUT_MS); nothing replayable subscribed by then: 1008. */
  subscribeTimeoutMs: number;
  /** Client frames a socket may send per second, bursts of twice as many (more: closed 4429). */
  messagesPerSecond: number;
  /** A socket whose client reads nothing of what waits for this long is closed 4009 (REPLAY_WS_WRITE_TIMEOUT_MS). */
  writeTimeoutMs: number;
  /**
   * Replay sockets a caller may hold at once, every replica together: `perKey` (a key's `ws_max_connections`
   * overrides it), `anonymous` per client address; counted in Redis under `{redisKeyPrefix}replay:key:…`.
   */
  connections: { perKey: number; anonymous: number; leaseMs: number; redisKeyPrefix: string };
  /**
   * Subscriptions (channel × market) a caller's replay sockets may hold together, every replica together: `perKey` (a
   * key's `ws_max_subscriptions` overrides it), `anonymous` per client address; counted with the sockets.
   */
  subscriptions: { perKey: number; anonymous: number };
}

/** A `session` name: what a caller's sockets share to be replayed on one clock. */
const SESSION_NAME = /^[A-Za-z0-9._:-]{1,64}$/;

/** The platforms replayed over WebSocket, as a message names them. */
const replayed = () => [...VENUE_SOCKETS.values()].map((v) => `${v.platform} (${v.name.toLowerCase()})`).join(', ');

const PATH = /^\/ws\/replay\/v1\/([^/]+)$/;
/** Largest `speed` factor (a year of recorded time in about half a minute). */
const MAX_SPEED = 1_000_000;

/** `speed`: `max`, or a positive decimal factor (1: real time); absent: 1. */
export function parseSpeed(text: unknown): number | 'max' {
  if (text === undefined) return 1;
  if (text === 'max') return 'max';
  const n = typeof text === 'string' && /^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : NaN;
  if (!(n > 0 && n <= MAX_SPEED))
    throw new AppError('invalid_request', `speed must be max or a number above 0 up to ${MAX_SPEED} (1: real time)`);
  return n;
}

const shuttingDown = () =>
  new AppError('service_unavailable', 'The replay service is shutting down; retry on another replica', {
    headers: { 'Retry-After': '1' },
  });

/** The platform segment of the path, percent-decoded; as given when its escapes are malformed (then no platform). */
function decodedName(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export class ReplaySockets {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 });
  private readonly open = new Set<WebSocket>();
  private readonly sessions: Sessions;
  /** The callers' open sockets (the replay's own count: not the gateway's live connections). */
  private readonly limits: KeyLimits;
  private readonly instance = randomUUID();
  private nextId = 0;
  /** Shutting down (closeAll): a handshake still in progress is refused. */
  private closing = false;

  constructor(private readonly d: ReplaySocketsDeps) {
    answerHandshakes(this.wss, (req, socket, code, message, headers) =>
      this.refuse(req, socket, new AppError(code, message, { headers })),
    );
    this.sessions = new Sessions(d.settleMs);
    this.limits = new KeyLimits({
      redis: d.auth.redis,
      prefix: d.connections.redisKeyPrefix,
      namespace: 'replay',
      leaseMs: d.connections.leaseMs,
      logger: d.logger,
      onDegraded: (degraded) => d.metrics.limitsDegraded.set(degraded ? 1 : 0),
    });
  }

  /** The server's `upgrade` listener. */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // From the upgrade on the socket is ours, errors included (a client that resets it while the handshake waits on
    // Redis): without a listener an error event would be thrown and end the process.
    socket.on('error', () => socket.destroy());
    // Every answer to the handshake carries it: a refusal, and the 101 (answerHandshakes).
    requestIdOf(req);
    void this.handshake(req, socket, head).catch((err: unknown) => {
      if (err instanceof AppError) return this.refuse(req, socket, err);
      this.d.logger.error({ err: { message: (err as Error).message } }, 'replay handshake failed');
      this.refuse(req, socket, new AppError('internal_error', 'Internal server error'));
    });
  };

  /** The refusal, then the socket closes (cut after a linger if the client keeps its side open). */
  private refuse(req: IncomingMessage, socket: Duplex, err: AppError): void {
    if (!socket.writable) return void socket.destroy();
    endWithError(socket, err.code, err.message, err.headers, req.id);
  }

  private async handshake(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (this.closing) throw shuttingDown();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://replay');
    } catch {
      throw new AppError('invalid_request', 'The request target is not a path');
    }
    const path = PATH.exec(url.pathname);
    if (!path) throw new AppError('not_found', `No route for GET ${url.pathname.slice(0, 100)}`);
    const given = decodedName(path[1] as string);
    const platform = canonicalPlatform(given);
    if (platform === undefined)
      throw new AppError(
        'unknown_platform',
        `Unknown platform ${JSON.stringify(given.slice(0, 40))}: replayed over WebSocket: ${replayed()}`,
      );
    const venue = VENUE_SOCKETS.get(platform);
    if (venue === undefined)
      throw new AppError(
        'unknown_platform',
        `${platform} is not a recorded venue; replayed over WebSocket: ${replayed()}`,
      );
    const query: Record<string, unknown> = {};
    for (const name of ['from', 'to', 'speed', 'session', 'clock']) {
      const all = url.searchParams.getAll(name);
      if (all.length > 0) query[name] = all.length === 1 ? all[0] : all;
    }
    const { from, to } = parseWindow(query);
    const speed = parseSpeed(query.speed);
    const clock = parseClock(query.clock);
    const sessionName = query.session;
    if (sessionName !== undefined && (typeof sessionName !== 'string' || !SESSION_NAME.test(sessionName)))
      throw new AppError('invalid_request', 'session must be given once, 1 to 64 of A-Z a-z 0-9 . _ : -');
    const caller = await this.caller(req);
    // A handshake is a request of the caller's budget (the shared per-key, or per-IP, requests per minute).
    const decision = await this.d.auth.rateLimiter.consumeFor(caller);
    if (!decision.allowed) {
      const refusal = rateLimitedRefusal(decision);
      throw new AppError('rate_limited', refusal.message, { headers: refusal.headers });
    }
    // The caller's sockets at once (before a named session is made for it); the place is given back when the socket
    // closes — a handshake refused after this point (the session's checks below, a bad Sec-WebSocket-Key the WebSocket
    // library refuses) closes without opening.
    const connId = await this.holdPlace(caller);
    if (socket.destroyed) return this.limits.close(connId);
    let opened = false;
    /** Gives back the session place this handshake holds, once it holds one (when the upgrade fails). */
    const held: { giveBack?: () => void } = {};
    socket.once('close', () => {
      if (opened) return;
      this.limits.close(connId);
      held.giveBack?.();
    });
    const terms = { from, to, speed, clock };
    // A session is the caller's: the same key, or anonymous, the same client address (as its rate limit's bucket).
    const session = this.sessions.session(callerBucket(caller), sessionName, terms);
    // Refused before the upgrade when it cannot join (started, or other terms); checked again as it joins. The place
    // it holds is given back once the socket has joined, or when the upgrade fails (a bad Sec-WebSocket-Key): a
    // named session nobody joined is then forgotten.
    const place = session.reserve(terms);
    held.giveBack = () => session.release(place);
    // After the awaits above; the upgrade below completes synchronously, so nothing can begin between this and it.
    if (this.closing) throw shuttingDown();
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      opened = true;
      this.open.add(ws);
      ws.once('close', () => {
        this.open.delete(ws);
        this.limits.close(connId);
      });
      // A frame the WebSocket library refuses (over maxPayload, text that is not UTF-8, a bad close code): it closes
      // the socket with the code that says why (1009, 1007, 1002) and emits the error, which must have a listener.
      ws.on('error', (err) => this.d.logger.debug({ err: { message: err.message } }, 'replay socket: frame refused'));
      try {
        new ReplaySocket({
          ...this.d,
          ws,
          venue,
          caller,
          session,
          terms,
          places: this.places(connId, caller),
          acceptedAt: this.d.now(),
        });
      } catch (err) {
        ws.close(1008, err instanceof AppError ? err.message.slice(0, 120) : 'replay failed');
      } finally {
        session.release(place);
      }
    });
  }

  /** A place among the caller's sockets (its id), or 429 too_many_connections. */
  private async holdPlace(caller: Caller): Promise<string> {
    const connId = `${this.instance}:${this.nextId++}`;
    const { perKey, anonymous } = this.d.connections;
    if (caller.kind === 'key') {
      const max = caller.key.wsMaxConnections ?? perKey;
      if (await this.limits.open(connId, caller.key.id, max)) return connId;
      throw new AppError('too_many_connections', `This API key may hold ${max} replay sockets at once`);
    }
    if (await this.limits.open(connId, `ip:${ipBucket(caller.ip)}`, anonymous)) return connId;
    throw new AppError(
      'too_many_connections',
      `Callers without an API key may hold ${anonymous} replay sockets at once per address`,
    );
  }

  /**
   * A socket's places in its caller's subscription limit, counted with its place among the caller's sockets (the
   * gateway's KeyLimits.reserve: every replica together; given back with the socket's place when it closes).
   */
  private places(connId: string, caller: Caller): SubscriptionPlaces {
    const { perKey, anonymous } = this.d.subscriptions;
    const max = caller.kind === 'key' ? (caller.key.wsMaxSubscriptions ?? perKey) : anonymous;
    const refusal =
      caller.kind === 'key'
        ? `subscription limit reached: this API key may hold ${max} subscriptions (channel × market) across its replay sockets`
        : `subscription limit reached: callers without an API key may hold ${max} subscriptions (channel × market) across their replay sockets per address`;
    return {
      reserve: async (n) => ((await this.limits.reserve(connId, n, max)) ? undefined : refusal),
      release: (n) => this.limits.release(connId, n),
    };
  }

  /** The caller by the key the handshake presents (X-API-Key or Basic), anonymous without one. */
  private async caller(req: IncomingMessage): Promise<Caller> {
    const key = presentedKey(req.headers);
    // The client's address as the HTTP app reads it (X-Forwarded-For through the trusted hops).
    const address = () => clientAddress(req, this.d.trustProxyHops);
    if (key === undefined) return { kind: 'anonymous', ip: address() };
    // Computed only when Redis would be asked (a key the cache answers needs no address).
    const verdict = await this.d.auth.authenticator.verify(key, { address });
    if (verdict.status === 'valid') return { kind: 'key', key: verdict.key };
    const refusal = keyRefusal(verdict);
    throw new AppError(refusal.code, refusal.message, refusal.headers ? { headers: refusal.headers } : {});
  }

  /** Closes every replay socket (shutdown: 1001 going away); handshakes still in progress are refused. */
  closeAll(code = 1001, reason = 'the replay service is shutting down'): void {
    this.closing = true;
    for (const ws of this.open) ws.close(code, reason);
    this.limits.stop();
  }
}
