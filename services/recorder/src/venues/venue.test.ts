import { CanonicalMemo } from '@depthgate/feeds';
import { createLogger, Registry } from '@depthgate/service-kit';
import { RecorderMetrics } from '../metrics';
import { ListSink } from '../testing/support';
import type { TickerResume } from '../ticker';
import { Venue, type VenueOptions } from './venue';

describe('Venue: a ticker that leaves the recording', () => {
  it('writes the gap it owes and closes its missed trades window there, whether the listing dropped it or the venue refused it', async () => {
    const sink = new ListSink();
    const selection = { tickers: ['A', 'B'], prefixes: [] as string[], series: [] as string[] };
    // Both stored up to 5000 (book verified at 4000): resumed with a `recorder_start` gap pending and their trades
    // missed since, until a book comes — which never does here (the feed cannot connect).
    const stored = new Map<string, TickerResume>([
      ['A', { lastTs: 5000, bookTs: 4000, sequence: 5_000_000 }],
      ['B', { lastTs: 5000, bookTs: 4000, sequence: 5_000_000 }],
    ]);
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
      store: { storedTickers: async () => stored },
      sink,
      metrics: new RecorderMetrics(new Registry()),
      logger: createLogger({ name: 't', level: 'silent' }),
      now: () => 60_000,
      price: new CanonicalMemo(),
      selection,
      maxTickers: 100,
      discoveryIntervalMs: 0,
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
      trades: { cannot: 'no trade history' },
      backfillMaxPages: 1,
      backfillDelayMs: 0,
      tradeAuditIntervalMs: 0,
    } as unknown as VenueOptions);
    try {
      await venue.start();
      for (let i = 0; i < 100 && venue.recorders.size < 2; i++) await new Promise((r) => setImmediate(r));
      expect([...venue.recorders.keys()]).toEqual(['A', 'B']);
      expect(sink.of('gap')).toEqual([]);

      // A leaves the listing; the venue refuses B.
      selection.tickers = ['B'];
      await venue.discover();
      (venue as unknown as { refuse(t: string, message: string): void }).refuse('B', 'unknown market');
      expect(venue.recorders.size).toBe(0);
      const gaps = sink.of('gap').map((g) => g.kind === 'gap' && [g.ticker, g.stream, g.fromTs, g.toTs, g.reason]);
      expect(gaps).toEqual([
        ['A', 'book', 4000, 60_000, 'recorder_start'],
        ['A', 'trades', 5001, 60_000, 'no_backfill'],
        ['B', 'book', 4000, 60_000, 'recorder_start'],
        ['B', 'trades', 5001, 60_000, 'no_backfill'],
      ]);
    } finally {
      await venue.stop();
    }
  });
});
