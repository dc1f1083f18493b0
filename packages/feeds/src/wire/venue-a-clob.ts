// https://docs.polymarket.com/api-reference/wss/market
/**
 * The Polymarket CLOB market channel's messages as the venue writes them, from its strings: the venue simulator's
 * feed and REST book, and the replay service, build them here. Prices and sizes are the venue's shortest forms;
 * `hash` is `clobBookHash` of the asset's summary (clob-hash.ts).
 */
import { jsonObject } from './json';
import { clobBookHash, type ClobBookSummary, type ClobLevel } from '../clob-hash';

export type ClobSide = 'BUY' | 'SELL';

/** A token's summary with its hash, in the server's field order (REST `/book`; the channel's `book` adds `event_type`). */
export type ClobSummary = Omit<ClobBookSummary, 'bids' | 'asks'> & {
  hash: string;
  bids: ClobLevel[];
  asks: ClobLevel[];
};

export interface ClobChangeFields {
  asset: string;
  price: string;
  /** The level's new aggregate size ("0": removed). */
  size: string;
  side: ClobSide;
  /** The asset's summary hash after this change. */
  hash: string;
  bestBid: string;
  bestAsk: string;
}

export interface ClobTradeFields {
  asset: string;
  market: string;
  price: string;
  size: string;
  /** The taker's side. */
  side: ClobSide;
  /** Epoch ms. */
  timestamp: number;
  feeRateBps: string;
  transactionHash: string;
}

export const clobWire = {
  /** The summary of a book, with its hash (`hash` given: a corrupt one, in the simulator's faults). */
  summary(b: ClobBookSummary, hash: string = clobBookHash(b)): ClobSummary {
    return {
      market: b.market,
      asset_id: b.asset_id,
      timestamp: b.timestamp,
      hash,
      bids: b.bids as ClobLevel[],
      asks: b.asks as ClobLevel[],
      min_order_size: b.min_order_size,
      tick_size: b.tick_size,
      neg_risk: b.neg_risk,
      last_trade_price: b.last_trade_price,
    };
  },

  /** A `book` event: the summary in the server's field order after `event_type`. */
  book(summary: ClobSummary): string {
    return JSON.stringify({ event_type: 'book', ...summary });
  },

  /** One entry of a `price_change` [V] (current form, since 2025-09-15). */
  change(c: ClobChangeFields): string {
    return `{"asset_id":"${c.asset}","price":"${c.price}","size":"${c.size}","side":"${c.side}","hash":"${c.hash}","best_bid":"${c.bestBid}","best_ask":"${c.bestAsk}"}`;
  },

  /** A `price_change` [V]: the entries of a market's change, at its timestamp (ms). */
  priceChange(market: string, entries: readonly string[], timestamp: number | string): string {
    return `{"market":"${market}","price_changes":[${entries.join(',')}],"timestamp":"${timestamp}","event_type":"price_change"}`;
  },

  /** `last_trade_price` [V]: the taker's side, `timestamp` in ms as a string. */
  lastTradePrice(t: ClobTradeFields): string {
    return JSON.stringify({
      event_type: 'last_trade_price',
      asset_id: t.asset,
      market: t.market,
      price: t.price,
      size: t.size,
      fee_rate_bps: t.feeRateBps,
      side: t.side,
      timestamp: String(t.timestamp),
      transaction_hash: t.transactionHash,
    });
  },

  /** `tick_size_change` [V]. */
  tickSizeChange(asset: string, market: string, oldTick: string, newTick: string, timestamp: number | string): string {
    return JSON.stringify({
      event_type: 'tick_size_change',
      asset_id: asset,
      market,
      old_tick_size: oldTick,
      new_tick_size: newTick,
      timestamp: String(timestamp),
    });
  },
};

/** The channel's answer to a message it cannot read [U] (it has no other error form). */
export const CLOB_INVALID_OPERATION = 'INVALID OPERATION';

/**
 * depthgate's own refusal on the market channel, which has no error message that could say why (its limits, an
 * upstream's refusal): `{"event_type":"depthgate_error","error","message"}`, an event type no client of the venue
 * acts on. The gateway's and the replay's.
 */
export function clobDepthgateError(error: string, message: string): string {
  return JSON.stringify({ event_type: 'depthgate_error', error, message });
}

/** What a client's frame on the market channel asks for. */
export type ClobRequest =
  /** The text `PING` (keep-alive), answered with the text `PONG` [3P]. */
  | { kind: 'ping' }
  /** `{"assets_ids":[…],"type":"market"}` (again to add assets) or `"operation":"subscribe"`. */
  | { kind: 'subscribe'; assets: string[]; initialDump: boolean }
  | { kind: 'unsubscribe'; assets: string[] }
  /** Anything else: answered `INVALID OPERATION`. */
  | { kind: 'invalid' };

/**
 * A client's frame on the market channel [V], as the venue reads it (the simulator's feed and the replay both parse
 * here): `PING`; a JSON object whose `assets_ids` is a list of strings, with `"type":"market"` (any case; a later one
 * adds assets, as ccxt sends one per watched outcome) or `"operation":"subscribe"|"unsubscribe"`; `initial_dump`
 * false skips the subscribed assets' books. A binary frame, or anything else, is invalid. Unknown asset ids are the
 * caller's to ignore (the venue ignores them silently [3P]).
 */
export function parseClobRequest(text: string, isBinary = false): ClobRequest {
  if (isBinary) return { kind: 'invalid' };
  if (text === 'PING') return { kind: 'ping' };
  const m = jsonObject(text);
  const assets = Array.isArray(m?.assets_ids) ? (m.assets_ids as unknown[]) : undefined;
  if (!m || !assets || !assets.every((a) => typeof a === 'string')) return { kind: 'invalid' };
  const ids = assets as string[];
  const initial = typeof m.type === 'string' && m.type.toLowerCase() === 'market';
  if (initial || m.operation === 'subscribe')
    return { kind: 'subscribe', assets: ids, initialDump: m.initial_dump !== false };
  if (m.operation === 'unsubscribe') return { kind: 'unsubscribe', assets: ids };
  return { kind: 'invalid' };
}
