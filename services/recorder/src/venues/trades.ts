/**
 * Trades as the adapters hand them to the recorder, the windows in which a feed did not carry a ticker's trades, and
 * how an adapter reads such a window back from its venue's REST API (docs/history-internals.md, "Recorder", "Trades").
 */
import { createHash } from 'node:crypto';
import type { TradeSide } from '@depthgate/history-store';
import { isRowTs } from '../rows';
import type { RestClient } from './rest';

/** One trade as a venue reported it (feed or REST), on the book's scale (Kalshi: the YES price). */
export interface VenueTrade {
  /** Venue time of the trade, epoch ms: the same value on the feed and in REST (each adapter reads the field both share). */
  ts: number;
  /** The venue's trade id, or a deterministic one where the venue has none (`deterministicTradeId`). */
  id: string;
  /** Decimal text as the venue sent it (canonicalised by the recorder). */
  price: string;
  size: string;
  /** The taker's side, normalised to the book. */
  side: TradeSide;
  /** The venue's own side field as sent ('' when it has none). */
  venueSide: string;
  /**
   * The venue's ordering of the feed message that brought it (a row's `venue_seq`; VENUE_SEQ_PATTERN): set by the
   * session, absent ('') on trades read back from REST and where the protocol has none.
   */
  venueSeq?: string;
}

/** A window whose trades the feed did not carry, as an adapter reads it back. */
export interface TradeWindow {
  /** Read trades from here (epoch ms, inclusive): the newest trade held when the feed stopped, or where it stopped. */
  from: number;
  /** Up to here (inclusive): the feed carries the ticker's trades again from this moment. */
  to: number;
  /** The newest trade held when the feed stopped (Gemini reads forward from its id). */
  last?: { ts: number; id: string };
}

export interface BackfillResult {
  /** The trades read (any order; the recorder keeps those inside the window and drops the ones it holds). */
  trades: VenueTrade[];
  /** The part of the window the venue did not give back (its history did not reach back, or the page budget ran out). */
  missing?: { from: number; to: number };
}

/** How an adapter reads a window back from its venue's REST trades. */
export interface TradeBackfill {
  /** How far back the venue's REST trades reach (ms), when it limits them: older parts of a window are a gap. */
  reachMs?: number;
  /** Reads the window's trades with at most `maxPages` requests; throws when a request fails. */
  fetch(
    rest: RestClient,
    ticker: string,
    window: TradeWindow,
    o: { maxPages: number; signal?: AbortSignal },
  ): Promise<BackfillResult>;
}

/** What an adapter declares: how it reads missed trades back, or why it cannot (a window is then a trades gap). */
export type TradeHistory = TradeBackfill | { readonly cannot: string };

export function canBackfill(h: TradeHistory): h is TradeBackfill {
  return 'fetch' in h;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * An RFC 3339 time (any number of fraction digits) as epoch ms, truncated (not rounded) to the millisecond; undefined
 * when it is not one, or not a time a row can carry (before 1970: `isRowTs`).
 */
export function rfc3339Millis(v: unknown): number | undefined {
  if (typeof v !== 'string' || !RFC3339.test(v)) return undefined;
  // V8 reads at most three fraction digits and ignores the rest: truncation, as the venues' ms fields are.
  const ms = Date.parse(v);
  return isRowTs(ms) ? ms : undefined;
}

/** Epoch ms as decimal digit text (Polymarket CLOB's `timestamp`); undefined unless it is a time a row can carry. */
export function epochMillisText(v: unknown): number | undefined {
  if (typeof v !== 'string' || !/^\d{1,16}$/.test(v)) return undefined;
  const ms = Number(v);
  return isRowTs(ms) ? ms : undefined;
}

/**
 * The id of a trade a venue sends without one: `h:` and the first 16 hex digits of SHA-256 over the fields that
 * identify it (joined by newlines). The same message gives the same id on every connection and to every writer.
 */
export function deterministicTradeId(fields: readonly string[]): string {
  return `h:${createHash('sha256').update(fields.join('\n')).digest('hex').slice(0, 16)}`;
}
