/**
 * The recorder end to end: the venue simulator's three feeds → the recorder → the real ClickHouse, checked against
 * the simulator's own books (rule 7 of the spec), its list of emitted events and its list of trades (the control
 * API's oracle); and which tickers it records. Its durability (ClickHouse away, SIGTERM, restarts):
 * durability.int.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExchangeKey } from '@depthgate/platforms';
import { waitFor } from '@depthgate/test-utils';
import type { RecorderMetrics } from './metrics';
import {
  createRecorderHarness,
  sleep,
  startHistoryProcess,
  type HistoryApi,
  type RecorderHarness,
} from './testing/harness';
import type { Row } from './testing/support';
import { RECONCILE_OUTCOMES } from './ticker';
import {
  ALL,
  VENUE_CLOCK,
  expectEveryChangeOnce,
  expectEveryTradeOnce,
  expectGeminiAt,
  expectKalshiSequences,
  expectNoDuplicates,
  expectReconcileWithinBudget,
  expectRule7,
  expectTradesProducedOnce,
  expectVerifiedBooks,
  gapsOf,
  geminiRows,
  quietMoment,
  type KnownLoss,
  tradesAuditedPast,
} from './testing/checks';

jest.setTimeout(120_000);

/** Trades read back from REST for an exchange (the in-process recorder's counter). */
async function backfilled(h: RecorderHarness, exchange: ExchangeKey): Promise<number> {
  const metric = await (h.metrics as RecorderMetrics).tradesBackfilled.get();
  return metric.values.filter((v) => v.labels.exchange === exchange).reduce((n, v) => n + v.value, 0);
}

describe('recorder against the simulator and ClickHouse', () => {
  let h: RecorderHarness | undefined;
  let api: HistoryApi | undefined;
  afterEach(async () => {
    await api?.close();
    await h?.close();
    h = undefined;
    api = undefined;
  });

  it('rebuilds every book by rule 7 and stores every trade once, through drops, disconnects and stalls on every feed', async () => {
    h = await createRecorderHarness({
      sim: { updatesPerSecond: 150, changesPerUpdate: { gemini: 3, 'venue-a-us': 2 }, recordRequests: true },
    });
    const sim = h.sim;
    // Every exchange is reconciled against its REST book; half of each documented limit (the default is a tenth) so
    // that Gemini's six tickers (1.9 requests/s) are each compared within the test's waits.
    const budget = 0.5;
    // The recorder's default grace (3 s): a burst of 12,000 book steps below keeps the feeds behind the REST books for
    // longer than the fast tests' 800 ms.
    const recorder = await h.startInProcess({
      RECORDER_RECONCILE_BUDGET: String(budget),
      RECORDER_RECONCILE_GRACE_MS: '3000',
    });
    await h.waitLive();
    await sleep(1500);
    const q1 = await quietMoment(h);

    // A Gemini message lost while the books stand still: only the reconciliation with the REST book can see it.
    const g0 = sim.books.tickers('venue_c')[0] as string;
    sim.feedFaults.dropNext('gemini', { ticker: g0, count: 1 });
    for (let i = 0; i < 500 && sim.feedFaults.stats('gemini').pendingDrops > 0; i++) sim.books.step(1);
    expect(sim.feedFaults.stats('gemini').pendingDrops).toBe(0);
    await waitFor(async () => gapsOf(await h!.rows('venue_c', g0)).length > 0, {
      timeoutMs: 20_000,
      what: 'the Gemini reconciliation gap',
    });
    sim.books.resume();

    // A Kalshi message lost: its seq gap.
    const k0 = sim.books.tickers('venue_b')[0] as string;
    sim.feedFaults.dropNext('kalshi', { ticker: k0, count: 1 });
    await sleep(1000);
    // Connections cut; then stalled longer than RECORDER_STALL_TIMEOUT_MS.
    sim.feedFaults.disconnect('kalshi');
    sim.feedFaults.disconnect('venue-a-us');
    sim.feedFaults.disconnect('gemini');
    await sleep(1000);
    await h.waitLive();
    sim.feedFaults.stall('kalshi', 2500);
    sim.feedFaults.stall('gemini', 2500);
    sim.feedFaults.stall('venue-a-us', 2500);
    await sleep(3500);
    await h.waitLive();
    await sleep(1000);
    // Runs of lost messages, trades among them: Kalshi's and Gemini's trades carry no sequence, so only the audit of
    // their REST trades finds them. Polymarket US has neither sequence nor trade history: its next whole book heals
    // a lost book change, and the traded quantity its books count shows a lost trade (a trades gap `missed_trades`).
    const lossy = sim.books.tickers('venue_a_us')[1] as string;
    const pmUsBefore = sim.trades('venue_a_us', lossy).length;
    const lossFrom = Date.now();
    sim.feedFaults.dropNext('kalshi', { ticker: sim.books.tickers('venue_b')[1] as string, count: 15 });
    sim.feedFaults.dropNext('gemini', { ticker: sim.books.tickers('venue_c')[1] as string, count: 15 });
    sim.feedFaults.dropNext('venue-a-us', { ticker: lossy, count: 30 });
    const drops = () =>
      sim.feedFaults.stats('kalshi').pendingDrops +
      sim.feedFaults.stats('gemini').pendingDrops +
      sim.feedFaults.stats('venue-a-us').pendingDrops;
    await waitFor(() => drops() === 0, { timeoutMs: 20_000, what: 'the runs of lost messages' });
    const lossDone = Date.now();
    // Trades were made while Polymarket US's messages were lost (some of those lost are trades).
    // (Its ticker trades at about one event in five, so 30 messages span about six trades: `> 5` had no margin, six in
    // each of five local runs, and the count depends on where the run begins. Whether a lost message was a trade is
    // the missed_trades gap's assertion below.)
    expect(sim.trades('venue_a_us', lossy).length - pmUsBefore).toBeGreaterThan(0);
    await h.waitLive();
    // Gemini's feed stalls while its books trade more than the 50 trades its first book after a reconnect carries:
    // the rest only its REST trades give back.
    sim.books.pause();
    const stalledAt = Date.now();
    sim.feedFaults.stall('gemini', 2500);
    await sleep(100);
    sim.books.step(12_000);
    const busiest = Math.max(...sim.books.tickers('venue_c').map((t) => sim.trades('venue_c', t, stalledAt).length));
    expect(busiest).toBeGreaterThan(50);
    await sleep(3000);
    await h.waitLive();
    sim.books.resume();
    await sleep(1000);
    const q2 = await quietMoment(h);
    sim.books.resume();
    await sleep(1000);
    const end = await quietMoment(h);
    await tradesAuditedPast(recorder, end.at);
    await h.stopInProcess();

    // Reconciliation read the REST book of every exchange reconciled by default (not Polymarket US: its whole books
    // verify ours), never faster than its share of the venue's documented limit.
    const reconciled = ALL.filter((e) => e !== 'venue_a_us');
    for (const exchange of reconciled) expect(expectReconcileWithinBudget(h, exchange, budget)).toBeGreaterThan(10);
    const reads = await (h.metrics as RecorderMetrics).reconciliations.get();
    const outcomes = (exchange: ExchangeKey, outcome: string) =>
      reads.values.find((v) => v.labels.exchange === exchange && v.labels.result === outcome)?.value ?? 0;
    for (const exchange of reconciled) expect([exchange, outcomes(exchange, 'match') > 0]).toEqual([exchange, true]);
    expect(RECONCILE_OUTCOMES.map((o) => outcomes('venue_a_us', o))).toEqual(RECONCILE_OUTCOMES.map(() => 0));
    expect(outcomes('venue_c', 'mismatch')).toBeGreaterThan(0);

    // Every trade the simulator made is stored once: Kalshi and Gemini read what their feeds lost back from REST;
    // what Polymarket US's feed missed (it has no trade history) lies inside its trades gaps: the windows its
    // connections were down (`no_backfill`), and the trades its books counted that never arrived (`missed_trades`).
    for (const exchange of ['venue_b', 'venue_c'] as const) {
      const trades = await expectEveryTradeOnce(h, exchange, end.at, { gaps: false });
      expect(trades.stored).toBeGreaterThan(50);
      expect(gapsOf(await h.rows(exchange), 'trades')).toEqual([]);
      expect(await backfilled(h, exchange)).toBeGreaterThan(0);
    }
    const pmUs = await expectEveryTradeOnce(h, 'venue_a_us', end.at, { gaps: true });
    expect(pmUs.stored).toBeGreaterThan(50);
    expect(pmUs.inGaps).toBeGreaterThan(0);
    for (const t of sim.books.tickers('venue_a_us')) {
      expect(new Set(gapsOf(await h.rows('venue_a_us', t), 'trades').map((g) => g.reason))).toEqual(
        new Set(t === lossy ? ['no_backfill', 'missed_trades'] : ['no_backfill']),
      );
    }
    expect(await expectTradesProducedOnce(h, recorder)).toBeGreaterThan(0);

    // Polymarket US's lost book messages left its book behind, without a gap, until the next book (the first change
    // after the run of losses ended heals it): a known limit the book checks leave out.
    const healedAt = sim.books.events('venue_a_us', lossy).find((e) => e.ts > lossDone)?.ts;
    expect(healedAt).toBeDefined();
    const known: KnownLoss[] = [{ ticker: lossy, from: lossFrom, to: healedAt as number }];
    // Rule 7 at random moments and at event times, Kalshi and Polymarket US (venue timestamps).
    for (const [i, exchange] of VENUE_CLOCK.entries()) {
      expect(await expectRule7(h, exchange, end.at, 100 + i, known)).toBeGreaterThan(50);
    }
    // Gemini is stamped on receipt: compare at the quiet moments.
    const gRows = await geminiRows(h);
    for (const q of [q1, q2, end]) expectGeminiAt(gRows, q);

    // Every Kalshi and Polymarket US change is recorded once, or lies inside a recorded gap.
    const kalshi = await expectEveryChangeOnce(h, 'venue_b', end.at);
    expect(kalshi.recorded).toBeGreaterThan(100);
    expect(kalshi.inGaps).toBeGreaterThan(0);
    await expectEveryChangeOnce(h, 'venue_a_us', end.at, known);
    await expectNoDuplicates(h);

    // The gaps say what happened.
    const reasons = async (exchange: ExchangeKey, ticker?: string) =>
      new Set(gapsOf(await h!.rows(exchange, ticker)).map((g) => g.reason));
    expect(await reasons('venue_b', k0)).toEqual(new Set(['sequence_gap', 'disconnect', 'stall']));
    for (const t of sim.books.tickers('venue_b')) expect(await reasons('venue_b', t)).toContain('stall');
    for (const t of sim.books.tickers('venue_a_us')) {
      expect(await reasons('venue_a_us', t)).toEqual(new Set(['disconnect', 'stall']));
    }
    // The Gemini message lost while the books stood still: its REST book differed, a divergence.
    expect(await reasons('venue_c', g0)).toContain('divergence');
    // A stalled Gemini feed is seen either by the stall timeout or, first, by the reconciliation (the REST book moves
    // on while the feed is silent): either way a gap.
    for (const t of sim.books.tickers('venue_c')) {
      const found = await reasons('venue_c', t);
      expect(found).toContain('disconnect');
      expect([...found].some((r) => r === 'stall' || r === 'divergence')).toBe(true);
    }
    // The venues' own ordering: Kalshi's sid:seq on its book rows, every message of each subscription behind a row
    // until the first fault; its trade channel numbers nothing, nor does Polymarket US. Gemini's book rows carry none
    // (market data v2), its trades their `event_id` when they came on the feed ('' when read back from REST).
    expect(await expectKalshiSequences(h, q1.at)).toBeGreaterThan(100);
    const venueSeqs = async (exchange: ExchangeKey, kinds: Row['kind'][]) =>
      new Set((await h!.rows(exchange)).filter((r) => kinds.includes(r.kind)).map((r) => r.venueSeq));
    expect(await venueSeqs('venue_b', ['trade'])).toEqual(new Set(['']));
    expect(await venueSeqs('venue_a_us', ['delta', 'snapshot', 'trade'])).toEqual(new Set(['']));
    expect(await venueSeqs('venue_c', ['delta', 'snapshot'])).toEqual(new Set(['']));
    const geminiTrades = [...(await venueSeqs('venue_c', ['trade']))];
    expect(geminiTrades.every((v) => /^\d*$/.test(v as string))).toBe(true);
    expect(geminiTrades.filter((v) => v !== '').length).toBeGreaterThan(10);
    // Verification points for every recorded exchange — Kalshi and Polymarket US by their venue snapshots and whole
    // books, Gemini also by its REST books — and /book names the ones around a moment.
    api = await startHistoryProcess(h);
    const moments = [q1.at, q2.at];
    expect(await expectVerifiedBooks(h, api, 'venue_b', moments, ['snapshot'], ['rest_book'])).toBeGreaterThan(0);
    expect(await expectVerifiedBooks(h, api, 'venue_a_us', moments, ['snapshot'], ['rest_book'])).toBeGreaterThan(0);
    expect(await expectVerifiedBooks(h, api, 'venue_c', moments, ['rest_book', 'snapshot'])).toBeGreaterThan(0);

    // The lost Kalshi change lies inside its gap, and after each book gap comes a snapshot at its end.
    for (const exchange of ALL) {
      const rows = await h.rows(exchange);
      const snapshotTs = new Set(rows.filter((r) => r.kind === 'snapshot').map((r) => `${r.ticker}@${r.ts}`));
      for (const g of rows.filter((r) => r.kind === 'gap' && r.stream === 'book')) {
        expect(g.fromTs).toBeLessThanOrEqual(g.toTs as number);
        expect(snapshotTs.has(`${g.ticker}@${g.toTs}`)).toBe(true);
      }
    }
  });
});

describe('recorder ticker selection', () => {
  let h: RecorderHarness | undefined;
  let listing: Server | undefined;
  afterEach(async () => {
    await h?.close();
    await new Promise((r) => listing?.close(r));
    h = undefined;
    listing = undefined;
  });

  it('records configured tickers, listed ones by prefix and series up to the cap, and follows the listing', async () => {
    h = await createRecorderHarness({ sim: { updatesPerSecond: 150 } });
    // Kalshi's REST host as the recorder sees it: the simulator's, with markets we "close" left out of the listing.
    const upstream = h.env.UPSTREAM_VENUE_B_URL as string;
    const closed = new Set<string>();
    listing = createServer((req, res) => {
      void (async () => {
        const r = await fetch(`${upstream}${(req.url ?? '/').replace(/^\/trade-api\/v2/, '')}`);
        const body = (await r.json()) as { markets?: { ticker: string }[] };
        if (body.markets) body.markets = body.markets.filter((m) => !closed.has(m.ticker));
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      })().catch(() => res.writeHead(502).end());
    });
    await new Promise<void>((r) => listing!.listen(0, '127.0.0.1', r));
    const port = (listing.address() as AddressInfo).port;
    const recorder = await h.startInProcess({
      RECORDER_EXCHANGES: 'venue_b',
      UPSTREAM_VENUE_B_URL: `http://127.0.0.1:${port}/trade-api/v2`,
      RECORDER_VENUE_B_TICKERS: 'KXHIGHNY-26MAR07-T58',
      RECORDER_VENUE_B_PREFIXES: 'kxbtcd', // case-insensitive
      RECORDER_VENUE_B_SERIES: 'KXFED',
      RECORDER_MAX_TICKERS: '6',
      RECORDER_DISCOVERY_INTERVAL_MS: '300',
    });
    const recorded = () => [...(recorder.venues.get('venue_b')?.recorders.keys() ?? [])].sort();
    // Configured first, then the listing in order (4 KXBTCD, then KXFED): the cap leaves KXFED-26MAR-T4.50 out, and
    // KXHIGHNY-26MAR07-B56.5 is selected by nothing.
    const first = [
      'KXBTCD-26MAR07-T100000',
      'KXBTCD-26MAR07-T102500',
      'KXBTCD-26MAR07-T105000',
      'KXBTCD-26MAR07-T97500',
      'KXFED-26MAR-T4.25',
      'KXHIGHNY-26MAR07-T58',
    ];
    // (A ticker joins once its resume point is read from ClickHouse.)
    await waitFor(() => recorded().length >= first.length, { what: 'the first selection' });
    expect(recorded()).toEqual(first);
    expect(h.sim.books.tickers('venue_b')).toEqual(expect.arrayContaining([...first, 'KXFED-26MAR-T4.50']));
    await h.waitLive();
    await sleep(500);
    const tickersWithRows = async () => new Set((await h!.rows('venue_b')).map((r) => r.ticker));
    await waitFor(async () => (await tickersWithRows()).size === first.length, { what: 'rows for every ticker' });
    expect([...(await tickersWithRows())].sort()).toEqual(first);

    // A market leaves the listing (closed): it is dropped, and the freed place goes to the next listed market.
    closed.add('KXBTCD-26MAR07-T100000');
    await waitFor(() => !recorded().includes('KXBTCD-26MAR07-T100000'), { what: 'the closed market dropped' });
    // Dropping is immediate; the newcomer joins once its resume point is read from ClickHouse.
    await waitFor(() => recorded().includes('KXFED-26MAR-T4.50'), { what: 'the next listed market admitted' });
    await waitFor(async () => (await tickersWithRows()).has('KXFED-26MAR-T4.50'), { what: 'the newcomer recorded' });

    // It is listed again: it comes back after a gap `resubscribe`, and the cap pushes the last listed one out.
    closed.clear();
    await waitFor(() => JSON.stringify(recorded()) === JSON.stringify(first), { what: 'the first selection again' });
    await waitFor(
      async () => gapsOf(await h!.rows('venue_b', 'KXBTCD-26MAR07-T100000')).some((g) => g.reason === 'resubscribe'),
      { what: 'the resubscribe gap' },
    );
    await h.stopInProcess();
  });
});
