import { Rng } from '../core/rng';
import { kalshiInstrument } from '../platforms/venue-b/catalog';
import { BookEngine } from './engine';
import { BookGenerator } from './generator';
import { TickerHistory } from './history';
import { OrderBook } from './order-book';
import type { BookEvent, IntBook, TimedTrade } from './types';

describe('book history', () => {
  test('bookAt(T) is exactly the book after every event with ts <= T, across checkpoints', () => {
    const gen = new BookGenerator(kalshiInstrument('KXH', 50), new Rng(1, 'h'));
    const start = 1_000_000;
    const history = new TickerHistory(gen.book.snapshot(), start, 16, 10_000);
    const truth: Array<{ ts: number; book: IntBook }> = [{ ts: start, book: gen.book.snapshot() }];
    let ts = start;
    for (let seq = 1; seq <= 500; seq++) {
      if (seq % 3 === 0) ts += 7; // several events share a millisecond
      const event: BookEvent = { seq, ts, changes: gen.next(2), trades: gen.trades };
      history.record(event, gen.book);
      truth.push({ ts, book: gen.book.snapshot() });
    }
    for (const probe of [start, start + 1, start + 7, start + 350, start + 700, ts, ts + 5]) {
      const expected = [...truth].reverse().find((t) => t.ts <= probe) as { book: IntBook };
      expect(history.at(probe)).toEqual(expected.book);
    }
    expect(history.at(start - 1)).toBeUndefined();
  });

  test('pruning forgets the past but keeps the cutoff itself answerable', () => {
    const gen = new BookGenerator(kalshiInstrument('KXP', 50), new Rng(2, 'p'));
    const history = new TickerHistory(gen.book.snapshot(), 0, 10, 1_000_000);
    const books: IntBook[] = [gen.book.snapshot()];
    for (let seq = 1; seq <= 200; seq++) {
      history.record({ seq, ts: seq * 10, changes: gen.next(1), trades: gen.trades }, gen.book);
      books.push(gen.book.snapshot());
    }
    history.prune(1005);
    expect(history.oldestTs).toBeLessThanOrEqual(1005);
    expect(history.at(1005)).toEqual(books[100]);
    expect(history.at(2000)).toEqual(books[200]);
    expect(history.at(50)).toBeUndefined();
    expect(history.retainedEvents).toBeLessThan(200);
  });

  test('the engine numbers events per ticker, timestamps them from its clock and feeds listeners', () => {
    let now = 5_000;
    const engine = new BookEngine([kalshiInstrument('KXA', 50), kalshiInstrument('KXB', 30)], {
      seed: 4,
      updatesPerSecond: 0,
      changesPerUpdate: { 'venue-b': 2 },
      moving: new Set(['venue-b']),
      retentionMs: 60_000,
      clock: () => now,
    });
    const seen: Array<{ ticker: string; seq: number; ts: number }> = [];
    engine.on('venue-b', (inst, e, book) => {
      seen.push({ ticker: inst.ticker, seq: e.seq, ts: e.ts });
      // The listener runs after the book changed: replaying must give the live book.
      const replay = OrderBook.from(engine.bookAt('venue-b', inst.ticker, e.ts) as IntBook);
      expect(replay.snapshot()).toEqual(book.snapshot());
    });
    for (let i = 0; i < 50; i++) {
      now += i % 2;
      engine.step();
    }
    expect(seen).toHaveLength(50);
    for (const t of ['KXA', 'KXB']) {
      const seqs = seen.filter((s) => s.ticker === t).map((s) => s.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(engine.lastSeq('venue-b', t)).toBe(seqs.length);
    }
    expect(engine.events('venue-b', 'KXA', 5_010)?.every((e) => e.ts >= 5_010)).toBe(true);
  });
});

describe('engine trades', () => {
  test('every trade an event carried is listed, numbered per ticker, with its event’s time; the last one outlives retention', () => {
    let now = 1_000;
    const engine = new BookEngine([kalshiInstrument('KXT1', 50), kalshiInstrument('KXT2', 40)], {
      seed: 6,
      updatesPerSecond: 0,
      changesPerUpdate: { 'venue-b': 1 },
      moving: new Set(['venue-b']),
      retentionMs: 60_000,
      clock: () => now,
    });
    const heard = new Map<string, TimedTrade[]>([
      ['KXT1', []],
      ['KXT2', []],
    ]);
    engine.on('venue-b', (inst, e) => {
      for (const t of e.trades) heard.get(inst.ticker)?.push({ ...t, ts: e.ts, seq: e.seq });
    });
    for (let i = 0; i < 400; i++) {
      now += i % 3;
      engine.step();
    }
    for (const [ticker, list] of heard) {
      expect(list.length).toBeGreaterThan(10);
      expect(list.map((t) => t.no)).toEqual(list.map((_, i) => i + 1));
      expect(engine.trades('venue-b', ticker)).toEqual(list);
      expect(engine.trades('venue-b', ticker, 1_200)).toEqual(list.filter((t) => t.ts >= 1_200));
      expect(engine.lastTradeNo('venue-b', ticker)).toBe(list.length);
      expect(engine.lastTrade('venue-b', ticker)).toEqual(list.at(-1));
      const log = engine.tradeLog('venue-b', ticker);
      expect([log?.firstTradeNo, log?.lastTradeNo]).toEqual([1, list.length]);
      expect(engine.events('venue-b', ticker)?.flatMap((e) => e.trades.map((t) => t.no))).toEqual(
        list.map((t) => t.no),
      );
    }
    expect(engine.isMoving('venue-b')).toBe(true);
    expect(engine.startTs).toBe(1_000);
  });
});

describe('history storage', () => {
  test('stays exact across compaction of its arrays and under an event cap', () => {
    const gen = new BookGenerator(kalshiInstrument('KXBIG', 50), new Rng(8, 'big'));
    const capped = new TickerHistory(gen.book.snapshot(), 0, 64, 1_000_000, 5_000);
    const full = new TickerHistory(gen.book.snapshot(), 0, 64, 1_000_000);
    const books = new Map<number, IntBook>();
    const made: TimedTrade[] = [];
    for (let seq = 1; seq <= 30_000; seq++) {
      const event: BookEvent = { seq, ts: seq, changes: gen.next(3), trades: gen.trades };
      for (const t of event.trades) made.push({ ...t, ts: seq, seq });
      capped.record(event, gen.book);
      full.record(event, gen.book);
      if (seq % 997 === 0) books.set(seq, gen.book.snapshot());
      if (seq % 5_000 === 0) full.prune(seq - 8_000);
    }
    expect(capped.retainedEvents).toBeLessThanOrEqual(5_000 + 2 * 64); // pruned at checkpoints
    expect(capped.at(30_000 - 4_000)).toEqual(full.at(30_000 - 4_000));
    expect(capped.at(1_000)).toBeUndefined();
    for (const [seq, book] of books) {
      if (seq >= 30_000 - 8_000) expect(full.at(seq)).toEqual(book);
    }
    expect(full.last()?.seq).toBe(30_000);
    expect(full.since(29_990).map((e) => e.seq)).toEqual(Array.from({ length: 11 }, (_, i) => 29_990 + i));
    // Trades are kept and forgotten with their events, across compactions, and found by number and by time.
    for (const h of [full, capped]) {
      const oldestEvent = h.since()[0]?.seq as number;
      const kept = made.filter((t) => t.seq >= oldestEvent);
      expect(h.trades()).toEqual(kept);
      expect(h.firstTradeNo).toBe(kept[0]?.no);
      expect(h.lastTradeNo).toBe(made.at(-1)?.no);
      expect(h.trade(h.firstTradeNo - 1)).toBeUndefined();
      expect(h.trade(h.lastTradeNo + 1)).toBeUndefined();
      const mid = kept[Math.floor(kept.length / 2)] as TimedTrade;
      expect(h.trade(mid.no)).toEqual(mid);
      expect(h.tradeNoAtOrAfter(mid.ts)).toBe(kept.find((t) => t.ts >= mid.ts)?.no);
      expect(h.tradeNoAtOrAfter(30_001)).toBe(h.lastTradeNo + 1);
      expect(h.trades(29_000)).toEqual(kept.filter((t) => t.ts >= 29_000));
      // An event's trades come back with it.
      for (const e of h.since(29_900))
        expect(e.trades).toEqual(made.filter((t) => t.seq === e.seq).map(({ ts: _ts, seq: _seq, ...t }) => t));
    }
    expect(made.length).toBeGreaterThan(3000);
  });
});
