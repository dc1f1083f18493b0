import { Counter, Gauge, type Registry } from '@depthgate/service-kit';

/** The WebSocket proxy's metrics (docs/websockets.md; docs/operations.md, "Metrics"), by platform. */
export class WsMetrics {
  readonly connections: Gauge<'platform'>;
  readonly handshakes: Counter<'platform' | 'result'>;
  readonly subscriptions: Gauge<'platform'>;
  readonly upstreamSubscriptions: Gauge<'platform'>;
  readonly upstreamConnections: Gauge<'platform'>;
  readonly messagesIn: Counter<'platform' | 'source'>;
  readonly messagesOut: Counter<'platform' | 'destination'>;
  readonly drops: Counter<'platform' | 'reason'>;
  readonly resyncs: Counter<'platform' | 'reason'>;
  readonly reconciliations: Counter<'platform' | 'result'>;
  readonly limitsDegraded: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.connections = new Gauge({
      name: 'gateway_ws_connections',
      help: 'Open client WebSocket connections',
      labelNames: ['platform'] as const,
      registers,
    });
    this.handshakes = new Counter({
      name: 'gateway_ws_handshakes_total',
      help: 'Client WebSocket handshakes by result (accepted, or the error code they were refused with)',
      labelNames: ['platform', 'result'] as const,
      registers,
    });
    this.subscriptions = new Gauge({
      name: 'gateway_ws_subscriptions',
      help: 'Client subscriptions (one per channel and market of a client)',
      labelNames: ['platform'] as const,
      registers,
    });
    this.upstreamSubscriptions = new Gauge({
      name: 'gateway_ws_upstream_subscriptions',
      help: 'Upstream subscriptions (one per platform, channel and market, shared by every client subscription to it)',
      labelNames: ['platform'] as const,
      registers,
    });
    this.upstreamConnections = new Gauge({
      name: 'gateway_ws_upstream_connections',
      help: 'Open upstream WebSocket connections',
      labelNames: ['platform'] as const,
      registers,
    });
    this.messagesIn = new Counter({
      name: 'gateway_ws_messages_in_total',
      help: 'Messages received, from upstreams and from clients',
      labelNames: ['platform', 'source'] as const,
      registers,
    });
    this.messagesOut = new Counter({
      name: 'gateway_ws_messages_out_total',
      help: 'Messages sent, to clients and to upstreams',
      labelNames: ['platform', 'destination'] as const,
      registers,
    });
    this.drops = new Counter({
      name: 'gateway_ws_drops_total',
      help: 'Client connections the gateway closed (slow_consumer, unresponsive, too_many_messages, revoked, …)',
      labelNames: ['platform', 'reason'] as const,
      registers,
    });
    this.resyncs = new Counter({
      name: 'gateway_ws_resyncs_total',
      help: 'Topics resynced (fresh snapshot to every subscriber) by reason',
      labelNames: ['platform', 'reason'] as const,
      registers,
    });
    this.reconciliations = new Counter({
      name: 'gateway_ws_reconciliations_total',
      help: 'Kept books compared with the REST book: match, mismatch (resynced), inconclusive (the book moved), no_budget (no upstream budget slot for the read) or failed (the read failed)',
      labelNames: ['platform', 'result'] as const,
      registers,
    });
    this.limitsDegraded = new Gauge({
      name: 'gateway_ws_limits_degraded',
      help: '1 while Redis is unreachable and per-key WebSocket limits are counted per process',
      registers,
    });
  }

  private readonly bound = new Map<string, PlatformWsMetrics>();

  /** The metrics of one platform, label values bound once (they are on the fan-out path). */
  forPlatform(platform: string): PlatformWsMetrics {
    let m = this.bound.get(platform);
    if (!m) this.bound.set(platform, (m = bind(this, platform)));
    return m;
  }
}

function bind(w: WsMetrics, platform: string) {
  return {
    connections: w.connections.labels(platform),
    subscriptions: w.subscriptions.labels(platform),
    upstreamSubscriptions: w.upstreamSubscriptions.labels(platform),
    upstreamConnections: w.upstreamConnections.labels(platform),
    messagesIn: w.messagesIn.labels(platform, 'upstream'),
    clientMessagesIn: w.messagesIn.labels(platform, 'client'),
    messagesOut: w.messagesOut.labels(platform, 'client'),
    upstreamMessagesOut: w.messagesOut.labels(platform, 'upstream'),
    handshake: (result: string) => w.handshakes.inc({ platform, result }),
    drops: { inc: (labels: { reason: string }) => w.drops.inc({ platform, ...labels }) },
    resyncs: { inc: (labels: { reason: string }) => w.resyncs.inc({ platform, ...labels }) },
    reconciliations: { inc: (labels: { result: string }) => w.reconciliations.inc({ platform, ...labels }) },
  };
}

export type PlatformWsMetrics = ReturnType<typeof bind>;
