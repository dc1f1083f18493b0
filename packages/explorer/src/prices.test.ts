import { OrderBook, type DeltaRow, type MarketEvent, type SnapshotRow, type TradeLine } from '@depthgate/client';
import { PriceCollector, largestSize, priceRange, tradeRadius, tradesUpTo, type ChartTrade } from './prices';

const T0 = Date.UTC(2026, 10, 23, 11, 0);
const iso = (ms: number) => new Date(ms).toISOString();

/** Events as `events()` gives them: one OrderBook, kept current. */
function walk(): MarketEvent[] {
  const snapshot: SnapshotRow[] = [
    { ts: iso(T0), side: 'bid', price: '0.4', quantity: '10' },
    { ts: iso(T0), side: 'ask', price: '0.6', quantity: '5' },
  ];
  const book = OrderBook.fromSnapshot(snapshot);
  const out: MarketEvent[] = [];
  const delta = (ms: number, sequence: number, side: 'bid' | 'ask', price: string, q: string) => {
    const d: DeltaRow = { ts: iso(ms), sequence, side, price, quantity_delta: q };
    book.apply(d);
    // A snapshot of what the page reads from the event (the book is the same object throughout).
    out.push({ type: 'delta', ts: d.ts, at: ms, delta: d, book: book.clone() });
  };
  const trade = (ms: number, id: string, side: 'buy' | 'sell', price: string, size: string, inGap = false) => {
    const t: TradeLine = { type: 'trade', ts: iso(ms), trade_id: id, price, size, side };
    out.push({ type: 'trade', ts: t.ts, at: ms, trade: t, book: inGap ? null : book.clone() });
  };
  delta(T0 + 1000, 1, 'bid', '0.45', '3');
  trade(T0 + 2000, 'a', 'buy', '0.6', '2');
  delta(T0 + 2000, 3, 'ask', '0.6', '-2');
  delta(T0 + 2000, 4, 'ask', '0.55', '1'); // same moment: one point, the book after both
  out.push({
    type: 'trades_gap',
    gap: { from_ts: iso(T0 + 3000), to_ts: iso(T0 + 4000), reason: 'disconnect', detected_at: iso(T0 + 4000) },
  });
  out.push({
    type: 'gap',
    gap: { from_ts: iso(T0 + 5000), to_ts: iso(T0 + 7000), reason: 'reconnect', detected_at: iso(T0 + 7000) },
  });
  trade(T0 + 6000, 'b', 'sell', '0.4', '20', true);
  book.loadSnapshot([{ ts: iso(T0 + 7000), side: 'bid', price: '0.3', quantity: '1' }], T0 + 7000);
  out.push({ type: 'snapshot', ts: iso(T0 + 7000), at: T0 + 7000, book: book.clone(), restarted: true });
  trade(T0 + 8000, 'c', 'sell', '0.3', '0.5');
  return out;
}

describe('PriceCollector', () => {
  it('best bid and ask after each moment, broken at a gap of the book, held to the end; trades and gaps kept', () => {
    const c = new PriceCollector(T0, T0 + 10_000);
    for (const e of walk()) expect(c.add(e)).toBe(true);
    const d = c.finish();
    expect(d.xs.map((x) => (x - T0) / 1000)).toEqual([1, 2, 5, 7, 10]);
    expect(d.bids).toEqual([0.45, 0.45, null, 0.3, 0.3]);
    expect(d.asks).toEqual([0.6, 0.55, null, null, null]);
    expect(d.trades.map((t) => [t.trade_id, t.side, t.size, t.price])).toEqual([
      ['a', 'buy', '2', '0.6'],
      ['b', 'sell', '20', '0.4'],
      ['c', 'sell', '0.5', '0.3'],
    ]);
    expect([d.bookGaps.map((g) => g.reason), d.tradeGaps.map((g) => g.reason), d.changes]).toEqual([
      ['reconnect'],
      ['disconnect'],
      3,
    ]);
    expect(d.stoppedAt).toBeUndefined();
    expect([d.lastBid, d.lastAsk]).toEqual(['0.3', undefined]);
  });

  it('stops at its cap and says where', () => {
    const c = new PriceCollector(T0, T0 + 10_000);
    const events = walk();
    let taken = 0;
    for (const e of events) {
      taken++;
      if (!c.add(e, 3)) break;
    }
    expect(taken).toBe(3);
    const d = c.finish();
    expect(d.stoppedAt).toBe(T0 + 2000);
    expect(d.xs[d.xs.length - 1]).toBe(T0 + 2000);
  });
});

describe('the list and the points', () => {
  const trades: ChartTrade[] = [1, 2, 2, 5, 9].map((s, i) => ({
    at: T0 + s * 1000,
    ts: iso(T0 + s * 1000),
    trade_id: `t${i}`,
    price: '0.5',
    size: String(i + 1),
    side: i % 2 ? 'sell' : 'buy',
  }));

  it('tradesUpTo: the trades at or before the moment, newest first, at most the limit', () => {
    expect(tradesUpTo(trades, T0 + 2000, 10)).toEqual({ rows: [trades[2], trades[1], trades[0]], total: 3 });
    expect(tradesUpTo(trades, T0 + 9000, 2)).toEqual({ rows: [trades[4], trades[3]], total: 5 });
    expect(tradesUpTo(trades, T0, 10)).toEqual({ rows: [], total: 0 });
  });

  it('a point’s area grows with its size, the largest trade the largest point', () => {
    const largest = largestSize(trades);
    expect(largest).toBe(5);
    const radii = trades.map((t) => tradeRadius(t.size, largest));
    expect(radii).toEqual([...radii].sort((a, b) => a - b));
    expect(radii[4]).toBe(10);
    expect(radii[0]! ** 2).toBeLessThan(radii[4]! ** 2);
    expect(tradeRadius('1', 0)).toBe(2.5);
  });

  it('priceRange covers best prices and trades, with a margin', () => {
    const [lo, hi] = priceRange({
      from: 0,
      to: 1,
      xs: [0],
      bids: [0.4],
      asks: [null],
      trades: [{ ...trades[0]!, price: '0.7' }],
      bookGaps: [],
      tradeGaps: [],
      changes: 1,
    });
    expect(lo).toBeLessThan(0.4);
    expect(hi).toBeGreaterThan(0.7);
    expect(hi - lo).toBeLessThan(0.4);
  });
});
