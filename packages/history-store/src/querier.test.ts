import { Readable } from 'node:stream';
import { eachChunk } from './querier';

/** A stream holding `pieces` already (as an HTTP answer's chunks buffered before they are taken), then its end. */
function buffered(pieces: string[]): Readable {
  const stream = new Readable({ read() {} });
  for (const p of pieces) stream.push(Buffer.from(p));
  stream.push(null);
  return stream;
}

describe('eachChunk: a query answer, chunk by chunk', () => {
  it('hands each chunk as it came, not the buffered ones joined', async () => {
    const seen: string[] = [];
    await eachChunk(buffered(['ab', 'cd', 'ef']), (chunk) => {
      seen.push(chunk.toString());
    });
    expect(seen).toEqual(['ab', 'cd', 'ef']);
  });

  it('takes the next chunk only once the last one is taken, and ends after the last one is', async () => {
    const events: string[] = [];
    let release!: () => void;
    const done = eachChunk(buffered(['a', 'b']), (chunk) => {
      events.push(`start ${chunk.toString()}`);
      return new Promise<void>((resolve) => {
        release = () => {
          events.push(`end ${chunk.toString()}`);
          resolve();
        };
      });
    }).then(() => events.push('resolved'));
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['start a']);
    release();
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['start a', 'end a', 'start b']);
    release();
    await done;
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'resolved']);
  });

  it("rejects with the stream's failure and with the consumer's", async () => {
    const failing = new Readable({ read() {} });
    failing.push(Buffer.from('a'));
    setImmediate(() => failing.destroy(new Error('socket hang up')));
    await expect(eachChunk(failing, () => undefined)).rejects.toThrow('socket hang up');
    await expect(
      eachChunk(buffered(['a']), () => {
        throw new Error('not a row');
      }),
    ).rejects.toThrow('not a row');
    await expect(eachChunk(buffered(['a']), () => Promise.reject(new Error('caller gone')))).rejects.toThrow(
      'caller gone',
    );
  });

  it('rejects when the stream closes before its end', async () => {
    const cut = new Readable({ read() {} });
    cut.push(Buffer.from('a'));
    setImmediate(() => cut.destroy());
    await expect(eachChunk(cut, () => undefined)).rejects.toThrow(/premature close/i);
  });
});
