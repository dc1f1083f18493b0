import { AppError } from '@depthgate/service-kit';
import {
  parseAt,
  parseDepth,
  parseFields,
  parseFormat,
  parseInclude,
  parseLimit,
  parseMoment,
  parseRfc3339,
  parseStreamLimit,
  parseTimeRange,
  parseTradeFields,
} from './params';

const T = Date.UTC(2026, 2, 26, 14, 0, 1, 193);

function error(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('parseRfc3339', () => {
  it.each([
    ['2026-03-26T14:00:01.193Z', T],
    ['2026-03-26t14:00:01.193z', T],
    ['2026-03-26 14:00:01.193Z', T],
    ['2026-03-26T15:00:01.193+01:00', T],
    ['2026-03-26T10:30:01.193-03:30', T],
    ['2026-03-26T15:00:01.193 01:00', T], // an unencoded "+" arrives as a space
    ['2026-03-26T14:00:01.1930Z', T],
    ['2026-03-26T14:00:01.193000000Z', T],
    ['2026-03-26T14:00:01Z', T - 193],
    ['2026-03-26T14:00:01.1Z', T - 93],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['0001-01-01T00:00:00Z', -62135596800000],
    ['2026-03-07T00:00:00+00:00', Date.UTC(2026, 2, 7)],
    ['2026-03-07T00:00:00-00:00', Date.UTC(2026, 2, 7)],
  ])('%s', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });

  it('reads a leap second as the first millisecond of the next minute', () => {
    expect(parseRfc3339('2016-12-31T23:59:60Z')).toBe(Date.UTC(2017, 0, 1));
  });

  it('rounds sub-millisecond digits inwards: ceil for a start, floor for an end', () => {
    expect(parseRfc3339('2026-03-26T14:00:01.1935Z', 'floor')).toBe(T);
    expect(parseRfc3339('2026-03-26T14:00:01.1935Z', 'ceil')).toBe(T + 1);
    expect(parseRfc3339('2026-03-26T14:00:01.193000001Z', 'ceil')).toBe(T + 1);
    expect(parseRfc3339('2026-03-26T14:00:01.193000000Z', 'ceil')).toBe(T);
  });

  it('takes a fraction of any number of digits (RFC 3339 sets no limit), rounding past 9 digits by the same rule', () => {
    const S = T - 193; // 14:00:01.000
    expect(parseRfc3339('2026-03-26T14:00:01.0000000000Z', 'floor')).toBe(S);
    expect(parseRfc3339('2026-03-26T14:00:01.0000000000Z', 'ceil')).toBe(S);
    expect(parseRfc3339('2026-03-26T14:00:01.1934567891Z', 'floor')).toBe(T);
    expect(parseRfc3339('2026-03-26T14:00:01.1934567891Z', 'ceil')).toBe(T + 1);
    // Digits past any number's precision: only whether one of them is not 0 counts.
    const zeros = '0'.repeat(400);
    expect(parseRfc3339(`2026-03-26T14:00:01.193${zeros}Z`, 'ceil')).toBe(T);
    expect(parseRfc3339(`2026-03-26T14:00:01.193${zeros}1Z`, 'ceil')).toBe(T + 1);
    expect(parseRfc3339(`2026-03-26T14:00:01.193${zeros}1Z`, 'floor')).toBe(T);
    expect(parseRfc3339(`2026-03-26T14:00:01.193${'9'.repeat(400)}+00:00`, 'floor')).toBe(T);
  });

  it.each([
    '',
    '2026-03-26',
    '2026-03-26T14:00:01',
    '2026-03-26T14:00Z',
    '2026-03-26T14:00:01.Z',
    '2026-3-26T14:00:01Z',
    '26-03-26T14:00:01Z',
    '2026-13-01T00:00:00Z',
    '2026-00-01T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2100-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-03-00T00:00:00Z',
    '2026-03-26T24:00:00Z',
    '2026-03-26T14:60:00Z',
    '2026-03-26T14:00:61Z',
    '2026-03-26T14:00:01+24:00',
    '2026-03-26T14:00:01+01:60',
    '2026-03-26T14:00:01+0100',
    '2026-03-26T14:00:01 Z',
    ' 2026-03-26T14:00:01Z',
    '2026-03-26T14:00:01Z ',
    '1774533601193',
    'now',
    '２０２６-03-26T14:00:01Z',
    "2026-03-26T14:00:01Z'; DROP TABLE snapshots",
    // Moments its offset carries past the four-digit years: no UTC text names them.
    '9999-12-31T23:59:59.999-00:01',
    '0000-01-01T00:00:00+00:01',
  ])('rejects %j', (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });

  it('takes the first and last moments four-digit UTC years name, however they are written', () => {
    expect(parseRfc3339('9999-12-31T23:59:59.999Z')).toBe(253_402_300_799_999);
    expect(parseRfc3339('9999-12-31T23:58:59.999-00:01')).toBe(253_402_300_799_999);
    expect(parseRfc3339('0000-01-01T00:00:00Z')).toBe(-62_167_219_200_000);
    expect(parseRfc3339('0000-01-01T00:01:00+00:01')).toBe(-62_167_219_200_000);
  });
});

describe('parseMoment: RFC 3339 or integer epoch milliseconds, one parser for every timestamp parameter', () => {
  it.each([
    ['1774533601193', T],
    ['1000000000000', 1e12],
    ['9999999999999', 1e13 - 1],
    ['1772841600000', Date.UTC(2026, 2, 7)],
    ['2026-03-26T14:00:01.193Z', T],
  ])('%s', (text, expected) => {
    expect(parseMoment(text, 'floor')).toBe(expected);
    expect(parseMoment(text, 'ceil')).toBe(expected);
  });

  it('rounds only RFC 3339 sub-milliseconds (epoch milliseconds are exact)', () => {
    expect(parseMoment('2026-03-26T14:00:01.1935Z', 'ceil')).toBe(T + 1);
    expect(parseMoment('2026-03-26T14:00:01.1935Z', 'floor')).toBe(T);
  });

  it.each([
    '1774533601', // seconds
    '177453360119', // 12 digits
    '17745336011930', // 14 digits: microseconds, or far future
    '0774533601193', // a leading zero
    '0',
    '-1774533601193',
    '+1774533601193',
    '1774533601193.5',
    '1774533601.193',
    '1.774533601193e12',
    ' 1774533601193',
    '1774533601193 ',
    '0x19d3a2f1b89',
    '１７７４５３３６０１１９３',
    '',
  ])('rejects %j', (text) => {
    expect(parseMoment(text)).toBeUndefined();
  });
});

describe('parseTimeRange', () => {
  it('reads epoch milliseconds as the RFC 3339 moment they are', () => {
    expect(parseTimeRange({ start_ts: String(T), end_ts: '2026-03-26T14:00:01.193Z' })).toEqual({ start: T, end: T });
    expect(parseTimeRange({ start_ts: '2026-03-26T14:00:01.193Z', end_ts: String(T) })).toEqual({ start: T, end: T });
    expect(parseAt({ at: String(T) })).toBe(parseAt({ at: '2026-03-26T14:00:01.193Z' }));
    expect(error(() => parseTimeRange({ start_ts: String(T + 1), end_ts: String(T) })).message).toBe(
      'start_ts is after end_ts',
    );
  });

  it('names epoch seconds as such', () => {
    const e = error(() => parseAt({ at: '1774533601' }));
    expect(e.code).toBe('invalid_timestamp');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(
      /^at is not a valid timestamp \(1774533601 looks like epoch seconds; give milliseconds, 1774533601000\): /,
    );
    expect(e.message).toMatch(/RFC 3339 .* or integer epoch milliseconds/);
  });

  it('parses both bounds, inclusive', () => {
    expect(parseTimeRange({ start_ts: '2026-03-26T14:00:01.193Z', end_ts: '2026-03-26T14:00:01.193Z' })).toEqual({
      start: T,
      end: T,
    });
    expect(parseTimeRange({})).toEqual({});
  });

  it('answers invalid_timestamp naming the parameter', () => {
    const e = error(() => parseTimeRange({ start_ts: 'yesterday' }));
    expect(e.code).toBe('invalid_timestamp');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^start_ts is not a valid timestamp/);
    expect(error(() => parseTimeRange({ end_ts: '2026-03-26' })).message).toMatch(/^end_ts/);
  });

  it('rejects start_ts after end_ts, and a repeated parameter', () => {
    const e = error(() => parseTimeRange({ start_ts: '2026-03-26T14:00:01.194Z', end_ts: '2026-03-26T14:00:01.193Z' }));
    expect(e.code).toBe('invalid_timestamp');
    expect(e.message).toBe('start_ts is after end_ts');
    expect(error(() => parseTimeRange({ start_ts: ['2026-03-26T14:00:01Z', '2026-03-27T14:00:01Z'] })).code).toBe(
      'invalid_timestamp',
    );
  });
});

describe('parseLimit', () => {
  it('defaults, accepts 1 and the maximum', () => {
    expect(parseLimit({}, 1000, 1_000_000)).toBe(1000);
    expect(parseLimit({ limit: '1' }, 1000, 1_000_000)).toBe(1);
    expect(parseLimit({ limit: '1000000' }, 1000, 1_000_000)).toBe(1_000_000);
    expect(parseLimit({ limit: '007' }, 1000, 1_000_000)).toBe(7);
  });

  it.each(['0', '-1', '1.5', '1e3', '+5', ' 5', '5 ', '', 'abc', '0x10', '1,000', '9999999999999'])(
    'rejects %j as invalid_limit',
    (text) => {
      const e = error(() => parseLimit({ limit: text }, 1000, 1_000_000));
      expect(e.code).toBe('invalid_limit');
      expect(e.status).toBe(400);
    },
  );

  it('rejects a limit above the maximum with the maximum in the message', () => {
    const e = error(() => parseLimit({ limit: '1000001' }, 1000, 1_000_000));
    expect(e.code).toBe('invalid_limit');
    expect(e.message).toBe('limit 1000001 is above the maximum of 1000000');
    expect(error(() => parseLimit({ limit: ['1', '2'] }, 1000, 1_000_000)).code).toBe('invalid_limit');
  });
});

describe('the parameters added for backtesters', () => {
  it('format: the parameter wins; else the Accept type of highest quality; JSON when none is known', () => {
    expect(parseFormat({ format: 'CSV' }, 'application/x-ndjson')).toEqual({ format: 'csv', explicit: true });
    expect(parseFormat({}, undefined)).toEqual({ format: 'json', explicit: false });
    expect(parseFormat({}, 'application/x-ndjson').format).toBe('ndjson');
    expect(parseFormat({}, 'application/ndjson').format).toBe('ndjson');
    expect(parseFormat({}, 'text/csv; charset=utf-8').format).toBe('csv');
    expect(parseFormat({}, 'application/json, text/csv').format).toBe('json');
    expect(parseFormat({}, 'text/csv;q=0.5, application/x-ndjson;q=0.9').format).toBe('ndjson');
    expect(parseFormat({}, '*/*, text/csv').format).toBe('csv');
    expect(parseFormat({}, 'text/html').format).toBe('json');
    expect(parseFormat({}, 'text/csv;q=0').format).toBe('json');
    expect(parseFormat({}, 'application/vnd.apache.parquet').format).toBe('parquet');
    expect(parseFormat({ format: 'parquet' }, undefined).format).toBe('parquet');
    expect(error(() => parseFormat({ format: 'arrow' }, undefined)).code).toBe('invalid_format');
    expect(error(() => parseFormat({ format: ['csv', 'json'] }, undefined)).code).toBe('invalid_format');
  });

  it('fields: received_ts only (trades: also venue_side and sequence); include: gaps and trades', () => {
    expect(parseFields({})).toEqual([]);
    expect(parseFields({ fields: 'received_ts' })).toEqual(['received_ts']);
    expect(parseFields({ fields: 'received_ts,received_ts' })).toEqual(['received_ts']);
    for (const fields of ['', 'ts', 'received_ts,x', 'RECEIVED_TS']) {
      expect(error(() => parseFields({ fields })).message).toMatch(/received_ts/);
    }
    expect(error(() => parseFields({ fields: 'venue_side' })).code).toBe('invalid_fields');
    expect(parseTradeFields({ fields: 'venue_side' })).toEqual(['venue_side']);
    expect(parseInclude({})).toEqual({ gaps: false, trades: false });
    expect(parseInclude({ include: 'gaps' })).toEqual({ gaps: true, trades: false });
    expect(parseInclude({ include: 'gaps,trades' })).toEqual({ gaps: true, trades: true });
    expect(error(() => parseInclude({ include: 'bogus' })).code).toBe('invalid_include');
  });

  it('at: RFC 3339, sub-milliseconds rounded down, or epoch milliseconds; depth: 1 to the maximum', () => {
    expect(parseAt({ at: '2026-03-26T14:00:01.1939Z' })).toBe(T);
    expect(parseAt({})).toBeUndefined();
    expect(parseAt({ at: '1774533601193' })).toBe(T);
    expect(error(() => parseAt({ at: '1774533601.193' })).code).toBe('invalid_timestamp');
    expect(parseDepth({ depth: '25' }, 100)).toBe(25);
    expect(parseDepth({}, 100)).toBeUndefined();
    for (const depth of ['0', '-1', '101', '1e2', '2.5', '', 'ten']) {
      expect(error(() => parseDepth({ depth }, 100)).message).toMatch(/at most 100/);
    }
  });

  it('a stream’s limit: none by default, any positive integer', () => {
    expect(parseStreamLimit({})).toBe(Infinity);
    expect(parseStreamLimit({ limit: '50000000' })).toBe(50_000_000);
    for (const limit of ['0', '-3', '1.5', 'all'])
      expect(error(() => parseStreamLimit({ limit })).code).toBe('invalid_limit');
  });
});
