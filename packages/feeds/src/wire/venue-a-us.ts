// https://docs.polymarket.us/api-reference/websocket/markets
/**
 * Polymarket US's markets WebSocket messages as the venue writes them, from its strings: the venue simulator's feed
 * (and its REST book) and the replay service both build them here. Prices and quantities are already the venue's
 * text (`px.value` with 3 decimals).
 */

import { jsonObject } from './json';

/** A level as given: `[price, quantity]`. */
export type PmUsLevel = readonly [string, string];

export interface PmUsBook {
  slug: string;
  /** Best first. */
  bids: readonly PmUsLevel[];
  offers: readonly PmUsLevel[];
  state: string;
  /** `MarketStats` [V] (`lastTradePx`, `sharesTraded`, …); absent: `{}`. */
  stats?: Record<string, unknown>;
  /** RFC 3339 with milliseconds; undefined leaves the field out. */
  transactTime: string | undefined;
}

export interface PmUsTradeFields {
  slug: string;
  price: string;
  quantity: string;
  tradeTime: string;
  /** The taker bought long (lifted an offer); else sold long (hit a bid). */
  takerBuys: boolean;
}

/** An `Amount` [V]: `value` a decimal string, `currency` USD. */
export const pmUsAmount = (value: string) => ({ value, currency: 'USD' });

const long = (buy: boolean) => ({
  side: buy ? 'ORDER_SIDE_BUY' : 'ORDER_SIDE_SELL',
  intent: buy ? 'ORDER_INTENT_BUY_LONG' : 'ORDER_INTENT_SELL_LONG',
});

export const pmUsWire = {
  /** A `MarketData` object [V] (the feed's `marketData`, REST's book): levels `{px: Amount, qty}`, best first. */
  marketData(b: PmUsBook): Record<string, unknown> {
    const levels = (list: readonly PmUsLevel[]) => list.map(([p, q]) => ({ px: pmUsAmount(p), qty: q }));
    return {
      marketSlug: b.slug,
      bids: levels(b.bids),
      offers: levels(b.offers),
      state: b.state,
      stats: b.stats ?? {},
      ...(b.transactTime !== undefined ? { transactTime: b.transactTime } : {}),
    };
  },

  /**
   * The message of a trade [V]: `marketSlug`, `price` and `quantity` as Amounts, `tradeTime`, the maker's and the
   * taker's side and intent (the book is the market's long side).
   */
  trade(t: PmUsTradeFields): string {
    return JSON.stringify({
      marketSlug: t.slug,
      price: pmUsAmount(t.price),
      quantity: pmUsAmount(t.quantity),
      tradeTime: t.tradeTime,
      maker: long(!t.takerBuys),
      taker: long(t.takerBuys),
    });
  },

  /**
   * A message of a subscription: `{"requestId",…rest}` where `rest` is the text after the request id,
   * `"subscriptionType":…,"<field>":…}` (shared by every subscriber of the same kind; see `body`).
   */
  frame(requestId: string, rest: string): string {
    return `{"requestId":${JSON.stringify(requestId)},${rest}`;
  },

  /** The part of a message after its request id, written once for all subscriptions of a type. */
  body(subscriptionType: string, field: string, json: string): string {
    return `"subscriptionType":"${subscriptionType}","${field}":${json}}`;
  },

  heartbeat(): string {
    return '{"heartbeat":{}}';
  },

  /** `{"requestId"?,"error"}` [V]. */
  error(requestId: unknown, error: string): string {
    return JSON.stringify({ ...(typeof requestId === 'string' ? { requestId } : {}), error });
  },
};

/** The markets WebSocket's subscription types [V]. */
export const PM_US_SUBSCRIPTION_TYPES = [
  'SUBSCRIPTION_TYPE_MARKET_DATA',
  'SUBSCRIPTION_TYPE_MARKET_DATA_LITE',
  'SUBSCRIPTION_TYPE_TRADE',
] as const;
export type PmUsSubscriptionType = (typeof PM_US_SUBSCRIPTION_TYPES)[number];

/** At most this many markets per subscription [V]. */
export const PM_US_MAX_SLUGS = 100;

/** What a client's message on the markets WebSocket asks for. */
export type PmUsRequest =
  | { kind: 'subscribe'; requestId: string; type: PmUsSubscriptionType; slugs: string[] }
  /** `requestId` as sent (the caller looks it up: `subscription not found` when it names none). */
  | { kind: 'unsubscribe'; requestId: unknown }
  /** Answered `pmUsWire.error(requestId, error)`. */
  | { kind: 'error'; requestId?: string; error: string };

/**
 * A client's message on the markets WebSocket [V], as the venue reads it (the simulator's feed and the replay both
 * parse here): `{"subscribe":{"requestId","subscriptionType","marketSlugs":[…≤100]}}` or
 * `{"unsubscribe":{"requestId"}}`. The errors are the simulator's texts (the venue's are not documented [U]): `invalid
 * message` (not a JSON object), `requestId is required`, `unsupported subscriptionType`, `marketSlugs is required`
 * (none that is a string; other entries are dropped), `too many marketSlugs (max 100)`, `unknown message`.
 */
export function parsePmUsRequest(text: string): PmUsRequest {
  const m = jsonObject(text);
  if (!m) return { kind: 'error', error: 'invalid message' };
  if (m.subscribe && typeof m.subscribe === 'object') {
    const s = m.subscribe as Record<string, unknown>;
    const requestId = typeof s.requestId === 'string' ? s.requestId : '';
    if (!requestId) return { kind: 'error', error: 'requestId is required' };
    const type = s.subscriptionType as PmUsSubscriptionType;
    if (!PM_US_SUBSCRIPTION_TYPES.includes(type))
      return { kind: 'error', requestId, error: 'unsupported subscriptionType' };
    const slugs = Array.isArray(s.marketSlugs) ? s.marketSlugs.filter((x): x is string => typeof x === 'string') : [];
    if (slugs.length === 0) return { kind: 'error', requestId, error: 'marketSlugs is required' };
    if (slugs.length > PM_US_MAX_SLUGS)
      return { kind: 'error', requestId, error: `too many marketSlugs (max ${PM_US_MAX_SLUGS})` };
    return { kind: 'subscribe', requestId, type, slugs };
  }
  if (m.unsubscribe && typeof m.unsubscribe === 'object')
    return { kind: 'unsubscribe', requestId: (m.unsubscribe as Record<string, unknown>).requestId };
  return { kind: 'error', error: 'unknown message' };
}
