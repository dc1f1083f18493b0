/**
 * What a simulator is started with (SimulatorOptions), and how it becomes the settings every part reads
 * (resolveOptions → ResolvedOptions, settings.ts).
 */
import type { BookPlatform } from './book/types';
import type { CredentialOverrides } from './credentials';
import type { RateLimitConfig } from './http/rate-limit';
import { DEFAULT_ASSUMPTIONS, type Assumptions, type ResolvedOptions, type SimLogger } from './settings';
import type { SimPlatformEntry, Topology } from './topology';

export interface SimulatorOptions {
  /**
   * Platforms served besides the product's own, by key: a descriptor and the simulator's module for it (how a new
   * platform is tried out before it joins the registry; docs/ADD_NEW_PLATFORM.md).
   */
  extraPlatforms?: Readonly<Record<string, SimPlatformEntry>>;
  /** Platforms whose order books move (any name of one: `venue-b`, `kalshi`, `venue_b`, …). Default: all. Every host answers regardless. */
  platforms?: string[];
  seed?: number;
  /** base: control port; platform hosts follow at base+1, base+2, … (HOST_IDS order). 0 or absent: free ports. */
  ports?: { base?: number };
  /** Book updates per second across all moving tickers (0 = only `sim.books.step()`). Default 50. */
  updatesPerSecond?: number;
  /** Distinct levels changed per update (one message for batching feeds), for all or per platform (any of its names). Default 1. */
  changesPerUpdate?: number | Readonly<Record<string, number>>;
  /** Start with the book processes paused. */
  startPaused?: boolean;
  /** Instruments per book platform, by any of its names (defaults: each platform module's `book.tickers`: venue-b 8, venue-a-us 8, venue-c 6, venue-d 3, venue-a-clob 6). */
  tickers?: Readonly<Record<string, number>>;
  /** How long emitted book events stay available to `bookAt`/`events`. Default 60 s. */
  historyRetentionMs?: number;
  /** Cap on retained book events across all tickers (~12 bytes + 32 per level change each). Default 2,000,000. */
  historyMaxEvents?: number;
  /** Rate limits per host: false = none; a host mapped to null = none for it; defaults per upstreams.md. */
  rateLimits?: false | Partial<Record<string, RateLimitConfig | null>>;
  /** IBKR session idle timeout (without `/tickle`). Default 5 min. */
  ibkrIdleTimeoutMs?: number;
  /** Shortcut for `assumptions.kalshiOrderbookRequiresAuth`. */
  kalshiOrderbookRequiresAuth?: boolean;
  assumptions?: Partial<Assumptions>;
  /**
   * Interval of every feed's heartbeats (Kalshi ping frames, Gemini/Polymarket US heartbeat messages, Coinbase's
   * `heartbeat` channel); 0 = none. Default: each venue's own rhythm, its descriptor's
   * `feeds.main.heartbeat` (the rhythm the gateway and the recorder judge silence by).
   */
  heartbeatIntervalMs?: number;
  /** A feed connection with more unsent data than this is cut (a consumer too slow to keep up). Default 64 MiB. */
  maxFeedBufferBytes?: number;
  /**
   * Subscriptions one feed connection may hold, (channel, market) pairs with duplicates counted; a subscribe past it is
   * refused in the venue's error form. Default 10,000.
   */
  maxFeedSubscriptions?: number;
  /**
   * Behave like the CDN in front of the real hosts (Cloudflare for Polymarket, Kalshi, Coinbase, Gemini):
   * `server`, `cf-ray`, a `__cf_bm` `Set-Cookie` and an upstream-timing header on every answer, and gzip for
   * bodies of 1 KiB or more when the client accepts it. Default true; the IBKR portal never has them.
   */
  edge?: boolean;
  /** Record requests for `sim.requests()`. Default true. */
  recordRequests?: boolean;
  /** Most recent requests kept. Default 100,000. */
  maxRecordedRequests?: number;
  /** Day the generated catalogues are anchored to (tickers carry dates). Default 2026-03-07, for stable tickers. */
  catalogDate?: string;
  /** Fixed credentials instead of freshly generated ones (the IBKR certificate is always generated). */
  credentials?: CredentialOverrides;
  logger?: SimLogger;
  /** Clock (epoch ms); for tests. */
  clock?: () => number;
}

function int(name: string, v: number | undefined, fallback: number, min: number, max: number): number {
  const value = v ?? fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${String(v)}`);
  }
  return value;
}

/**
 * `platforms` names platforms of the topology (any name of a book platform, or of another host, whose books are not
 * moved); RangeError naming the first that is not one.
 */
export function checkPlatformNames(names: readonly string[], topology: Topology): void {
  for (const name of names) if (!topology.resolveHosts(name)) throw new RangeError(`unknown platform "${name}"`);
}

export function resolveOptions(o: SimulatorOptions, topology: Topology): ResolvedOptions {
  const books = topology.bookPlatforms();
  const names = o.platforms ?? books;
  checkPlatformNames(names, topology);
  const moving = new Set<BookPlatform>();
  for (const name of names) {
    const p = topology.resolveBookPlatform(name);
    if (p) moving.add(p);
  }
  /** A per-platform option, its keys resolved to book platforms (any name of one). */
  const perPlatform = (option: string, given: Readonly<Record<string, number>> | undefined) => {
    const out = new Map<BookPlatform, number>();
    for (const [name, v] of Object.entries(given ?? {})) {
      const p = topology.resolveBookPlatform(name);
      if (!p) throw new RangeError(`${option}: "${name}" has no order books (${books.join(', ')})`);
      out.set(p, v);
    }
    return out;
  };
  const cpu = o.changesPerUpdate;
  const cpuOf = typeof cpu === 'number' ? undefined : perPlatform('changesPerUpdate', cpu);
  const tickersOf = perPlatform('tickers', o.tickers);
  const changesPerUpdate: Record<BookPlatform, number> = {};
  const tickers: Record<BookPlatform, number> = {};
  for (const p of books) {
    const v = typeof cpu === 'number' ? cpu : (cpuOf?.get(p) ?? 1);
    changesPerUpdate[p] = int(`changesPerUpdate.${p}`, v, 1, 1, 50);
    const fallback = topology.platforms[p]?.sim.book?.tickers ?? 1;
    tickers[p] = int(`tickers.${p}`, tickersOf.get(p), fallback, 1, 5000);
  }

  const rateLimits = topology.defaultRateLimits();
  if (o.rateLimits === false) {
    for (const k of Object.keys(rateLimits)) rateLimits[k] = null;
  } else if (o.rateLimits) {
    for (const [name, cfg] of Object.entries(o.rateLimits)) {
      const hosts = topology.resolveHosts(name);
      if (!hosts) throw new RangeError(`rateLimits: unknown platform "${name}"`);
      for (const h of hosts) rateLimits[h] = cfg ?? null;
    }
  }
  const assumptions: Assumptions = { ...DEFAULT_ASSUMPTIONS, ...o.assumptions };
  if (o.kalshiOrderbookRequiresAuth !== undefined)
    assumptions.kalshiOrderbookRequiresAuth = o.kalshiOrderbookRequiresAuth;
  const catalogDate = o.catalogDate ?? '2026-03-07';
  if (!/^\d{4}-\d{2}-\d{2}$/.test(catalogDate)) throw new RangeError(`catalogDate must be YYYY-MM-DD`);

  return {
    seed: int('seed', o.seed, 42, 0, 2 ** 31 - 1),
    basePort: int('ports.base', o.ports?.base, 0, 0, 65535 - topology.hosts.length),
    updatesPerSecond: int('updatesPerSecond', o.updatesPerSecond, 50, 0, 1_000_000),
    changesPerUpdate,
    startPaused: o.startPaused ?? false,
    moving,
    tickers,
    historyRetentionMs: int('historyRetentionMs', o.historyRetentionMs, 60_000, 1000, 24 * 3600 * 1000),
    historyMaxEvents: int('historyMaxEvents', o.historyMaxEvents, 2_000_000, 1000, 100_000_000),
    rateLimits,
    ibkrIdleTimeoutMs: int('ibkrIdleTimeoutMs', o.ibkrIdleTimeoutMs, 300_000, 1, 24 * 3600 * 1000),
    assumptions,
    heartbeatIntervalMs:
      o.heartbeatIntervalMs === undefined
        ? undefined
        : int('heartbeatIntervalMs', o.heartbeatIntervalMs, 0, 0, 3600_000),
    maxFeedBufferBytes: int('maxFeedBufferBytes', o.maxFeedBufferBytes, 64 * 1024 * 1024, 1024, 2 ** 40),
    maxFeedSubscriptions: int('maxFeedSubscriptions', o.maxFeedSubscriptions, 10_000, 1, 10_000_000),
    edge: o.edge ?? true,
    recordRequests: o.recordRequests ?? true,
    maxRecordedRequests: int('maxRecordedRequests', o.maxRecordedRequests, 100_000, 1, 10_000_000),
    catalogDate,
    credentials: o.credentials ?? {},
    logger: o.logger,
    clock: o.clock ?? Date.now,
  };
}
