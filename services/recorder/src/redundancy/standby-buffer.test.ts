import { ASK, BID, LocalBook, formatDecimal, parseDecimal, type SideCode } from '@depthgate/feeds';
import type { ExchangeKey } from '@depthgate/platforms';
import type { RecordedTrade, RowSink } from '../rows';
import { bookDigest } from './book-digest';
import { StandbyBuffer, type LandedDelta } from './standby-buffer';

const EX = 'venue_b' as ExchangeKey;
const T = 'TICK';

/** A venue's events: each at a ms (non-decreasing), changing levels by signed amounts that keep them ≥ 0. */
interface VenueEvent {
  ts: number;
  changes: [SideCode, string, string][];
}

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const PRICES = ['0.1', '0.2', '0.3', '0.4', '0.5', '0.6', '0.7', '0.8'];

function venue(seed: number, count: number): { start: Map<string, bigint>; events: VenueEvent[] } {
  const r = rng(seed);
  const book = new Map<string, bigint>();
  for (const p of PRICES.slice(0, 4)) book.set(`${BID}:${p}`, 10n * 10n ** 18n);
  for (const p of PRICES.slice(4)) book.set(`${ASK}:${p}`, 10n * 10n ** 18n);
  const start = new Map(book);
  const events: VenueEvent[] = [];
  let ts = 1_000;
  for (let i = 0; i < count; i++) {
    ts += r() < 0.3 ? 0 : 1 + Math.floor(r() * 20); // several events may share a ms
    const changes: [SideCode, string, string][] = [];
    for (let k = 0; k < 1 + Math.floor(r() * 3); k++) {
      const side: SideCode = r() < 0.5 ? BID : ASK;
      const price = PRICES[Math.floor(r() * PRICES.length)] as string;
      const key = `${side}:${price}`;
      const q = book.get(key) ?? 0n;
      let delta = BigInt(Math.floor(r() * 9) - 4) * 10n ** 17n; // ±0.4 in tenths
      if (q + delta < 0n) delta = -q;
      if (delta === 0n) continue;
      book.set(key, q + delta);
      changes.push([side, price, formatDecimal(delta)]);
    }
    events.push({ ts, changes });
  }
  return { start, events };
}

/** The venue's book after every event with ts < `before`. */
function truth(v: { start: Map<string, bigint>; events: VenueEvent[] }, before: number): Map<string, bigint> {
  const book = new Map(v.start);
  for (const e of v.events) {
    if (e.ts >= before) break;
    for (const [side, price, delta] of e.changes)
      book.set(`${side}:${price}`, (book.get(`${side}:${price}`) ?? 0n) + parseDecimal(delta));
  }
  for (const [k, q] of book) if (q === 0n) book.delete(k);
  return book;
}

function toBook(flat: Map<string, bigint>): LocalBook {
  const b = new LocalBook();
  for (const [key, q] of flat) {
    const [side, price] = key.split(':') as [string, string];
    b.side(Number(side) as SideCode).set(price, { q, s: '', e: 0 });
  }
  return b;
}

type Row =
  | { kind: 'delta'; ts: number; sequence: number; key: string; delta: bigint }
  | { kind: 'snapshot'; ts: number; book: Map<string, bigint> }
  | { kind: 'gap'; from: number; to: number; reason: string }
  | { kind: 'trade'; ts: number; id: string; sequence: number };

/** A RowSink that keeps what it is given (the rows as the tables would hold them). */
function collector(): RowSink & { rows: Row[] } {
  const rows: Row[] = [];
  return {
    rows,
    delta: (_e, _t, ts, sequence, side, price, delta) =>
      rows.push({ kind: 'delta', ts, sequence, key: `${side}:${price}`, delta: parseDecimal(delta) }),
    snapshot: (_e, _t, ts, book) => rows.push({ kind: 'snapshot', ts, book: book.flatten() }),
    trade: (t: RecordedTrade) => rows.push({ kind: 'trade', ts: t.ts, id: t.tradeId, sequence: t.sequence }),
    gap: (_e, _t, from, to, reason) => rows.push({ kind: 'gap', from, to, reason }),
    verification: () => undefined,
  };
}

/**
 * What a recorder writes for these events: a first snapshot, then each event's deltas, with a cadence snapshot of its
 * book before an event whose ts exceeds every row written, where `cadence` says so (two recorders differ in these).
 * `sink` gets the rows with the recorder's HLC sequence; `at` is the production clock (one ms per event).
 */
function record(
  v: { start: Map<string, bigint>; events: VenueEvent[] },
  sink: RowSink,
  cadence: () => boolean,
  clock: { now: number },
  options: { lossAt?: number; resumeAt?: number } = {},
): number {
  let sequence = 0;
  let lastTs = 999;
  sink.snapshot(EX, T, 999, toBook(v.start), 999, '');
  let lost = false;
  for (const e of v.events) {
    clock.now++;
    if (options.lossAt !== undefined && !lost && e.ts >= options.lossAt) lost = true;
    if (lost) {
      if (options.resumeAt === undefined || e.ts < options.resumeAt) continue;
      // The recorder's fresh book: its gap (from before the loss), then the venue's snapshot at this event's ts.
      sink.gap(EX, T, (options.lossAt as number) - 5, e.ts, 'disconnect', clock.now);
      sink.snapshot(EX, T, e.ts, toBook(truth(v, e.ts)), clock.now, '');
      lastTs = e.ts;
      lost = false;
      options.lossAt = undefined;
    } else if (e.ts > lastTs && cadence()) {
      sink.snapshot(EX, T, e.ts, toBook(truth(v, e.ts)), clock.now, '');
      lastTs = e.ts;
    }
    for (const [side, price, delta] of e.changes) {
      sequence = Math.max(sequence + 1, e.ts * 1000);
      sink.delta(EX, T, e.ts, sequence, side, price, delta, clock.now, '');
      lastTs = Math.max(lastTs, e.ts);
    }
  }
  return sequence;
}

/** Rule 7 over stored rows: the book at T (after every row with ts ≤ T), or undefined inside a gap. */
function rule7(rows: readonly Row[], at: number): Map<string, bigint> | undefined {
  if (rows.some((r) => r.kind === 'gap' && r.from < at && at < r.to)) return undefined;
  const snapshots = rows.filter((r): r is Extract<Row, { kind: 'snapshot' }> => r.kind === 'snapshot' && r.ts <= at);
  const snap = snapshots.reduce<Extract<Row, { kind: 'snapshot' }> | undefined>(
    (best, r) => (best === undefined || r.ts >= best.ts ? r : best),
    undefined,
  );
  if (snap === undefined) return undefined;
  const book = new Map(snap.book);
  const deltas = rows
    .filter((r): r is Extract<Row, { kind: 'delta' }> => r.kind === 'delta' && r.ts >= snap.ts && r.ts <= at)
    .sort((a, b) => a.ts - b.ts || a.sequence - b.sequence);
  for (const d of deltas) book.set(d.key, (book.get(d.key) ?? 0n) + d.delta);
  for (const [k, q] of book) if (q === 0n) book.delete(k);
  return book;
}

/** The deltas of `rows` at `ts`, as RecorderStore.landedEnds gives them (`deltasAtLast`). */
function landedAt(rows: readonly Row[], ts: number): LandedDelta[] {
  return rows.flatMap((r) => {
    if (r.kind !== 'delta' || r.ts !== ts) return [];
    const [side, price] = r.key.split(':') as [string, string];
    return [{ side: Number(side) as SideCode, price, quantityDelta: formatDecimal(r.delta) }];
  });
}

const sortedEntries = (m: Map<string, bigint> | undefined) => (m ? [...m].sort() : m);

describe('StandbyBuffer.bookAt', () => {
  it('is the book after every buffered row before S, at every S, through cadence snapshots and trimming', () => {
    const v = venue(1, 600);
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now);
    const r = rng(2);
    record(v, buffer, () => r() < 0.05, clock);
    const tb = buffer.of(EX, T);
    const end = (v.events.at(-1) as VenueEvent).ts;
    for (let s = 1_000; s <= end + 1; s += 7) {
      expect([s, sortedEntries(tb.bookAt(s)?.flatten())]).toEqual([s, sortedEntries(truth(v, s))]);
    }
    // Fold the first half of production into the base book: later moments are unchanged, earlier ones not covered.
    const held = tb.size;
    tb.trim(300);
    expect(tb.size).toBeLessThan(held);
    const folded = (v.events[298] as VenueEvent).ts;
    expect(tb.bookAt(folded)).toBeUndefined();
    for (let s = folded + 1; s <= end + 1; s += 5) {
      expect([s, sortedEntries(tb.bookAt(s)?.flatten())]).toEqual([s, sortedEntries(truth(v, s))]);
    }
  });

  it('is not known inside the standby’s own gap, and known again from the snapshot that closes it', () => {
    const v = venue(3, 300);
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now);
    const lossAt = (v.events[100] as VenueEvent).ts;
    const resumeAt = (v.events[150] as VenueEvent).ts;
    record(v, buffer, () => false, clock, { lossAt, resumeAt });
    const tb = buffer.of(EX, T);
    expect(tb.bookAt(lossAt - 5)?.flatten()).toEqual(truth(v, lossAt - 5));
    expect(tb.bookAt(lossAt)).toBeUndefined();
    expect(tb.bookAt(resumeAt - 1)).toBeUndefined();
    expect(sortedEntries(tb.bookAt(resumeAt + 3)?.flatten())).toEqual(sortedEntries(truth(v, resumeAt + 3)));
  });
});

describe('TickerBuffer.splice', () => {
  it('continues the old owner’s rows exactly: rule 7 equals the venue at every moment, sequences keep increasing', () => {
    for (const seed of [11, 12, 13, 14]) {
      const v = venue(seed, 500);
      const r = rng(seed * 7);
      // The old owner and the standby record the same venue with different cadence snapshots.
      const old = collector();
      record(v, old, () => r() < 0.04, { now: 0 });
      const clock = { now: 0 };
      const buffer = new StandbyBuffer(() => clock.now);
      record(v, buffer, () => r() < 0.04, clock);
      // The old owner's rows landed up to some ms; the new owner is responsible from the next one — for half the seeds
      // a ms with venue events of its own (several events may share it), so S itself is exercised.
      const at = (v.events[Math.floor(r() * 400) + 50] as VenueEvent).ts;
      const s = seed % 2 === 0 ? at + 1 : at;
      const kept = old.rows.filter((row) => (row.kind === 'gap' ? row.to : row.ts) < s);
      const q = Math.max(0, ...kept.map((row) => (row.kind === 'delta' ? row.sequence : 0)));
      const out = collector();
      const result = buffer
        .of(EX, T)
        .splice({ s, sequence: q, lastTradeTs: -1, deltasAtLast: landedAt(kept, s - 1) }, out, clock.now);
      expect(result.continuous).toBe(true);
      expect(result.diverged).toBe(false);
      expect(result.completed).toBe(0); // the old owner landed the whole of ms S − 1
      expect(result.pendingGap).toBeUndefined();
      expect(out.rows[0]).toMatchObject({ kind: 'snapshot', ts: s });
      // Every spliced row is at or after S; sequences strictly increase from the old owner's, never below ts × 1000.
      let previous = q;
      for (const row of out.rows) {
        if (row.kind === 'gap') throw new Error('no gap expected');
        expect(row.ts).toBeGreaterThanOrEqual(s);
        if (row.kind === 'delta') {
          expect(row.sequence).toBeGreaterThan(previous);
          expect(row.sequence).toBeGreaterThanOrEqual(row.ts * 1000);
          previous = row.sequence;
        }
      }
      expect(result.sequence).toBe(previous);
      const stored = [...kept, ...out.rows];
      const end = (v.events.at(-1) as VenueEvent).ts;
      for (let at = 1_000; at <= end; at += 3) {
        expect([seed, at, sortedEntries(rule7(stored, at))]).toEqual([seed, at, sortedEntries(truth(v, at + 1))]);
      }
    }
  });

  it('writes the standby’s own gap from S when its book is not known at S, then its rows from the closing snapshot', () => {
    const v = venue(21, 300);
    const old = collector();
    record(v, old, () => false, { now: 0 });
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now);
    const lossAt = (v.events[100] as VenueEvent).ts;
    const resumeAt = (v.events[160] as VenueEvent).ts;
    record(v, buffer, () => false, clock, { lossAt, resumeAt });
    const s = (v.events[120] as VenueEvent).ts + 1; // inside the standby's gap
    const out = collector();
    const result = buffer.of(EX, T).splice({ s, sequence: 0, lastTradeTs: -1 }, out, clock.now);
    expect(result.continuous).toBe(false);
    expect(out.rows[0]).toEqual({ kind: 'gap', from: s, to: resumeAt, reason: 'disconnect' });
    expect(out.rows[1]).toMatchObject({ kind: 'snapshot', ts: resumeAt });
    const stored = [...old.rows.filter((row) => row.kind !== 'gap' && row.ts < s), ...out.rows];
    for (let at = 1_000; at <= (v.events.at(-1) as VenueEvent).ts; at += 3) {
      const book = rule7(stored, at);
      // The gap [S, resumeAt] covers its ends' changes too (a change at its `from` is in doubt): no book is read there.
      if (at > s && at < resumeAt) expect(book).toBeUndefined();
      else if (at < s || at >= resumeAt)
        expect([at, sortedEntries(book)]).toEqual([at, sortedEntries(truth(v, at + 1))]);
    }
  });

  it('writes a `handover` gap when the buffer no longer reaches back to S, and owes one when it has no snapshot since', () => {
    const v = venue(31, 200);
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now);
    const r = rng(5);
    record(v, buffer, () => r() < 0.05, clock);
    const tb = buffer.of(EX, T);
    tb.trim(150);
    const s = (v.events[20] as VenueEvent).ts;
    const out = collector();
    const result = tb.splice({ s, sequence: 0, lastTradeTs: -1 }, out, clock.now);
    expect(result.continuous).toBe(false);
    const firstSnapshot = out.rows.find((row) => row.kind === 'snapshot');
    if (firstSnapshot === undefined) {
      expect(out.rows).toEqual([]);
      expect(result.pendingGap).toEqual({ from: s, reason: 'handover' });
    } else {
      expect(out.rows[0]).toEqual({ kind: 'gap', from: s, to: firstSnapshot.ts, reason: 'handover' });
      expect(result.pendingGap).toBeUndefined();
    }
    // A standby that never had a snapshot since S owes the gap to the ticker's recorder.
    const empty = new StandbyBuffer(() => 0).of(EX, 'OTHER');
    expect(empty.splice({ s: 5, sequence: 0, lastTradeTs: -1 }, collector(), 0).pendingGap).toEqual({
      from: 5,
      reason: 'handover',
    });
  });

  it('writes the buffered trades from the old owner’s last trade on, renumbered with the deltas', () => {
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now);
    buffer.snapshot(EX, T, 100, toBook(new Map([[`${BID}:0.5`, 10n ** 18n]])), 100, '');
    const trade = (ts: number, id: string): RecordedTrade => ({
      exchange: EX,
      ticker: T,
      ts,
      sequence: 1,
      tradeId: id,
      price: '0.5',
      size: '1',
      side: 'buy',
      venueSide: 'yes',
      receivedTs: ts,
      venueSeq: '',
    });
    buffer.trade(trade(105, 'a'));
    buffer.trade(trade(110, 'b'));
    buffer.delta(EX, T, 112, 1, BID, '0.5', '1', 112, '');
    buffer.trade(trade(115, 'c'));
    const out = collector();
    buffer.of(EX, T).splice({ s: 111, sequence: 110_005, lastTradeTs: 110 }, out, 0);
    expect(out.rows.map((row) => [row.kind, 'id' in row ? row.id : row.kind === 'gap' ? row.from : row.ts])).toEqual([
      ['snapshot', 111],
      ['trade', 'b'],
      ['delta', 112],
      ['trade', 'c'],
    ]);
    const sequences = out.rows.flatMap((row) => ('sequence' in row ? [row.sequence] : []));
    expect(sequences).toEqual([110_006, 112_000, 115_000]);
  });
});

describe('bookDigest', () => {
  it('is equal for equal books whatever the quantity text, and differs when a level differs', () => {
    const a = new LocalBook();
    a.setLevel(BID, '0.5', '10');
    a.setLevel(ASK, '0.6', '2.50');
    const b = new LocalBook();
    b.setLevel(ASK, '0.60', '2.5');
    b.setLevel(BID, '0.50', '10.000');
    expect(bookDigest(a)).toBe(bookDigest(b));
    b.setLevel(BID, '0.5', '10.000000000000000001');
    expect(bookDigest(a)).not.toBe(bookDigest(b));
    b.setLevel(BID, '0.5', '10');
    b.setLevel(ASK, '0.6', '0');
    expect(bookDigest(a)).not.toBe(bookDigest(b));
  });
});
