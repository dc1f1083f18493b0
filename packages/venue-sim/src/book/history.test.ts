import { Rng } from '../core/rng';
import { kalshiInstrument } from '../platforms/venue-b/catalog';
import { BookEngine } from './engine';
import { BookGenerator } from './generator';
import { TickerHistory } from './history';
import { OrderBook } from './order-book';
import type { BookEvent, IntBook } from './types';

describe('book history', () => {
  test('bookAt(T) is exactly the book after every event with ts <= T, across checkpoints', () => {
    const gen = new BookGenerator(kalshiInstrument('KXH', 50), new Rng(1, 'h'));
    const start = 1_000_000;
    const history = new TickerHistory(gen.book.snapshot(), start, 16, 10_000);
    const truth: Array<{ ts: number; book: IntBook }> = [{ ts: start, book: gen.book.snapshot() }];
    let ts = start;
    for (let seq = 1; seq <= 500; seq++) {
      if (seq % 3 === 0) ts += 7; // several events share a millisecond
      const event: BookEvent = { seq, ts, changes: gen.next(2) };
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
      history.record({ seq, ts: seq * 10, changes: gen.next(1) }, gen.book);
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

describe('history storage', () => {
  test('stays exact across compaction of its arrays and under an event cap', () => {
    const gen = new BookGenerator(kalshiInstrument('KXBIG', 50), new Rng(8, 'big'));
    const capped = new TickerHistory(gen.book.snapshot(), 0, 64, 1_000_000, 5_000);
    const full = new TickerHistory(gen.book.snapshot(), 0, 64, 1_000_000);
    const books = new Map<number, IntBook>();
    for (let seq = 1; seq <= 30_000; seq++) {
      const event: BookEvent = { seq, ts: seq, changes: gen.next(3) };
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
  });
});
