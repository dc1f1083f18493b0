// https://developer.gemini.com/trading/rest-api/market-data/list-trades, docs.gemini.com/websocket/market-data/v2
import { geminiWire } from '@depthgate/feeds';
import { BID, type Instrument, type TimedTrade } from '../../book/types';
import { formatScaled } from '../../core/decimal';
import type { SimTrade } from '../../book/view';
import type { GeminiCatalog } from './catalog';

/**
 * Gemini's trade ids (`tid`) and event ids are integers in one space across symbols [V] (the docs' examples:
 * `tid` 2840140800042677, `event_id` 3575573053). Here a symbol's n-th trade is `TID_BASE + n × STRIDE + k` and the
 * event that made it `EVENT_BASE + seq × STRIDE + k`, k the symbol's place in the catalogue: unique across symbols,
 * increasing per symbol, the same on every path.
 */
const TID_BASE = 2_840_140_800_000_000;
const EVENT_BASE = 3_575_573_053_000;
const STRIDE = 10_000;

/** Gemini's names for a trade of the books: REST `/v1/trades/{symbol}`, the v2 `trade` message, the oracle. */
export class GeminiTrades {
  private readonly ordinal = new Map<string, number>();

  constructor(catalog: GeminiCatalog) {
    catalog.instruments.forEach((inst, k) => this.ordinal.set(inst.ticker, k));
    if (catalog.instruments.length > STRIDE) throw new RangeError(`at most ${STRIDE} Gemini symbols`);
  }

  tid(ticker: string, no: number): number {
    return TID_BASE + no * STRIDE + (this.ordinal.get(ticker) ?? 0);
  }

  /** The smallest trade number whose tid is greater than `tid` (`since_tid`). */
  firstNoAfter(ticker: string, tid: number): number {
    const k = this.ordinal.get(ticker) ?? 0;
    return Math.max(1, Math.floor((tid - TID_BASE - k) / STRIDE) + 1);
  }

  private eventId(ticker: string, seq: number): number {
    return EVENT_BASE + seq * STRIDE + (this.ordinal.get(ticker) ?? 0);
  }

  /**
   * REST [V]: `timestamp` (s), `timestampms`, `tid`, `price`, `amount`, `exchange`, `type` (the taker's side: `buy`
   * = an ask was taken by a buy order), `broken` only when breaks are asked for (none is ever broken here).
   */
  rest(inst: Instrument, t: TimedTrade, includeBreaks: boolean): Record<string, unknown> {
    return {
      timestamp: Math.floor(t.ts / 1000),
      timestampms: t.ts,
      tid: this.tid(inst.ticker, t.no),
      price: formatScaled(t.price, inst.priceDecimals),
      amount: formatScaled(t.size, inst.qtyDecimals),
      exchange: 'gemini',
      type: t.takerSide === BID ? 'buy' : 'sell',
      ...(includeBreaks ? { broken: false } : {}),
    };
  }

  /**
   * Market data v2 `trade` [V]: `event_id` (the event's: the fills of one taker share it), `timestamp` (ms),
   * `price`, `quantity`, `side` (the taker's), `tid`. The same object sits in the first `l2_updates`' `trades`.
   */
  ws(inst: Instrument, t: TimedTrade): string {
    return geminiWire.trade({
      symbol: inst.ticker,
      eventId: this.eventId(inst.ticker, t.seq),
      timestamp: t.ts,
      price: formatScaled(t.price, inst.priceDecimals),
      quantity: formatScaled(t.size, inst.qtyDecimals),
      side: t.takerSide === BID ? 'buy' : 'sell',
      tid: this.tid(inst.ticker, t.no),
    });
  }

  describe(inst: Instrument, t: TimedTrade): SimTrade {
    const side = t.takerSide === BID ? 'buy' : 'sell';
    return {
      id: String(this.tid(inst.ticker, t.no)),
      ticker: inst.ticker,
      no: t.no,
      ts: t.ts,
      price: formatScaled(t.price, inst.priceDecimals),
      size: formatScaled(t.size, inst.qtyDecimals),
      side,
      venueSide: side,
    };
  }
}
