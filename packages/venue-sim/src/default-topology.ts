/**
 * The default simulator's topology: the product's platforms (@depthgate/platforms' registry), each with its simulator
 * module (platforms/registry.ts), and what follows from them. Built here, above the platform modules, so that the
 * modules they import (http/, platforms/context.ts, settings.ts) never load the registry.
 */
import { PLATFORM_KEYS, PLATFORMS } from '@depthgate/platforms';
import type { RateLimitConfig } from './http/rate-limit';
import type { HostId } from './http/types';
import { SIM_PLATFORMS } from './platforms/registry';
import { Topology, type SimPlatformEntry } from './topology';

/** The product's platforms, each with its simulator module. */
export const DEFAULT_PLATFORMS: Readonly<Record<string, SimPlatformEntry>> = Object.fromEntries(
  PLATFORM_KEYS.map((key) => [key, { descriptor: PLATFORMS[key], sim: SIM_PLATFORMS[key] }]),
);

export const DEFAULT_TOPOLOGY = new Topology(DEFAULT_PLATFORMS);
/** Host ids of the default simulator, in port order (base + 1, base + 2, …). */
export const HOST_IDS: readonly HostId[] = DEFAULT_TOPOLOGY.hosts.map((h) => h.id);
/** Every name the default simulator accepts for a platform. */
export const PLATFORM_NAMES: readonly string[] = DEFAULT_TOPOLOGY.names();
/** The platforms whose books move (their modules declare `book`), by neutral key. */
export const BOOK_PLATFORMS: readonly string[] = DEFAULT_TOPOLOGY.bookPlatforms();
/** How many instruments each of them moves by default (the `tickers` option overrides). */
export const DEFAULT_TICKERS: Readonly<Record<string, number>> = Object.fromEntries(
  BOOK_PLATFORMS.map((p) => [p, DEFAULT_PLATFORMS[p]?.sim.book?.tickers ?? 0]),
);

/**
 * Each host's documented limit (upstreams.md), as the platform modules declare it. Polymarket's hosts sit behind
 * Cloudflare, which delays rather than rejects ([V]); Gemini queues 5 extra requests ([V]); IBKR's ~10/s is [U];
 * ForecastEx has none documented.
 */
export const DEFAULT_RATE_LIMITS: Readonly<Record<HostId, RateLimitConfig | null>> =
  DEFAULT_TOPOLOGY.defaultRateLimits();
