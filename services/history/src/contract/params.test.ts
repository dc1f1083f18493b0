import { AppError } from '@depthgate/service-kit';
import {
  parseDepth,
  parseFields,
  parseFormat,
  parseInclude,
  parseInterval,
  parseLimit,
  parseStreamLimit,
  parseTimeRange,
  parseTradeFields,
} from '../order-books/params';
import { exchangeReader, readParam, cursorParam, prefixParam } from './params';

function failure(fn: () => unknown): { code: string; status: number; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, status: err.status, message: err.message };
    throw err;
  }
  throw new Error('expected an AppError');
}

const HINT =
  'expected an RFC 3339 timestamp such as 2026-03-07T00:00:00Z or 2026-03-07T01:00:00.250+01:00, or integer epoch milliseconds (13 digits) such as 1772841600000';

describe('the parameters read through their schemas answer exactly as before', () => {
  it.each([
    ['invalid_timestamp', `start_ts is not a valid timestamp: ${HINT}`, () => parseTimeRange({ start_ts: 'x' })],
    [
      'invalid_timestamp',
      `end_ts is not a valid timestamp: ${HINT}`,
      () => parseTimeRange({ end_ts: '2026-02-30T00:00:00Z' }),
    ],
    [
      'invalid_timestamp',
      `start_ts is not a valid timestamp (1772841600 looks like epoch seconds; give milliseconds, 1772841600000): ${HINT}`,
      () => parseTimeRange({ start_ts: '1772841600' }),
    ],
    [
      'invalid_timestamp',
      `end_ts is not a valid timestamp: ${HINT}`,
      () => parseTimeRange({ end_ts: '-1772841600000' }),
    ],
    ['invalid_timestamp', 'start_ts must be given at most once', () => parseTimeRange({ start_ts: ['a', 'b'] })],
    // Both are checked for repetition before either is parsed.
    [
      'invalid_timestamp',
      'end_ts must be given at most once',
      () => parseTimeRange({ start_ts: 'x', end_ts: ['a', 'b'] }),
    ],
    [
      'invalid_timestamp',
      'start_ts is after end_ts',
      () => parseTimeRange({ start_ts: '2026-03-08T00:00:00Z', end_ts: '2026-03-07T00:00:00Z' }),
    ],
    [
      'invalid_limit',
      'limit must be a positive integer (at most 5000), got "abc"',
      () => parseLimit({ limit: 'abc' }, 1000, 5000),
    ],
    [
      'invalid_limit',
      'limit must be a positive integer (at most 5000), got "00"',
      () => parseLimit({ limit: '00' }, 1000, 5000),
    ],
    ['invalid_limit', 'limit 5001 is above the maximum of 5000', () => parseLimit({ limit: '0005001' }, 1000, 5000)],
    [
      'invalid_limit',
      `limit must be a positive integer (at most 5000), got "${'x'.repeat(40)}"`,
      () => parseLimit({ limit: 'x'.repeat(50) }, 1000, 5000),
    ],
    ['invalid_limit', 'limit must be given at most once', () => parseLimit({ limit: ['1', '2'] }, 1000, 5000)],
    ['invalid_limit', 'limit must be a positive integer, got "0"', () => parseStreamLimit({ limit: '0' })],
    [
      'invalid_limit',
      'limit must be a positive integer, got "1234567890123456"',
      () => parseStreamLimit({ limit: '1234567890123456' }),
    ],
    [
      'invalid_format',
      'format must be json, ndjson, csv, parquet or digest, got "xlsx" (or ask with Accept: application/x-ndjson, text/csv or application/vnd.apache.parquet)',
      () => parseFormat({ format: 'xlsx' }, undefined),
    ],
    [
      'invalid_fields',
      'fields names fields to add to the rows: received_ts, venue_seq; "Ts" is not one',
      () => parseFields({ fields: 'received_ts, Ts' }),
    ],
    [
      'invalid_fields',
      'fields names fields to add to the rows: received_ts, venue_seq; "" is not one',
      () => parseFields({ fields: '' }),
    ],
    [
      'invalid_include',
      'include may name gaps and trades only; "bogus" is not known',
      () => parseInclude({ include: 'gaps,bogus' }),
    ],
    [
      'invalid_fields',
      'fields names fields to add to the trades: received_ts, venue_side, sequence, venue_seq; "quantity" is not one',
      () => parseTradeFields({ fields: 'sequence,quantity' }),
    ],
    ['invalid_interval', 'interval must be 1m, 5m, 1h, 1d, got "7m"', () => parseInterval({ interval: '7m' })],
    ['invalid_interval', 'interval is required: 1m, 5m, 1h, 1d', () => parseInterval({})],
    ['invalid_interval', 'interval must be given at most once', () => parseInterval({ interval: ['1m', '5m'] })],
    [
      'invalid_depth',
      'depth must be a positive integer of levels per side, at most 10000, got "10001"',
      () => parseDepth({ depth: '10001' }, 10_000),
    ],
    ['invalid_cursor', 'cursor must be given at most once', () => readParam({ cursor: ['a', 'b'] }, cursorParam)],
    ['invalid_request', 'prefix must be given at most once', () => readParam({ prefix: ['a', 'b'] }, prefixParam)],
  ])('%s: %s', (code, message, fn) => {
    expect(failure(fn)).toEqual({ code, status: 400, message });
  });

  it('reads what they accept to the same values', () => {
    expect(parseLimit({ limit: '0005000' }, 1000, 5000)).toBe(5000);
    expect(parseLimit({}, 1000, 5000)).toBe(1000);
    expect(parseStreamLimit({ limit: '123456789012345' })).toBe(123456789012345);
    expect(parseFields({ fields: ' received_ts ,received_ts' })).toEqual(['received_ts']);
    expect(parseInclude({ include: 'gaps,gaps' })).toEqual({ gaps: true, trades: false });
    expect(parseInclude({ include: 'trades, gaps' })).toEqual({ gaps: true, trades: true });
    expect(parseTradeFields({ fields: 'sequence,received_ts,venue_side,sequence' })).toEqual([
      'sequence',
      'received_ts',
      'venue_side',
    ]);
    expect(parseInterval({ interval: '1h' })).toBe('1h');
    expect(parseFormat({ format: 'Parquet' }, 'text/csv')).toEqual({ format: 'parquet', explicit: true });
    expect(parseFormat({ format: 'NDJSON' }, 'text/csv')).toEqual({ format: 'ndjson', explicit: true });
    expect(readParam({}, prefixParam)).toBeUndefined();
    expect(readParam({ cursor: 'abc' }, cursorParam)).toBe('abc');
  });

  it('{exchange}: keys and aliases in any case; the message lists the keys and aliases', () => {
    const { read: readExchange, unknown: unknownExchange } = exchangeReader();
    expect(readExchange('venue_b')).toBe('venue_b');
    expect(readExchange('Kalshi')).toBe('venue_b');
    expect(readExchange('GEMINI')).toBe('venue_c');
    expect(readExchange('polymarket_us')).toBe('venue_a_us');
    expect(readExchange('venue_x')).toBeUndefined();
    expect(readExchange('__proto__')).toBeUndefined();
    const e = unknownExchange('x'.repeat(50));
    expect([e.code, e.status, e.message]).toEqual([
      'unknown_exchange',
      404,
      `Unknown exchange "${'x'.repeat(40)}…": use venue_b (kalshi), venue_c (gemini), venue_a_us (polymarket_us, polymarket-us), venue_a_clob (polymarket, polymarket_clob, polymarket-clob), venue_d (coinbase)`,
    ]);
  });

  it('{exchange} spelled as a gateway platform key: the message states the rule and the key', () => {
    const { read: readExchange, unknown: unknownExchange } = exchangeReader();
    expect(readExchange('venue-b')).toBeUndefined();
    expect(unknownExchange('venue-b').message).toBe(
      'Unknown exchange "venue-b" ("-" spells the gateway\'s platform keys; the history\'s exchange keys use "_": venue_b): use venue_b (kalshi), venue_c (gemini), venue_a_us (polymarket_us, polymarket-us), venue_a_clob (polymarket, polymarket_clob, polymarket-clob), venue_d (coinbase)',
    );
    expect(unknownExchange('Venue-A-US').message).toMatch(/exchange keys use "_": venue_a_us\): use /);
    // A platform the history does not record gets the list alone.
    expect(unknownExchange('venue-e').message).toBe(
      'Unknown exchange "venue-e": use venue_b (kalshi), venue_c (gemini), venue_a_us (polymarket_us, polymarket-us), venue_a_clob (polymarket, polymarket_clob, polymarket-clob), venue_d (coinbase)',
    );
  });
});
