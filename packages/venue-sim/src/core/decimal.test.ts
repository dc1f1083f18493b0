import { formatScaled, formatScaledTrimmed, parseScaled, scaledNumber } from './decimal';

describe('exact decimals', () => {
  test('formats scaled integers with the venue precision', () => {
    expect(formatScaled(4500, 4)).toBe('0.4500');
    expect(formatScaled(5, 4)).toBe('0.0005');
    expect(formatScaled(-2000, 2)).toBe('-20.00');
    expect(formatScaled(871234567, 2)).toBe('8712345.67');
    expect(formatScaled(121425, 8)).toBe('0.00121425');
    expect(formatScaled(7, 0)).toBe('7');
    expect(formatScaled(0, 3)).toBe('0.000');
  });

  test('formats a bigint beyond the safe integers exactly (a sum since the start)', () => {
    expect(formatScaled(2n ** 64n + 5n, 2)).toBe('184467440737095516.21');
    expect(formatScaled(-5n, 2)).toBe('-0.05');
    expect(formatScaled(0n, 2)).toBe('0.00');
    expect(() => formatScaled(2 ** 53, 2)).toThrow(RangeError);
  });

  test('renders a JSON number whose text is the exact decimal', () => {
    expect(JSON.stringify([scaledNumber(35, 1), scaledNumber(675, 3), scaledNumber(29, 2), scaledNumber(100, 2)])).toBe(
      '[3.5,0.675,0.29,1]',
    );
  });

  test('trims trailing zeros only when asked', () => {
    expect(formatScaledTrimmed(18593420, 2)).toBe('185934.2');
    expect(formatScaledTrimmed(500, 2)).toBe('5');
  });

  test('parses decimals exactly and refuses what it cannot represent', () => {
    expect(parseScaled('0.4500', 4)).toBe(4500);
    expect(parseScaled('0.45', 4)).toBe(4500);
    expect(parseScaled('-20.00', 2)).toBe(-2000);
    expect(parseScaled('9122.04', 2)).toBe(912204);
    expect(parseScaled('0.123', 2)).toBeNull();
    expect(parseScaled('1e3', 2)).toBeNull();
    expect(parseScaled('abc', 2)).toBeNull();
    expect(parseScaled('99999999999999999', 2)).toBeNull();
  });

  test('round-trips without floating point drift', () => {
    for (const v of [1, 10, 33, 70, 1_000_001, 9_007_199_254_740, -17]) {
      expect(parseScaled(formatScaled(v, 2), 2)).toBe(v);
      expect(parseScaled(formatScaled(v, 8), 8)).toBe(v);
    }
  });

  test('rejects non-integers instead of rounding them', () => {
    expect(() => formatScaled(0.1, 2)).toThrow(RangeError);
  });
});
