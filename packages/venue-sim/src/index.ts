/**
 * @depthgate/venue-sim: a faithful local stand-in for the seven upstream market platforms (REST, request signing,
 * faults, moving order books and WebSocket order-book feeds). See README.md.
 */
export { startSimulator, SimError } from './simulator';
export type {
  Simulator,
  SimBooks,
  SimFaults,
  SimFeedFaults,
  SimRateLimits,
  SimIbkr,
  FeedFaultSpec,
  BookEventView,
  BookChangeView,
  SimTrade,
  KalshiBookView,
  DecimalBook,
  DecimalLevel,
  RecordedRequest,
  FaultSpec,
  ActiveFault,
  RateLimitConfig,
  SimCredentials,
  SimUrls,
  SimFeeds,
} from './types';
export type { SimulatorOptions } from './options';
export { DEFAULT_ASSUMPTIONS, type Assumptions, type SimLogger } from './settings';
export { BOOK_PLATFORMS, DEFAULT_RATE_LIMITS, DEFAULT_TICKERS, HOST_IDS, PLATFORM_NAMES } from './default-topology';
export type { SimPlatformEntry } from './topology';
export type { SimPlatform, SimPlatformInstance, SimHost, SimFeed } from './platforms/platform';
export { simPlatform } from './platforms/platform';
// What a platform module is written with (docs/ADD_NEW_PLATFORM.md, step 3).
export { Router } from './http/router';
export {
  header,
  json,
  rawJson,
  text,
  type AuthCheck,
  type AuthInput,
  type HostId,
  type PlatformErrors,
  type SimRequest,
  type SimResponse,
} from './http/types';
// …and, for a platform with moving books and a feed (docs/ADD_NEW_PLATFORM.md, "Recording it"):
export {
  ASK,
  BID,
  type BookEvent,
  type BookPlatform,
  type Instrument,
  type TimedTrade,
  type Trade,
} from './book/types';
export type { BookEngine } from './book/engine';
export { FeedConnection, FeedHub, parseJsonObject } from './feeds/feed-hub';
export { formatScaled } from './core/decimal';
export { SIM_PLATFORMS } from './platforms/registry';
export { ENV_NAMES, envNames, formatEnvFile, writeEnvFile } from './env';
export { FAULT_KINDS, type FaultKind } from './http/faults';
export { FEED_FAULT_KINDS, type FeedFaultKind } from './feeds/feed-hub';
export * as signers from './signers';
