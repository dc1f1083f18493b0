// https://docs.cdp.coinbase.com/exchange/reference/exchangerestapi_getproducttrades, …/websocket-feed/channels
import { coinbaseWire } from '@depthgate/feeds';
import type { BookEngine } from '../../book/engine';
import { BID, type Instrument, type TimedTrade } from '../../book/types';
import { uuidOf } from '../../core/ids';
import { formatScaled } from '../../core/decimal';
import { Rng } from '../../core/rng';
import { isoMicros, isoMillis } from '../../core/time';
import type { SimTrade } from '../../book/view';
import { SEQUENCE_BASE, TRADE_ID_BASE } from './catalog';

/**
 * Coinbase Exchange's names for a trade of the books, on every path alike: `trade_id` is the product's trade count
 * from TRADE_ID_BASE (per product, increasing, as Coinbase's are [V]); `side` is the **maker's** [V] (a taker who
 * bought met a resting sell). Every message of a product's feed carries the product's `sequence`, one greater per
 * message [V]: here a book event counts one (its `l2update` carries none [V]) and each `match` one more, so a match's
 * sequence is `SEQUENCE_BASE + event seq + trade number` and the product's is the same sum at its last event.
 */
export class CoinbaseTrades {
  private readonly keys = new Map<string, number>();

  constructor(private readonly seed: number) {}

  tradeId(no: number): number {
    return TRADE_ID_BASE + no;
  }

  /** The product's sequence now: its last message's (REST book, heartbeat, ticker). */
  productSequence(engine: BookEngine, id: string): number {
    return SEQUENCE_BASE + engine.lastSeq('venue-d', id) + engine.lastTradeNo('venue-d', id);
  }

  makerSide(t: Pick<TimedTrade, 'takerSide'>): 'buy' | 'sell' {
    return t.takerSide === BID ? 'sell' : 'buy';
  }

  /** The maker's and the taker's order ids: UUIDs named by (seed, product, trade number). */
  private orderId(ticker: string, no: number, taker: 0 | 1): string {
    let key = this.keys.get(ticker);
    if (key === undefined) this.keys.set(ticker, (key = new Rng(this.seed, 'coinbase', 'orders', ticker).next()));
    return uuidOf(key, no, taker);
  }

  /** `GET /products/{id}/trades` [V]: time (ms), trade_id (integer), price, size, side (the maker's). */
  rest(inst: Instrument, t: TimedTrade): Record<string, unknown> {
    return {
      time: isoMillis(t.ts),
      trade_id: this.tradeId(t.no),
      price: formatScaled(t.price, inst.priceDecimals),
      size: formatScaled(t.size, inst.qtyDecimals),
      side: this.makerSide(t),
    };
  }

  /** The `matches` channel's `match` (or `last_match`) [V], in the docs' field order; time with microseconds. */
  match(inst: Instrument, t: TimedTrade, type: 'match' | 'last_match' = 'match'): string {
    return coinbaseWire.match({
      type,
      tradeId: this.tradeId(t.no),
      sequence: SEQUENCE_BASE + t.seq + t.no,
      makerOrderId: this.orderId(inst.ticker, t.no, 0),
      takerOrderId: this.orderId(inst.ticker, t.no, 1),
      time: isoMicros(t.ts),
      product: inst.ticker,
      size: formatScaled(t.size, inst.qtyDecimals),
      price: formatScaled(t.price, inst.priceDecimals),
      side: this.makerSide(t),
    });
  }

  describe(inst: Instrument, t: TimedTrade): SimTrade {
    return {
      id: String(this.tradeId(t.no)),
      ticker: inst.ticker,
      no: t.no,
      ts: t.ts,
      price: formatScaled(t.price, inst.priceDecimals),
      size: formatScaled(t.size, inst.qtyDecimals),
      side: t.takerSide === BID ? 'buy' : 'sell',
      venueSide: this.makerSide(t),
    };
  }
}
