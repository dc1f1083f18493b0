import { clobBookHash, type ClobBookSummary } from '@depthgate/feeds';
import type { DecimalBook } from '../book/view';
import { parseScaled } from '../core/decimal';

/**
 * A consumer of the Polymarket CLOB market channel that follows the channel's documented rules, written apart from
 * the simulator's model: per asset it keeps the book (price → size, the venue's strings as received), `tick_size`,
 * `min_order_size` and `neg_risk` (from `book`, then `tick_size_change`) and `last_trade_price` (from `book`, then
 * `last_trade_price`), and checks the `hash` of every `book` and of every `price_change` entry (applied in order)
 * against its own book with Polymarket's recipe (`clobBookHash`).
 */
interface AssetState {
  market: string;
  bids: Map<string, string>;
  asks: Map<string, string>;
  minOrderSize: string;
  tickSize: string;
  negRisk: boolean;
  lastTradePrice: string;
}

export interface HashCheck {
  /** Index of the message in the client's `messages`. */
  message: number;
  eventType: 'book' | 'price_change';
  asset: string;
  ok: boolean;
}

const value = (price: string): number => {
  const v = parseScaled(price, 6);
  if (v === null) throw new Error(`not a price: ${price}`);
  return v;
};

export class ClobConsumer {
  private readonly assets = new Map<string, AssetState>();
  readonly checks: HashCheck[] = [];
  /** `tick_size_change`s seen, and those whose `old_tick_size` was not the tick the consumer held. */
  tickChanges = 0;
  readonly problems: string[] = [];
  private applied = 0;

  /** Applies the client's messages received since the last call. */
  update(messages: readonly Record<string, unknown>[]): this {
    for (; this.applied < messages.length; this.applied++) this.apply(messages[this.applied] ?? {}, this.applied);
    return this;
  }

  private apply(m: Record<string, unknown>, index: number): void {
    switch (m.event_type) {
      case 'book': {
        const asset = m.asset_id as string;
        const s: AssetState = {
          market: m.market as string,
          bids: new Map(),
          asks: new Map(),
          minOrderSize: m.min_order_size as string,
          tickSize: m.tick_size as string,
          negRisk: m.neg_risk as boolean,
          lastTradePrice: m.last_trade_price as string,
        };
        for (const l of m.bids as { price: string; size: string }[]) s.bids.set(l.price, l.size);
        for (const l of m.asks as { price: string; size: string }[]) s.asks.set(l.price, l.size);
        this.assets.set(asset, s);
        this.check(index, 'book', asset, m.timestamp as string, m.hash as string);
        return;
      }
      case 'price_change': {
        for (const e of m.price_changes as Record<string, string>[]) {
          const s = this.assets.get(e.asset_id as string);
          if (!s) {
            this.problems.push(`price_change before the book of ${e.asset_id}`);
            continue;
          }
          const side = e.side === 'BUY' ? s.bids : s.asks;
          if (value(e.size as string) === 0) side.delete(e.price as string);
          else side.set(e.price as string, e.size as string);
          this.check(index, 'price_change', e.asset_id as string, m.timestamp as string, e.hash as string);
          const view = this.book(e.asset_id as string) as DecimalBook;
          if ((view.bids[0]?.[0] ?? '0') !== e.best_bid || (view.asks[0]?.[0] ?? '0') !== e.best_ask) {
            this.problems.push(`best prices of ${e.asset_id} at message ${index}`);
          }
        }
        return;
      }
      case 'tick_size_change': {
        const s = this.assets.get(m.asset_id as string);
        this.tickChanges++;
        if (!s || s.tickSize !== m.old_tick_size) this.problems.push(`tick_size_change of ${m.asset_id} at ${index}`);
        if (s) s.tickSize = m.new_tick_size as string;
        return;
      }
      case 'last_trade_price': {
        const s = this.assets.get(m.asset_id as string);
        if (s) s.lastTradePrice = m.price as string;
        return;
      }
    }
  }

  private check(message: number, eventType: HashCheck['eventType'], asset: string, ts: string, hash: string): void {
    this.checks.push({ message, eventType, asset, ok: this.hash(asset, ts) === hash });
  }

  /** The summary the consumer holds for an asset at a timestamp: bids ascending, asks descending (best last). */
  summary(asset: string, timestamp: string): ClobBookSummary | undefined {
    const s = this.assets.get(asset);
    if (!s) return undefined;
    const levels = (m: Map<string, string>, desc: boolean) =>
      [...m].sort((a, b) => (value(a[0]) - value(b[0])) * (desc ? -1 : 1)).map(([price, size]) => ({ price, size }));
    return {
      market: s.market,
      asset_id: asset,
      timestamp,
      bids: levels(s.bids, false),
      asks: levels(s.asks, true),
      min_order_size: s.minOrderSize,
      tick_size: s.tickSize,
      neg_risk: s.negRisk,
      last_trade_price: s.lastTradePrice,
    };
  }

  hash(asset: string, timestamp: string): string | undefined {
    const summary = this.summary(asset, timestamp);
    return summary && clobBookHash(summary);
  }

  /** The asset's book, best first (as `sim.books.book` gives the YES token's). */
  book(asset: string): DecimalBook | undefined {
    const s = this.summary(asset, '');
    if (!s) return undefined;
    return {
      bids: [...s.bids].reverse().map((l) => [l.price, l.size]),
      asks: [...s.asks].reverse().map((l) => [l.price, l.size]),
    };
  }

  /** What the consumer holds besides the levels. */
  settings(asset: string): Omit<AssetState, 'bids' | 'asks'> | undefined {
    const s = this.assets.get(asset);
    if (!s) return undefined;
    const { bids: _b, asks: _a, ...rest } = s;
    return rest;
  }

  /** Messages with a hash that did not match the consumer's book, in order (each once). */
  mismatches(): number[] {
    return [...new Set(this.checks.filter((c) => !c.ok).map((c) => c.message))];
  }
}
