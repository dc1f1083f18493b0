import type { ExchangeKey } from '@depthgate/platforms';
import type { DecimalBook, KalshiBookView, SimTrade } from './book/view';
import type { BookPlatform } from './book/types';
import type { SimCredentials } from './credentials';
import type { SimFeeds, SimUrls } from './env';
import type { FeedFaultKind } from './feeds/feed-hub';
import type { ActiveFault, FaultSpec } from './http/faults';
import type { RateLimitConfig } from './http/rate-limit';
import type { RecordedRequest } from './http/types';

export type { DecimalBook, DecimalLevel, KalshiBookView, SimTrade } from './book/view';

export interface BookChangeView {
  side: 'bid' | 'ask';
  price: string;
  /** The level's new absolute quantity ("0" when removed). */
  quantity: string;
  /** Signed change of the level's quantity. */
  delta: string;
}

export interface BookEventView {
  /** Per (platform, ticker), 1-based and gapless. */
  seq: number;
  /** Epoch ms; the same instant the feed carries (Kalshi `ts_ms`, Polymarket US `transactTime`). */
  ts: number;
  changes: BookChangeView[];
  /** The trades the event made (the fills of one taker order), as `sim.trades` lists them. */
  trades: SimTrade[];
}

export interface SimBooks {
  platforms(): BookPlatform[];
  /** Tickers of a book platform (any of its names: `venue-b`, `venue_b`, `kalshi`, ...), sorted. */
  tickers(platform: string): string[];
  /** The current book, exact decimal strings in the venue's precision, best first. */
  book(platform: string, ticker: string): DecimalBook | KalshiBookView;
  /** The book as of `tsMs` (every event with ts <= tsMs applied), from the retained history. */
  bookAt(platform: string, ticker: string, tsMs: number): DecimalBook | KalshiBookView;
  /** Emitted events with ts >= sinceMs (default: all retained). */
  events(platform: string, ticker: string, sinceMs?: number): BookEventView[];
  /** seq and ts of the last event of a ticker (seq 0 before the first). */
  last(platform: string, ticker: string): { seq: number; ts: number | null };
  pause(): void;
  resume(): void;
  isPaused(): boolean;
  /** Emits `n` updates now (works while paused; with updatesPerSecond 0 this is the only motion). */
  step(n?: number): void;
  setUpdatesPerSecond(n: number): void;
}

export interface FeedFaultSpec {
  /** A platform with a feed (any of its names: `venue-b`, `kalshi`, `venue_a_us`, …). */
  platform: string;
  kind: FeedFaultKind;
  /** Only messages about / connections subscribed to this ticker. */
  ticker?: string;
  /** drop, corrupt_checksum: how many messages; reorder: how many swaps (default 1). */
  count?: number;
  /** stall: how long (default 1000). */
  ms?: number;
}

export interface SimFeedFaults {
  /**
   * Applies a feed fault; `affected` is the number of connections (disconnect, stall), messages (drop,
   * corrupt_checksum) or swaps (reorder). A kind the platform's protocol does not allow (reorder where messages carry
   * a sequence, corrupt_checksum where they carry no checksum) is refused (`bad_request`).
   */
  inject(spec: FeedFaultSpec): { id: string; affected: number };
  dropNext(platform: string, opts?: { ticker?: string; count?: number }): string;
  disconnect(platform: string, opts?: { ticker?: string }): number;
  stall(platform: string, ms: number, opts?: { ticker?: string }): number;
  /** Forgets pending message faults (a message a reorder holds back is sent now; stalls run out by themselves). */
  clear(): void;
  /**
   * Open connections; message faults still pending; messages dropped, pairs swapped and messages sent with a wrong
   * checksum so far; connections cut for being too slow; subscribes refused for `maxFeedSubscriptions`.
   */
  stats(platform: string): {
    connections: number;
    pendingDrops: number;
    pendingReorders: number;
    pendingCorruptions: number;
    dropped: number;
    reordered: number;
    corrupted: number;
    slowDisconnects: number;
    subscriptionRefusals: number;
  };
  /** The text messages clients sent to the platform's feed (the last 10,000, oldest first). */
  received(platform: string): string[];
  /** Forgets the received messages. */
  clearReceived(platform: string): void;
}

export interface SimFaults {
  inject(spec: FaultSpec): string;
  remove(id: string): boolean;
  clear(): void;
  list(): ActiveFault[];
}

export interface SimRateLimits {
  /** null turns the platform's limit off. */
  set(platform: string, config: RateLimitConfig | null): void;
  get(platform: string): RateLimitConfig | null;
}

export interface SimIbkr {
  expireSession(): void;
  login(): void;
  isAuthenticated(): boolean;
}

export interface Simulator {
  /** Base URL of each host by host id (`venue-b`, `venue-a-us/auth`, … as HOST_IDS), and of the control server. */
  urls: SimUrls;
  /** URL of each WebSocket feed, by platform key (`venue-b`, `venue-c`, `venue-a-us`). */
  feeds: SimFeeds;
  credentials: SimCredentials;
  seed: number;
  /**
   * The upstream variables for the gateway and recorder (ENV_NAMES). Secrets are written as files into `dir`, or
   * into a temporary folder removed on stop.
   */
  env(dir?: string): Record<string, string>;
  /** Recorded requests in arrival order (platform accepts aliases). */
  requests(filter?: { platform?: string; pathPrefix?: string }): RecordedRequest[];
  clearRequests(): void;
  faults: SimFaults;
  rateLimits: SimRateLimits;
  feedFaults: SimFeedFaults;
  books: SimBooks;
  /**
   * Every trade the books made on a platform (any of its names), or of one ticker, with ts >= sinceMs: the retained
   * ones (the history's retention), in time order (ties: by ticker, then number).
   */
  trades(platform: string, ticker?: string, sinceMs?: number): SimTrade[];
  ibkr: SimIbkr;
  /** `{ venue_b: [...], venue_c: [...], …}`: the tickers of every recorded exchange (extra platforms' too). */
  recordedTickers(): Record<ExchangeKey, string[]> & Readonly<Record<string, string[]>>;
  stop(): Promise<void>;
}

export type { RecordedRequest, FaultSpec, ActiveFault, RateLimitConfig, SimCredentials, SimUrls, SimFeeds };
