// https://docs.cdp.coinbase.com/exchange/websocket-feed/channels
/**
 * Coinbase Exchange's feed messages as the venue writes them, from its strings: the venue simulator's feed and the
 * replay service both build `level2` and `matches` here. Prices and sizes are already the venue's text.
 */

export type CoinbaseSide = 'buy' | 'sell';

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

  /** `{"type":"error","message","reason"}` [3P]. */
  error(message: string, reason: string): string {
    return JSON.stringify({ type: 'error', message, reason });
  },
};
