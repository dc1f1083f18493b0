/**
 * A simulator's settings once resolved from its options (options.ts: resolveOptions): what the platform modules
 * (platforms/context.ts) and the servers read. Nothing here imports the platform modules or the topology.
 */
import type { BookPlatform } from './book/types';
import type { CredentialOverrides } from './credentials';
import type { RateLimitConfig } from './http/rate-limit';
import type { HostId } from './http/types';

/** Minimal logger (pino-compatible); the simulator itself never writes to the console. */
export interface SimLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Behaviours that upstreams.md tags [3P] (third-party only) or [U] (unverified). Each is a switch, defaulting to the
 * best available reading of the sources; README.md lists them with their source.
 */
export interface Assumptions {
  /** Kalshi: allowed clock skew of `KALSHI-ACCESS-TIMESTAMP` in ms. [U] (not documented) */
  kalshiTimestampToleranceMs: number;
  /** Kalshi: `GET /markets/{ticker}/orderbook` needs a signature. [3P] newer specs mark it required. */
  kalshiOrderbookRequiresAuth: boolean;
  /** Kalshi WS snapshot field names: `fp` → `yes_dollars_fp`/`no_dollars_fp` [3P]; `dollars` → `yes_dollars`/`no_dollars` [3P]. */
  kalshiSnapshotFields: 'fp' | 'dollars';
  /** Polymarket US: allowed skew of `X-PM-Timestamp` in ms. [V] docs: 30 s. */
  polymarketUsTimestampToleranceMs: number;
  /** Polymarket US: `/v1/sports/teams` on the public host answers 401 without credentials. [U] its schema lists a 401. */
  polymarketUsTeamsRequiresAuth: boolean;
  /** CLOB L2: allowed skew of `POLY_TIMESTAMP` in seconds; 0 disables the check. [U] */
  clobTimestampToleranceSec: number;
  /** CLOB L2: the signed requestPath includes `?query`. [U] (py-clob-client signs the bare path) */
  clobSignsQuery: boolean;
  /** CLOB `/price?side=BUY` answers the best bid (true) or the best ask (false). [U] */
  clobBuyPriceIsBestBid: boolean;
  /** Coinbase Exchange: the signed requestPath includes `?query`. [3P]/[U] believed yes. */
  coinbaseSignsQuery: boolean;
  /** Coinbase Exchange: allowed skew of `CB-ACCESS-TIMESTAMP` in seconds. [U] about 30 s. */
  coinbaseTimestampToleranceSec: number;
  /** Coinbase JWT: hosts accepted in the `uri` claim besides the request's own Host header. [U] */
  coinbaseJwtHosts: string[];
  /** Any platform: credentials that fail to verify on a public route are refused with 401. [U] */
  rejectInvalidAuthOnPublicRoutes: boolean;
  /** Gemini: status for an unknown symbol (`InvalidSymbol`). [U] the error table maps malformed requests to 400. */
  geminiUnknownSymbolStatus: number;
  /** IBKR: any API call (not only `/tickle`) counts as activity for the idle timeout. [U] */
  ibkrAnyRequestKeepsAlive: boolean;
  /** IBKR: body of the 401 an expired session answers. [3P] "Access Denied". */
  ibkrUnauthorizedBody: string;
}

export const DEFAULT_ASSUMPTIONS: Assumptions = {
  kalshiTimestampToleranceMs: 30_000,
  kalshiOrderbookRequiresAuth: false,
  kalshiSnapshotFields: 'fp',
  polymarketUsTimestampToleranceMs: 30_000,
  polymarketUsTeamsRequiresAuth: false,
  clobTimestampToleranceSec: 30,
  clobSignsQuery: false,
  clobBuyPriceIsBestBid: true,
  coinbaseSignsQuery: true,
  coinbaseTimestampToleranceSec: 30,
  coinbaseJwtHosts: ['api.exchange.coinbase.com'],
  rejectInvalidAuthOnPublicRoutes: true,
  geminiUnknownSymbolStatus: 400,
  ibkrAnyRequestKeepsAlive: false,
  ibkrUnauthorizedBody: 'Access Denied',
};

export interface ResolvedOptions {
  seed: number;
  basePort: number;
  updatesPerSecond: number;
  changesPerUpdate: Record<BookPlatform, number>;
  startPaused: boolean;
  moving: Set<BookPlatform>;
  tickers: Record<BookPlatform, number>;
  historyRetentionMs: number;
  historyMaxEvents: number;
  rateLimits: Record<HostId, RateLimitConfig | null>;
  ibkrIdleTimeoutMs: number;
  assumptions: Assumptions;
  /** Undefined: each venue's own rhythm (`feedHeartbeatMs`, platforms/context.ts). */
  heartbeatIntervalMs: number | undefined;
  maxFeedBufferBytes: number;
  maxFeedSubscriptions: number;
  edge: boolean;
  recordRequests: boolean;
  maxRecordedRequests: number;
  catalogDate: string;
  credentials: CredentialOverrides;
  logger: SimLogger | undefined;
  clock: () => number;
}
