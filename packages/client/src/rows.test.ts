import { thrownBy } from '@depthgate/test-utils';
import { DataError } from './errors';
import { checkRow, parseLine, type DeltaRow, type SnapshotRow } from './rows';
import { formatTimestamp, formatTimestampLike, momentMs, parseServiceTimestamp, parseTimestamp } from './timestamps';

const where = { url: 'GET http://h/api/venue_b/deltas/T', line: 7 };

describe('parseLine', () => {
  it('reads the service’s delta and snapshot lines, with and without received_ts', () => {
    expect(
      parseLine(
        'delta',
        '{"ts":"2026-03-26T14:00:01.193Z","sequence":1774533601193000,"side":"bid","price":"0.48","quantity_delta":"-150"}',
        where,
      ),
    ).toEqual({
      ts: '2026-03-26T14:00:01.193Z',
      sequence: 1774533601193000,
      side: 'bid',
      price: '0.48',
      quantity_delta: '-150',
    });
    expect(
      parseLine(
        'snapshot',
        '{"ts":"2026-03-26T14:00:01.193Z","side":"ask","price":"0.5","quantity":"20.25","received_ts":"2026-03-26T14:00:01.201Z"}',
        where,
      ),
    ).toEqual({
      ts: '2026-03-26T14:00:01.193Z',
      side: 'ask',
      price: '0.5',
      quantity: '20.25',
      received_ts: '2026-03-26T14:00:01.201Z',
    });
    expect(
      parseLine(
        'delta',
        '{"type":"gap","from_ts":"2026-03-26T14:00:01.193Z","to_ts":"2026-03-26T14:05:00.000Z","reason":"reconnect","detected_at":"2026-03-26T14:00:02.000Z"}',
        where,
      ),
    ).toEqual({
      type: 'gap',
      from_ts: '2026-03-26T14:00:01.193Z',
      to_ts: '2026-03-26T14:05:00.000Z',
      reason: 'reconnect',
      detected_at: '2026-03-26T14:00:02.000Z',
    });
    expect(parseLine('delta', '{"type":"end","count":3,"next_cursor":null}', where)).toEqual({
      type: 'end',
      count: 3,
      next_cursor: null,
    });
  });

  it('the fast path and JSON.parse accept the same rows (other key orders, spaces, escapes go the slow way)', () => {
    let seed = 3;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 2000; i++) {
      const row: DeltaRow = {
        ts: formatTimestamp(Date.UTC(2026, rand(12), 1 + rand(28), rand(24), rand(60), rand(60), rand(1000))),
        sequence: rand(2) ? rand(1000) : 1_774_533_601_193_000 + rand(1e6),
        side: rand(2) ? 'bid' : 'ask',
        price: `${rand(100)}.${rand(100000)}`,
        quantity_delta: `${rand(2) ? '-' : ''}${rand(1e6)}`,
      };
      const compact = JSON.stringify(row);
      const reordered = JSON.stringify({
        side: row.side,
        quantity_delta: row.quantity_delta,
        ts: row.ts,
        price: row.price,
        sequence: row.sequence,
      });
      const spaced = JSON.stringify(row, null, 1).replace(/\n/g, '');
      for (const text of [compact, reordered, spaced]) expect(parseLine('delta', text, where)).toEqual(row);
      const received = { ...row, received_ts: formatTimestamp(Date.UTC(2026, rand(12), 1 + rand(28))) };
      expect(parseLine('delta', JSON.stringify(received), where)).toEqual(received);
      const s: SnapshotRow = { ts: row.ts, side: row.side, price: row.price, quantity: String(rand(1e6)) };
      expect(parseLine('snapshot', JSON.stringify(s), where)).toEqual(s);
    }
  });

  it.each([
    ['not JSON', '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"bid","price":"0.48","quantity_delta":"-1"'],
    ['a bad side', '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"buy","price":"0.48","quantity_delta":"-1"}'],
    [
      'a number price',
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"bid","price":0.48,"quantity_delta":"-1"}',
    ],
    [
      'an exponent',
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"bid","price":"4.8e-1","quantity_delta":"-1"}',
    ],
    [
      'an impossible date',
      '{"ts":"2026-02-30T14:00:01.193Z","sequence":1,"side":"bid","price":"0.48","quantity_delta":"-1"}',
    ],
    ['a missing field', '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"bid","price":"0.48"}'],
    [
      'a fractional sequence',
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":1.5,"side":"bid","price":"0.48","quantity_delta":"1"}',
    ],
    [
      'a sequence above 2^53',
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":9007199254740993,"side":"bid","price":"0.48","quantity_delta":"1"}',
    ],
    [
      'an impossible received_ts',
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"bid","price":"0.48","quantity_delta":"1","received_ts":"2026-02-30T14:00:01.193Z"}',
    ],
    [
      'a sequence with a leading zero',
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":01,"side":"bid","price":"0.48","quantity_delta":"1"}',
    ],
    [
      'text after the row',
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"bid","price":"0.48","quantity_delta":"1"}x',
    ],
    ['an unknown line type', '{"type":"trailer","count":1}'],
    ['an array', '[1,2]'],
  ])('a line with %s is malformed_row, naming the line', (_what, text) => {
    const err = thrownBy(() => parseLine('delta', text, where), DataError);
    expect(err.code).toBe('malformed_row');
    expect(err.where.line).toBe(7);
    expect(err.message).toContain('line 7');
  });
});

describe('trades, trade lines, bars', () => {
  const TS = '2026-11-23T11:34:01.692Z';
  const trade = { ts: TS, trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed', price: '0.55', size: '20', side: 'buy' };

  it('reads trade rows, with the fields asked for, and ids holding what JSON escapes', () => {
    expect(parseLine('trade', JSON.stringify(trade), where)).toEqual(trade);
    const full = { ...trade, received_ts: TS, venue_side: 'yes', sequence: 1795433641692001 };
    expect(parseLine('trade', JSON.stringify(full), where)).toEqual(full);
    const odd = { ...trade, trade_id: 'id,"7"\\é', venue_side: '' };
    expect(parseLine('trade', JSON.stringify(odd), where)).toEqual(odd);
    expect(
      parseLine('trade', JSON.stringify({ type: 'gap', from_ts: TS, to_ts: TS, reason: 'x', detected_at: TS }), where),
    ).toMatchObject({ type: 'gap', reason: 'x' });
  });

  it('reads trade lines and the trades’ gap markers among deltas, and only there', () => {
    const line = { type: 'trade', ...trade, received_ts: TS };
    expect(parseLine('delta', JSON.stringify(line), where)).toEqual(line);
    const gap = {
      type: 'trades_gap',
      from_ts: TS,
      to_ts: '2026-11-23T11:35:00.000Z',
      reason: 'disconnect',
      detected_at: TS,
    };
    expect(parseLine('delta', JSON.stringify(gap), where)).toEqual(gap);
    for (const [kind, text] of [
      ['snapshot', JSON.stringify(line)],
      ['trade', JSON.stringify(line)],
      ['trade', JSON.stringify(gap)],
      ['snapshot', JSON.stringify(gap)],
    ] as const) {
      const err = thrownBy(() => parseLine(kind, text, where), DataError);
      expect([kind, err.code, err.message]).toEqual([
        kind,
        'malformed_row',
        expect.stringContaining('unknown line type'),
      ]);
    }
  });

  it.each([
    ['a book side', { ...trade, side: 'bid' }, 'trade'],
    ['no trade id', { ...trade, trade_id: undefined }, 'trade'],
    ['a number trade id', { ...trade, trade_id: 7 }, 'trade'],
    ['an exponent size', { ...trade, size: '2e1' }, 'trade'],
    ['a number venue side', { ...trade, venue_side: 1 }, 'trade'],
    ['a sequence above 2^53', { ...trade, sequence: 2 ** 53 }, 'trade'],
    ['a bad received_ts', { ...trade, received_ts: 'now' }, 'trade'],
    ['a trade line without its size', { type: 'trade', ...trade, size: undefined }, 'delta'],
    ['a trade line with a book side', { type: 'trade', ...trade, side: 'ask' }, 'delta'],
    ['a trades gap without reason', { type: 'trades_gap', from_ts: TS, to_ts: TS }, 'delta'],
  ] as const)('%s is malformed_row', (_what, value, kind) => {
    const err = thrownBy(() => parseLine(kind, JSON.stringify(value), where), DataError);
    expect(err.code).toBe('malformed_row');
  });

  it('checks bars: exact decimals, a positive count of trades', () => {
    const bar = {
      ts: '2026-11-23T11:34:00.000Z',
      open: '0.55',
      high: '0.55',
      low: '0.54',
      close: '0.54',
      volume: '23',
      vwap: '0.548695652173913043',
      trades: 2,
    };
    expect(checkRow('bar', bar, where)).toEqual(bar);
    for (const bad of [
      { ...bar, vwap: 0.5 },
      { ...bar, trades: 0 },
      { ...bar, trades: 1.5 },
      { ...bar, high: undefined },
      { ...bar, ts: '2026-11-23' },
      { ...bar, type: 'bar' },
    ]) {
      expect(thrownBy(() => checkRow('bar', bad, where), DataError).code).toBe('malformed_row');
    }
  });
});

describe('timestamps', () => {
  it('names a moment by its row’s own text only when that text is the service’s form of it', () => {
    const text = '2026-10-22T07:08:09.123Z';
    expect(formatTimestampLike(text, parseTimestamp(text))).toBe(text);
    for (const other of ['2026-10-22T07:08:09.123+00:00', '2026-10-22t07:08:09.123z', '2026-10-22T07:08:09.1234Z']) {
      expect(formatTimestampLike(other, parseTimestamp(other))).toBe(text);
    }
    // A leap second reads as the next minute: its text is not that moment's form.
    const leap = '2026-12-31T23:59:60.000Z';
    expect(formatTimestampLike(leap, parseTimestamp(leap))).toBe('2027-01-01T00:00:00.000Z');
  });
  it('parses the service’s form and any RFC 3339 time exactly', () => {
    for (const ms of [0, 1_772_841_600_000, 1_774_533_601_193, 4_102_444_799_999, 951_782_400_000]) {
      expect(parseServiceTimestamp(formatTimestamp(ms))).toBe(ms);
    }
    expect(parseTimestamp('2026-03-07T01:00:00.250+01:00')).toBe(Date.UTC(2026, 2, 7, 0, 0, 0, 250));
    expect(parseTimestamp('2026-03-07 00:00:00.1234Z')).toBe(Date.UTC(2026, 2, 7, 0, 0, 0, 123));
    expect(parseServiceTimestamp('2024-02-29T00:00:00.000Z')).toBe(Date.UTC(2024, 1, 29));
    for (const bad of [
      '2025-02-29T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-03-07',
      'x',
      '2026-03-07T24:00:00.000Z',
    ]) {
      expect(parseTimestamp(bad)).toBeNaN();
    }
    // Same second, other milliseconds (the remembered second), then another second.
    expect(parseServiceTimestamp('2026-03-26T14:00:01.999Z')).toBe(Date.UTC(2026, 2, 26, 14, 0, 1, 999));
    expect(parseServiceTimestamp('2026-03-26T14:00:01.000Z')).toBe(Date.UTC(2026, 2, 26, 14, 0, 1, 0));
    expect(parseServiceTimestamp('2026-03-26T14:00:01.0x0Z')).toBeNaN();
    expect(parseServiceTimestamp('2026-03-26T14:00:02.000Z')).toBe(Date.UTC(2026, 2, 26, 14, 0, 2, 0));
  });

  it('reads a moment by the history API’s rule: epoch ms (a number or 13 digits of text), a Date, RFC 3339', () => {
    const T = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
    for (const m of [
      T,
      T + 0.9,
      new Date(T),
      '2026-03-26T14:00:01.193Z',
      '2026-03-26T15:00:01.1939+01:00',
      '2026-03-26T14:00:01.1934567891Z', // more than 9 fraction digits: RFC 3339 sets no limit
      `2026-03-26T14:00:01.193${'9'.repeat(400)}Z`,
      String(T),
    ]) {
      expect(momentMs(m)).toBe(T);
    }
    for (const bad of ['1774533601', '-1774533601193', '1774533601193.5', '01774533601193', ' 1774533601193', NaN]) {
      expect(momentMs(bad)).toBeNaN();
    }
    // Numbers and Dates outside the years RFC 3339 text can name (nanoseconds given by mistake, a negative epoch).
    for (const bad of [1e16, -1, new Date(1e16), new Date(-1)]) expect(momentMs(bad)).toBeNaN();
    // Text too: the same years, as the Python client (before 1970, or past 9999 by its offset or its rounding).
    for (const bad of [
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:30:00+01:00',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999-00:01',
    ]) {
      expect([bad, momentMs(bad)]).toEqual([bad, NaN]);
    }
    expect(momentMs('9999-12-31T23:59:59.9991Z', 'ceil')).toBeNaN();
    expect(momentMs('1970-01-01T01:00:00+01:00')).toBe(0);
  });

  it('rounds sub-milliseconds as the service does: inwards, a range’s start up (ceil), its end and a moment down', () => {
    const T = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
    for (const m of [
      '2026-03-26T14:00:01.1930001Z',
      '2026-03-26T15:00:01.1935+01:00',
      `2026-03-26T14:00:01.193${'0'.repeat(400)}1Z`,
      T + 0.1,
    ]) {
      expect([m, momentMs(m, 'ceil'), momentMs(m, 'floor'), momentMs(m)]).toEqual([m, T + 1, T, T]);
    }
    // No digit past the third that is not 0: nothing to round.
    for (const m of ['2026-03-26T14:00:01.193Z', '2026-03-26T14:00:01.1930000Z', String(T), T, new Date(T)]) {
      expect([m, momentMs(m, 'ceil')]).toEqual([m, T]);
    }
    expect(parseTimestamp('2026-03-26T14:00:01.9995Z', 'ceil')).toBe(Date.UTC(2026, 2, 26, 14, 0, 2));
  });
});
