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
