import { bestOf, depthSeries, fromLocalInput, showDuration, showTime, toLocalInput, withTotals } from './format';

describe('times', () => {
  it('shows UTC and reads a datetime-local value as UTC, refusing impossible dates', () => {
    const t = Date.UTC(2026, 10, 23, 11, 33, 48, 630);
    expect(showTime(t)).toBe('2026-11-23 11:33:48.630');
    expect(toLocalInput(t)).toBe('2026-11-23T11:33:48.630');
    expect(fromLocalInput('2026-11-23T11:33:48.630')).toBe(t);
    expect(fromLocalInput('2026-11-23T11:33')).toBe(Date.UTC(2026, 10, 23, 11, 33));
    expect(fromLocalInput('2026-11-23T11:33:48.6')).toBe(Date.UTC(2026, 10, 23, 11, 33, 48, 600));
    expect(fromLocalInput('2026-04-31T00:00')).toBeNaN();
    expect(fromLocalInput('yesterday')).toBeNaN();
  });

  it('shows lengths of time at a useful grain', () => {
    expect(
      [850, 4_630, 725_000, 3_600_000 * 3 + 20 * 60_000, 86_400_000 * 2 + 4 * 3_600_000].map(showDuration),
    ).toEqual(['850 ms', '4.6 s', '12 min 5 s', '3 h 20 min', '2 d 4 h']);
    expect(showDuration(900_000)).toBe('15 min');
  });
});

describe('the book’s figures, exact', () => {
  const bids = [
    { price: '0.48', quantity: '150' },
    { price: '0.47', quantity: '0.1' },
  ];
  const asks = [
    { price: '0.51', quantity: '0.2' },
    { price: '0.52', quantity: '7' },
  ];

  it('best bid and ask, spread and mid without floating point', () => {
    expect(bestOf(bids, asks)).toEqual({ bid: bids[0], ask: asks[0], spread: '0.03', mid: '0.495' });
    expect(bestOf([{ price: '0.1', quantity: '1' }], [{ price: '0.3', quantity: '1' }]).spread).toBe('0.2');
    expect(bestOf([], asks)).toEqual({ bid: undefined, ask: asks[0] });
  });

  it('running totals from the best level out (0.1 + 0.2 is 0.3)', () => {
    expect(withTotals(asks).map((l) => l.total)).toEqual(['0.2', '7.2']);
    expect(
      withTotals([
        { price: '1', quantity: '0.1' },
        { price: '2', quantity: '0.2' },
      ])[1]?.total,
    ).toBe('0.3');
  });

  it('the depth chart: prices ascending, each side’s totals on its own side', () => {
    expect(depthSeries(bids, asks)).toEqual({
      x: [0.47, 0.48, 0.51, 0.52],
      bids: [150.1, 150, null, null],
      asks: [null, null, 0.2, 7.2],
    });
  });
});
