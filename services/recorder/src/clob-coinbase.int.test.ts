/**
 * Polymarket's CLOB (`venue_a_clob`) and Coinbase Exchange (`venue_d`) recorded end to end: the simulator's market
 * channel (with the venue's hashes) and Coinbase feed → the recorder → the real ClickHouse, checked against the
 * simulator's books (rule 7 at random moments), its emitted changes and its trade oracle; a corrupted CLOB hash is a
 * `divergence` gap, a lost Coinbase match is read back from REST, a stalled Coinbase feed is a `stall` gap.
 */
import { waitFor } from '@depthgate/test-utils';
import {
  FAST_ENV,
  createRecorderHarness,
  sleep,
  startHistoryProcess,
  type HistoryApi,
  type RecorderHarness,
} from './testing/harness';
import {
  expectEveryChangeOnce,
  expectEveryTradeOnce,
  expectReconcileWithinBudget,
  expectRule7,
  expectVerifiedBooks,
  gapsOf,
  tradesAuditedPast,
} from './testing/checks';

jest.setTimeout(120_000);

describe('recorder: Polymarket CLOB and Coinbase against the simulator', () => {
  let h: RecorderHarness | undefined;
  let api: HistoryApi | undefined;
  afterEach(async () => {
    await api?.close();
    await h?.close();
    h = undefined;
    api = undefined;
  });

  it('rebuilds their books by rule 7, stores every trade once, and makes a corrupted CLOB hash a divergence gap', async () => {
    h = await createRecorderHarness({ sim: { updatesPerSecond: 150, recordRequests: true } });
    const sim = h.sim;
    const clob = sim.books.tickers('venue_a_clob');
    const coinbase = sim.books.tickers('venue_d');
    expect(clob.length).toBeGreaterThan(0);
    expect(coinbase.length).toBeGreaterThan(0);
    const recorder = await h.startInProcess({
      RECORDER_EXCHANGES: 'venue_a_clob,venue_d',
      RECORDER_VENUE_A_CLOB_TICKERS: clob.join(','),
      RECORDER_VENUE_D_TICKERS: coinbase.join(','),
    });
    await h.waitLive();
    await sleep(1500);
    const settled = Date.now();

    // One wrong hash on a CLOB asset: the recorder cannot tell it from a wrong book, so it is a divergence.
    const c0 = clob[0] as string;
    sim.feedFaults.inject({ platform: 'venue-a-clob', kind: 'corrupt_checksum', ticker: c0, count: 1 });
    await waitFor(async () => gapsOf(await h!.rows('venue_a_clob', c0)).some((g) => g.reason === 'divergence'), {
      timeoutMs: 15_000,
      what: 'the CLOB divergence gap',
    });

    // A lost Coinbase message (a book change or a match): the reconciliation or the trade ids show it.
    const d0 = coinbase[0] as string;
    sim.feedFaults.dropNext('venue-d', { ticker: d0, count: 2 });
    await sleep(1500);
    // Coinbase's feed open but silent beyond its heartbeat rhythm (1 s, the simulator's 200 ms here; the threshold
    // 1.5 s, its descriptor's + 500 ms, as FAST_ENV's): the connection is replaced, a `stall` gap. The books stand
    // still meanwhile, so that the REST reconciliation does not find the stalled books first.
    sim.books.pause();
    sim.feedFaults.stall('venue-d', 2500);
    await waitFor(async () => gapsOf(await h!.rows('venue_d')).some((g) => g.reason === 'stall'), {
      timeoutMs: 15_000,
      what: 'the Coinbase stall gap',
    });
    sim.books.resume();
    sim.feedFaults.disconnect('venue-a-clob');
    sim.feedFaults.disconnect('venue-d');
    await sleep(1000);
    await h.waitLive();
    await sleep(2000);
    // The books stand still: everything emitted is in before the end, and the trades are read back past it.
    sim.books.pause();
    await sleep(500);
    const end = Date.now();
    await tradesAuditedPast(recorder, end);
    // A quiet CLOB market is not a stalled feed: the recorder's keep-alive `PING` (every RECORDER_PING_INTERVAL_MS)
    // is answered `PONG`, so twice the stall timeout without a book change replaces no connection.
    await sleep(2 * Number(FAST_ENV.RECORDER_STALL_TIMEOUT_MS));
    await h.stopInProcess();
    expect(gapsOf(await h.rows('venue_a_clob')).filter((g) => g.reason === 'stall')).toEqual([]);
    // Both are reconciled against their REST books by default, within a tenth of the venue's documented limit (the
    // CLOB's hash confirmations and settings reads of `/book` are not the schedule's: another User-Agent).
    for (const exchange of ['venue_a_clob', 'venue_d'] as const) {
      expect(expectReconcileWithinBudget(h, exchange, 0.1)).toBeGreaterThan(3);
    }

    for (const exchange of ['venue_a_clob', 'venue_d'] as const) {
      expect([exchange, (await expectRule7(h, exchange, end, 24)) > 0]).toEqual([exchange, true]);
      const changes = await expectEveryChangeOnce(h, exchange, end);
      expect(changes.recorded).toBeGreaterThan(0);
    }
    // The CLOB's trades come on the channel only (a window it missed is a trades gap); Coinbase's are read back.
    const clobTrades = await expectEveryTradeOnce(h, 'venue_a_clob', end, { gaps: true });
    expect(clobTrades.stored).toBeGreaterThan(0);
    const coinbaseTrades = await expectEveryTradeOnce(h, 'venue_d', end, { gaps: false });
    expect(coinbaseTrades.stored).toBeGreaterThan(0);
    const sides = (await h.rows('venue_d')).filter((r) => r.kind === 'trade');
    // The stored side is the taker's: Coinbase's own (the maker's) is the other one.
    for (const t of sides) expect(t.tradeSide).toBe(t.venueSide === 'buy' ? 'sell' : 'buy');
    // A trade from the feed keeps its match's `sequence`, the product's feed sequence: increasing with the trade id.
    // Read back from REST it has none. The book rows of both feeds carry none (level2 and the CLOB number nothing).
    const fromFeed = sides.filter((t) => t.venueSeq !== '');
    expect(fromFeed.length).toBeGreaterThan(coinbaseTrades.stored / 2);
    for (const ticker of coinbase) {
      const mine = fromFeed.filter((t) => t.ticker === ticker).sort((a, b) => Number(a.tradeId) - Number(b.tradeId));
      for (let i = 1; i < mine.length; i++) {
        expect(BigInt(mine[i]?.venueSeq as string)).toBeGreaterThan(BigInt(mine[i - 1]?.venueSeq as string));
      }
    }
    for (const exchange of ['venue_a_clob', 'venue_d'] as const) {
      const book = (await h.rows(exchange)).filter((r) => r.kind === 'delta' || r.kind === 'snapshot');
      expect([exchange, new Set(book.map((r) => r.venueSeq))]).toEqual([exchange, new Set([''])]);
    }
    // Verification points: the CLOB's venue books and hashes, Coinbase's snapshots and REST books; /book names them.
    api = await startHistoryProcess(h);
    const moments = [settled, end];
    expect(
      await expectVerifiedBooks(h, api, 'venue_a_clob', moments, ['checksum', 'snapshot'], ['rest_book']),
    ).toBeGreaterThan(0);
    expect(await expectVerifiedBooks(h, api, 'venue_d', moments, ['rest_book', 'snapshot'])).toBeGreaterThan(0);
  });
});
