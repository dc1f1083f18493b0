/**
 * The book at a moment and a ticker's coverage against the real ClickHouse and Redis of `./dev test`, on generated
 * series (the generator's own book is the truth) and on crafted rows at the edges of rule 7: for random moments
 * outside gaps the book endpoint equals the book rebuilt from the row endpoints and the generator's book; inside a
 * gap it says so; a gap closed by an empty book restarts it empty; windows, depth and bad input.
 */
import { DAY_MS, HISTORY_START_MS } from '@depthgate/auth';
import {
  insertDeltaRows,
  insertGapRows,
  insertSnapshotRows,
  type DeltaRow,
  type SnapshotRow,
} from '@depthgate/history-store';
import { Rng } from '@depthgate/service-kit';
import request from 'supertest';
import { Decimal, HistoryClient, OrderBook } from '@depthgate/client';
import { formatUnits } from '@depthgate/history-tools';
import { TickerSeries } from '@depthgate/history-tools';
import { generateInto } from '@depthgate/history-tools';
import { createHarness, type Harness } from '../testing/harness';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0, 0);
const FROM = NOW - 6 * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

type Flat = Record<string, string>;
interface Level {
  price: string;
  quantity: string;
}
interface BookBody {
  exchange: string;
  ticker: string;
  at: string;
  status: 'ok' | 'in_gap' | 'no_data';
  snapshot_ts: string | null;
  last_delta: { ts: string; sequence: number } | null;
  gap: { from_ts: string; to_ts: string; reason: string } | null;
  base_gap: { from_ts: string; to_ts: string; reason: string } | null;
  bids: Level[] | null;
  asks: Level[] | null;
}

/** A book as `side price` → quantity, canonical (values compared exactly). */
function flatOf(body: Pick<BookBody, 'bids' | 'asks'>): Flat {
  const out: Flat = {};
  for (const l of body.bids ?? []) out[`bid ${Decimal.parse(l.price)}`] = String(Decimal.parse(l.quantity));
  for (const l of body.asks ?? []) out[`ask ${Decimal.parse(l.price)}`] = String(Decimal.parse(l.quantity));
  return out;
}

let h: Harness;
let key: string;
let client: HistoryClient;

beforeAll(async () => {
  h = await createHarness({ now: NOW, env: { RATE_LIMIT_DEFAULT_RPM: '1000000', MAX_LIMIT: '1000000' } });
  key = await h.key({});
  client = new HistoryClient({ baseUrl: (await h.listen()).url, apiKey: key });
});

afterAll(async () => {
  await h?.close();
});

const get = (path: string, k: string | undefined = key) => {
  const r = request(h.app).get(path);
  return k ? r.set('x-api-key', k) : r;
};

/**
 * The book at T from the row endpoints, by rule 7 as a client does it (@depthgate/client's OrderBook, independent of
 * the service's code): the last book of the snapshots up to T (asked from 10 minutes before), then every delta from
 * its ts to T, by (ts, sequence).
 */
async function rowsBook(exchange: string, ticker: string, t: number): Promise<{ flat: Flat; snapshotTs: string }> {
  const snaps = (await client.snapshotPage(exchange, ticker, { start: t - 600_000, end: t, limit: 1_000_000 })).rows;
  const last = snaps.at(-1)?.ts;
  if (last === undefined) throw new Error(`no snapshot in the 10 minutes before ${iso(t)}`);
  const deltas = (await client.deltaPage(exchange, ticker, { start: last, end: t, limit: 1_000_000 })).rows;
  const book = OrderBook.fromRows(
    snaps.filter((r) => r.ts === last),
    deltas,
  );
  return { flat: flatOf({ bids: book.bids(), asks: book.asks() }), snapshotTs: last };
}

describe('the book of generated series at random moments', () => {
  const tickers = [
    { exchange: 'venue_b' as const, ticker: 'KXBTCD-26JUN01-T95000' },
    { exchange: 'venue_c' as const, ticker: 'ETHUSD' },
    { exchange: 'venue_a_us' as const, ticker: 'will-bitcoin-close-above-100k-on-jun-30' },
  ];
  const plan = {
    tickers,
    from: FROM,
    to: NOW,
    snapshotIntervalMs: 300_000,
    eventsPerMinute: 30,
    seed: 'book-test',
    batchRows: 1_000_000,
  };

  beforeAll(async () => {
    await generateInto(h.ch, plan);
  });

  /** The generator's own book after every row with ts ≤ t, as `side price` → quantity. */
  function generatorBook(exchange: (typeof tickers)[number]['exchange'], ticker: string, t: number): Flat {
    const series = new TickerSeries({ ...plan, exchange, ticker });
    series.advance(t + 1, { snapshotLevel: () => undefined, delta: () => undefined });
    const { bids, asks } = series.book();
    const p = series.profile;
    const out: Flat = {};
    for (const [price, q] of bids)
      out[`bid ${Decimal.parse(formatUnits(price, p.priceScale))}`] = String(Decimal.parse(formatUnits(q, p.qtyScale)));
    for (const [price, q] of asks)
      out[`ask ${Decimal.parse(formatUnits(price, p.priceScale))}`] = String(Decimal.parse(formatUnits(q, p.qtyScale)));
    return out;
  }

  it.each(tickers)(
    '$exchange $ticker: the book endpoint = the row endpoints by rule 7 = the generator’s book',
    async ({ exchange, ticker }) => {
      const rng = new Rng('moments', ticker);
      // Random moments, and moments on an event and a millisecond before it.
      const deltas = (await get(`/api/${exchange}/deltas/${ticker}?start_ts=${iso(FROM + 600_000)}&limit=200`))
        .body as {
        rows: { ts: string }[];
      };
      const moments = Array.from(
        { length: 25 },
        () => FROM + 600_000 + Math.floor(rng.float() * (NOW - FROM - 700_000)),
      );
      for (const r of deltas.rows.filter((_, i) => i % 40 === 0)) moments.push(Date.parse(r.ts), Date.parse(r.ts) - 1);
      for (const t of moments) {
        const res = await get(`/api/${exchange}/book/${ticker}?at=${iso(t)}`);
        expect(res.status).toBe(200);
        const body = res.body as BookBody;
        expect(body.status).toBe('ok');
        const fromRows = await rowsBook(exchange, ticker, t);
        expect({ t: iso(t), book: flatOf(body) }).toEqual({ t: iso(t), book: fromRows.flat });
        expect(body.snapshot_ts).toBe(fromRows.snapshotTs);
        expect(flatOf(body)).toEqual(generatorBook(exchange, ticker, t));
        // Best first on both sides, exact decimals.
        const bids = (body.bids ?? []).map((l) => Decimal.parse(l.price));
        const asks = (body.asks ?? []).map((l) => Decimal.parse(l.price));
        expect([...bids].sort((a, b) => b.cmp(a))).toEqual(bids);
        expect([...asks].sort((a, b) => a.cmp(b))).toEqual(asks);
        if (bids[0] && asks[0]) expect(bids[0].lt(asks[0])).toBe(true);
        if (body.last_delta) expect(body.last_delta.ts <= iso(t)).toBe(true);
      }
    },
  );

  it('depth keeps the best levels of each side; at omitted is now', async () => {
    const { exchange, ticker } = tickers[1] as (typeof tickers)[number];
    const t = FROM + 3_600_000;
    const full = (await get(`/api/${exchange}/book/${ticker}?at=${iso(t)}`)).body as BookBody;
    const top = (await get(`/api/${exchange}/book/${ticker}?at=${iso(t)}&depth=3`)).body as BookBody;
    expect(top.bids).toEqual(full.bids?.slice(0, 3));
    expect(top.asks).toEqual(full.asks?.slice(0, 3));
    const now = (await get(`/api/${exchange}/book/${ticker}`)).body as BookBody;
    expect(now.at).toBe(iso(NOW));
    expect(flatOf(now)).toEqual(generatorBook(exchange, ticker, NOW));
  });
});

describe('the book at the edges of rule 7', () => {
  const T = NOW - 3_600_000;
  const snap = (ticker: string, ts: number, levels: [string, string, string][]): SnapshotRow[] =>
    levels.map(([side, price, quantity]) => ({
      exchange: 'venue_b',
      ticker,
      ts,
      side: side as 'bid',
      price,
      quantity,
    }));
  const delta = (ticker: string, ts: number, sequence: number, side: string, price: string, q: string): DeltaRow => ({
    exchange: 'venue_b',
    ticker,
    ts,
    sequence,
    side: side as 'bid',
    price,
    quantity_delta: q,
  });

  beforeAll(async () => {
    // EDGE: a snapshot at T; deltas at T (after it), at T + 10 (equal ts, by sequence), a level removed; a gap
    // [T + 100, T + 200) closed by a snapshot at T + 200; a gap [T + 300, T + 400) closed by an empty book (no
    // snapshot), deltas after it from empty.
    await insertSnapshotRows(h.ch, [
      ...snap('EDGE', T, [
        ['bid', '0.48', '10'],
        ['ask', '0.52', '5'],
      ]),
      ...snap('EDGE', T + 200, [['bid', '0.40', '1']]),
    ]);
    await insertDeltaRows(h.ch, [
      delta('EDGE', T, 2, 'bid', '0.48', '-4'),
      delta('EDGE', T + 10, 5, 'ask', '0.53', '2.50'),
      delta('EDGE', T + 10, 4, 'ask', '0.52', '-5'),
      delta('EDGE', T + 10, 6, 'ask', '0.53', '0.25'),
      delta('EDGE', T + 150, 7, 'bid', '0.10', '99'),
      delta('EDGE', T + 250, 8, 'bid', '0.40', '-1'),
      delta('EDGE', T + 450, 9, 'bid', '0.30', '3'),
      delta('EDGE', T + 450, 10, 'ask', '0.70', '4'),
    ]);
    await insertGapRows(h.ch, [
      {
        exchange: 'venue_b',
        ticker: 'EDGE',
        from_ts: T + 100,
        to_ts: T + 200,
        reason: 'disconnect',
        detected_at: T + 201,
      },
      { exchange: 'venue_b', ticker: 'EDGE', from_ts: T + 300, to_ts: T + 400, reason: 'stall', detected_at: T + 401 },
    ]);
    // ONLYDELTAS: no snapshot at all.
    await insertDeltaRows(h.ch, [delta('ONLYDELTAS', T, 1, 'bid', '0.5', '1')]);
  });

  const book = async (ticker: string, t: number, k: string | undefined = key) =>
    (await get(`/api/venue_b/book/${ticker}?at=${iso(t)}`, k)).body as BookBody;

  it('deltas at the snapshot’s ts apply after it; equal ts by sequence; a level at zero is gone', async () => {
    expect(await book('EDGE', T)).toMatchObject({
      status: 'ok',
      snapshot_ts: iso(T),
      last_delta: { ts: iso(T), sequence: 2 },
      bids: [{ price: '0.48', quantity: '6' }],
      asks: [{ price: '0.52', quantity: '5' }],
    });
    expect(await book('EDGE', T + 10)).toMatchObject({
      last_delta: { ts: iso(T + 10), sequence: 6 },
      bids: [{ price: '0.48', quantity: '6' }],
      asks: [{ price: '0.53', quantity: '2.75' }],
    });
    expect((await book('EDGE', T + 9)).asks).toEqual([{ price: '0.52', quantity: '5' }]);
  });

  it('inside a gap [from_ts, to_ts) the answer says so; at to_ts the closing snapshot holds', async () => {
    for (const t of [T + 100, T + 150, T + 199]) {
      expect(await book('EDGE', t)).toEqual({
        exchange: 'venue_b',
        ticker: 'EDGE',
        at: iso(t),
        status: 'in_gap',
        snapshot_ts: null,
        last_delta: null,
        gap: { from_ts: iso(T + 100), to_ts: iso(T + 200), reason: 'disconnect', detected_at: iso(T + 201) },
        base_gap: null,
        bids: null,
        asks: null,
        verified: { before: null, before_method: null, after: null, after_method: null },
      });
    }
    expect(await book('EDGE', T + 99)).toMatchObject({ status: 'ok', snapshot_ts: iso(T) });
    expect(await book('EDGE', T + 200)).toMatchObject({
      status: 'ok',
      snapshot_ts: iso(T + 200),
      bids: [{ price: '0.4', quantity: '1' }],
    });
    expect(await book('EDGE', T + 260)).toMatchObject({ status: 'ok', bids: [], asks: [] });
  });

  it('after a gap closed by an empty book (no snapshot at its to_ts) the book restarts empty there', async () => {
    expect(await book('EDGE', T + 450)).toMatchObject({
      status: 'ok',
      snapshot_ts: null,
      base_gap: { from_ts: iso(T + 300), to_ts: iso(T + 400), reason: 'stall' },
      last_delta: { ts: iso(T + 450), sequence: 10 },
      bids: [{ price: '0.3', quantity: '3' }],
      asks: [{ price: '0.7', quantity: '4' }],
    });
    expect(await book('EDGE', T + 420)).toMatchObject({ status: 'ok', snapshot_ts: null, bids: [], asks: [] });
  });

  it('no snapshot to start from: no_data', async () => {
    expect(await book('ONLYDELTAS', T + 5)).toMatchObject({ status: 'no_data', bids: null, asks: null });
    expect(await book('EDGE', T - 1)).toMatchObject({ status: 'no_data' });
  });

  it('windows: a snapshot before the caller’s window is not used; at before it is a 400 naming its start', async () => {
    const twoDays = await h.key({ max_data_age_days: 2 });
    expect((await book('EDGE', T + 10, twoDays)).status).toBe('ok');
    h.clock.now = T + DAY_MS * 2 + 5; // the window now starts at T + 5: the snapshot at T is outside it
    try {
      expect(await book('EDGE', T + 10, twoDays)).toMatchObject({ status: 'no_data' });
      const res = await get(`/api/venue_b/book/EDGE?at=${iso(T + 4)}`, twoDays);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_timestamp',
        message: `at ${iso(T + 4)} is before the start of your window for EDGE, ${iso(T + 5)}`,
      });
    } finally {
      h.clock.now = NOW;
    }
    const res = await get(`/api/venue_b/book/EDGE?at=2026-01-01T00:00:00Z`);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(iso(HISTORY_START_MS));
  });

  it.each([
    ['at=yesterday', 'invalid_timestamp'],
    ['at=2026-06-01', 'invalid_timestamp'],
    ['at=2026-02-30T00:00:00Z', 'invalid_timestamp'],
    ['depth=0', 'invalid_depth'],
    ['depth=-1', 'invalid_depth'],
    ['depth=10001', 'invalid_depth'],
    ['depth=99999999999999', 'invalid_depth'],
    ['depth=1.5', 'invalid_depth'],
    ['depth=abc', 'invalid_depth'],
  ])('%s → 400 %s', async (query, error) => {
    const res = await get(`/api/venue_b/book/EDGE?${query}`);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
    expect(res.body.error).toBe(error);
  });

  it('an unknown or hidden ticker: 404 as for rows', async () => {
    const hidden = await h.key({ ticker_prefixes: ['KX'] });
    expect((await get('/api/venue_b/book/EDGE', hidden)).body.error).toBe('unknown_ticker');
    expect((await get('/api/venue_b/book/NOPE')).status).toBe(404);
    expect((await get('/api/venue_b/coverage/EDGE', hidden)).status).toBe(404);
  });
});

describe('coverage', () => {
  const T = NOW - 2 * 3_600_000;
  beforeAll(async () => {
    await insertSnapshotRows(h.ch, [
      { exchange: 'venue_c', ticker: 'COV', ts: T, side: 'bid', price: '1', quantity: '1' },
      { exchange: 'venue_c', ticker: 'COV', ts: T, side: 'ask', price: '2', quantity: '1' },
      { exchange: 'venue_c', ticker: 'COV', ts: T + 1000, side: 'bid', price: '1', quantity: '2' },
      { exchange: 'venue_c', ticker: 'COV', ts: NOW - 2 * DAY_MS, side: 'bid', price: '1', quantity: '2' },
    ]);
    await insertDeltaRows(
      h.ch,
      [T + 10, T + 20, T + 2000].map((ts, i) => ({
        exchange: 'venue_c' as const,
        ticker: 'COV',
        ts,
        sequence: i,
        side: 'bid' as const,
        price: '1',
        quantity_delta: '1',
      })),
    );
    await insertGapRows(h.ch, [
      {
        exchange: 'venue_c',
        ticker: 'COV',
        from_ts: NOW - 3 * DAY_MS,
        to_ts: NOW - 2 * DAY_MS,
        reason: 'recorder_start',
        detected_at: NOW - 2 * DAY_MS,
      },
      {
        exchange: 'venue_c',
        ticker: 'COV',
        from_ts: T + 2000,
        to_ts: T + 5000,
        reason: 'disconnect',
        detected_at: T + 5001,
      },
    ]);
  });

  it('first and last ts and rows per kind inside the window, every gap overlapping it', async () => {
    expect((await get('/api/venue_c/coverage/COV')).body).toEqual({
      exchange: 'venue_c',
      ticker: 'COV',
      start_ts: iso(HISTORY_START_MS),
      end_ts: null,
      snapshots: { rows: 4, books: 3, first_ts: iso(NOW - 2 * DAY_MS), last_ts: iso(T + 1000) },
      deltas: { rows: 3, first_ts: iso(T + 10), last_ts: iso(T + 2000) },
      verifications: { count: 0, first_ts: null, last_ts: null, methods: { rest_book: 0, checksum: 0, snapshot: 0 } },
      gaps: [
        {
          from_ts: iso(NOW - 3 * DAY_MS),
          to_ts: iso(NOW - 2 * DAY_MS),
          reason: 'recorder_start',
          detected_at: iso(NOW - 2 * DAY_MS),
        },
        { from_ts: iso(T + 2000), to_ts: iso(T + 5000), reason: 'disconnect', detected_at: iso(T + 5001) },
      ],
      window: { start_ts: iso(HISTORY_START_MS), rule: 'full_history', days: null },
    });
    // Anonymous: the last day only, and the answer says why.
    const anon = (await get('/api/venue_c/coverage/COV', '')).body;
    expect(anon.start_ts).toBe(iso(NOW - DAY_MS));
    expect(anon.window).toEqual({ start_ts: iso(NOW - DAY_MS), rule: 'anonymous', days: 1 });
    // A key's max_data_age_days, and full_history_prefixes matching the ticker.
    const limited = await h.key({ max_data_age_days: 2 });
    expect((await get('/api/venue_c/coverage/COV', limited)).body.window).toEqual({
      start_ts: iso(NOW - 2 * DAY_MS),
      rule: 'max_data_age_days',
      days: 2,
    });
    const full = await h.key({ max_data_age_days: 2, full_history_prefixes: ['co'] });
    expect((await get('/api/venue_c/coverage/COV', full)).body.window).toEqual({
      start_ts: iso(HISTORY_START_MS),
      rule: 'full_history_prefix',
      days: null,
    });
    // start_ts narrows the figures, not the window.
    const narrowed = (await get(`/api/venue_c/coverage/COV?start_ts=${iso(T)}`, '')).body;
    expect([narrowed.start_ts, narrowed.window.start_ts]).toEqual([iso(T), iso(NOW - DAY_MS)]);
    expect(anon.snapshots).toEqual({ rows: 3, books: 2, first_ts: iso(T), last_ts: iso(T + 1000) });
    expect(anon.gaps.map((g: { reason: string }) => g.reason)).toEqual(['disconnect']);
    // A range with nothing recorded in it, and none inside a gap: "no rows" is not "not recorded".
    const quiet = (await get(`/api/venue_c/coverage/COV?start_ts=${iso(T + 5001)}&end_ts=${iso(T + 9000)}`)).body;
    expect(quiet).toMatchObject({
      snapshots: { rows: 0, books: 0, first_ts: null, last_ts: null },
      deltas: { rows: 0 },
      gaps: [],
    });
    const missing = (await get(`/api/venue_c/coverage/COV?start_ts=${iso(T + 3000)}&end_ts=${iso(T + 4000)}`)).body;
    expect(missing).toMatchObject({ deltas: { rows: 0 }, gaps: [{ reason: 'disconnect' }] });
    const empty = await get(`/api/venue_c/coverage/COV?end_ts=2026-03-01T00:00:00Z`);
    expect(empty.body).toMatchObject({ snapshots: { rows: 0 }, deltas: { rows: 0 }, gaps: [] });
  });
});
