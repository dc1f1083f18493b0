import { CanonicalMemo } from '@depthgate/feeds';
import { createLogger, Registry } from '@depthgate/service-kit';
import { RecorderMetrics } from '../metrics';
import { ListSink } from '../testing/support';
import type { TickerResume } from '../ticker';
import type { TradeHistory } from './trades';
import { Venue, type VenueOptions } from './venue';

/** A venue recording the configured `selection.tickers`, whose feed cannot connect, resumed from `stored`. */
function venueOf(
  selection: { tickers: string[]; prefixes: string[]; series: string[] },
  stored: Map<string, TickerResume>,
  trades: TradeHistory,
  discoveryIntervalMs = 0,
) {
  const sink = new ListSink();
  const clock = { now: 60_000 };
  /** The tickers the venue reported done (VenueOptions.left). */
  const left: string[] = [];
  /** The tickers whose stored ends were read. */
  const read: string[] = [];
  const venue = new Venue({
    protocol: {
      exchange: 'venue_a_us',
      normalizeTicker: (t: string) => t,
      feedUrl: 'ws://127.0.0.1:9',
      handshakeHeaders: () => ({}),
      venueClock: true,
      provesContinuity: false,
    },
    rest: { background: () => ({}) },
    store: {
      storedTickers: async (_exchange: string, tickers: string[]) => {
        read.push(...tickers);
        return stored;
      },
    },
    sink,
    metrics: new RecorderMetrics(new Registry()),
    logger: createLogger({ name: 't', level: 'silent' }),
    now: () => clock.now,
    price: new CanonicalMemo(),
    selection,
    maxTickers: 100,
    discoveryIntervalMs,
    tickersPerConnection: 100,
    snapshotIntervalMs: 300_000,
    quietMs: 1000,
    stallTimeoutMs: 60_000,
    pingIntervalMs: 0,
    reconnectMinMs: 60_000,
    reconnectMaxMs: 60_000,
    reconcileIntervalMs: 0,
    reconcileGraceMs: 0,
    reconcileReadsPerSecond: 0,
    trades,
    backfillMaxPages: 1,
    backfillDelayMs: 1000,
    tradeAuditIntervalMs: 0,
    left: (_exchange: string, ticker: string) => left.push(ticker),
  } as unknown as VenueOptions);
  return { venue, sink, clock, left, read };
}

/**
 * A venue recording A and B, both stored up to 5000 (book verified at 4000): resumed with a `recorder_start` gap
 * pending and their trades missed since, until a book comes — which never does here (the feed cannot connect).
 */
async function twoTickers(trades: TradeHistory) {
  const selection = { tickers: ['A', 'B'], prefixes: [] as string[], series: [] as string[] };
  const stored = new Map<string, TickerResume>([
    ['A', { lastTs: 5000, bookTs: 4000, sequence: 5_000_000 }],
    ['B', { lastTs: 5000, bookTs: 4000, sequence: 5_000_000 }],
  ]);
  const { venue, sink, clock, left, read } = venueOf(selection, stored, trades);
  await venue.start();
  for (let i = 0; i < 100 && venue.recorders.size < 2; i++) await new Promise((r) => setImmediate(r));
  expect([...venue.recorders.keys()]).toEqual(['A', 'B']);
  expect(sink.of('gap')).toEqual([]);
  /** A leaves the listing; the venue refuses B (at 60 000). */
  const leave = async () => {
    selection.tickers = ['B'];
    await venue.discover();
    (venue as unknown as { refuse(t: string, message: string): void }).refuse('B', 'unknown market');
    expect(venue.recorders.size).toBe(0);
  };
  const gaps = () => sink.of('gap').map((g) => g.kind === 'gap' && [g.ticker, g.stream, g.fromTs, g.toTs, g.reason]);
  return { venue, sink, clock, selection, leave, gaps, left, read };
}

describe('Venue: a ticker that leaves the recording', () => {
  it('writes the gap it owes and closes its missed trades window there, whether the listing dropped it or the venue refused it', async () => {
    const { venue, leave, gaps, left } = await twoTickers({ cannot: 'no trade history' });
    try {
      await leave();
      // Nothing more to write for them: the controller may forget them.
      expect(left).toEqual(['A', 'B']);
      expect(gaps()).toEqual([
        ['A', 'book', 4000, 60_000, 'recorder_start'],
        ['A', 'trades', 5001, 60_000, 'no_backfill'],
        ['B', 'book', 4000, 60_000, 'recorder_start'],
        ['B', 'trades', 5001, 60_000, 'no_backfill'],
      ]);
    } finally {
      await venue.stop();
    }
  });

  it('still has its missed trades read back where the venue gives them, and resumes after them if it comes back', async () => {
    const windows: string[] = [];
    const { venue, sink, clock, selection, leave, gaps, left } = await twoTickers({
      fetch: async (_rest, ticker, window) => {
        windows.push(`${ticker} ${window.from}..${window.to}`);
        return {
          trades: [{ ts: 30_000, id: `${ticker}-1`, price: '0.5', size: '2', side: 'buy', venueSide: 'buy' }],
        };
      },
    });
    try {
      await leave();
      // Their trades are still to be read back: not done yet.
      expect(left).toEqual([]);
      clock.now += 1000; // the backfill delay passes
      for (let i = 0; i < 200 && left.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
      expect(left.sort()).toEqual(['A', 'B']);
      expect(windows.sort()).toEqual(['A 5001..60000', 'B 5001..60000']);
      const trades = sink.of('trade').map((t) => t.kind === 'trade' && [t.ticker, t.ts, t.tradeId, t.sequence]);
      expect(trades.sort()).toEqual([
        ['A', 30_000, 'A-1', 30_000_000],
        ['B', 30_000, 'B-1', 30_000_000],
      ]);
      expect(gaps()).toEqual([
        ['A', 'book', 4000, 60_000, 'recorder_start'],
        ['B', 'book', 4000, 60_000, 'recorder_start'],
      ]);
      // A is listed again: its new recorder resumes after the trade read back for the one that left.
      selection.tickers = ['A'];
      await venue.discover();
      for (let i = 0; i < 100 && !venue.recorders.has('A'); i++) await new Promise((r) => setImmediate(r));
      expect(venue.recorders.get('A')?.resumePoint().sequence).toBe(30_000_000);
    } finally {
      await venue.stop();
    }
  });

  it('comes back while its trades are still read back: resumes where the one that left is, its stored end not read', async () => {
    let answer: (() => void) | undefined;
    const { venue, clock, selection, leave, left, read } = await twoTickers({
      fetch: async (_rest, ticker) => {
        if (ticker === 'A') await new Promise<void>((resolve) => (answer = resolve));
        return { trades: [] };
      },
    });
    try {
      await leave();
      clock.now += 1000; // the backfill delay passes: A's window is being read
      for (let i = 0; i < 200 && answer === undefined; i++) await new Promise((r) => setTimeout(r, 5));
      expect(answer).toBeDefined();
      const leaving = (venue as unknown as { leaving: Map<string, { resumePoint(): TickerResume }> }).leaving.get('A');
      expect(read).toEqual(['A', 'B']);
      selection.tickers = ['A'];
      await venue.discover();
      for (let i = 0; i < 100 && !venue.recorders.has('A'); i++) await new Promise((r) => setImmediate(r));
      expect(venue.recorders.get('A')?.resumePoint()).toEqual(leaving?.resumePoint());
      expect(venue.recorders.get('A')?.pendingGap?.reason).toBe('resubscribe');
      expect(read).toEqual(['A', 'B']); // where A ends is known: ClickHouse is not asked
      answer?.();
      // The window read for the one that left is not its to write any more; A is recorded, so not reported done.
      for (let i = 0; i < 200 && !left.includes('B'); i++) await new Promise((r) => setTimeout(r, 5));
      expect(left).toEqual(['B']);
    } finally {
      answer?.();
      await venue.stop();
    }
  });
});

describe('Venue: a market the venue lists but refuses', () => {
  it('is asked for again at later and later discoveries (doubling up to an hour), not at every one', async () => {
    const interval = 300_000;
    const selection = { tickers: ['B'], prefixes: [] as string[], series: [] as string[] };
    const stored = new Map<string, TickerResume>([['B', { lastTs: 5000, bookTs: 4000, sequence: 5_000_000 }]]);
    const { venue, sink, clock } = venueOf(selection, stored, { cannot: 'no trade history' }, interval);
    const refuse = (venue as unknown as { refuse(t: string, message: string): void }).refuse.bind(venue);
    /** `n` discoveries `interval` apart (the first at once when `first`); the venue refuses B whenever asked for. */
    const discoveries = async (n: number, first = false) => {
      const admitted: number[] = [];
      for (let k = 0; k < n; k++) {
        if (k > 0 || !first) {
          clock.now += interval;
          await venue.discover();
        }
        for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
        if (venue.recorders.has('B')) {
          admitted.push(k);
          refuse('B', 'unknown market');
        }
      }
      return admitted;
    };
    try {
      await venue.start();
      // Four hours of discoveries every 5 minutes (the first at the start).
      const admittedAt = await discoveries(48, true);
      expect(admittedAt).toEqual([0, 1, 3, 7, 15, 27, 39]);
      const bookGaps = sink.of('gap').filter((g) => g.kind === 'gap' && g.stream === 'book');
      expect(bookGaps).toHaveLength(admittedAt.length);
      // Not listed any more, then listed again: it starts afresh (asked for at the next discovery after a refusal).
      selection.tickers = [];
      clock.now += interval;
      await venue.discover();
      selection.tickers = ['B'];
      const again = await discoveries(4);
      expect(again).toEqual([0, 1, 3]);
    } finally {
      await venue.stop();
    }
  });
});

describe('Venue: markets listed and delisted', () => {
  it('remembers where a ticker left for a day (back within it: a resubscribe gap), not every market it ever delisted', async () => {
    const hour = 3600_000;
    const selection = { tickers: [] as string[], prefixes: [] as string[], series: [] as string[] };
    const market = (n: number) => Array.from({ length: 5 }, (_, i) => `M${n}-${i}`);
    // Every market stored up to 5000 (book verified at 4000).
    const stored = new Map<string, TickerResume>(
      Array.from({ length: 200 }, (_, n) => market(n))
        .flat()
        .map((t) => [t, { lastTs: 5000, bookTs: 4000, sequence: 5_000_000 }]),
    );
    const { venue, clock } = venueOf(selection, stored, { cannot: 'no trade history' });
    const retired = (venue as unknown as { retired: Map<string, unknown> }).retired;
    /** A listing read an hour after the last one, that wants `tickers` (the ones before it are delisted). */
    const read = async (tickers: string[]) => {
      clock.now += hour;
      selection.tickers = tickers;
      await venue.discover();
      for (let i = 0; i < 100 && !tickers.every((t) => venue.recorders.has(t)); i++) {
        await new Promise((r) => setImmediate(r));
      }
      expect([...venue.recorders.keys()].sort()).toEqual([...tickers].sort());
    };
    try {
      await venue.start();
      // A thousand markets over 200 hourly reads, five listed at a time.
      for (let n = 0; n < 200; n++) await read(market(n));
      // Remembered: the markets delisted within the last 24 hours (reads 175 to 198 dropped 174 to 197, read 199
      // dropped 198), not the thousand.
      expect(retired.size).toBe(5 * 25);
      // One that left three hours ago comes back: it continues where it left, after a gap `resubscribe`.
      await read([...market(199), 'M196-0']);
      const back = venue.recorders.get('M196-0');
      expect(back?.pendingGap?.reason).toBe('resubscribe');
      expect(back?.resumePoint().lastTs).toBe(60_000 + 198 * hour); // when read 197 dropped it
    } finally {
      await venue.stop();
    }
  });
});
