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
    expect(result).toMatchObject({ continuous: false, beyondWindow: true });
    const firstSnapshot = out.rows.find((row) => row.kind === 'snapshot');
    if (firstSnapshot === undefined) {
      expect(out.rows).toEqual([]);
      expect(result.pendingGap).toEqual({ from: s, reason: 'handover' });
    } else {
      expect(out.rows[0]).toEqual({ kind: 'gap', from: s, to: firstSnapshot.ts, reason: 'handover' });
      expect(result.pendingGap).toBeUndefined();
    }
    // A standby that never had a snapshot since S owes the gap to the ticker's recorder.
    // (Not for want of a window: `beyondWindow` is false.)
    const empty = new StandbyBuffer(() => 0).of(EX, 'OTHER');
    expect(empty.splice({ s: 5, sequence: 0, lastTradeTs: -1 }, collector(), 0)).toMatchObject({
      beyondWindow: false,
      pendingGap: { from: 5, reason: 'handover' },
    });
  });

  it('writes every buffered trade, those before the old owner’s last one too, renumbered with the deltas', () => {
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
    // Every buffered trade, those before the old owner's last one too (it may have missed one; copies are read once).
    expect(out.rows.map((row) => [row.kind, 'id' in row ? row.id : row.kind === 'gap' ? row.from : row.ts])).toEqual([
      ['snapshot', 111],
      ['trade', 'a'],
      ['trade', 'b'],
      ['delta', 112],
      ['trade', 'c'],
    ]);
    const sequences = out.rows.flatMap((row) => ('sequence' in row ? [row.sequence] : []));
    expect(sequences).toEqual([110_006, 110_007, 112_000, 115_000]);
  });
});

describe('TickerBuffer.splice: the rest of ms S − 1', () => {
  /** Two recorders of one venue; S right after a ms with at least two deltas; the old owner landed a prefix of it. */
  function setting(seed: number, venueClock = true) {
    const v = venue(seed, 400);
    const r = rng(seed * 3);
    const old = collector();
    record(v, old, () => r() < 0.04, { now: 0 });
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now, { venueClock: () => venueClock });
    record(v, buffer, () => r() < 0.04, clock);
    const counts = new Map<number, number>();
    for (const e of v.events) counts.set(e.ts, (counts.get(e.ts) ?? 0) + e.changes.length);
    const last = [...counts].find(([ts, n]) => ts > 1_400 && n >= 2) as [number, number];
    const s = last[0] + 1;
    const atLast = old.rows.filter((row) => row.kind === 'delta' && row.ts === s - 1);
    const k = 1 + Math.floor(r() * (atLast.length - 1)); // 1 … n − 1 of them landed
    const landedRows = atLast.slice(0, k);
    const kept = old.rows.filter((row) => (row.kind === 'gap' ? row.to : row.ts) < s - 1 || landedRows.includes(row));
    const q = Math.max(0, ...kept.map((row) => (row.kind === 'delta' ? row.sequence : 0)));
    return { v, buffer, clock, s, kept, q, k, n: atLast.length };
  }

  it('writes our deltas at S − 1 beyond the landed prefix before the snapshot at S: rule 7 equals the venue', () => {
    for (const seed of [41, 42, 43, 44, 45]) {
      const { v, buffer, clock, s, kept, q, k, n } = setting(seed);
      const out = collector();
      const result = buffer
        .of(EX, T)
        .splice({ s, sequence: q, lastTradeTs: -1, deltasAtLast: landedAt(kept, s - 1) }, out, clock.now);
      expect([seed, result.continuous, result.diverged, result.completed]).toEqual([seed, true, false, n - k]);
      const completion = out.rows.slice(0, n - k);
      expect(completion.every((row) => row.kind === 'delta' && row.ts === s - 1)).toBe(true);
      expect(out.rows[n - k]).toMatchObject({ kind: 'snapshot', ts: s });
      let previous = q;
      for (const row of out.rows) {
        if (row.kind !== 'delta') continue;
        expect(row.sequence).toBeGreaterThan(previous);
        previous = row.sequence;
      }
      const stored = [...kept, ...out.rows];
      const end = (v.events.at(-1) as VenueEvent).ts;
      // Every ms around S, every few elsewhere.
      for (let at = 1_000; at <= end; at += Math.abs(at - s) < 40 ? 1 : 7) {
        expect([seed, at, sortedEntries(rule7(stored, at))]).toEqual([seed, at, sortedEntries(truth(v, at + 1))]);
      }
    }
  });

  it('completes ms S − 1 from the release’s digest when our book began inside it (a recorder just started)', () => {
    let checked = 0;
    for (const seed of [41, 42, 43, 44, 45, 46, 47, 48, 49, 50]) {
      const { v, s, kept, q, k, n } = setting(seed);
      // Our book began with a snapshot at S − 1 after j of that ms's changes (0 < j < k: the landed deltas are no
      // prefix of ours).
      if (k < 2) continue;
      checked++;
      const changes = v.events.filter((e) => e.ts === s - 1).flatMap((e) => e.changes);
      const j = k - 1;
      const flat = truth(v, s - 1);
      const add = (book: Map<string, bigint>, [side, price, delta]: [SideCode, string, string]) =>
        book.set(`${side}:${price}`, (book.get(`${side}:${price}`) ?? 0n) + parseDecimal(delta));
      for (const c of changes.slice(0, j)) add(flat, c);
      for (const [key, quantity] of flat) if (quantity === 0n) flat.delete(key);
      const buffer = new StandbyBuffer(() => 0, { venueClock: () => true });
      buffer.snapshot(EX, T, s - 1, toBook(flat), 0, '');
      let sequence = 0;
      for (const c of changes.slice(j)) buffer.delta(EX, T, s - 1, ++sequence, c[0], c[1], c[2], 0, '');
      for (const e of v.events.filter((ev) => ev.ts >= s)) {
        for (const c of e.changes) buffer.delta(EX, T, e.ts, ++sequence, c[0], c[1], c[2], 0, '');
      }
      // The old owner's last book (after its k landed deltas at S − 1), as a release publishes it.
      const oldBook = new Map(truth(v, s - 1));
      for (const c of changes.slice(0, k)) add(oldBook, c);
      for (const [key, quantity] of oldBook) if (quantity === 0n) oldBook.delete(key);
      const point = { s, sequence: q, lastTradeTs: -1, deltasAtLast: landedAt(kept, s - 1) };
      // Without the digest: a divergence gap, as before.
      expect(buffer.of(EX, T).splice(point, collector(), 0).diverged).toBe(true);
      const out = collector();
      const result = buffer.of(EX, T).splice({ ...point, digest: bookDigest(toBook(oldBook)) }, out, 0);
      expect([seed, result.continuous, result.diverged, result.completed]).toEqual([seed, true, false, n - k]);
      const stored = [...kept, ...out.rows];
      const end = (v.events.at(-1) as VenueEvent).ts;
      for (let at = s - 20; at <= end; at += Math.abs(at - s) < 40 ? 1 : 7) {
        expect([seed, at, sortedEntries(rule7(stored, at))]).toEqual([seed, at, sortedEntries(truth(v, at + 1))]);
      }
    }
    expect(checked).toBeGreaterThanOrEqual(3);
  });

  it('finds the books disagree when the landed deltas are not a prefix of ours: a divergence gap from S − 1 to S', () => {
    const { buffer, clock, s, kept, q } = setting(46);
    const landed = landedAt(kept, s - 1);
    const first = landed[0] as LandedDelta;
    // The old owner's first delta there differs in its quantity only (0.1 more).
    landed[0] = { ...first, quantityDelta: formatDecimal(parseDecimal(first.quantityDelta) + 10n ** 17n) };
    const out = collector();
    const result = buffer.of(EX, T).splice({ s, sequence: q, lastTradeTs: -1, deltasAtLast: landed }, out, clock.now);
    expect([result.continuous, result.diverged, result.completed]).toEqual([true, true, 0]);
    expect(out.rows[0]).toEqual({ kind: 'gap', from: s - 1, to: s, reason: 'divergence' });
    expect(out.rows[1]).toMatchObject({ kind: 'snapshot', ts: s });
    expect(out.rows.some((row) => row.kind === 'delta' && row.ts < s)).toBe(false);
    // More landed deltas than ours there: no prefix either.
    const more = [...landedAt(kept, s - 1), ...landedAt(kept, s - 1)];
    const out2 = collector();
    const r2 = buffer.of(EX, T).splice({ s, sequence: q, lastTradeTs: -1, deltasAtLast: more }, out2, clock.now);
    expect(r2.diverged).toBe(true);
  });

  it('compares decimals by value, not text (the store prints its own zeros)', () => {
    const { buffer, clock, s, kept, q, k, n } = setting(47);
    const landed = landedAt(kept, s - 1).map((d) => ({
      ...d,
      price: `${d.price}000`,
      quantityDelta: d.quantityDelta.includes('.') ? `${d.quantityDelta}00` : `${d.quantityDelta}.00`,
    }));
    const out = collector();
    const result = buffer.of(EX, T).splice({ s, sequence: q, lastTradeTs: -1, deltasAtLast: landed }, out, clock.now);
    expect([result.diverged, result.completed]).toEqual([false, n - k]);
  });

  it('completes nothing on a receive clock (Gemini): S − 1 is the old owner’s own clock', () => {
    const { buffer, clock, s, kept, q } = setting(48, false);
    const out = collector();
    const result = buffer
      .of(EX, T)
      .splice({ s, sequence: q, lastTradeTs: -1, deltasAtLast: landedAt(kept, s - 1).slice(0, 1) }, out, clock.now);
    expect([result.continuous, result.diverged, result.completed]).toEqual([true, false, 0]);
    expect(out.rows[0]).toMatchObject({ kind: 'snapshot', ts: s });
  });

  it('writes a handover gap when the buffer was folded up to S − 1 (its deltas there are gone)', () => {
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now);
    buffer.snapshot(EX, T, 100, toBook(new Map([[`${BID}:0.5`, 10n ** 18n]])), 100, '');
    clock.now = 1;
    buffer.delta(EX, T, 105, 105_000, BID, '0.5', '1', 105, '');
    clock.now = 2;
    buffer.delta(EX, T, 106, 106_000, BID, '0.5', '1', 106, '');
    buffer.of(EX, T).trim(2); // folds the delta at 105
    const out = collector();
    const result = buffer.of(EX, T).splice({ s: 106, sequence: 0, lastTradeTs: -1 }, out, 3);
    expect(result.continuous).toBe(false);
    expect(result.pendingGap).toEqual({ from: 106, reason: 'handover' });
    // Not folded: our delta at S − 1 = 105 completes that ms (the old owner landed none there), above its sequence.
    const ok = new StandbyBuffer(() => 0);
    ok.snapshot(EX, T, 100, toBook(new Map([[`${BID}:0.5`, 10n ** 18n]])), 100, '');
    ok.delta(EX, T, 105, 105_000, BID, '0.5', '1', 105, '');
    const out2 = collector();
    const r2 = ok.of(EX, T).splice({ s: 106, sequence: 104_999, lastTradeTs: -1, deltasAtLast: [] }, out2, 3);
    expect([r2.continuous, r2.completed, r2.sequence, r2.lastTs]).toEqual([true, 1, 105_000, 106]);
    expect(out2.rows).toEqual([
      { kind: 'delta', ts: 105, sequence: 105_000, key: `${BID}:0.5`, delta: 10n ** 18n },
      { kind: 'snapshot', ts: 106, book: new Map([[`${BID}:0.5`, 2n * 10n ** 18n]]) },
    ]);
  });
});

describe('StandbyBuffer: row bound, losses, live, hand back', () => {
  it('holds at most maxRows, folding the oldest rows of every ticker first; the book stays exact after them', () => {
    const v = venue(51, 600);
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now, { maxRows: 300 });
    // Another ticker's rows first: they are the oldest, folded before any of T's.
    buffer.snapshot(EX, 'OTHER', 500, toBook(new Map([[`${BID}:0.5`, 10n ** 18n]])), 500, '');
    for (let i = 0; i < 50; i++) buffer.delta(EX, 'OTHER', 501 + i, (501 + i) * 1000, BID, '0.5', '1', 501, '');
    const r = rng(52);
    clock.now = 1;
    record(v, buffer, () => r() < 0.02, clock);
    expect(buffer.size).toBeLessThanOrEqual(300);
    expect(buffer.size).toBeGreaterThan(200); // down to 90 % of the bound, in whole ms of production
    expect(buffer.of(EX, 'OTHER').size).toBe(0);
    const tb = buffer.of(EX, T);
    expect(tb.size).toBe(buffer.size);
    const end = (v.events.at(-1) as VenueEvent).ts;
    // T's first rows were folded: its book is known only after them, and exact there.
    let known = 0;
    for (let s = 1_000; s <= end + 1; s += 3) {
      const book = tb.bookAt(s);
      if (book === undefined) continue;
      known++;
      expect([s, sortedEntries(book.flatten())]).toEqual([s, sortedEntries(truth(v, s))]);
    }
    expect(known).toBeGreaterThan(50);
    expect(tb.bookAt(1_001)).toBeUndefined();
    // The time trim and the bound together: a trim, then more rows, keeps the count exact.
    tb.trim(clock.now - 100);
    expect(buffer.size).toBe(tb.size);
    buffer.delta(EX, 'OTHER', 900, 900_000, BID, '0.5', '1', 900, '');
    expect(buffer.size).toBe(tb.size + 1);
  });

  it('marks the book unknown from a loss until the next snapshot; live follows', () => {
    const buffer = new StandbyBuffer(() => 0);
    expect(buffer.live(EX, T)).toBe(false);
    buffer.snapshot(EX, T, 100, toBook(new Map([[`${BID}:0.5`, 10n ** 18n]])), 100, '');
    expect(buffer.live(EX, T)).toBe(true);
    buffer.delta(EX, T, 105, 105_000, BID, '0.5', '1', 105, '');
    buffer.lost(EX, T, 107, 'disconnect');
    expect(buffer.live(EX, T)).toBe(false);
    expect(buffer.of(EX, T).bookAt(107)?.flatten()).toEqual(new Map([[`${BID}:0.5`, 2n * 10n ** 18n]]));
    expect(buffer.of(EX, T).bookAt(108)).toBeUndefined();
    const out = collector();
    expect(buffer.of(EX, T).splice({ s: 110, sequence: 0, lastTradeTs: -1 }, out, 0).pendingGap).toEqual({
      from: 110,
      reason: 'disconnect',
    });
    buffer.gap(EX, T, 107, 120, 'disconnect', 0);
    expect(buffer.live(EX, T)).toBe(false);
    buffer.snapshot(EX, T, 120, toBook(new Map([[`${BID}:0.5`, 3n * 10n ** 18n]])), 120, '');
    expect(buffer.live(EX, T)).toBe(true);
    expect(buffer.of(EX, T).bookAt(121)?.flatten()).toEqual(new Map([[`${BID}:0.5`, 3n * 10n ** 18n]]));
    buffer.gap(EX, T, 119, 125, 'no_backfill', 0, 'trades');
    expect(buffer.live(EX, T)).toBe(true);
  });

  it('hands back a ticker’s rows as they were produced (the offer nobody took), or a handover gap for folded ones', () => {
    const clock = { now: 0 };
    const buffer = new StandbyBuffer(() => clock.now);
    buffer.lost(EX, T, 99, 'disconnect');
    buffer.gap(EX, T, 99, 100, 'disconnect', 5);
    buffer.snapshot(EX, T, 100, toBook(new Map([[`${BID}:0.5`, 10n ** 18n]])), 100, '7:1');
    buffer.delta(EX, T, 101, 101_003, BID, '0.5', '1', 101, '7:2');
    const out = collector();
    expect(buffer.of(EX, T).handBack(out, 0)).toEqual({ rows: 3 });
    expect(out.rows).toEqual([
      { kind: 'gap', from: 99, to: 100, reason: 'disconnect' },
      { kind: 'snapshot', ts: 100, book: new Map([[`${BID}:0.5`, 10n ** 18n]]) },
      { kind: 'delta', ts: 101, sequence: 101_003, key: `${BID}:0.5`, delta: 10n ** 18n },
    ]);
    // Rows folded out before the hand back: a handover gap from the first of them to the next snapshot.
    const b2 = new StandbyBuffer(() => clock.now);
    b2.delta(EX, T, 50, 50_000, BID, '0.5', '1', 50, '');
    clock.now = 1;
    b2.delta(EX, T, 51, 51_000, BID, '0.5', '1', 51, '');
    b2.snapshot(EX, T, 60, toBook(new Map([[`${BID}:0.5`, 10n ** 18n]])), 60, '');
    b2.of(EX, T).trim(1);
    const out2 = collector();
    expect(b2.of(EX, T).handBack(out2, 0)).toEqual({ rows: 2 });
    expect(out2.rows.map((row) => row.kind)).toEqual(['gap', 'snapshot']);
    expect(out2.rows[0]).toEqual({ kind: 'gap', from: 50, to: 60, reason: 'handover' });
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

describe('TickerBuffer.splice on a receive clock with the old owner’s book (a release)', () => {
  /**
   * Two recorders stamp each venue event with their own receive ms (jitter up to ±4 ms between them). The old owner
   * wrote events 0..k and released; the new owner's buffer has every event at its own stamps.
   */
  function setting(seed: number, k: number) {
    const v = venue(seed, 200);
    const r = rng(seed + 1);
    let a = 0;
    let b = 0;
    const stamps = v.events.map((e) => {
      a = Math.max(a, e.ts * 10 + Math.floor(r() * 5));
      b = Math.max(b, e.ts * 10 + Math.floor(r() * 5) - 2);
      return { a, b };
    });
    // The new owner receives the old owner's last event 3 ms after it (after S): a split by time would count it twice.
    const last = stamps[k] as { a: number; b: number };
    last.b = last.a + 3;
    for (const st of stamps.slice(k + 1)) st.b = Math.max(st.b, last.b);
    const buffer = new StandbyBuffer(() => 0, { venueClock: () => false });
    buffer.snapshot(EX, T, 1, toBook(v.start), 1, '');
    v.events.forEach((e, i) => {
      const at = (stamps[i] as { b: number }).b;
      for (const [side, price, delta] of e.changes) buffer.delta(EX, T, at, i + 2, side, price, delta, at, '');
    });
    // The old owner's book after event k, and where its rows end.
    const old = new Map(v.start);
    for (const e of v.events.slice(0, k + 1)) {
      for (const [side, price, delta] of e.changes) {
        old.set(`${side}:${price}`, (old.get(`${side}:${price}`) ?? 0n) + parseDecimal(delta));
      }
    }
    for (const [key, q] of old) if (q === 0n) old.delete(key);
    const s = (stamps[k] as { a: number }).a + 1;
    const later = v.events.slice(k + 1).reduce((n, e) => n + e.changes.length, 0);
    return { buffer, old, s, later };
  }

  it('splits where its book was the old owner’s last: every later change once, none before it again', () => {
    for (const [seed, k] of [
      [61, 120],
      [62, 90],
      [63, 150],
    ] as const) {
      const { buffer, old, s, later } = setting(seed, k);
      const out = collector();
      const result = buffer
        .of(EX, T)
        .splice({ s, sequence: 0, lastTradeTs: -1, digest: bookDigest(toBook(old)) }, out, 0);
      expect(result.continuous).toBe(true);
      const [snapshot, ...rest] = out.rows;
      expect(snapshot).toMatchObject({ kind: 'snapshot', ts: s });
      const sorted = (m: Map<string, bigint>) => [...m].sort(([x], [y]) => x.localeCompare(y));
      expect(sorted((snapshot as { book: Map<string, bigint> }).book)).toEqual(sorted(old));
      const deltas = rest.filter((row) => row.kind === 'delta');
      expect(deltas.length).toBe(later);
      expect(deltas.every((row) => row.kind === 'delta' && row.ts >= s)).toBe(true);
    }
  });

  it('writes no gap of its own start when its first book, received after S, is the old owner’s last (a quiet ticker)', () => {
    // The standby started after the old owner's last row (L = 46,200) of a ticker that then did not change: its
    // `recorder_start` gap runs from the stored end to its first snapshot (46,577), past S. The old owner's book at its
    // release is the standby's first book: the split is there, the book at S known, and that gap is the old owner's time.
    const v = venue(71, 12);
    const book = toBook(v.start);
    const buffer = new StandbyBuffer(() => 0, { venueClock: () => false });
    buffer.gap(EX, T, 46_200, 46_577, 'recorder_start', 46_577);
    buffer.snapshot(EX, T, 46_577, book, 46_577, '');
    let at = 50_000;
    for (const e of v.events) {
      at += 10;
      for (const [side, price, delta] of e.changes) buffer.delta(EX, T, at, at * 1000, side, price, delta, at, '');
    }
    // A trades gap of its start reaching past S stays: the old owner's trades end at S.
    buffer.gap(EX, T, 46_100, 46_577, 'no_backfill', 46_577, 'trades');
    const s = 46_201;
    const out = collector();
    const result = buffer.of(EX, T).splice({ s, sequence: 0, lastTradeTs: -1, digest: bookDigest(book) }, out, 0);
    expect(result).toMatchObject({ continuous: true });
    expect(result.pendingGap).toBeUndefined();
    expect(out.rows[0]).toMatchObject({ kind: 'snapshot', ts: s, book: book.flatten() });
    expect(out.rows.filter((row) => row.kind === 'gap')).toEqual([
      { kind: 'gap', from: s, to: 46_577, reason: 'no_backfill' },
    ]);
    const changes = v.events.reduce((n, e) => n + e.changes.length, 0);
    expect(out.rows.filter((row) => row.kind === 'delta').length).toBe(changes);
  });

  it('matches the book its window starts from when that first book was folded out and the ticker stayed quiet', () => {
    const v = venue(72, 1);
    const book = toBook(v.start);
    const clock = { now: 46_577 };
    const buffer = new StandbyBuffer(() => clock.now, { venueClock: () => false });
    buffer.gap(EX, T, 46_200, 46_577, 'recorder_start', 46_577);
    buffer.snapshot(EX, T, 46_577, book, 46_577, '');
    buffer.of(EX, T).trim(46_578);
    expect(buffer.of(EX, T).size).toBe(0);
    clock.now = 66_000;
    const [side, price, delta] = (v.events[0] as VenueEvent).changes[0] as [SideCode, string, string];
    buffer.delta(EX, T, 66_000, 66_000_000, side, price, delta, 66_000, '');
    const s = 46_201;
    const released = buffer
      .of(EX, T)
      .splice({ s, sequence: 0, lastTradeTs: -1, digest: bookDigest(book) }, collector(), 0);
    expect(released).toMatchObject({ continuous: true });
    // Another book than the window's start: not known at S (the window no longer reaches back to it).
    const other = new StandbyBuffer(() => clock.now, { venueClock: () => false });
    clock.now = 46_577;
    other.snapshot(EX, T, 46_577, book, 46_577, '');
    other.of(EX, T).trim(46_578);
    const changed = new Map(v.start);
    changed.set(`${side}:${price}`, (changed.get(`${side}:${price}`) ?? 0n) + parseDecimal(delta));
    const out = collector();
    const result = other
      .of(EX, T)
      .splice({ s, sequence: 0, lastTradeTs: -1, digest: bookDigest(toBook(changed)) }, out, 0);
    expect(result).toMatchObject({ continuous: false, pendingGap: { from: s, reason: 'handover' } });
  });

  it('splits by time without the digest (an offer, a dead owner): the changes received around S by both come twice', () => {
    const { buffer, s, later } = setting(61, 120);
    const out = collector();
    buffer.of(EX, T).splice({ s, sequence: 0, lastTradeTs: -1 }, out, 0);
    expect(out.rows.filter((row) => row.kind === 'delta').length).toBeGreaterThan(later);
  });
});
