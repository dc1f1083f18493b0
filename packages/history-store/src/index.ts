/**
 * @depthgate/history-store: the one ClickHouse layer of the order-book history, shared by the history API, the
 * recorder and the data generator. SQL lives here and nowhere else.
 *
 * A process builds one HistoryStore at start-up. Its connection never leaves this package: callers run the named
 * operations below, each through the querier (query gate, time budget with max_execution_time and a client-side
 * abort, KILL QUERY on cancellation, a tag per query) or the streaming inserts. Tests reach the tables through
 * `@depthgate/history-store/testing` (src/testing/, not part of the build).
 */

// The handle, its per-unit-of-work scope, and what the querier reports.
export { HistoryStore, type HistoryStoreOptions } from './store';
export { QueryAbortedError, QueryScope, type AbortReason } from './scope';
export { QueryGate, GateClosedError } from './query-gate';
export type { QuerierOptions, QueryObserver, QueryOutcome, StreamOptions } from './querier';
export { QueryBudgetMetrics, type QueryBudgetMetricsOptions } from './query-metrics';

// Configuration and failures.
export {
  clickHouseEnvSchema,
  clickHouseEnvShape,
  loadClickHouseConfig,
  storeOptions,
  type ClickHouseConfig,
} from './config';
export { loggableClickHouseUrl, newQueryId } from './connection';
export { classifyClickHouseError, serverErrorCode, type ClickHouseFailure, type ClickHouseFailureKind } from './errors';

// Vocabulary of the tables.
export { SIDES, TICKER_PATTERN, VENUE_SEQ_PATTERN, VENUE_TEXT_PATTERN, type Side } from './literals';
export {
  EXTRA_FIELDS,
  HANDOVER_KINDS,
  HANDOVER_KIND_CODES,
  STREAM_CODES,
  TRADE_EXTRA_FIELDS,
  TRADE_SIDE_CODES,
  VENUE_SEQ_BYTES,
  VERIFICATION_METHODS,
  VERIFICATION_METHOD_CODES,
  type ExtraField,
  type GapStream,
  type HandoverKind,
  type ReadKind,
  type RowKind,
  type TradeExtraField,
  type TradeSide,
  type VerificationMethod,
} from './schema';

// Start-up.
export {
  MIGRATIONS,
  MigrationError,
  REQUIRED_SCHEMA_VERSION,
  exchangesMigration,
  runMigrations,
  storedExchanges,
  type Migration,
  type MigrationResult,
} from './migrations';
export { migrateWhenReachable, schemaVersion, verifyExchanges, verifyReadColumns, waitForSchema } from './startup';

// Writes: row formats and streaming inserts (docs/history-internals.md, "Writing: formats and idempotence").
export {
  CURRENT_ROW_FORMAT,
  DECIMAL,
  INSERT_COLUMNS,
  LATEST_ROW_FORMAT,
  ROW_FORMATS,
  insertColumns,
  type RowFormat,
  RowFormatError,
  encodeDeltaRow,
  encodeGapRow,
  encodeHandoverRow,
  encodeSnapshotRow,
  encodeTradeRow,
  encodeVerificationRow,
  insertDeltaRows,
  insertGapRows,
  insertHandoverRows,
  insertSnapshotRows,
  insertTradeRows,
  insertTsv,
  insertVerificationRows,
  recorderQueryId,
  type DeltaRow,
  type GapRow,
  type HandoverRow,
  type InsertOptions,
  type InsertTable,
  type SnapshotRow,
  type TradeRow,
  type VerificationRow,
} from './inserts';

// The named queries, per caller.
export {
  BOOK_FIRST_LOOK_BACK_MS,
  LAST_TRADE_FIRST_LOOK_BACK_MS,
  BOOK_LAYOUT,
  OrderBookQueries,
  storedTickerName,
  type CatalogueSpan,
  type DeltaResume,
  type KindCoverage,
  type StoredGap,
  type StoredTrade,
  type ReceiveSpan,
  type TickerCoverage,
  type TickerSpan,
  type TimeWindow,
  type VerificationCoverage,
  type VerifiedAround,
  type WindowRead,
} from './queries/order-books';
export { BAR_INTERVALS, BAR_LAYOUT, type BarInterval } from './queries/trades';
export { benchmarkSql, type AnchorFormat, type BenchmarkSql } from './queries/benchmark';
export { RecorderStore, type LandedDelta, type LandedEnd, type ProbeKey, type StoredTicker } from './queries/recorder';
export { tickersWithData } from './queries/generator';
export { combinedSpan, expectedRows, WindowPlanner, type KindSpan, type PlanInput } from './planner';
