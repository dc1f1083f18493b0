/**
 * What the replay engine reads and writes. Its input is one ticker's recorded window as the history tables hold it
 * (packages/history-store schema.ts: prices and quantities as the stored decimal text, times in epoch ms, the
 * ticker's `sequence` shared by its deltas and trades); its output is the venue's own WebSocket messages, in order.
 */

/** A level as stored: `[price, quantity]`, decimal text (any spelling: the engine keeps exact values). */
export type Level = readonly [price: string, quantity: string];

/** A whole book: levels in any order (the encoders order them the venue's way). */
export interface BookLevels {
  bids: readonly Level[];
  asks: readonly Level[];
}

/** A `deltas` row: a signed change of one level. */
export interface RecordedDelta {
  ts: number;
  /** When the recorder received the row's message (absent: taken as `ts`). */
  received_ts?: number;
  sequence: number;
  side: 'bid' | 'ask';
  price: string;
  /** Signed decimal text. */
  quantity_delta: string;
}

/** A `trades` row: `side` the taker's, normalised to the book; `venue_side` the venue's own side field as sent. */
export interface RecordedTrade {
  ts: number;
  received_ts?: number;
  sequence: number;
  trade_id: string;
  price: string;
  size: string;
  side: 'buy' | 'sell';
  venue_side: string;
}

/**
 * A book gap (`gaps` row, stream `book`): from `from` (the last moment known good) to `to`, where the recorder wrote
 * the snapshot that closes it. `book` is that snapshot; undefined when the window ends before the gap closes.
 */
export interface RecordedGap {
  from: number;
  to: number;
  reason: string;
  book?: BookLevels;
  /** When the closing snapshot's newest message was received (absent: `to`). */
  received_ts?: number;
}

/** One ticker's recorded window. Every list is in order (`ts`, then `sequence`; gaps by `to`). */
export interface RecordedWindow {
  ticker: string;
  /**
   * The book at the window's start by the spec's rule 7 (the last snapshot at or before it plus the deltas after), at
   * `ts`; undefined when the start falls inside a gap (the first book is then the one that closes that gap, which
   * must be in `gaps`) or before the ticker's first book (`firstBook`).
   */
  start: { ts: number; received_ts?: number; book: BookLevels } | undefined;
  /**
   * The window starts before the ticker's first book (`start` undefined; the recorder writes no gap before a
   * ticker's first snapshot): that first snapshot, inside the window, at `ts`. The replay starts the book there as at
   * the end of a gap (the venue's reset form); before it, no delta is replayed (none should exist) and trades are.
   */
  firstBook?: { ts: number; received_ts?: number; book: BookLevels };
  deltas: readonly RecordedDelta[];
  trades: readonly RecordedTrade[];
  gaps: readonly RecordedGap[];
  /** The last trade at or before the start, where the venue's first messages name it (Coinbase, Polymarket CLOB). */
  lastTrade?: RecordedTrade;
  /**
   * The time of the window's first messages when it has no book at its start (`start` undefined): what the venue
   * sends first of `lastTrade` goes out then. Venue clock: `from` for both; receive clock: `received_ts` is `from`,
   * `ts` the last trade's.
   */
  opening: { ts: number; received_ts: number };
}

/**
 * A native message: the venue's text, at the recorded venue time (`ts`) and receive time (`received_ts`). A message
 * that carries a subscription's sequence number (Kalshi's `seq`) takes it when `text` is first read: read the texts in
 * the order the messages are sent.
 */
export interface NativeMessage {
  readonly received_ts: number;
  readonly ts: number;
  readonly text: string;
  /**
   * The market's channel the message was written for, where a venue's client can end one channel of a market and
   * keep the others (Coinbase's `level2` and `matches`, a Polymarket US subscription's requestId); absent: the
   * market's messages are one channel.
   */
  readonly channel?: string;
}

/** The recorded rows contradict themselves (a delta takes a level below zero): the window cannot be replayed. */
export class ReplayDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayDataError';
  }
}
