import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { authEnvShape, PLATFORM_KEYS, type PlatformKey } from '@depthgate/auth';
import {
  ConfigError,
  envBool,
  envInt,
  envList,
  envLogLevel,
  envOptionalString,
  envString,
  envUrl,
  group,
  parseEnv,
  secret,
  type KalshiCredentials,
  type PolymarketUsCredentials,
  signedVenueCredentials,
  signedVenueEnvShape,
} from '@depthgate/service-kit';

/**
 * Every gateway setting, parsed once from the environment. README.md lists them with their defaults.
 * Upstream defaults are the real production URLs from upstreams.md; each is overridable (e.g. the simulator).
 */
export const gatewayEnvSchema = z.object({
  ...authEnvShape,
  GATEWAY_PORT: envInt(7080, { min: 0, max: 65535 }),
  GATEWAY_HOST: envString('127.0.0.1'),
  /** Several gateway processes may listen on the same port (one per core on a host; Kubernetes uses replicas). */
  GATEWAY_REUSE_PORT: envBool(false),
  LOG_LEVEL: envLogLevel(),
  ACCESS_LOG: envBool(true),
  /** After SIGTERM: readiness turns red, then this long later new connections are refused. */
  SHUTDOWN_DELAY_MS: envInt(0, { min: 0, max: 120_000 }),
  /** After that, in-flight requests get this long to finish. */
  DRAIN_TIMEOUT_MS: envInt(15_000, { min: 0, max: 600_000 }),

  UPSTREAM_VENUE_A_URL: envUrl('https://gamma-api.polymarket.com'),
  UPSTREAM_VENUE_A_CLOB_URL: envUrl('https://clob.polymarket.com'),
  UPSTREAM_VENUE_A_DATA_URL: envUrl('https://data-api.polymarket.com'),
  UPSTREAM_VENUE_A_US_URL: envUrl('https://gateway.polymarket.us'),
  UPSTREAM_VENUE_A_US_AUTH_URL: envUrl('https://api.polymarket.us'),
  UPSTREAM_VENUE_B_URL: envUrl('https://api.elections.kalshi.com/trade-api/v2'),
  UPSTREAM_VENUE_C_URL: envUrl('https://api.gemini.com'),
  UPSTREAM_VENUE_D_URL: envUrl('https://api.exchange.coinbase.com'),
  UPSTREAM_VENUE_E_URL: envUrl('https://forecastex.com/api'),
  UPSTREAM_VENUE_E_PORTAL_URL: envUrl('https://localhost:5000/v1/api'),
  /** PEM the IBKR Client Portal's certificate must chain to; unset: its self-signed certificate is accepted (that host only). */
  IBKR_PORTAL_CA_FILE: envOptionalString(),
  /** Keep-alive call to the portal (`/tickle`), so its session does not expire; 0 disables. */
  IBKR_TICKLE_INTERVAL_MS: envInt(60_000, { min: 0, max: 3_600_000 }),

  /** Platforms answered with 503 `upstream_unavailable` without calling them. */
  DISABLED_PLATFORMS: envList([]),
  /** Whole-request upstream deadline (until the response headers). */
  UPSTREAM_TIMEOUT_MS: envInt(10_000, { min: 100, max: 300_000 }),
  UPSTREAM_CONNECT_TIMEOUT_MS: envInt(3_000, { min: 50, max: 60_000 }),
  /** Longest silence while an upstream body streams before the response is cut. */
  UPSTREAM_BODY_TIMEOUT_MS: envInt(30_000, { min: 100, max: 600_000 }),
  /** Keep-alive connections per upstream origin. */
  UPSTREAM_CONNECTIONS: envInt(64, { min: 1, max: 4096 }),

  /** Per-platform upstream budgets `platform=rate[/burst]` (requests per second), overriding the documented defaults; 0 = unlimited. */
  UPSTREAM_BUDGETS: envList([]),
  /** A request over budget waits at most this long for its turn, then gets 429 `upstream_rate_limited`. */
  UPSTREAM_BUDGET_MAX_WAIT_MS: envInt(1_000, { min: 0, max: 60_000 }),

  /** Consecutive upstream failures (errors, timeouts, 5xx) that open a platform's circuit. */
  CIRCUIT_FAILURE_THRESHOLD: envInt(5, { min: 1, max: 1000 }),
  /** How long an open circuit answers 503 before one probe request is let through (half-open). */
  CIRCUIT_OPEN_MS: envInt(10_000, { min: 100, max: 600_000 }),

  /** Identical concurrent GETs share one upstream call. */
  COALESCE: envBool(true),
  /** Opt-in micro-cache: `platform:/path/pattern=ttlMs`, `*` one segment, `**` any rest, e.g. `venue-b:/markets/*\/orderbook=250`. */
  CACHE_ROUTES: envList([]),
  CACHE_MAX_BYTES: envInt(64 * 1024 * 1024, { min: 0, max: 4 * 1024 * 1024 * 1024 }),
  /** Largest upstream body kept for late joiners of a coalesced call or for the cache. */
  MAX_SHARED_BODY_BYTES: envInt(4 * 1024 * 1024, { min: 0, max: 256 * 1024 * 1024 }),

  /** Reuse a Kalshi RSA-PSS signature for the same method and path this long (0: sign every request). */
  KALSHI_SIGNATURE_REUSE_MS: envInt(0, { min: 0, max: 5_000 }),
  ...signedVenueEnvShape,
  POLYMARKET_CLOB_ADDRESS: envOptionalString(),
  POLYMARKET_CLOB_API_KEY: envOptionalString(),
  POLYMARKET_CLOB_SECRET: envOptionalString(),
  POLYMARKET_CLOB_SECRET_FILE: envOptionalString(),
  POLYMARKET_CLOB_PASSPHRASE: envOptionalString(),
  POLYMARKET_CLOB_PASSPHRASE_FILE: envOptionalString(),
  /** [U] whether the CLOB L2 signature covers the query string; upstreams.md leaves it open. */
  POLYMARKET_CLOB_SIGN_QUERY: envBool(false),
  COINBASE_API_KEY: envOptionalString(),
  COINBASE_API_SECRET: envOptionalString(),
  COINBASE_API_SECRET_FILE: envOptionalString(),
  COINBASE_API_PASSPHRASE: envOptionalString(),
  COINBASE_API_PASSPHRASE_FILE: envOptionalString(),
  /** [3P]/[U] whether the Coinbase Exchange signature covers the query string (believed yes). */
  COINBASE_SIGN_QUERY: envBool(true),
  COINBASE_JWT_KEY_NAME: envOptionalString(),
  COINBASE_JWT_PRIVATE_KEY: envOptionalString(),
  COINBASE_JWT_PRIVATE_KEY_FILE: envOptionalString(),
});

export type GatewayEnv = z.output<typeof gatewayEnvSchema>;

// Shared with the recorder, which signs its feed handshakes with the same credentials.
export type { KalshiCredentials, PolymarketUsCredentials };
export interface PolymarketClobCredentials {
  address: string;
  apiKey: string;
  secret: string;
  passphrase: string;
}
export interface CoinbaseHmacCredentials {
  key: string;
  secret: string;
  passphrase: string;
}
export interface CoinbaseJwtCredentials {
  keyName: string;
  privateKeyPem: string;
}

export interface Budget {
  perSecond: number;
  burst: number;
}

export interface CacheRule {
  platform: PlatformKey;
  pattern: string;
  ttlMs: number;
}

export interface GatewayConfig extends GatewayEnv {
  credentials: {
    kalshi?: KalshiCredentials;
    polymarketUs?: PolymarketUsCredentials;
    polymarketClob?: PolymarketClobCredentials;
    coinbase?: CoinbaseHmacCredentials;
    coinbaseJwt?: CoinbaseJwtCredentials;
  };
  ibkrPortalCa?: string;
  budgets: Record<PlatformKey, Budget | null>;
  cacheRules: CacheRule[];
  disabled: ReadonlySet<PlatformKey>;
}

/**
 * Upstream budgets from the documented limits (upstreams.md). A limit of L requests per window W becomes a rate of
 * 0.95·L/W with a burst of 0.05·L: in any window of length W, however it is aligned, GCRA then lets through at
 * most 0.95·L + 0.05·L = L. Limits documented as token buckets with a burst keep their own burst. All gateway
 * replicas share each budget through Redis. Override with UPSTREAM_BUDGETS (e.g. a higher Kalshi tier).
 */
export const DEFAULT_BUDGETS: Record<PlatformKey, Budget> = {
  'venue-a': { perSecond: 380, burst: 200 }, // Gamma: 4,000 per 10 s [V]
  'venue-a-clob': { perSecond: 142.5, burst: 75 }, // CLOB /book: 1,500 per 10 s [V]
  'venue-a-us': { perSecond: 19, burst: 1 }, // 20 per second, per key and per IP [V]
  'venue-b': { perSecond: 19, burst: 1 }, // Kalshi Basic tier: 20 reads per second [V]
  'venue-c': { perSecond: 1.9, burst: 6 }, // Gemini public: 120 per minute [V]
  'venue-d': { perSecond: 10, burst: 15 }, // Coinbase public: token bucket, 10/s with bursts of 15 [V]
  'venue-e': { perSecond: 9.5, burst: 1 }, // IBKR Client Portal: ~10 per second [U]
};

function isPlatform(value: string): value is PlatformKey {
  return (PLATFORM_KEYS as readonly string[]).includes(value);
}

function parseBudgets(entries: string[], issues: string[]): Record<PlatformKey, Budget | null> {
  const budgets: Record<PlatformKey, Budget | null> = { ...DEFAULT_BUDGETS };
  for (const entry of entries) {
    const m = /^([a-z-]+)=(\d+(?:\.\d+)?)(?:\/(\d+))?$/.exec(entry);
    if (!m || !isPlatform(m[1] ?? '')) {
      issues.push(`UPSTREAM_BUDGETS: "${entry}" is not platform=rate[/burst] with a known platform`);
      continue;
    }
    const rate = Number(m[2]);
    budgets[m[1] as PlatformKey] =
      rate === 0 ? null : { perSecond: rate, burst: m[3] ? Number(m[3]) : Math.max(1, Math.ceil(rate)) };
  }
  return budgets;
}

function parseCacheRules(entries: string[], issues: string[]): CacheRule[] {
  const rules: CacheRule[] = [];
  for (const entry of entries) {
    const m = /^([a-z-]+):(\/[A-Za-z0-9._~*/-]*)=(\d+)$/.exec(entry);
    if (!m || !isPlatform(m[1] ?? '')) {
      issues.push(`CACHE_ROUTES: "${entry}" is not platform:/path/pattern=ttlMs with a known platform`);
      continue;
    }
    rules.push({ platform: m[1] as PlatformKey, pattern: m[2] ?? '/', ttlMs: Number(m[3]) });
  }
  return rules;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const base = parseEnv(gatewayEnvSchema, env);
  const issues: string[] = [];
  const { kalshi, polymarketUs } = signedVenueCredentials(base, issues);
  const polymarketClob = group(
    'Polymarket CLOB',
    {
      POLYMARKET_CLOB_ADDRESS: base.POLYMARKET_CLOB_ADDRESS,
      POLYMARKET_CLOB_API_KEY: base.POLYMARKET_CLOB_API_KEY,
      POLYMARKET_CLOB_SECRET: secret(base, 'POLYMARKET_CLOB_SECRET', issues),
      POLYMARKET_CLOB_PASSPHRASE: secret(base, 'POLYMARKET_CLOB_PASSPHRASE', issues),
    },
    (p) => ({
      address: p.POLYMARKET_CLOB_ADDRESS ?? '',
      apiKey: p.POLYMARKET_CLOB_API_KEY ?? '',
      secret: p.POLYMARKET_CLOB_SECRET ?? '',
      passphrase: p.POLYMARKET_CLOB_PASSPHRASE ?? '',
    }),
    issues,
  );
  const coinbase = group(
    'Coinbase',
    {
      COINBASE_API_KEY: base.COINBASE_API_KEY,
      COINBASE_API_SECRET: secret(base, 'COINBASE_API_SECRET', issues),
      COINBASE_API_PASSPHRASE: secret(base, 'COINBASE_API_PASSPHRASE', issues),
    },
    (p) => ({
      key: p.COINBASE_API_KEY ?? '',
      secret: p.COINBASE_API_SECRET ?? '',
      passphrase: p.COINBASE_API_PASSPHRASE ?? '',
    }),
    issues,
  );
  const coinbaseJwt = group(
    'Coinbase JWT',
    {
      COINBASE_JWT_KEY_NAME: base.COINBASE_JWT_KEY_NAME,
      COINBASE_JWT_PRIVATE_KEY: secret(base, 'COINBASE_JWT_PRIVATE_KEY', issues),
    },
    (p) => ({ keyName: p.COINBASE_JWT_KEY_NAME ?? '', privateKeyPem: p.COINBASE_JWT_PRIVATE_KEY ?? '' }),
    issues,
  );
  let ibkrPortalCa: string | undefined;
  if (base.IBKR_PORTAL_CA_FILE) {
    try {
      ibkrPortalCa = readFileSync(base.IBKR_PORTAL_CA_FILE, 'utf8');
    } catch {
      issues.push(`IBKR_PORTAL_CA_FILE: cannot read ${base.IBKR_PORTAL_CA_FILE}`);
    }
  }
  const disabled = new Set<PlatformKey>();
  for (const name of base.DISABLED_PLATFORMS) {
    if (isPlatform(name)) disabled.add(name);
    else issues.push(`DISABLED_PLATFORMS: unknown platform "${name}"`);
  }
  const budgets = parseBudgets(base.UPSTREAM_BUDGETS, issues);
  const cacheRules = parseCacheRules(base.CACHE_ROUTES, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    ...base,
    credentials: { kalshi, polymarketUs, polymarketClob, coinbase, coinbaseJwt },
    ibkrPortalCa,
    budgets,
    cacheRules,
    disabled,
  };
}
