import type { Caller } from '@depthgate/auth';
import { AppError } from '@depthgate/service-kit';
import { CursorCodec, type CursorData } from './cursor';

const key = (id: string): Caller =>
  ({
    kind: 'key',
    key: {
      id,
      name: id,
      tickerPrefixes: null,
      fullHistoryPrefixes: null,
      maxDataAgeDays: null,
      requestsPerMinute: null,
      platforms: null,
    },
  }) as Caller;
const anonymous: Caller = { kind: 'anonymous', ip: '127.0.0.1' };

const data: CursorData = {
  kind: 'delta',
  exchange: 'venue_b',
  ticker: 'KXBTCD-26MAR07-T100000',
  position: { ts: 1_774_533_601_193, sequence: 2n ** 64n - 1n, skip: 3 },
  to: null,
};
const expected = { kind: data.kind, exchange: data.exchange, ticker: data.ticker, caller: key('k1') };

function rejection(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError && err.code === 'invalid_cursor') return err.message;
    throw err;
  }
  throw new Error('expected invalid_cursor');
}

describe('CursorCodec', () => {
  const codec = new CursorCodec({ secret: 's'.repeat(32) });

  it('round-trips a position exactly, in base64url', () => {
    const text = codec.encode(data, key('k1'));
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(text, expected)).toEqual(data);
    const bounded = {
      ...data,
      kind: 'snapshot' as const,
      to: 1_774_600_000_000,
      position: { ts: 5, sequence: 0n, skip: 0 },
    };
    expect(
      codec.decode(codec.encode(bounded, anonymous), { ...expected, kind: 'snapshot', caller: anonymous }),
    ).toEqual(bounded);
  });

  it('refuses a cursor altered anywhere, or signed with another secret', () => {
    const raw = Buffer.from(codec.encode(data, key('k1')), 'base64url');
    for (let i = 1; i < raw.length; i++) {
      const bad = Buffer.from(raw);
      bad[i] = (bad[i] as number) ^ 0x10;
      expect(rejection(() => codec.decode(bad.toString('base64url'), expected))).toMatch(
        /not a cursor|does not verify|issued/,
      );
    }
    const other = new CursorCodec({ secret: 'o'.repeat(32) });
    expect(rejection(() => other.decode(codec.encode(data, key('k1')), expected))).toMatch(/does not verify/);
    expect(rejection(() => codec.decode(codec.encode(data, key('k1')).slice(0, -4), expected))).toMatch(/./);
  });

  it('names what a foreign cursor was issued for: exchange, ticker, kind, caller', () => {
    const text = codec.encode(data, key('k1'));
    expect(rejection(() => codec.decode(text, { ...expected, kind: 'snapshot' }))).toBe(
      'cursor was issued for the deltas of KXBTCD-26MAR07-T100000 on venue_b, not the snapshots of KXBTCD-26MAR07-T100000 on venue_b',
    );
    expect(rejection(() => codec.decode(text, { ...expected, exchange: 'venue_c' }))).toMatch(/on venue_c$/);
    expect(rejection(() => codec.decode(text, { ...expected, ticker: 'KXOTHER' }))).toMatch(/of KXOTHER on/);
    expect(rejection(() => codec.decode(text, { ...expected, caller: key('k2') }))).toMatch(/another caller/);
    expect(rejection(() => codec.decode(text, { ...expected, caller: anonymous }))).toMatch(/another caller/);
    // The key's id is not in the cursor.
    expect(Buffer.from(text, 'base64url').includes(Buffer.from('k1'))).toBe(false);
  });

  it('keeps the walks of the endpoints apart: trades (3), bars (4, their interval), deltas with trades (5)', () => {
    const kinds = ['snapshot', 'delta', 'trade', 'bar', 'interleaved'] as const;
    for (const [code, kind] of kinds.entries()) {
      const walk = { ...data, kind, position: { ts: 60_000, sequence: kind === 'bar' ? 60_000n : 7n, skip: 1 } };
      const text = codec.encode(walk, key('k1'));
      expect(Buffer.from(text, 'base64url')[1]).toBe(code + 1);
      expect(codec.decode(text, { ...expected, kind })).toEqual(walk);
      for (const other of kinds.filter((k) => k !== kind))
        expect(rejection(() => codec.decode(text, { ...expected, kind: other }))).toMatch(/^cursor was issued for the/);
    }
    const interleaved = codec.encode({ ...data, kind: 'interleaved' }, key('k1'));
    expect(rejection(() => codec.decode(interleaved, expected))).toBe(
      'cursor was issued for the deltas with trades (include=trades) of KXBTCD-26MAR07-T100000 on venue_b, not the deltas of KXBTCD-26MAR07-T100000 on venue_b',
    );
  });

  it('another format version is refused as such; garbage as not a cursor', () => {
    const raw = Buffer.from(codec.encode(data, key('k1')), 'base64url');
    raw[0] = 2;
    expect(rejection(() => codec.decode(raw.toString('base64url'), expected))).toMatch(/format 2 is not accepted/);
    for (const text of ['', 'x', '!!!!', 'a'.repeat(1000)])
      expect(rejection(() => codec.decode(text, expected))).toMatch(/not a cursor/);
  });

  it('accepts the previous secret during a rotation, and signs with the current one', () => {
    const old = new CursorCodec({ secret: 'a'.repeat(32) });
    const rotating = new CursorCodec({ secret: 'b'.repeat(32), previous: 'a'.repeat(32) });
    expect(rotating.decode(old.encode(data, key('k1')), expected)).toEqual(data);
    expect(rejection(() => old.decode(rotating.encode(data, key('k1')), expected))).toMatch(/does not verify/);
  });

  it('without a secret, signs with a random one of its own', () => {
    const a = new CursorCodec({});
    const b = new CursorCodec({});
    expect(a.random).toBe(true);
    expect(a.decode(a.encode(data, key('k1')), expected)).toEqual(data);
    expect(rejection(() => b.decode(a.encode(data, key('k1')), expected))).toMatch(/does not verify/);
  });
});
