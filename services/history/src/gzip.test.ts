import { gzipOnlyAcceptEncoding } from './gzip';

describe('gzipOnlyAcceptEncoding', () => {
  it.each([
    [undefined, undefined],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'gzip'],
    ['br, gzip;q=0.5', 'gzip;q=0.5'],
    ['br', 'identity'],
    ['zstd, br', 'identity'],
    ['*', 'gzip'],
    ['*;q=0.1', 'gzip;q=0.1'],
    ['identity', 'identity'],
    ['gzip;q=0, identity', 'gzip;q=0, identity'],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['', 'identity'],
  ])('%j → %j', (header, expected) => {
    expect(gzipOnlyAcceptEncoding(header)).toBe(expected);
  });
});
