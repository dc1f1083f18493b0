// https://docs.cdp.coinbase.com/exchange/websocket-feed/channels
/**
 * Coinbase Exchange's feed messages as the venue writes them, from its strings: the venue simulator's feed and the
 * replay service both build `level2` and `matches` here. Prices and sizes are already the venue's text.
 */
import { valueText } from '../message';

export type CoinbaseSide = 'buy' | 'sell';

/** The feed's channels [V] (those a subscribe may name; `full`, `status`, … are not spoken here). */
export const COINBASE_CHANNELS = ['level2', 'level2_batch', 'ticker', 'heartbeat', 'matches'] as const;
export type CoinbaseChannel = (typeof COINBASE_CHANNELS)[number];

/** A `subscribe`/`unsubscribe` as read by `parseCoinbaseSubscribe`, or why it fails (the error's `reason`). */
export type CoinbaseSubscribe =
  { type: 'subscribe' | 'unsubscribe'; pairs: [CoinbaseChannel, string][] } | { error: string };

export interface CoinbaseMatchFields {
  type: 'match' | 'last_match';
  tradeId: number | string;
  sequence: number | string;
  makerOrderId: string;
  takerOrderId: string;
  /** RFC 3339 with microseconds. */
  time: string;
  product: string;
  size: string;
  price: string;
  /** The maker's side [V]. */
  side: CoinbaseSide;
}

const DIGITS = /^\d{1,30}$/;
const integer = (v: number | string) => (typeof v === 'number' || DIGITS.test(v) ? String(v) : JSON.stringify(v));

export const coinbaseWire = {
  /** The `level2` snapshot [V]: levels best first, `[price, size]`; no time, no sequence. */
  snapshot(
    product: string,
    bids: readonly (readonly [string, string])[],
    asks: readonly (readonly [string, string])[],
  ): string {
    return JSON.stringify({ type: 'snapshot', product_id: product, bids, asks });
  },

  /** One entry of an `l2update`'s `changes` [V]: `[side, price, new size]` ("0" removes the level). */
  change(side: CoinbaseSide, price: string, size: string): string {
    return `["${side}","${price}","${size}"]`;
  },

  /** An `l2update` [V]: no sequence; `time` the change's. */
  l2update(product: string, changes: readonly string[], time: string): string {
    return `{"type":"l2update","product_id":${JSON.stringify(product)},"changes":[${changes.join(',')}],"time":"${time}"}`;
  },

  /** A `match` (or `last_match`) [V], in the docs' field order. */
  match(m: CoinbaseMatchFields): string {
    return (
      `{"type":"${m.type}","trade_id":${integer(m.tradeId)},"sequence":${integer(m.sequence)},` +
      `"maker_order_id":${JSON.stringify(m.makerOrderId)},"taker_order_id":${JSON.stringify(m.takerOrderId)},` +
      `"time":"${m.time}","product_id":${JSON.stringify(m.product)},"size":${JSON.stringify(m.size)},` +
      `"price":${JSON.stringify(m.price)},"side":"${m.side}"}`
    );
  },

  /** The answer to a subscribe: the connection's whole list [V]. */
  subscriptions(channels: readonly { name: string; product_ids: readonly string[] }[]): string {
    return JSON.stringify({ type: 'subscriptions', channels });
  },

  /** A subscribe refused: `{"type":"error","message":"Failed to subscribe","reason"}` [3P]. */
  subscribeError(reason: string): string {
    return coinbaseWire.error('Failed to subscribe', reason);
  },

  /** `{"type":"error","message","reason"}` [3P]. */
  error(message: string, reason: string): string {
    return JSON.stringify({ type: 'error', message, reason });
  },
};

/**
 * A client's `subscribe` or `unsubscribe` [V]: `{"type","product_ids":[…],"channels":["level2", {"name":"ticker",
 * "product_ids":[…]}]}` — a channel named as a string takes the top-level `product_ids`, one given as an object its own
 * (or, without them, the top-level ones). The pairs (channel, product) in the order named; products are not checked
 * against any catalogue (the caller knows its products), nor are the signature fields (`key`, `passphrase`,
 * `timestamp`, `signature`). `m`: the frame as a JSON object (undefined: not JSON, or not an object). The failures,
 * each the `reason` of a "Failed to subscribe" error: a type other than subscribe/unsubscribe, a channel that is not
 * one of the feed's, a product that is not a string, no pair at all. Shared by the venue simulator and the replay.
 */
export function parseCoinbaseSubscribe(m: Record<string, unknown> | undefined): CoinbaseSubscribe {
  if (!m || (m.type !== 'subscribe' && m.type !== 'unsubscribe'))
    return { error: 'type must be subscribe or unsubscribe' };
  const top = Array.isArray(m.product_ids) ? (m.product_ids as unknown[]) : [];
  const pairs: [CoinbaseChannel, string][] = [];
  // Each (channel, product) once: a channel named again with the top-level products adds nothing (without this, a
  // message of 10,000 channel names and 10,000 products would make 10^8 pairs).
  const seen = new Set<string>();
  for (const raw of Array.isArray(m.channels) ? (m.channels as unknown[]) : []) {
    const c = (raw ?? {}) as { name?: unknown; product_ids?: unknown };
    const name = typeof raw === 'string' ? raw : c.name;
    if (typeof name !== 'string' || !(COINBASE_CHANNELS as readonly string[]).includes(name))
      return { error: `${valueText(name).slice(0, 40)} is not a valid channel` };
    const own = typeof raw !== 'string' && Array.isArray(c.product_ids);
    if (!own && seen.has(name)) continue;
    const products = own ? (c.product_ids as unknown[]) : top;
    for (const p of products) {
      if (typeof p !== 'string') return { error: `${valueText(p).slice(0, 40)} is not a valid product` };
      const pair = `${name} ${p}`;
      if (seen.has(pair)) continue;
      seen.add(pair);
      pairs.push([name as CoinbaseChannel, p]);
    }
    if (!own) seen.add(name);
  }
  if (pairs.length === 0) return { error: 'No channels or product ids provided' };
  return { type: m.type, pairs };
}
