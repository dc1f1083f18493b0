import { MAX_SLEEP_MS, mergeByClock, paced, type MergedMessage } from './clock';
import { replay } from './replay';
import type { NativeMessage } from './types';
import { kalshiEncoder } from './venue-b';
import { coinbaseEncoder } from './venue-d';
import { randomWindow } from '../testing/history';

const msg = (ts: number, received_ts: number, text: string): NativeMessage => ({ ts, received_ts, text });

describe('mergeByClock', () => {
  it('orders several replays by venue time, ties to the replay listed first, each keeping its own order', () => {
    const a = [msg(1, 1, 'a1'), msg(5, 5, 'a5'), msg(5, 5, 'a5b'), msg(9, 9, 'a9')];
    const b = [msg(0, 0, 'b0'), msg(5, 5, 'b5'), msg(7, 7, 'b7')];
    const out = [...mergeByClock([a.values(), b.values()])].map((m) => m.message.text);
    expect(out).toEqual(['b0', 'a1', 'a5', 'a5b', 'b5', 'b7', 'a9']);
  });

  it('on the receive clock, a replay never goes back: a message is not held behind a later one of its own replay', () => {
    // A trade stamped with venue time may have been received after the next row.
    const a = [msg(1, 10, 'a-late'), msg(2, 3, 'a-next')];
    const b = [msg(0, 5, 'b')];
    const out = [...mergeByClock([a.values(), b.values()], 'received_ts')];
    expect(out.map((m) => [m.message.text, m.at])).toEqual([
      ['b', 5],
      ['a-late', 10],
      ['a-next', 10],
    ]);
  });

  it('reads texts in the merged order, so Kalshi markets of one sid keep seq contiguous (and the other venue untouched)', () => {
    const grid = {
      bid: { lo: 1, hi: 49, places: 2 },
      ask: { lo: 51, hi: 99, places: 2 },
      size: { lo: 1, hi: 500, places: 2 },
    };
    const sub = { sid: 3, seq: 0 };
    const kalshi = ['X', 'Y'].map((ticker) =>
      replay(
        randomWindow(`merge|${ticker}`, grid, { events: 40, gapRate: 0.05 }),
        kalshiEncoder({ ticker, book: sub, tradeSid: 4 }),
      ),
    );
    const coinbase = replay(
      randomWindow('merge|cb', grid, { events: 40, gapRate: 0 }),
      coinbaseEncoder({ product: 'P' }),
    );
    const merged = [...mergeByClock([...kalshi, coinbase])];
    const seqs = merged
      .map((m) => JSON.parse(m.message.text) as { sid?: number; seq?: number })
      .filter((m) => m.sid === 3)
      .map((m) => m.seq);
    expect(seqs.length).toBeGreaterThan(40);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    for (let i = 1; i < merged.length; i++)
      expect((merged[i] as MergedMessage).at).toBeGreaterThanOrEqual((merged[i - 1] as MergedMessage).at);
  });
});

describe('paced', () => {
  /** A wall clock that moves only when the pacer sleeps (or the consumer takes time). */
  const fakeClock = () => {
    const c = { now: 1_000_000, sleeps: [] as number[] };
    return {
      c,
      now: () => c.now,
      sleep: (ms: number) => {
        c.sleeps.push(ms);
        c.now += ms;
        return Promise.resolve();
      },
    };
  };
  const merged = (ats: number[]): MergedMessage[] =>
    ats.map((at) => ({ source: 0, at, message: msg(at, at, String(at)) }));
  const drain = async (it: AsyncIterable<MergedMessage>, each?: () => void) => {
    const out: number[] = [];
    for await (const m of it) {
      out.push(m.at);
      each?.();
    }
    return out;
  };

  it('speed 1 releases each message at its recorded offset from `from`', async () => {
    const f = fakeClock();
    const out = await drain(paced(merged([100, 100, 150, 400]), { speed: 1, from: 100, now: f.now, sleep: f.sleep }));
    expect(out).toEqual([100, 100, 150, 400]);
    expect(f.c.sleeps).toEqual([50, 250]);
  });

  it('speed 10 divides the waits; the window start need not be a message', async () => {
    const f = fakeClock();
    await drain(paced(merged([120, 220, 1220]), { speed: 10, from: 100, now: f.now, sleep: f.sleep }));
    expect(f.c.sleeps).toEqual([2, 10, 100]);
  });

  it('a slow consumer catches up: a message already due is not waited for', async () => {
    const f = fakeClock();
    // The consumer spends 80 ms per message; messages are 50 ms apart.
    await drain(paced(merged([0, 50, 100, 150, 400]), { speed: 1, from: 0, now: f.now, sleep: f.sleep }), () => {
      f.c.now += 80;
    });
    expect(f.c.sleeps).toEqual([80]);
  });

  /** A sleep as Node's setTimeout keeps it: a delay over 2^31 − 1 ms fires after 1 ms. */
  const timerClock = () => {
    const f = fakeClock();
    return {
      ...f,
      sleep: (ms: number) => f.sleep(ms > 2 ** 31 - 1 ? 1 : ms),
    };
  };

  it('a wait longer than a timer holds is slept in pieces until the message is due (speed 0.001, 36 minutes in)', async () => {
    const f = timerClock();
    const start = f.c.now;
    const released: number[] = [];
    await drain(paced(merged([0, 36 * 60_000]), { speed: 0.001, from: 0, now: f.now, sleep: f.sleep }), () => {
      released.push(f.c.now - start);
    });
    // Due 36 min / 0.001 = 2,160,000,000 ms after the start: not one millisecond before.
    expect(released).toEqual([0, 2_160_000_000]);
    expect(f.c.sleeps).toEqual([MAX_SLEEP_MS, 2_160_000_000 - MAX_SLEEP_MS]);
  });

  it('speed 1 with `from` 25 days before the first row: released 25 days in', async () => {
    const f = timerClock();
    const start = f.c.now;
    const day = 86_400_000;
    let at = -1;
    await drain(paced(merged([25 * day]), { speed: 1, from: 0, now: f.now, sleep: f.sleep }), () => {
      at = f.c.now - start;
    });
    expect(at).toBe(25 * day);
  });

  it('an aborted signal ends a long wait and the stream: nothing more is released', async () => {
    const f = timerClock();
    const halt = new AbortController();
    const sleep = (ms: number) => {
      // Someone leaves during the first piece of the wait.
      halt.abort();
      return f.sleep(ms);
    };
    const out = await drain(
      paced(merged([0, 36 * 60_000, 40 * 60_000]), { speed: 0.001, from: 0, now: f.now, sleep, signal: halt.signal }),
    );
    expect(out).toEqual([0]);
    expect(f.c.sleeps).toEqual([MAX_SLEEP_MS]);
  });

  it('a message no longer wanted is dropped without its wait, also when that changes during the wait', async () => {
    const f = fakeClock();
    const unwanted = new Set<number>([3000]);
    let woken = false;
    const sleep = (ms: number) => {
      if (woken) return f.sleep(ms);
      // The client unsubscribes what the message at 36 min belongs to during the first second of its wait (the sleep
      // ends early, as a session's does when woken).
      woken = true;
      unwanted.add(36 * 60_000);
      return f.sleep(1000);
    };
    const out = await drain(
      paced(merged([0, 3000, 36 * 60_000, 36 * 60_000 + 10]), {
        speed: 0.001,
        from: 0,
        now: f.now,
        sleep,
        wanted: (m) => !unwanted.has(m.at),
      }),
    );
    expect(out).toEqual([0, 36 * 60_000 + 10]);
    // Nothing waited for 3000 (unwanted from the start); a second of the wait for 36 min, then the last one's wait.
    const last = (36 * 60_000 + 10) / 0.001 - 1000;
    expect(f.c.sleeps).toEqual([1000, MAX_SLEEP_MS, last - MAX_SLEEP_MS]);
  });

  it('max never sleeps; a speed that is not a positive number is refused', async () => {
    const f = fakeClock();
    expect(await drain(paced(merged([0, 5000]), { speed: 'max', from: 0, now: f.now, sleep: f.sleep }))).toEqual([
      0, 5000,
    ]);
    expect(f.c.sleeps).toEqual([]);
    for (const speed of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(drain(paced(merged([0]), { speed, from: 0, now: f.now, sleep: f.sleep }))).rejects.toThrow(
        RangeError,
      );
  });
});
