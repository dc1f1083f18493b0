/**
 * The gateway's WebSocket proxy: `GET /ws/v1/{platform}[/{the platform's own feed path}]`, the spec product's
 * `/ws/{platform}/{channel}`, and (with GATEWAY_BASE_DOMAIN) `{platform}.{domain}/{its own feed path}` for clients that
 * build the URL from a host. The handshake is checked before anything is upgraded: the route (404 `unknown_platform`
 * / `unknown_channel` / `not_found`), the caller's key (401; `X-API-Key`, HTTP Basic, a `Sec-WebSocket-Protocol`
 * token or the `api_key` query parameter, and for clients that can send no other the platform's own key header), the
 * key's platform allowlist (403), a disabled platform or a full process (503), the key's connection limit (429
 * `too_many_connections`), the key's requests per minute or the client address's unknown keys (429 `rate_limited`). Refusals are the gateway's JSON error bodies. Open connections' keys are checked again
 * every WS_KEY_CHECK_MS; a revoked key's connections are closed (4001) within the key cache TTL.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import {
  clientAddress,
  INVALID_KEY_MESSAGE,
  KeyLimits,
  keyRefusal,
  presentedKey,
  rateLimitedRefusal,
  type Auth,
  type ResolvedKey,
  type PlatformKey,
  type VerifyResult,
} from '@depthgate/auth';
import { feedLiveness } from '@depthgate/platforms';
import {
  answerHandshakes,
  endWithError,
  loggableUrl,
  requestIdOf,
  type ErrorCode,
  type Logger,
} from '@depthgate/service-kit';
import type { GatewayConfig } from '../config';
import type { GatewayPlatforms } from '../platforms/registry';
import type { Platform } from '../platforms/types';
import type { Forwarder } from '../proxy/forwarder';
import { hostRouter } from '../routes/hosts';
import { admitUpstream, ClientConnection } from './client';
import { CLOSE } from './close-codes';
import { Frame } from './frame';
import { StreamHub } from './hub';
import type { WsMetrics } from './metrics';
import { STREAMS } from './registry';
import type { PlatformStream, StreamModule } from './types';

/** The subprotocol a browser offers next to its key (`new WebSocket(url, ['depthgate', key])`); the one answered. */
export const KEY_SUBPROTOCOL = 'depthgate';
const KEY_TOKEN = /^dg_[A-Za-z0-9]+$/;
const PATH_OK = /^\/[A-Za-z0-9._~/-]*$/;
/**
 * What one turn of the event loop may write to clients before upstream messages wait for the next: a read of an
 * upstream socket can hold hundreds of messages, each written to every client of its topic.
 */
const TURN_BYTES = 4 * 1024 * 1024;

export interface WsGatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  auth: Auth;
  metrics: WsMetrics;
  platforms: GatewayPlatforms;
  forwarder: Forwarder;
  draining: () => boolean;
}

interface StreamEntry {
  platform: Platform;
  module: StreamModule;
  stream: PlatformStream;
  hub: StreamHub;
  /** The venue's heartbeat interval (the platform's client heartbeats are sent at it). */
  heartbeatMs: number;
}

interface Route {
  entry: StreamEntry;
  onlyChannel: string | undefined;
}

type Refusal = { code: ErrorCode; message: string; platform?: string };

/** Open connections of one key: re-checked together. */
interface KeyGroup {
  key: string;
  resolved: ResolvedKey;
  clients: Set<ClientConnection>;
  checking: boolean;
}

export class WsGateway {
  private readonly wss: WebSocketServer;
  private readonly streams = new Map<string, StreamEntry>();
  private readonly clients = new Set<ClientConnection>();
  private readonly groups = new Map<string, KeyGroup>();
  private readonly limits: KeyLimits;
  private readonly byHost: ((host: string | undefined) => Platform | undefined) | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly instance = randomUUID();
  private nextId = 1;
  private readonly log: Logger;

  constructor(private readonly d: WsGatewayDeps) {
    const { config } = d;
    this.log = d.logger.child({ component: 'ws' });
    this.wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      clientTracking: false,
      maxPayload: config.WS_MAX_MESSAGE_BYTES,
      handleProtocols: (protocols) => (protocols.has(KEY_SUBPROTOCOL) ? KEY_SUBPROTOCOL : false),
    });
    answerHandshakes(this.wss, (req, socket, code, message, headers) =>
      this.refuse(req, socket, { code, message }, headers),
    );
    // Upstream messages are handled while one turn's writes to clients stay under TURN_BYTES and all clients'
    // unsent bytes under WS_MAX_BUFFERED_TOTAL_BYTES; the clients furthest behind are cut (boundBuffers).
    const cap = config.WS_MAX_BUFFERED_TOTAL_BYTES;
    const admit = admitUpstream(Math.min(TURN_BYTES, Math.max(1, Math.floor(cap / 4))), cap);
    for (const [key, module] of Object.entries(STREAMS) as [string, StreamModule][]) {
      const platform = d.platforms.byKey[key];
      const resolved = (
        config.platforms as Record<string, GatewayConfig['platforms'][keyof GatewayConfig['platforms']]>
      )[key];
      if (!platform || !resolved) continue;
      const stream = module.create({ platform: resolved, config, logger: this.log });
      const main = platform.targets[0];
      // The venue's heartbeat rhythm judges silence (docs/websockets.md, "Silence"), unless WS_UPSTREAM_STALL_MS is set.
      const liveness = feedLiveness(resolved.descriptor, {
        stallMs: config.WS_UPSTREAM_STALL_MS,
        pingMs: config.WS_UPSTREAM_PING_MS,
        falseAlarm: 'resubscribe',
      });
      const hub = new StreamHub({
        platform: key,
        title: platform.title,
        stream,
        limits: module.limits,
        logger: this.log,
        metrics: d.metrics,
        stallMs: liveness.stallMs,
        pingMs: liveness.pingMs,
        reconnectMinMs: config.WS_RECONNECT_MIN_MS,
        reconnectMaxMs: config.WS_RECONNECT_MAX_MS,
        lingerMs: config.WS_UPSTREAM_LINGER_MS,
        reconcileIntervalMs: config.WS_RECONCILE_INTERVAL_MS,
        reconcileGraceMs: config.WS_RECONCILE_GRACE_MS,
        reconcileBudget: config.WS_RECONCILE_BUDGET,
        ...(main ? { rest: { forwarder: d.forwarder, target: main } } : {}),
        admit,
      });
      this.streams.set(key, { platform, module, stream, hub, heartbeatMs: liveness.heartbeatMs });
    }
    this.limits = new KeyLimits({
      redis: d.auth.redis,
      prefix: config.REDIS_KEY_PREFIX,
      namespace: 'ws',
      leaseMs: config.WS_KEY_LEASE_MS,
      logger: this.log,
      onDegraded: (degraded) => d.metrics.limitsDegraded.set(degraded ? 1 : 0),
    });
    this.byHost = config.baseDomain === undefined ? undefined : hostRouter(config.baseDomain, d.platforms);
    this.every(config.WS_KEY_CHECK_MS, () => this.checkKeys());
    this.every(config.WS_CLIENT_PING_MS, () => {
      for (const c of this.clients) c.ping();
    });
    this.every(100, () => this.boundBuffers());
    for (const [key, entry] of this.streams) {
      const beat = entry.stream.clientHeartbeat;
      if (!beat) continue;
      this.every(entry.heartbeatMs, () => {
        const message = Frame.text(beat.message());
        for (const c of this.clients) if (c.platform === key) c.send(message);
      });
    }
  }

  private every(ms: number, f: () => void): void {
    const t = setInterval(f, ms);
    t.unref();
    this.timers.push(t);
  }

  /** The platforms with a stream, for error messages and documentation. */
  get platformKeys(): string[] {
    return [...this.streams.keys()];
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Handshake

  /** Handles an HTTP upgrade: refuses it with the gateway's JSON error, or opens a client connection. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    // Every answer to the handshake carries it: a refusal, and the 101 (answerHandshakes).
    requestIdOf(req);
    this.accept(req, socket, head).catch((err: unknown) => {
      this.log.error({ err }, 'WebSocket handshake failed');
      this.refuse(req, socket, { code: 'internal_error', message: 'Internal server error' });
    });
  }

  private refuse(req: IncomingMessage, socket: Duplex, r: Refusal, headers: Record<string, string> = {}): void {
    if (r.platform) this.d.metrics.forPlatform(r.platform).handshake(r.code);
    if (!socket.writable) return void socket.destroy();
    // Answered, then cut should the client keep its side open (the server's sockets are half-open).
    endWithError(socket, r.code, r.message, headers, req.id);
  }

  /** The stream a handshake's host and path name, or why none. */
  route(req: IncomingMessage): Route | Refusal {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    if (!PATH_OK.test(path) || path.includes('//') || /(^|\/)\.\.?(\/|$)/.test(path)) {
      return { code: 'invalid_path', message: 'Invalid path' };
    }
    const hosted = this.byHost?.(req.headers.host);
    if (hosted) {
      const entry = this.streams.get(hosted.key);
      if (!entry) return this.noStream(hosted.key);
      if (!entry.module.paths.includes(path)) {
        return {
          code: 'not_found',
          message: `${entry.platform.title}'s stream is at ${entry.module.paths.join(' or ')} on this host`,
          platform: hosted.key,
        };
      }
      return { entry, onlyChannel: undefined };
    }
    if (!path.startsWith('/ws/')) return { code: 'not_found', message: 'Not found' };
    const segs = path.slice(4).split('/');
    const versioned = segs[0] === 'v1';
    const name = (versioned ? segs[1] : segs[0]) ?? '';
    const platform = this.d.platforms.resolve(name);
    if (!platform) {
      return {
        code: 'unknown_platform',
        message: this.d.platforms.unknown(name, 'platforms with a stream', this.platformKeys),
      };
    }
    const entry = this.streams.get(platform.key);
    if (!entry) return this.noStream(platform.key);
    if (versioned) {
      const rest = segs.length > 2 ? `/${segs.slice(2).join('/')}` : '';
      if (rest !== '' && !entry.module.paths.includes(rest)) {
        return {
          code: 'not_found',
          message: `${platform.title}'s stream is /ws/v1/${platform.key} (or with its own path ${entry.module.paths.join(' or ')})`,
          platform: platform.key,
        };
      }
      return { entry, onlyChannel: undefined };
    }
    const channel = segs[1];
    if (segs.length !== 2 || channel === undefined || !entry.module.channels.includes(channel)) {
      return {
        code: 'unknown_channel',
        message: `Unknown channel "${segs.slice(1).join('/')}" of ${platform.key}; channels: ${entry.module.channels.join(', ')}`,
        platform: platform.key,
      };
    }
    return { entry, onlyChannel: channel };
  }

  private noStream(key: string): Refusal {
    return {
      code: 'unknown_platform',
      message: `Platform ${key} has no WebSocket stream; platforms with a stream: ${this.platformKeys.join(', ')}`,
    };
  }

  /**
   * The caller's key: `X-API-Key`, HTTP Basic, a `dg_…` entry among the offered subprotocols (with `depthgate`, the
   * one answered), the `api_key` query parameter, or the platform's own key header. Undefined when none is
   * presented; a Refusal for a subprotocol key offered without `depthgate` (a browser would fail the handshake).
   */
  callerKey(req: IncomingMessage, keyHeader: string | undefined): string | undefined | Refusal {
    const fromHeaders = presentedKey(req.headers);
    if (fromHeaders !== undefined) return fromHeaders;
    const offered = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const token = offered.find((p) => KEY_TOKEN.test(p));
    if (token !== undefined) {
      if (!offered.includes(KEY_SUBPROTOCOL)) {
        return {
          code: 'invalid_request',
          message: `A key offered as a subprotocol needs the subprotocol "${KEY_SUBPROTOCOL}" offered with it`,
        };
      }
      return token;
    }
    const raw = req.url ?? '';
    const q = raw.indexOf('?');
    if (q >= 0) {
      const fromQuery = new URLSearchParams(raw.slice(q + 1)).get('api_key');
      if (fromQuery !== null && fromQuery !== '') return fromQuery;
    }
    if (keyHeader) {
      const v = req.headers[keyHeader];
      if (typeof v === 'string' && KEY_TOKEN.test(v)) return v;
    }
    return undefined;
  }

  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const { config } = this.d;
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      return this.refuse(req, socket, { code: 'invalid_request', message: 'Only WebSocket upgrades are accepted' });
    }
    const route = this.route(req);
    if ('code' in route) return this.refuse(req, socket, route);
    const { entry } = route;
    const platform = entry.platform.key;
    const key = this.callerKey(req, entry.module.keyHeader);
    if (key !== undefined && typeof key !== 'string') return this.refuse(req, socket, { ...key, platform });
    if (key === undefined) {
      return this.refuse(req, socket, { code: 'unauthorized', message: INVALID_KEY_MESSAGE, platform });
    }
    let verdict: VerifyResult | Promise<VerifyResult> = this.d.auth.authenticator.verify(key, {
      address: () => clientAddress(req, config.TRUST_PROXY_HOPS),
    });
    if (verdict instanceof Promise) verdict = await verdict;
    if (verdict.status !== 'valid') {
      const refusal = keyRefusal(verdict);
      return this.refuse(req, socket, { code: refusal.code, message: refusal.message, platform }, refusal.headers);
    }
    const resolved = verdict.key;
    if (resolved.platforms && !resolved.platforms.has(platform as PlatformKey)) {
      return this.refuse(req, socket, {
        code: 'forbidden',
        message: `This API key may not use platform ${platform}`,
        platform,
      });
    }
    // A handshake is a request of the key's budget (its requests per minute, shared with REST), as the replay counts
    // its handshakes: a client opening and closing sockets in a loop is refused like one sending requests in a loop.
    let decision = this.d.auth.rateLimiter.consumeFor({ kind: 'key', key: resolved });
    if (decision instanceof Promise) decision = await decision;
    if (!decision.allowed) {
      const refusal = rateLimitedRefusal(decision);
      return this.refuse(req, socket, { code: 'rate_limited', message: refusal.message, platform }, refusal.headers);
    }
    const unavailable = this.d.draining()
      ? 'The gateway is shutting down; connect again'
      : config.disabled.has(platform)
        ? `Platform ${platform} is disabled on this gateway`
        : entry.stream.unavailable;
    if (unavailable !== undefined)
      return this.refuse(req, socket, { code: 'upstream_unavailable', message: unavailable, platform });
    if (this.clients.size >= config.WS_MAX_CONNECTIONS) {
      return this.refuse(req, socket, {
        code: 'service_unavailable',
        message: 'This gateway process holds as many WebSocket connections as it may; retry shortly',
        platform,
      });
    }
    const maxConnections = resolved.wsMaxConnections ?? config.WS_MAX_CONNECTIONS_PER_KEY;
    // Taken before the await: concurrent handshakes each have their own entry in the key's count.
    const id = this.nextId++;
    const connId = `${this.instance}:${id}`;
    if (!(await this.limits.open(connId, resolved.id, maxConnections))) {
      return this.refuse(req, socket, {
        code: 'too_many_connections',
        message: `This API key may hold ${maxConnections} WebSocket connections at once`,
        platform,
      });
    }
    if (socket.destroyed) return this.limits.close(connId);
    // The drain may have begun while the place was taken (Redis): nothing opens after it (the upgrade below
    // completes synchronously, so nothing can begin between this check and it).
    if (this.d.draining()) {
      this.limits.close(connId);
      return this.refuse(req, socket, {
        code: 'upstream_unavailable',
        message: 'The gateway is shutting down; connect again',
        platform,
      });
    }
    // A handshake the WebSocket library refuses (a bad Sec-WebSocket-Key) never opens: give its place back.
    let opened = false;
    socket.once('close', () => {
      if (!opened) this.limits.close(connId);
    });
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      opened = true;
      const m = this.d.metrics.forPlatform(platform);
      const client = new ClientConnection({
        id,
        connId,
        ws,
        socket,
        platform,
        hub: entry.hub,
        stream: entry.stream,
        keyId: resolved.id,
        maxSubscriptions: resolved.wsMaxSubscriptions ?? config.WS_MAX_SUBSCRIPTIONS_PER_KEY,
        limits: this.limits,
        onlyChannel: route.onlyChannel,
        maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
        messagesPerSecond: config.WS_CLIENT_MESSAGES_PER_SECOND,
        metrics: m,
        logger: this.log,
        onClosed: (c, code, reason) => this.closed(c, key, code, reason),
      });
      this.clients.add(client);
      let group = this.groups.get(resolved.id);
      if (!group) this.groups.set(resolved.id, (group = { key, resolved, clients: new Set(), checking: false }));
      group.clients.add(client);
      m.connections.inc();
      m.handshake('accepted');
      this.log.info(
        { conn: id, platform, keyId: resolved.id, path: loggableUrl(req.url ?? ''), channel: route.onlyChannel },
        'websocket opened',
      );
    });
  }

  private closed(client: ClientConnection, key: string, code: number, reason: string): void {
    this.clients.delete(client);
    const group = this.groups.get(client.keyId);
    group?.clients.delete(client);
    if (group && group.clients.size === 0 && group.key === key) this.groups.delete(client.keyId);
    this.d.metrics.forPlatform(client.platform).connections.dec();
    this.log.info(
      {
        conn: client.id,
        platform: client.platform,
        keyId: client.keyId,
        code,
        reason,
        durationMs: Date.now() - client.openedAt,
        messagesIn: client.messagesIn,
        messagesOut: client.messagesOut,
      },
      'websocket closed',
    );
  }

  /**
   * Each key with open connections, again, with an answer no older than the cache TTL less the check interval: a
   * revocation (announced at once over Redis, or learnt when the cached answer ages out) closes its connections
   * within the TTL. An unreachable key store keeps connections open (as keys keep working from the cache).
   */
  private checkKeys(): void {
    const { KEY_CACHE_TTL_MS, WS_KEY_CHECK_MS } = this.d.config;
    const maxAge = Math.max(0, KEY_CACHE_TTL_MS - WS_KEY_CHECK_MS);
    for (const group of this.groups.values()) {
      if (group.checking) continue;
      const apply = (r: VerifyResult) => {
        group.checking = false;
        if (r.status !== 'invalid' && r.status !== 'revoked') return;
        for (const c of [...group.clients]) c.cut('revoked', 'revoked');
      };
      const r = this.d.auth.authenticator.verify(group.key, { maxAgeMs: maxAge });
      if (r instanceof Promise) {
        group.checking = true;
        r.then(apply, () => {
          group.checking = false;
        });
      } else apply(r);
    }
  }

  /**
   * The process-wide bound on unsent data (WS_MAX_BUFFERED_TOTAL_BYTES): while all clients together hold more, the
   * ones furthest behind are closed as slow consumers (4009). Each client's own bound is checked on every send.
   */
  private boundBuffers(): void {
    const cap = this.d.config.WS_MAX_BUFFERED_TOTAL_BYTES;
    let total = 0;
    for (const c of this.clients) total += c.buffered;
    if (total <= cap) return;
    const behind = [...this.clients].sort((a, b) => b.buffered - a.buffered);
    for (const c of behind) {
      if (total <= cap) break;
      total -= c.buffered;
      c.cut('slowConsumer', 'slow_consumer');
    }
  }

  /** Drain: every client is told to reconnect (1001), then the upstream connections close. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    for (const c of [...this.clients]) c.close(CLOSE.goingAway.code, CLOSE.goingAway.reason);
    this.limits.stop();
    await Promise.all([...this.streams.values()].map((s) => s.hub.stop()));
  }
}
