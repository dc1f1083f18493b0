/**
 * The history API against the real ClickHouse and Redis of `./dev test`: every rule of the spec at its edges.
 * The clock is pinned at NOW; rows sit exactly on and one millisecond beside each window edge.
 */
import request from 'supertest';
import { DAY_MS, HISTORY_START_MS } from '@depthgate/auth';
import { insertDeltaRows, insertSnapshotRows, type DeltaRow, type SnapshotRow } from '@depthgate/history-store';
import { createHarness, type Harness } from '../testing/harness';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0, 0);
const A = 'KXBTCD-26MAR07-T100000';
const B = 'KXETHD-26MAR07-T3000';
const F = 'KX_UNDERSCORE';
const DEEP = 'KXDEEP-26JUN01-T1';

const t0 = HISTORY_START_MS - 1;
const t1 = HISTORY_START_MS;
const t2 = HISTORY_START_MS + 3_600_000;
const t3 = NOW - 2 * DAY_MS - 1;
const t4 = NOW - 2 * DAY_MS;
const t5 = NOW - DAY_MS - 1;
const t6 = NOW - DAY_MS;
const t7 = NOW - 1000;
const BOOKS = [t0, t1, t2, t3, t4, t5, t6, t7];
const iso = (ms: number) => new Date(ms).toISOString();

function book(ticker: string, ts: number): SnapshotRow[] {
  // Inserted asks first and out of price order: the answer must still be bids then asks, each by price.
  return [
    { exchange: 'venue_b', ticker, ts, side: 'ask', price: '0.5100', quantity: '7.00' },
    { exchange: 'venue_b', ticker, ts, side: 'ask', price: '0.5000', quantity: '20.25' },
    { exchange: 'venue_b', ticker, ts, side: 'bid', price: '0.4800', quantity: '150.00' },
    { exchange: 'venue_b', ticker, ts, side: 'bid', price: '0.4700', quantity: '100' },
  ];
}
const bookRows = (ts: number) => [
  { ts: iso(ts), side: 'bid', price: '0.47', quantity: '100' },
  { ts: iso(ts), side: 'bid', price: '0.48', quantity: '150' },
  { ts: iso(ts), side: 'ask', price: '0.5', quantity: '20.25' },
  { ts: iso(ts), side: 'ask', price: '0.51', quantity: '7' },
];
const delta = (ts: number, sequence: number, quantity_delta: string, price = '0.4800'): DeltaRow => ({
  exchange: 'venue_b',
  ticker: A,
  ts,
  sequence,
  side: 'bid',
  price,
  quantity_delta,
});

let h: Harness;
let full: string;
let kx2d: string;
let fh: string;
let btc: string;

beforeAll(async () => {
  h = await createHarness({ now: NOW, env: { RATE_LIMIT_ANONYMOUS_RPM: '100000', MAX_LIMIT: '50000' } });
  await insertSnapshotRows(
    h.ch,
    BOOKS.flatMap((ts) => book(A, ts)),
  );
  await insertSnapshotRows(h.ch, book(F, t7));
  // Two books of 1,500 levels: longer than the slack the service reads past the limit to find a book's end.
  await insertSnapshotRows(
    h.ch,
    [t6, t7].flatMap((ts) =>
      Array.from({ length: 1500 }, (_, i): SnapshotRow => ({
        exchange: 'venue_b',
        ticker: DEEP,
        ts,
        side: i < 750 ? 'bid' : 'ask',
        price: i < 750 ? `0.${String(1000 + i).padStart(4, '0')}` : `0.${String(5000 + i).padStart(4, '0')}`,
        quantity: String(i + 1),
      })),
    ),
  );
  // Equal ts, inserted in three parts in the order 12, 10, 11: the answer must come in sequence order.
  await insertDeltaRows(h.ch, [delta(t1, 12, '-150.00')]);
  await insertDeltaRows(h.ch, [delta(t1, 10, '5.00'), delta(t0, 1, '1')]);
  await insertDeltaRows(h.ch, [delta(t1, 11, '-0.01', '0.4700')]);
  await insertDeltaRows(h.ch, [
    delta(t4, 20, '12345678901234567890.123456789012345678', '0.4900'),
    delta(t4 + 1, 21, '-12345678901234567890.123456789012345678', '0.4900'),
    delta(t6, 31, '0.00121425'),
    delta(t6, 30, '-0.5'),
    delta(t7, 40, '1'),
  ]);
  await insertDeltaRows(h.ch, [{ ...delta(t2, 5, '3'), ticker: B }]);
  await insertSnapshotRows(h.ch, [
    { exchange: 'venue_c', ticker: 'BTCUSD', ts: t7, side: 'bid', price: '90123.45', quantity: '0.00121425' },
    { exchange: 'venue_c', ticker: 'BTCUSD', ts: t7, side: 'ask', price: '90123.46', quantity: '1.5' },
    {
      exchange: 'venue_a_us',
      ticker: 'fed-cuts-rates-in-april-2026',
      ts: t5,
      side: 'bid',
      price: '0.555',
      quantity: '0.50',
    },
  ]);
  await insertDeltaRows(h.ch, [
    {
      exchange: 'venue_c',
      ticker: 'GEMI-FEDJAN26-DN25',
      ts: t6,
      sequence: 1,
      side: 'ask',
      price: '0.40',
      quantity_delta: '3',
    },
  ]);
  full = await h.key({});
  kx2d = await h.key({ ticker_prefixes: ['kx'], max_data_age_days: 2 });
  fh = await h.key({ max_data_age_days: 2, full_history_prefixes: ['KXBTC'] });
  btc = await h.key({ ticker_prefixes: ['BTC'] });
});

afterAll(async () => {
  await h?.close();
});

const get = (path: string, key?: string, headers: Record<string, string> = {}) => {
  const r = request(h.app).get(path).set(headers);
  return key ? r.set('x-api-key', key) : r;
};

describe('service endpoints', () => {
  it('/health is the spec’s body; /ready checks ClickHouse and Redis; /openapi.json describes the API', async () => {
    expect((await get('/health')).body).toEqual({ status: 'ok' });
    const ready = await get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ redis: true, clickhouse: true });
    const doc = await get('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/{exchange}/tickers',
        '/api/{exchange}/snapshots/{ticker}',
        '/api/{exchange}/deltas/{ticker}',
      ]),
    );
    const metrics = await get('/metrics');
    expect(metrics.text).toContain('history_rows_streamed_total');
  });
});

describe('GET /api/{exchange}/tickers', () => {
  it('lists tickers sorted, with count, for the exchange of the path', async () => {
    const res = await get('/api/venue_b/tickers', full);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ exchange: 'venue_b', count: 4, tickers: [A, DEEP, B, F] });
    expect(Object.keys(res.body)).toEqual(['exchange', 'count', 'tickers']);
  });

  it('filters by prefix case-insensitively', async () => {
    for (const prefix of ['kxb', 'KXB', 'kXb', A]) {
      expect((await get(`/api/venue_b/tickers?prefix=${prefix}`, full)).body.tickers).toEqual([A]);
      expect((await get(`/api/venue_b/tickers?prefix=${prefix}`, full)).body.count).toBe(1);
    }
    expect((await get('/api/venue_c/tickers?prefix=btc', full)).body.tickers).toEqual(['BTCUSD']);
    expect((await get('/api/venue_c/tickers?prefix=zzz', full)).body).toEqual({
      exchange: 'venue_c',
      count: 0,
      tickers: [],
    });
  });

  it('takes prefix literally: _ and % are not wildcards; a prefix outside the ticker grammar matches nothing', async () => {
    expect((await get('/api/venue_b/tickers?prefix=KX_', full)).body.tickers).toEqual([F]);
    expect((await get('/api/venue_b/tickers?prefix=K_', full)).body.tickers).toEqual([]);
    for (const hostile of ['%25', 'KX%25', "KX'", "'%20OR%20'1'%3D'1", '%5C', 'x'.repeat(65)]) {
      const res = await get(`/api/venue_b/tickers?prefix=${hostile}`, full);
      expect(res.status).toBe(200);
      expect(res.body.tickers).toEqual([]);
    }
  });

  it('applies the key’s ticker_prefixes whatever prefix says (intersection)', async () => {
    expect((await get('/api/venue_c/tickers', btc)).body.tickers).toEqual(['BTCUSD']);
    expect((await get('/api/venue_c/tickers?prefix=gemi', btc)).body.tickers).toEqual([]);
    expect((await get('/api/venue_c/tickers?prefix=BtC', btc)).body.tickers).toEqual(['BTCUSD']);
    expect((await get('/api/venue_b/tickers', btc)).body).toEqual({ exchange: 'venue_b', count: 0, tickers: [] });
  });

  it('lists only tickers with data inside the caller’s window', async () => {
    // B's only row is from March: outside the 2-day window of kx2d and the anonymous day.
    expect((await get('/api/venue_b/tickers', kx2d)).body.tickers).toEqual([A, DEEP, F]);
    expect((await get('/api/venue_b/tickers')).body.tickers).toEqual([A, DEEP, F]);
    expect((await get('/api/venue_a_us/tickers')).body.tickers).toEqual([]);
    expect((await get('/api/venue_a_us/tickers', full)).body.tickers).toEqual(['fed-cuts-rates-in-april-2026']);
  });
});

describe('GET /api/{exchange}/snapshots/{ticker}', () => {
  it('streams rows in ts order (bids then asks by price within a book), count after rows', async () => {
    const res = await get(`/api/venue_b/snapshots/${A}`, full);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      exchange: 'venue_b',
      ticker: A,
      rows: [t1, t2, t3, t4, t5, t6, t7].flatMap(bookRows),
      count: 28,
    });
    expect(res.text.startsWith(`{"exchange":"venue_b","ticker":"${A}","rows":[{"ts":"2026-03-07T00:00:00.000Z",`)).toBe(
      true,
    );
    expect(res.text.endsWith('],"count":28}')).toBe(true);
  });

  it('start_ts and end_ts are inclusive', async () => {
    const res = await get(`/api/venue_b/snapshots/${A}?start_ts=${iso(t4)}&end_ts=${iso(t6)}`, full);
    expect(res.body.rows).toEqual([t4, t5, t6].flatMap(bookRows));
    const inner = await get(`/api/venue_b/snapshots/${A}?start_ts=${iso(t4 + 1)}&end_ts=${iso(t6 - 1)}`, full);
    expect(inner.body.rows).toEqual(bookRows(t5));
    const one = await get(`/api/venue_b/snapshots/${A}?start_ts=${iso(t7)}&end_ts=${iso(t7)}`, full);
    expect(one.body.count).toBe(4);
  });

  it('an RFC 3339 fraction of any length: sub-milliseconds round inwards (start_ts up, end_ts down)', async () => {
    const frac = (t: number, sub: string) => `${iso(t).slice(0, -1)}${sub}Z`; // iso(t) ends ".mmmZ"
    const exact = await get(
      `/api/venue_b/snapshots/${A}?start_ts=${frac(t4, '0000000')}&end_ts=${frac(t6, '0000000')}`,
      full,
    );
    expect(exact.status).toBe(200);
    expect(exact.body.rows).toEqual([t4, t5, t6].flatMap(bookRows));
    const inner = await get(
      `/api/venue_b/snapshots/${A}?start_ts=${frac(t4, '0000001')}&end_ts=${frac(t6, '9999999')}`,
      full,
    );
    expect(inner.status).toBe(200);
    expect(inner.body.rows).toEqual([t5, t6].flatMap(bookRows));
  });

  it('limit keeps the earliest rows and never cuts a book: it is rounded up to whole books', async () => {
    expect((await get(`/api/venue_b/snapshots/${A}?limit=1`, full)).body).toMatchObject({
      rows: bookRows(t1),
      count: 4,
    });
    expect((await get(`/api/venue_b/snapshots/${A}?limit=4`, full)).body.count).toBe(4);
    expect((await get(`/api/venue_b/snapshots/${A}?limit=5`, full)).body.rows).toEqual([t1, t2].flatMap(bookRows));
    const late = await get(`/api/venue_b/snapshots/${A}?limit=1&start_ts=${iso(t6)}`, full);
    expect(late.body.rows).toEqual(bookRows(t6));
  });

  it('completes books longer than the rows it reads ahead (1,500-level books)', async () => {
    const one = await get(`/api/venue_b/snapshots/${DEEP}?limit=1`, full);
    expect(one.body.count).toBe(1500);
    expect(new Set(one.body.rows.map((r: { ts: string }) => r.ts))).toEqual(new Set([iso(t6)]));
    expect(one.body.rows[0]).toEqual({ ts: iso(t6), side: 'bid', price: '0.1', quantity: '1' });
    expect(one.body.rows[1499]).toEqual({ ts: iso(t6), side: 'ask', price: '0.6499', quantity: '1500' });
    const both = await get(`/api/venue_b/snapshots/${DEEP}?limit=1600`, full);
    expect(both.body.count).toBe(3000);
    expect(both.body.rows.slice(1500)).toEqual(one.body.rows.map((r: object) => ({ ...r, ts: iso(t7) })));
    const exact = await get(`/api/venue_b/snapshots/${DEEP}?limit=1500`, full);
    expect(exact.body.count).toBe(1500);
  });

  it('clamps start_ts to 7 March 2026 for everyone', async () => {
    const res = await get(`/api/venue_b/snapshots/${A}?start_ts=2026-01-01T00:00:00Z&limit=1`, full);
    expect(res.body.rows[0].ts).toBe('2026-03-07T00:00:00.000Z');
    const end = await get(`/api/venue_b/snapshots/${A}?end_ts=${iso(t0)}`, full);
    expect(end.body).toEqual({ exchange: 'venue_b', ticker: A, rows: [], count: 0 });
  });

  it('takes integer epoch milliseconds wherever it takes RFC 3339: the same rows, clamped and windowed alike', async () => {
    const same = async (path: (ts: (ms: number) => string) => string, key?: string) => {
      const byText = await get(path(iso), key);
      const byMs = await get(path(String), key);
      expect(byText.status).toBe(200);
      expect(byMs.status).toBe(200);
      expect(byMs.text).toBe(byText.text);
      return byText.body as { rows?: unknown[]; count?: number };
    };
    // Inclusive bounds at the millisecond, in every format; cursors carry the range alike.
    for (const format of ['json', 'ndjson', 'csv']) {
      const s = await same(
        (ts) => `/api/venue_b/snapshots/${A}?start_ts=${ts(t4)}&end_ts=${ts(t6)}&format=${format}`,
        full,
      );
      if (format === 'json') expect(s.count).toBe(12);
    }
    expect(
      (await same((ts) => `/api/venue_b/deltas/${A}?start_ts=${ts(t6)}&end_ts=${ts(t6)}`, full)).rows,
    ).toHaveLength(2);
    await same((ts) => `/api/venue_b/deltas/${A}?start_ts=${ts(t4)}&limit=1`, full);
    await same((ts) => `/api/venue_b/trades/${A}?start_ts=${ts(t1)}&end_ts=${ts(t7)}`, full);
    await same((ts) => `/api/venue_b/bars/${A}?interval=1h&start_ts=${ts(t1)}&end_ts=${ts(t7)}`, full);
    await same((ts) => `/api/venue_b/coverage/${A}?start_ts=${ts(t4)}&end_ts=${ts(t6)}`, full);
    await same((ts) => `/api/venue_b/book/${A}?at=${ts(t6 + 1)}`, full);
    // Clamped to 7 March 2026 and to the caller's window the same way.
    const clamped = await same(
      (ts) => `/api/venue_b/snapshots/${A}?start_ts=${ts(Date.UTC(2026, 0, 1))}&limit=1`,
      full,
    );
    expect((clamped.rows?.[0] as { ts: string }).ts).toBe('2026-03-07T00:00:00.000Z');
    await same((ts) => `/api/venue_b/snapshots/${A}?start_ts=${ts(t1)}`, kx2d);
    await same((ts) => `/api/venue_b/deltas/${A}?start_ts=${ts(t1)}`);
  });

  it('max_data_age_days: the window starts exactly now − days', async () => {
    const res = await get(`/api/venue_b/snapshots/${A}?start_ts=${iso(t1)}`, kx2d);
    expect(res.body.rows).toEqual([t4, t5, t6, t7].flatMap(bookRows));
  });

  it('full_history_prefixes bypass max_data_age_days for matching tickers only', async () => {
    expect((await get(`/api/venue_b/snapshots/${A}`, fh)).body.count).toBe(28);
    expect((await get(`/api/venue_b/snapshots/${A.toLowerCase()}`, fh)).body.count).toBe(28);
    const other = await get(`/api/venue_b/deltas/${B}`, fh);
    expect(other.body).toEqual({ exchange: 'venue_b', ticker: B, rows: [], count: 0 });
    expect((await get(`/api/venue_b/deltas/${B}`, full)).body.count).toBe(1);
  });

  it('anonymous callers see the last day only, whatever start_ts says', async () => {
    for (const q of ['', `?start_ts=${iso(t1)}`]) {
      const res = await get(`/api/venue_b/snapshots/${A}${q}`);
      expect(res.body.rows).toEqual([t6, t7].flatMap(bookRows));
    }
  });

  it('a ticker outside ticker_prefixes answers exactly like one that does not exist', async () => {
    const hidden = await get(`/api/venue_b/snapshots/${A}`, btc);
    const missing = await get(`/api/venue_b/snapshots/KXNOPE-1`, full);
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.body).toEqual({ error: 'unknown_ticker', message: `Unknown ticker "${A}" on venue_b` });
    expect(missing.body).toEqual({ error: 'unknown_ticker', message: 'Unknown ticker "KXNOPE-1" on venue_b' });
    const strip = (h: Record<string, unknown>) =>
      Object.keys(h)
        .filter((k) => !['date', 'x-request-id', 'content-length', 'etag'].includes(k))
        .sort();
    expect(strip(hidden.headers)).toEqual(strip(missing.headers));
    expect((await get(`/api/venue_b/deltas/${A}`, btc)).body.error).toBe('unknown_ticker');
  });

  it('matches the ticker case-insensitively and answers with the stored name', async () => {
    const res = await get(`/api/venue_b/snapshots/${A.toLowerCase()}?limit=1`, full);
    expect(res.body.ticker).toBe(A);
    expect(res.body.count).toBe(4);
  });

  it('prices and quantities are exact decimal strings, timestamps UTC RFC 3339 with milliseconds', async () => {
    const res = await get('/api/venue_c/snapshots/BTCUSD', full);
    expect(res.body.rows).toEqual([
      { ts: iso(t7), side: 'bid', price: '90123.45', quantity: '0.00121425' },
      { ts: iso(t7), side: 'ask', price: '90123.46', quantity: '1.5' },
    ]);
    expect(res.body.rows[0].ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('a ticker with deltas but no snapshots answers an empty list', async () => {
    expect((await get(`/api/venue_b/snapshots/${B}`, full)).body).toEqual({
      exchange: 'venue_b',
      ticker: B,
      rows: [],
      count: 0,
    });
  });

  it('gzip when asked (Accept-Encoding: gzip), identity otherwise, same JSON', async () => {
    // (superagent offers gzip by default, so "plain" says identity explicitly)
    const plain = await get(`/api/venue_b/snapshots/${A}`, full, { 'Accept-Encoding': 'identity' });
    const zipped = await get(`/api/venue_b/snapshots/${A}`, full, { 'Accept-Encoding': 'gzip' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['vary']).toMatch(/Accept-Encoding/i);
    expect(zipped.body).toEqual(plain.body);
    const br = await get(`/api/venue_b/snapshots/${A}`, full, { 'Accept-Encoding': 'br' });
    expect(br.headers['content-encoding']).toBeUndefined();
    const tickers = await get('/api/venue_b/tickers', full, { 'Accept-Encoding': 'gzip' });
    expect(tickers.body.count).toBe(4);
  });
});

describe('GET /api/{exchange}/deltas/{ticker}', () => {
  it('orders equal ts by sequence, signed exact decimals, earliest first', async () => {
    const res = await get(`/api/venue_b/deltas/${A}`, full);
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([
      { ts: iso(t1), sequence: 10, side: 'bid', price: '0.48', quantity_delta: '5' },
      { ts: iso(t1), sequence: 11, side: 'bid', price: '0.47', quantity_delta: '-0.01' },
      { ts: iso(t1), sequence: 12, side: 'bid', price: '0.48', quantity_delta: '-150' },
      {
        ts: iso(t4),
        sequence: 20,
        side: 'bid',
        price: '0.49',
        quantity_delta: '12345678901234567890.123456789012345678',
      },
      {
        ts: iso(t4 + 1),
        sequence: 21,
        side: 'bid',
        price: '0.49',
        quantity_delta: '-12345678901234567890.123456789012345678',
      },
      { ts: iso(t6), sequence: 30, side: 'bid', price: '0.48', quantity_delta: '-0.5' },
      { ts: iso(t6), sequence: 31, side: 'bid', price: '0.48', quantity_delta: '0.00121425' },
      { ts: iso(t7), sequence: 40, side: 'bid', price: '0.48', quantity_delta: '1' },
    ]);
    expect(res.text.endsWith('],"count":8}')).toBe(true);
  });

  it('limit 1 and 2 keep the earliest rows by (ts, sequence)', async () => {
    expect(
      (await get(`/api/venue_b/deltas/${A}?limit=1`, full)).body.rows.map((r: { sequence: number }) => r.sequence),
    ).toEqual([10]);
    expect(
      (await get(`/api/venue_b/deltas/${A}?limit=2`, full)).body.rows.map((r: { sequence: number }) => r.sequence),
    ).toEqual([10, 11]);
  });

  it('ts equal to start_ts and end_ts are included', async () => {
    const res = await get(`/api/venue_b/deltas/${A}?start_ts=${iso(t6)}&end_ts=${iso(t6)}`, full);
    expect(res.body.rows.map((r: { sequence: number }) => r.sequence)).toEqual([30, 31]);
    const offset = await get(
      `/api/venue_b/deltas/${A}?start_ts=${encodeURIComponent('2026-05-31T14:00:00.000+02:00')}`,
      full,
    );
    expect(offset.body.rows.map((r: { sequence: number }) => r.sequence)).toEqual([30, 31, 40]);
  });

  it('windows for keys and anonymous callers at the millisecond', async () => {
    expect(
      (await get(`/api/venue_b/deltas/${A}`, kx2d)).body.rows.map((r: { sequence: number }) => r.sequence),
    ).toEqual([20, 21, 30, 31, 40]);
    expect((await get(`/api/venue_b/deltas/${A}`)).body.rows.map((r: { sequence: number }) => r.sequence)).toEqual([
      30, 31, 40,
    ]);
    h.clock.now = NOW + 1; // one millisecond later the rows at exactly now − 1 day fall out
    try {
      expect((await get(`/api/venue_b/deltas/${A}`)).body.rows.map((r: { sequence: number }) => r.sequence)).toEqual([
        40,
      ]);
    } finally {
      h.clock.now = NOW;
    }
  });
});

describe('errors', () => {
  const expectError = async (path: string, status: number, error: string, key: string | undefined = full) => {
    const res = await get(path, key);
    expect(res.status).toBe(status);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
    expect(res.body.error).toBe(error);
    expect(typeof res.body.message).toBe('string');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return res.body.message as string;
  };

  it('unknown exchange → 404 unknown_exchange; real platform names are accepted as aliases', async () => {
    expect(await expectError('/api/venue_x/tickers', 404, 'unknown_exchange')).toBe(
      'Unknown exchange "venue_x": use venue_b (kalshi), venue_c (gemini), venue_a_us (polymarket_us, polymarket-us), venue_a_clob (polymarket, polymarket_clob, polymarket-clob), venue_d (coinbase)',
    );
    await expectError(`/api/nope/snapshots/${A}`, 404, 'unknown_exchange');
    const alias = await get(`/api/kalshi/snapshots/${A}?limit=1`, full);
    expect(alias.body).toMatchObject({ exchange: 'venue_b', ticker: A, count: 4 });
    // The history's `polymarket` is the CLOB (the recorded Polymarket books), `coinbase` is Coinbase Exchange.
    for (const [name, exchange] of [
      ['polymarket', 'venue_a_clob'],
      ['Polymarket-CLOB', 'venue_a_clob'],
      ['coinbase', 'venue_d'],
    ]) {
      expect((await get(`/api/${name}/tickers`, full)).body).toEqual({ exchange, count: 0, tickers: [] });
    }
  });

  it('unknown or malformed ticker → 404 unknown_ticker', async () => {
    await expectError('/api/venue_b/snapshots/NOPE', 404, 'unknown_ticker');
    await expectError(`/api/venue_b/deltas/${encodeURIComponent("KX'; DROP TABLE deltas; --")}`, 404, 'unknown_ticker');
    await expectError(`/api/venue_b/deltas/${'x'.repeat(65)}`, 404, 'unknown_ticker');
    await expectError('/api/venue_c/snapshots/fed-cuts-rates-in-april-2026', 404, 'unknown_ticker');
  });

  it('timestamps neither RFC 3339 nor epoch milliseconds → 400 invalid_timestamp naming both; start after end → 400', async () => {
    for (const q of [
      'start_ts=yesterday',
      'end_ts=2026-03-07',
      'end_ts=2026-02-30T00:00:00Z',
      'start_ts=-1772841600000',
      'start_ts=1772841600000.5',
      'end_ts=1.7728416e12',
      'end_ts=17728416000000000',
      'start_ts=0',
    ]) {
      const message = await expectError(`/api/venue_b/snapshots/${A}?${q}`, 400, 'invalid_timestamp');
      expect(message).toMatch(/RFC 3339 timestamp such as .* or integer epoch milliseconds \(13 digits\) such as/);
    }
    for (const path of [`/api/venue_b/trades/${A}?end_ts=1772841600`, `/api/venue_b/book/${A}?at=1772841600`]) {
      expect(await expectError(path, 400, 'invalid_timestamp')).toMatch(
        /\(1772841600 looks like epoch seconds; give milliseconds, 1772841600000\)/,
      );
    }
    expect(
      await expectError(`/api/venue_b/deltas/${A}?start_ts=${iso(t7)}&end_ts=${iso(t6)}`, 400, 'invalid_timestamp'),
    ).toBe('start_ts is after end_ts');
  });

  it('limit not a positive integer, or above the maximum → 400 invalid_limit', async () => {
    for (const q of ['limit=0', 'limit=-1', 'limit=1.5', 'limit=abc', 'limit=', 'limit=1&limit=2']) {
      await expectError(`/api/venue_b/deltas/${A}?${q}`, 400, 'invalid_limit');
    }
    expect(await expectError(`/api/venue_b/snapshots/${A}?limit=50001`, 400, 'invalid_limit')).toBe(
      'limit 50001 is above the maximum of 50000',
    );
  });

  it('an unknown route → 404 not_found; a bad key → 401 unauthorized', async () => {
    await expectError('/api/venue_b/quotes/X', 404, 'not_found');
    expect(await expectError('/api/venue_b/tickers', 401, 'unauthorized', 'dg_not-a-key')).toBe('Invalid API key');
  });
});

describe('rate limits', () => {
  let limited: Harness;
  beforeAll(async () => {
    limited = await createHarness({ now: NOW, env: { RATE_LIMIT_ANONYMOUS_RPM: '2' } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('per client IP for anonymous callers and per key', async () => {
    const anon = [];
    for (let i = 0; i < 3; i++) anon.push((await request(limited.app).get('/api/venue_b/tickers')).status);
    expect(anon).toEqual([200, 200, 429]);
    const key = await limited.key({ requests_per_minute: 2 });
    const keyed = [];
    for (let i = 0; i < 3; i++)
      keyed.push((await request(limited.app).get('/api/venue_b/tickers').set('x-api-key', key)).status);
    expect(keyed).toEqual([200, 200, 429]);
    const res = await request(limited.app).get('/api/venue_b/tickers').set('x-api-key', key);
    expect(res.body.error).toBe('rate_limited');
    expect(res.headers['retry-after']).toBeDefined();
  });
});
