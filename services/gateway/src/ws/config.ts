import { z } from 'zod';
import { envBool, envInt, envOptionalInt } from '@depthgate/service-kit';

/**
 * The WebSocket proxy's settings (docs/configuration.md, "Gateway"; docs/websockets.md), part of the gateway's one schema (config.ts). The
 * upstream feed URLs are the platforms' descriptors' (`FEED_VENUE_*_URL`).
 */
export const wsEnvShape = {
  /** Serve `/ws/v1/{platform}` and `/ws/{platform}/{channel}`. */
  WS_ENABLED: envBool(true),
  /** Open WebSocket connections per key (all replicas together), unless the key record says otherwise. */
  WS_MAX_CONNECTIONS_PER_KEY: envInt(50, { min: 1, max: 1_000_000 }),
  /** Subscriptions (channel × market) per key (all replicas and connections together), unless the key says otherwise. */
  WS_MAX_SUBSCRIPTIONS_PER_KEY: envInt(1000, { min: 1, max: 10_000_000 }),
  /** Open WebSocket connections per gateway process; more are refused with 503. */
  WS_MAX_CONNECTIONS: envInt(20_000, { min: 1, max: 1_000_000 }),
  /** Largest client message; a larger one closes the connection with 1009. */
  WS_MAX_MESSAGE_BYTES: envInt(64 * 1024, { min: 256, max: 16 * 1024 * 1024 }),
  /** A client whose unsent data passes this is closed with 4009 (slow consumer). */
  WS_MAX_BUFFERED_BYTES: envInt(1024 * 1024, { min: 1024, max: 1024 * 1024 * 1024 }),
  /**
   * All clients' unsent data together, per process: above it, upstream messages wait (ws/client.ts, admitUpstream)
   * and the clients furthest behind are closed with 4009 until it is below again (checked every 100 ms), so that many
   * slow clients cannot exhaust the heap.
   */
  WS_MAX_BUFFERED_TOTAL_BYTES: envInt(64 * 1024 * 1024, { min: 1024, max: 64 * 1024 * 1024 * 1024 }),
  /** Client messages per second (bursts of twice as many); more close the connection with 4429. */
  WS_CLIENT_MESSAGES_PER_SECOND: envInt(50, { min: 1, max: 100_000 }),
  /** The gateway pings every client this often; one that has not answered the previous ping is closed (4008). */
  WS_CLIENT_PING_MS: envInt(30_000, { min: 100, max: 600_000 }),
  /**
   * An upstream connection silent this long (no message, heartbeat, ping or keep-alive answer) is replaced, its
   * subscribers told (`stale`, the fresh snapshot, `resynced`). Unset: per platform, its venue's heartbeat rhythm plus
   * 500 ms (the descriptor's `feeds.main.heartbeat`, @depthgate/platforms `feedLiveness`); set: for every platform.
   */
  WS_UPSTREAM_STALL_MS: envOptionalInt({ min: 100, max: 600_000 }),
  /**
   * The gateway's keep-alive to each upstream connection: a ping frame, or the platform's text ping (the Polymarket
   * CLOB's `PING`), which is sent at least as often as the venue's rhythm asks, its answer being the proof of life.
   */
  WS_UPSTREAM_PING_MS: envInt(10_000, { min: 100, max: 600_000 }),
  /** Reconnect backoff of an upstream connection: exponential between these, with full jitter. */
  WS_RECONNECT_MIN_MS: envInt(500, { min: 10, max: 600_000 }),
  WS_RECONNECT_MAX_MS: envInt(30_000, { min: 10, max: 3_600_000 }),
  /** An upstream subscription whose last client left is kept this long (a client coming back gets it at once). */
  WS_UPSTREAM_LINGER_MS: envInt(5_000, { min: 0, max: 3_600_000 }),
  /** How often the keys of open connections are checked again (revocations close them within the key cache TTL). */
  WS_KEY_CHECK_MS: envInt(1_000, { min: 50, max: 5_000 }),
  /** Lease of a connection's entry in the shared per-key count (renewed at a third of it; a dead replica's expire). */
  WS_KEY_LEASE_MS: envInt(60_000, { min: 1_000, max: 3_600_000 }),
  /** Books of feeds without sequence numbers (CLOB, Gemini, Coinbase) are compared with the REST book this often; 0: never. */
  WS_RECONCILE_INTERVAL_MS: envInt(60_000, { min: 0, max: 86_400_000 }),
  /**
   * Reconciliation's REST reads of a platform stay within this fraction of its upstream budget (all replicas
   * together), so that callers always keep the rest; with many books each is compared less often instead.
   */
  WS_RECONCILE_BUDGET: z.coerce.number().gt(0).lte(1).default(0.1),
  /** A difference with the REST book that is still there this much later, unexplained by the feed, is a gap. */
  WS_RECONCILE_GRACE_MS: envInt(3_000, { min: 0, max: 600_000 }),
  /** Gemini: pause between unsubscribing and subscribing a symbol again (a resync) [3P, the recorder's]. */
  WS_GEMINI_RESUBSCRIBE_DELAY_MS: envInt(1_000, { min: 0, max: 60_000 }),
};
