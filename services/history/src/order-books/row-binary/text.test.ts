import { Rng } from '@depthgate/service-kit';
import { decimalBytes, int128Bytes } from '../../testing/row-binary';
import { decimalText, writeDecimal18, writeTimestamp } from './text';

/** Reference: the canonical text of a scaled integer (units of 1e-18), by BigInt arithmetic. */
function canonical(v: bigint): string {
  const negative = v < 0n;
  const a = negative ? -v : v;
  let text = `${negative ? '-' : ''}${a / 10n ** 18n}`;
  const fraction = a % 10n ** 18n;
  if (fraction !== 0n) text += `.${fraction.toString().padStart(18, '0').replace(/0+$/, '')}`;
  return text;
}

function render(bytes: Buffer): string {
  const out = Buffer.alloc(64);
  return out.subarray(0, writeDecimal18(bytes, 0, out, 0)).toString('latin1');
}

describe('writeDecimal18', () => {
  it('renders the canonical text: exact, no exponent, trailing fractional zeros and a bare point removed', () => {
    const cases: [string, string][] = [
      ['0.4800', '0.48'],
      ['150.00', '150'],
      ['100', '100'],
      ['0', '0'],
      ['0.000', '0'],
      ['-0.01', '-0.01'],
      ['-20.50', '-20.5'],
      ['0.00121425', '0.00121425'],
      ['0.000000000000000001', '0.000000000000000001'],
      ['-0.000000000000000001', '-0.000000000000000001'],
      ['18.446744073709551615', '18.446744073709551615'],
      ['18.446744073709551616', '18.446744073709551616'],
      ['87000.5', '87000.5'],
      ['79228162514.264337593543950335', '79228162514.264337593543950335'],
      ['79228162514.264337593543950336', '79228162514.264337593543950336'],
      ['12345678901234567890.123456789012345678', '12345678901234567890.123456789012345678'],
      ['-99999999999999999999.999999999999999999', '-99999999999999999999.999999999999999999'],
    ];
    for (const [stored, shown] of cases) expect(render(decimalBytes(stored))).toBe(shown);
  });

  it('agrees with BigInt arithmetic on every magnitude, sign and scale (fuzz)', () => {
    const rng = new Rng('decimals');
    for (let i = 0; i < 20_000; i++) {
      const bits = rng.range(1, 127);
      let v = 0n;
      for (let k = 0; k < bits; k += 24) v = (v << 24n) | BigInt(rng.range(0, 0xffffff));
      v &= (1n << BigInt(bits)) - 1n;
      // Values on a decimal grid (few fractional digits) as well as arbitrary ones.
      if (rng.float() < 0.5) v -= v % 10n ** BigInt(rng.range(0, 18));
      if (rng.float() < 0.5) v = -v;
      expect(render(int128Bytes(v))).toBe(canonical(v));
    }
  });

  it("is exact on both sides of its short path's bound (quotients by 1e9 near 2^53: about 8.46 million)", () => {
    // Below 0x70000 · 2^64 units the value is divided as (w2·2^32 + w1) and two 16-bit limbs, its quotient by 1e9
    // once; from there on by five limbs and twice. The largest values below the bound are the closest to 2^53.
    const bound = 0x70000n << 64n;
    const rng = new Rng('short-bound');
    const values = [bound - 1n, bound, bound + 1n, bound - 10n ** 9n, (1n << 64n) - 1n, 1n << 64n];
    // Anywhere from half the bound to twice it.
    for (let i = 0; i < 10_000; i++) {
      const r =
        (BigInt(rng.range(0, 2 ** 30)) << 60n) | (BigInt(rng.range(0, 2 ** 30)) << 30n) | BigInt(rng.range(0, 2 ** 30));
      let v = bound / 2n + (r % ((bound * 3n) / 2n));
      if (rng.float() < 0.5) v -= v % 10n ** BigInt(rng.range(0, 18));
      values.push(v);
    }
    for (const v of values) {
      expect(render(int128Bytes(v))).toBe(canonical(v));
      expect(render(int128Bytes(-v))).toBe(canonical(-v));
    }
  });

  it('gives the same text for a value whether it is freshly formatted or repeated from its cache', () => {
    const values = ['0.55', '0.56', '-3.25', '88115.27', '0.55', '88115.27', '-3.25'];
    const first = values.map((v) => render(decimalBytes(v)));
    expect(first).toEqual(['0.55', '0.56', '-3.25', '88115.27', '0.55', '88115.27', '-3.25']);
    // Values that collide in the cache's 4,096 slots cannot be mixed up: 20k random values checked twice over.
    const rng = new Rng('cache');
    const many = Array.from({ length: 20_000 }, () => BigInt(rng.range(0, 2 ** 30)) * 10n ** BigInt(rng.range(0, 12)));
    for (const round of [1, 2])
      for (const v of many) expect([round, render(int128Bytes(v))]).toEqual([round, canonical(v)]);
  });

  it("keeps a text of 41 bytes (21 integer digits: wider than a column, a sum of them) out of its neighbours' slots", () => {
    const rng = new Rng('wide');
    const cached = Array.from({ length: 2000 }, () => BigInt(rng.range(0, 2 ** 30)) * 10n ** 14n);
    const wide = Array.from({ length: 100 }, () => -(2n ** 127n) + BigInt(rng.range(0, 2 ** 30)));
    for (const v of [...cached, ...wide, ...cached]) expect(render(int128Bytes(v))).toBe(canonical(v));
  });
});

describe('writeTimestamp', () => {
  it('writes UTC RFC 3339 with milliseconds, like Date.toISOString, from 1970 to 9999', () => {
    const rng = new Rng('ts');
    const out = Buffer.alloc(32);
    for (const ts of [
      0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      Date.UTC(2026, 2, 26, 14, 0, 1, 193),
      253_402_300_799_999,
    ])
      expect(out.subarray(0, writeTimestamp(ts, out, 0)).toString()).toBe(new Date(ts).toISOString());
    for (let i = 0; i < 5000; i++) {
      const ts = Math.floor(rng.float() * 253_402_300_799_999);
      expect(out.subarray(0, writeTimestamp(ts, out, 0)).toString()).toBe(new Date(ts).toISOString());
    }
  });
});

describe('decimalText', () => {
  it('decimalText and BigInt amounts agree with the row renderer', () => {
    for (const v of [0n, 1n, -1n, 480000000000000000n, -150n * 10n ** 18n, 2n ** 127n - 1n, -(2n ** 127n)]) {
      expect(decimalText(v)).toBe(canonical(v));
    }
  });
});
