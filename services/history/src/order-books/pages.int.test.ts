/**
 * Cursors and bulk streams against the real ClickHouse and Redis of `./dev test`: walks of every page size over
 * ranges with thousands of deltas at one ts (and doubled rows) and books longer than the slack concatenate to exactly
 * the unpaged answer, in JSON, NDJSON and CSV, by next_cursor and by Link; streams parse line by line and equal the
 * JSON rows; gap markers come in time order and once over a walk; a cursor for anything else is a 400.
 */
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { DAY_MS } from '@depthgate/auth';
import {
  insertDeltaRows,
  insertGapRows,
  insertSnapshotRows,
  type DeltaRow,
  type GapRow,
  type SnapshotRow,
} from '@depthgate/history-store';
import { waitFor } from '@depthgate/test-utils';
import request from 'supertest';
import { createHarness, type Harness } from '../testing/harness';
import { fetchPage, parseBody, queriesSent, walk, type Row } from '../testing/pages';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0, 0);
const EQ = 'KXEQ-26JUN01-T1';
const OTHER = 'KXOTHER-26JUN01-T1';
const T0 = NOW - 3 * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Deltas: 2,500 at T0, 300 spread after it, 1,200 at T1, three identical rows at T2, 200 more. */
function deltas(): DeltaRow[] {
  const out: DeltaRow[] = [];
  let seq = 1000;
  const add = (ts: number, n = 1) => {
    for (let i = 0; i < n; i++) {
      seq++;
      out.push({
        exchange: 'venue_b',
        ticker: EQ,
        ts,
        sequence: seq,
        side: seq % 3 ? 'bid' : 'ask',
        price: `0.${String(10 + (seq % 80)).padStart(2, '0')}`,
        quantity_delta: `${seq % 7 ? '' : '-'}${seq % 50}.${seq % 100}`,
        received_ts: ts + (seq % 40),
      });
    }
  };
  add(T0, 2500);
  for (let i = 1; i <= 300; i++) add(T0 + i * 997);
  const t1 = T0 + 400_000;
  add(t1, 1200);
  const t2 = T0 + 500_000;
  for (let i = 0; i < 3; i++) out.push({ ...(out[out.length - 1] as DeltaRow), ts: t2, sequence: 9_000_000 });
  seq = 9_000_000;
  for (let i = 1; i <= 200; i++) add(t2 + i * 13);
  return out;
}

/** Books of 1 to 40 levels every 7 s, and one of 1,500 levels (longer than the slack of 1,000). */
function snapshots(): SnapshotRow[] {
  const out: SnapshotRow[] = [];
  for (let b = 0; b < 60; b++) {
    const ts = T0 + b * 7_000;
    const levels = b === 23 ? 1500 : 1 + ((b * 17) % 40);
    for (let i = 0; i < levels; i++) {
      out.push({
        exchange: 'venue_b',
        ticker: EQ,
        ts,
        side: i % 2 ? 'ask' : 'bid',
        price: i % 2 ? `0.${5000 + i}` : `0.${String(4999 - i).padStart(4, '0')}`,
        quantity: `${i + 1}`,
        received_ts: ts + 3,
      });
    }
  }
  return out;
}

/** Gaps starting before the range, on a delta's ts, on a book's ts, between rows, and after the last row. */
function gaps(): GapRow[] {
  const g = (from: number, to: number, reason: string): GapRow => ({
    exchange: 'venue_b',
    ticker: EQ,
    from_ts: from,
    to_ts: to,
    reason,
    detected_at: to + 1,
  });
  return [
    g(T0 - 60_000, T0 - 1, 'recorder_start'),
    g(T0, T0, 'stall'),
    g(T0 + 997 * 5, T0 + 997 * 6, 'disconnect'),
    g(T0 + 7_000 * 23, T0 + 7_000 * 23 + 5, 'sequence_gap'),
    g(T0 + 400_000 + 1, T0 + 450_000, 'reconcile_mismatch'),
    g(T0 + 900_000, T0 + 950_000, 'stall'),
  ];
}

let h: Harness;
let key: string;
let allDeltas: Row[];
let allSnapshots: Row[];

beforeAll(async () => {
  h = await createHarness({
    now: NOW,
    env: { MAX_LIMIT: '100000', STREAM_WINDOW_ROWS: '1000', RATE_LIMIT_DEFAULT_RPM: '1000000' },
  });
  await insertDeltaRows(h.ch, deltas());
  await insertSnapshotRows(h.ch, snapshots());
  await insertGapRows(h.ch, gaps());
  await insertDeltaRows(h.ch, [
    { exchange: 'venue_b', ticker: OTHER, ts: T0, sequence: 1, side: 'bid', price: '0.5', quantity_delta: '1' },
    { exchange: 'venue_c', ticker: EQ, ts: T0, sequence: 1, side: 'bid', price: '0.5', quantity_delta: '1' },
  ]);
  key = await h.key({});
  allDeltas = (await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?limit=100000`, key)).rows;
  allSnapshots = (await fetchPage(h.app, `/api/venue_b/snapshots/${EQ}?limit=100000`, key)).rows;
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('the data under test', () => {
  it('holds what the walks must reproduce', () => {
    expect(allDeltas).toHaveLength(2500 + 300 + 1200 + 3 + 200);
    expect(allSnapshots.length).toBeGreaterThan(2500);
  });
});

describe('framing of a page held whole', () => {
  /** The raw answer (nothing inflated). */
  const raw = async (path: string, encoding: string) => {
    const res = await request(h.app)
      .get(path)
      .set({ 'x-api-key': key, 'accept-encoding': encoding })
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    return { headers: res.headers as Record<string, string | undefined>, body: res.body as Buffer };
  };

  it('a page longer than one gzip call takes carries its length, and is the same text gzipped or not', async () => {
    const path = `/api/venue_b/deltas/${EQ}?limit=100000`;
    const plain = await raw(path, 'identity');
    // (Above the 256 KiB compressed in one call, below the 1 MiB held before the headers go out.)
    expect(plain.body.length).toBeGreaterThan(256 * 1024);
    expect(plain.body.length).toBeLessThan(1024 * 1024);
    expect(plain.headers['content-length']).toBe(String(plain.body.length));
    expect((JSON.parse(plain.body.toString('utf8')) as { rows: unknown[] }).rows).toHaveLength(allDeltas.length);
    const zipped = await raw(path, 'gzip');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-length']).toBeUndefined();
    // (superagent may have inflated it already.)
    const inflated = zipped.body[0] === 0x1f && zipped.body[1] === 0x8b ? gunzipSync(zipped.body) : zipped.body;
    expect(inflated.equals(plain.body)).toBe(true);
    // A short page: one piece, gzipped in one call with its length; with its length too when not gzipped.
    const short = await raw(`/api/venue_b/deltas/${EQ}?limit=300`, 'gzip');
    expect(short.headers['content-encoding']).toBe('gzip');
    expect(Number(short.headers['content-length'])).toBeGreaterThan(0);
    const shortPlain = await raw(`/api/venue_b/deltas/${EQ}?limit=300`, 'identity');
    expect(shortPlain.headers['content-length']).toBe(String(shortPlain.body.length));
  });

  it.each([300, 100_000])('a HEAD of a page of %i rows carries the length of its GET’s body', async (limit) => {
    const path = `/api/venue_b/deltas/${EQ}?limit=${limit}`;
    const get = await raw(path, 'identity');
    const head = await request(h.app).head(path).set({ 'x-api-key': key, 'accept-encoding': 'gzip' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(get.body.length));
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
  });
});

describe('a page of the spec over the 1 MiB held', () => {
  const BIG = 'KXBIG-26JUN01-T1';
  beforeAll(async () => {
    const rows: DeltaRow[] = [];
    for (let i = 0; i < 14_000; i++) {
      rows.push({
        exchange: 'venue_b',
        ticker: BIG,
        ts: T0 + Math.floor(i / 3),
        sequence: 1 + i,
        side: i % 2 ? 'ask' : 'bid',
        price: `0.${String(10 + (i % 80)).padStart(2, '0')}`,
        quantity_delta: `${1 + (i % 900)}.${i % 100}`,
      });
    }
    await insertDeltaRows(h.ch, rows);
  });

  it('carries next_cursor in its body when its limit cut it (its Link could not go); the walk is the whole answer', async () => {
    const whole = await fetchPage(h.app, `/api/venue_b/deltas/${BIG}?limit=100000`, key);
    expect(whole.rows).toHaveLength(14_000);
    // Not cut: the spec's body as ever.
    expect(whole.nextCursor).toBeUndefined();
    const first = await fetchPage(h.app, `/api/venue_b/deltas/${BIG}?limit=12000`, key);
    expect(first.body.length).toBeGreaterThan(1024 * 1024);
    expect(first.link).toBeUndefined();
    expect(typeof first.nextCursor).toBe('string');
    const walked = await walk(h.app, `/api/venue_b/deltas/${BIG}?limit=12000`, key);
    expect(walked.pages.map((p) => p.rows.length)).toEqual([12_000, 2_000]);
    expect(walked.rows).toEqual(whole.rows);
  });
});

describe('cursor walks', () => {
  it.each([7, 499, 1000, 2501, 4203])(
    'deltas, %i rows a page: exactly the unpaged answer, by next_cursor and by Link',
    async (limit) => {
      const byCursor = await walk(h.app, `/api/venue_b/deltas/${EQ}?limit=${limit}&format=json`, key);
      expect(byCursor.rows).toEqual(allDeltas);
      expect(byCursor.pages).toHaveLength(Math.ceil(allDeltas.length / limit));
      expect(
        byCursor.pages.slice(0, -1).every((p) => p.rows.length === limit && typeof p.nextCursor === 'string'),
      ).toBe(true);
      expect(byCursor.pages.at(-1)?.nextCursor).toBeNull();
      // The spec's request: the body as ever (no next_cursor), the next page in the Link header.
      const byLink = await walk(h.app, `/api/venue_b/deltas/${EQ}?limit=${limit}`, key, { via: 'link' });
      expect(byLink.rows).toEqual(allDeltas);
      expect(byLink.pages[0]?.nextCursor).toBeUndefined();
      expect(byLink.pages.at(-1)?.link).toBeUndefined();
    },
  );

  it.each([1, 40, 1000, 1600])('snapshots, %i rows a page: whole books, exactly the unpaged answer', async (limit) => {
    const r = await walk(h.app, `/api/venue_b/snapshots/${EQ}?limit=${limit}&format=json`, key);
    expect(r.rows).toEqual(allSnapshots);
    for (const page of r.pages.slice(0, -1)) {
      const last = page.rows.at(-1)?.ts;
      // A page ends on a whole book: the next begins with a later book.
      const next = r.pages[r.pages.indexOf(page) + 1]?.rows[0]?.ts;
      expect(next !== undefined && last !== undefined && next > last).toBe(true);
      expect(page.rows.length).toBeGreaterThanOrEqual(limit);
    }
  });

  it('inside a range, from start_ts to end_ts; the cursor carries the range', async () => {
    const from = T0 + 997 * 10;
    const to = T0 + 400_000;
    const want = allDeltas.filter((r) => (r.ts as string) >= iso(from) && (r.ts as string) <= iso(to));
    const r = await walk(
      h.app,
      `/api/venue_b/deltas/${EQ}?start_ts=${iso(from)}&end_ts=${iso(to)}&limit=333&fields=received_ts`,
      key,
    );
    expect(r.rows.map(({ received_ts: _r, ...row }) => row)).toEqual(want);
    expect(r.rows.every((row) => typeof row.received_ts === 'string')).toBe(true);
  });

  it('a snapshots page whose range ends inside its last window and holds the limit asks ClickHouse nothing more', async () => {
    /** Row-exists queries (the "does a book follow?" question) the service sent so far. */
    const existsQueries = () => queriesSent(h.app, 'exists');
    const books = [...new Set(allSnapshots.map((r) => r.ts as string))];
    const end = books[20] as string;
    const inRange = allSnapshots.filter((r) => (r.ts as string) <= end);
    const lastBook = inRange.filter((r) => r.ts === end).length;
    expect(lastBook).toBeGreaterThan(1);
    // The limit falls inside the range's last book: the page ends with that book, and the range with it.
    const limit = inRange.length - 1;
    const before = await existsQueries();
    const page = await fetchPage(
      h.app,
      `/api/venue_b/snapshots/${EQ}?end_ts=${end}&limit=${limit}&format=json&fields=received_ts`,
      key,
    );
    expect(page.rows.map(({ received_ts: _r, ...row }) => row)).toEqual(inRange);
    expect(page.nextCursor).toBeNull();
    expect(await existsQueries()).toBe(before);
    // Past the range's end there are books: a page cut at the same row, over the open range, says so by a cursor.
    const open = await fetchPage(h.app, `/api/venue_b/snapshots/${EQ}?limit=${limit}&format=json`, key);
    expect(open.rows).toEqual(inRange);
    expect(open.nextCursor).toEqual(expect.any(String));
  });

  it('gap markers: in time order among the rows, each once over a walk, as in the unpaged answer', async () => {
    for (const format of ['ndjson', 'csv', 'json'] as const) {
      const whole = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?include=gaps&format=${format}&limit=100000`, key);
      expect(whole.gaps.map((g) => g.from_ts)).toEqual(gaps().map((g) => iso(g.from_ts)));
      for (const limit of [1000, 2499, 2500, 2801]) {
        const r = await walk(h.app, `/api/venue_b/deltas/${EQ}?include=gaps&format=${format}&limit=${limit}`, key);
        // (A JSON page lists its gaps after its rows: compare rows and gaps; the line formats interleave them.)
        if (format === 'json') expect([r.rows, r.gaps]).toEqual([whole.rows, whole.gaps]);
        else expect(r.items).toEqual(whole.items);
      }
      const snapshotsWhole = await fetchPage(
        h.app,
        `/api/venue_b/snapshots/${EQ}?include=gaps&format=${format}&limit=100000`,
        key,
      );
      const s = await walk(h.app, `/api/venue_b/snapshots/${EQ}?include=gaps&format=${format}&limit=500`, key);
      if (format === 'json') expect([s.rows, s.gaps]).toEqual([snapshotsWhole.rows, snapshotsWhole.gaps]);
      else expect(s.items).toEqual(snapshotsWhole.items);
    }
    // In a line format a marker at F comes after every row with ts ≤ F and before the first with ts > F.
    const lines = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?include=gaps&format=ndjson`, key);
    let lastRowTs = '';
    let lastGapFrom = '';
    for (const item of lines.items) {
      if ('row' in item) {
        expect((item.row.ts as string) > lastGapFrom || lastGapFrom === '').toBe(true);
        lastRowTs = item.row.ts as string;
      } else {
        expect(item.gap.from_ts >= lastRowTs).toBe(true);
        lastGapFrom = item.gap.from_ts;
      }
    }
  });

  it('is bound to its exchange, ticker, endpoint and caller, and cannot be forged', async () => {
    const page = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?limit=10&format=json`, key);
    const cursor = page.nextCursor as string;
    const expect400 = async (path: string, k: string | undefined, message: RegExp) => {
      const res = await fetchPage(h.app, path, k);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid_cursor', message: expect.stringMatching(message) });
    };
    await expect400(
      `/api/venue_b/snapshots/${EQ}?cursor=${cursor}`,
      key,
      /issued for the deltas of KXEQ.*not the snapshots/,
    );
    await expect400(`/api/venue_b/deltas/${OTHER}?cursor=${cursor}`, key, /not the deltas of KXOTHER/);
    await expect400(`/api/venue_c/deltas/${EQ}?cursor=${cursor}`, key, /not the deltas of KXEQ-26JUN01-T1 on venue_c/);
    await expect400(`/api/venue_b/deltas/${EQ}?cursor=${cursor}`, await h.key({}), /another caller/);
    await expect400(`/api/venue_b/deltas/${EQ}?cursor=${cursor}`, undefined, /another caller/);
    const raw = Buffer.from(cursor, 'base64url');
    raw[raw.length - 20] = (raw[raw.length - 20] as number) ^ 1; // a byte of the position
    await expect400(`/api/venue_b/deltas/${EQ}?cursor=${raw.toString('base64url')}`, key, /does not verify/);
    raw[0] = 9;
    await expect400(`/api/venue_b/deltas/${EQ}?cursor=${raw.toString('base64url')}`, key, /format 9 is not accepted/);
    await expect400(`/api/venue_b/deltas/${EQ}?cursor=garbage`, key, /not a cursor/);
    await expect400(`/api/venue_b/deltas/${EQ}?cursor=${cursor}&start_ts=${iso(T0)}`, key, /without start_ts/);
    // The same cursor works for its own walk, once or many times.
    expect((await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?cursor=${cursor}&limit=10`, key)).rows).toEqual(
      allDeltas.slice(10, 20),
    );
  });

  it('a cursor signed with another secret fails; the previous secret is still accepted during a rotation', async () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const first = await createHarness({ now: NOW, env: { HISTORY_CURSOR_SECRET: a } });
    const rotated = await createHarness({
      now: NOW,
      env: { HISTORY_CURSOR_SECRET: b, HISTORY_CURSOR_SECRET_PREVIOUS: a },
    });
    const other = await createHarness({ now: NOW, env: { HISTORY_CURSOR_SECRET: b } });
    try {
      for (const x of [first, rotated, other]) await insertDeltaRows(x.ch, deltas().slice(0, 50));
      const cursor = (await fetchPage(first.app, `/api/venue_b/deltas/${EQ}?limit=10&format=json`))
        .nextCursor as string;
      expect((await fetchPage(rotated.app, `/api/venue_b/deltas/${EQ}?cursor=${cursor}&limit=5`)).rows).toHaveLength(5);
      expect((await fetchPage(other.app, `/api/venue_b/deltas/${EQ}?cursor=${cursor}&limit=5`)).status).toBe(400);
    } finally {
      await Promise.all([first.close(), rotated.close(), other.close()]);
    }
  });

  it('each page is clamped to the caller’s window as it is then (an anonymous day rolls on)', async () => {
    const anon = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?limit=100&format=json`);
    expect(anon.rows).toEqual(allDeltas.slice(0, 100));
    h.clock.now = T0 + 400_000 + DAY_MS; // the window now starts at T1
    try {
      const next = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?cursor=${anon.nextCursor as string}&limit=5`);
      expect(next.rows).toEqual(allDeltas.filter((r) => (r.ts as string) >= iso(T0 + 400_000)).slice(0, 5));
    } finally {
      h.clock.now = NOW;
    }
  });
});

describe('bulk streams', () => {
  it.each(['ndjson', 'csv'] as const)(
    '%s: line by line, the JSON rows; the whole range past MAX_LIMIT; an end line',
    async (format) => {
      for (const kind of ['deltas', 'snapshots'] as const) {
        const all = kind === 'deltas' ? allDeltas : allSnapshots;
        const page = await fetchPage(h.app, `/api/venue_b/${kind}/${EQ}?format=${format}`, key);
        expect(page.status).toBe(200);
        expect(page.rows).toEqual(all);
        expect(page.count).toBe(all.length);
        expect(page.nextCursor).toBeNull();
        expect(page.headers['content-type']).toBe(
          format === 'ndjson' ? 'application/x-ndjson; charset=utf-8' : 'text/csv; charset=utf-8; header=present',
        );
        expect(page.headers.vary).toMatch(/Accept/);
      }
      // A stream's rows are the JSON rows whatever its limit: none here beyond the JSON maximum.
      const small = await createHarness({
        now: NOW,
        env: { DEFAULT_LIMIT: '100', MAX_LIMIT: '100', STREAM_WINDOW_ROWS: '1000' },
      });
      try {
        await insertDeltaRows(small.ch, deltas());
        const stream = await fetchPage(small.app, `/api/venue_b/deltas/${EQ}?format=${format}`);
        expect(stream.count).toBe(allDeltas.length);
        expect(stream.rows).toEqual(allDeltas);
      } finally {
        await small.close();
      }
    },
  );

  it('CSV names its columns; received_ts when asked', async () => {
    const csv = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?format=csv&fields=received_ts&limit=2`, key);
    expect(csv.body.split('\n')[0]).toBe('ts,sequence,side,price,quantity_delta,received_ts');
    const json = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?fields=received_ts&limit=2`, key);
    expect(csv.rows).toEqual(json.rows);
    expect(Object.keys(json.rows[0] ?? {})).toEqual([
      'ts',
      'sequence',
      'side',
      'price',
      'quantity_delta',
      'received_ts',
    ]);
    const snap = await fetchPage(h.app, `/api/venue_b/snapshots/${EQ}?format=csv&limit=1`, key);
    expect(snap.body.split('\n')[0]).toBe('ts,side,price,quantity');
  });

  it('by Accept; gzip when accepted; a limit ends it with a cursor line that continues it', async () => {
    const byAccept = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}`, key, { accept: 'application/x-ndjson' });
    expect(byAccept.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(byAccept.rows).toEqual(allDeltas);
    const csv = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}`, key, { accept: 'text/html, text/csv;q=0.9' });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const json = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?limit=3`, key, { accept: 'text/html' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    const gz = await fetchPage(h.app, `/api/venue_b/deltas/${EQ}?format=ndjson`, key, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.rows).toEqual(allDeltas);
    const r = await walk(h.app, `/api/venue_b/deltas/${EQ}?format=csv&limit=1700`, key);
    expect(r.pages.map((p) => p.count)).toEqual([1700, 1700, 803]);
    expect(r.rows).toEqual(allDeltas);
  });

  describe('long streams', () => {
    const BIG = 'KXBIG-1';
    const ROWS = 200_000;
    let big: Harness;
    let bigKey: string;
    let url: string;
    beforeAll(async () => {
      big = await createHarness({ now: NOW, env: { STREAM_WINDOW_ROWS: '10000' } });
      await big.db.fillDeltas({ exchange: 'venue_b', ticker: BIG, fromTs: NOW - 3_600_000, stepMs: 10, rows: ROWS });
      bigKey = await big.key({});
      url = (await big.listen()).url;
    }, 60_000);
    afterAll(async () => {
      await big?.close();
    });

    /** Reads a stream; `onFirst` runs at the first chunk, before the rest is read. */
    function read(path: string, onFirst: () => Promise<void>): Promise<string> {
      return new Promise<string>((resolve, reject) => {
        http
          .get(`${url}${path}`, { headers: { 'x-api-key': bigKey } }, (res) => {
            const chunks: Buffer[] = [];
            res.once('data', (c: Buffer) => {
              chunks.push(c);
              res.pause();
              onFirst().then(() => {
                res.on('data', (c2: Buffer) => chunks.push(c2));
                res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
                res.resume();
              }, reject);
            });
            res.on('error', reject);
          })
          .on('error', reject);
      });
    }

    it('a caller that stops reading holds no ClickHouse query (windows are read whole), and the stream goes on', async () => {
      const body = await read(`/api/venue_b/deltas/${BIG}?format=ndjson`, async () => {
        // Paused: the service reads at most two windows ahead, then no query runs until it is read again. (Until its
        // socket's buffers are full it still renders and reads on: one poll could fall between two of its queries.)
        let idlePolls = 0;
        await waitFor(
          async () => {
            idlePolls = (await big.db.runningQueries()).length === 0 ? idlePolls + 1 : 0;
            return idlePolls >= 5;
          },
          { intervalMs: 200, what: 'no query running in five polls in a row' },
        );
        await new Promise((r) => setTimeout(r, 500));
        expect(await big.db.runningQueries()).toEqual([]);
      });
      const parsed = parseBody('application/x-ndjson', body);
      expect(parsed.count).toBe(ROWS);
      expect(parsed.rows).toHaveLength(ROWS);
      expect(parsed.nextCursor).toBeNull();
    });

    it('a burst far above the catalogue’s average: the stream’s one window is cut at its cap, the rest planned again, every row once', async () => {
      // 2,000 rows over four weeks, then 45,000 in 37 minutes: at the average rate the last two hours hold ~100
      // rows, so the stream reads them as one window (capped at 10,000 rows) and walks the rest from what it saw.
      const BURST = 'KXBURST-1';
      await big.db.fillDeltas({
        exchange: 'venue_b',
        ticker: BURST,
        fromTs: NOW - 30 * 86_400_000,
        stepMs: 1_200_000,
        rows: 2_000,
      });
      await big.db.fillDeltas({
        exchange: 'venue_b',
        ticker: BURST,
        fromTs: NOW - 3_600_000,
        stepMs: 50,
        rows: 45_000,
      });
      const page = await fetchPage(
        big.app,
        `/api/venue_b/deltas/${BURST}?start_ts=${new Date(NOW - 7_200_000).toISOString()}&format=ndjson`,
        bigKey,
      );
      expect(page.status).toBe(200);
      expect(page.count).toBe(45_000);
      expect(page.nextCursor).toBeNull();
      expect(page.rows.map((r) => r.sequence)).toEqual(Array.from({ length: 45_000 }, (_, i) => i));
    });

    it('a service that drains ends a stream at its next window with a cursor, which another replica continues', async () => {
      const body = await read(`/api/venue_b/deltas/${BIG}?format=csv`, async () => {
        big.lifecycle.draining = true;
      });
      big.lifecycle.draining = false;
      const first = parseBody('text/csv', body);
      expect(first.count).toBeLessThan(ROWS);
      expect(first.rows).toHaveLength(first.count);
      expect(typeof first.nextCursor).toBe('string');
      const rest = await walk(
        big.app,
        `/api/venue_b/deltas/${BIG}?format=csv&cursor=${first.nextCursor as string}`,
        bigKey,
      );
      const all = [...first.rows, ...rest.rows];
      expect(all).toHaveLength(ROWS);
      expect(all.map((r) => r.sequence)).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    });
  });
});

describe('a caller that stops reading', () => {
  const BIG = 'KXSTALL-1';
  let stall: Harness;
  let stallKey: string;
  let url: string;
  beforeAll(async () => {
    stall = await createHarness({
      now: NOW,
      env: { STREAM_WINDOW_ROWS: '10000', WRITE_TIMEOUT_MS: '5000', STREAMS_MAX_CONCURRENT_PER_KEY: '2' },
    });
    // About 20 MB of NDJSON: far more than the loopback's socket buffers hold.
    await stall.db.fillDeltas({ exchange: 'venue_b', ticker: BIG, fromTs: NOW - 3_600_000, stepMs: 10, rows: 200_000 });
    stallKey = await stall.key({});
    url = (await stall.listen()).url;
  }, 60_000);
  afterAll(async () => {
    await stall?.close();
  });

  /** A stream whose caller reads its first chunk and then nothing (until destroyed). */
  function stalled(key: string): Promise<{ status: number; destroy: () => void }> {
    return new Promise((resolve, reject) => {
      const req = http.get(
        `${url}/api/venue_b/deltas/${BIG}?format=ndjson`,
        { headers: { 'x-api-key': key } },
        (res) => {
          res.once('data', () => res.pause());
          res.on('error', () => undefined);
          resolve({ status: res.statusCode ?? 0, destroy: () => req.destroy() });
        },
      );
      req.on('error', reject);
    });
  }

  it('a key has at most STREAMS_MAX_CONCURRENT_PER_KEY bulk streams running; one more is 429, its place back once one ends', async () => {
    const key = await stall.key({});
    const [a, b] = [await stalled(key), await stalled(key)];
    expect([a.status, b.status]).toEqual([200, 200]);
    const over = await fetchPage(stall.app, `/api/venue_b/deltas/${BIG}?format=csv`, key);
    expect([over.status, over.headers['retry-after'], JSON.parse(over.body)]).toEqual([
      429,
      '5',
      {
        error: 'too_many_connections',
        message: 'This API key may run 2 bulk streams at once; retry when one has finished',
      },
    ]);
    // Pages are not streams; another key is not affected.
    expect((await fetchPage(stall.app, `/api/venue_b/deltas/${BIG}?limit=10`, key)).status).toBe(200);
    const other = await stalled(await stall.key({}));
    expect(other.status).toBe(200);
    other.destroy();
    a.destroy();
    const c = await waitFor(
      async () => {
        const s = await stalled(key);
        if (s.status === 200) return s;
        s.destroy();
        return undefined;
      },
      { what: 'a place back once a stream ended' },
    );
    b.destroy();
    c.destroy();
  });

  it('is cut after WRITE_TIMEOUT_MS: the stream ends without its end line, and no query of it runs on', async () => {
    const cut = () => stall.metric('history_stalled_readers_total', { endpoint: 'deltas' });
    const before = await cut();
    const body = await new Promise<string>((resolve, reject) => {
      http
        .get(`${url}/api/venue_b/deltas/${BIG}?format=ndjson`, { headers: { 'x-api-key': stallKey } }, (res) => {
          expect(res.statusCode).toBe(200);
          const chunks: Buffer[] = [];
          res.once('data', (c: Buffer) => {
            chunks.push(c);
            res.pause();
            // Read on only once the service has cut the response: what was in the buffers, then the end.
            waitFor(async () => (await cut()) === before + 1, {
              what: 'the stalled response cut',
            }).then(() => {
              res.on('data', (c2: Buffer) => chunks.push(c2));
              res.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
              res.resume();
            }, reject);
          });
        })
        .on('error', reject);
    });
    expect(body).not.toContain('"type":"end"');
    expect(body.split('\n').length).toBeLessThan(200_000);
    await waitFor(async () => (await stall.db.runningQueries()).length === 0, { what: 'no query running' });
  });
});

describe('bad input', () => {
  it.each([
    ['format=xml', 'invalid_format'],
    ['format=', 'invalid_format'],
    ['fields=received', 'invalid_fields'],
    ['fields=received_ts,price', 'invalid_fields'],
    ['include=bogus', 'invalid_include'],
    ['include=gaps,bogus', 'invalid_include'],
    ['include=trades&format=parquet', 'invalid_include'],
    ['fields=venue_side', 'invalid_fields'],
    ['format=csv&limit=0', 'invalid_limit'],
    ['format=ndjson&limit=-5', 'invalid_limit'],
    ['cursor=', 'invalid_cursor'],
    ['format=digest', 'invalid_format'],
    ['snapshots:format=digest&fields=received_ts', 'invalid_format'],
    ['snapshots:format=digest&include=gaps', 'invalid_format'],
  ])('%s → 400 %s', async (query, error) => {
    // `snapshots:` asks the snapshots endpoint (else the deltas').
    const [endpoint, q] = query.startsWith('snapshots:') ? ['snapshots', query.slice(10)] : ['deltas', query];
    const res = await fetchPage(h.app, `/api/venue_b/${endpoint}/${EQ}?${q}`, key);
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body) as { error: string; message: string };
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe(error);
  });
});
