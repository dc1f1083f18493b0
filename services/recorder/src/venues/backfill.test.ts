import { Writable } from 'node:stream';
import { CanonicalMemo } from '@depthgate/feeds';
import { createLogger } from '@depthgate/service-kit';
import type { RecorderMetrics } from '../metrics';
import { ListSink } from '../testing/support';
import { TickerRecorder } from '../ticker';
import { BACKFILL_ATTEMPTS, TradeBackfiller } from './backfill';
import type { RestClient } from './rest';
import type { TradeBackfill, TradeHistory, TradeWindow, VenueTrade } from './trades';

const logger = createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const trade = (ts: number, id: string): VenueTrade => ({
  ts,
  id,
  price: '0.5',
  size: '1',
  side: 'buy',
  venueSide: 'yes',
});

function setup(history: TradeHistory, o: { delayMs?: number; current?: boolean; auditMs?: number } = {}) {
  const sink = new ListSink();
  const clock = { now: 1_000_000 };
  const counts = new Map<string, number>();
  const counter = (name: string) => ({
    inc: (labels: Record<string, string>, n = 1) => {
      const key = `${name} ${Object.values(labels).join(' ')}`;
      counts.set(key, (counts.get(key) ?? 0) + n);
    },
  });
  const metrics = {
    backfills: counter('backfills'),
    tradesBackfilled: counter('backfilled'),
  } as unknown as Pick<RecorderMetrics, 'backfills' | 'tradesBackfilled'>;
  const backfiller = new TradeBackfiller({
    exchange: 'venue_b',
    history,
    rest: {} as RestClient,
    metrics,
    logger,
    now: () => clock.now,
    maxPages: 7,
    delayMs: o.delayMs ?? 0,
    current: () => o.current ?? true,
    retryMs: 1,
  });
  const rec = new TickerRecorder(
    'venue_b',
    'KX-1',
    { lastTs: -1, sequence: 0 },
    {
      sink,
      now: () => clock.now,
      price: new CanonicalMemo(),
      snapshotIntervalMs: 3_600_000,
      quietMs: 1000,
      venueClock: true,
      onBroken: () => undefined,
      onTradeWindow: (r, w) => backfiller.add(r, w),
      tradeAuditIntervalMs: o.auditMs,
      metrics: { clamped: () => undefined, malformed: (exchange) => counter('malformed').inc({ exchange }) },
    },
  );
  /** The ticker holds a trade at `from` − 500, its feed stops at `from`, and carries trades again at `to`. */
  const miss = (from: number, to: number) => {
    rec.venueSnapshot([['0.5', '1']], [], { ts: from - 600 });
    rec.trade(trade(from - 500, `held-${from}`));
    rec.lose('disconnect', from);
    rec.interruptTrades(from);
    rec.venueSnapshot([['0.5', '1']], [], { ts: to });
  };
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  };
  const tradeGaps = () =>
    sink
      .of('gap')
      .filter((g) => g.stream === 'trades')
      .map((g) => [g.fromTs, g.toTs, g.reason]);
  return { sink, clock, counts, backfiller, rec, miss, until, tradeGaps };
}

describe('TradeBackfiller', () => {
  it('reads a closed window back from REST and records the trades the feed missed', async () => {
    const asked: TradeWindow[] = [];
    const history: TradeBackfill = {
      fetch: (_rest, ticker, w, o) => {
        asked.push(w);
        expect([ticker, o.maxPages]).toEqual(['KX-1', 7]);
        return Promise.resolve({ trades: [trade(1000, 'held-1500'), trade(2000, 'missed'), trade(4000, 'later')] });
      },
    };
    const h = setup(history);
    h.miss(1500, 3000);
    await h.until(() => h.backfiller.pending === 0);
    // Read from the trade held (trades are not audited here: the window opened when the feed stopped).
    expect(asked).toEqual([{ from: 1000, to: 3000, last: undefined }]);
    expect(h.sink.of('trade').map((r) => r.tradeId)).toEqual(['held-1500', 'missed']);
    expect(h.tradeGaps()).toEqual([]);
    expect(h.counts.get('backfills venue_b missed complete')).toBe(1);
    expect(h.counts.get('backfilled venue_b')).toBe(1);
  });

  it('a REST trade the tables cannot hold is counted malformed and a trades gap at its moment; the rest of the read stands', async () => {
    let calls = 0;
    const history: TradeBackfill = {
      fetch: () => {
        calls++;
        return Promise.resolve({
          trades: [trade(2000, 'a'), { ...trade(2500, 'bad'), size: '1e999999' }, trade(2800, 'b')],
        });
      },
    };
    const h = setup(history);
    h.miss(1500, 3000);
    await h.until(() => h.backfiller.pending === 0);
    expect(calls).toBe(1);
    expect(h.sink.of('trade').map((r) => r.tradeId)).toEqual(['held-1500', 'a', 'b']);
    expect(h.tradeGaps()).toEqual([[2500, 2500, 'backfill_incomplete']]);
    expect(h.counts.get('malformed venue_b')).toBe(1);
    expect(h.counts.get('backfills venue_b missed failed')).toBeUndefined();
    // The window's outcome says so (its gap is backfill_incomplete), not `complete`.
    expect(h.counts.get('backfills venue_b missed incomplete')).toBe(1);
    expect(h.counts.get('backfills venue_b missed complete')).toBeUndefined();
  });

  it('waits the delay before reading, and reads nothing while paused', async () => {
    let calls = 0;
    const h = setup(
      {
        fetch: () => {
          calls++;
          return Promise.resolve({ trades: [] });
        },
      },
      { delayMs: 60_000 },
    );
    h.miss(1500, 3000);
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toBe(0);
    h.backfiller.pause(true);
    h.clock.now += 60_000;
    await new Promise((r) => setTimeout(r, 250));
    expect(calls).toBe(0);
    h.backfiller.pause(false);
    await h.until(() => calls === 1);
  });

  it('records the whole window as a gap when the venue has no trade history', () => {
    const h = setup({ cannot: 'no history' });
    h.miss(1500, 3000);
    expect(h.tradeGaps()).toEqual([[1500, 3000, 'no_backfill']]);
    expect(h.counts.get('backfills venue_b missed none')).toBe(1);
  });

  it('gives up after its attempts: the window is a gap backfill_failed', async () => {
    let calls = 0;
    const h = setup({
      fetch: () => {
        calls++;
        return Promise.reject(new Error('503'));
      },
    });
    h.miss(1500, 3000);
    await h.until(() => h.backfiller.pending === 0);
    expect(calls).toBe(BACKFILL_ATTEMPTS);
    // The whole window: trades before the stop were not checked either.
    expect(h.tradeGaps()).toEqual([[1000, 3000, 'backfill_failed']]);
    expect(h.counts.get('backfills venue_b missed failed')).toBe(1);
  });

  it('reads only what the venue keeps: an older part of the window is a gap backfill_incomplete', async () => {
    const asked: TradeWindow[] = [];
    const h = setup({
      reachMs: 998_800,
      fetch: (_rest, _t, w) => {
        asked.push(w);
        return Promise.resolve({ trades: [trade(2500, 'kept')], missing: { from: 2600, to: 2800 } });
      },
    });
    h.miss(1500, 3000);
    await h.until(() => h.backfiller.pending === 0);
    // now − reach = 1200: from there the window is read by time (the trade held at 1000 is older than the venue
    // keeps), and [1000, 1200] is a gap.
    expect(asked).toEqual([{ from: 1200, to: 3000 }]);
    expect(h.sink.of('trade').map((r) => r.tradeId)).toEqual(['held-1500', 'kept']);
    expect(h.tradeGaps()).toEqual([
      [1000, 1200, 'backfill_incomplete'],
      [2600, 2800, 'backfill_incomplete'],
    ]);
    expect(h.counts.get('backfills venue_b missed incomplete')).toBe(1);
    // Reach beyond the window: all of it is a gap, and nothing is asked.
    let calls = 0;
    const gone = setup({
      reachMs: 990_000,
      fetch: () => {
        calls++;
        return Promise.resolve({ trades: [] });
      },
    });
    gone.miss(1500, 3000);
    await gone.until(() => gone.backfiller.pending === 0);
    expect(gone.tradeGaps()).toEqual([[1000, 3000, 'backfill_incomplete']]);
    expect(calls).toBe(0);
  });

  it('at stop turns the window being read and those waiting into gaps backfill_failed', async () => {
    const h = setup({
      fetch: (_rest, _t, _w, o) =>
        new Promise((_resolve, reject) => o.signal?.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    h.miss(1500, 3000);
    h.miss(3500, 5000);
    await new Promise((r) => setTimeout(r, 20));
    await h.backfiller.stop();
    expect(h.tradeGaps()).toEqual([
      [1000, 3000, 'backfill_failed'],
      [3000, 5000, 'backfill_failed'],
    ]);
    expect(h.rec.tradeWindows).toEqual([]);
  });

  it('leaves an audit the stop cut short undone, without a gap', async () => {
    const h = setup({ fetch: () => Promise.resolve({ trades: [] }) }, { auditMs: 1000, delayMs: 60_000 });
    h.rec.venueSnapshot([['0.5', '1']], [], { ts: 1000 });
    h.clock.now += 1000;
    h.rec.sweep(h.clock.now);
    expect(h.rec.tradeWindows.map((w) => w.kind)).toEqual(['audit']);
    await h.backfiller.stop();
    expect(h.tradeGaps()).toEqual([]);
    expect(h.rec.tradeWindows).toEqual([]);
    expect(h.counts.get('backfills venue_b audit abandoned')).toBe(1);
  });

  it('writes nothing but a gap for a window no longer ours (its ticker came back under another recorder), before or during the read', async () => {
    for (const during of [false, true]) {
      const ours = { current: during };
      let calls = 0;
      const h = setup(
        {
          fetch: () => {
            calls++;
            ours.current = false; // the ticker comes back while the window is read
            return Promise.resolve({ trades: [trade(2000, 'x')] });
          },
        },
        ours,
      );
      h.miss(1500, 3000);
      await h.until(() => h.backfiller.pending === 0);
      expect(calls).toBe(during ? 1 : 0);
      expect(h.sink.of('trade').map((r) => r.tradeId)).not.toContain('x');
      expect(h.tradeGaps()).toEqual([[1000, 3000, 'backfill_failed']]);
    }
  });
});
