import { z } from 'zod';
import { authEnvShape } from '@depthgate/auth';
import { clickHouseEnvShape } from '@depthgate/history-store';
import { envBool, envInt, envLogLevel, envString, parseEnv } from '@depthgate/service-kit';

/**
 * Every replay-service setting, parsed once from the environment (docs/configuration.md, "Replay"). Keys, rate limits
 * and Redis are the shared ones (the history's names and defaults); ClickHouse's too, but the replay's query budget
 * is its own: its own sockets (CLICKHOUSE_MAX_CONNECTIONS of this process) and its own query gate, so a replay load
 * does not take the history API's.
 */
export const replayEnvSchema = z.object({
  ...authEnvShape,
  ...clickHouseEnvShape,
  REPLAY_PORT: envInt(7083, { min: 0, max: 65535 }),
  REPLAY_HOST: envString('127.0.0.1'),
  LOG_LEVEL: envLogLevel(),
  ACCESS_LOG: envBool(true),
  /** After SIGTERM: readiness turns red, then this long later new connections are refused. */
  SHUTDOWN_DELAY_MS: envInt(0, { min: 0, max: 120_000 }),
  /** After that, in-flight replays get this long to finish. */
  DRAIN_TIMEOUT_MS: envInt(15_000, { min: 0, max: 600_000 }),
  /**
   * Time budget of opening one replay's window (its book at `from`, the last trade before it, its first page):
   * enforced by the service until the answer has started, and sent as `max_execution_time` with each read (each
   * later page's read gets it whole).
   */
  REPLAY_QUERY_TIMEOUT_MS: envInt(30_000, { min: 1, max: 600_000 }),
  /** ClickHouse queries this process runs at once (its own query gate); more wait in arrival order. */
  REPLAY_QUERY_CONCURRENCY: envInt(4, { min: 1, max: 1024 }),
  /**
   * Rows (deltas and trades) per read of a replay's window: a window of any length is read page by page, the next
   * page while the one before is sent, so a replay holds at most two pages (and its books): this bounds its memory
   * (docs/replay.md, "Memory"). A page holds more only when one millisecond of one market does.
   */
  REPLAY_PAGE_ROWS: envInt(10_000, { min: 100, max: 1_000_000 }),
  /**
   * HTTP replays a key may have running at once, every replica together: each holds a window's pages (about 3 MiB)
   * for as long as its caller reads (docs/replay.md, "HTTP replay"). One more → 429 too_many_connections.
   */
  REPLAY_HTTP_MAX_CONCURRENT_PER_KEY: envInt(10, { min: 1, max: 1_000_000 }),
  /** The same for callers without a key, per client address. */
  REPLAY_HTTP_MAX_CONCURRENT_ANONYMOUS: envInt(2, { min: 1, max: 1_000_000 }),
  /**
   * An HTTP replay whose caller takes nothing of what is waiting to be sent (a batch and the socket's buffers) for this
   * long is cut (no end line): a reader that stopped would otherwise hold its replay, and its place, for good.
   */
  REPLAY_HTTP_WRITE_TIMEOUT_MS: envInt(60_000, { min: 100, max: 3_600_000 }),
  /**
   * The same for a replay socket: one whose client reads nothing of what waits for this long (a frame over the
   * socket's high-water mark not written out) is closed 4009 `slow consumer`. It would otherwise hold its place, its
   * reads and, in a `session`, every other socket of the session, whose true order waits for it.
   */
  REPLAY_WS_WRITE_TIMEOUT_MS: envInt(60_000, { min: 100, max: 3_600_000 }),
  /**
   * A replay socket starts this long after its last subscribe (a library that subscribes market by market, or waits
   * for each ack, gets every market into the replay); the sockets of a `session` start this long after the last one
   * joined and all have subscribed.
   */
  REPLAY_SUBSCRIBE_SETTLE_MS: envInt(250, { min: 0, max: 60_000 }),
  /**
   * The latest start of a replay socket, from its opening: one that has subscribed something replayable starts then
   * even if subscribes keep coming (each puts the settle off again, and each is a catalogue query); one that has
   * subscribed to nothing replayable is closed (1008 and the reason): it holds one of its key's connections and a
   * session's start.
   */
  REPLAY_SUBSCRIBE_TIMEOUT_MS: envInt(60_000, { min: 100, max: 3_600_000 }),
  /**
   * Frames a replay socket's client may send per second, bursts of twice as many; more close the socket with 4429 (as
   * the gateway's WS_CLIENT_MESSAGES_PER_SECOND). Each subscribe is a query of the history's catalogue.
   */
  REPLAY_WS_MESSAGES_PER_SECOND: envInt(20, { min: 1, max: 100_000 }),
  /**
   * Replay sockets a key may hold open at once, every replica together (a key's `ws_max_connections` overrides it). The
   * replay's own count, apart from the gateway's live connections (docs/replay.md, "Connections per key").
   */
  REPLAY_WS_MAX_CONNECTIONS_PER_KEY: envInt(20, { min: 1, max: 1_000_000 }),
  /** Replay sockets callers without a key may hold open at once per client address (every replica together). */
  REPLAY_WS_MAX_CONNECTIONS_ANONYMOUS: envInt(2, { min: 1, max: 1_000_000 }),
  /**
   * Subscriptions (channel × market, as the gateway counts them) a key's replay sockets may hold together, every
   * replica together (a key's `ws_max_subscriptions` overrides it). Each market a socket replays holds about 3 MiB
   * (docs/replay.md, "Memory"), so this bounds what one key's replays hold.
   */
  REPLAY_WS_MAX_SUBSCRIPTIONS_PER_KEY: envInt(100, { min: 1, max: 1_000_000 }),
  /** The same for callers without a key, per client address. */
  REPLAY_WS_MAX_SUBSCRIPTIONS_ANONYMOUS: envInt(20, { min: 1, max: 1_000_000 }),
  /** Lease of a socket in its key's shared count (renewed at a third; a dead replica's sockets expire with it). */
  REPLAY_WS_KEY_LEASE_MS: envInt(60_000, { min: 1_000, max: 3_600_000 }),
});

export type ReplayConfig = z.output<typeof replayEnvSchema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): ReplayConfig {
  return parseEnv(replayEnvSchema, env);
}
