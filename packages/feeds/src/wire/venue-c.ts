// https://docs.gemini.com/websocket/market-data/v2/level-2-data
/**
 * Gemini's market data v2 messages as the venue writes them, from its strings: the venue simulator's feed and the
 * replay service both write the `l2` channel through these. Prices and quantities are already the venue's text.
 */

export type GeminiSide = 'buy' | 'sell';

/** Integers Gemini writes as JSON numbers (`tid`, `event_id`) may exceed 2^53: given as their digits, written as is. */
export type GeminiInteger = number | string;

export interface GeminiTradeFields {
  symbol: string;
  eventId: GeminiInteger;
  /** Epoch ms. */
  timestamp: number;
  price: string;
  quantity: string;
  /** The taker's side. */
  side: GeminiSide;
  tid: GeminiInteger;
}

/** A market data v2 `subscribe`/`unsubscribe` as read by `parseGeminiSubscribe`, or why it fails. */
export type GeminiSubscribe =
  { type: 'subscribe' | 'unsubscribe'; symbols: unknown[] } | { error: { reason: 'InvalidJson'; message: string } };

const DIGITS = /^\d{1,30}$/;

/** An integer field as JSON: digits as a number (exactly as given), anything else as a string. */
function integer(v: GeminiInteger): string {
  return typeof v === 'number' || DIGITS.test(v) ? String(v) : JSON.stringify(v);
}

export const geminiWire = {
  /** One entry of `changes` [V]: `["buy"|"sell", price, new absolute quantity]` ("0" removes the level). */
  change(side: GeminiSide, price: string, quantity: string): string {
    return `["${side}","${price}","${quantity}"]`;
  },

  /** An `l2_updates` of changed levels. */
  updates(symbol: string, changes: readonly string[]): string {
    return `{"type":"l2_updates","symbol":${JSON.stringify(symbol)},"changes":[${changes.join(',')}]}`;
  },

  /**
   * The first `l2_updates` of a subscription [V]: the whole book and the last trades (`trades`: messages of
   * `trade`), with `auction_events`.
   */
  initial(symbol: string, changes: readonly string[], trades: readonly string[]): string {
    return `{"type":"l2_updates","symbol":${JSON.stringify(symbol)},"changes":[${changes.join(',')}],"trades":[${trades.join(',')}],"auction_events":[]}`;
  },

  /** A `trade` [V]: `event_id`, `timestamp` (ms), `price`, `quantity`, `side` (the taker's), `tid`. */
  trade(t: GeminiTradeFields): string {
    return (
      `{"type":"trade","symbol":${JSON.stringify(t.symbol)},"event_id":${integer(t.eventId)},"timestamp":${t.timestamp},` +
      `"price":${JSON.stringify(t.price)},"quantity":${JSON.stringify(t.quantity)},"side":"${t.side}","tid":${integer(t.tid)}}`
    );
  },

  heartbeat(timestamp: number): string {
    return `{"type":"heartbeat","timestamp":${timestamp}}`;
  },

  /** `{"type":"error","result":"error","reason","message"}` [V schema of REST errors; the feed's as observed [3P]]. */
  error(reason: string, message: string): string {
    return JSON.stringify({ type: 'error', result: 'error', reason, message });
  },
};

/**
 * A client's market data v2 `subscribe` or `unsubscribe` [V]: `{"type","subscriptions":[{"name":"l2","symbols":[…]}]}`.
 * The symbols of every subscription in the order named, as given (the caller checks them against its symbols: an
 * unknown one is an `InvalidSymbol` error of its own, the others go on). `m`: the frame as a JSON object (undefined:
 * not JSON, or not an object). Fails (an `InvalidJson` error) on another type, no `subscriptions` list, or a
 * subscription other than `l2` or without a `symbols` list. Shared by the venue simulator and the replay.
 */
export function parseGeminiSubscribe(m: Record<string, unknown> | undefined): GeminiSubscribe {
  if (!m || (m.type !== 'subscribe' && m.type !== 'unsubscribe') || !Array.isArray(m.subscriptions))
    return {
      error: {
        reason: 'InvalidJson',
        message: 'expected {"type":"subscribe","subscriptions":[{"name":"l2","symbols":[...]}]}',
      },
    };
  const symbols: unknown[] = [];
  for (const s of m.subscriptions as unknown[]) {
    const sub = (s ?? {}) as { name?: unknown; symbols?: unknown };
    if (sub.name !== 'l2' || !Array.isArray(sub.symbols))
      return { error: { reason: 'InvalidJson', message: 'only the l2 subscription (with a symbols list) is served' } };
    // One by one: spread as arguments, a list of a few hundred thousand would overflow the stack.
    for (const symbol of sub.symbols as unknown[]) symbols.push(symbol);
  }
  return { type: m.type, symbols };
}
