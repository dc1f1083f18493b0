/**
 * `@depthgate/client`: typed clients for the depthgate gateway and history service, with exact order-book
 * reconstruction. Runs wherever `fetch` does (Node ≥ 18, browsers, workers); imports nothing of Node's.
 */
export { Decimal, canonicalDecimal, compareCanonical, isCanonicalDecimal, isDecimal } from './decimal.js';
export {
  BookError,
  DataError,
  DepthgateError,
  HttpError,
  InvalidArgumentError,
  TransportError,
  type BookLocation,
  type DataLocation,
  type ErrorCode,
} from './errors.js';
export { bookChecksum, checksumText, crc32, type Level } from './checksum.js';
export { DIGEST_MODULUS, digestText, levelWeight, murmur3, type DigestLine } from './digest.js';
export { OrderBook, type Best, type BookState, type OrderBookOptions } from './order-book.js';
export {
  BAR_INTERVALS,
  parseLine,
  type Bar,
  type BarInterval,
  type DeltaRow,
  type EndLine,
  type Exchange,
  type Gap,
  type GapMarker,
  type LineKind,
  type RowKind,
  type RowOf,
  type Side,
  type SnapshotRow,
  type StreamLine,
  type TradeLine,
  type TradeRow,
  type TradeSide,
  type TradesGapMarker,
} from './rows.js';
export { EXCHANGES } from './exchanges.js';
export { formatTimestamp, momentMs, parseTimestamp, type Moment, type Rounding } from './timestamps.js';
export { parseRetryAfter, type ClientOptions, type RetryOptions } from './http.js';
export { HistoryClient } from './history-client.js';
export type {
  BarPage,
  BarPageOptions,
  BarRangeOptions,
  BookVerified,
  CallerWindow,
  Coverage,
  DeltaPage,
  DeltaPageOptions,
  DeltaRangeOptions,
  EventsOptions,
  KindCoverage,
  ExtraField,
  MarketEvent,
  Page,
  PageOptions,
  RangeOptions,
  RangeWithGaps,
  ReplayEvent,
  ReplayOptions,
  ServiceBook,
  ServiceBookHead,
  TradeField,
  TradePageOptions,
  TradeRangeOptions,
  VerificationCoverage,
  VerificationMethod,
} from './history-types.js';
export {
  GatewayClient,
  type CallOptions,
  type GatewayResponse,
  type Platform,
  type PlatformAlias,
  type PlatformKey,
  type Query,
  type QueryValue,
  type ReadOnlyPosts,
} from './gateway-client.js';
