import { Rng } from '../core/rng';
import { kalshiInstrument } from '../platforms/venue-b/catalog';
import { BookGenerator } from './generator';
import { OrderBook } from './order-book';
import { ASK, BID, type Instrument, type Side, type Trade } from './types';

const spot: Instrument = {
  platform: 'venue-c',
  ticker: 'BTCUSD',
  priceDecimals: 2,
  qtyDecimals: 8,
  tick: 1,
  minPrice: 1,
  maxPrice: Number.MAX_SAFE_INTEGER,
  initialMid: 8_700_000,
  maxLevels: 25,
  initialLevels: 12,
  window: 40,
  unit: 1,
  minUnits: 10_000,
  maxUnits: 150_000_000,
  fractionalPercent: 0,
};

function checkInvariants(gen: BookGenerator): void {
  const { book, inst } = gen;
  const bid = book.bids.best();
  const ask = book.asks.best();
  expect(book.bids.size).toBeGreaterThanOrEqual(1);
  expect(book.asks.size).toBeGreaterThanOrEqual(1);
  expect(book.bids.size).toBeLessThanOrEqual(inst.maxLevels);
  expect(book.asks.size).toBeLessThanOrEqual(inst.maxLevels);
  expect(bid as number).toBeLessThan(ask as number);
  for (const [side, s] of [
    [BID, book.bids],
    [ASK, book.asks],
  ] as const) {
    let prev: number | undefined;
    for (const [p, q] of s.levels()) {
      expect(p % inst.tick).toBe(0);
      expect(p).toBeGreaterThanOrEqual(inst.minPrice);
      expect(p).toBeLessThanOrEqual(inst.maxPrice);
      expect(Number.isSafeInteger(q) && q > 0).toBe(true);
      if (prev !== undefined) expect(side === BID ? p < prev : p > prev).toBe(true);
      prev = p;
    }
  }
}

describe('book process', () => {
  test('a prediction book stays on the 0.01 grid inside [0.01, 0.99], never crossed, over many steps', () => {
    const gen = new BookGenerator(kalshiInstrument('KXTEST-26MAR07-T1', 50), new Rng(7, 'k'));
    for (let i = 0; i < 5000; i++) {
      gen.next(1 + (i % 4));
      if (i % 50 === 0) checkInvariants(gen);
    }
    checkInvariants(gen);
  });

  test('a book pinned near the bounds cannot leave them', () => {
    const gen = new BookGenerator(kalshiInstrument('KXLOW', 2), new Rng(3, 'low'));
    for (let i = 0; i < 3000; i++) gen.next(1);
    checkInvariants(gen);
  });

  test('a spot book keeps sizes in whole lots at its precision', () => {
    const gen = new BookGenerator(spot, new Rng(11, 'spot'));
    for (let i = 0; i < 3000; i++) gen.next(2);
    checkInvariants(gen);
  });

  test('changes report each level once, with delta = new − old, and replaying them rebuilds the book', () => {
    const gen = new BookGenerator(kalshiInstrument('KXREPLAY', 40), new Rng(5, 'r'));
    const replica = OrderBook.from(gen.book.snapshot());
    for (let i = 0; i < 2000; i++) {
      const before = OrderBook.from(gen.book.snapshot());
      const changes = gen.next(3);
      // At least the levels asked for, unless the event is a taker's (its own step only).
      if (gen.trades.length === 0) expect(changes.length).toBeGreaterThanOrEqual(4 * 3);
      else expect(changes.length).toBeGreaterThanOrEqual(4);
      const keys = new Set<string>();
      for (let j = 0; j < changes.length; j += 4) {
        const [side, price, qty, delta] = changes.slice(j, j + 4) as [0 | 1, number, number, number];
        expect(keys.has(`${side}:${price}`)).toBe(false);
        keys.add(`${side}:${price}`);
        expect(delta).not.toBe(0);
        expect(qty - before.sideOf(side).get(price)).toBe(delta);
      }
      replica.applyChanges(changes);
      expect(replica.snapshot()).toEqual(gen.book.snapshot());
    }
  });

  test('the same seed replays the same changes; another seed does not', () => {
    const run = (seed: number) => {
      const gen = new BookGenerator(kalshiInstrument('KXSAME', 50), new Rng(seed, 'same'));
      return Array.from({ length: 300 }, () => gen.next(2).join(','));
    };
    expect(run(42)).toEqual(run(42));
    expect(run(42)).not.toEqual(run(43));
  });

  test('the mid price walks', () => {
    const gen = new BookGenerator(kalshiInstrument('KXWALK', 50), new Rng(9, 'walk'));
    const mids = new Set<number>();
    for (let i = 0; i < 3000; i++) {
      gen.next(1);
      mids.add(((gen.book.bids.best() as number) + (gen.book.asks.best() as number)) / 2);
    }
    expect(mids.size).toBeGreaterThan(5);
  });

  test("an account's resting order stays in its level's size, is never traded through, and only moves up the queue", () => {
    const inst = { ...kalshiInstrument('KXREST', 50), resting: { side: BID, price: 4500, qty: 10_000 } as const };
    const gen = new BookGenerator(inst, new Rng(13, 'rest'));
    const own = () => gen.book.bids.get(4500);
    let ahead = gen.resting?.ahead as number;
    // The level held others' quantity when the book started: all of it is ahead of the order.
    const initiallyAhead = ahead;
    expect(initiallyAhead).toBeGreaterThan(0);
    expect(own()).toBe(ahead + 10_000);
    let sawOthersBehind = false;
    for (let i = 0; i < 5000; i++) {
      gen.next(1 + (i % 3));
      const now = gen.resting?.ahead as number;
      expect(own()).toBeGreaterThanOrEqual(10_000);
      expect(now).toBeLessThanOrEqual(ahead);
      expect(now).toBeLessThanOrEqual(own() - 10_000);
      expect(gen.book.asks.best() as number).toBeGreaterThan(4500);
      // Sellers meet the bids down to the order's level at most, and never its own quantity.
      for (const t of gen.trades) {
        if (t.takerSide === ASK) expect(t.price).toBeGreaterThanOrEqual(4500);
      }
      if (own() - 10_000 > now) sawOthersBehind = true;
      ahead = now;
      if (i % 50 === 0) checkInvariants(gen);
    }
    // The process did exercise the level: others joined behind the order, and the queue ahead of it shrank.
    expect(sawOthersBehind).toBe(true);
    expect(ahead).toBeLessThan(initiallyAhead);
  });

  test.each([
    ['a prediction book with fractional sizes', () => kalshiInstrument('KXTRADE', 50), 1],
    ['a spot book in whole lots', () => spot, 2],
    ['a book with whole-contract sizes', () => ({ ...kalshiInstrument('KXWHOLE', 30), fractionalPercent: 0 }), 3],
  ] as const)(
    "%s: a taker's fills are the event's changes at the levels it met, best first, numbered without gaps",
    (_name, make, seed) => {
      const inst = make();
      const gen = new BookGenerator(inst, new Rng(seed, 'trades'));
      let expectedNo = 1;
      let trading = 0;
      let walks = 0;
      for (let i = 0; i < 6000; i++) {
        const before = OrderBook.from(gen.book.snapshot());
        const changes = gen.next(1 + (i % 3));
        const trades = gen.trades;
        if (trades.length === 0) continue;
        trading++;
        const makerSide: Side = (trades[0] as Trade).takerSide === BID ? ASK : BID;
        // One taker: one side, its best levels in order (the first at the best price, each next one worse).
        const makerLevels = before.sideOf(makerSide).prices;
        const traded = new Map<number, number>();
        trades.forEach((t, k) => {
          expect(t.no).toBe(expectedNo++);
          expect(t.takerSide === BID ? ASK : BID).toBe(makerSide);
          expect(Number.isSafeInteger(t.size) && t.size > 0).toBe(true);
          if (inst.fractionalPercent === 0) expect(t.size % inst.unit).toBe(0);
          expect(t.price).toBe(makerLevels[k]);
          traded.set(t.price, (traded.get(t.price) ?? 0) + t.size);
        });
        if (traded.size > 1) walks++;
        // The event's changes on the maker side are exactly the traded levels, each losing what traded there.
        const makerChanges = new Map<number, [number, number]>();
        for (let j = 0; j < changes.length; j += 4) {
          const [side, price, qty, delta] = changes.slice(j, j + 4) as [Side, number, number, number];
          if (side === makerSide) makerChanges.set(price, [qty, delta]);
        }
        expect([...makerChanges.keys()].sort()).toEqual([...traded.keys()].sort());
        for (const [price, size] of traded) {
          const [qty, delta] = makerChanges.get(price) as [number, number];
          expect(delta).toBe(-size);
          expect(qty).toBeGreaterThanOrEqual(0);
          expect(qty).toBe(before.sideOf(makerSide).get(price) - size);
        }
        if (i % 25 === 0) checkInvariants(gen);
      }
      checkInvariants(gen);
      expect(gen.tradeNo).toBe(expectedNo - 1);
      // Takers are a modest share of events, and some walk into a second level.
      expect(trading).toBeGreaterThan(600);
      expect(trading).toBeLessThan(2400);
      expect(walks).toBeGreaterThan(0);
    },
  );
});
