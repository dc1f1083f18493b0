import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  EXCHANGE_KEYS,
  platformEnvNames,
  RECORDED_PLATFORMS,
  resolvePlatforms,
  type EnvParts,
  type ExchangeKey,
  type ResolvedPlatforms,
} from '@depthgate/platforms';
import { clickHouseEnvShape } from '@depthgate/history-store';
import { ConfigError, envBool, envInt, envList, envLogLevel, envString, parseEnv } from '@depthgate/service-kit';

const MiB = 1024 * 1024;

/**
 * What the recorder configures of each recorded platform (its descriptor in @depthgate/platforms): the feed, the main
 * REST host (discovery, reconciliation) and the credentials that sign the feed handshake. Defaults are the real
 * platforms (upstreams.md); `./dev up --sim` points them at the simulator.
 */
export const RECORDER_PLATFORM_PARTS: EnvParts = { hosts: 'main', feeds: true, credentials: true };

/** Every recorder setting, parsed once from the environment. README.md ("Recorder") lists them with their defaults. */
export const recorderEnvSchema = z.object({
  ...clickHouseEnvShape,
  RECORDER_PORT: envInt(7082, { min: 0, max: 65535 }),
  RECORDER_HOST: envString('127.0.0.1'),
  LOG_LEVEL: envLogLevel(),

  /** Exchanges to record (those whose feed needs credentials are skipped, with a warning, when none are set). */
  RECORDER_EXCHANGES: envList([...EXCHANGE_KEYS]),

  /**
   * Which tickers, per exchange: explicit lists, prefixes of listed markets (`*`: all), series. None of the three
   * set: every listed market (up to RECORDER_MAX_TICKERS).
   */
  RECORDER_VENUE_B_TICKERS: envList([]),
  RECORDER_VENUE_B_PREFIXES: envList([]),
  RECORDER_VENUE_B_SERIES: envList([]),
  RECORDER_VENUE_C_TICKERS: envList([]),
  RECORDER_VENUE_C_PREFIXES: envList([]),
  RECORDER_VENUE_C_SERIES: envList([]),
  RECORDER_VENUE_A_US_TICKERS: envList([]),
  RECORDER_VENUE_A_US_PREFIXES: envList([]),
  RECORDER_VENUE_A_US_SERIES: envList([]),
  /** At most this many tickers per exchange (configured ones first). */
  RECORDER_MAX_TICKERS: envInt(1000, { min: 1, max: 100_000 }),
  /** How often the REST listings are read again (new markets join, closed ones leave); 0: only at start. */
  RECORDER_DISCOVERY_INTERVAL_MS: envInt(300_000, { min: 0, max: 86_400_000 }),
  /** REST requests per second per exchange (discovery, reconciliation), `exchange=rate`; defaults stay inside each platform's public limit. */
  RECORDER_REST_RATES: envList([]),
  RECORDER_REST_TIMEOUT_MS: envInt(10_000, { min: 100, max: 120_000 }),
  /** Markets per subscribe message (Polymarket US allows at most 100). */
  RECORDER_SUBSCRIBE_BATCH: envInt(100, { min: 1, max: 1000 }),
  /** Tickers per feed connection; more tickers open more connections. */
  RECORDER_TICKERS_PER_CONNECTION: envInt(1000, { min: 1, max: 100_000 }),

  /** Full-book snapshot of every ticker this often (and after every resync). */
  RECORDER_SNAPSHOT_INTERVAL_MS: envInt(300_000, { min: 1000, max: 86_400_000 }),
  /** A ticker silent this long gets its due snapshot from the sweep (venue-stamped feeds: this far behind now). */
  RECORDER_SNAPSHOT_QUIET_MS: envInt(1000, { min: 50, max: 60_000 }),
  /** No message, heartbeat or ping for this long: the connection is replaced (a gap, reason `stall`). */
  RECORDER_STALL_TIMEOUT_MS: envInt(30_000, { min: 100, max: 600_000 }),
  /** WebSocket pings we send (0: none). */
  RECORDER_PING_INTERVAL_MS: envInt(10_000, { min: 0, max: 600_000 }),
  RECORDER_RECONNECT_MIN_MS: envInt(500, { min: 10, max: 60_000 }),
  RECORDER_RECONNECT_MAX_MS: envInt(30_000, { min: 10, max: 600_000 }),
  /** Exchanges whose books are compared with the venue's REST book (those without sequence numbers). */
  RECORDER_RECONCILE_EXCHANGES: envList(['venue_c']),
  /** Each ticker is compared at most this often. */
  RECORDER_RECONCILE_INTERVAL_MS: envInt(60_000, { min: 100, max: 86_400_000 }),
  /** A mismatch lasting this long after the REST answer is a gap (and the ticker is resubscribed). */
  RECORDER_RECONCILE_GRACE_MS: envInt(3000, { min: 0, max: 600_000 }),
  /** Gemini: pause between unsubscribing and subscribing a symbol again (updates still in flight are ignored). */
  RECORDER_GEMINI_RESUBSCRIBE_DELAY_MS: envInt(1000, { min: 0, max: 60_000 }),
  /** Polymarket US `responsesDebounced` [U]. */
  RECORDER_POLYMARKET_US_DEBOUNCED: envBool(false),

  /** An insert holds at most this many rows (one part: under max_insert_block_size). */
  RECORDER_BATCH_MAX_ROWS: envInt(200_000, { min: 1, max: 1_000_000 }),
  RECORDER_BATCH_MAX_BYTES: envInt(32 * MiB, { min: 1024, max: 256 * MiB }),
  /** A row waits at most this long before its batch is sent (rows are queryable about this much later). */
  RECORDER_BATCH_MAX_DELAY_MS: envInt(500, { min: 10, max: 60_000 }),
  /** Sealed batches kept in memory while ClickHouse is slow or away; beyond it they go to the spool. */
  RECORDER_BUFFER_MAX_BYTES: envInt(64 * MiB, { min: 64 * 1024, max: 4096 * MiB }),
  /** Where batches wait when memory is full; a persistent volume in production. */
  RECORDER_SPOOL_DIR: envString(path.join(os.tmpdir(), 'depthgate-recorder-spool')),
  /** Spool bound: when reached, the feeds are paused (see docs/history.md, backpressure). */
  RECORDER_SPOOL_MAX_BYTES: envInt(8 * 1024 * MiB, { min: MiB, max: Number.MAX_SAFE_INTEGER }),
  RECORDER_SPOOL_FILE_BYTES: envInt(64 * MiB, { min: 64 * 1024, max: 1024 * MiB }),
  /** One insert may take this long before it is abandoned (then probed and retried). */
  RECORDER_INSERT_TIMEOUT_MS: envInt(30_000, { min: 1000, max: 600_000 }),
  /** After SIGTERM, buffered rows get this long to reach ClickHouse; the rest is spooled. */
  RECORDER_SHUTDOWN_FLUSH_MS: envInt(20_000, { min: 0, max: 300_000 }),
});

export type RecorderEnv = z.output<typeof recorderEnvSchema>;

export interface VenueSettings {
  tickers: string[];
  prefixes: string[];
  series: string[];
  restRate: number;
  reconcile: boolean;
}

export interface RecorderConfig extends RecorderEnv {
  exchanges: ExchangeKey[];
  /** Each recorded platform's feed and REST URLs, credentials and signer. */
  platforms: ResolvedPlatforms<typeof RECORDED_PLATFORMS>;
  venues: Record<ExchangeKey, VenueSettings>;
}

/** Public REST limits (upstreams.md) with headroom: Kalshi 20/s (Basic), Gemini 120/min (≤1/s advised), PM US 20/s. */
export const DEFAULT_REST_RATES: Record<ExchangeKey, number> = { venue_b: 10, venue_c: 1, venue_a_us: 10 };

function isExchange(v: string): v is ExchangeKey {
  return (EXCHANGE_KEYS as readonly string[]).includes(v);
}

/** Every variable the recorder reads, its own and the recorded platforms' (README completeness). */
export function recorderEnvNames(): string[] {
  return [...Object.keys(recorderEnvSchema.shape), ...platformEnvNames(RECORDED_PLATFORMS, RECORDER_PLATFORM_PARTS)];
}

export function loadRecorderConfig(env: Record<string, string | undefined> = process.env): RecorderConfig {
  const base = parseEnv(recorderEnvSchema, env);
  const issues: string[] = [];
  const platforms = resolvePlatforms(env, RECORDED_PLATFORMS, RECORDER_PLATFORM_PARTS, issues);
  const exchanges: ExchangeKey[] = [];
  for (const e of base.RECORDER_EXCHANGES) {
    if (isExchange(e)) exchanges.push(e);
    else issues.push(`RECORDER_EXCHANGES: unknown exchange "${e}" (venue_b, venue_c, venue_a_us)`);
  }
  const rates = { ...DEFAULT_REST_RATES };
  for (const entry of base.RECORDER_REST_RATES) {
    const m = /^([a-z_]+)=(\d+(?:\.\d+)?)$/.exec(entry);
    if (!m || !isExchange(m[1] ?? '')) {
      issues.push(`RECORDER_REST_RATES: "${entry}" is not exchange=requestsPerSecond`);
      continue;
    }
    rates[m[1] as ExchangeKey] = Number(m[2]);
  }
  const reconcile = new Set<string>();
  for (const e of base.RECORDER_RECONCILE_EXCHANGES) {
    if (isExchange(e)) reconcile.add(e);
    else issues.push(`RECORDER_RECONCILE_EXCHANGES: unknown exchange "${e}"`);
  }
  if (base.RECORDER_RECONNECT_MIN_MS > base.RECORDER_RECONNECT_MAX_MS) {
    issues.push('RECORDER_RECONNECT_MIN_MS: must not exceed RECORDER_RECONNECT_MAX_MS');
  }
  if (issues.length > 0) throw new ConfigError(issues);
  const venue = (e: ExchangeKey, tickers: string[], prefixes: string[], series: string[]): VenueSettings => ({
    tickers,
    prefixes: tickers.length === 0 && prefixes.length === 0 && series.length === 0 ? ['*'] : prefixes,
    series,
    restRate: rates[e],
    reconcile: reconcile.has(e),
  });
  return {
    ...base,
    exchanges,
    platforms,
    venues: {
      venue_b: venue(
        'venue_b',
        base.RECORDER_VENUE_B_TICKERS,
        base.RECORDER_VENUE_B_PREFIXES,
        base.RECORDER_VENUE_B_SERIES,
      ),
      venue_c: venue(
        'venue_c',
        base.RECORDER_VENUE_C_TICKERS,
        base.RECORDER_VENUE_C_PREFIXES,
        base.RECORDER_VENUE_C_SERIES,
      ),
      venue_a_us: venue(
        'venue_a_us',
        base.RECORDER_VENUE_A_US_TICKERS,
        base.RECORDER_VENUE_A_US_PREFIXES,
        base.RECORDER_VENUE_A_US_SERIES,
      ),
    },
  };
}
