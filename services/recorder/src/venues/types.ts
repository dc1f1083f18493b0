/**
 * One platform's feed behind one interface: the handshake (and its authentication), a session per connection that
 * subscribes in batches, turns the venue's messages into calls on the tickers' recorders and reports integrity
 * signals, plus the REST listing (discovery) and REST book (reconciliation) of the platform.
 */
import { feedHandshakeHeaders, type ExchangeKey, type Signer } from '@depthgate/platforms';
import type { Logger } from '@depthgate/service-kit';
import type { TickerRecorder } from '../ticker';
import type { RestClient } from './rest';

export interface SessionContext {
  readonly exchange: ExchangeKey;
  readonly logger: Logger;
  /** Sends a text frame on the connection. */
  send(text: string): void;
  /** The recorder of a ticker this connection records, if any. */
  ticker(ticker: string): TickerRecorder | undefined;
  /** Receive clock (epoch ms, monotone). */
  now(): number;
  /** The venue refused a ticker (unknown market): stop asking for it until the next discovery. */
  rejectTicker(ticker: string, message: string): void;
  /** Gives up on this connection: it is closed and replaced (every ticker on it gets a gap). */
  reconnect(reason: 'disconnect'): void;
  /** The platform's REST API, within the exchange's REST rate (a session's own checks: the CLOB's hash confirmation). */
  readonly rest: RestClient;
  /**
   * A venue message could not be read: counted (`recorder_malformed_messages_total`) and logged with the start of its
   * text. Sessions call it through `malformedMessage`, which also makes the books it may have changed a gap
   * (`malformed_message`) and asks for fresh ones.
   */
  malformed(problem: string, text: string): void;
  /** A venue checksum was checked against a book (`recorder_checksums_total`). */
  checksum(result: 'match' | 'explained' | 'divergence' | 'unchecked'): void;
}

export interface VenueSession {
  /** Subscribes (in the venue's batch sizes); each ticker's first book follows. */
  subscribe(tickers: readonly string[]): void;
  unsubscribe(tickers: readonly string[]): void;
  /** Asks for fresh venue snapshots of tickers whose book was lost or is in doubt. */
  resync(tickers: readonly string[]): void;
  onMessage(text: string, receivedAt: number): void;
  /**
   * Every event of the venue up to this moment (venue clock; Gemini: our receive clock) has been received on this
   * connection, unless a loss was detected: a tighter `from` for the gap when the connection drops.
   */
  watermark(): number;
  close(): void;
}

export interface RestBook {
  bids: [string, string][];
  asks: [string, string][];
}

/** A feed's protocol, as its adapter defines it (venues/venue-<x>.ts): what the venue says and how it is read. */
export interface FeedProtocol {
  /** Events carry the venue's timestamps (else receive time is used). */
  readonly venueClock: boolean;
  /**
   * The feed numbers its messages so that any lost one shows (Kalshi's `seq`): a disconnect's gap starts at the last
   * message received. Else (no sequence, or a checksum only on the messages that arrive) it starts at the ticker's
   * last verification (TickerEnv.provesContinuity).
   */
  readonly provesContinuity: boolean;
  /** The handshake is signed with the platform's credentials (the feed refuses unauthenticated connections). */
  readonly signedHandshake: boolean;
  /**
   * The text the venue wants as a keep-alive instead of WebSocket pings (sent every `RECORDER_PING_INTERVAL_MS`; its
   * answer is a message, so it counts as liveness).
   */
  readonly keepAliveText?: string;
  createSession(ctx: SessionContext): VenueSession;
  /** Tickers of the platform's active markets (all, or those of the given series). */
  listActive(rest: RestClient, series: readonly string[], all: boolean): Promise<string[]>;
  /** The platform's current REST book of a ticker, as bids and asks (reconciliation). */
  restBook(rest: RestClient, ticker: string): Promise<RestBook>;
  /** A configured or listed ticker as the feed spells it (Gemini: upper case). */
  normalizeTicker(ticker: string): string;
}

/** A feed's protocol where the recorder reaches it: the exchange, the platform's feed URL and its handshake. */
export interface VenueProtocol extends FeedProtocol {
  readonly exchange: ExchangeKey;
  /** Platform name for logs. */
  readonly platform: string;
  readonly feedUrl: string;
  /** The handshake must be signed and no credentials are configured: not recorded. */
  readonly missingCredentials: boolean;
  /** Headers of the WebSocket handshake (the platform's signature where it needs one). */
  handshakeHeaders(nowMs: number): Record<string, string> | undefined;
}

/** Places a feed protocol: its exchange, its platform's name, feed URL and signer (the descriptor's). */
export function venueProtocol(
  feed: FeedProtocol,
  where: { exchange: ExchangeKey; platform: string; feedUrl: string; signer: Signer | undefined },
): VenueProtocol {
  const { signer, feedUrl } = where;
  return {
    ...where,
    venueClock: feed.venueClock,
    provesContinuity: feed.provesContinuity,
    signedHandshake: feed.signedHandshake,
    ...(feed.keepAliveText === undefined ? {} : { keepAliveText: feed.keepAliveText }),
    missingCredentials: feed.signedHandshake && signer === undefined,
    handshakeHeaders: (nowMs) => (feed.signedHandshake ? feedHandshakeHeaders(signer, feedUrl, nowMs) : undefined),
    createSession: (ctx) => feed.createSession(ctx),
    listActive: (rest, series, all) => feed.listActive(rest, series, all),
    restBook: (rest, ticker) => feed.restBook(rest, ticker),
    normalizeTicker: (ticker) => feed.normalizeTicker(ticker),
  };
}

/**
 * A venue message that cannot be read (not JSON, cut short, a field its kind needs missing or not the venue's text, a
 * value the tables cannot hold) — every adapter's one way to handle it, never a silent skip nor a crash: counted and
 * logged (`ctx.malformed`); the books it may have changed — `ticker`'s when the message names one readably (nothing
 * when the connection does not record it), else every ticker of `scope` (the connection's, or a narrower set the
 * message still shows, such as a Kalshi subscription's markets) — lose their book, a gap `malformed_message` from
 * their last verified moment (`TickerRecorder.lose`) closed by their fresh venue book, which `session.resync` asks for.
 * What could not be read may have been (or carried) a trade: their trades up to now are checked too
 * (`TickerRecorder.tradesMissed`: read back from REST where the venue has trade history, else a trades gap over the
 * moment) — so that a lost trade is never silent either, at the cost of a needless REST read (or short trades gap)
 * when the message was a book's.
 */
export function malformedMessage(
  ctx: SessionContext,
  session: Pick<VenueSession, 'resync'>,
  problem: string,
  text: string,
  ticker: string | undefined,
  scope: Iterable<string>,
): void {
  ctx.malformed(problem, text);
  const list = (ticker !== undefined ? [ticker] : [...scope]).filter((t) => ctx.ticker(t) !== undefined);
  if (list.length === 0) return;
  for (const t of list) {
    const rec = ctx.ticker(t);
    rec?.tradesMissed(ctx.now());
    rec?.lose('malformed_message');
  }
  session.resync(list);
}

export function chunk<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
