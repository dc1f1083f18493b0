import {
  platformAliases,
  resolvePlatformName,
  type PlatformKey,
  type Platforms,
  type Registry,
} from '@depthgate/platforms';
import type { GatewayConfig } from '../config';
import { routeContext, type Platform, type RouteModule } from './types';
import { venueARoutes } from './venue-a';
import { venueAClobRoutes } from './venue-a-clob';
import { venueAUsRoutes } from './venue-a-us';
import { venueBRoutes } from './venue-b';
import { venueCRoutes } from './venue-c';
import { venueDRoutes } from './venue-d';
import { venueERoutes } from './venue-e';

/** The gateway's part of each platform, one line each; a platform of the registry without one is a compile error. */
export const ROUTES: { [K in PlatformKey]: RouteModule<Platforms[K]> } = {
  'venue-a': venueARoutes,
  'venue-a-clob': venueAClobRoutes,
  'venue-a-us': venueAUsRoutes,
  'venue-b': venueBRoutes,
  'venue-c': venueCRoutes,
  'venue-d': venueDRoutes,
  'venue-e': venueERoutes,
};

/** The platforms the gateway serves, by key, with the name resolution over them (keys and real-name aliases). */
export interface GatewayPlatforms {
  readonly byKey: Readonly<Record<string, Platform>>;
  readonly keys: readonly string[];
  /** Real names accepted for each key (`kalshi` → `venue-b`). */
  readonly aliases: Readonly<Record<string, string>>;
  /** The platform a path's `{platform}` names (a key or an alias, any case), or undefined. */
  resolve(name: string): Platform | undefined;
  /**
   * The 404 message for a name that is no platform: `Unknown platform "x"; <what>: venue-a (polymarket,
   * polymarket-gamma), …` over `keys` (default: every platform), and, for a name spelled as a history exchange key
   * (`venue_b`, `polymarket_us`), the rule that tells the two apart.
   */
  unknown(name: string, what: string, keys?: readonly string[]): string;
}

/**
 * Builds every configured platform: its descriptor (key, title, docs) with the gateway's route module. `routes` and
 * the registry behind `config` default to the product's platforms; tests add a fixture platform the same way.
 */
export function createPlatforms(
  config: GatewayConfig<Registry>,
  routes: Readonly<Record<string, RouteModule>> = ROUTES as unknown as Record<string, RouteModule>,
): GatewayPlatforms {
  const registry: Registry = Object.fromEntries(
    Object.entries(config.platforms).map(([key, p]) => [key, p.descriptor]),
  );
  const byKey: Record<string, Platform> = {};
  for (const [key, platform] of Object.entries(config.platforms)) {
    const module = routes[key];
    if (!module) throw new Error(`platform ${key} has no route module`);
    const d = platform.descriptor;
    byKey[key] = { key, title: d.title, docs: d.docs, ...module(routeContext(platform, config as GatewayConfig)) };
  }
  const resolve = (name: string) => {
    const key = resolvePlatformName(name, registry);
    return key === undefined ? undefined : byKey[key];
  };
  const aliases = platformAliases(registry);
  const keys = Object.keys(byKey);
  return {
    byKey,
    keys,
    aliases,
    resolve,
    unknown(name, what, listed = keys) {
      const named = listed.map((key) => {
        const real = Object.keys(aliases).filter((alias) => aliases[alias] === key);
        return real.length > 0 ? `${key} (${real.join(', ')})` : key;
      });
      // `venue_b`, `polymarket_us`: the history's spelling (exchange keys use "_"; the gateway's keys use "-").
      const dashed = name.includes('_') ? resolve(name.replace(/_/g, '-')) : undefined;
      const rule = dashed
        ? ` ("_" spells the history service's exchange keys; the gateway's platform keys use "-": ${dashed.key})`
        : '';
      const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
      return `Unknown platform "${shown}"${rule}; ${what}: ${named.join(', ')}`;
    },
  };
}
