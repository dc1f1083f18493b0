/**
 * The check every history integration test runs on every answer (testing/harness.ts → ContractChecker): answers
 * of the contract pass, and each kind of drift — a field's form, a field too many or missing, a status, a media
 * type, a line of a stream, an error code of another status — is caught.
 */
import { gzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { ContractChecker } from '@depthgate/test-utils';
import { openApiDocument } from './openapi';

const TS = '2026-03-26T14:00:01.193Z';
const GAP = { from_ts: TS, to_ts: TS, reason: 'disconnect', detected_at: TS };
const DELTA = { ts: TS, sequence: 7, side: 'bid', price: '0.5', quantity_delta: '-20.25' };
const SNAPSHOT = { ts: TS, side: 'ask', price: '0.51', quantity: '7' };
const PAGE = { exchange: 'venue_b', ticker: 'KX', rows: [DELTA], count: 1 };
const BOOK_OK = {
  exchange: 'venue_b',
  ticker: 'KX',
  at: TS,
  status: 'ok',
  snapshot_ts: TS,
  last_delta: { ts: TS, sequence: 7 },
  gap: null,
  base_gap: null,
  bids: [{ price: '0.48', quantity: '150' }],
  asks: [],
  verified: { before: TS, before_method: 'checksum', after: null, after_method: null },
};
const COVERAGE = {
  exchange: 'venue_b',
  ticker: 'KX',
  start_ts: TS,
  end_ts: null,
  snapshots: { rows: 4, books: 1, first_ts: TS, last_ts: TS },
  deltas: { rows: 0, first_ts: null, last_ts: null },
  verifications: { count: 1, first_ts: TS, last_ts: TS, methods: { rest_book: 1, checksum: 0, snapshot: 0 } },
  gaps: [GAP],
  window: { start_ts: TS, rule: 'max_data_age_days', days: 2 },
};

let checker: ContractChecker;
beforeAll(async () => {
  const doc = openApiDocument({
    defaultLimit: 1000,
    maxLimit: 1_000_000,
    queryTimeoutMs: 10_000,
    maxBookDepth: 10_000,
  });
  checker = await ContractChecker.create(doc, { notFound: { status: 404, schema: '#/components/schemas/Error404' } });
});

const ndjson = (...lines: unknown[]) => lines.map((l) => `${JSON.stringify(l)}\n`).join('');
const END = { type: 'end', count: 1, next_cursor: null };

function check(url: string, status: number, type: string | undefined, body: string | Buffer, method = 'GET') {
  const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
  return checker.check({ method, url, status, headers, body: Buffer.from(body) });
}
const json = (url: string, status: number, body: unknown) =>
  check(url, status, 'application/json; charset=utf-8', JSON.stringify(body));

describe('answers that keep the contract pass', () => {
  it.each([
    ['a page', () => json('/api/venue_b/deltas/KX?limit=1', 200, PAGE)],
    ['a page of snapshots', () => json('/api/venue_b/snapshots/KX', 200, { ...PAGE, rows: [SNAPSHOT, SNAPSHOT] })],
    [
      'an extended page',
      () => json('/api/kalshi/deltas/KX?format=json&include=gaps', 200, { ...PAGE, gaps: [GAP], next_cursor: 'AQ' }),
    ],
    [
      'an NDJSON stream with gaps and received_ts',
      () =>
        check(
          '/api/venue_b/deltas/KX?format=ndjson',
          200,
          'application/x-ndjson; charset=utf-8',
          ndjson({ ...DELTA, received_ts: TS }, { type: 'gap', ...GAP }, END),
        ),
    ],
    [
      'a CSV stream',
      () =>
        check(
          '/api/venue_b/snapshots/KX?format=csv',
          200,
          'text/csv; charset=utf-8; header=present',
          `ts,side,price,quantity,received_ts\n${TS},ask,0.51,7,${TS}\n#gap,${TS},${TS},stall,${TS}\n#end,1,AQ-_\n`,
        ),
    ],
    [
      'a gzipped answer',
      () =>
        checker.check({
          method: 'GET',
          url: '/api/venue_b/deltas/KX',
          status: 200,
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: gzipSync(JSON.stringify(PAGE)),
        }),
    ],
    ['a book', () => json('/api/venue_b/book/KX', 200, BOOK_OK)],
    [
      'a book in a gap',
      () =>
        json('/api/venue_b/book/KX', 200, {
          ...BOOK_OK,
          status: 'in_gap',
          snapshot_ts: null,
          last_delta: null,
          gap: GAP,
          bids: null,
          asks: null,
        }),
    ],
    ['coverage', () => json('/api/venue_b/coverage/KX', 200, COVERAGE)],
    ['tickers', () => json('/api/venue_b/tickers', 200, { exchange: 'venue_b', count: 1, tickers: ['KX'] })],
    ['an error', () => json('/api/venue_b/deltas/KX', 400, { error: 'invalid_limit', message: 'x' })],
    ['an unknown route', () => json('/api/venue_b/trades/KX', 404, { error: 'not_found', message: 'x' })],
    ['/ready draining', () => json('/ready', 503, { status: 'draining', checks: {} })],
    ['a 304 of the page', () => check('/explorer', 304, undefined, '')],
    ['a HEAD', () => check('/api/venue_b/tickers', 200, 'application/json', '', 'HEAD')],
  ])('%s', (_name, run) => {
    expect(run()).toEqual([]);
  });
});

describe('answers that drift from the contract are caught', () => {
  it.each([
    [
      'a decimal with a trailing zero',
      () => json('/api/venue_b/deltas/KX', 200, { ...PAGE, rows: [{ ...DELTA, price: '0.50' }] }),
      '"/rows/0/price" must match pattern',
    ],
    [
      'a number for a decimal',
      () => json('/api/venue_b/deltas/KX', 200, { ...PAGE, rows: [{ ...DELTA, price: 0.5 }] }),
      '"/rows/0/price" must be string',
    ],
    [
      'a timestamp without milliseconds',
      () => json('/api/venue_b/deltas/KX', 200, { ...PAGE, rows: [{ ...DELTA, ts: '2026-03-26T14:00:01Z' }] }),
      '"/rows/0/ts" must match pattern',
    ],
    [
      'a field too many',
      () => json('/api/venue_b/deltas/KX', 200, { ...PAGE, rows: [{ ...DELTA, venue: 'x' }] }),
      'must NOT have additional properties',
    ],
    [
      'a field missing',
      () => json('/api/venue_b/deltas/KX', 200, { exchange: 'venue_b', ticker: 'KX', rows: [] }),
      "must have required property 'count'",
    ],
    [
      'a sequence as a string',
      () => json('/api/venue_b/deltas/KX', 200, { ...PAGE, rows: [{ ...DELTA, sequence: '7' }] }),
      '"/rows/0/sequence" must be integer',
    ],
    [
      'a book "ok" without its levels',
      () => json('/api/venue_b/book/KX', 200, { ...BOOK_OK, bids: null }),
      '"/bids" must be array',
    ],
    [
      'coverage of deltas with books',
      () => json('/api/venue_b/coverage/KX', 200, { ...COVERAGE, deltas: { ...COVERAGE.deltas, books: 0 } }),
      'must NOT have additional properties',
    ],
    [
      'a book without verified',
      () => json('/api/venue_b/book/KX', 200, { ...BOOK_OK, verified: undefined }),
      "must have required property 'verified'",
    ],
    [
      'a book verified by an unknown method',
      () => json('/api/venue_b/book/KX', 200, { ...BOOK_OK, verified: { ...BOOK_OK.verified, before_method: 'rest' } }),
      '"/verified/before_method" must be equal to one of the allowed values',
    ],
    [
      'coverage without its verification points per method',
      () =>
        json('/api/venue_b/coverage/KX', 200, {
          ...COVERAGE,
          verifications: { ...COVERAGE.verifications, methods: { rest_book: 1 } },
        }),
      '"/verifications/methods" must have required property \'checksum\'',
    ],
    [
      'an error code of another status',
      () => json('/api/venue_b/deltas/KX', 400, { error: 'unknown_ticker', message: 'x' }),
      '"/error" must be equal to one of the allowed values',
    ],
    [
      'a status the endpoint does not answer',
      () => json('/api/venue_b/deltas/KX', 418, { error: 'x', message: 'y' }),
      'status 418 is not among',
    ],
    [
      'a media type the endpoint does not answer',
      () => check('/api/venue_b/deltas/KX', 200, 'text/plain', 'x'),
      'media type "text/plain" is not among',
    ],
    [
      'an NDJSON row with a type',
      () => check('/api/venue_b/deltas/KX', 200, 'application/x-ndjson', ndjson({ ...DELTA, type: 'row' }, END)),
      'line 1',
    ],
    [
      'an NDJSON end line without its cursor',
      () => check('/api/venue_b/deltas/KX', 200, 'application/x-ndjson', ndjson(DELTA, { type: 'end', count: 1 })),
      'line 2',
    ],
    [
      'an NDJSON line that is not JSON',
      () => check('/api/venue_b/deltas/KX', 200, 'application/x-ndjson', `${JSON.stringify(DELTA)}\nERROR 241\n`),
      'line 2 is not JSON',
    ],
    [
      'an NDJSON body without its last newline',
      () => check('/api/venue_b/deltas/KX', 200, 'application/x-ndjson', JSON.stringify(END)),
      'does not end with a newline',
    ],
    [
      'CSV columns out of order',
      () => check('/api/venue_b/deltas/KX', 200, 'text/csv', `ts,side,sequence,price,quantity_delta\n#end,0,\n`),
      'CSV header',
    ],
    [
      'a CSV row in the wrong columns',
      () =>
        check(
          '/api/venue_b/deltas/KX',
          200,
          'text/csv',
          `ts,sequence,side,price,quantity_delta\n${TS},bid,7,0.5,1\n#end,1,\n`,
        ),
      'line 2',
    ],
    [
      'a CSV end line without its count',
      () => check('/api/venue_b/deltas/KX', 200, 'text/csv', `ts,sequence,side,price,quantity_delta\n#end,,\n`),
      'line 2',
    ],
    [
      'a CSV gap line cut short',
      () =>
        check(
          '/api/venue_b/deltas/KX',
          200,
          'text/csv',
          `ts,sequence,side,price,quantity_delta\n#gap,${TS},${TS}\n#end,0,\n`,
        ),
      'line 2',
    ],
    [
      'an unknown route answered',
      () => json('/api/venue_b/quotes/KX', 200, { rows: [] }),
      'no operation of the contract, yet not 404',
    ],
    [
      'a body where none is described',
      () => check('/explorer', 304, 'text/html', '<p>'),
      'a body where the contract has none',
    ],
  ])('%s', (_name, run, problem) => {
    const problems = run();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
  });
});

describe('observe()', () => {
  it('checks every answer a wrapped app finishes, whatever sent the request', async () => {
    const app = express();
    app.get('/api/:exchange/tickers', (_req, res) => {
      res.json({ exchange: 'venue_b', count: '1', tickers: ['KX'] });
    });
    app.get('/health', (_req, res) => {
      res.type('application/json').write('{"status":');
      res.end('"ok"}');
    });
    const observed = checker.observe(app);
    expect((await request(observed).get('/health')).status).toBe(200);
    expect(checker.take()).toEqual([]);
    expect((await request(observed).get('/api/venue_b/tickers')).status).toBe(200);
    const problems = checker.take();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('GET /api/venue_b/tickers → 200: the body at "/count" must be integer');
    expect(checker.take()).toEqual([]);
  });
});
