/**
 * The venues replayed over WebSocket, by gateway platform key (`/ws/replay/v1/{platform}` takes the key or its
 * alias). One module per venue under protocols/.
 */
import type { PlatformKey } from '@depthgate/platforms';
import type { VenueSocket } from './protocol';
import { coinbaseSocket } from './protocols/coinbase';
import { geminiSocket } from './protocols/gemini';
import { kalshiSocket } from './protocols/kalshi';

export const VENUE_SOCKETS: ReadonlyMap<PlatformKey, VenueSocket> = new Map(
  [kalshiSocket, geminiSocket, coinbaseSocket].map((v) => [v.platform, v]),
);
