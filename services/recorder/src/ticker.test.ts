import { ASK, BID, CanonicalMemo } from '@depthgate/feeds';
import type { GapReason } from './rows';
import { ListSink, rebuild } from './testing/support';
import {
  RECENT_TRADE_IDS,
  TickerRecorder,
  TRADES_RESUME_LOOK_BACK_MS,
  type OpenTradeWindow,
  type TickerEnv,
  type TickerResume,
} from './ticker';
import type { VenueTrade } from './venues/trades';

function setup(
  options: { venueClock?: boolean; provesContinuity?: boolean; resume?: { lastTs: number; sequence: number } } = {},
) {
  const sink = new ListSink();
  const clock = { now: 1_000_000 };
  const broken: GapReason[] = [];
  const env: TickerEnv = {
    sink,
    now: () => clock.now,
    price: new CanonicalMemo(),
    snapshotIntervalMs: 60_000,
    quietMs: 1000,
    venueClock: options.venueClock ?? true,
    provesContinuity: options.provesContinuity ?? true, // Kalshi's `seq`
    onBroken: (_t, reason) => broken.push(reason),
  };
  const rec = new TickerRecorder('venue_b', 'KXTEST-1', options.resume ?? { lastTs: -1, sequence: 0 }, env);
  return { rec, sink, clock, broken };
}

const bids = (...l: [string, string][]) => l;

describe('TickerRecorder', () => {
  it('writes a venue snapshot at the ts of the next event, then deltas with a strictly increasing sequence', () => {
    const { rec, sink } = setup();
    expect(rec.venueSnapshot(bids(['0.48', '100']), [['0.52', '50']], { defer: true })).toBe(true);
    expect(sink.rows).toEqual([]);
    rec.settle(2000);
    const t = rec.beginEvent(2000);
    rec.applyDelta(t, BID, '0.4800', '-20.00');
    rec.applyDelta(rec.beginEvent(2000), ASK, '0.53', '7');
    expect(sink.of('snapshot').map((r) => [r.ts, r.side, r.price, r.quantity])).toEqual([
      [2000, 'bid', '0.48', '100'],
      [2000, 'ask', '0.52', '50'],
    ]);
    const deltas = sink.of('delta');
    expect(deltas.map((r) => [r.ts, r.side, r.price, r.quantityDelta])).toEqual([
      [2000, 'bid', '0.48', '-20.00'],
      [2000, 'ask', '0.53', '7'],
    ]);
    expect(deltas.map((r) => r.sequence)).toEqual([2_000_000, 2_000_001]);
    expect(rebuild(sink.rows, 2000)).toEqual({ 'bid:0.48': '80', 'ask:0.52': '50', 'ask:0.53': '7' });
  });

  it('stamps every row with the receive clock: a delta its message, a snapshot the newest message it reflects', () => {
    const { rec, sink, clock } = setup();
    // A Kalshi-like snapshot (no time of its own) received at 1,000,010, settled by the next event.
    rec.venueSnapshot(bids(['0.48', '100']), [['0.52', '50']], { defer: true, receivedAt: 1_000_010 });
    rec.applyDelta(rec.beginEvent(1_000_015, 1_000_020), BID, '0.48', '-20');
    rec.applyDelta(rec.beginEvent(1_000_030, 1_000_035), ASK, '0.52', '5');
    // The cadence snapshot is due and the ticker quiet: the sweep writes it (at now − quiet), reflecting the messages
    // up to the one received at 1,000,035.
    clock.now = 1_060_000;
    rec.sweep(clock.now);
    rec.applyDelta(rec.beginEvent(1_060_000, 1_060_002), BID, '0.48', '1');
    expect(sink.rows.map((r) => [r.kind, r.ts, r.receivedTs])).toEqual([
      ['snapshot', 1_000_015, 1_000_010],
      ['snapshot', 1_000_015, 1_000_010],
      ['delta', 1_000_015, 1_000_020],
      ['delta', 1_000_030, 1_000_035],
      ['snapshot', 1_059_000, 1_000_035],
      ['snapshot', 1_059_000, 1_000_035],
      ['delta', 1_060_000, 1_060_002],
    ]);
  });

  it('keeps the sequence above ts × 1000 and above what is stored (hybrid logical clock)', () => {
    const { rec, sink } = setup({ resume: { lastTs: 5000, sequence: 9_000_000 } });
    rec.venueSnapshot(bids(['1', '1']), [], { ts: 6000 });
    rec.applyDelta(rec.beginEvent(6000), BID, '1', '1');
    rec.applyDelta(rec.beginEvent(9001), BID, '1', '1');
    expect(sink.of('delta').map((r) => r.sequence)).toEqual([9_000_001, 9_001_000]);
  });

  it('records the restart seam as a gap from the stored end to the first snapshot', () => {
    const { rec, sink } = setup({ resume: { lastTs: 5000, sequence: 10 } });
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 4000 });
    // Never at or before what is stored: the snapshot goes just after it.
    expect(sink.of('gap')).toMatchObject([{ fromTs: 5000, toTs: 5001, reason: 'recorder_start' }]);
    expect(sink.of('snapshot')[0]?.ts).toBe(5001);
  });

  it('ignores changes while the book is lost, then writes gap, snapshot, deltas', () => {
    const { rec, sink } = setup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(1500), BID, '0.5', '5');
    rec.lose('disconnect', 1700);
    expect(rec.beginEvent(1800)).toBe(-1);
    rec.venueSnapshot(bids(['0.5', '12']), [['0.6', '3']], { defer: true });
    rec.settle(2500);
    rec.applyDelta(rec.beginEvent(2500), ASK, '0.6', '-3');
    expect(sink.rows.map((r) => r.kind)).toEqual(['snapshot', 'delta', 'gap', 'snapshot', 'snapshot', 'delta']);
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1700, toTs: 2500, reason: 'disconnect' }]);
    expect(rebuild(sink.rows, 1600)).toEqual({ 'bid:0.5': '15' });
    expect(rebuild(sink.rows, 2500)).toEqual({ 'bid:0.5': '12' });
  });

  it('starts a loss on a feed that cannot prove continuity at its last verification; on a sequenced feed at the bound', () => {
    const run = (provesContinuity: boolean) => {
      const { rec, sink } = setup({ venueClock: false, provesContinuity });
      rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
      rec.applyLevel(rec.beginEvent(1500), BID, '0.5', '11');
      // A REST book read at 1500 matches: the book is verified there.
      const v = rec.startVerification(800);
      expect(v && rec.completeVerification(v, bids(['0.5', '11']), [])).toBe('match');
      expect(rec.verifiedTs).toBe(1500);
      // Changes after it (one the venue sent between them may have been lost silently), then the connection drops.
      rec.applyLevel(rec.beginEvent(1700), BID, '0.5', '12');
      rec.applyLevel(rec.beginEvent(1800), BID, '0.6', '1');
      rec.lose('disconnect', 1900);
      rec.venueSnapshot(bids(['0.5', '14']), [], { ts: 2500 });
      return sink.of('gap').map((g) => [g.fromTs, g.toTs, g.reason]);
    };
    // Gemini, Coinbase level2, Polymarket US: the rows at 1700 and 1800 are not trusted past the verification.
    expect(run(false)).toEqual([[1500, 2500, 'disconnect']]);
    // Kalshi: its seq proved every message up to the disconnect arrived.
    expect(run(true)).toEqual([[1900, 2500, 'disconnect']]);
  });

  it('takes an event older than one applied (a swap, on a feed without sequence) as a divergence from just before it', () => {
    const { rec, sink, broken } = setup({ provesContinuity: false });
    rec.venueSnapshot(bids(['0.27', '17873']), [], { ts: 1000 });
    // The venue's changes at 1270 (0.27 → 11237) and 1452 (0.27 → 0) arrive swapped: the newer first, verified there
    // (its checksum matches: it overwrote the level the older one changed).
    rec.applyLevel(rec.beginEvent(1452), BID, '0.27', '0');
    rec.checksumMatched(1452);
    // The older one, late: not written behind the newer (a book the venue never had from 1270 to 1452), but a loss.
    expect(rec.beginEvent(1270)).toBe(-1);
    expect(broken).toEqual(['divergence']);
    expect(rec.verifiedTs).toBe(1269);
    rec.lose('divergence', rec.verifiedTs); // what the venue does on onBroken
    rec.venueSnapshot([], [], { ts: 1500 });
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1269, toTs: 1500, reason: 'divergence' }]);
    expect(sink.of('delta').map((r) => r.ts)).toEqual([1452]);
    // After the venue's fresh book, its events apply again, whatever their time against the old ones.
    expect(rec.beginEvent(1600)).toBe(1600);
    // A feed whose sequence proves the order (Kalshi) never sees a swap: an older ts is the venue's own clock.
    const kalshi = setup({ provesContinuity: true });
    kalshi.rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1000 });
    kalshi.rec.applyDelta(kalshi.rec.beginEvent(1452), BID, '0.5', '1');
    expect(kalshi.rec.beginEvent(1270)).toBe(1270);
    expect(kalshi.broken).toEqual([]);
  });

  it('starts a loss on a feed that cannot prove continuity at its last venue snapshot when nothing verified since', () => {
    const { rec, sink } = setup({ provesContinuity: false });
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(1500), BID, '0.5', '5');
    rec.lose('stall', 1700);
    rec.venueSnapshot(bids(['0.5', '12']), [], { ts: 2500 });
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1000, toTs: 2500, reason: 'stall' }]);
    // Outside the gap the book is the first snapshot's; the delta at 1500 lies inside it.
    expect(rebuild(sink.rows, 1000)).toEqual({ 'bid:0.5': '10' });
    expect(rebuild(sink.rows, 2500)).toEqual({ 'bid:0.5': '12' });
  });

  it('decides a suspected loss by the next snapshot: equal → no gap, different → gap from the suspicion', () => {
    const { rec, sink } = setup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    rec.suspectLoss('sequence_gap', 1200);
    rec.applyDelta(rec.beginEvent(1300), BID, '0.5', '1');
    expect(rec.venueSnapshot(bids(['0.50', '11.00']), [], { defer: true })).toBe(false);
    expect(sink.of('gap')).toEqual([]);
    // The equal snapshot is written from our book at the next boundary, exactly.
    rec.applyDelta(rec.beginEvent(1400), BID, '0.5', '1');
    expect(sink.of('snapshot').map((r) => [r.ts, r.quantity])).toEqual([
      [1000, '10'],
      [1400, '11'],
    ]);
    rec.suspectLoss('sequence_gap', 1450);
    rec.applyDelta(rec.beginEvent(1500), BID, '0.5', '1');
    rec.venueSnapshot(bids(['0.5', '20']), [], { defer: true });
    rec.settle(1600);
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1450, toTs: 1600, reason: 'sequence_gap' }]);
    expect(rebuild(sink.rows, 1600)).toEqual({ 'bid:0.5': '20' });
  });

  it('takes cadence snapshots at the boundary before the next later delta, exactly', () => {
    const { rec, sink, clock } = setup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(1100), BID, '0.5', '1');
    clock.now += 61_000;
    rec.lastActivityAt = clock.now; // a busy ticker: the boundary takes the snapshot, not the sweep
    rec.sweep(clock.now);
    expect(rec.snapshotWanted).toBe(true);
    // Same ts as the last delta: a snapshot here could not hold "after every delta with ts < S".
    rec.applyDelta(rec.beginEvent(1100), BID, '0.5', '1');
    expect(sink.of('snapshot')).toHaveLength(1);
    rec.applyDelta(rec.beginEvent(1200), BID, '0.5', '1');
    expect(sink.of('snapshot').map((r) => [r.ts, r.quantity])).toEqual([
      [1000, '10'],
      [1200, '12'],
    ]);
    for (const t of [1000, 1100, 1150, 1200]) expect(rebuild(sink.rows, t)).toBeDefined();
    expect(rebuild(sink.rows, 1150)).toEqual({ 'bid:0.5': '12' });
    expect(rebuild(sink.rows, 1200)).toEqual({ 'bid:0.5': '13' });
  });

  it('snapshots a quiet ticker from the sweep, behind the clock when the venue stamps events', () => {
    const { rec, sink, clock } = setup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    clock.now += 61_000;
    rec.sweep(clock.now);
    expect(sink.of('snapshot').map((r) => r.ts)).toEqual([1000, clock.now - 1000]);
    // A late delta below the snapshot is raised to it.
    const t = rec.beginEvent(1500);
    expect(t).toBe(clock.now - 1000);
  });

  it('a quiet ticker on a silent connection (a stall not yet detected) gets no snapshot until a frame arrives', () => {
    const { rec, sink, clock } = setup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    const heard = clock.now;
    clock.now += 61_000;
    // Nothing heard on the connection for a minute: an event stamped before now − quiet may still be held back.
    rec.sweep(clock.now, heard);
    expect(sink.of('snapshot').map((r) => r.ts)).toEqual([1000]);
    // A heartbeat arrives: everything sent before it has arrived, the snapshot is exact.
    rec.sweep(clock.now, clock.now - 200);
    expect(sink.of('snapshot').map((r) => r.ts)).toEqual([1000, clock.now - 1000]);
    // Receive-stamped feeds (Gemini) need no frame: their snapshot at now holds what was received.
    const gemini = setup({ venueClock: false });
    gemini.rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    gemini.clock.now += 61_000;
    gemini.rec.sweep(gemini.clock.now, 0);
    expect(gemini.sink.of('snapshot').map((r) => r.ts)).toEqual([1000, gemini.clock.now]);
  });

  it('settles a venue snapshot nobody follows at its receipt', () => {
    const { rec, sink, clock } = setup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { defer: true });
    const received = clock.now;
    clock.now += 999;
    rec.sweep(clock.now);
    expect(sink.rows).toEqual([]);
    clock.now += 1;
    rec.sweep(clock.now);
    expect(sink.of('snapshot')[0]?.ts).toBe(received);
  });

  it('turns absolute sizes into signed deltas (Gemini) and ignores unchanged levels', () => {
    const { rec, sink } = setup({ venueClock: false });
    rec.venueSnapshot(bids(['9122.04', '0.00121425']), [['9122.07', '1']], { ts: 100 });
    let t = rec.beginEvent(200);
    rec.applyLevel(t, BID, '9122.04', '0.00121425');
    rec.applyLevel(t, BID, '9122.04', '0.5');
    rec.applyLevel(t, ASK, '9122.07', '0');
    rec.applyLevel(t, ASK, '9123', '0');
    t = rec.beginEvent(300);
    rec.applyLevel(t, ASK, '9122.08', '2.50000000');
    expect(sink.of('delta').map((r) => [r.side, r.price, r.quantityDelta])).toEqual([
      ['bid', '9122.04', '0.49878575'],
      ['ask', '9122.07', '-1'],
      ['ask', '9122.08', '2.5'],
    ]);
    expect(rebuild(sink.rows, 300)).toEqual({ 'bid:9122.04': '0.5', 'ask:9122.08': '2.5' });
  });

  it('diffs whole books into deltas (Polymarket US), removals included', () => {
    const { rec, sink } = setup();
    rec.venueSnapshot(
      [
        ['0.555', '0.50'],
        ['0.550', '10.00'],
      ],
      [['0.560', '0.80']],
      { ts: 1001 },
    );
    rec.applyWholeBook(
      rec.beginEvent(2000),
      [
        ['0.555', '0.50'],
        ['0.540', '3.00'],
      ],
      [
        ['0.560', '1.80'],
        ['0.570', '2.00'],
      ],
    );
    expect(
      sink
        .of('delta')
        .map((r) => `${r.side} ${r.price} ${r.quantityDelta}`)
        .sort(),
    ).toEqual(['ask 0.56 1', 'ask 0.57 2', 'bid 0.54 3', 'bid 0.55 -10']);
    expect(rebuild(sink.rows, 2000)).toEqual({
      'bid:0.555': '0.5',
      'bid:0.54': '3',
      'ask:0.56': '1.8',
      'ask:0.57': '2',
    });
  });

  it('reports a level driven negative as a broken book', () => {
    const { rec, broken } = setup();
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(1100), BID, '0.5', '-2');
    expect(broken).toEqual(['book_inconsistent']);
  });

  it('verifies against a REST book taken before or after changes in flight, and makes a lasting mismatch a divergence', () => {
    const { rec, clock, broken, sink } = setup({ venueClock: false });
    const outcomes: string[] = [];
    const told = (o: string) => outcomes.push(o);
    rec.venueSnapshot(bids(['1', '10']), [], { ts: 100 });
    // REST answered with a state we reached after the request was sent.
    let v = rec.startVerification(500, told);
    rec.applyLevel(rec.beginEvent(200), BID, '1', '11');
    rec.applyLevel(rec.beginEvent(300), BID, '1', '12');
    expect(rec.completeVerification(v!, [['1', '11']], [])).toBe('match');
    // REST is ahead of us: a change still in flight arrives later.
    v = rec.startVerification(500, told);
    expect(rec.completeVerification(v!, [['1', '13']], [])).toBe('pending');
    expect(outcomes).toEqual(['match']);
    rec.applyLevel(rec.beginEvent(400), BID, '1', '13');
    expect(rec.openVerifications).toBe(0);
    expect(outcomes).toEqual(['match', 'match']);
    // Never reached: a gap from the last moment the book was known right (the state the previous read matched: 400).
    v = rec.startVerification(500, told);
    expect(rec.completeVerification(v!, [['1', '99']], [])).toBe('pending');
    clock.now += 501;
    rec.sweep(clock.now);
    expect(broken).toEqual(['divergence']);
    expect(outcomes).toEqual(['match', 'match', 'mismatch']);
    expect(rec.live).toBe(false);
    rec.venueSnapshot(bids(['1', '99']), [], { ts: clock.now });
    expect(sink.of('gap')).toMatchObject([{ fromTs: 400, toTs: clock.now, reason: 'divergence' }]);
    // Told once: the sweep after the snapshot and a late answer change nothing.
    rec.sweep(clock.now + 1000);
    expect(rec.completeVerification(v!, [['1', '99']], [])).toBe('void');
    expect(outcomes).toEqual(['match', 'match', 'mismatch']);
  });

  it('puts a REST match at the state that matched: a level lost before the request and repaired after it leaves the book at the request unproven', () => {
    const { rec, sink } = setup({ venueClock: false, provesContinuity: false });
    rec.venueSnapshot(bids(['1', '10']), [['2', '5']], { ts: 100 });
    // The venue changed ask 2 → 6 at about 150; that message never reached us: our book is wrong from here.
    rec.applyLevel(rec.beginEvent(200), BID, '1', '11');
    const answered = rec.startVerification(500); // sent with our (wrong) book as of 200
    // The venue's next size for the level repairs our book at 300, before the answer (ask 2 = 7).
    rec.applyLevel(rec.beginEvent(300), ASK, '2', '7');
    expect(rec.completeVerification(answered!, [['1', '11']], [['2', '7']])).toBe('match');
    expect(rec.verifiedTs).toBe(300);
    const pending = rec.startVerification(500); // sent at 300; the answer shows a change still in flight to us
    rec.applyLevel(rec.beginEvent(350), ASK, '2', '8'); // not what the answer shows yet
    expect(rec.completeVerification(pending!, [['1', '12']], [['2', '8']])).toBe('pending');
    rec.applyLevel(rec.beginEvent(400), BID, '1', '12');
    // Each point is where our book equalled the REST book, never the request's moment (the book at 200 was wrong).
    expect(rec.verifiedTs).toBe(400);
    rec.writeVerification();
    expect(sink.verifications.map((p) => [p.ts, p.method])).toEqual([
      [100, 'snapshot'],
      [400, 'rest_book'],
    ]);
  });

  it('tells a read whose book was lost or re-based meanwhile void, and a failed one error', () => {
    const { rec } = setup({ venueClock: false });
    const outcomes: string[] = [];
    rec.venueSnapshot(bids(['1', '10']), [], { ts: 100 });
    const pending = rec.startVerification(500, (o) => outcomes.push(`pending ${o}`));
    expect(rec.completeVerification(pending!, [['1', '12']], [])).toBe('pending');
    // A venue snapshot re-bases the book before the grace ends: nothing to compare any more.
    rec.venueSnapshot(bids(['1', '12']), [], { ts: 200 });
    const inFlight = rec.startVerification(500, (o) => outcomes.push(`in flight ${o}`));
    rec.lose('disconnect', 200);
    expect(rec.completeVerification(inFlight!, [['1', '12']], [])).toBe('void');
    rec.venueSnapshot(bids(['1', '12']), [], { ts: 300 });
    const failed = rec.startVerification(500, (o) => outcomes.push(`failed ${o}`));
    rec.cancelVerification(failed!);
    expect(outcomes).toEqual(['pending void', 'in flight void', 'failed error']);
    expect(rec.openVerifications).toBe(0);
  });

  it('starts a REST divergence at the verification before the request, not at one made while the answer was awaited', () => {
    // Polymarket US: every whole book verifies the book at its ts.
    const { rec, clock, sink } = setup({ provesContinuity: false });
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1000 });
    const v = rec.startVerification(500);
    rec.applyWholeBook(rec.beginEvent(2000), bids(['0.5', '2']), []);
    expect(rec.verifiedTs).toBe(2000);
    expect(rec.completeVerification(v!, [['0.5', '7']], [])).toBe('pending');
    clock.now += 501;
    rec.sweep(clock.now);
    rec.venueSnapshot(bids(['0.5', '7']), [], { ts: 5000 });
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1000, toTs: 5000, reason: 'divergence' }]);
  });

  it('starts a REST mismatch gap where the book was last verified, before the changes the loss may hide behind', () => {
    const { rec, clock, sink } = setup({ venueClock: false });
    const t0 = clock.now;
    rec.venueSnapshot(bids(['1', '10']), [['2', '5']], { ts: t0 });
    const v1 = rec.startVerification(500);
    expect(rec.completeVerification(v1!, [['1', '10']], [['2', '5']])).toBe('match');
    rec.applyLevel(rec.beginEvent(t0 + 200), BID, '1', '11');
    // The venue changed ask 2 → 6 at about t0 + 250; that message never reached us.
    rec.applyLevel(rec.beginEvent(t0 + 300), BID, '1', '12');
    clock.now = t0 + 60_000;
    rec.sweep(clock.now); // a cadence snapshot of our (wrong) book: it proves nothing
    const cadence = sink.of('snapshot').filter((r) => r.ts > t0);
    expect(cadence.length).toBeGreaterThan(0);
    rec.applyLevel(rec.beginEvent(t0 + 70_000), BID, '1', '13');
    const v2 = rec.startVerification(500);
    expect(rec.completeVerification(v2!, [['1', '13']], [['2', '6']])).toBe('pending');
    clock.now = t0 + 70_501;
    rec.sweep(clock.now);
    rec.venueSnapshot(bids(['1', '13']), [['2', '6']], { ts: t0 + 80_000 });
    // Every row after the last verified moment is inside the gap, the cadence snapshot's too.
    expect(sink.of('gap')).toMatchObject([{ fromTs: t0, toTs: t0 + 80_000, reason: 'divergence' }]);
  });

  it('counts a whole book (Polymarket US) as verified: a later differing snapshot is a divergence from it', () => {
    const { rec, sink } = setup();
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1001 });
    rec.applyWholeBook(rec.beginEvent(2000), bids(['0.5', '2']), []);
    rec.applyDelta(rec.beginEvent(3000), BID, '0.5', '1'); // a change the venue never made
    rec.venueSnapshot(bids(['0.5', '2']), [], { ts: 4000 });
    expect(sink.of('gap')).toMatchObject([{ fromTs: 2000, toTs: 4000, reason: 'divergence' }]);
  });

  it('makes a resubscription snapshot that differs while the feed claimed continuity a divergence; an equal one verifies', () => {
    const { rec, sink } = setup({ venueClock: false, provesContinuity: false });
    rec.venueSnapshot(bids(['1', '10']), [], { ts: 1000 });
    rec.applyLevel(rec.beginEvent(1500), BID, '1', '11');
    // The venue's snapshot on resubscribing equals our book: nothing lost, the book is verified here.
    rec.venueSnapshot(bids(['1', '11']), [], { ts: 2000 });
    expect(sink.of('gap')).toEqual([]);
    expect(rec.verifiedTs).toBe(1500);
    rec.applyLevel(rec.beginEvent(2500), BID, '1', '12');
    // A change the feed never brought: the next snapshot differs.
    rec.venueSnapshot(bids(['1', '13']), [], { ts: 3000 });
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1500, toTs: 3000, reason: 'divergence' }]);
    expect(rebuild(sink.rows, 3000)).toEqual({ 'bid:1': '13' });
  });
});

describe('TickerRecorder venue sequences and verification points', () => {
  const points = (sink: ListSink) => sink.verifications.map((v) => [v.ts, v.method, v.detectedAt]);

  it("keeps the venue's ordering on the rows of its message; snapshots of our own book carry none", () => {
    const { rec, sink, clock } = setup();
    rec.venueSnapshot(bids(['0.48', '100']), [['0.52', '50']], { defer: true, venueSeq: '3:1' });
    rec.applyDelta(rec.beginEvent(2000, clock.now, '3:2'), BID, '0.48', '-20');
    rec.applyDelta(rec.beginEvent(2001), ASK, '0.52', '5');
    clock.now += 60_000;
    rec.sweep(clock.now); // a cadence snapshot: our book
    expect(sink.rows.map((r) => [r.kind, r.ts, r.venueSeq])).toEqual([
      ['snapshot', 2000, '3:1'],
      ['snapshot', 2000, '3:1'],
      ['delta', 2000, '3:2'],
      ['delta', 2001, ''],
      ['snapshot', clock.now - 1000, ''],
      ['snapshot', clock.now - 1000, ''],
    ]);
    expect(() => rec.beginEvent(2003, clock.now, '3\t4')).toThrow(RangeError);
    expect(() => rec.venueSnapshot([], [], { ts: 2004, venueSeq: 'x'.repeat(49) })).toThrow(RangeError);
  });

  it('writes a verification point per way the book is known right: venue snapshot, whole book, REST book, checksum', () => {
    const { rec, sink, clock } = setup({ provesContinuity: false });
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1001 });
    clock.now += 1000;
    rec.applyWholeBook(rec.beginEvent(2000), bids(['0.5', '2']), []);
    clock.now += 1000;
    rec.applyDelta(rec.beginEvent(3000), BID, '0.5', '1');
    const v = rec.startVerification(500); // known right at the last row written when it was sent
    expect(rec.completeVerification(v!, bids(['0.5', '3']), [])).toBe('match');
    clock.now += 1000;
    rec.checksumMatched(3500);
    clock.now += 1000;
    // The venue's snapshot equals our book: known right at the last row.
    rec.venueSnapshot(bids(['0.5', '3']), [], { ts: 4000 });
    expect(points(sink)).toEqual([
      [1001, 'snapshot', 1_000_000],
      [2000, 'snapshot', 1_001_000],
      [3000, 'rest_book', 1_002_000],
      [3500, 'checksum', 1_003_000],
    ]);
    // (Equal snapshot at the last row, 3000, is not later than the checksum's 3500: nothing new.)
    expect(rec.verifiedTs).toBe(3500);
  });

  it('coalesces to one point a second, and writes the newest before a loss, so a gap starts at a stored point', () => {
    const { rec, sink, clock } = setup({ provesContinuity: false });
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1001 });
    // A checksum on every message, many a second: held, the newest replacing the older.
    for (let i = 1; i <= 5; i++) {
      clock.now += 100;
      rec.applyDelta(rec.beginEvent(1001 + i * 100), BID, '0.5', '1');
      rec.checksumMatched(1001 + i * 100);
    }
    expect(points(sink)).toEqual([[1001, 'snapshot', 1_000_000]]);
    clock.now = 1_000_999;
    rec.sweep(clock.now);
    expect(sink.verifications).toHaveLength(1);
    clock.now = 1_001_000;
    rec.sweep(clock.now);
    expect(points(sink)).toEqual([
      [1001, 'snapshot', 1_000_000],
      [1501, 'checksum', 1_000_500],
    ]);
    // Again within the second, then the book is lost: the newest point is written at once.
    clock.now += 200;
    rec.applyDelta(rec.beginEvent(1700), BID, '0.5', '1');
    rec.checksumMatched(1700);
    rec.applyDelta(rec.beginEvent(1800), BID, '0.5', '1'); // not verified: lost right after
    rec.lose('malformed_message');
    expect(points(sink).at(-1)).toEqual([1700, 'checksum', 1_001_200]);
    rec.venueSnapshot(bids(['0.5', '9']), [], { ts: 2500 });
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1700, toTs: 2500, reason: 'malformed_message' }]);
    // The fresh snapshot's point came within the second: held, then replaced by a newer one; the end of a recording
    // writes what is held (Venue.stop), so nothing held is lost.
    expect(sink.verifications.at(-1)?.ts).toBe(1700);
    clock.now += 100;
    rec.checksumMatched(2600);
    rec.writeVerification();
    expect(points(sink).slice(-2)).toEqual([
      [1700, 'checksum', 1_001_200],
      [2600, 'checksum', 1_001_300],
    ]);
  });

  it('writes the held point before a differing venue snapshot makes a gap from it', () => {
    const { rec, sink, clock } = setup({ provesContinuity: false });
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1001 });
    clock.now += 10;
    rec.applyWholeBook(rec.beginEvent(1500), bids(['0.5', '2']), []);
    rec.applyDelta(rec.beginEvent(1600), BID, '0.5', '1');
    rec.venueSnapshot(bids(['0.5', '5']), [], { ts: 1700 });
    expect(points(sink).slice(0, 2)).toEqual([
      [1001, 'snapshot', 1_000_000],
      [1500, 'snapshot', 1_000_010],
    ]);
    expect(sink.of('gap')).toMatchObject([{ fromTs: 1500, toTs: 1700, reason: 'divergence' }]);
  });
});

describe('TickerRecorder trades', () => {
  function tradesSetup(options: { venueClock?: boolean; resume?: TickerResume } = {}) {
    const sink = new ListSink();
    const clock = { now: 1_000_000 };
    const windows: OpenTradeWindow[] = [];
    const deduplicated: string[] = [];
    const counted: string[] = [];
    const env: TickerEnv = {
      sink,
      now: () => clock.now,
      price: new CanonicalMemo(),
      snapshotIntervalMs: 3_600_000,
      quietMs: 1000,
      venueClock: options.venueClock ?? true,
      provesContinuity: true, // Kalshi's `seq`
      onBroken: () => undefined,
      onTradeWindow: (_r, w) => windows.push(w),
      metrics: {
        clamped: () => undefined,
        tradeDeduplicated: (e) => deduplicated.push(e),
        tradeCountExcess: (e, t, quantity) => counted.push(`excess ${e} ${t} ${quantity ?? 'restarted'}`),
      },
    };
    const rec = new TickerRecorder('venue_b', 'KXTEST-1', options.resume ?? { lastTs: -1, sequence: 0 }, env);
    return { rec, sink, clock, windows, deduplicated, counted };
  }
  const trade = (ts: number, id: string, over: Partial<VenueTrade> = {}): VenueTrade => ({
    ts,
    id,
    price: '0.3600',
    size: '136.00',
    side: 'buy',
    venueSide: 'yes',
    ...over,
  });

  it('records trades at the venue time with the sequence the deltas use, exact canonical decimals', () => {
    const { rec, sink } = tradesSetup();
    rec.venueSnapshot(bids(['0.36', '500']), [], { ts: 1000 });
    rec.applyDelta(rec.beginEvent(2000, 2003), BID, '0.36', '-136');
    expect(
      rec.trade(
        trade(2000, 'd91bc706-ee49-470d-82d8-11418bda6fed', { side: 'sell', venueSide: 'no', venueSeq: '4:9' }),
        2004,
      ),
    ).toBe(true);
    rec.applyDelta(rec.beginEvent(2000, 2005), BID, '0.36', '10');
    // A trade is never raised to a snapshot's time: the same trade must get the same ts from every path.
    rec.trade(trade(900, 't-late', { price: '0.35000', size: '0.50' }), 2006);
    expect(sink.rows.filter((r) => r.kind !== 'snapshot').map((r) => [r.kind, r.ts, r.sequence])).toEqual([
      ['delta', 2000, 2_000_000],
      ['trade', 2000, 2_000_001],
      ['delta', 2000, 2_000_002],
      ['trade', 900, 2_000_003],
    ]);
    expect(
      sink.of('trade').map((r) => [r.tradeId, r.price, r.size, r.tradeSide, r.venueSide, r.receivedTs, r.venueSeq]),
    ).toEqual([
      ['d91bc706-ee49-470d-82d8-11418bda6fed', '0.36', '136', 'sell', 'no', 2004, '4:9'],
      ['t-late', '0.35', '0.5', 'buy', 'yes', 2006, ''],
    ]);
    expect(() => rec.trade(trade(2100, 't-bad', { venueSeq: 'a b' }), 2007)).toThrow(RangeError);
  });

  it('records a trade id once (a replay is counted as deduplicated), and keeps a bounded set of recent ids', () => {
    const { rec, sink, deduplicated } = tradesSetup();
    expect(rec.trade(trade(1000, 'a'))).toBe(true);
    expect(rec.trade(trade(1000, 'a'))).toBe(false);
    expect(deduplicated).toEqual(['venue_b']);
    for (let i = 0; i < RECENT_TRADE_IDS; i++) rec.trade(trade(1001 + i, `n${i}`));
    // `a` is the oldest and was forgotten; the newest are still known.
    expect(rec.trade(trade(1000, 'a'))).toBe(true);
    expect(rec.trade(trade(1001 + RECENT_TRADE_IDS - 1, `n${RECENT_TRADE_IDS - 1}`))).toBe(false);
    expect(sink.of('trade')).toHaveLength(RECENT_TRADE_IDS + 2);
  });

  it('refuses values the tables cannot hold', () => {
    const { rec, sink } = tradesSetup();
    expect(() => rec.trade(trade(1000, 'x', { size: '0' }))).toThrow(/not positive/);
    expect(() => rec.trade(trade(1000, 'x', { size: '-1' }))).toThrow(/not positive/);
    expect(() => rec.trade(trade(1000, 'x', { price: '1e3' }))).toThrow(/exact decimal/);
    expect(() => rec.trade(trade(1000, 'tab\there'))).toThrow(/trade id/);
    expect(() => rec.trade(trade(1000, ''))).toThrow(/trade id/);
    expect(() => rec.trade(trade(1000, 'x', { venueSide: 'back\\slash' }))).toThrow(/trade side/);
    expect(() => rec.trade(trade(-1, 'x'))).toThrow(/trade time/);
    expect(sink.of('trade')).toEqual([]);
  });

  it('opens a window when the feed stops and hands it over when the next book is in: read from the last trade held', () => {
    const { rec, sink, windows, deduplicated } = tradesSetup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    rec.trade(trade(1500, 'held-1'));
    rec.trade(trade(1600, 'held-2'));
    rec.trade(trade(1600, 'held-3'));
    rec.applyDelta(rec.beginEvent(1700), BID, '0.5', '1');
    rec.lose('disconnect', 1800);
    rec.interruptTrades(1800);
    rec.interruptTrades(1900); // a second loss keeps the window's earlier start
    expect(windows).toEqual([]);
    // On the new connection, trades flow before the book: a replay of one held is dropped, a new one recorded.
    rec.trade(trade(1600, 'held-3'));
    rec.trade(trade(1200, 'old-but-unknown')); // older than the newest held: a replay whatever the set remembers
    rec.trade(trade(2950, 'new-on-feed'));
    expect(deduplicated).toHaveLength(2);
    rec.venueSnapshot(bids(['0.5', '12']), [], { defer: true });
    rec.settle(3000);
    expect(windows).toHaveLength(1);
    const w = windows[0] as OpenTradeWindow;
    // Read from the newest trade held; forward readers (Gemini) start from the newest one before it.
    expect([w.from, w.gapFrom, w.to, w.last]).toEqual([1600, 1800, 3000, { ts: 1500, id: 'held-1' }]);
    // REST gives back the window (and more): what is held, or outside, is dropped; the rest goes in in time order.
    const { recorded } = rec.completeTradeWindow(w, [
      trade(3100, 'after-window'),
      trade(2950, 'new-on-feed'),
      trade(2500, 'missed-2'),
      trade(1600, 'held-2'),
      trade(1599, 'before-window'),
      trade(2000, 'missed-1'),
    ]);
    expect(recorded).toBe(2);
    expect(sink.of('trade').map((r) => r.tradeId)).toEqual([
      'held-1',
      'held-2',
      'held-3',
      'new-on-feed',
      'missed-1',
      'missed-2',
    ]);
    expect(sink.of('gap').filter((g) => g.stream === 'trades')).toEqual([]);
    expect(rec.tradeWindows).toEqual([]);
  });

  it('records what a window could not read back as a trades gap', () => {
    const { rec, sink, windows } = tradesSetup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1000 });
    rec.trade(trade(1500, 'held'));
    rec.lose('stall', 1800);
    rec.interruptTrades(1800);
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 3000 });
    const w = windows[0] as OpenTradeWindow;
    // The venue's pages ran out at 2400: [1500, 2400] was not read (clipped to the window).
    rec.completeTradeWindow(w, [trade(2500, 'got')], [{ from: 0, to: 2400 }], 'backfill_incomplete');
    expect(sink.of('gap').map((g) => [g.stream, g.fromTs, g.toTs, g.reason])).toEqual([
      ['book', 1800, 3000, 'stall'],
      ['trades', 1500, 2400, 'backfill_incomplete'],
    ]);
    // Completing it again does nothing.
    expect(rec.completeTradeWindow(w, [trade(2600, 'late')], [{ from: 0, to: 9999 }]).recorded).toBe(0);
    expect(sink.of('trade').map((r) => r.tradeId)).toEqual(['held', 'got']);
  });

  it('after a restart reads back from just after the stored end', () => {
    const { rec, windows } = tradesSetup({ resume: { lastTs: 5000, sequence: 5_000_000 } });
    rec.trade(trade(4990, 'stored-before')); // older than the stored end: a replay of what is stored
    expect(rec.trade(trade(5001, 'fresh'))).toBe(true);
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 6000 });
    expect(windows.map((w) => [w.from, w.gapFrom, w.to, w.last])).toEqual([[5001, 5001, 6000, undefined]]);
    expect([...(windows[0] as OpenTradeWindow).known.keys()]).toEqual(['fresh']);
  });

  it('after a restart reads back from quietMs before the stored trades’ end, knowing the trades stored there', () => {
    // The trades lane landed up to 4200, the book's up to 5000; a trade of 3900 arriving after that of 4200 was lost.
    const { rec, windows, sink } = tradesSetup({
      resume: {
        lastTs: 5000,
        sequence: 5_000_000,
        bookTs: 5000,
        tradesTs: 4200,
        tradesAtEnd: [{ id: 'stored-4200', ts: 4200 }],
      },
    });
    expect(rec.trade(trade(3100, 'older'))).toBe(false); // before the window: a replay of what is stored
    expect(rec.trade(trade(4200, 'stored-4200'))).toBe(false); // stored: not again
    expect(rec.trade(trade(3900, 'arrived-late'))).toBe(true);
    expect(rec.trade(trade(4600, 'lost-by-the-lane'))).toBe(true);
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 6000 });
    expect(windows.map((w) => [w.from, w.gapFrom, w.to])).toEqual([[3200, 3200, 6000]]);
    // A REST read of the window stores only what is not stored yet.
    expect(
      rec.completeTradeWindow(windows[0] as OpenTradeWindow, [
        trade(4200, 'stored-4200'),
        trade(3900, 'arrived-late'),
        trade(4300, 'read-back'),
      ]).recorded,
    ).toBe(1);
    expect(sink.of('trade').map((r) => r.tradeId)).toEqual(['arrived-late', 'lost-by-the-lane', 'read-back']);
  });

  it('after a restart reads back at most TRADES_RESUME_LOOK_BACK_MS before the stored end (a quiet ticker)', () => {
    const lastTs = 10_000_000;
    const { rec, windows } = tradesSetup({ resume: { lastTs, sequence: 1, bookTs: lastTs, tradesTs: 1000 } });
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: lastTs + 1000 });
    expect(windows.map((w) => w.from)).toEqual([lastTs - TRADES_RESUME_LOOK_BACK_MS]);
  });

  it('after a restart reads back trades from at most quietMs before the ticker’s first stored row (recorded for a moment only)', () => {
    // Recorded from 10,000,000 for 3 s without a trade: the venue's earlier trades were never ours.
    const firstTs = 10_000_000;
    const lastTs = firstTs + 3000;
    const { rec, windows } = tradesSetup({ resume: { lastTs, sequence: 1, bookTs: lastTs, tradesTs: -1, firstTs } });
    // From quietMs (1000) before it: a trade that came that far out of order after the first row may have been lost.
    expect(rec.trade(trade(firstTs - 1010, 'before-the-recording'))).toBe(false);
    expect(rec.trade(trade(firstTs - 990, 'out-of-order'))).toBe(true);
    expect(rec.trade(trade(firstTs + 10, 'within'))).toBe(true);
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: lastTs + 1000 });
    expect(windows.map((w) => w.from)).toEqual([firstTs - 1000]);
  });

  it('after a restart starts the book’s recorder_start gap where the stored book ends, not at a later trade', () => {
    const { rec, sink } = tradesSetup({ resume: { lastTs: 5200, sequence: 5_200_000, bookTs: 5000, tradesTs: 5200 } });
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 6000 });
    expect(sink.of('gap').filter((g) => g.stream !== 'trades')).toMatchObject([
      { fromTs: 5000, toTs: 6000, reason: 'recorder_start' },
    ]);
  });

  it('on a receive-clocked feed starts a window at the newest trade held, not at the receive-time watermark', () => {
    const { rec, windows } = tradesSetup({ venueClock: false });
    rec.venueSnapshot(bids(['1', '1']), [], { ts: 1_000_000 });
    rec.trade(trade(999_500, 'g1'));
    rec.interruptTrades(1_000_400);
    rec.lose('disconnect');
    rec.venueSnapshot(bids(['1', '1']), [], { ts: 1_002_000 });
    expect(windows.map((w) => [w.from, w.gapFrom, w.to])).toEqual([[999_500, 999_500, 1_002_000]]);
  });

  it("checks the feed's trades against the venue's count (the trade count audit): a shortfall is a trades gap", () => {
    const { rec, sink, counted } = tradesSetup();
    rec.venueSnapshot(bids(['0.5', '10']), [], { ts: 1001 });
    rec.tradesCounted('40.00', 1000);
    rec.tradesCounted('40.75', 1100);
    rec.trade(trade(1100, 'a', { size: '0.75' }));
    rec.trade(trade(1100, 'a', { size: '0.75' })); // a replay of a trade held is not counted twice
    rec.tradesCounted('41.75', 1200);
    // The feed's trade of 1 at 1200 is lost (one REST gave back is not the feed's: not counted).
    rec.trade(trade(1200, 'rest', { size: '1' }), 1200, 'backfill');
    rec.tradesCounted('41.75', 1300);
    rec.tradesCounted('41.75', 1400);
    expect(sink.of('gap').map((g) => [g.stream, g.fromTs, g.toTs, g.reason])).toEqual([
      ['trades', 1100, 1200, 'missed_trades'],
    ]);
    // More received than counted: reported, no gap, measured again from the previous book.
    rec.trade(trade(1400, 'b', { size: '2' }));
    rec.tradesCounted('42.75', 1500);
    rec.tradesCounted('41', 1600); // the count went back (a venue restart)
    expect(counted).toEqual(['excess venue_b KXTEST-1 1', 'excess venue_b KXTEST-1 restarted']);
    expect(sink.of('gap')).toHaveLength(1);
    expect(() => rec.tradesCounted('-1', 1700)).toThrow(/negative/);
    expect(() => rec.tradesCounted('1e3', 1700)).toThrow(/exact decimal/);
  });

  it('opens no window for a ticker that recorded nothing yet, nor when trades are not recorded', () => {
    const fresh = tradesSetup();
    fresh.rec.interruptTrades(-1);
    fresh.rec.venueSnapshot(bids(['1', '1']), [], { ts: 2000 });
    expect(fresh.windows).toEqual([]);
    const { rec, sink } = setup();
    rec.venueSnapshot(bids(['1', '1']), [], { ts: 1000 });
    rec.interruptTrades(1500);
    expect(rec.trade(trade(1600, 'x'))).toBe(false);
    expect(rec.tradeWindow).toBeUndefined();
    expect(sink.of('trade')).toEqual([]);
  });
});

describe('TickerRecorder trade audits', () => {
  it('closes its open window every audit interval (not while the feed is stopped or a read is pending)', () => {
    const sink = new ListSink();
    const clock = { now: 1_000_000 };
    const windows: OpenTradeWindow[] = [];
    const rec = new TickerRecorder(
      'venue_b',
      'KX-1',
      { lastTs: -1, sequence: 0 },
      {
        sink,
        now: () => clock.now,
        price: new CanonicalMemo(),
        snapshotIntervalMs: 3_600_000,
        quietMs: 500,
        venueClock: true,
        onBroken: () => undefined,
        onTradeWindow: (_r, w) => windows.push(w),
        tradeAuditIntervalMs: 60_000,
      },
    );
    const t = (ts: number, id: string): VenueTrade => ({
      ts,
      id,
      price: '0.5',
      size: '1',
      side: 'buy',
      venueSide: 'yes',
    });
    rec.trade(t(999_000, 'before-any-book'));
    // Trades flow once the first book is in: the open window starts there (its first audit somewhere in an interval).
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1_000_000 });
    expect(rec.tradeWindow?.from).toBe(1_000_000);
    rec.trade(t(1_000_100, 'a'));
    clock.now += 60_000;
    rec.trade(t(1_059_800, 'in-flight-margin'));
    rec.sweep(clock.now);
    expect(windows.map((w) => [w.kind, w.from, w.to, [...w.known.keys()]])).toEqual([
      ['audit', 1_000_000, 1_059_500, ['a', 'in-flight-margin']],
    ]);
    // The next window starts where it ended, knowing what was recorded since.
    expect([rec.tradeWindow?.from, [...(rec.tradeWindow?.known.keys() ?? [])]]).toEqual([
      1_059_500,
      ['in-flight-margin'],
    ]);
    // A trade the feed lost silently comes back from REST; the others are known.
    const first = windows[0] as OpenTradeWindow;
    clock.now += 60_000;
    rec.sweep(clock.now);
    expect(windows).toHaveLength(1); // the previous read is still pending
    expect(rec.completeTradeWindow(first, [t(1_000_100, 'a'), t(1_020_000, 'lost-on-the-feed')]).recorded).toBe(1);
    // The feed stops: no audit while it is stopped; the open window becomes the missed one.
    rec.lose('disconnect', 1_119_000);
    rec.interruptTrades(1_119_000);
    clock.now += 60_000;
    rec.sweep(clock.now);
    expect(windows).toHaveLength(1);
    rec.venueSnapshot(bids(['0.5', '1']), [], { ts: 1_180_000 });
    expect(windows.slice(1).map((w) => [w.kind, w.from, w.gapFrom, w.to])).toEqual([
      ['missed', 1_059_500, 1_119_000, 1_180_000],
    ]);
    expect(sink.of('trade').map((r) => r.tradeId)).toEqual([
      'before-any-book',
      'a',
      'in-flight-margin',
      'lost-on-the-feed',
    ]);
  });
});
