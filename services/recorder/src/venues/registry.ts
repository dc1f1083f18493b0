import type { ExchangeKey } from '@depthgate/platforms';
import type { AnyAdapter } from './adapter';
import { venueAClobRecorder } from './venue-a-clob';
import { venueAUsRecorder } from './venue-a-us';
import { venueBRecorder } from './venue-b';
import { venueCRecorder } from './venue-c';
import { venueDRecorder } from './venue-d';

/** The recorder's adapter of each recorded exchange, one line each; an exchange without one is a compile error. */
export const ADAPTERS: { readonly [E in ExchangeKey]: AnyAdapter } = {
  venue_b: venueBRecorder,
  venue_c: venueCRecorder,
  venue_a_us: venueAUsRecorder,
  venue_a_clob: venueAClobRecorder,
  venue_d: venueDRecorder,
};

export type Adapters = Readonly<Record<string, AnyAdapter>>;
