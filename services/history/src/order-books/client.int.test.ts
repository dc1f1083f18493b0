/**
 * `@depthgate/client` against the real history service (ClickHouse and Redis of `./dev test`), on generated books
 * with recorded gaps: its iterators give exactly the service's rows whichever way they page; its rule 7 (`rebuild`,
 * `replay`) gives exactly the service's book endpoint at random moments, and says `in_gap` where the service does;
 * error answers arrive as typed errors with the request id.
 */
import { insertDeltaRows, insertGapRows, storeOptions, type GapRow } from '@depthgate/history-store';
import { Rng } from '@depthgate/service-kit';
import {
  BookError,
  HistoryClient,
  HttpError,
  OrderBook,
  bookChecksum,
  type DeltaRow,
  type SnapshotRow,
} from '@depthgate/client';
import { planGeneration, runGeneration } from '@depthgate/history-tools';
import { createHarness, type Harness } from '../testing/harness';

const FROM = Date.UTC(2026, 4, 1);
const TO = FROM + 3 * 3_600_000;
const TICKERS = [
  { exchange: 'venue_b' as const, ticker: 'KXBTCD-26MAY01-T95000' },
  { exchange: 'venue_c' as const, ticker: 'BTCUSD' },
];
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A ticker of edge cases at EDGE_TS: 25 deltas at that ms (a run longer than two pages of 10), nine one ms apart, three
 * identical rows (doubled, as a repeated insert leaves them) where a page of 10 from EDGE_TS + 1 ends, ten more.
 */
const EDGE = { exchange: 'venue_b' as const, ticker: 'KXEDGE-26MAY01-T1' };
const EDGE_TS = FROM + 30 * 60_000;
function edgeDeltas() {
  const row = (i: number, ms: number, sequence = i + 1) => ({
    ...EDGE,
    ts: EDGE_TS + ms,
    sequence,
    side: i % 2 ? ('ask' as const) : ('bid' as const),
    price: i % 2 ? '0.6' : '0.4',
    quantity_delta: String(i + 1),
  });
  return [
    ...Array.from({ length: 25 }, (_, i) => row(i, 0)),
    ...Array.from({ length: 9 }, (_, i) => row(25 + i, 1 + i)),
    ...Array.from({ length: 3 }, () => row(34, 10)),
    ...Array.from({ length: 10 }, (_, i) => row(35 + i, 11 + i)),
  ];
}

let h: Harness;
let url: string;
let key: string;
let client: HistoryClient;
/** Per ticker: the gaps inserted, each ending at a stored snapshot (as the recorder writes them). */
const gaps = new Map<string, { from: number; to: number }[]>();

beforeAll(async () => {
  h = await createHarness({ now: TO + 60_000, env: { RATE_LIMIT_DEFAULT_RPM: '1000000' } });
  key = await h.key({});
  ({ url } = await h.listen());
  client = new HistoryClient({ baseUrl: url, apiKey: key });
  const { plan } = planGeneration({
    tickers: TICKERS,
    from: FROM,
    to: TO,
    snapshotIntervalMs: 300_000,
    seed: 'client',
    batchRows: 5000,
    eventsPerMinute: 30,
  });
  await runGeneration(h.ch, plan, { workers: 0, store: storeOptions(h.config) });
  const rows: GapRow[] = [];
  for (const { exchange, ticker } of TICKERS) {
    const books = [...new Set((await h.db.storedRows({ exchange, ticker })).snapshots.map((s) => s.ts))].sort(
      (a, b) => a - b,
    );
    // A gap from inside one 5-minute stretch to the book that ends a later one.
    const list = [
      { from: (books[4] as number) + 61_000, to: books[6] as number },
      { from: (books[20] as number) + 1_000, to: books[21] as number },
    ];
    gaps.set(ticker, list);
    for (const g of list)
      rows.push({ exchange, ticker, from_ts: g.from, to_ts: g.to, reason: 'reconnect', detected_at: g.to });
  }
  await insertGapRows(h.ch, rows);
  await insertDeltaRows(h.ch, edgeDeltas());
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe.each(TICKERS)('$exchange $ticker', ({ exchange, ticker }) => {
  it('deltas() and snapshots() give exactly the service’s rows, streamed or paged, cursors followed', async () => {
    const all = await client.deltaPage(exchange, ticker, { start: FROM, limit: 1_000_000 });
    const books = await client.snapshotPage(exchange, ticker, { start: FROM, limit: 1_000_000 });
    expect(all.count).toBeGreaterThan(3000);
    const collect = async <R>(it: AsyncIterable<R>) => {
      const out: R[] = [];
      for await (const r of it) out.push(r);
      return out;
    };
    for (const transport of ['stream', 'pages'] as const) {
      const deltas = await collect(client.deltas(exchange, ticker, { start: FROM, pageSize: 777, transport }));
      expect(deltas).toEqual(all.rows);
      const snapshots = await collect(client.snapshots(exchange, ticker, { start: FROM, pageSize: 100, transport }));
      expect(snapshots).toEqual(books.rows);
    }
    // With gap markers: the rows are the same, and every inserted gap is among them once, in time order.
    const marked = await collect(client.deltas(exchange, ticker, { start: FROM, gaps: true, pageSize: 1000 }));
    expect(marked.filter((r): r is DeltaRow => !('type' in r))).toEqual(all.rows);
    const markers = marked.filter((r) => 'type' in r);
    const recorded = (await client.coverage(exchange, ticker, { start: FROM })).gaps;
    expect(recorded).toHaveLength(3); // the two inserted and the generator's seed_end
    expect(markers.map((m) => ('from_ts' in m ? m.from_ts : ''))).toEqual(recorded.map((g) => g.from_ts));
  });

  it('rebuild(at) equals the service’s book at 120 random moments (and checksums agree); in a gap both say so', async () => {
    const rng = new Rng('client-book', ticker);
    const first = (await client.coverage(exchange, ticker)).snapshots.first_ts as string;
    const start = Date.parse(first);
    const list = gaps.get(ticker) ?? [];
    const moments = Array.from({ length: 120 }, () => start + Math.floor(rng.float() * (TO - start - 120_000)));
    for (const g of list) moments.push(g.from, g.from + 1, g.to - 1, g.to);
    let inGap = 0;
    const expectedInGap = moments.filter((at) => list.some((g) => at >= g.from && at < g.to)).length;
    for (const at of moments) {
      const service = await client.book(exchange, ticker, { at });
      const insideGap = list.some((g) => at >= g.from && at < g.to);
      if (insideGap) {
        expect([iso(at), service.status]).toEqual([iso(at), 'in_gap']);
        const err = await client.rebuild(exchange, ticker, at).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(BookError);
        expect((err as BookError).code).toBe('in_gap');
        inGap++;
        continue;
      }
      if (service.status !== 'ok') throw new Error(`${iso(at)}: the service answered ${service.status}`);
      const book = await client.rebuild(exchange, ticker, at);
      expect({ at: iso(at), bids: book.bids(), asks: book.asks() }).toEqual({
        at: iso(at),
        bids: service.bids,
        asks: service.asks,
      });
      expect(book.snapshotTs === undefined ? null : iso(book.snapshotTs)).toBe(service.snapshot_ts);
      expect(book.checksum()).toBe(bookChecksum(service.bids, service.asks));
    }
    expect(inGap).toBe(expectedInGap);
    expect(inGap).toBeGreaterThanOrEqual(list.length * 2);
  });

  it('replay walks the range: every later snapshot equals the replayed book, gaps are reported and restarted from', async () => {
    let books = 0;
    let snapshots = 0;
    let restarts = 0;
    const seenGaps: string[] = [];
    let last: number | undefined;
    const first = Date.parse((await client.coverage(exchange, ticker)).snapshots.first_ts as string);
    for await (const e of client.replay(exchange, ticker, { from: first, to: TO - 1 })) {
      if (e.type === 'book') {
        expect(last === undefined || e.at > last).toBe(true);
        expect(Date.parse(e.ts)).toBe(e.at);
        last = e.at;
        books++;
      } else if (e.type === 'snapshot') {
        snapshots++;
        if (e.restarted) restarts++;
      } else seenGaps.push(e.gap.from_ts);
    }
    // The inserted gaps, restarted from at their ends, and the generator's seed_end gap, which ends at TO.
    const recorded = (await client.coverage(exchange, ticker, { start: first })).gaps;
    expect(seenGaps).toEqual(recorded.map((g) => g.from_ts));
    expect(recorded.map((g) => g.reason)).toEqual(['reconnect', 'reconnect', 'seed_end']);
    expect(restarts).toBe(2);
    expect(snapshots).toBeGreaterThan(30);
    expect(books).toBeGreaterThan(1000);
  });

  it('format=digest: a line per recorded book, its digest the client’s of that book’s rows; replay checks the later snapshots by them', async () => {
    const rows = (await client.snapshotPage(exchange, ticker, { start: FROM, limit: 1_000_000 })).rows;
    const books = new Map<string, SnapshotRow[]>();
    for (const r of rows) books.set(r.ts, [...(books.get(r.ts) ?? []), r]);
    const res = await fetch(`${url}/api/${exchange}/snapshots/${ticker}?start_ts=${iso(FROM)}&format=digest`, {
      headers: { 'X-API-Key': key, 'Accept-Encoding': 'gzip' },
    });
    expect([res.status, res.headers.get('content-type'), res.headers.get('content-encoding')]).toEqual([
      200,
      'application/x-ndjson; charset=utf-8',
      'gzip',
    ]);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(lines.pop()).toEqual({ type: 'end', count: books.size, next_cursor: null });
    expect(books.size).toBeGreaterThan(30);
    expect(lines).toEqual(
      [...books].map(([ts, book]) => ({ ts, levels: book.length, digest: OrderBook.fromSnapshot(book).digest() })),
    );
    // With a limit (rows, rounded up to whole books) the stream stops with a cursor; the walk gives the same lines.
    const walked: unknown[] = [];
    let pages = 0;
    for (let next: string | null = `start_ts=${iso(FROM)}`; next !== null; pages++) {
      const page = await fetch(`${url}/api/${exchange}/snapshots/${ticker}?${next}&format=digest&limit=100`, {
        headers: { 'X-API-Key': key },
      });
      const got = (await page.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type?: string; count?: number; next_cursor?: string | null });
      const end = got.pop() as { count: number; next_cursor: string | null };
      expect([end.count, got.every((l) => l.type === undefined)]).toEqual([got.length, true]);
      walked.push(...got);
      next = end.next_cursor === null ? null : `cursor=${end.next_cursor}`;
    }
    expect(walked).toEqual(lines);
    expect(pages).toBeGreaterThan(3);
    // The replay asks for the digests once, and for rows only to start and to restart after each gap.
    const asked: string[] = [];
    const counting = new HistoryClient({
      baseUrl: url,
      apiKey: key,
      fetch: (input, init) => {
        asked.push(String(input instanceof Request ? input.url : input));
        return fetch(input, init);
      },
    });
    const first = Date.parse((await client.coverage(exchange, ticker)).snapshots.first_ts as string);
    let checked = 0;
    for await (const e of counting.replay(exchange, ticker, { from: first, to: TO - 1 })) {
      if (e.type === 'snapshot' && !e.restarted) checked++;
    }
    const snapshotReads = asked.filter((u) => u.includes('/snapshots/'));
    expect(snapshotReads.filter((u) => u.includes('format=digest'))).toHaveLength(1);
    expect(snapshotReads.filter((u) => !u.includes('format=digest')).length).toBeLessThanOrEqual(1 + 2);
    expect(checked).toBeGreaterThan(30);
  });
});

describe('edges of a range', () => {
  const { exchange, ticker } = EDGE;
  /** The service's own JSON answer to a query given as text (no client between). */
  const serviceRows = async (query: string) => {
    const res = await fetch(`${url}/api/${exchange}/deltas/${ticker}?limit=1000&${query}`, {
      headers: { 'x-api-key': key },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { rows: DeltaRow[] }).rows;
  };
  const collect = async <R>(it: AsyncIterable<R>) => {
    const out: R[] = [];
    for await (const r of it) out.push(r);
    return out;
  };

  it('a sub-millisecond start and end give the rows the service gives for the same text, on every path', async () => {
    const start = iso(EDGE_TS).replace('Z', '0005Z'); // after the 25 rows at EDGE_TS: the service rounds up
    const end = iso(EDGE_TS + 10).replace('Z', '9Z'); // the doubled rows at +10 ms included: the service rounds down
    const expected = await serviceRows(`start_ts=${start}&end_ts=${end}`);
    expect(expected.map((r) => Date.parse(r.ts) - EDGE_TS)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10]);
    for (const transport of ['stream', 'pages'] as const) {
      expect(await collect(client.deltas(exchange, ticker, { start, end, transport }))).toEqual(expected);
    }
    expect((await client.deltaPage(exchange, ticker, { start, end })).rows).toEqual(expected);
  });

  it('JSON pages of 10 give exactly the service’s rows, across a run longer than two pages and doubled rows at a page’s end', async () => {
    const expected = await serviceRows('');
    expect(expected).toHaveLength(47);
    const asked: URL[] = [];
    const recording = new HistoryClient({
      baseUrl: url,
      apiKey: key,
      fetch: (input, init) => {
        asked.push(new URL(String(input)));
        return fetch(input, init);
      },
    });
    expect(await collect(recording.deltas(exchange, ticker, { transport: 'pages', pageSize: 10 }))).toEqual(expected);
    // Page after page of the size asked for, each where the last one ended.
    expect(asked.map((u) => u.searchParams.get('limit'))).toEqual(Array(5).fill('10'));
    // From EDGE_TS + 1: the first page ends with the first of the doubled rows, and the next begins with the second.
    const start = EDGE_TS + 1;
    expect(await collect(client.deltas(exchange, ticker, { start, transport: 'pages', pageSize: 10 }))).toEqual(
      await serviceRows(`start_ts=${start}`),
    );
    // One page at a time: each says where the next begins, to its end.
    const walked: DeltaRow[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await client.deltaPage(exchange, ticker, { limit: 10, cursor });
      walked.push(...page.rows);
      if (page.next_cursor === null) break;
      expect(typeof page.next_cursor).toBe('string');
      cursor = page.next_cursor;
    }
    expect(walked).toEqual(expected);
  });
});

describe('errors and keys', () => {
  const { exchange, ticker } = TICKERS[0] as (typeof TICKERS)[number];

  it('an unknown ticker, a bad key, a moment before the window: HttpError with the service’s code and request id', async () => {
    const unknown = (await client.book(exchange, 'KXNOPE-1').catch((e: unknown) => e)) as HttpError;
    expect(unknown).toBeInstanceOf(HttpError);
    expect(unknown).toMatchObject({ status: 404, code: 'unknown_ticker', error: 'unknown_ticker' });
    expect(unknown.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const bad = new HistoryClient({ baseUrl: url, apiKey: 'dg_not-a-key' });
    await expect(bad.tickers(exchange)).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    const anonymous = new HistoryClient({ baseUrl: url });
    await expect(anonymous.book(exchange, ticker, { at: TO - 2 * 86_400_000 })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_timestamp',
    });
    // The same key as HTTP Basic.
    expect(await new HistoryClient({ baseUrl: url, apiKey: key, keyIn: 'basic' }).tickers(exchange)).toContain(ticker);
  });

  it('fields=received_ts: rows carry the receive time (generated rows: their ts)', async () => {
    let n = 0;
    for await (const r of client.deltas(exchange, ticker, {
      start: FROM,
      end: FROM + 600_000,
      fields: ['received_ts'],
    })) {
      expect(r.received_ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      n++;
    }
    expect(n).toBeGreaterThan(10);
  });

  it('a rate limit whose Retry-After is beyond the client’s bound is not waited for', async () => {
    const limited = await createHarness({ now: TO + 60_000, env: { RATE_LIMIT_ANONYMOUS_RPM: '1' } });
    try {
      const { url: u } = await limited.listen();
      const c = new HistoryClient({ baseUrl: u, retry: { maxDelayMs: 1000 } });
      await c.tickers(exchange);
      const err = (await c.tickers(exchange).catch((e: unknown) => e)) as HttpError;
      expect(err).toBeInstanceOf(HttpError);
      expect(err).toMatchObject({ status: 429, error: 'rate_limited' });
      expect(err.retryAfterMs).toBeGreaterThan(1000);
    } finally {
      await limited.close();
    }
  });
});
