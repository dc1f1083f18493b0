/**
 * The simulator's part of a platform (docs/ADD_NEW_PLATFORM.md, step 3): its fake hosts, one per host of the
 * platform's descriptor (@depthgate/platforms), its WebSocket feeds, the test credentials the deployables sign with,
 * and its documented rate limits. Everything else about the platform (keys, aliases, variable names) comes from the
 * descriptor; the simulator assigns ports and URLs and writes the environment.
 */
import type { BookPlatform, Instrument, IntBook, TimedTrade } from '../book/types';
import type { DecimalBook, SimTrade } from '../book/view';
import type { FeedHub } from '../feeds/feed-hub';
import type { HostDefinition } from '../http/host-server';
import type { RateLimitConfig } from '../http/rate-limit';
import type { PlatformContext } from './context';

/** A fake host as a platform module defines it; the simulator names it (`venue-a-us/auth`) and serves it. */
export type SimHost = Omit<HostDefinition, 'host'> & {
  /** Path every route is under, part of the host's URL (`/trade-api/v2`). */
  basePath?: string;
};

export interface SimFeed {
  /** The descriptor host that serves the upgrade. */
  host: string;
  /** WebSocket path (`/trade-api/ws/v2`). */
  path: string;
  /** Its connections, for feed faults and stats. */
  hub: FeedHub;
}

/** A login session a platform requires (the IBKR Client Portal's), exposed as `sim.ibkr` and `/control/ibkr/*`. */
export interface SimSession {
  expire(): void;
  login(): void;
  isAuthenticated(): boolean;
}

export interface SimPlatformInstance {
  /** One per host of the descriptor, under the same names (`main`, `auth`, …). */
  hosts: Record<string, SimHost>;
  /** One per feed of the descriptor, under the same names. */
  feeds?: Record<string, SimFeed>;
  /** The values of the descriptor's credential variables, for the deployables to sign with (secrets go to files). */
  credentials?: Record<string, string>;
  session?: SimSession;
  /**
   * How the platform publishes a trade of its books: the id and fields its feed and REST routes send (one place,
   * shared with them). Without it `sim.trades` names trades by number, in the instrument's precision.
   */
  trade?(inst: Instrument, trade: TimedTrade): SimTrade;
  close?(): void;
}

export interface CatalogContext {
  seed: number;
  catalogDate: string;
  /** How many instruments a book platform moves (by platform key, `venue-b`). */
  tickers(platform: BookPlatform): number;
  /** A catalogue built once per simulator and shared by the platforms that serve it (Gamma and the CLOB). */
  shared<T>(name: string, build: () => T): T;
}

export interface SimPlatform<C = unknown> {
  /**
   * Present when the platform has moving books (one engine partition, under its key): how many instruments it
   * moves by default (the `tickers` option overrides), and its native view of a book for `sim.books`, if it has one
   * besides bids and asks (Kalshi: YES and NO bids).
   */
  book?: {
    tickers: number;
    view?(book: DecimalBook, inst: Instrument, ints: IntBook): DecimalBook;
  };
  /** The descriptor's credential groups it issues test credentials for (their values: `credentials` of the instance). */
  signs?: readonly string[];
  /** Its documented request limits per descriptor host (null: none documented). */
  rateLimits: Record<string, RateLimitConfig | null>;
  /** Builds its catalogue once (seeded); `instruments` get moving books. */
  catalog?(ctx: CatalogContext): { catalog: C; instruments: readonly Instrument[] };
  create(ctx: PlatformContext, catalog: C): SimPlatformInstance;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each module has its own catalogue type
export type AnySimPlatform = SimPlatform<any>;

/** Declares a platform module with its catalogue type inferred. */
export function simPlatform<C>(p: SimPlatform<C>): SimPlatform<C> {
  return p;
}
