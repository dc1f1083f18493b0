import { canonicalPlatform, PLATFORM_KEYS, type PlatformKey } from '@depthgate/auth';
import type { GatewayConfig } from '../config';
import type { Platform } from './types';
import { gamma } from './venue-a';
import { clob } from './venue-a-clob';
import { polymarketUs } from './venue-a-us';
import { kalshi } from './venue-b';
import { gemini } from './venue-c';
import { coinbase } from './venue-d';
import { forecastex } from './venue-e';

/** One line per platform; a missing platform key is a compile error. */
const FACTORIES = {
  'venue-a': gamma,
  'venue-a-clob': clob,
  'venue-a-us': polymarketUs,
  'venue-b': kalshi,
  'venue-c': gemini,
  'venue-d': coinbase,
  'venue-e': forecastex,
} satisfies Record<PlatformKey, (config: GatewayConfig) => Platform>;

export type Platforms = Readonly<Record<PlatformKey, Platform>>;

export function createPlatforms(config: GatewayConfig): Platforms {
  return Object.fromEntries(PLATFORM_KEYS.map((key) => [key, FACTORIES[key](config)])) as Record<PlatformKey, Platform>;
}

export { canonicalPlatform, PLATFORM_KEYS };
