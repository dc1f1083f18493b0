import { thrownBy } from './index';

class NamedError extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

describe('thrownBy', () => {
  it('returns the error of the expected type', () => {
    expect(
      thrownBy(() => {
        throw new NamedError('x');
      }, NamedError).detail,
    ).toBe('x');
  });

  it('fails when nothing is thrown, or something else is', () => {
    expect(() => thrownBy(() => 1, NamedError)).toThrow(/nothing was thrown/);
    expect(() =>
      thrownBy(() => {
        throw new TypeError('other');
      }, NamedError),
    ).toThrow(/expected a NamedError, got TypeError/);
  });
});
