/**
 * What a venue's replay socket must know of its venue's protocol (one module per venue under protocols/), and nothing
 * else: the socket itself (replay-socket.ts) reads the windows, merges, paces, sends with backpressure and closes the
 * same way for every venue.
 *
 * A protocol object lives as long as its socket (it keeps the connection's subscriptions, sids, request ids). Its
 * life: `frame` for every client frame; for each subscribe, each named market is resolved by the socket (stored name,
 * the caller's entitlements), a market that cannot be replayed goes through `refuse`, the subscriptions it adds
 * (`held`) are taken from the caller's limit (refused: `limited`), then `accept` gives the acks sent at once; once the subscribes have settled (no new one for the settle time) `streams` gives one encoder per
 * market, and the replay starts. A subscribe after the start gets `frame(…, started = true)`: the venue's refusal.
 */
import type { ExchangeKey, PlatformKey } from '@depthgate/platforms';
import type { AppError } from '@depthgate/service-kit';
import { applyDelta, type RecordedDelta, type ReplayBook, type VenueEncoder } from '../engine';

/**
 * Distinct markets one subscribe may name at most; a protocol refuses more in its venue's form (Kalshi 11, the
 * others as the gateway refuses its limits), before anything is looked up. A subscribe's markets are resolved in one
 * catalogue query, so one frame's work stays bounded. 500: the Polymarket CLOB's own limit of assets per connection
 * [3P]; Polymarket US takes 100 per subscription, as the venue does.
 */
export const MAX_MARKETS_PER_SUBSCRIBE = 500;

/** A subscribe the client sent, as its venue's protocol reads it. */
export interface SubscribeRequest<D = unknown> {
  /** The markets it names, as the client spelled them (at least one, at most MAX_MARKETS_PER_SUBSCRIBE). */
  tickers: string[];
  /** The venue's own rest (channels, request id, …), for `accept` and `streams`. */
  detail: D;
}

/** What one client frame asks for. */
export type Frame<D = unknown> =
  | { kind: 'subscribe'; request: SubscribeRequest<D> }
  /** Texts sent back at once (the venue's error form, a pong); the socket stays open. */
  | { kind: 'reply'; texts: string[] }
  /** The venue hangs up (its disconnect form). */
  | { kind: 'close'; code: number; reason: string };

/**
 * A named market the replay cannot serve: `err.code` is `unknown_ticker` (never recorded, or outside the key's
 * `ticker_prefixes`) or `invalid_timestamp` (the window starts before the caller's for it; the message names its start).
 * `reject`: the whole subscribe fails with `texts` (Kalshi); else the market is left out and `texts` are sent (the
 * CLOB ignores unknown assets silently: no texts).
 */
export interface Refusal {
  reject: boolean;
  texts: string[];
  /** The venue hangs up instead. */
  close?: { code: number; reason: string };
}

/** One market's replay: its stored name and the encoder that writes it as this connection subscribed it. */
export interface MarketStream {
  ticker: string;
  encoder: VenueEncoder;
  /**
   * Whether the client still wants the market's messages of `channel` (NativeMessage.channel: a venue where one
   * channel of a market can be unsubscribed and others kept), or — no channel given — any of its messages (absent:
   * always). Asked again as each message is about to be sent (SessionStream); once the market has nothing wanted
   * left (every subscription of it ended after the start, which no subscribe can undo), it is no longer read.
   */
  wanted?: (channel?: string) => boolean;
}

export interface ReplayProtocol<D = unknown> {
  /** One client frame (`isBinary`: a binary frame, `text` its bytes as UTF-8). */
  frame(text: string, isBinary: boolean, started: boolean): Frame<D>;
  refuse(request: SubscribeRequest<D>, requested: string, err: AppError): Refusal;
  /** A subscribe accepted for `tickers` (stored names, each once, in the order named): the acks it gets now. */
  accept(request: SubscribeRequest<D>, tickers: string[]): string[];
  /**
   * The subscriptions the connection holds, counted as the gateway counts them against a key's
   * `ws_max_subscriptions` (channel × market; a market named by two subscriptions counts twice): now, or — given a
   * subscribe and its `tickers` — once `accept` has taken it (nothing is changed).
   */
  held(request?: SubscribeRequest<D>, tickers?: string[]): number;
  /** A subscribe refused for depthgate's subscription limit (`reason`: the limit, as a sentence): the venue's form. */
  limited(request: SubscribeRequest<D>, reason: string): string[];
  /** The replay starts: one stream per subscribed market (possibly none: the socket then finishes at once). */
  streams(): MarketStream[];
}

/** A venue replayed over WebSocket: its gateway platform key, its recorded exchange, and a protocol per socket. */
export interface VenueSocket {
  platform: PlatformKey;
  exchange: ExchangeKey;
  /** The venue's own name, for messages. */
  name: string;
  create(): ReplayProtocol;
}

/**
 * An encoder that writes only the channels a client subscribed: without `book`, the changes are applied to the book
 * (it stays true for what follows) but nothing of it is written; without `trades`, trades (and what names the last
 * earlier trade at a start without a book) are not written.
 */
export function onlyChannels(encoder: VenueEncoder, wanted: { book: boolean; trades: boolean }): VenueEncoder {
  if (wanted.book && wanted.trades) return encoder;
  return {
    book: (book, ts, cause) => (wanted.book ? encoder.book(book, ts, cause) : []),
    changes: (book, deltas, ts) => (wanted.book ? encoder.changes(book, deltas, ts) : applied(book, deltas)),
    trade: (trade, book) => (wanted.trades ? encoder.trade(trade, book) : []),
    startWithoutBook: (trade) => {
      const out = encoder.startWithoutBook?.(trade) ?? [];
      return wanted.trades ? out : [];
    },
  };
}

/**
 * Changes a client does not want: applied to the book (it stays true), nothing written — what an encoder's `changes`
 * costs (a CLOB entry's hash of the whole book, texts) is not spent on them.
 */
export function applied(book: ReplayBook, deltas: readonly RecordedDelta[]): [] {
  for (const d of deltas) applyDelta(book, d);
  return [];
}

/** Takes `item` out of `list` (its first place), if it is there: a subscription ended, from the lists an encoder reads. */
export function remove<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}
