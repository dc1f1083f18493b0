import { MessageRate } from './message-rate';

describe('MessageRate', () => {
  it('allows a burst of twice the rate at once, then one message per 1/rate seconds', () => {
    const t0 = 1_000_000;
    const rate = new MessageRate(10, t0);
    for (let i = 0; i < 20; i++) expect(rate.take(t0)).toBe(true);
    expect(rate.take(t0)).toBe(false);
    // 100 ms later: one more (10 a second); 99 ms is not enough, and a refused message costs nothing.
    expect(rate.take(t0 + 99)).toBe(false);
    expect(rate.take(t0 + 100)).toBe(true);
    expect(rate.take(t0 + 100)).toBe(false);
  });

  it('refills to its burst and no further, however long the socket was quiet', () => {
    const t0 = 5_000;
    const rate = new MessageRate(3, t0);
    expect(rate.take(t0)).toBe(true);
    const later = t0 + 3_600_000;
    for (let i = 0; i < 6; i++) expect(rate.take(later)).toBe(true);
    expect(rate.take(later)).toBe(false);
  });
});
