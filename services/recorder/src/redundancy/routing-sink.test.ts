import { ASK, BID, CanonicalMemo } from '@depthgate/feeds';
import type { ExchangeKey } from '@depthgate/platforms';
import type { GapReason } from '../rows';
import { ListSink } from '../testing/support';
import { TickerRecorder, type TickerEnv } from '../ticker';
import { RoutingSink } from './routing-sink';
import { StandbyBuffer } from './standby-buffer';

const EX = 'venue_b' as ExchangeKey;
const T = 'KXTEST-1';

/**
 * A ticker as the redundant recorder runs it: its rows through a RoutingSink (the writer's sink: `owner`), and a
 * controller that routes the ticker to the standby buffer when it is lost (`onLost`), as the hook requires.
 */
function redundant(options: { provesContinuity?: boolean; owned?: boolean } = {}) {
  const owner = new ListSink();
  const clock = { now: 1_000_000 };
  const buffer = new StandbyBuffer(() => clock.now);
  const routing = new RoutingSink(owner, buffer);
  if (options.owned ?? true) routing.setOwned(EX, T, true);
  const lost: [number, GapReason][] = [];
  const env: TickerEnv = {
    sink: routing,
    now: () => clock.now,
    price: new CanonicalMemo(),
    snapshotIntervalMs: 60_000,
    quietMs: 1000,
    venueClock: true,
    provesContinuity: options.provesContinuity ?? true,
    onBroken: () => undefined,
    onLost: (ticker, fromTs, reason) => {
      lost.push([fromTs, reason]);
      routing.setOwned(ticker.exchange, ticker.ticker, false);
    },
  };
  const rec = new TickerRecorder(EX, T, { lastTs: -1, sequence: 0 }, env);
  return { rec, owner, buffer, routing, lost, clock };
}

/** The same ticker in solo mode (no onLost): today's rows. */
function solo(provesContinuity = true) {
  const sink = new ListSink();
  const clock = { now: 1_000_000 };
  const env: TickerEnv = {
    sink,
    now: () => clock.now,
    price: new CanonicalMemo(),
    snapshotIntervalMs: 60_000,
    quietMs: 1000,
    venueClock: true,
    provesContinuity,
    onBroken: () => undefined,
  };
  return { rec: new TickerRecorder(EX, T, { lastTs: -1, sequence: 0 }, env), sink, clock };
}

/** A loss and the fresh book after it, with changes around them. */
function script(rec: TickerRecorder, clock: { now: number }, afterLoss: () => void = () => undefined): void {
  rec.venueSnapshot([['0.5', '10']], [['0.6', '4']], { ts: 1000 });
  rec.applyDelta(rec.beginEvent(1500), BID, '0.5', '5');
  clock.now += 10;
  rec.lose('disconnect', 1700);
  afterLoss();
  expect(rec.beginEvent(1800)).toBe(-1); // ignored: the book is lost
  clock.now += 10;
  rec.venueSnapshot([['0.5', '12']], [['0.6', '3']], { defer: true });
  rec.settle(2500);
  rec.applyDelta(rec.beginEvent(2500), ASK, '0.6', '-3');
  rec.applyDelta(rec.beginEvent(2600), BID, '0.5', '2');
}

describe('RoutingSink', () => {
  it('routes each (exchange, ticker) to the writer when owned, else to the standby buffer', () => {
    const owner = new ListSink();
    const buffer = new StandbyBuffer(() => 0);
    const routing = new RoutingSink(owner, buffer);
    routing.setOwned(EX, 'A', true);
    routing.delta(EX, 'A', 10, 10_000, BID, '0.5', '1', 10, '');
    routing.delta('venue_a' as ExchangeKey, 'A', 10, 10_000, BID, '0.5', '1', 10, ''); // another exchange's A
    routing.delta(EX, 'B', 10, 10_000, BID, '0.5', '1', 10, '');
    routing.gap(EX, 'B', 5, 10, 'disconnect', 0);
    routing.verification(EX, 'A', 10, 'snapshot', 0);
    expect(owner.rows.map((r) => [r.kind, r.exchange, r.ticker])).toEqual([['delta', EX, 'A']]);
    expect(owner.verifications).toHaveLength(1);
    expect(buffer.of('venue_a' as ExchangeKey, 'A').size).toBe(1);
    expect(buffer.of(EX, 'B').size).toBe(2);
    expect(buffer.of(EX, 'A').size).toBe(0);
    routing.setOwned(EX, 'A', false);
    routing.delta(EX, 'A', 11, 11_000, BID, '0.5', '1', 11, '');
    expect(owner.rows).toHaveLength(1);
    expect(buffer.of(EX, 'A').size).toBe(1);
  });

  it('keeps writing a handed-over ticker’s trades from before the hand-over (a late backfill), and its end', () => {
    const owner = new ListSink();
    const buffer = new StandbyBuffer(() => 0);
    const routing = new RoutingSink(owner, buffer);
    const trade = (ts: number, id: string) => ({
      exchange: EX,
      ticker: 'A',
      ts,
      sequence: ts * 1000,
      tradeId: id,
      price: '0.5',
      size: '1',
      side: 'buy' as const,
      venueSide: 'yes',
      receivedTs: ts,
      venueSeq: '',
    });
    routing.setOwned(EX, 'A', true);
    routing.delta(EX, 'A', 10, 10_000, BID, '0.5', '1', 10, '');
    routing.delta(EX, 'A', 20, 20_000, BID, '0.5', '2', 20, '');
    routing.delta(EX, 'A', 20, 20_001, ASK, '0.6', '1', 20, '');
    routing.trade(trade(15, 't1'));
    expect(routing.endOf(EX, 'A')).toEqual({
      lastTs: 20,
      sequence: 20_001,
      lastTradeTs: 15,
      deltasAtLast: [
        { side: BID, price: '0.5', quantityDelta: '2', sequence: 20_000 },
        { side: ASK, price: '0.6', quantityDelta: '1', sequence: 20_001 },
      ],
    });
    routing.setOwned(EX, 'A', false); // handed over at S = 21
    routing.trade(trade(18, 't2')); // read back late: before S, ours
    routing.trade(trade(21, 't3')); // from S on: the new owner's
    expect(owner.rows.flatMap((r) => (r.kind === 'trade' ? [r.tradeId] : []))).toEqual(['t1', 't2']);
    expect(buffer.of(EX, 'A').size).toBe(1);
    expect(routing.endOf(EX, 'A')).toBeUndefined();
  });
});

describe('TickerRecorder in redundant mode (TickerEnv.onLost)', () => {
  it('tells the controller of a loss once, and its gap and closing snapshot go where the ticker is routed', () => {
    const { rec, owner, buffer, lost, clock } = redundant();
    script(rec, clock, () => {
      // The buffer is told of the loss only for a ticker it holds (this one was owned): not live either way.
      expect(buffer.live(EX, T)).toBe(false);
      rec.lose('stall', 1750); // already lost: no second offer
    });
    expect(lost).toEqual([[1700, 'disconnect']]);
    // The writer got the rows before the loss only; the gap, the fresh book and its deltas went to the buffer.
    expect(owner.rows.map((r) => [r.kind, r.ts])).toEqual([
      ['snapshot', 1000],
      ['snapshot', 1000],
      ['delta', 1500],
    ]);
    expect(buffer.of(EX, T).size).toBe(4);
    expect(buffer.live(EX, T)).toBe(true);
    expect(buffer.of(EX, T).bookAt(2000)).toBeUndefined(); // inside its own gap
    expect(buffer.of(EX, T).bookAt(2600)?.flatten()).toEqual(new Map([[`${BID}:0.5`, 12n * 10n ** 18n]]));
  });

  it('hands back exactly the rows a solo recorder writes when no peer takes the ticker (gap before its snapshot)', () => {
    for (const handBackAt of ['before the fresh book', 'after it'] as const) {
      const r = redundant();
      const s = solo();
      const handBack = () => r.routing.handBack(EX, T, r.clock.now);
      script(r.rec, r.clock, handBackAt === 'before the fresh book' ? handBack : undefined);
      if (handBackAt === 'after it') expect(handBack()).toEqual({ rows: 4 });
      script(s.rec, s.clock);
      expect([handBackAt, r.owner.rows]).toEqual([handBackAt, s.sink.rows]);
      expect(r.owner.rows.map((row) => row.kind)).toEqual([
        'snapshot',
        'snapshot',
        'delta',
        'gap',
        'snapshot',
        'snapshot',
        'delta',
        'delta',
      ]);
      expect(r.owner.verifications).toEqual(s.sink.verifications);
      expect(r.buffer.of(EX, T).size).toBe(0);
      expect(r.routing.isOwned(EX, T)).toBe(true);
    }
  });

  it('offers the ticker when the venue’s own book differs from ours (the divergence gap goes with its snapshot)', () => {
    const { rec, owner, buffer, lost } = redundant({ provesContinuity: false });
    rec.venueSnapshot([['0.5', '10']], [], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(1500), BID, '0.5', '5');
    rec.venueSnapshot([['0.5', '11']], [], { ts: 2000 }); // differs: a divergence from the last verification (1000)
    expect(lost).toEqual([[1000, 'divergence']]);
    expect(owner.rows.map((r) => r.kind)).toEqual(['snapshot', 'delta']);
    const held = buffer.of(EX, T);
    expect(held.bookAt(1500)).toBeUndefined();
    expect(held.bookAt(2000)?.flatten()).toEqual(new Map([[`${BID}:0.5`, 11n * 10n ** 18n]]));
  });

  it('marks a standby ticker’s buffer unknown from its loss until the fresh book (RowSink.lost)', () => {
    const { rec, buffer, lost, clock } = redundant({ owned: false });
    rec.venueSnapshot([['0.5', '10']], [['0.6', '4']], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(1500), BID, '0.5', '5');
    expect(buffer.live(EX, T)).toBe(true);
    clock.now += 10;
    rec.lose('disconnect', 1700);
    expect(lost).toEqual([[1700, 'disconnect']]);
    expect(buffer.live(EX, T)).toBe(false);
    expect(buffer.of(EX, T).bookAt(1700)?.flatten().get(`${BID}:0.5`)).toBe(15n * 10n ** 18n);
    expect(buffer.of(EX, T).bookAt(1701)).toBeUndefined();
  });

  it('continues its sequence and its rows from the splice (resumeSequence)', () => {
    const { rec, owner, buffer, routing, clock } = redundant({ owned: false });
    rec.venueSnapshot([['0.5', '10']], [], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(1500), BID, '0.5', '5');
    // The old owner landed up to 1999 with sequence 2_500_000 (its HLC ran ahead): S = 2000.
    const result = buffer.of(EX, T).splice({ s: 2000, sequence: 2_500_000, lastTradeTs: -1 }, owner, clock.now);
    buffer.drop(EX, T);
    routing.setOwned(EX, T, true);
    rec.resumeSequence(result.sequence, 2000);
    rec.applyDelta(rec.beginEvent(1900), BID, '0.5', '1'); // before S: raised to S (clamped), never below the snapshot
    rec.applyDelta(rec.beginEvent(2100), BID, '0.5', '1');
    expect(owner.rows.map((r) => [r.kind, r.ts, r.kind === 'delta' ? r.sequence : 0])).toEqual([
      ['snapshot', 2000, 0],
      ['delta', 2000, 2_500_001],
      ['delta', 2100, 2_500_002],
    ]);
  });

  it('owes a gap from S at the earliest when the splice found its book unknown', () => {
    const { rec, buffer, routing, owner, clock } = redundant({ owned: false });
    rec.venueSnapshot([['0.5', '10']], [], { ts: 1000 });
    rec.lose('disconnect', 1200);
    const result = buffer.of(EX, T).splice({ s: 1500, sequence: 1_400_000, lastTradeTs: -1 }, owner, clock.now);
    expect(result.pendingGap).toEqual({ from: 1500, reason: 'disconnect' });
    buffer.drop(EX, T);
    routing.setOwned(EX, T, true);
    rec.resumeSequence(result.sequence, 1500);
    rec.venueSnapshot([['0.5', '12']], [], { ts: 3000 });
    expect(owner.rows.map((r) => [r.kind, r.ts, r.kind === 'gap' ? r.fromTs : 0])).toEqual([
      ['gap', 3000, 1500],
      ['snapshot', 3000, 0],
    ]);
  });
});
