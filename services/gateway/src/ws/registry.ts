import type { PlatformKey, Platforms, UrlSpec } from '@depthgate/platforms';
import type { StreamModule } from './types';
import { venueAClobStream } from './venue-a-clob';
import { venueAUsStream } from './venue-a-us';
import { venueBStream } from './venue-b';
import { venueCStream } from './venue-c';
import { venueDStream } from './venue-d';

type FeedNames<D> = D extends { feeds?: Readonly<Record<infer F, UrlSpec>> } ? F & string : never;
/** The platforms whose descriptor declares a feed: the ones the WebSocket proxy serves. */
export type StreamPlatformKey = {
  [K in PlatformKey]: [FeedNames<Platforms[K]>] extends [never] ? never : K;
}[PlatformKey];

/**
 * The gateway's part of each platform's stream (ws/<platform key>.ts), one line each: a platform whose descriptor
 * declares a feed and that has no line here is a compile error.
 */
export const STREAMS: { [K in StreamPlatformKey]: StreamModule<Platforms[K]> } = {
  'venue-a-clob': venueAClobStream,
  'venue-a-us': venueAUsStream,
  'venue-b': venueBStream,
  'venue-c': venueCStream,
  'venue-d': venueDStream,
};
