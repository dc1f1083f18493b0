/**
 * The recorder's part of a recorded exchange (docs/ADD_NEW_PLATFORM.md, "Recording it"): how its feed is spoken
 * (a VenueProtocol), how fast its REST API may be read, whether its books are reconciled against REST by default, how
 * trades the feed missed are read back (or why they cannot be), and any settings of its own. Everything else — the exchange key, its platform's URLs, credentials and signer — comes
 * from the descriptor (@depthgate/platforms); the adapters are a map keyed by exchange (registry.ts), so an exchange
 * without one is a compile error.
 */
import type { Signer } from '@depthgate/platforms';
import type { z } from 'zod';
import type { TradeHistory } from './trades';
import type { FeedProtocol } from './types';

export interface AdapterContext<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The adapter's own settings, parsed with the recorder's (`settings` below). */
  settings: z.output<z.ZodObject<S>>;
  /** Markets per subscribe message (RECORDER_SUBSCRIBE_BATCH). */
  subscribeBatch: number;
  /** Whether trades are recorded (RECORDER_TRADES): the session subscribes and reads them only then. */
  trades: boolean;
  /** The platform's signer when credentials are configured (the descriptor's choice among its credential groups). */
  signer?: Signer;
  /**
   * The platform's configured credentials by group (Coinbase's `hmac`, `jwt`): for a feed that can use only one of
   * them whichever the descriptor prefers (Coinbase's `level2` subscribe is signed with the HMAC credentials).
   */
  credentials: Readonly<Record<string, unknown>>;
}

export interface RecorderAdapter<S extends z.ZodRawShape = z.ZodRawShape> {
  /** REST requests per second by default (discovery, reconciliation): inside the platform's documented limit. */
  restRate: number;
  /**
   * Whether its books are compared with the venue's REST book by default (RECORDER_RECONCILE_EXCHANGES): true wherever
   * the venue has a REST book (`FeedProtocol.restBook`), sequenced feeds included (a sequence shows a lost message, not
   * a wrong book); false only for a venue without one, saying so in the adapter's comment.
   */
  reconcile: boolean;
  /**
   * How trades the feed missed (a disconnect, a stall, a restart) are read back from the venue's REST trades, within
   * its REST rate — or `{ cannot: why }`: such a window is then recorded as a trades gap.
   */
  trades: TradeHistory;
  /** Settings of this adapter alone (zod shape of environment variables, each with a default; docs/configuration.md lists them). */
  settings: S;
  /** The feed's protocol for this configuration (where it is reached — URL, handshake — comes from the descriptor). */
  protocol(ctx: AdapterContext<S>): FeedProtocol;
  /** Whether its REST calls are signed with the platform's signer when credentials are configured (Kalshi's are). */
  signedRest?: boolean;
}

/** Declares an adapter with its settings' types inferred. */
export function defineAdapter<S extends z.ZodRawShape>(adapter: RecorderAdapter<S>): RecorderAdapter<S> {
  return adapter;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a map holds adapters of any settings
export type AnyAdapter = RecorderAdapter<any>;
