import { BATCH_LINES, splitLines } from './lines';

async function* chunks(...texts: string[]): AsyncGenerator<Uint8Array> {
  for (const t of texts) yield new TextEncoder().encode(t);
}

async function collect(source: ReturnType<typeof splitLines>) {
  const sizes: number[] = [];
  const lines: string[] = [];
  for await (const { text, bounds } of source.batches) {
    sizes.push(bounds.length / 2);
    for (let i = 0; i < bounds.length; i += 2) lines.push(text.slice(bounds[i], bounds[i + 1]));
  }
  return { sizes, lines, complete: source.complete() };
}

describe('splitLines', () => {
  const where = { url: 'http://test.invalid/x' };

  it('gives a large chunk in batches of at most BATCH_LINES lines, every line once and in order', async () => {
    const n = 2 * BATCH_LINES + 123;
    const lines = Array.from({ length: n }, (_, i) => `{"i":${i}}`);
    // One chunk holding every line (a body a fetch handed over whole), with a CRLF line and a line cut by the chunk's
    // end, finished by the next chunk.
    const body = lines.map((l, i) => (i === 7 ? `${l}\r\n` : `${l}\n`)).join('');
    const got = await collect(splitLines(chunks(`${body}{"tail"`, ':1}\n'), where));
    expect(got.sizes).toEqual([BATCH_LINES, BATCH_LINES, 123, 1]);
    expect(got.lines).toEqual([...lines, '{"tail":1}']);
    expect(got.complete).toBe(true);
  });

  it('reports a body that stops inside a line', async () => {
    const got = await collect(splitLines(chunks('{"a":1}\n{"b"'), where));
    expect(got.lines).toEqual(['{"a":1}']);
    expect(got.complete).toBe(false);
  });
});
