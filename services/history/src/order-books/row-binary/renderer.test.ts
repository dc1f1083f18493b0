import { Rng } from '@depthgate/service-kit';
import {
  deltaRow,
  int64,
  interleavedRow,
  randomChunks,
  snapshotRow,
  tradeRow,
  venueSeqBytes,
  type Delta,
  type Trade,
} from '../../testing/row-binary';
import {
  csvHeader,
  cutAtBook,
  FIELD_RECEIVED,
  FIELD_SEQUENCE,
  FIELD_VENUE_SEQ,
  FIELD_VENUE_SIDE,
  layoutOf,
  rowBinarySize,
} from './layouts';
import { CorruptStreamError, RowRenderer } from './renderer';

function convert(kind: 'delta' | 'snapshot', chunks: Buffer[]): { text: string; rows: number } {
  const c = new RowRenderer(kind);
  let text = '';
  for (const chunk of chunks) text += c.push(chunk)?.toString('latin1') ?? '';
  c.endOfQuery();
  return { text, rows: c.rows };
}

describe('RowRenderer', () => {
  const t = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
  const deltas: Delta[] = [
    { ts: t, sequence: 10, side: 'bid', price: '0.48', quantity_delta: '-150' },
    { ts: t, sequence: 11, side: 'ask', price: '0.5100', quantity_delta: '20.50' },
    { ts: t + 7, sequence: 2n ** 53n + 1n, side: 'bid', price: '87000', quantity_delta: '0.00000001' },
    { ts: t + 1000, sequence: 2n ** 64n - 1n, side: 'ask', price: '1', quantity_delta: '0' },
  ];

  it('renders delta rows as the members of a JSON array, counting them', () => {
    const { text, rows } = convert('delta', [Buffer.concat(deltas.map(deltaRow))]);
    expect(rows).toBe(4);
    expect(text).toBe(
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":10,"side":"bid","price":"0.48","quantity_delta":"-150"},' +
        '{"ts":"2026-03-26T14:00:01.193Z","sequence":11,"side":"ask","price":"0.51","quantity_delta":"20.5"},' +
        '{"ts":"2026-03-26T14:00:01.200Z","sequence":9007199254740993,"side":"bid","price":"87000","quantity_delta":"0.00000001"},' +
        '{"ts":"2026-03-26T14:00:02.193Z","sequence":18446744073709551615,"side":"ask","price":"1","quantity_delta":"0"}',
    );
  });

  it('renders snapshot rows', () => {
    const { text, rows } = convert('snapshot', [
      Buffer.concat([
        snapshotRow({ ts: t, side: 'bid', price: '0.47', quantity: '100' }),
        snapshotRow({ ts: t, side: 'ask', price: '0.51', quantity: '7.25' }),
      ]),
    ]);
    expect(rows).toBe(2);
    expect(JSON.parse(`[${text}]`)).toEqual([
      { ts: '2026-03-26T14:00:01.193Z', side: 'bid', price: '0.47', quantity: '100' },
      { ts: '2026-03-26T14:00:01.193Z', side: 'ask', price: '0.51', quantity: '7.25' },
    ]);
  });

  it('gives the same bytes however the input is chunked, and joins several queries into one array', () => {
    const rng = new Rng('chunks');
    const many: Delta[] = Array.from({ length: 300 }, (_, i) => ({
      ts: t + i * 13,
      sequence: i,
      side: i % 3 === 0 ? 'ask' : 'bid',
      price: `${rng.range(1, 99)}.${rng.range(0, 9999)}`,
      quantity_delta: `-${rng.range(0, 5000)}.${rng.range(0, 99)}`,
    }));
    const all = Buffer.concat(many.map(deltaRow));
    const whole = convert('delta', [all]);
    expect(whole.rows).toBe(300);
    expect(JSON.parse(`[${whole.text}]`)).toHaveLength(300);
    for (let trial = 0; trial < 100; trial++) expect(convert('delta', randomChunks(rng, all, 120))).toEqual(whole);
    // Two queries (time windows), one of them empty, then a third: one array.
    const c = new RowRenderer('delta');
    let text = '';
    for (const part of [all.subarray(0, 49 * 100), Buffer.alloc(0), all.subarray(49 * 100)]) {
      text += c.push(part)?.toString() ?? '';
      c.endOfQuery();
    }
    expect(text).toBe(whole.text);
  });

  it('an empty result is an empty array', () => {
    expect(convert('delta', [])).toEqual({ text: '', rows: 0 });
  });

  it('rejects an exception appended by ClickHouse after rows (18.16 and current formats), however chunked', () => {
    const rng = new Rng('exceptions');
    const rows = Buffer.concat(deltas.map(deltaRow));
    for (const tail of [
      'Code: 159, e.displayText() = DB::Exception: Timeout exceeded: elapsed 1.0 seconds, e.what() = DB::Exception\n',
      'Code: 159. DB::Exception: Timeout exceeded. (TIMEOUT_EXCEEDED) (version 24.8.14.39 (official build))\n',
      'Code: 394. DB::Exception: Query was cancelled\n',
      '__exception__\nCode: 394. DB::Exception: Query was cancelled\n',
    ]) {
      const all = Buffer.concat([rows, Buffer.from(tail)]);
      for (const kind of ['delta', 'snapshot'] as const) {
        expect(() => convert(kind, [all])).toThrow(CorruptStreamError);
        for (let trial = 0; trial < 20; trial++)
          expect(() => convert(kind, randomChunks(rng, all, 60))).toThrow(CorruptStreamError);
        expect(() => convert(kind, [Buffer.from(tail)])).toThrow(CorruptStreamError);
      }
    }
    // The message carries ClickHouse's text, for the log.
    expect(() =>
      convert('delta', [Buffer.from('Code: 241, e.displayText() = DB::Exception: Memory limit exceeded')]),
    ).toThrow(/Code: 241/);
  });

  it('rejects a result that ends in the middle of a row', () => {
    const all = Buffer.concat(deltas.map(deltaRow));
    expect(() => convert('delta', [all.subarray(0, all.length - 1)])).toThrow(/middle of a row/);
  });

  it('rejects rows with an impossible side or timestamp', () => {
    const bad = deltaRow(deltas[0] as Delta);
    bad[16] = 3;
    expect(() => convert('delta', [bad])).toThrow(CorruptStreamError);
    expect(() => convert('delta', [deltaRow({ ...(deltas[0] as Delta), ts: -1 })])).toThrow(CorruptStreamError);
    expect(() => convert('delta', [deltaRow({ ...(deltas[0] as Delta), ts: 253_402_300_800_000 })])).toThrow(
      CorruptStreamError,
    );
  });

  it('writes every sequence exactly: runs that count up, jumps, and values near 2^31, 2^53 and 2^64 (fuzz)', () => {
    const rng = new Rng('sequences');
    const sequences: bigint[] = [];
    for (const base of [
      0n,
      999n,
      2n ** 31n - 3n,
      123_456_789n,
      1_795_433_640_816_000n,
      2n ** 53n - 2500n,
      2n ** 53n - 5n,
      2n ** 64n - 9n,
    ]) {
      // A run that counts up (through thousands boundaries), then jumps back and forth around the base.
      for (let i = 0n; i < 1500n && base + i < 2n ** 64n; i += 1n) sequences.push(base + i);
      for (let i = 0; i < 200; i++) {
        const v = base + BigInt(rng.range(0, 5000)) - 2500n;
        if (v >= 0n && v < 2n ** 64n) sequences.push(v);
      }
    }
    for (let i = 0; i < 2000; i++) sequences.push(BigInt(rng.range(0, 2 ** 30)) * BigInt(rng.range(0, 2 ** 30)));
    const raw = Buffer.concat(
      sequences.map((sequence) => deltaRow({ ts: t, sequence, side: 'bid', price: '1', quantity_delta: '1' })),
    );
    const csv = new RowRenderer('delta', { format: 'csv' }).push(raw)?.toString('latin1') ?? '';
    expect(
      csv
        .trim()
        .split('\n')
        .map((line) => line.split(',')[1]),
    ).toEqual(sequences.map(String));
  });

  it('knows its row sizes', () => {
    expect(rowBinarySize('delta')).toBe(deltaRow(deltas[0] as Delta).length);
    expect(rowBinarySize('snapshot')).toBe(snapshotRow({ ts: 0, side: 'bid', price: '1', quantity: '1' }).length);
  });
});

describe('the never-cut-a-book rule (cutAtBook) over held rows', () => {
  const base = Date.UTC(2026, 2, 26, 14, 0, 0);
  // Books at +1 s (2 rows), +2 s (3 rows), +3 s (2 rows); quantity carries the row number.
  const plan: [number, number][] = [
    [1, 1],
    [1, 2],
    [2, 3],
    [2, 4],
    [2, 5],
    [3, 6],
    [3, 7],
  ];
  const books = Buffer.concat(
    plan.map(([s, n]) =>
      snapshotRow({ ts: base + s * 1000, side: n % 2 ? 'bid' : 'ask', price: '0.5', quantity: `${n}` }),
    ),
  );

  /** As the reader does: hold from a row, then pass on what cutAtBook keeps of the held rows. */
  function cut(holdFrom: number, chunks: Buffer[], mayHaveMore: boolean) {
    const c = new RowRenderer('snapshot');
    c.holdFrom(holdFrom);
    let text = '';
    for (const chunk of chunks) text += c.push(chunk)?.toString() ?? '';
    c.endOfQuery();
    const held = c.takeHeld();
    let complete = true;
    if (held !== undefined) {
      const r = cutAtBook(held, c.size, 1, mayHaveMore);
      complete = r.beyond !== 'book-may-continue';
      if (complete) text += c.pass(held, r.rows).toString();
    }
    return {
      complete,
      rows: c.rows,
      received: c.received,
      ns: complete ? (JSON.parse(`[${text}]`) as { quantity: string }[]).map((r) => Number(r.quantity)) : text,
    };
  }

  it('passes on the rows before the hold, then the rest of the held row’s book, and drops later books', () => {
    expect(cut(0, [books], true)).toEqual({ complete: true, rows: 2, received: 7, ns: [1, 2] });
    expect(cut(1, [books], true)).toEqual({ complete: true, rows: 2, received: 7, ns: [1, 2] });
    expect(cut(2, [books], true)).toEqual({ complete: true, rows: 5, received: 7, ns: [1, 2, 3, 4, 5] });
    expect(cut(3, [books], true)).toEqual({ complete: true, rows: 5, received: 7, ns: [1, 2, 3, 4, 5] });
    expect(cut(5, [books], false)).toEqual({ complete: true, rows: 7, received: 7, ns: [1, 2, 3, 4, 5, 6, 7] });
  });

  it('whatever the chunking', () => {
    const rng = new Rng('hold');
    for (let trial = 0; trial < 200; trial++) {
      const hold = rng.range(0, 6);
      expect(cut(hold, randomChunks(rng, books, 50), true)).toEqual(cut(hold, [books], true));
    }
  });

  it('reports an incomplete book when the held rows ran to the query’s LIMIT without reaching another book', () => {
    const r = cut(5, [books], true);
    expect(r.complete).toBe(false);
    expect(r.rows).toBe(5);
  });

  it('a hold beyond the received rows changes nothing', () => {
    expect(cut(100, [books], false)).toEqual({ complete: true, rows: 7, received: 7, ns: [1, 2, 3, 4, 5, 6, 7] });
  });

  it('still rejects an exception text among held rows', () => {
    const tail = Buffer.from('Code: 159. DB::Exception: Timeout exceeded\n');
    expect(() => cut(1, [books.subarray(0, 41 * 2), tail], true)).toThrow(CorruptStreamError);
  });

  it('over a whole window: keeps the want-th row’s book, says what lies beyond', () => {
    expect(cutAtBook(books, 41, 1, true)).toEqual({ rows: 2, beyond: 'another-book' });
    expect(cutAtBook(books, 41, 3, true)).toEqual({ rows: 5, beyond: 'another-book' });
    expect(cutAtBook(books, 41, 6, true)).toEqual({ rows: 7, beyond: 'book-may-continue' });
    expect(cutAtBook(books, 41, 6, false)).toEqual({ rows: 7, beyond: 'none' });
    expect(cutAtBook(books, 41, 9, false)).toEqual({ rows: 7, beyond: 'none' });
    expect(cutAtBook(Buffer.alloc(0), 41, 1, false)).toEqual({ rows: 0, beyond: 'none' });
  });
});

describe('line formats, received_ts, keys and gap markers', () => {
  const t = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
  const withReceived = (row: Buffer, received: number) => Buffer.concat([row, int64(BigInt(received))]);
  const d = (ts: number, sequence: number | bigint, side: 'bid' | 'ask', price: string, q: string) =>
    deltaRow({ ts, sequence, side, price, quantity_delta: q });

  function render(kind: 'delta' | 'snapshot', raw: Buffer, options: ConstructorParameters<typeof RowRenderer>[1]) {
    const c = new RowRenderer(kind, options);
    const text = c.push(raw)?.toString('latin1') ?? '';
    c.endOfQuery();
    return { c, text };
  }

  it('NDJSON: the JSON rows, one a line; CSV: the same values in the header’s columns', () => {
    const raw = Buffer.concat([d(t, 10, 'bid', '0.48', '-150'), d(t + 7, 2n ** 64n - 1n, 'ask', '0.5100', '20.50')]);
    const json = JSON.parse(`[${render('delta', raw, {}).text}]`) as unknown[];
    const ndjson = render('delta', raw, { format: 'ndjson' }).text;
    expect(ndjson.endsWith('\n')).toBe(true);
    expect(
      ndjson
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(json);
    expect(render('delta', raw, { format: 'csv' }).text).toBe(
      '2026-03-26T14:00:01.193Z,10,bid,0.48,-150\n2026-03-26T14:00:01.200Z,18446744073709551615,ask,0.51,20.5\n',
    );
    expect(csvHeader('delta', false)).toBe('ts,sequence,side,price,quantity_delta\n');
    expect(csvHeader('snapshot', true)).toBe('ts,side,price,quantity,received_ts\n');
    const snap = snapshotRow({ ts: t, side: 'ask', price: '90123.46', quantity: '1.5' });
    expect(render('snapshot', snap, { format: 'csv' }).text).toBe('2026-03-26T14:00:01.193Z,ask,90123.46,1.5\n');
  });

  it('received_ts: read after the layout’s columns, written last', () => {
    const raw = withReceived(d(t, 10, 'bid', '0.48', '-150'), t + 42);
    expect(rowBinarySize('delta', true)).toBe(raw.length);
    expect(JSON.parse(render('delta', raw, { receivedTs: true }).text)).toEqual({
      ts: '2026-03-26T14:00:01.193Z',
      sequence: 10,
      side: 'bid',
      price: '0.48',
      quantity_delta: '-150',
      received_ts: '2026-03-26T14:00:01.235Z',
    });
    expect(render('delta', raw, { receivedTs: true, format: 'csv' }).text).toBe(
      '2026-03-26T14:00:01.193Z,10,bid,0.48,-150,2026-03-26T14:00:01.235Z\n',
    );
    const snap = withReceived(snapshotRow({ ts: t, side: 'bid', price: '1', quantity: '2' }), t + 3);
    expect(rowBinarySize('snapshot', true)).toBe(snap.length);
    expect(JSON.parse(render('snapshot', snap, { receivedTs: true }).text)).toMatchObject({
      received_ts: '2026-03-26T14:00:01.196Z',
    });
  });

  it('venue_seq: read after received_ts as 48 zero-padded bytes, written after it; empty and full width', () => {
    const longest = 'Zz9:._/+=-'.repeat(5).slice(0, 48);
    const raw = Buffer.concat([
      withReceived(d(t, 10, 'bid', '0.48', '-150'), t + 42),
      venueSeqBytes('3:1042'),
      withReceived(d(t + 1, 11, 'ask', '0.5', '2'), t + 43),
      venueSeqBytes(''),
      withReceived(d(t + 2, 12, 'ask', '0.5', '-2'), t + 44),
      venueSeqBytes(longest),
    ]);
    const both = { receivedTs: true, venueSeq: true };
    expect(layoutOf('delta', 'json', FIELD_RECEIVED | FIELD_VENUE_SEQ).size).toBe(raw.length / 3);
    const rows = JSON.parse(`[${render('delta', raw, both).text}]`) as Record<string, unknown>[];
    expect(rows[0]).toEqual({
      ts: '2026-03-26T14:00:01.193Z',
      sequence: 10,
      side: 'bid',
      price: '0.48',
      quantity_delta: '-150',
      received_ts: '2026-03-26T14:00:01.235Z',
      venue_seq: '3:1042',
    });
    expect(rows.map((r) => r.venue_seq)).toEqual(['3:1042', '', longest]);
    expect(render('delta', raw, { ...both, format: 'csv' }).text.split('\n')).toEqual([
      '2026-03-26T14:00:01.193Z,10,bid,0.48,-150,2026-03-26T14:00:01.235Z,3:1042',
      '2026-03-26T14:00:01.194Z,11,ask,0.5,2,2026-03-26T14:00:01.236Z,',
      `2026-03-26T14:00:01.195Z,12,ask,0.5,-2,2026-03-26T14:00:01.237Z,${longest}`,
      '',
    ]);
    expect(csvHeader('delta', FIELD_RECEIVED | FIELD_VENUE_SEQ)).toBe(
      'ts,sequence,side,price,quantity_delta,received_ts,venue_seq\n',
    );
    // Without received_ts, on snapshots: right after the row's own columns; the same text however chunked.
    const snaps = Buffer.concat([
      snapshotRow({ ts: t, side: 'bid', price: '1', quantity: '2' }),
      venueSeqBytes('89455013270'),
      snapshotRow({ ts: t, side: 'ask', price: '1.5', quantity: '3' }),
      venueSeqBytes('89455013270'),
    ]);
    expect(layoutOf('snapshot', 'csv', FIELD_VENUE_SEQ).size).toBe(41 + 48);
    const whole = render('snapshot', snaps, { venueSeq: true, format: 'ndjson' }).text;
    expect(whole).toBe(
      '{"ts":"2026-03-26T14:00:01.193Z","side":"bid","price":"1","quantity":"2","venue_seq":"89455013270"}\n' +
        '{"ts":"2026-03-26T14:00:01.193Z","side":"ask","price":"1.5","quantity":"3","venue_seq":"89455013270"}\n',
    );
    expect(csvHeader('snapshot', FIELD_VENUE_SEQ)).toBe('ts,side,price,quantity,venue_seq\n');
    const rng = new Rng('venue_seq');
    for (let trial = 0; trial < 30; trial++) {
      const c = new RowRenderer('snapshot', { venueSeq: true, format: 'ndjson' });
      let text = '';
      for (const chunk of randomChunks(rng, snaps, 40)) text += c.push(chunk)?.toString('latin1') ?? '';
      c.endOfQuery();
      expect(text).toBe(whole);
    }
    // A value ClickHouse holds that the encoders would refuse still makes valid JSON and CSV (escaped, quoted).
    const odd = Buffer.concat([d(t, 1, 'bid', '1', '1'), venueSeqBytes('a"b,c')]);
    expect(JSON.parse(render('delta', odd, { venueSeq: true }).text)).toMatchObject({ venue_seq: 'a"b,c' });
    expect(render('delta', odd, { venueSeq: true, format: 'csv' }).text).toBe(
      '2026-03-26T14:00:01.193Z,1,bid,1,1,"a""b,c"\n',
    );
  });

  it('knows the key of the last row passed on and how many rows in a row carried it', () => {
    const raw = Buffer.concat([d(t, 1, 'bid', '1', '1'), d(t, 2, 'bid', '1', '1'), d(t, 2, 'bid', '1', '1')]);
    const { c } = render('delta', raw, {});
    expect(c.lastKey()).toEqual({ ts: t, sequence: 2n, run: 2 });
    expect(new RowRenderer('delta').lastKey()).toBeUndefined();
  });

  it('places a marker at F after every row with ts ≤ F and before the first with ts > F; the rest at the end', () => {
    const raw = Buffer.concat([d(t, 1, 'bid', '1', '1'), d(t + 5, 2, 'bid', '1', '1'), d(t + 9, 3, 'bid', '1', '1')]);
    const marker = (n: string) => Buffer.from(`#${n}\n`);
    const c = new RowRenderer('delta', { format: 'csv' });
    c.setMarkers([t - 10, t + 5, t + 5, t + 100], [marker('a'), marker('b'), marker('c'), marker('d')]);
    // Rendered in pieces: the markers go where they belong whatever the chunking.
    let text = '';
    for (let i = 0; i < raw.length; i += 30) text += c.push(raw.subarray(i, i + 30))?.toString() ?? '';
    expect(c.markersPassed).toBe(3);
    text += c.passRemainingMarkers()?.toString() ?? '';
    expect(text.split('\n').map((l) => l.split(',')[0])).toEqual([
      '#a',
      '2026-03-26T14:00:01.193Z',
      '2026-03-26T14:00:01.198Z',
      '#b',
      '#c',
      '2026-03-26T14:00:01.202Z',
      '#d',
      '',
    ]);
    // JSON: counted, not written.
    const j = new RowRenderer('delta');
    j.setMarkers([t + 5], [marker('x')]);
    const json = j.push(raw)?.toString() ?? '';
    expect(JSON.parse(`[${json}]`)).toHaveLength(3);
    expect(j.markersPassed).toBe(1);
    expect(j.passRemainingMarkers()).toBeUndefined();
  });
});

describe('trades, and deltas with trades interleaved (rows of a variable width)', () => {
  const t = Date.UTC(2026, 2, 26, 14, 0, 1, 193);
  const trades: Trade[] = [
    {
      ts: t,
      sequence: 10,
      trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
      price: '0.9900',
      size: '763.00',
      side: 'sell',
    },
    { ts: t, sequence: 11, trade_id: 'a,"b"', price: '90123.45', size: '0.00121425', side: 'buy' },
    { ts: t + 7, sequence: 4_000_000_123n, trade_id: 'h:00000000000000ff', price: '1', size: '1', side: 'buy' },
  ];
  const options = (fields: 'none' | 'all') =>
    fields === 'all' ? { receivedTs: true, venueSide: true, sequence: true } : {};
  const withFields = (r: Trade) => ({ ...r, received_ts: r.ts + 42, venue_side: r.side === 'buy' ? 'yes' : 'no' });

  function render(kind: 'trade' | 'interleaved', chunks: Buffer[], o: ConstructorParameters<typeof RowRenderer>[1]) {
    const c = new RowRenderer(kind, o);
    let text = '';
    for (const chunk of chunks) text += c.push(chunk)?.toString('latin1') ?? '';
    c.endOfQuery();
    return { c, text };
  }

  it('renders trade rows: JSON, NDJSON, CSV (ids quoted when they hold a comma or a quote)', () => {
    const raw = Buffer.concat(trades.map(tradeRow));
    expect(render('trade', [raw], {}).text).toBe(
      '{"ts":"2026-03-26T14:00:01.193Z","trade_id":"d91bc706-ee49-470d-82d8-11418bda6fed","price":"0.99","size":"763","side":"sell"},' +
        '{"ts":"2026-03-26T14:00:01.193Z","trade_id":"a,\\"b\\"","price":"90123.45","size":"0.00121425","side":"buy"},' +
        '{"ts":"2026-03-26T14:00:01.200Z","trade_id":"h:00000000000000ff","price":"1","size":"1","side":"buy"}',
    );
    expect(render('trade', [raw], { format: 'csv' }).text).toBe(
      '2026-03-26T14:00:01.193Z,d91bc706-ee49-470d-82d8-11418bda6fed,0.99,763,sell\n' +
        '2026-03-26T14:00:01.193Z,"a,""b""",90123.45,0.00121425,buy\n' +
        '2026-03-26T14:00:01.200Z,h:00000000000000ff,1,1,buy\n',
    );
    expect(csvHeader('trade', FIELD_RECEIVED | FIELD_VENUE_SIDE | FIELD_SEQUENCE)).toBe(
      'ts,trade_id,price,size,side,received_ts,venue_side,sequence\n',
    );
  });

  it('with received_ts, venue_side and sequence: read in the layout’s order, written last in that order', () => {
    const raw = Buffer.concat(trades.map((r) => tradeRow(withFields(r))));
    const lines = render('trade', [raw], { ...options('all'), format: 'ndjson' })
      .text.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[2]).toEqual({
      ts: '2026-03-26T14:00:01.200Z',
      trade_id: 'h:00000000000000ff',
      price: '1',
      size: '1',
      side: 'buy',
      received_ts: '2026-03-26T14:00:01.242Z',
      venue_side: 'yes',
      sequence: 4000000123,
    });
    expect(Object.keys(lines[0] as object)).toEqual([
      'ts',
      'trade_id',
      'price',
      'size',
      'side',
      'received_ts',
      'venue_side',
      'sequence',
    ]);
    expect(render('trade', [raw], { ...options('all'), format: 'csv' }).text.split('\n')[1]).toBe(
      '2026-03-26T14:00:01.193Z,"a,""b""",90123.45,0.00121425,buy,2026-03-26T14:00:01.235Z,yes,11',
    );
  });

  it('with venue_seq too: read after received_ts (before the Strings), written last, on trade rows and trade lines', () => {
    const r = { ...withFields(trades[1] as Trade), venue_seq: '7:99' };
    const raw = tradeRow(r);
    const all = { ...options('all'), venueSeq: true };
    expect(JSON.parse(render('trade', [raw], all).text)).toEqual({
      ts: '2026-03-26T14:00:01.193Z',
      trade_id: 'a,"b"',
      price: '90123.45',
      size: '0.00121425',
      side: 'buy',
      received_ts: '2026-03-26T14:00:01.235Z',
      venue_side: 'yes',
      sequence: 11,
      venue_seq: '7:99',
    });
    expect(render('trade', [raw], { ...all, format: 'csv' }).text).toBe(
      '2026-03-26T14:00:01.193Z,"a,""b""",90123.45,0.00121425,buy,2026-03-26T14:00:01.235Z,yes,11,7:99\n',
    );
    expect(csvHeader('trade', FIELD_RECEIVED | FIELD_VENUE_SIDE | FIELD_SEQUENCE | FIELD_VENUE_SEQ)).toBe(
      'ts,trade_id,price,size,side,received_ts,venue_side,sequence,venue_seq\n',
    );
    // Without received_ts and venue_side: right after the fixed columns.
    const bare = tradeRow({ ...(trades[0] as Trade), venue_seq: '' });
    expect(JSON.parse(render('trade', [bare], { venueSeq: true }).text)).toMatchObject({
      trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
      venue_seq: '',
    });
    const lines = Buffer.concat([
      interleavedRow(
        { kind: 'delta', ts: t, sequence: 9, side: 'bid', price: '0.48', quantity_delta: '-150' },
        t + 1,
        '5:1',
      ),
      interleavedRow({ kind: 'trade', ...(trades[1] as Trade) }, t + 2, '5:2'),
    ]);
    expect(render('interleaved', [lines], { format: 'ndjson', receivedTs: true, venueSeq: true }).text).toBe(
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":9,"side":"bid","price":"0.48","quantity_delta":"-150","received_ts":"2026-03-26T14:00:01.194Z","venue_seq":"5:1"}\n' +
        '{"type":"trade","ts":"2026-03-26T14:00:01.193Z","trade_id":"a,\\"b\\"","price":"90123.45","size":"0.00121425","side":"buy","received_ts":"2026-03-26T14:00:01.195Z","venue_seq":"5:2"}\n',
    );
    expect(render('interleaved', [lines], { format: 'csv', venueSeq: true, receivedTs: true }).text).toBe(
      '2026-03-26T14:00:01.193Z,9,bid,0.48,-150,2026-03-26T14:00:01.194Z,5:1\n' +
        '#trade,2026-03-26T14:00:01.193Z,"a,""b""",90123.45,0.00121425,buy,2026-03-26T14:00:01.195Z,5:2\n',
    );
  });

  it('gives the same text however the rows are chunked, and keeps the last key and its run', () => {
    const rng = new Rng('trade-chunks');
    const many: Trade[] = Array.from({ length: 200 }, (_, i) => ({
      ts: t + Math.floor(i / 4),
      sequence: Math.floor(i / 2),
      trade_id: 'i'.repeat(i % 129),
      price: `0.${rng.range(1, 99)}`,
      size: `${rng.range(1, 999)}`,
      side: i % 2 ? 'buy' : 'sell',
    }));
    const raw = Buffer.concat(many.map((r) => tradeRow(withFields(r))));
    const whole = render('trade', [raw], options('all'));
    expect(whole.c.rows).toBe(200);
    expect(JSON.parse(`[${whole.text}]`)).toHaveLength(200);
    expect(whole.c.lastKey()).toEqual({ ts: t + 49, sequence: 99n, run: 2 });
    for (let trial = 0; trial < 60; trial++) {
      const { c, text } = render('trade', randomChunks(rng, raw, 150), options('all'));
      expect(text).toBe(whole.text);
      expect(c.lastKey()).toEqual(whole.c.lastKey());
    }
  });

  it('holds the look-ahead row back whole, across chunks', () => {
    const raw = Buffer.concat(trades.map(tradeRow));
    const c = new RowRenderer('trade');
    c.holdFrom(2);
    let text = '';
    for (let i = 0; i < raw.length; i += 17) text += c.push(raw.subarray(i, i + 17))?.toString() ?? '';
    c.endOfQuery();
    expect(JSON.parse(`[${text}]`)).toHaveLength(2);
    expect(c.takeHeld()).toEqual(tradeRow(trades[2] as Trade));
    expect(c.lastKey()).toEqual({ ts: t, sequence: 11n, run: 1 });
  });

  it('rejects what cannot be a trade: an exception after rows, a length beyond a stored id, a cut row', () => {
    const rng = new Rng('trade-exceptions');
    const raw = Buffer.concat(trades.map(tradeRow));
    const tail = Buffer.from('Code: 159. DB::Exception: Timeout exceeded. (TIMEOUT_EXCEEDED) (version 24.8.14.39)\n');
    for (let trial = 0; trial < 20; trial++)
      expect(() => render('trade', randomChunks(rng, Buffer.concat([raw, tail]), 40), {})).toThrow(CorruptStreamError);
    const long = tradeRow(trades[0] as Trade);
    long[49] = 0x81; // a length of 129 + …
    long[50] = 0x01;
    expect(() => render('trade', [long], {})).toThrow(CorruptStreamError);
    expect(() => render('trade', [raw.subarray(0, raw.length - 3)], {})).toThrow(/middle of a row/);
  });

  it('interleaves: delta rows as the deltas endpoint writes them, trades as {"type":"trade",…} / #trade lines', () => {
    const rows = [
      interleavedRow({ kind: 'delta', ts: t, sequence: 9, side: 'bid', price: '0.48', quantity_delta: '-150' }, t + 1),
      interleavedRow({ kind: 'trade', ...(trades[1] as Trade) }, t + 2),
      interleavedRow({ kind: 'delta', ts: t + 7, sequence: 12, side: 'ask', price: '0.5', quantity_delta: '3' }, t + 9),
    ];
    const raw = Buffer.concat(rows);
    expect(render('interleaved', [raw], { format: 'ndjson', receivedTs: true }).text).toBe(
      '{"ts":"2026-03-26T14:00:01.193Z","sequence":9,"side":"bid","price":"0.48","quantity_delta":"-150","received_ts":"2026-03-26T14:00:01.194Z"}\n' +
        '{"type":"trade","ts":"2026-03-26T14:00:01.193Z","trade_id":"a,\\"b\\"","price":"90123.45","size":"0.00121425","side":"buy","received_ts":"2026-03-26T14:00:01.195Z"}\n' +
        '{"ts":"2026-03-26T14:00:01.200Z","sequence":12,"side":"ask","price":"0.5","quantity_delta":"3","received_ts":"2026-03-26T14:00:01.202Z"}\n',
    );
    expect(render('interleaved', [raw], { format: 'csv', receivedTs: true }).text).toBe(
      '2026-03-26T14:00:01.193Z,9,bid,0.48,-150,2026-03-26T14:00:01.194Z\n' +
        '#trade,2026-03-26T14:00:01.193Z,"a,""b""",90123.45,0.00121425,buy,2026-03-26T14:00:01.195Z\n' +
        '2026-03-26T14:00:01.200Z,12,ask,0.5,3,2026-03-26T14:00:01.202Z\n',
    );
    const plain = Buffer.concat([
      interleavedRow({ kind: 'trade', ...(trades[0] as Trade) }),
      interleavedRow({ kind: 'delta', ts: t, sequence: 11, side: 'ask', price: '1', quantity_delta: '2' }),
    ]);
    const { c, text } = render('interleaved', randomChunks(new Rng('x'), plain, 30), {});
    expect(JSON.parse(`[${text}]`)).toEqual([
      {
        type: 'trade',
        ts: '2026-03-26T14:00:01.193Z',
        trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed',
        price: '0.99',
        size: '763',
        side: 'sell',
      },
      { ts: '2026-03-26T14:00:01.193Z', sequence: 11, side: 'ask', price: '1', quantity_delta: '2' },
    ]);
    expect(c.lastKey()).toEqual({ ts: t, sequence: 11n, run: 1 });
    const bad = Buffer.from(plain);
    bad[16] = 3; // a row kind that is neither
    expect(() => render('interleaved', [bad], {})).toThrow(CorruptStreamError);
  });
});
