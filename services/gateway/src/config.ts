import { z } from 'zod';
import { authEnvShape } from '@depthgate/auth';
import {
  ALL_PARTS,
  defaultBudgets,
  PLATFORMS,
  platformEnvNames,
  resolvePlatforms,
  type Budget,
  type Registry,
  type ResolvedPlatforms,
} from '@depthgate/platforms';
import {
  ConfigError,
  envBool,
  envInt,
  envList,
  envLogLevel,
  envOptionalString,
  envString,
  parseEnv,
} from '@depthgate/service-kit';
import { wsEnvShape } from './ws/config';

/**
 * Every gateway setting, parsed once from the environment. docs/configuration.md lists them with their defaults. The platforms'
 * own variables (upstream URLs, credentials, platform settings) come from their descriptors (@depthgate/platforms):
 * defaults are the real production URLs; each is overridable (e.g. the simulator).
 */
export const gatewayEnvSchema = z.object({
  ...authEnvShape,
  GATEWAY_PORT: envInt(7080, { min: 0, max: 65535 }),
  GATEWAY_HOST: envString('127.0.0.1'),
  /** Several gateway processes may listen on the same port (one per core on a host; Kubernetes uses replicas). */
  GATEWAY_REUSE_PORT: envBool(false),
  /**
   * Routing by host: a request whose Host is `{platform}.{GATEWAY_BASE_DOMAIN}` goes to that platform with its path
   * as the resource (for clients that drop path prefixes). Unset: off.
   */
  GATEWAY_BASE_DOMAIN: envOptionalString(),
  /** Largest body of a read-only POST (413 `payload_too_large` above it; never buffered beyond it). */
  GATEWAY_MAX_BODY_BYTES: envInt(256 * 1024, { min: 1, max: 16 * 1024 * 1024 }),
  LOG_LEVEL: envLogLevel(),
  ACCESS_LOG: envBool(true),
  /** After SIGTERM: readiness turns red, then this long later new connections are refused. */
  SHUTDOWN_DELAY_MS: envInt(0, { min: 0, max: 120_000 }),
  /** After that, in-flight requests get this long to finish. */
  DRAIN_TIMEOUT_MS: envInt(15_000, { min: 0, max: 600_000 }),

  /** Platforms answered with 503 `upstream_unavailable` without calling them. */
  DISABLED_PLATFORMS: envList([]),
  /** Whole-request upstream deadline (until the response headers; waiting for a pool connection included). */
  UPSTREAM_TIMEOUT_MS: envInt(10_000, { min: 100, max: 300_000 }),
  UPSTREAM_CONNECT_TIMEOUT_MS: envInt(3_000, { min: 50, max: 60_000 }),
  /**
   * Longest silence while an upstream body streams before the response is cut; also the longest a caller may take
   * nothing of an answer with more waiting for it (holding the upstream body back) before it is cut.
   */
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

  /** Identical concurrent requests (GETs, and read-only POSTs with identical bodies) share one upstream call. */
  COALESCE: envBool(true),
  /** Opt-in micro-cache: `platform:/path/pattern=ttlMs`, `*` one segment, `**` any rest, e.g. `venue-b:/markets/*\/orderbook=250`. */
  CACHE_ROUTES: envList([]),
  CACHE_MAX_BYTES: envInt(64 * 1024 * 1024, { min: 0, max: 4 * 1024 * 1024 * 1024 }),
  /** Largest upstream body kept for late joiners of a coalesced call or for the cache. */
  MAX_SHARED_BODY_BYTES: envInt(4 * 1024 * 1024, { min: 0, max: 256 * 1024 * 1024 }),

  ...wsEnvShape,
});

type GatewayEnv = z.output<typeof gatewayEnvSchema>;

export type { Budget };

export interface CacheRule {
  platform: string;
  pattern: string;
  ttlMs: number;
}

export interface GatewayConfig<R extends Registry = typeof PLATFORMS> extends GatewayEnv {
  /** Each platform as configured: URLs, credentials, settings, signer. */
  platforms: ResolvedPlatforms<R>;
  /** Upstream budget per platform (null: unlimited). */
  budgets: Record<keyof R & string, Budget | null>;
  cacheRules: CacheRule[];
  disabled: ReadonlySet<string>;
  /** GATEWAY_BASE_DOMAIN lower-cased without a trailing dot, or undefined (host routing off). */
  baseDomain: string | undefined;
}

/** Every variable the gateway reads, its own and the platforms' (docs/configuration.md completeness). */
export function gatewayEnvNames(registry: Registry = PLATFORMS): string[] {
  return [...Object.keys(gatewayEnvSchema.shape), ...platformEnvNames(registry, ALL_PARTS)];
}

/**
 * Upstream budgets from the documented limits (each descriptor's `budget`): a limit of L requests per window W is
 * a rate of 0.95·L/W with a burst of 0.05·L, so that in any window of length W, however it is aligned, GCRA lets
 * through at most L. Limits documented as token buckets with a burst keep their own burst. All gateway replicas share
 * each budget through Redis. Override with UPSTREAM_BUDGETS (e.g. a higher Kalshi tier).
 */
function parseBudgets(registry: Registry, entries: string[], issues: string[]): Record<string, Budget | null> {
  const budgets: Record<string, Budget | null> = defaultBudgets(registry);
  for (const entry of entries) {
    const m = /^([a-z0-9-]+)=(\d+(?:\.\d+)?)(?:\/(\d+))?$/.exec(entry);
    if (!m || !Object.hasOwn(registry, m[1] ?? '')) {
      issues.push(`UPSTREAM_BUDGETS: "${entry}" is not platform=rate[/burst] with a known platform`);
      continue;
    }
    const rate = Number(m[2]);
    budgets[m[1] as string] =
      rate === 0 ? null : { perSecond: rate, burst: m[3] ? Number(m[3]) : Math.max(1, Math.ceil(rate)) };
  }
  return budgets;
}

function parseCacheRules(registry: Registry, entries: string[], issues: string[]): CacheRule[] {
  const rules: CacheRule[] = [];
  for (const entry of entries) {
    const m = /^([a-z0-9-]+):(\/[A-Za-z0-9._~*/-]*)=(\d+)$/.exec(entry);
    if (!m || !Object.hasOwn(registry, m[1] ?? '')) {
      issues.push(`CACHE_ROUTES: "${entry}" is not platform:/path/pattern=ttlMs with a known platform`);
      continue;
    }
    rules.push({ platform: m[1] as string, pattern: m[2] ?? '/', ttlMs: Number(m[3]) });
  }
  return rules;
}

const DOMAIN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

function parseBaseDomain(value: string | undefined, issues: string[]): string | undefined {
  if (value === undefined) return undefined;
  const domain = value.trim().toLowerCase().replace(/\.$/, '');
  if (!DOMAIN.test(domain)) {
    issues.push(`GATEWAY_BASE_DOMAIN: "${value}" is not a domain name (e.g. gw.example.com or localhost)`);
    return undefined;
  }
  return domain;
}

/** Parses the gateway's configuration for the platforms of `registry` (default: every platform). */
export function loadConfig<R extends Registry = typeof PLATFORMS>(
  env: Record<string, string | undefined> = process.env,
  registry: R = PLATFORMS as unknown as R,
): GatewayConfig<R> {
  const issues: string[] = [];
  let base: GatewayEnv | undefined;
  try {
    base = parseEnv(gatewayEnvSchema, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
  }
  const platforms = resolvePlatforms(env, registry, ALL_PARTS, issues);
  if (!base) throw new ConfigError(issues);
  const disabled = new Set<string>();
  for (const name of base.DISABLED_PLATFORMS) {
    if (Object.hasOwn(registry, name)) disabled.add(name);
    else issues.push(`DISABLED_PLATFORMS: unknown platform "${name}"`);
  }
  const budgets = parseBudgets(registry, base.UPSTREAM_BUDGETS, issues);
  const cacheRules = parseCacheRules(registry, base.CACHE_ROUTES, issues);
  const baseDomain = parseBaseDomain(base.GATEWAY_BASE_DOMAIN, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return { ...base, platforms, budgets, cacheRules, disabled, baseDomain };
}
