import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  Exchanges,
  PLATFORMS,
  type RECORDED_PLATFORMS,
  exchangesOf,
  feedLiveness,
  mainFeedHeartbeat,
  platformEnvNames,
  recordedPlatforms,
  resolvePlatforms,
  type EnvParts,
  type ExchangeKey,
  type Registry,
  type ResolvedPlatform,
  type ResolvedPlatforms,
} from '@depthgate/platforms';
import { clickHouseEnvShape } from '@depthgate/history-store';
import {
  ConfigError,
  envBool,
  envInt,
  envList,
  envLogLevel,
  envOptionalInt,
  envOptionalString,
  envSentinels,
  envString,
  envTlsChoice,
  parseEnv,
  type RedisTarget,
} from '@depthgate/service-kit';
import { ADAPTERS, type Adapters } from './venues/registry';

const MiB = 1024 * 1024;

/**
 * What the recorder configures of each recorded platform (its descriptor in @depthgate/platforms): the feed, the main
 * REST host (discovery, reconciliation) and the credentials that sign the feed handshake. Defaults are the real
 * platforms (upstreams.md); `./dev up --sim` points them at the simulator.
 */
export const RECORDER_PLATFORM_PARTS: EnvParts = { hosts: 'main', feeds: true, credentials: true };

/** The recorder's own settings (those of every exchange and adapter are added by `recorderEnvShape`). */
const ownShape = {
  ...clickHouseEnvShape,
  RECORDER_PORT: envInt(7082, { min: 0, max: 65535 }),
  RECORDER_HOST: envString('127.0.0.1'),
  LOG_LEVEL: envLogLevel(),

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
  /**
   * No message, heartbeat or ping for this long: the connection is replaced (a gap, reason `stall`). Unset: per
   * exchange, twice its venue's heartbeat interval plus 1 s (@depthgate/platforms `feedLiveness`, a false alarm being
   * a gap); set: for every exchange.
   */
  RECORDER_STALL_TIMEOUT_MS: envOptionalInt({ min: 100, max: 600_000 }),
  /** WebSocket pings we send, or the venue's keep-alive text (Polymarket CLOB's `PING`) (0: none). */
  RECORDER_PING_INTERVAL_MS: envInt(10_000, { min: 0, max: 600_000 }),
  RECORDER_RECONNECT_MIN_MS: envInt(500, { min: 10, max: 60_000 }),
  RECORDER_RECONNECT_MAX_MS: envInt(30_000, { min: 10, max: 600_000 }),
  /** Each ticker is compared at most this often. */
  RECORDER_RECONCILE_INTERVAL_MS: envInt(60_000, { min: 100, max: 86_400_000 }),
  /**
   * Reconciliation's REST reads of an exchange stay within this fraction of the platform's documented limit (its
   * descriptor's `budget.perSecond`): reads are at least 1 / (fraction × budget) seconds apart, so many tickers are
   * each compared less often rather than the budget exceeded.
   */
  RECORDER_RECONCILE_BUDGET: z.coerce.number().gt(0).lte(1).default(0.1),
  /** A mismatch lasting this long after the REST answer is a gap `divergence` (and the ticker is resubscribed). */
  RECORDER_RECONCILE_GRACE_MS: envInt(3000, { min: 0, max: 600_000 }),

  /** Record the trades of every recorded exchange (the feeds' trade messages, REST backfill of missed windows). */
  RECORDER_TRADES: envBool(true),
  /** REST requests one missed window's backfill may make; a window needing more is partly a trades gap. */
  RECORDER_TRADES_BACKFILL_MAX_PAGES: envInt(20, { min: 1, max: 10_000 }),
  /** A missed window is read back this long after the feed carries the ticker's trades again (REST may lag). */
  RECORDER_TRADES_BACKFILL_DELAY_MS: envInt(2000, { min: 0, max: 600_000 }),
  /** Each ticker's trades are read back from REST this often, for trades a feed lost silently (0: never). */
  RECORDER_TRADES_AUDIT_INTERVAL_MS: envInt(60_000, { min: 0, max: 86_400_000 }),

  /** An insert holds at most this many rows (one part: under max_insert_block_size). */
  RECORDER_BATCH_MAX_ROWS: envInt(200_000, { min: 1, max: 1_000_000 }),
  RECORDER_BATCH_MAX_BYTES: envInt(32 * MiB, { min: 1024, max: 256 * MiB }),
  /** A row waits at most this long before its batch is sent (rows are queryable about this much later). */
  RECORDER_BATCH_MAX_DELAY_MS: envInt(500, { min: 10, max: 60_000 }),
  /**
   * Sealed batches kept in memory while ClickHouse is slow or away; beyond it they go to the spool (one that cannot be
   * written keeps them in memory, and past this bound the feeds are paused).
   */
  RECORDER_BUFFER_MAX_BYTES: envInt(64 * MiB, { min: 64 * 1024, max: 4096 * MiB }),
  /** Where batches wait when memory is full; a persistent volume in production. */
  RECORDER_SPOOL_DIR: envString(path.join(os.tmpdir(), 'depthgate-recorder-spool')),
  /** Spool bound: when reached, the feeds are paused (see docs/history-internals.md, backpressure). */
  RECORDER_SPOOL_MAX_BYTES: envInt(8 * 1024 * MiB, { min: MiB, max: Number.MAX_SAFE_INTEGER }),
  RECORDER_SPOOL_FILE_BYTES: envInt(64 * MiB, { min: 64 * 1024, max: 1024 * MiB }),
  /** One insert may take this long before it is abandoned (then probed and retried). */
  RECORDER_INSERT_TIMEOUT_MS: envInt(30_000, { min: 1000, max: 600_000 }),
  /** After SIGTERM, buffered rows get this long to reach ClickHouse; the rest is spooled. */
  RECORDER_SHUTDOWN_FLUSH_MS: envInt(20_000, { min: 0, max: 300_000 }),

  /**
   * Redundant recording (several recorders, one owner per ticker; docs/history-internals.md): the Redis holding the
   * terms, leases and ticker owners, `redis://` or `rediss://`. Unset: solo mode (this recorder owns every ticker).
   * With RECORDER_REDIS_SENTINELS its host is ignored, as REDIS_URL's is for the gateway.
   */
  RECORDER_REDIS_URL: envOptionalString(),
  /** Redis Sentinel for RECORDER_REDIS_URL: `host:port` of the sentinels, comma-separated (as REDIS_SENTINELS). */
  RECORDER_REDIS_SENTINELS: envSentinels(),
  RECORDER_REDIS_SENTINEL_NAME: envString('mymaster'),
  RECORDER_REDIS_SENTINEL_PASSWORD: envOptionalString(),
  /** TLS to the sentinels: `true` or `false`; unset: as RECORDER_REDIS_URL's scheme says. */
  RECORDER_REDIS_SENTINEL_TLS: envTlsChoice(),
  RECORDER_REDIS_TLS_CA_FILE: envOptionalString(),
  /** Prefix of every Redis key of the recorders; recorders sharing tickers must use the same one. */
  RECORDER_REDIS_PREFIX: envString('dg:rec:'),
  /** This recorder's name in Redis (the pod name); default: host name and process id. */
  RECORDER_ID: envString(`${os.hostname()}-${process.pid}`),
  /** A recorder that has not renewed its lease for this long is dead; its tickers are taken over. */
  RECORDER_LEASE_TTL_MS: envInt(5000, { min: 1000, max: 600_000 }),
  /** What a standby keeps of each ticker's rows, to take it over without a gap. */
  RECORDER_STANDBY_BUFFER_MS: envInt(20_000, { min: 1000, max: 600_000 }),
  /** A ticker whose book the owner lost waits this long for a live peer to take it before the owner writes its gap. */
  RECORDER_OFFER_TIMEOUT_MS: envInt(1000, { min: 0, max: 60_000 }),
  /** The owner hands its tickers to a live peer when its inserts have failed this long (or its spool is full). */
  RECORDER_HANDOVER_ON_WRITE_FAILURE_MS: envInt(60_000, { min: 1000, max: 86_400_000 }),
};

/** The ticker selection variables of an exchange: `RECORDER_VENUE_B_TICKERS`, `…_PREFIXES`, `…_SERIES`. */
export function selectionEnv(exchange: string): { tickers: string; prefixes: string; series: string } {
  const p = `RECORDER_${Exchanges.envName(exchange)}`;
  return { tickers: `${p}_TICKERS`, prefixes: `${p}_PREFIXES`, series: `${p}_SERIES` };
}

/**
 * Every recorder setting, as a zod shape, for a registry's recorded exchanges and their adapters: the recorder's
 * own; per exchange, which tickers (explicit lists, prefixes of listed markets — `*`: all —, series; none of the
 * three set: every listed market, up to RECORDER_MAX_TICKERS); which exchanges to record and to reconcile; each
 * adapter's own settings. docs/configuration.md ("Recorder") lists them with their defaults.
 */
export function recorderEnvShape(exchanges: Exchanges, adapters: Adapters) {
  const perExchange: Record<string, z.ZodType> = {};
  for (const e of exchanges.keys) {
    const names = selectionEnv(e);
    perExchange[names.tickers] = envList([]);
    perExchange[names.prefixes] = envList([]);
    perExchange[names.series] = envList([]);
    Object.assign(perExchange, adapterOf(adapters, e).settings);
  }
  return {
    ...ownShape,
    /** Exchanges to record (those whose feed needs credentials are skipped, with a warning, when none are set). */
    RECORDER_EXCHANGES: envList([...exchanges.keys]),
    /** Exchanges whose books are compared with the venue's REST book (by default every one with a REST book). */
    RECORDER_RECONCILE_EXCHANGES: envList(exchanges.keys.filter((e) => adapterOf(adapters, e).reconcile)),
    ...perExchange,
  };
}

/** The documented request rate (per second) of the platform an exchange is recorded from (its descriptor's budget). */
function descriptorOf(registry: Registry, exchanges: Exchanges<ExchangeKey>, exchange: ExchangeKey) {
  const descriptor = registry[exchanges.info(exchange).platform];
  if (!descriptor) throw new Error(`the recorded exchange ${exchange} has no platform descriptor`);
  return descriptor;
}

function budgetOf(registry: Registry, exchanges: Exchanges<ExchangeKey>, exchange: ExchangeKey): number {
  return descriptorOf(registry, exchanges, exchange).budget.perSecond;
}

function adapterOf(adapters: Adapters, exchange: string) {
  const adapter = adapters[exchange];
  if (!adapter) throw new Error(`the recorder has no adapter for the recorded exchange ${exchange}`);
  return adapter;
}

export type RecorderEnv = z.output<z.ZodObject<typeof ownShape>> & {
  RECORDER_EXCHANGES: string[];
  RECORDER_RECONCILE_EXCHANGES: string[];
};

export interface VenueSettings {
  tickers: string[];
  prefixes: string[];
  series: string[];
  restRate: number;
  reconcile: boolean;
  /**
   * Reconciliation reads per second at most: RECORDER_RECONCILE_BUDGET × the platform's documented limit
   * (`budget.perSecond` of its descriptor).
   */
  reconcileReadsPerSecond: number;
  /** The adapter's own settings, parsed. */
  adapter: Record<string, unknown>;
}

export interface RecorderConfig extends RecorderEnv {
  /** The exchanges to record, by stored code. */
  exchanges: ExchangeKey[];
  /** Every recorded exchange of the registry (the vocabulary the writer counts rows by). */
  registry: Exchanges<ExchangeKey>;
  /** Each recorded platform's feed and REST URLs, credentials and signer, by platform key. */
  platforms: ResolvedPlatforms<typeof RECORDED_PLATFORMS> & Readonly<Record<string, ResolvedPlatform>>;
  venues: Record<ExchangeKey, VenueSettings>;
  adapters: Adapters;
}

/** Where the recorders' Redis is, or undefined in solo mode (RECORDER_REDIS_URL unset). */
export function recorderRedisTarget(config: RecorderEnv): RedisTarget | undefined {
  if (config.RECORDER_REDIS_URL === undefined) return undefined;
  return {
    url: config.RECORDER_REDIS_URL,
    sentinels: config.RECORDER_REDIS_SENTINELS,
    name: config.RECORDER_REDIS_SENTINEL_NAME,
    sentinelPassword: config.RECORDER_REDIS_SENTINEL_PASSWORD,
    sentinelTls:
      config.RECORDER_REDIS_SENTINEL_TLS === undefined ? undefined : config.RECORDER_REDIS_SENTINEL_TLS === 'true',
    tlsCaFile: config.RECORDER_REDIS_TLS_CA_FILE,
  };
}

/** Every variable the recorder reads, its own and the recorded platforms' (docs/configuration.md completeness). */
export function recorderEnvNames(registry: Registry = PLATFORMS, adapters: Adapters = ADAPTERS): string[] {
  return [
    ...Object.keys(recorderEnvShape(exchangesOf(registry), adapters)),
    ...platformEnvNames(recordedPlatforms(registry), RECORDER_PLATFORM_PARTS),
  ];
}

/**
 * Parses the recorder's configuration: the product's registry and adapters by default; a test that adds a fixture
 * recorded exchange passes its registry and adapters.
 */
export function loadRecorderConfig(
  env: Record<string, string | undefined> = process.env,
  registry: Registry = PLATFORMS,
  adapters: Adapters = ADAPTERS,
): RecorderConfig {
  const exchanges = exchangesOf(registry) as Exchanges<ExchangeKey>;
  const base = parseEnv(z.object(recorderEnvShape(exchanges, adapters)), env) as RecorderEnv & Record<string, unknown>;
  const issues: string[] = [];
  const platforms = resolvePlatforms(env, recordedPlatforms(registry), RECORDER_PLATFORM_PARTS, issues);
  const known = exchanges.describe();
  const chosen: ExchangeKey[] = [];
  for (const e of base.RECORDER_EXCHANGES) {
    if (exchanges.has(e)) chosen.push(e);
    else issues.push(`RECORDER_EXCHANGES: unknown exchange "${e}" (${known})`);
  }
  const rates: Record<string, number> = Object.fromEntries(
    exchanges.keys.map((e) => [e, adapterOf(adapters, e).restRate]),
  );
  for (const entry of base.RECORDER_REST_RATES) {
    const m = /^([a-z0-9_]+)=(\d+(?:\.\d+)?)$/.exec(entry);
    if (!m || !exchanges.has(m[1] ?? '')) {
      issues.push(`RECORDER_REST_RATES: "${entry}" is not exchange=requestsPerSecond`);
      continue;
    }
    rates[m[1] as string] = Number(m[2]);
  }
  const reconcile = new Set<string>();
  for (const e of base.RECORDER_RECONCILE_EXCHANGES) {
    if (exchanges.has(e)) reconcile.add(e);
    else issues.push(`RECORDER_RECONCILE_EXCHANGES: unknown exchange "${e}"`);
  }
  if (base.RECORDER_REDIS_URL !== undefined) {
    let scheme: string | undefined;
    try {
      scheme = new URL(base.RECORDER_REDIS_URL).protocol;
    } catch {
      scheme = undefined;
    }
    if (scheme !== 'redis:' && scheme !== 'rediss:') {
      issues.push('RECORDER_REDIS_URL: expected a redis:// or rediss:// URL');
    }
  } else if (base.RECORDER_REDIS_SENTINELS.length > 0) {
    issues.push('RECORDER_REDIS_SENTINELS: needs RECORDER_REDIS_URL (its scheme, user, password and database)');
  }
  if (base.RECORDER_REDIS_URL !== undefined && base.RECORDER_STANDBY_BUFFER_MS < 3 * base.RECORDER_LEASE_TTL_MS) {
    // A takeover of a dead owner waits two TTLs and reads ClickHouse: the standby's buffer must reach back past that.
    issues.push('RECORDER_STANDBY_BUFFER_MS: must be at least 3 × RECORDER_LEASE_TTL_MS');
  }
  const stallMs = base.RECORDER_STALL_TIMEOUT_MS;
  for (const e of stallMs === undefined ? [] : chosen) {
    // Where the feed's only sign of life on a quiet market is the venue's answer to our keep-alive, a threshold not
    // above that keep-alive's interval cuts every quiet connection as stalled, again and again. (A venue's own
    // heartbeat is not checked: the override is there for a venue, or a simulator, whose rhythm is not its descriptor's.)
    const descriptor = descriptorOf(registry, exchanges, e);
    const { pingMs } = feedLiveness(descriptor, { stallMs, pingMs: base.RECORDER_PING_INTERVAL_MS, falseAlarm: 'gap' });
    if (mainFeedHeartbeat(descriptor)?.kind === 'answer' && (stallMs as number) <= pingMs) {
      issues.push(
        `RECORDER_STALL_TIMEOUT_MS: ${stallMs} ms is not longer than ${e}'s keep-alive interval (${pingMs} ms), whose answer is its quiet feed's only sign of life: every quiet connection would be cut as stalled; make it longer, or RECORDER_PING_INTERVAL_MS shorter`,
      );
    }
  }
  if (base.RECORDER_RECONNECT_MIN_MS > base.RECORDER_RECONNECT_MAX_MS) {
    issues.push('RECORDER_RECONNECT_MIN_MS: must not exceed RECORDER_RECONNECT_MAX_MS');
  }
  if (issues.length > 0) throw new ConfigError(issues);
  const venues = {} as Record<ExchangeKey, VenueSettings>;
  for (const e of exchanges.keys) {
    const names = selectionEnv(e);
    const tickers = base[names.tickers] as string[];
    const prefixes = base[names.prefixes] as string[];
    const series = base[names.series] as string[];
    venues[e] = {
      tickers,
      prefixes: tickers.length === 0 && prefixes.length === 0 && series.length === 0 ? ['*'] : prefixes,
      series,
      restRate: rates[e] as number,
      reconcile: reconcile.has(e),
      reconcileReadsPerSecond: base.RECORDER_RECONCILE_BUDGET * budgetOf(registry, exchanges, e),
      adapter: Object.fromEntries(Object.keys(adapterOf(adapters, e).settings).map((k) => [k, base[k]])),
    };
  }
  // Exchanges in stored-code order, whatever order RECORDER_EXCHANGES lists them in.
  const exchangesToRecord = exchanges.keys.filter((e) => chosen.includes(e));
  return {
    ...base,
    exchanges: exchangesToRecord,
    registry: exchanges,
    platforms: platforms as RecorderConfig['platforms'],
    venues,
    adapters,
  };
}
