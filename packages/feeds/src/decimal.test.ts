import {
  CanonicalMemo,
  DecimalError,
  canonicalDecimal,
  centsToDollars,
  complementOfOne,
  formatDecimal,
  parseDecimal,
} from './decimal';

describe('exact decimals', () => {
  it('parses venue text into 10^-18 units and formats canonically', () => {
    expect(parseDecimal('20.25')).toBe(20_250_000_000_000_000_000n);
    expect(parseDecimal('-0.000000000000000001')).toBe(-1n);
    expect(parseDecimal('12345678901234567890.123456789012345678')).toBe(12345678901234567890123456789012345678n);
    expect(formatDecimal(parseDecimal('0.4800'))).toBe('0.48');
    expect(formatDecimal(parseDecimal('150.00'))).toBe('150');
    expect(formatDecimal(parseDecimal('-20.50'))).toBe('-20.5');
    expect(formatDecimal(0n)).toBe('0');
    expect(formatDecimal(-1n)).toBe('-0.000000000000000001');
    expect(canonicalDecimal('0.00121425')).toBe('0.00121425');
  });

  it('refuses what the tables cannot hold exactly or is not plain decimal text', () => {
    for (const bad of [
      '',
      '1e3',
      '+1',
      ' 1',
      '1.',
      '.5',
      '0x10',
      '1.0000000000000000001',
      '123456789012345678901',
      'NaN',
    ]) {
      expect(() => parseDecimal(bad)).toThrow(DecimalError);
    }
  });

  it('round-trips arithmetic without floating point', () => {
    const a = parseDecimal('0.1');
    const b = parseDecimal('0.2');
    expect(formatDecimal(a + b)).toBe('0.3');
    expect(formatDecimal(parseDecimal('1316.00') - parseDecimal('1698.37'))).toBe('-382.37');
  });

  it('computes 1 − p with the price’s own places (Kalshi NO bid → YES ask)', () => {
    expect(complementOfOne('0.5400')).toBe('0.4600');
    expect(complementOfOne('0.01')).toBe('0.99');
    expect(complementOfOne('0.123456')).toBe('0.876544');
    expect(complementOfOne('1')).toBe('0');
    expect(complementOfOne('0')).toBe('1');
    expect(complementOfOne('1.0000')).toBe('0.0000');
    expect(() => complementOfOne('1.01')).toThrow(DecimalError);
    expect(() => complementOfOne('-0.5')).toThrow(DecimalError);
  });

  it('turns legacy integer cents into dollars', () => {
    expect(centsToDollars(41)).toBe('0.41');
    expect(centsToDollars(5)).toBe('0.05');
    expect(centsToDollars(100)).toBe('1.00');
    expect(() => centsToDollars(-1)).toThrow(DecimalError);
  });

  it('memoises canonical prices and forgets everything past its bound', () => {
    const memo = new CanonicalMemo(canonicalDecimal, 2);
    expect(memo.get('0.50')).toBe('0.5');
    expect(memo.get('0.50')).toBe('0.5');
    expect(memo.get('0.60')).toBe('0.6');
    expect(memo.get('0.70')).toBe('0.7');
    expect(() => memo.get('1e3')).toThrow(DecimalError);
  });
});
