import { Rng } from '../generator/prng';
import { CorruptStreamError, JsonLinesToArray } from './json-lines';

function run(chunks: string[]): { text: string; rows: number } {
  const t = new JsonLinesToArray();
  let text = '';
  for (const c of chunks) for (const part of t.push(Buffer.from(c))) text += part.toString();
  t.endOfQuery();
  return { text, rows: t.rows };
}

describe('JsonLinesToArray', () => {
  const rows = ['{"a":1}', '{"b":"x\\ny"}', '{"c":[1,2]}'];
  const ndjson = rows.map((r) => `${r}\n`).join('');

  it('turns JSON lines into array members and counts them', () => {
    const { text, rows: n } = run([ndjson]);
    expect(JSON.parse(`[${text}]`)).toEqual(rows.map((r) => JSON.parse(r)));
    expect(n).toBe(3);
  });

  it('gives the same bytes however the input is chunked', () => {
    const rng = new Rng('chunks');
    const big = Array.from({ length: 200 }, (_, i) => `{"i":${i},"s":"${'x'.repeat(i % 7)}"}\n`).join('');
    const whole = run([big]).text;
    for (let trial = 0; trial < 200; trial++) {
      const chunks: string[] = [];
      for (let at = 0; at < big.length;) {
        const n = rng.int(1, 40);
        chunks.push(big.slice(at, at + n));
        at += n;
      }
      expect(run(chunks)).toEqual({ text: whole, rows: 200 });
    }
  });

  it('joins the outputs of several queries into one array', () => {
    const t = new JsonLinesToArray();
    let text = '';
    for (const q of [['{"w":1}\n{"w":2}\n'], [], ['{"w":3}', '\n']]) {
      for (const c of q) for (const part of t.push(Buffer.from(c))) text += part.toString();
      t.endOfQuery();
    }
    expect(JSON.parse(`[${text}]`)).toEqual([{ w: 1 }, { w: 2 }, { w: 3 }]);
    expect(t.rows).toBe(3);
  });

  it('an empty result is an empty array', () => {
    expect(run([])).toEqual({ text: '', rows: 0 });
  });

  it('rejects an exception appended by ClickHouse after rows (18.16 and current formats)', () => {
    for (const tail of [
      'Code: 159, e.displayText() = DB::Exception: Timeout exceeded: elapsed 1.0 seconds, e.what() = DB::Exception\n',
      'Code: 159. DB::Exception: Timeout exceeded. (TIMEOUT_EXCEEDED) (version 24.8.14.39 (official build))\n',
      '__exception__\nCode: 394. DB::Exception: Query was cancelled\n',
    ]) {
      expect(() => run([ndjson + tail])).toThrow(CorruptStreamError);
      expect(() => run([ndjson, tail])).toThrow(CorruptStreamError);
      expect(() => run([tail])).toThrow(/Code: \d+/);
    }
  });

  it('rejects a result that ends in the middle of a row', () => {
    expect(() => run(['{"a":1}\n{"b":'])).toThrow(/middle of a row/);
  });
});

describe('JsonLinesToArray: holding back the last book', () => {
  const row = (ts: string, n: number) => `{"ts":"2026-03-26T14:00:${ts}.000Z","n":${n}}\n`;
  const books = [row('01', 1), row('01', 2), row('02', 3), row('02', 4), row('02', 5), row('03', 6), row('03', 7)].join(
    '',
  );

  function cut(holdFrom: number, chunks: string[], mayHaveMore: boolean) {
    const t = new JsonLinesToArray();
    t.holdFrom(holdFrom);
    let text = '';
    for (const c of chunks) for (const part of t.push(Buffer.from(c))) text += part.toString();
    t.endOfQuery();
    const { complete, out } = t.releaseBook(mayHaveMore);
    for (const part of out) text += part.toString();
    return {
      complete,
      rows: t.rows,
      received: t.received,
      ns: complete ? JSON.parse(`[${text}]`).map((r: { n: number }) => r.n) : text,
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
      const chunks: string[] = [];
      for (let at = 0; at < books.length;) {
        const n = rng.int(1, 50);
        chunks.push(books.slice(at, at + n));
        at += n;
      }
      const hold = rng.int(0, 6);
      const expected = cut(hold, [books], true);
      expect(cut(hold, chunks, true)).toEqual(expected);
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
    expect(() => cut(1, [row('01', 1), row('01', 2), 'Code: 159. DB::Exception: Timeout exceeded\n'], true)).toThrow(
      CorruptStreamError,
    );
  });
});
