import { Rng, hash32 } from './rng';

describe('Rng', () => {
  it('replays the same stream for the same seed and labels, and another for other labels', () => {
    const draw = (rng: Rng) => Array.from({ length: 5 }, () => rng.next());
    expect(draw(new Rng(42, 'kalshi', 'KX-1'))).toEqual(draw(new Rng(42, 'kalshi', 'KX-1')));
    expect(draw(new Rng(42, 'kalshi', 'KX-1'))).not.toEqual(draw(new Rng(42, 'kalshi', 'KX-2')));
    // A string seed and a number seed with the same text are the same stream.
    expect(draw(new Rng('42', 'a'))).toEqual(draw(new Rng(42, 'a')));
  });

  it('is the sfc32/cyrb128 stream the simulator has always drawn from (its catalogues depend on it)', () => {
    const rng = new Rng(7, 'known-answer');
    expect([rng.next(), rng.next(), rng.next()]).toEqual([2811618251, 456605731, 2801767639]);
    expect(hash32('KXBTCD')).toBe(hash32('KXBTCD'));
  });

  it('keeps every draw inside its range', () => {
    const rng = new Rng(1, 'ranges');
    for (let i = 0; i < 10_000; i++) {
      const f = rng.float();
      expect(f >= 0 && f < 1).toBe(true);
      const r = rng.range(-3, 3);
      expect(r >= -3 && r <= 3 && Number.isInteger(r)).toBe(true);
      expect(rng.int(5)).toBeLessThan(5);
      expect(rng.exponential(2)).toBeGreaterThanOrEqual(0);
    }
    expect(() => rng.pick([])).toThrow(RangeError);
    expect(rng.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(rng.decimalDigits(12)).toMatch(/^[1-9][0-9]{11}$/);
  });

  it('draws chance(p) about p of the time', () => {
    const rng = new Rng(3, 'chance');
    let hits = 0;
    for (let i = 0; i < 20_000; i++) if (rng.chance(0.25)) hits++;
    expect(hits / 20_000).toBeGreaterThan(0.23);
    expect(hits / 20_000).toBeLessThan(0.27);
  });
});
