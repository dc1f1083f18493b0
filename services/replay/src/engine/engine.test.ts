import { KalshiClient, type ReferenceClient } from '../testing/clients';
import { directBook, exactBook, randomWindow, type HistoryOptions } from '../testing/history';
import { VENUES, binary, type Venue } from '../testing/venues';
import { mergeByClock } from './clock';
import { replay } from './replay';
import type { RecordedWindow } from './types';
import { kalshiEncoder } from './venue-b';

/**
 * Replays a window into a client, checking after the last message of every ts that the client's book is the book
 * the rows give directly, and that each gap's first message is the whole-book form leaving the gap's book.
 */
function check(v: Venue, w: RecordedWindow): { client: ReferenceClient; texts: string[] } {
  const messages = [...replay(w, v.encoder())];
  const client = v.client();
  const resets = new Map(w.gaps.filter((g) => g.book && (!w.start || g.to > w.start.ts)).map((g) => [g.to, g]));
  // The ticker's first book inside the window is sent as a gap's reset.
  if (w.firstBook)
    resets.set(w.firstBook.ts, { from: -Infinity, to: w.firstBook.ts, reason: '', book: w.firstBook.book });
  if (w.start) expect(client.isWholeBook((messages[0] as { text: string }).text)).toBe(true);
  let checked = 0;
  messages.forEach((m, i) => {
    const reset = resets.get(m.ts);
    client.consume(m.text);
    if (reset) {
      // The gap's first message: the venue's whole-book form, and the book after it is the gap's.
      expect(client.isWholeBook(m.text)).toBe(true);
      expect(client.book()).toEqual(exactBook(reset.book as NonNullable<typeof reset.book>));
      resets.delete(m.ts);
    }
    const next = messages[i + 1];
    if (next && next.ts === m.ts) return;
    const expected = directBook(w, m.ts);
    if (expected === undefined) return;
    expect(client.book()).toEqual(expected);
    checked++;
  });
  expect(resets.size).toBe(0);
  expect(checked).toBeGreaterThan(0);
  // Trades: each once, in order.
  expect(client.trades).toEqual(w.trades.map((t) => v.tradeKey(t)));
  // Non-decreasing venue time.
  for (let i = 1; i < messages.length; i++)
    expect((messages[i] as { ts: number }).ts).toBeGreaterThanOrEqual((messages[i - 1] as { ts: number }).ts);
  return { client, texts: messages.map((m) => m.text) };
}

describe.each(VENUES)('$name', (v) => {
  const opts = (o: Partial<HistoryOptions> = {}): HistoryOptions => ({
    events: 80,
    gapRate: 0,
    ...(v.tradeId ? { tradeId: v.tradeId } : {}),
    ...o,
  });

  it('a reference client rebuilds the recorded book at every moment of 40 random windows, and gets each trade once', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const w = randomWindow(`${v.name}|${seed}`, v.grid, opts());
      const { client } = check(v, w);
      expect(client.book()).toEqual(directBook(w, Number.MAX_SAFE_INTEGER));
    }
  });

  it('a recorded gap yields the venue reset form, and the book after it is the gap snapshot (20 random windows)', () => {
    let gaps = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const w = randomWindow(`${v.name}|gap|${seed}`, v.grid, opts({ gapRate: 0.08 }));
      gaps += w.gaps.length;
      check(v, w);
    }
    expect(gaps).toBeGreaterThan(10);
  });

  it('a window starting inside a gap sends nothing of the book before the gap snapshot', () => {
    const w = randomWindow(`${v.name}|start-in-gap`, v.grid, opts({ startInGap: true }));
    const messages = [...replay(w, v.encoder())];
    const client = v.client();
    const first = messages[0] as { ts: number; text: string };
    expect(first.ts).toBe(w.gaps[0]?.to);
    expect(client.isWholeBook(first.text)).toBe(true);
    check(v, w);
  });

  it('a window starting before the ticker’s first book sends that book (the reset form) at its ts, then its changes', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const w = randomWindow(`${v.name}|before-first-book|${seed}`, v.grid, opts({ startBeforeFirstBook: true }));
      const first = w.firstBook as NonNullable<RecordedWindow['firstBook']>;
      const messages = [...replay(w, v.encoder())];
      // The first whole book is the first snapshot, at its ts (the trade before it came alone).
      const probe = v.client();
      expect(messages.find((m) => probe.isWholeBook(m.text))?.ts).toBe(first.ts);
      expect(messages.filter((m) => m.ts < first.ts).length).toBeGreaterThan(0);
      const { client } = check(v, w);
      expect(client.book()).toBeDefined();
      expect(client.book()).toEqual(directBook(w, Number.MAX_SAFE_INTEGER));
    }
  });

  it('a window ending inside a gap sends no book change after the gap starts', () => {
    const w = randomWindow(`${v.name}|end-in-gap`, v.grid, opts({ endInGap: true }));
    const open = w.gaps[w.gaps.length - 1] as { from: number };
    const late = {
      ...w,
      deltas: [...w.deltas, { ...(w.deltas[0] as (typeof w.deltas)[0]), ts: open.from + 5, sequence: 9e18 }],
    };
    const messages = [...replay(late, v.encoder())];
    expect(messages.filter((m) => m.ts > open.from)).toEqual([]);
  });

  it('refuses rows that take a level below zero instead of sending a book the venue never had', () => {
    const w = randomWindow(`${v.name}|bad`, v.grid, opts({ events: 0 }));
    const bad: RecordedWindow = {
      ...w,
      deltas: [{ ts: 2e12, sequence: 1, side: 'bid', price: '123456.789', quantity_delta: '-1' }],
    };
    expect(() => [...replay(bad, v.encoder())]).toThrow(/below zero/);
  });
});

describe('venue_b (Kalshi): one subscription of two markets', () => {
  it('shares the sid and its seq: replays merged in time keep seq contiguous, and each market rebuilds its book', () => {
    const sub = { sid: 7, seq: 0 };
    const markets = ['A', 'B'].map((ticker) => {
      const w = { ...randomWindow(`two-markets|${ticker}`, binary, { events: 60, gapRate: 0.05 }), ticker };
      return { w, messages: replay(w, kalshiEncoder({ ticker, book: sub, tradeSid: 8 })) };
    });
    // Merged in time order, texts read as they would be sent (the seq is taken then).
    const merged = [...mergeByClock(markets.map((m) => m.messages))].map((m) => ({
      ticker: (markets[m.source] as { w: RecordedWindow }).w.ticker,
      text: m.message.text,
    }));
    const seqs = merged
      .map((m) => JSON.parse(m.text) as { sid: number; seq?: number })
      .filter((m) => m.sid === 7)
      .map((m) => m.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    for (const { w } of markets) {
      const client = new KalshiClient(false);
      for (const m of merged) if (m.ticker === w.ticker) client.consume(m.text);
      expect(client.book()).toEqual(directBook(w, Number.MAX_SAFE_INTEGER));
    }
  });
});
