import { kalshiSocket } from './kalshi';

/** A JSON array nested `depth` deep (JSON.parse takes it; JSON.stringify runs out of stack on it). */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('Kalshi replay protocol', () => {
  it('a command whose id is nested too deep to be echoed gets code 1 with id null, as any command it cannot answer', () => {
    const p = kalshiSocket.create();
    for (const cmd of ['"x"', '"subscribe"'])
      for (const started of [false, true]) {
        const f = p.frame(`{"id":${nested(30_000)},"cmd":${cmd},"params":{}}`, false, started);
        expect(f).toEqual({ kind: 'reply', texts: [expect.any(String)] });
        if (f.kind !== 'reply') throw new Error('unreachable');
        expect(JSON.parse(f.texts[0] as string)).toEqual({
          id: null,
          type: 'error',
          msg: { code: 1, msg: 'Unable to process message' },
        });
      }
    // An id that can be echoed is, even a nested one.
    const f = p.frame(`{"id":${nested(3)},"cmd":"x"}`, false, false);
    expect(f.kind === 'reply' && JSON.parse(f.texts[0] as string)).toMatchObject({ id: [[[]]], msg: { code: 5 } });
  });
});
