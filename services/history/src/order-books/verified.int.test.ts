/**
 * The venue's own sequences and the verification points (issue 24) through the service, against the real ClickHouse
 * and Redis of `./dev test`: `fields=venue_seq` on snapshots, deltas and trades (and the trade lines of
 * include=trades) in JSON, NDJSON, CSV and Parquet, rows written before migration 4 (row format 3) reading '';
 * `/book`'s `verified` (the points around `at`, inside the caller's window, on every status) and coverage's
 * `verifications`; a `divergence` gap as any other.
 */
import { DAY_MS } from '@depthgate/auth';
import {
  insertDeltaRows,
  insertGapRows,
  insertSnapshotRows,
  insertTradeRows,
  insertTsv,
  insertVerificationRows,
  type VerificationRow,
} from '@depthgate/history-store';
import request from 'supertest';
import { createHarness, type Harness } from '../testing/harness';
import { readParquet } from '../testing/parquet';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0, 0);
const T = NOW - 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const LONGEST = 'Zz9:._/+=-'.repeat(5).slice(0, 48);

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await createHarness({ now: NOW, env: { RATE_LIMIT_DEFAULT_RPM: '1000000' } });
  key = await h.key({});
  // SEQ: a book and changes with the venue's sequences (one empty, one of the longest kept), trades with theirs, and
  // one delta and one snapshot as a recorder before migration 4 writes them (row format 3: no venue_seq).
  await insertSnapshotRows(h.ch, [
    { exchange: 'venue_b', ticker: 'SEQ', ts: T, side: 'bid', price: '0.48', quantity: '10', venue_seq: '3:100' },
    { exchange: 'venue_b', ticker: 'SEQ', ts: T, side: 'ask', price: '0.52', quantity: '5', venue_seq: '3:100' },
  ]);
  await insertTsv(h.ch, 'snapshots', [`venue_b\tSEQ\t${T + 500}\tbid\t0.47\t1\t${T + 501}\n`], { rowFormat: 3 });
  await insertDeltaRows(h.ch, [
    {
      exchange: 'venue_b',
      ticker: 'SEQ',
      ts: T + 10,
      sequence: 1,
      side: 'bid',
      price: '0.48',
      quantity_delta: '-4',
      venue_seq: '3:101',
    },
    {
      exchange: 'venue_b',
      ticker: 'SEQ',
      ts: T + 20,
      sequence: 3,
      side: 'ask',
      price: '0.52',
      quantity_delta: '1',
      venue_seq: '',
    },
    {
      exchange: 'venue_b',
      ticker: 'SEQ',
      ts: T + 30,
      sequence: 4,
      side: 'ask',
      price: '0.53',
      quantity_delta: '2',
      venue_seq: LONGEST,
    },
  ]);
  await insertTsv(h.ch, 'deltas', [`venue_b\tSEQ\t${T + 40}\t5\tbid\t0.46\t7\t${T + 41}\n`], { rowFormat: 3 });
  await insertTradeRows(h.ch, [
    {
      exchange: 'venue_b',
      ticker: 'SEQ',
      ts: T + 15,
      sequence: 2,
      trade_id: 't-1',
      price: '0.48',
      size: '4',
      side: 'sell',
      venue_side: 'no',
      venue_seq: '9:7',
    },
  ]);
});

afterAll(async () => {
  await h?.close();
});

const get = (path: string, k: string | undefined = key) => {
  const r = request(h.app).get(path);
  return k ? r.set('x-api-key', k) : r;
};

describe('fields=venue_seq', () => {
  it('deltas and snapshots: JSON, NDJSON and CSV; rows written before migration 4 read it empty', async () => {
    const deltas = (await get(`/api/venue_b/deltas/SEQ?fields=venue_seq`)).body;
    expect(deltas.rows.map((r: { venue_seq: string }) => r.venue_seq)).toEqual(['3:101', '', LONGEST, '']);
    expect(deltas.rows[0]).toEqual({
      ts: iso(T + 10),
      sequence: 1,
      side: 'bid',
      price: '0.48',
      quantity_delta: '-4',
      venue_seq: '3:101',
    });
    const both = (await get(`/api/venue_b/deltas/SEQ?fields=venue_seq,received_ts&format=ndjson`)).text.split('\n');
    expect(JSON.parse(both[0] as string)).toEqual({ ...deltas.rows[0], received_ts: iso(T + 10) });
    expect(Object.keys(JSON.parse(both[0] as string)).slice(-2)).toEqual(['received_ts', 'venue_seq']);
    const csv = (await get(`/api/venue_b/deltas/SEQ?fields=received_ts,venue_seq&format=csv`)).text.split('\n');
    expect(csv.slice(0, 2)).toEqual([
      'ts,sequence,side,price,quantity_delta,received_ts,venue_seq',
      `${iso(T + 10)},1,bid,0.48,-4,${iso(T + 10)},3:101`,
    ]);
    expect(csv[4]).toBe(`${iso(T + 40)},5,bid,0.46,7,${iso(T + 41)},`);
    const snaps = (await get(`/api/venue_b/snapshots/SEQ?fields=venue_seq`)).body;
    expect(snaps.rows.map((r: { venue_seq: string }) => r.venue_seq)).toEqual(['3:100', '3:100', '']);
    // Without the parameter the rows are as before.
    expect((await get(`/api/venue_b/deltas/SEQ`)).body.rows[0]).not.toHaveProperty('venue_seq');
  });

  it('trades and the trade lines of include=trades, after the trade fields asked for', async () => {
    const trades = (await get(`/api/venue_b/trades/SEQ?fields=sequence,venue_seq,venue_side`)).body;
    expect(trades.rows).toEqual([
      {
        ts: iso(T + 15),
        trade_id: 't-1',
        price: '0.48',
        size: '4',
        side: 'sell',
        venue_side: 'no',
        sequence: 2,
        venue_seq: '9:7',
      },
    ]);
    const lines = (await get(`/api/venue_b/deltas/SEQ?include=trades&fields=venue_seq&format=csv`)).text.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'ts,sequence,side,price,quantity_delta,venue_seq',
      `${iso(T + 10)},1,bid,0.48,-4,3:101`,
      `#trade,${iso(T + 15)},t-1,0.48,4,sell,9:7`,
    ]);
  });

  it('Parquet: a string column, the NDJSON rows exactly', async () => {
    for (const path of [
      'deltas/SEQ?fields=venue_seq,received_ts',
      'snapshots/SEQ?fields=venue_seq',
      'trades/SEQ?fields=venue_seq',
    ]) {
      const nd = (await get(`/api/venue_b/${path}&format=ndjson`)).text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.type === undefined);
      const pq = await get(`/api/venue_b/${path}&format=parquet`)
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
      const back = await readParquet(pq.body as Buffer);
      expect([path, back.types.venue_seq]).toEqual([path, 'VARCHAR']);
      expect([path, back.rows]).toEqual([path, nd]);
    }
  });

  it('a field the endpoint does not have is a 400 naming the list', async () => {
    const res = await get(`/api/venue_b/deltas/SEQ?fields=venue_sequence`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_fields',
      message: 'fields names fields to add to the rows: received_ts, venue_seq; "venue_sequence" is not one',
    });
  });
});

describe('verified books', () => {
  const point = (ts: number, method: VerificationRow['method']): VerificationRow => ({
    exchange: 'venue_b',
    ticker: 'SEQ',
    ts,
    method,
    detected_at: ts + 300,
  });

  beforeAll(async () => {
    await insertVerificationRows(h.ch, [
      point(T - 3 * DAY_MS, 'snapshot'),
      point(T + 12, 'checksum'),
      point(T + 1000, 'rest_book'),
      point(T + 3000, 'snapshot'),
    ]);
    // A divergence found at T + 2500: the book is unknown from the last verified moment (T + 1000) to then.
    await insertGapRows(h.ch, [
      {
        exchange: 'venue_b',
        ticker: 'SEQ',
        from_ts: T + 1000,
        to_ts: T + 2500,
        reason: 'divergence',
        detected_at: T + 2500,
      },
    ]);
  });

  const book = async (at: number, k: string | undefined = key) =>
    (await get(`/api/venue_b/book/SEQ?at=${iso(at)}`, k)).body as Record<string, unknown>;

  it('says the last confirmation at or before at and the first after it, with their methods', async () => {
    expect(await book(T + 20)).toMatchObject({
      status: 'ok',
      verified: { before: iso(T + 12), before_method: 'checksum', after: iso(T + 1000), after_method: 'rest_book' },
    });
    expect((await book(T + 1000)).verified).toEqual({
      before: iso(T + 1000),
      before_method: 'rest_book',
      after: iso(T + 3000),
      after_method: 'snapshot',
    });
    expect((await book(T + 3500)).verified).toEqual({
      before: iso(T + 3000),
      before_method: 'snapshot',
      after: null,
      after_method: null,
    });
  });

  it('inside a divergence gap the answer is in_gap, with the confirmations around it', async () => {
    expect(await book(T + 2000)).toMatchObject({
      status: 'in_gap',
      gap: { from_ts: iso(T + 1000), to_ts: iso(T + 2500), reason: 'divergence' },
      verified: { before: iso(T + 1000), after: iso(T + 3000) },
    });
  });

  it('a confirmation before the caller’s window is not shown', async () => {
    expect((await book(T + 5)).verified).toMatchObject({ before: iso(T - 3 * DAY_MS), after: iso(T + 12) });
    // Points more than a day away on either side (read again without the near bound) are found all the same.
    expect((await book(T - 2 * DAY_MS)).verified).toEqual({
      before: iso(T - 3 * DAY_MS),
      before_method: 'snapshot',
      after: iso(T + 12),
      after_method: 'checksum',
    });
    const twoDays = await h.key({ max_data_age_days: 2 });
    expect((await book(T + 5, twoDays)).verified).toEqual({
      before: null,
      before_method: null,
      after: iso(T + 12),
      after_method: 'checksum',
    });
  });

  it('coverage counts the confirmations inside the range, per method, and the last one', async () => {
    expect((await get(`/api/venue_b/coverage/SEQ`)).body.verifications).toEqual({
      count: 4,
      first_ts: iso(T - 3 * DAY_MS),
      last_ts: iso(T + 3000),
      methods: { rest_book: 1, checksum: 1, snapshot: 2 },
    });
    expect(
      (await get(`/api/venue_b/coverage/SEQ?start_ts=${iso(T)}&end_ts=${iso(T + 2000)}`)).body.verifications,
    ).toEqual({
      count: 2,
      first_ts: iso(T + 12),
      last_ts: iso(T + 1000),
      methods: { rest_book: 1, checksum: 1, snapshot: 0 },
    });
    expect((await get(`/api/venue_b/coverage/SEQ?start_ts=${iso(T + 4000)}`)).body.verifications).toEqual({
      count: 0,
      first_ts: null,
      last_ts: null,
      methods: { rest_book: 0, checksum: 0, snapshot: 0 },
    });
  });
});
