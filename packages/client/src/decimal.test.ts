import { Decimal, canonicalDecimal, compareCanonical, formatUnits, isCanonicalDecimal, parseScaled } from './decimal';
import { DataError } from './errors';
import { thrownBy } from '@depthgate/test-utils';

describe('Decimal', () => {
  it('adds, subtracts and multiplies exactly (no binary floating point)', () => {
    expect(Decimal.parse('0.1').add('0.2').toString()).toBe('0.3');
    expect(Decimal.parse('12345678901234567890.123456789012345678').add('0.000000000000000001').toString()).toBe(
      '12345678901234567890.123456789012345679',
    );
    expect(Decimal.parse('150').sub('150.00').toString()).toBe('0');
    expect(Decimal.parse('-0.5').sub('0.25').toString()).toBe('-0.75');
    expect(Decimal.parse('1.5').mul('-0.02').toString()).toBe('-0.03');
    expect(Decimal.parse('0.47').add('0.48').half().toString()).toBe('0.475');
    expect(Decimal.parse('3').half().toString()).toBe('1.5');
  });

  it('prints the canonical text the service writes', () => {
    for (const [input, out] of [
      ['0.4800', '0.48'],
      ['150.00', '150'],
      ['-0', '0'],
      ['-0.000', '0'],
      ['007.50', '7.5'],
      ['0.00121425', '0.00121425'],
      ['-20.5', '-20.5'],
    ]) {
      expect(Decimal.parse(input as string).toString()).toBe(out);
      expect(canonicalDecimal(input as string)).toBe(out);
    }
    expect(JSON.stringify({ p: Decimal.parse('1.10') })).toBe('{"p":"1.1"}');
  });

  it('compares by value', () => {
    expect(Decimal.parse('0.48').eq('0.4800')).toBe(true);
    expect(Decimal.parse('0.5').gt('0.49999')).toBe(true);
    expect(Decimal.parse('-1').lt('0')).toBe(true);
    expect(Decimal.parse('2').cmp('10')).toBe(-1);
    expect(Decimal.parse('0').isZero()).toBe(true);
    expect(Decimal.parse('-3.2').abs().toString()).toBe('3.2');
    expect(Decimal.parse('-3.2').sign()).toBe(-1);
  });

  it.each(['', '-', '1e3', '+1', ' 1', '1 ', '1.', '.5', '0x10', '1,5', 'NaN', 'Infinity', '1..2', '--1'])(
    'refuses %j as invalid_decimal',
    (text) => {
      const err = thrownBy(() => Decimal.parse(text), DataError);
      expect(err).toBeInstanceOf(DataError);
      expect((err as DataError).code).toBe('invalid_decimal');
    },
  );

  it('compareCanonical agrees with exact comparison on random canonical decimals', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const random = () => {
      const int = String(rand(3) === 0 ? 0 : rand(100000));
      const frac = rand(2) ? '' : `.${String(rand(10 ** 6)).padStart(6, '0')}`;
      return canonicalDecimal(`${rand(4) === 0 ? '-' : ''}${int}${frac}`);
    };
    for (let i = 0; i < 5000; i++) {
      const a = random();
      const b = random();
      expect(isCanonicalDecimal(a)).toBe(true);
      expect(Math.sign(compareCanonical(a, b))).toBe(Decimal.parse(a).cmp(b));
    }
  });

  it('parseScaled and formatUnits round-trip at scale 18, refusing what the scale cannot hold', () => {
    expect(parseScaled('20.25', 18)).toBe(20_250_000_000_000_000_000n);
    expect(parseScaled('-0.000000000000000001', 18)).toBe(-1n);
    expect(parseScaled('12345678901234567890.123456789012345678', 18)).toBe(12345678901234567890123456789012345678n);
    expect(parseScaled('-0.0000000000000000', 18)).toBe(0n);
    expect(parseScaled('007', 18)).toBe(7_000_000_000_000_000_000n);
    expect(formatUnits(-1n, 18)).toBe('-0.000000000000000001');
    expect(formatUnits(20_250_000_000_000_000_000n, 18)).toBe('20.25');
    for (const bad of ['0.0000000000000000001', '1.', '.1', '-', '', '1e5', '-.5', '1.2.3']) {
      expect(parseScaled(bad, 18)).toBeUndefined();
    }
  });
});
