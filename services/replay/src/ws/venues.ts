/**
 * The venues replayed over WebSocket, by gateway platform key (`/ws/replay/v1/{platform}` takes the key or its
 * alias). One module per venue under protocols/.
 */
import type { PlatformKey } from '@depthgate/platforms';
import type { VenueSocket } from './protocol';
import { coinbaseSocket } from './protocols/coinbase';
import { geminiSocket } from './protocols/gemini';
import { clobSocket } from './protocols/clob';
import { kalshiSocket } from './protocols/kalshi';
import { pmUsSocket } from './protocols/polymarket-us';

export const VENUE_SOCKETS: ReadonlyMap<PlatformKey, VenueSocket> = new Map(
  [kalshiSocket, clobSocket, pmUsSocket, geminiSocket, coinbaseSocket].map((v) => [v.platform, v]),
);
