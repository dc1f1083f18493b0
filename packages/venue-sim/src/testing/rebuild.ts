import { formatScaled, parseScaled } from '../core/decimal';
import type { DecimalBook } from '../book/view';

/**
 * Books rebuilt from each feed the way a recorder would, written independently of the simulator's own model: exact
 * decimals parsed from the wire, levels kept in maps.
 */
class Sides {
  readonly bids = new Map<number, number>();
  readonly asks = new Map<number, number>();

  constructor(
    private readonly pd: number,
    private readonly qd: number,
  ) {}

  set(side: 'bid' | 'ask', price: string, qty: string): void {
    const p = parseScaled(price, this.pd);
    const q = parseScaled(qty, this.qd);
    if (p === null || q === null) throw new Error(`not exact at the venue precision: ${price} ${qty}`);
    const m = side === 'bid' ? this.bids : this.asks;
    if (q === 0) m.delete(p);
    else m.set(p, q);
  }

  add(side: 'bid' | 'ask', price: number, delta: number): void {
    const m = side === 'bid' ? this.bids : this.asks;
    const q = (m.get(price) ?? 0) + delta;
    if (q < 0) throw new Error(`negative quantity at ${price}`);
    if (q === 0) m.delete(price);
    else m.set(price, q);
  }

  book(): DecimalBook {
    const fmt = (m: Map<number, number>, desc: boolean) =>
      [...m.entries()]
        .sort((a, b) => (desc ? b[0] - a[0] : a[0] - b[0]))
        .map(([p, q]) => [formatScaled(p, this.pd), formatScaled(q, this.qd)] as [string, string]);
    return { bids: fmt(this.bids, true), asks: fmt(this.asks, false) };
  }
}

/** Kalshi: snapshot of YES and NO bids, then signed deltas; a NO bid at q is a YES ask at 1 − q. */
export class KalshiRebuild {
  private readonly books = new Map<string, Sides>();
  /** Per sid, the last seq seen; `gaps` counts missing numbers. */
  private readonly seqs = new Map<number, number>();
  gaps = 0;

  apply(m: Record<string, unknown>): void {
    if (m.type !== 'orderbook_snapshot' && m.type !== 'orderbook_delta') return;
    const sid = m.sid as number;
    const seq = m.seq as number;
    const prev = this.seqs.get(sid);
    if (prev !== undefined && seq !== prev + 1) this.gaps += seq - prev - 1;
    this.seqs.set(sid, seq);
    const msg = m.msg as Record<string, unknown>;
    const ticker = msg.market_ticker as string;
    if (m.type === 'orderbook_snapshot') {
      const b = new Sides(4, 2);
      for (const [p, q] of (msg.yes_dollars_fp ?? msg.yes_dollars) as Array<[string, string]>) b.set('bid', p, q);
      for (const [p, q] of (msg.no_dollars_fp ?? msg.no_dollars) as Array<[string, string]>) {
        b.set('ask', formatScaled(10000 - (parseScaled(p, 4) as number), 4), q);
      }
      this.books.set(ticker, b);
      return;
    }
    const b = this.books.get(ticker);
    if (!b) throw new Error(`delta before snapshot for ${ticker}`);
    const price = parseScaled(msg.price_dollars as string, 4) as number;
    const delta = parseScaled(msg.delta_fp as string, 2) as number;
    if (msg.side === 'yes') b.add('bid', price, delta);
    else b.add('ask', 10000 - price, delta);
  }

  book(ticker: string): DecimalBook | undefined {
    return this.books.get(ticker)?.book();
  }
}

/** Gemini v2 l2: the first l2_updates per symbol is the whole book, later ones absolute level sizes. */
export class GeminiRebuild {
  private readonly books = new Map<string, Sides>();

  constructor(private readonly precision: (symbol: string) => [number, number]) {}

  apply(m: Record<string, unknown>): void {
    if (m.type !== 'l2_updates') return;
    const symbol = m.symbol as string;
    let b = this.books.get(symbol);
    if (!b) {
      const [pd, qd] = this.precision(symbol);
      b = new Sides(pd, qd);
      this.books.set(symbol, b);
    }
    for (const [side, p, q] of m.changes as Array<[string, string, string]>)
      b.set(side === 'buy' ? 'bid' : 'ask', p, q);
  }

  book(symbol: string): DecimalBook | undefined {
    return this.books.get(symbol)?.book();
  }
}

/** Polymarket US MARKET_DATA: every message is the whole book. */
export class PmUsRebuild {
  private readonly books = new Map<string, { book: DecimalBook; transactTime: string | undefined }>();

  apply(m: Record<string, unknown>): void {
    const md = m.marketData as Record<string, unknown> | undefined;
    if (!md) return;
    const levels = (x: unknown) =>
      (x as Array<{ px: { value: string }; qty: string }>).map((l) => [l.px.value, l.qty] as [string, string]);
    this.books.set(md.marketSlug as string, {
      book: { bids: levels(md.bids), asks: levels(md.offers) },
      transactTime: md.transactTime as string | undefined,
    });
  }

  book(slug: string): DecimalBook | undefined {
    return this.books.get(slug)?.book;
  }

  transactTime(slug: string): string | undefined {
    return this.books.get(slug)?.transactTime;
  }
}

/** A REST book answer normalised to best-first [price, qty] strings. */
export const restBooks = {
  kalshi(body: unknown): DecimalBook {
    const ob = (body as { orderbook_fp: { yes_dollars: Array<[string, string]>; no_dollars: Array<[string, string]> } })
      .orderbook_fp;
    return {
      bids: [...ob.yes_dollars].reverse(),
      asks: [...ob.no_dollars].reverse().map(([p, q]) => [formatScaled(10000 - (parseScaled(p, 4) as number), 4), q]),
    };
  },
  gemini(body: unknown): DecimalBook {
    const b = body as Record<'bids' | 'asks', Array<{ price: string; amount: string }>>;
    return { bids: b.bids.map((l) => [l.price, l.amount]), asks: b.asks.map((l) => [l.price, l.amount]) };
  },
  polymarketUs(body: unknown): DecimalBook {
    const md = (body as { marketData: Record<'bids' | 'offers', Array<{ px: { value: string }; qty: string }>> })
      .marketData;
    return { bids: md.bids.map((l) => [l.px.value, l.qty]), asks: md.offers.map((l) => [l.px.value, l.qty]) };
  },
};
