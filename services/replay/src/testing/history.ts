/**
 * Randomised recorded windows for the engine's tests, and the book obtained by applying their rows directly (the
 * spec's rule 7, a gap's snapshot replacing the book at its `to`): what a client rebuilding the venue's messages must
 * end with.
 */
import { formatDecimal, parseDecimal } from '@depthgate/feeds';
import { Rng } from '@depthgate/service-kit';
import type { BookLevels, RecordedDelta, RecordedGap, RecordedTrade, RecordedWindow } from '../engine/types';

/** A side as `canonical price → quantity`. */
export type SideMap = Map<string, bigint>;
export interface ExactBook {
  bids: SideMap;
  asks: SideMap;
}

/** How a venue's prices and sizes look: integers in units of 10^-places, drawn from these ranges. */
export interface Grid {
  bid: { lo: number; hi: number; places: number };
  ask: { lo: number; hi: number; places: number };
  size: { lo: number; hi: number; places: number };
}

export interface HistoryOptions {
  events: number;
  /** Probability that an event is a gap (closed by a fresh book), when the window allows gaps. */
  gapRate: number;
  /** The window starts inside a gap (no start book; the first gap closes it). */
  startInGap?: boolean;
  /**
   * The window starts before the ticker's first book: a trade, then the first snapshot (`firstBook`) 10 s in, no gap
   * (the recorder writes none before a ticker's first snapshot).
   */
  startBeforeFirstBook?: boolean;
  /** The window ends inside a gap (the last gap has no closing book). */
  endInGap?: boolean;
  /** Trade ids: Coinbase/Gemini digits, the CLOB's transaction hashes, Kalshi's UUIDs. */
  tradeId?: (n: number, rng: Rng) => string;
}

const T0 = 1_772_841_600_000; // 2026-03-07

/** Decimal text of `units` × 10^-places, sometimes with trailing zeros (stored strings may be spelt either way). */
function text(rng: Rng, units: number, places: number): string {
  const canonical = formatDecimal(BigInt(units) * 10n ** BigInt(18 - places));
  if (rng.int(4) !== 0 || places === 0) return canonical;
  const dot = canonical.indexOf('.');
  const have = dot < 0 ? 0 : canonical.length - dot - 1;
  return `${canonical}${dot < 0 ? '.' : ''}${'0'.repeat(places - have)}`;
}

function randomBook(rng: Rng, grid: Grid): BookLevels {
  const side = (g: Grid['bid']) => {
    const prices = new Set<number>();
    const n = rng.range(0, 6);
    for (let i = 0; i < n; i++) prices.add(rng.range(g.lo, g.hi));
    return [...prices].map(
      (p) => [text(rng, p, g.places), text(rng, rng.range(grid.size.lo, grid.size.hi), grid.size.places)] as const,
    );
  };
  return { bids: side(grid.bid), asks: side(grid.ask) };
}

export function exactBook(levels: BookLevels): ExactBook {
  const side = (list: BookLevels['bids']) =>
    new Map(list.map(([p, q]) => [formatDecimal(parseDecimal(p)), parseDecimal(q)]));
  return { bids: side(levels.bids), asks: side(levels.asks) };
}

function addTo(book: ExactBook, d: RecordedDelta): void {
  const side = d.side === 'bid' ? book.bids : book.asks;
  const key = formatDecimal(parseDecimal(d.price));
  const q = (side.get(key) ?? 0n) + parseDecimal(d.quantity_delta);
  if (q < 0n) throw new Error(`generator made a negative level ${key}`);
  if (q === 0n) side.delete(key);
  else side.set(key, q);
}

/** A random window: start book, deltas in messages of 1–3 rows, trades, gaps with their closing books. */
export function randomWindow(seed: number | string, grid: Grid, o: HistoryOptions): RecordedWindow {
  const rng = new Rng(seed, 'replay-history');
  let ts = T0;
  let sequence = T0 * 1000;
  const deltas: RecordedDelta[] = [];
  const trades: RecordedTrade[] = [];
  const gaps: RecordedGap[] = [];
  const tradeId = o.tradeId ?? ((n: number) => String(1_000_000 + n));
  let current: ExactBook;
  let start: RecordedWindow['start'];
  let firstBook: RecordedWindow['firstBook'];
  let trade = 0;
  // The receive clock never goes backwards along the rows as they arrive (as the recorder's: docs/history-internals.md
  // "received_ts"), so the book received by a moment is one the recorder had.
  let lastReceived = Number.NEGATIVE_INFINITY;
  const arrive = (t: number) => (lastReceived = Math.max(lastReceived, t));
  if (o.startInGap) {
    gaps.push({
      from: ts - 5,
      to: ts + 3,
      reason: 'disconnect',
      book: randomBook(rng, grid),
      received_ts: arrive(ts + 4),
    });
    current = exactBook(gaps[0]?.book as BookLevels);
    ts += 3;
  } else if (o.startBeforeFirstBook) {
    // Trades are recorded whatever the book's state; changes only once there is a book.
    trades.push(randomTrade(ts + 1));
    ts += 10_000;
    firstBook = { ts, received_ts: arrive(ts + 1), book: randomBook(rng, grid) };
    current = exactBook(firstBook.book);
  } else {
    const book = randomBook(rng, grid);
    start = { ts, received_ts: arrive(ts + 1), book };
    current = exactBook(book);
  }
  for (let i = 0; i < o.events; i++) {
    ts += rng.int(3);
    const r = rng.float();
    if (r < o.gapRate) {
      const from = ts;
      const to = ts + rng.range(1, 20);
      const book = randomBook(rng, grid);
      const gap: RecordedGap = { from, to, reason: 'disconnect', book };
      gaps.push(gap);
      // A trade may be recorded inside the gap (trades are recorded whatever the book's state), before its book.
      if (rng.int(2) === 0 && to - from > 1) trades.push(randomTrade(from + 1));
      gap.received_ts = arrive(to + 2);
      current = exactBook(book);
      ts = to;
      continue;
    }
    if (r < 0.75) {
      const received = arrive(ts + rng.range(0, 3));
      const rows = rng.range(1, 3);
      for (let k = 0; k < rows; k++) {
        const d = randomDelta(current, received);
        deltas.push(d);
        addTo(current, d);
      }
      continue;
    }
    trades.push(randomTrade(ts));
  }
  if (o.endInGap) gaps.push({ from: ts + 1, to: ts + 100, reason: 'stall' });
  // (The window starts at T0: inside the first gap, before the first book, or on the start's book.)
  return {
    ticker: 'T',
    start,
    ...(firstBook ? { firstBook } : {}),
    opening: { ts: T0, received_ts: T0 },
    deltas,
    trades,
    gaps,
  };

  function randomTrade(at: number): RecordedTrade {
    const side = rng.int(2) === 0 ? 'buy' : 'sell';
    const g = side === 'buy' ? grid.ask : grid.bid;
    return {
      ts: at,
      received_ts: arrive(at + 1),
      sequence: ++sequence,
      trade_id: tradeId(++trade, rng),
      price: text(rng, rng.range(g.lo, g.hi), g.places),
      size: text(rng, rng.range(grid.size.lo, grid.size.hi), grid.size.places),
      side,
      venue_side: side === 'buy' ? 'sell' : 'buy',
    };
  }

  function randomDelta(book: ExactBook, received: number): RecordedDelta {
    const bid = rng.int(2) === 0;
    const side = bid ? book.bids : book.asks;
    const g = bid ? grid.bid : grid.ask;
    const existing = [...side];
    let price: string;
    let delta: bigint;
    const unit = 10n ** BigInt(18 - grid.size.places);
    if (existing.length > 0 && rng.int(2) === 0) {
      const [p, q] = existing[rng.int(existing.length)] as [string, bigint];
      price = p;
      // Remove the level, or take part of it.
      const units = q / unit;
      delta = rng.int(2) === 0 || units <= 1n ? -q : -BigInt(rng.range(1, Number(units - 1n))) * unit;
    } else {
      price = formatDecimal(BigInt(rng.range(g.lo, g.hi)) * 10n ** BigInt(18 - g.places));
      delta = BigInt(rng.range(grid.size.lo, grid.size.hi)) * unit;
    }
    return {
      ts,
      received_ts: received,
      sequence: ++sequence,
      side: bid ? 'bid' : 'ask',
      price: rng.int(3) === 0 ? text(rng, Number(parseDecimal(price) / 10n ** BigInt(18 - g.places)), g.places) : price,
      quantity_delta: formatDecimal(delta),
    };
  }
}

/**
 * The book after every row with ts <= t, by applying the rows directly; undefined inside a gap (after its `from`,
 * before its `to`) or before the first book (the start's, a gap's, or the ticker's first, `firstBook`).
 */
export function directBook(w: RecordedWindow, t: number): ExactBook | undefined {
  let book = w.start ? exactBook(w.start.book) : undefined;
  // Before the ticker's first book there is none, as inside a gap: the first book ends that stretch.
  const before: RecordedGap[] = w.firstBook
    ? [{ from: Number.NEGATIVE_INFINITY, to: w.firstBook.ts, reason: 'first_book', book: w.firstBook.book }]
    : [];
  const gaps = [...before, ...w.gaps];
  let di = 0;
  for (;;) {
    const d = w.deltas[di];
    const g = gaps[0];
    if (g && g.to <= t && (!d || g.to <= d.ts)) {
      gaps.shift();
      book = g.book ? exactBook(g.book) : undefined;
      continue;
    }
    if (!d || d.ts > t) break;
    if (book) addTo(book, d);
    di++;
  }
  const open = gaps[0];
  if (open && open.from < t) return undefined;
  return book;
}
