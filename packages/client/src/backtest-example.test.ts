// The worked backtest's rules (examples/market-maker.mts) on books and trades made by hand: the microprice, the quotes
// (rounding, skew, never crossing, the inventory limit, queue kept when the price stays), and both fill rules. The
// same cases as the Python client's tests/test_backtest.py, so the two examples are held to one set of rules.
import { DEFAULT_PARAMS, MarketMaker, Quotient, microprice, type Trade } from '../examples/market-maker.mts';
import { Decimal } from './decimal';
import { OrderBook } from './order-book';
import type { SnapshotRow } from './rows';
import { formatTimestamp } from './timestamps';

const T0 = Date.UTC(2026, 3, 1, 12);
const D = (text: string) => Decimal.parse(text);

function bookAt(ms: number, bids: [string, string][], asks: [string, string][]): OrderBook {
  const ts = formatTimestamp(ms);
  const rows: SnapshotRow[] = [
    ...bids.map(([price, quantity]) => ({ ts, side: 'bid' as const, price, quantity })),
    ...asks.map(([price, quantity]) => ({ ts, side: 'ask' as const, price, quantity })),
  ];
  return OrderBook.fromSnapshot(rows);
}

const BOOK = bookAt(
  T0,
  [
    ['0.48', '150'],
    ['0.47', '20'],
  ],
  [
    ['0.5', '50'],
    ['0.51', '70'],
  ],
);

const trade = (ms: number, side: 'buy' | 'sell', price: string, size: string): Trade => ({
  ts: ms,
  tradeId: `t${ms}`,
  price: D(price),
  size: D(size),
  side,
});

/** A decimal's canonical text, or undefined (so expectations compare values, not objects). */
const text = (d: Decimal | undefined) => d?.toString();

describe('the quotient the microprice is kept as', () => {
  it('rounds to the tick exactly, down and up, on either side of zero', () => {
    const third = new Quotient(D('1'), D('3')); // 0.333…
    expect([text(third.floorTo(D('0.01'))), text(third.ceilTo(D('0.01')))]).toEqual(['0.33', '0.34']);
    const negative = new Quotient(D('-1'), D('3'));
    expect([text(negative.floorTo(D('0.01'))), text(negative.ceilTo(D('0.01')))]).toEqual(['-0.34', '-0.33']);
    const onTick = new Quotient(D('0.99'), D('2')); // 0.495, on a 0.005 tick
    expect([text(onTick.floorTo(D('0.005'))), text(onTick.ceilTo(D('0.005')))]).toEqual(['0.495', '0.495']);
    expect(() => new Quotient(D('1'), D('0'))).toThrow(RangeError);
  });
});

describe('quotes', () => {
  it('sit around the microprice, rounded away from it, and keep their place when the price stays', () => {
    const micro = microprice(BOOK);
    expect(micro?.eq(D('0.495'))).toBe(true); // (0.48 × 50 + 0.5 × 150) / 200
    const mm = new MarketMaker();
    mm.requote(T0, BOOK);
    expect([text(mm.bid?.price), text(mm.ask?.price)]).toEqual(['0.48', '0.51']); // 0.485 down, 0.505 up
    expect([text(mm.bid?.ahead), text(mm.ask?.ahead)]).toEqual(['150', '70']); // the queue displayed there
    expect(text(mm.lastMid)).toBe('0.49');
    const placed = mm.bid;
    mm.requote(T0 + 5, BOOK);
    expect(mm.bid).toBe(placed); // same price: the quote keeps its place
    expect(mm.requotes).toBe(2);
  });

  it('skew against the inventory, never cross the book, and stop at the inventory limit', () => {
    let mm = new MarketMaker({ ...DEFAULT_PARAMS, skew: D('0.01') });
    mm.inventory = D('2'); // long: both quotes move down by 0.02
    mm.requote(T0, BOOK);
    expect([text(mm.bid?.price), text(mm.ask?.price)]).toEqual(['0.46', '0.49']);
    const tight = bookAt(T0, [['0.49', '1']], [['0.5', '1']]);
    mm = new MarketMaker({ ...DEFAULT_PARAMS, halfSpread: D('0') });
    mm.requote(T0, tight);
    expect(mm.bid?.price.lt('0.5')).toBe(true);
    expect(mm.ask?.price.gt('0.49')).toBe(true);
    mm = new MarketMaker({ ...DEFAULT_PARAMS, maxInventory: D('10') });
    mm.inventory = D('10');
    mm.requote(T0, BOOK);
    expect(mm.bid).toBeUndefined();
    expect(mm.ask).toBeDefined();
  });

  it('are pulled when a side of the book is empty', () => {
    const mm = new MarketMaker();
    mm.requote(T0, BOOK);
    mm.requote(T0 + 1, bookAt(T0 + 1, [['0.48', '1']], []));
    expect([mm.bid, mm.ask]).toEqual([undefined, undefined]);
    expect(text(mm.lastMid)).toBe('0.49'); // the last two-sided book's
  });
});

describe('fills', () => {
  it('from the book: when the other side reaches our price, in full', () => {
    const mm = new MarketMaker();
    mm.requote(T0, BOOK); // bid 0.48, ask 0.51
    mm.fillsFromBook(T0 + 1, bookAt(T0 + 1, [['0.48', '400']], [['0.5', '5']])); // others join our bid: no fill
    expect(mm.fills).toEqual([]);
    mm.fillsFromBook(T0 + 1, bookAt(T0 + 1, [['0.51', '5']], [['0.52', '5']])); // the best bid reaches our ask
    expect(mm.fills.map((f) => [f.side, text(f.price), text(f.size)])).toEqual([['sell', '0.51', '10']]);
    expect([text(mm.inventory), text(mm.cash), mm.ask]).toEqual(['-10', '5.1', undefined]);
    mm.fillsFromBook(T0 + 2, bookAt(T0 + 2, [['0.47', '5']], [['0.49', '5']])); // best ask above our bid: nothing
    expect(mm.fills).toHaveLength(1);
    mm.fillsFromBook(T0 + 3, bookAt(T0 + 3, [['0.46', '5']], [['0.48', '5']]));
    expect([text(mm.inventory), text(mm.cash)]).toEqual(['0', '0.3']);
    mm.lastMid = D('0.47');
    expect(text(mm.pnl())).toBe('0.3');
  });

  it('from trades: after the queue ahead of us, or in full through our price', () => {
    const mm = new MarketMaker();
    mm.requote(T0, BOOK); // bid 0.48 behind 150, ask 0.51 behind 70
    mm.fillsFromTrade(trade(T0, 'sell', '0.48', '500')); // not after the quote was placed: ignored
    mm.fillsFromTrade(trade(T0 + 1, 'sell', '0.48', '100')); // takes 100 of the 150 ahead
    mm.fillsFromTrade(trade(T0 + 2, 'buy', '0.5', '30')); // a buy below our ask: not ours
    expect(mm.fills).toEqual([]);
    expect(text(mm.bid?.ahead)).toBe('50');
    mm.fillsFromTrade(trade(T0 + 3, 'sell', '0.48', '54')); // 50 ahead, then 4 for us
    expect(mm.fills.map((f) => [f.side, text(f.size)])).toEqual([['buy', '4']]);
    expect([text(mm.bid?.size), text(mm.bid?.ahead)]).toEqual(['6', '0']);
    mm.fillsFromTrade(trade(T0 + 4, 'sell', '0.47', '1')); // through our price: the rest, in full
    expect(mm.fills.map((f) => [text(f.size), f.rule]).at(-1)).toEqual(['6', 'trade through our price']);
    expect([text(mm.inventory), mm.bid]).toEqual(['10', undefined]);
    mm.fillsFromTrade(trade(T0 + 5, 'buy', '0.52', '1'));
    expect([text(mm.inventory), text(mm.cash)]).toEqual(['0', '0.3']); // −4.8 + 5.1
  });
});
