import type { PlatformKey } from '@depthgate/platforms';
import type { AnySimPlatform } from './platform';
import { venueASim } from './venue-a';
import { venueAClobSim } from './venue-a-clob';
import { venueAUsSim } from './venue-a-us';
import { venueBSim } from './venue-b';
import { venueCSim } from './venue-c';
import { venueDSim } from './venue-d';
import { venueESim } from './venue-e';

/** The simulator's part of each platform, one line each; a platform without one is a compile error. */
export const SIM_PLATFORMS: { readonly [K in PlatformKey]: AnySimPlatform } = {
  'venue-a': venueASim,
  'venue-a-clob': venueAClobSim,
  'venue-a-us': venueAUsSim,
  'venue-b': venueBSim,
  'venue-c': venueCSim,
  'venue-d': venueDSim,
  'venue-e': venueESim,
};
