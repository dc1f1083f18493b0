import { DAY_MS } from '../../core/time';
import { ASK, BID } from '../../book/types';
import { KalshiTape, type TapeMarket } from './tape';
import { KalshiTradeIds } from './trade-ids';

const MINUTE = 60_000;
const START = Date.parse('2026-11-23T10:00:00Z');
const startMinute = START / MINUTE;

const live: TapeMarket = {
  ticker: 'KXTEST-26MAR07-T1',
  openMs: START - 300 * DAY_MS,
  endMs: Infinity,
  anchorMinute: startMinute,
  anchor: { bid: 9500, ask: 9700 },
  liveFromMinute: startMinute,
};
const settled: TapeMarket = {
  ticker: 'KXTEST-25OCT28-T1',
  openMs: START - 40 * DAY_MS,
  endMs: START - 38 * DAY_MS,
  anchorMinute: (START - 40 * DAY_MS) / MINUTE,
  anchor: { bid: 4000, ask: 4100 },
  liveFromMinute: Infinity,
};

describe('KalshiTape', () => {
  test('the seeded path stays on the grid inside [0.01, 0.99], keeps the spread and meets the first live quote', () => {
    const tape = new KalshiTape(3, [live, settled]);
    expect(tape.quoteAt(live.ticker, startMinute)).toEqual(live.anchor);
    expect(tape.quoteAt(settled.ticker, settled.anchorMinute)).toEqual(settled.anchor);
    const seen = new Set<number>();
    for (let m = startMinute - 300 * 1440; m < startMinute; m += 61) {
      const q = tape.quoteAt(live.ticker, m);
      expect(q.bid % 100 === 0 && q.bid >= 100 && q.ask <= 9900 && q.ask - q.bid === 200).toBe(true);
      seen.add(q.bid);
    }
    // Near the top of the range there is little room above and more below: the path uses both.
    expect(Math.max(...seen)).toBeGreaterThan(9500);
    expect(Math.max(...seen)).toBeLessThanOrEqual(9700);
    expect(Math.min(...seen)).toBeLessThan(9000);
  });

  test('live minute bars open at the previous close and track the high, low and close of what was observed', () => {
    const tape = new KalshiTape(3, [live]);
    const t0 = START + 5 * MINUTE + 1000;
    tape.observe(live.ticker, t0, 9400, 9600);
    tape.observe(live.ticker, t0 + 1000, 9600, 9800);
    tape.observe(live.ticker, t0 + 2000, 9300, 9500);
    const bar = tape.bar(live.ticker, startMinute + 5);
    expect(bar).toEqual({ bid: [9500, 9600, 9300, 9300], ask: [9700, 9800, 9500, 9500] });
    // Quiet minutes, before and after, read as flat at the last close.
    expect(tape.bar(live.ticker, startMinute + 3).bid).toEqual([9500, 9500, 9500, 9500]);
    expect(tape.bar(live.ticker, startMinute + 9).ask).toEqual([9500, 9500, 9500, 9500]);
    expect(tape.quoteAtTime(live.ticker, t0 + 30_000)).toEqual({ bid: 9300, ask: 9500 });
  });

  test('trades are reproducible from the seed, inside the window, and add up to volume and open interest', () => {
    const a = new KalshiTape(3, [live, settled]);
    const b = new KalshiTape(3, [live, settled]);
    const other = new KalshiTape(4, [live, settled]);
    const day = Math.floor(START / DAY_MS) - 1;
    const ids = (t: KalshiTape) => t.dayTrades(live.ticker, day).map((x) => [t.tradeId(x), x.ts, x.count, x.yes]);
    expect(ids(a)).toEqual(ids(b));
    expect(ids(a)).not.toEqual(ids(other));
    expect(new Set(ids(a).map((x) => x[0])).size).toBe(ids(a).length);
    const trades = a.tradesBetween(settled.ticker, settled.openMs - DAY_MS, settled.endMs + DAY_MS);
    expect(trades.length).toBeGreaterThan(20);
    expect(trades.every((t) => t.ts >= settled.openMs && t.ts < settled.endMs)).toBe(true);
    expect(a.volume(settled.ticker, settled.openMs - 1, settled.endMs)).toBe(trades.reduce((v, t) => v + t.count, 0));
    expect(a.cumulativeVolume(settled.ticker, START)).toBe(a.volume(settled.ticker, 0, START));
    const mid = settled.openMs + DAY_MS;
    const before = trades.filter((t) => t.ts <= mid);
    expect(a.cumulativeVolume(settled.ticker, mid)).toBe(before.reduce((v, t) => v + t.count, 0));
    expect(a.lastTrade(settled.ticker, mid)).toEqual(before[before.length - 1]);
    expect(a.openInterest(settled.ticker, mid)).toBeLessThanOrEqual(a.cumulativeVolume(settled.ticker, mid));
    for (const t of trades) {
      const q = a.quoteAt(t.ticker, Math.floor(t.ts / MINUTE));
      expect(a.price(t)).toBe(t.yes ? q.ask : q.bid);
      expect(t.count % 25).toBe(0);
    }
  });

  test("from a moving book's start its trades are the book's own: draws stop, recorded fills count everywhere", () => {
    const moving: TapeMarket = { ...live, tradesLiveFromMs: START };
    const tape = new KalshiTape(3, [moving]);
    const drawn = new KalshiTape(3, [live]);
    const day = Math.floor(START / DAY_MS);
    // Before the start the draws are those of a market without a book; from it on there are none.
    const before = drawn.tradesBetween(live.ticker, START - DAY_MS, START - 1);
    expect(tape.tradesBetween(live.ticker, START - DAY_MS, START - 1)).toEqual(before);
    expect(drawn.tradesBetween(live.ticker, START, START + DAY_MS).length).toBeGreaterThan(0);
    expect(tape.tradesBetween(live.ticker, START, START + DAY_MS)).toEqual([]);
    const volumeAtStart = tape.cumulativeVolume(live.ticker, START);
    tape.record(live.ticker, START + 5_000, [
      { no: 1, takerSide: BID, price: 9700, size: 250 },
      { no: 2, takerSide: BID, price: 9800, size: 125 },
    ]);
    tape.record(live.ticker, START + 9_000, [{ no: 3, takerSide: ASK, price: 9500, size: 1000 }]);
    const ids = new KalshiTradeIds(3);
    const own = tape.tradesBetween(live.ticker, START, START + DAY_MS);
    expect(own.map((t) => [tape.tradeId(t), t.ts, tape.price(t), t.count, t.yes])).toEqual([
      [ids.id(live.ticker, 1), START + 5_000, 9700, 250, true],
      [ids.id(live.ticker, 2), START + 5_000, 9800, 125, true],
      [ids.id(live.ticker, 3), START + 9_000, 9500, 1000, false],
    ]);
    expect(tape.dayTrades(live.ticker, day).slice(-3)).toEqual(own);
    expect(tape.lastTrade(live.ticker, START + 8_999)).toEqual(own[1]);
    expect(tape.cumulativeVolume(live.ticker, START + 9_000)).toBe(volumeAtStart + 1375);
    expect(tape.volume(live.ticker, START + 5_000, START + 9_000)).toBe(1000);
    // A page: newest first, the later number first at one millisecond; then the draws; a mark excludes what it passed.
    const page = tape.newestFirst(live.ticker, START - DAY_MS, START + DAY_MS, 5);
    expect(page.slice(0, 3)).toEqual([own[2], own[1], own[0]]);
    expect(page.slice(3)).toEqual(before.slice(-2).reverse());
    const rest = tape.newestFirst(
      live.ticker,
      START - DAY_MS,
      START + DAY_MS,
      2,
      (t) => t.ts < START + 5_000 || (t.ts === START + 5_000 && t.index < 2),
    );
    expect(rest).toEqual([own[0], before.at(-1)]);
  });
});
