import { RateLimiter } from './rate-limit';

describe('rate limits', () => {
  let now = 0;
  const limiter = () => new RateLimiter(() => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  test('reject: the burst passes, the next request is refused, tokens come back at the sustained rate', () => {
    const l = limiter();
    l.set('coinbase', { limit: 10, windowMs: 1000, burst: 15 });
    const first = Array.from({ length: 16 }, () => l.check('coinbase', '/products').ok);
    expect(first.filter(Boolean)).toHaveLength(15);
    expect(first[15]).toBe(false);
    now += 100; // one token at 10/s
    expect(l.check('coinbase', '/products').ok).toBe(true);
    expect(l.check('coinbase', '/products').ok).toBe(false);
  });

  test('authenticated routes take their own budget (and its route limits), not the host’s', () => {
    const l = limiter();
    l.set('coinbase', {
      limit: 1,
      windowMs: 1000,
      authenticated: { limit: 3, windowMs: 1000, routes: [{ prefix: '/fills', limit: 1, windowMs: 1000 }] },
    });
    expect(l.check('coinbase', '/time')).toEqual({ ok: true, delayMs: 0 });
    expect(l.check('coinbase', '/time')).toEqual({ ok: false, budget: 'public' });
    expect(l.check('coinbase', '/fills', true).ok).toBe(true);
    expect(l.check('coinbase', '/fills', true)).toEqual({ ok: false, budget: 'authenticated' });
    // The refused /fills took nothing: two of the three places are left.
    expect(l.check('coinbase', '/accounts', true).ok).toBe(true);
    expect(l.check('coinbase', '/accounts', true).ok).toBe(true);
    expect(l.check('coinbase', '/accounts', true)).toEqual({ ok: false, budget: 'authenticated' });
    // Without an authenticated budget, an authenticated route takes the host's.
    l.set('kalshi', { limit: 1, windowMs: 1000 });
    expect(l.check('kalshi', '/portfolio/balance', true).ok).toBe(true);
    expect(l.check('kalshi', '/markets')).toEqual({ ok: false, budget: 'public' });
  });

  test('queue: a few requests over the limit wait, the rest are refused (Gemini)', () => {
    const l = limiter();
    l.set('gemini', { limit: 120, windowMs: 60_000, overflow: 'queue', queue: 5 });
    for (let i = 0; i < 120; i++) expect(l.check('gemini', '/v1/symbols')).toEqual({ ok: true, delayMs: 0 });
    const queued = Array.from({ length: 5 }, () => l.check('gemini', '/v1/symbols'));
    expect(queued.every((d) => d.ok && d.delayMs > 0)).toBe(true);
    expect(l.check('gemini', '/v1/symbols').ok).toBe(false);
  });

  test('delay: never refuses, holds requests until they fit (Cloudflare in front of Polymarket)', () => {
    const l = limiter();
    l.set('gamma', { limit: 2, windowMs: 1000, overflow: 'delay' });
    const d = Array.from({ length: 5 }, () => l.check('gamma', '/events'));
    expect(d.every((x) => x.ok)).toBe(true);
    expect(d.map((x) => (x.ok ? x.delayMs : -1))).toEqual([0, 0, 500, 1000, 1500]);
  });

  test('route limits apply on top of the host limit, only to their prefix', () => {
    const l = limiter();
    l.set('gamma', { limit: 100, windowMs: 1000, routes: [{ prefix: '/events', limit: 2, windowMs: 1000 }] });
    expect(l.check('gamma', '/events').ok).toBe(true);
    expect(l.check('gamma', '/events?x').ok).toBe(true);
    expect(l.check('gamma', '/events').ok).toBe(false);
    expect(l.check('gamma', '/events/slug/x').ok).toBe(false);
    expect(l.check('gamma', '/markets').ok).toBe(true);
    // A prefix ends at a segment boundary: `/events` does not limit `/eventsfoo`.
    expect(l.check('gamma', '/eventsfoo').ok).toBe(true);
  });

  test('null turns a limit off', () => {
    const l = limiter();
    l.set('kalshi', { limit: 1, windowMs: 1000 });
    expect(l.check('kalshi', '/x').ok).toBe(true);
    expect(l.check('kalshi', '/x').ok).toBe(false);
    l.set('kalshi', null);
    expect(l.get('kalshi')).toBeNull();
    expect(Array.from({ length: 100 }, () => l.check('kalshi', '/x').ok).every(Boolean)).toBe(true);
  });
});
