/**
 * The project's SQL on current ClickHouse: the real migrations, inserts and every named query run on the engine of
 * the `chdb` npm package (ClickHouse 26.7, through its HTTP stand-in, testing/current-clickhouse-server.ts) and on
 * the test ClickHouse of `./dev test` (Debian's 18.16 locally, the CI's service container there), on the same rows;
 * the answers must be identical — RowBinary windows byte for byte, the JSON queries row for row.
 */
import { Rng } from '@depthgate/service-kit';
import type { ExchangeKey } from '@depthgate/platforms';
import { testClickHouseUrl, uniqueName } from '@depthgate/test-utils';
import type { DeltaRow, GapRow, SnapshotRow, TradeRow, VerificationRow } from './inserts';
import {
  insertDeltaRows,
  insertGapRows,
  insertHandoverRows,
  insertSnapshotRows,
  insertTradeRows,
  insertVerificationRows,
} from './inserts';
import { VERIFICATION_METHODS } from './schema';
import { OrderBookQueries, type TimeWindow } from './queries/order-books';
import { BAR_INTERVALS } from './queries/trades';
import { RecorderStore, type LandedEnd, type ProbeKey } from './queries/recorder';
import { tickersWithData } from './queries/generator';
import { schemaVersion, verifyReadColumns } from './startup';
import type { HistoryStore } from './store';
import { createTestDatabase, startCurrentClickHouse, type CurrentClickHouse, type TestDatabase } from './testing';

// Generous: a CI machine under the whole integration suite's load ran this file's queries past a 60-s budget once.
jest.setTimeout(400_000);

/** 23:00 on 31 March to 01:00 on 1 April 2026 (UTC): the rows span two monthly partitions. */
const FROM = Date.UTC(2026, 2, 31, 23, 0, 0);
const TO = Date.UTC(2026, 3, 1, 1, 0, 0);
const TICKERS: Record<ExchangeKey, string[]> = {
  venue_b: ['KXBTCD-26MAR31-T84000', 'KXFED-26APR-T4.25', 'kxlower-case'],
  venue_c: ['BTCUSD', 'GEMI-FEDJAN26-DN25'],
  venue_a_us: ['fed-cuts-rates-in-april-2026'],
  venue_a_clob: ['71321045679252212594626385532706912750332728571942532289631379312455583992563'],
  venue_d: ['BTC-USD'],
};

/** Decimal text of many shapes: grid prices, 18 places, 20 integer digits, trailing zeros, negative changes. */
function decimal(rng: Rng, signed: boolean): string {
  const shape = rng.int(6);
  const sign = signed && rng.chance(0.5) ? '-' : '';
  if (shape === 0) return `${sign}0.${String(rng.int(99) + 1).padStart(2, '0')}00`;
  if (shape === 1) return `${sign}${rng.int(100_000)}.${String(rng.int(1e9)).padStart(9, '0')}${'0'.repeat(9)}`;
  if (shape === 2) return `${sign}${'9'.repeat(20)}.${'1'.repeat(18)}`;
  if (shape === 3) return `${sign}${rng.int(1000)}`;
  if (shape === 4) return `${sign}0.000000000000000001`;
  return `${sign}${rng.int(90_000) + 10_000}.${rng.int(100)}`;
}

/** A trade's price: the shapes of `decimal` a venue trades at (a notional far below the bars' 1e20 bound). */
function tradePrice(rng: Rng): string {
  const shape = rng.int(4);
  if (shape === 0) return `0.${String(rng.int(99) + 1).padStart(2, '0')}00`;
  if (shape === 1) return `${rng.int(100_000)}.${String(rng.int(1e9)).padStart(9, '0')}123456789`;
  if (shape === 2) return '0.000000000000000001';
  return `${rng.int(90_000) + 10_000}.${rng.int(100)}`;
}

function generate(): {
  snapshots: SnapshotRow[];
  deltas: DeltaRow[];
  gaps: GapRow[];
  trades: TradeRow[];
  secondWriter: TradeRow[];
  verifications: VerificationRow[];
} {
  const snapshots: SnapshotRow[] = [];
  const deltas: DeltaRow[] = [];
  const gaps: GapRow[] = [];
  const trades: TradeRow[] = [];
  const secondWriter: TradeRow[] = [];
  const verifications: VerificationRow[] = [];
  for (const [exchange, tickers] of Object.entries(TICKERS) as [ExchangeKey, string[]][]) {
    for (const ticker of tickers) {
      const rng = new Rng(42, exchange, ticker);
      let sequence = 1;
      // The venue's own sequence (migration 4): on most rows, of several shapes, '' on the others; the longest.
      const venueSeq = (): string => {
        const shape = rng.int(4);
        if (shape === 0) return '';
        if (shape === 1) return `${rng.int(20) + 1}:${rng.int(1e9)}`;
        if (shape === 2) return String(rng.int(1e12));
        return 'Zz9:._/+=-'.repeat(5).slice(0, 48);
      };
      for (let ts = FROM; ts < TO; ts += 60_000) {
        const levels = 2 + rng.int(6);
        const bookSeq = venueSeq();
        for (let i = 0; i < levels; i++) {
          const price = `${rng.int(1000) + i * 1000}.${rng.int(100)}`;
          const venue_seq = bookSeq;
          snapshots.push({ exchange, ticker, ts, side: 'bid', price, quantity: decimal(rng, false), venue_seq });
          snapshots.push({
            exchange,
            ticker,
            ts,
            side: 'ask',
            price: `${price}5`,
            quantity: decimal(rng, false),
            venue_seq,
          });
        }
        // A verification point every few minutes, each method in turn (detected a little later).
        if ((ts - FROM) % 300_000 === 0) {
          const method = VERIFICATION_METHODS[((ts - FROM) / 300_000) % VERIFICATION_METHODS.length] as never;
          verifications.push({ exchange, ticker, ts: ts + rng.int(1000), method, detected_at: ts + 2000 });
        }
        // Changes until the next snapshot, several sharing one ts.
        let at = ts;
        for (let i = 0; i < 25; i++) {
          at += rng.chance(0.3) ? 0 : rng.int(2000) + 1;
          if (at >= ts + 60_000) break;
          deltas.push({
            exchange,
            ticker,
            ts: at,
            sequence: sequence++,
            side: rng.chance(0.5) ? 'bid' : 'ask',
            price: decimal(rng, false),
            quantity_delta: decimal(rng, true),
            venue_seq: venueSeq(),
          });
          // Trades between the changes, sharing their counter (and a few their ts); some written twice, as a
          // retried insert (the same row, in the same block) or a second writer (another sequence and receive time,
          // in an insert of its own: current ClickHouse merges the rows of one block by the key as it writes them).
          if (rng.chance(0.4)) {
            const trade: TradeRow = {
              exchange,
              ticker,
              ts: at + (rng.chance(0.5) ? 0 : 1),
              sequence: sequence++,
              trade_id: rng.chance(0.2) ? `h:${rng.int(1e9).toString(16).padStart(16, '0')}` : String(rng.int(1e12)),
              price: tradePrice(rng),
              size: `${rng.int(1000) + 1}.${rng.int(1e8)}`,
              side: rng.chance(0.5) ? 'buy' : 'sell',
              venue_side: rng.chance(0.5) ? 'yes' : '',
              received_ts: at + 3,
              venue_seq: venueSeq(),
            };
            trades.push(trade);
            if (rng.chance(0.1)) trades.push({ ...trade });
            if (rng.chance(0.05)) secondWriter.push({ ...trade, sequence: sequence + 7, received_ts: at + 9 });
          }
        }
      }
      gaps.push({
        exchange,
        ticker,
        from_ts: FROM + 600_000,
        to_ts: FROM + 660_000,
        reason: 'disconnect',
        detected_at: FROM + 661_000,
      });
      gaps.push({ exchange, ticker, from_ts: TO - 1, to_ts: TO, reason: 'seed_end', detected_at: TO + 5 });
      gaps.push({
        exchange,
        ticker,
        from_ts: FROM + 900_000,
        to_ts: FROM + 960_000,
        reason: 'disconnect',
        detected_at: FROM + 961_000,
        stream: 'trades',
      });
    }
  }
  return { snapshots, deltas, gaps, trades, secondWriter, verifications };
}

/** Inserts in batches of `size` (several parts, both months). */
async function fill(store: HistoryStore, rows: ReturnType<typeof generate>, size = 2500): Promise<void> {
  for (let i = 0; i < rows.snapshots.length; i += size)
    await insertSnapshotRows(store, rows.snapshots.slice(i, i + size));
  for (let i = 0; i < rows.deltas.length; i += size) await insertDeltaRows(store, rows.deltas.slice(i, i + size));
  // Trades in smaller batches (the copies of a trade often in another part).
  for (let i = 0; i < rows.trades.length; i += 700) await insertTradeRows(store, rows.trades.slice(i, i + 700));
  await insertTradeRows(store, rows.secondWriter);
  await insertGapRows(store, rows.gaps);
  await insertVerificationRows(store, rows.verifications);
  // A point stored twice (a retried batch).
  await insertVerificationRows(store, rows.verifications.slice(0, 3));
  await insertHandoverRows(store, HANDOVERS);
  // A ticker whose last ms has deltas with trailing zeros (each server prints its decimals its own way).
  await insertDeltaRows(
    store,
    [
      ['bid', '0.5000', '12.50'],
      ['ask', '0.5100', '-3.000000001'],
    ].map(([side, price, delta], i) => ({
      exchange: 'venue_b',
      ticker: 'LANDED-1',
      ts: FROM + 1000,
      sequence: 10 + i,
      side: side as 'bid' | 'ask',
      price: price as string,
      quantity_delta: delta as string,
    })),
  );
}

/** Hand-overs of a ticker back and forth between two terms, and one of other terms. */
const HANDOVERS = (
  [
    ['KXBTCD-26MAR31-T84000', FROM + 60_000, 7, 8, 'takeover'],
    ['KXBTCD-26MAR31-T84000', FROM + 30_000, 8, 7, 'release'],
    ['KXLOW', FROM + 90_000, 3, 4, 'offer'],
  ] as const
).map(([ticker, ts, from, to, kind]) => ({
  exchange: 'venue_b' as const,
  ticker,
  ts,
  from_term: from,
  to_term: to,
  kind,
  detected_at: ts + 3,
}));

/** Every named query of the package, with its answer (RowBinary as hex, the rest as returned). */
async function answers(store: HistoryStore, rows: ReturnType<typeof generate>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const q = new OrderBookQueries(store);
  const scope = store.scope(180_000);
  const bytes = async (run: (onChunk: (c: Buffer) => void) => Promise<void>) => {
    const chunks: Buffer[] = [];
    await run((c) => void chunks.push(c));
    return Buffer.concat(chunks).toString('hex');
  };
  try {
    out.version = await schemaVersion(store);
    for (const [exchange, tickers] of Object.entries(TICKERS) as [ExchangeKey, string[]][]) {
      out[`tickers ${exchange}`] = await q.tickers(scope, exchange, {});
      out[`tickers ${exchange} prefixed`] = await q.tickers(scope, exchange, {
        prefix: 'kx',
        allowedPrefixes: ['KXB', 'kxl', 'BTC', 'fed'],
      });
      out[`tickers ${exchange} none allowed`] = await q.tickers(scope, exchange, { allowedPrefixes: [] });
      // (A map: its order is not part of the answer.)
      out[`stored ${exchange}`] = [
        ...(await new RecorderStore(store).storedTickers(exchange, [...tickers, 'absent'])).entries(),
      ].sort(([a], [b]) => (a < b ? -1 : 1));
      out[`landed ${exchange}`] = [
        ...(await new RecorderStore(store).landedEnds(exchange, [...tickers, 'LANDED-1', 'absent'])).entries(),
      ].sort(([a], [b]) => (a < b ? -1 : 1));
      out[`seeded ${exchange}`] = [
        ...(await tickersWithData(
          store,
          tickers.map((ticker) => ({ exchange, ticker })),
          FROM + 3_600_000,
          TO,
        )),
      ].sort();
      for (const ticker of tickers) {
        out[`landed book ${exchange} ${ticker}`] = await new RecorderStore(store).landedBook(
          exchange,
          ticker,
          FROM + 3_600_000,
        );
        for (const variant of [ticker, ticker.toUpperCase(), ticker.toLowerCase()]) {
          out[`catalogue ${exchange} ${variant}`] = await q.catalogue(scope, exchange, variant);
        }
        const windows: [string, TimeWindow][] = [
          ['all', { from: FROM, to: null, toInclusive: false }],
          ['first month', { from: FROM, to: Date.UTC(2026, 3, 1), toInclusive: false }],
          ['inclusive', { from: FROM + 120_000, to: FROM + 240_000, toInclusive: true }],
          ['empty', { from: TO + 1, to: null, toInclusive: false }],
        ];
        for (const [name, window] of windows) {
          for (const limit of [1, 37, 5000]) {
            for (const singleThread of [false, true]) {
              const read = { exchange, ticker, window, limit, singleThread };
              const key = `${exchange} ${ticker} ${name} ${limit} ${singleThread ? '1' : 'n'} thread(s)`;
              out[`deltas ${key}`] = await bytes((c) => q.deltas(scope, read, c));
              out[`snapshots ${key}`] = await bytes((c) => q.snapshots(scope, read, c));
              out[`book rest ${key}`] = await bytes((c) => q.snapshotsToBookEnd(scope, read, Math.min(3, limit), c));
              out[`trades ${key}`] = await bytes((c) => q.trades(scope, read, c));
              out[`trades received venue ${key}`] = await bytes((c) =>
                q.trades(scope, { ...read, receivedTs: true, venueSide: true }, c),
              );
              out[`interleaved ${key}`] = await bytes((c) => q.interleaved(scope, read, c));
              out[`interleaved received ${key}`] = await bytes((c) =>
                q.interleaved(scope, { ...read, receivedTs: true }, c),
              );
              if (limit === 37) {
                // The venue's sequences (migration 4): FixedString-padded in every window read.
                const venue = { ...read, venueSeq: true };
                out[`deltas venue_seq ${key}`] = await bytes((c) => q.deltas(scope, venue, c));
                out[`snapshots venue_seq ${key}`] = await bytes((c) => q.snapshots(scope, venue, c));
                out[`book rest venue_seq ${key}`] = await bytes((c) => q.snapshotsToBookEnd(scope, venue, 3, c));
                out[`trades every field ${key}`] = await bytes((c) =>
                  q.trades(scope, { ...venue, receivedTs: true, venueSide: true }, c),
                );
                out[`interleaved venue_seq ${key}`] = await bytes((c) =>
                  q.interleaved(scope, { ...venue, receivedTs: true }, c),
                );
              }
            }
          }
        }
        // Coverage (with the verification points) and the points around moments, inside and outside a window.
        for (const [from, to] of [
          [FROM, null],
          [FROM + 300_000, FROM + 1_500_000],
          [TO + 1, null],
        ] as const) {
          out[`coverage ${exchange} ${ticker} ${from} ${to}`] = await q.coverage(scope, exchange, ticker, from, to);
        }
        // Where the book begins after a moment (before every row, inside, after the last), bounded and open.
        for (const after of [FROM - 1, FROM + 300_500, TO + 60_000])
          for (const to of [after + 600_000, null])
            out[`book start ${exchange} ${ticker} ${after} ${to}`] = await q.bookStart(
              scope,
              exchange,
              ticker,
              after,
              to,
            );
        for (const at of [FROM - 1, FROM + 300_500, FROM + 1_234_567, TO + 60_000]) {
          for (const lower of [0, FROM + 600_000]) {
            out[`verified ${exchange} ${ticker} ${at} ${lower}`] = await q.verifiedAround(
              scope,
              exchange,
              ticker,
              lower,
              Math.max(at, lower),
            );
          }
        }
        // Resumed inside a millisecond (a cursor's position), at a trade's key and past a few rows.
        const trade = rows.trades.find((t) => t.exchange === exchange && t.ticker === ticker && t.ts > FROM + 60_000);
        if (trade !== undefined) {
          for (const skip of [0, 1, 3]) {
            const read = {
              exchange,
              ticker,
              window: { from: trade.ts, to: trade.ts + 120_000, toInclusive: false },
              limit: 50,
              resume: { sequence: BigInt(trade.sequence), skip },
            };
            out[`trades resumed ${exchange} ${ticker} ${skip}`] = await bytes((c) => q.trades(scope, read, c));
            out[`interleaved resumed ${exchange} ${ticker} ${skip}`] = await bytes((c) =>
              q.interleaved(scope, read, c),
            );
          }
        }
        for (const [interval, intervalMs] of Object.entries(BAR_INTERVALS)) {
          for (const [from, to, limit] of [
            [FROM, null, 100_000],
            [FROM + 300_000, TO - 300_000, 7],
            [TO, null, 10],
          ] as const) {
            const read = { exchange, ticker, intervalMs, from, to, limit };
            out[`bars ${exchange} ${ticker} ${interval} ${from} ${to} ${limit}`] = (await q.bars(scope, read)).toString(
              'hex',
            );
          }
        }
        for (const [from, to] of [
          [FROM, null],
          [TO + 1, null],
        ] as const) {
          out[`trade exists ${exchange} ${ticker} ${from}`] = await q.rowExists(
            scope,
            'trade',
            exchange,
            ticker,
            from,
            to,
          );
          out[`interleaved exists ${exchange} ${ticker} ${from}`] = await q.rowExists(
            scope,
            'interleaved',
            exchange,
            ticker,
            from,
            to,
          );
        }
        // The last trade at or before a moment, on either clock (before the first trade, inside, after the last),
        // of those from a lower bound on (before every trade; inside, past the first read's look back).
        for (const lower of [FROM - 86_400_000, FROM + 600_000])
          for (const at of [FROM - 1, FROM + 300_500, FROM + 1_234_567, TO + 60_000])
            for (const clock of ['ts', 'received_ts'] as const)
              out[`last trade ${exchange} ${ticker} ${lower} ${at} ${clock}`] = await q.lastTrade(
                scope,
                exchange,
                ticker,
                lower,
                at,
                clock,
              );
        out[`trade gaps ${exchange} ${ticker}`] = await q.gaps(scope, exchange, ticker, {
          from: FROM,
          to: null,
          stream: 'trades',
        });
      }
    }
    const probes: ProbeKey[] = [];
    const d = rows.deltas[rows.deltas.length - 1] as DeltaRow;
    const s = rows.snapshots[100] as SnapshotRow;
    const g = rows.gaps[0] as GapRow;
    probes.push({ table: 'deltas', exchange: d.exchange, ticker: d.ticker, ts: d.ts, sequence: Number(d.sequence) });
    probes.push({
      table: 'deltas',
      exchange: d.exchange,
      ticker: d.ticker,
      ts: d.ts,
      sequence: Number(d.sequence) + 1,
    });
    probes.push({ table: 'snapshots', exchange: s.exchange, ticker: s.ticker, ts: s.ts });
    probes.push({ table: 'snapshots', exchange: s.exchange, ticker: s.ticker, ts: s.ts + 1 });
    probes.push({
      table: 'gaps',
      exchange: g.exchange,
      ticker: g.ticker,
      fromTs: g.from_ts,
      toTs: g.to_ts,
      reason: g.reason,
      detectedAt: g.detected_at,
    });
    probes.push({
      table: 'gaps',
      exchange: g.exchange,
      ticker: g.ticker,
      fromTs: g.from_ts,
      toTs: g.to_ts,
      reason: 'other',
      detectedAt: g.detected_at,
    });
    const v = rows.verifications[5] as VerificationRow;
    const verification = { table: 'verifications' as const, exchange: v.exchange, ticker: v.ticker, ts: v.ts };
    probes.push({ ...verification, method: v.method, detectedAt: v.detected_at });
    probes.push({ ...verification, method: v.method, detectedAt: v.detected_at + 1 });
    for (const term of [7, 4, 9]) out[`handovers ${term}`] = await new RecorderStore(store).handoversOf(term);
    // (Nothing runs under the term: the statement itself is what is compared.)
    await new RecorderStore(store).killWriter(123_456);
    out.probes = await Promise.all(probes.map((p) => new RecorderStore(store).probeBatch(p)));
  } finally {
    scope.dispose();
  }
  return out;
}

describe('the SQL on current ClickHouse (chdb) answers as on the test ClickHouse', () => {
  let current: CurrentClickHouse;
  let reference: TestDatabase;
  let now: TestDatabase;
  const rows = generate();

  beforeAll(async () => {
    current = await startCurrentClickHouse();
    const database = uniqueName('cur');
    reference = await createTestDatabase({ url: testClickHouseUrl(), database });
    now = await createTestDatabase({ url: current.url, database });
    // A trade written twice stays two rows (each server merges them at its own moment): the reads' deduplication
    // is compared first, the merged table after.
    await Promise.all([reference.merges('trades', false), now.merges('trades', false)]);
    await Promise.all([fill(reference.store, rows), fill(now.store, rows)]);
  });

  afterAll(async () => {
    await reference?.drop();
    await Promise.allSettled([reference?.close(), now?.close()]);
    await current?.close();
  });

  it('runs on the engine of chdb 3.4 (ClickHouse 26.x), whose inserts are queued by default', async () => {
    expect(current.version).toMatch(/^26\./);
    expect((await current.state()).defaults).toEqual({ async_insert: '1', wait_for_async_insert: '1' });
  });

  it('applies the migrations and reads the columns the RowBinary reader assumes on both', async () => {
    await verifyReadColumns(reference.store);
    await verifyReadColumns(now.store);
    expect(await schemaVersion(now.store)).toBe(await schemaVersion(reference.store));
  });

  it('writes every insert synchronously there: async_insert = 0 is pinned where the server knows it', async () => {
    const { inserts } = await current.state();
    expect(inserts.length).toBeGreaterThan(10);
    for (const insert of inserts) {
      expect(insert.settings.async_insert).toBe('0');
      expect(insert.queued).toBe(false);
    }
  });

  it('answers every named query identically: windows byte for byte, the rest row for row', async () => {
    const expected = await answers(reference.store, rows);
    const actual = await answers(now.store, rows);
    expect(Object.keys(actual)).toEqual(Object.keys(expected));
    for (const key of Object.keys(expected)) expect([key, actual[key]]).toEqual([key, expected[key]]);
    // The comparison covers real rows, not empty answers.
    expect((expected['deltas venue_b KXBTCD-26MAR31-T84000 all 5000 n thread(s)'] as string).length).toBeGreaterThan(
      40_000,
    );
    expect(expected.probes).toEqual([true, false, true, false, true, false, true, false]);
    // The landed ends and the hand-overs are read, not empty.
    expect(expected['handovers 7']).toHaveLength(2);
    expect(expected['handovers 9']).toEqual([]);
    const landed = new Map(expected['landed venue_b'] as [string, LandedEnd][]);
    expect(landed.size).toBe(TICKERS.venue_b.length + 1);
    expect(landed.get('LANDED-1')).toEqual({
      lastTs: FROM + 1000,
      sequence: 11,
      lastTradeTs: -1,
      deltasAtLast: [
        { side: 'bid', price: '0.5', quantityDelta: '12.5', sequence: 10 },
        { side: 'ask', price: '0.51', quantityDelta: '-3.000000001', sequence: 11 },
      ],
    });
    // The venue's sequences and the verification points are read, not empty.
    const ticker = 'venue_b KXBTCD-26MAR31-T84000';
    expect((expected[`deltas venue_seq ${ticker} all 37 n thread(s)`] as string).length).toBe(37 * (49 + 48) * 2);
    expect(expected[`coverage ${ticker} ${FROM} null`]).toMatchObject({
      verification: { count: 24, methods: { rest_book: 8, checksum: 8, snapshot: 8 } },
    });
    expect(expected[`verified ${ticker} ${FROM + 1_234_567} 0`]).toMatchObject({
      before: { method: 'checksum' },
      after: { method: 'snapshot' },
    });
    expect((expected['trades venue_b KXBTCD-26MAR31-T84000 all 5000 n thread(s)'] as string).length).toBeGreaterThan(
      10_000,
    );
    expect(
      (expected['bars venue_b KXBTCD-26MAR31-T84000 1m 1774998000000 null 100000'] as string).length,
    ).toBeGreaterThan(1000);
    // The book begins at a snapshot after a moment before every row (and at none after the last).
    expect(expected[`book start ${ticker} ${FROM - 1} null`]).toMatchObject({ snapshotTs: expect.any(Number) });
    expect(expected[`book start ${ticker} ${TO + 60_000} null`]).toEqual({ snapshotTs: undefined, gapFrom: undefined });
    // The last trade before a moment is found (and none before the first, nor before the lower bound).
    const everything = FROM - 86_400_000;
    expect(expected[`last trade ${ticker} ${everything} ${FROM + 1_234_567} ts`]).toMatchObject({
      tradeId: expect.any(String),
    });
    expect(expected[`last trade ${ticker} ${everything} ${FROM - 1} ts`]).toBeUndefined();
    expect(expected[`last trade ${ticker} ${FROM + 600_000} ${FROM + 300_500} ts`]).toBeUndefined();
    expect(expected[`last trade ${ticker} ${FROM + 600_000} ${FROM + 1_234_567} ts`]).toMatchObject({
      ts: expect.any(Number) as unknown,
    });
  });

  it('answers the trade reads identically once the replacing engine merged the copies of a trade', async () => {
    for (const db of [reference, now]) {
      await db.merges('trades', true);
      await db.merge('trades');
    }
    const expected = await answers(reference.store, rows);
    const actual = await answers(now.store, rows);
    for (const key of Object.keys(expected).filter((k) => /^(trades|interleaved|bars|last trade)/.test(k)))
      expect([key, actual[key]]).toEqual([key, expected[key]]);
  });
});
