import { defaultBudgets, PLATFORMS } from '@depthgate/platforms';
import { acceptableAgeMs, CacheRules, MicroCache, storableTtl } from './cache';
import { Circuit } from './circuit';
import { LocalGcra } from './budget';
import { isJsonContentType } from './body';
import { callerResponseHeaders, connectionNamed, isConditional, upstreamRequestHeaders } from './headers';

const DEFAULT_BUDGETS = defaultBudgets(PLATFORMS);

describe('micro-cache rules', () => {
  it('matches * as one segment and ** as any rest, per platform', () => {
    const rules = new CacheRules([
      { platform: 'venue-b', pattern: '/markets/*/orderbook', ttlMs: 250 },
      { platform: 'venue-b', pattern: '/markets/*', ttlMs: 100 },
      { platform: 'venue-d', pattern: '/products/**', ttlMs: 500 },
      { platform: 'venue-d', pattern: '/time', ttlMs: 1000 },
    ]);
    const ttl = (platform: 'venue-b' | 'venue-d' | 'venue-c', path: string) =>
      rules.ttlFor(platform, path.split('/').slice(1));
    expect(ttl('venue-b', '/markets/KX-1/orderbook')).toBe(250);
    expect(ttl('venue-b', '/markets/KX-1/orderbook/x')).toBe(0);
    expect(ttl('venue-b', '/markets/KX-1')).toBe(100);
    expect(ttl('venue-b', '/markets')).toBe(0);
    expect(ttl('venue-d', '/products/BTC-USD/book')).toBe(500);
    expect(ttl('venue-d', '/products')).toBe(500);
    expect(ttl('venue-d', '/time')).toBe(1000);
    expect(ttl('venue-c', '/time')).toBe(0);
  });

  it('honours upstream Cache-Control', () => {
    expect(storableTtl(500, undefined)).toBe(500);
    expect(storableTtl(500, 'no-store')).toBe(0);
    expect(storableTtl(500, 'private, max-age=60')).toBe(0);
    expect(storableTtl(500, 'public, no-cache')).toBe(0);
    expect(storableTtl(5000, 'max-age=1')).toBe(1000);
    expect(storableTtl(5000, 's-maxage=2, max-age=1')).toBe(2000);
    expect(storableTtl(500, 'max-age=60')).toBe(500);
  });

  it('honours the caller’s Cache-Control', () => {
    expect(acceptableAgeMs(undefined)).toBe(Number.POSITIVE_INFINITY);
    expect(acceptableAgeMs('no-cache')).toBe(0);
    expect(acceptableAgeMs('max-age=2')).toBe(2000);
  });

  it('expires entries, evicts least recently used past the byte bound, refuses oversize entries', () => {
    const cache = new MicroCache(3 * (1 + 100 + 512)); // a one-letter key, the body, what an entry costs besides
    const entry = (n: number, at: number) => ({
      status: 200,
      headers: {},
      body: Buffer.alloc(100, n),
      storedAt: at,
      expiresAt: at + 1000,
    });
    cache.set('a', entry(1, 0));
    cache.set('b', entry(2, 0));
    cache.set('c', entry(3, 0));
    expect(cache.get('a', 10, Infinity)).toBeDefined(); // a is now most recent
    cache.set('d', entry(4, 0));
    expect(cache.get('b', 10, Infinity)).toBeUndefined();
    expect(cache.get('a', 10, Infinity)?.body[0]).toBe(1);
    expect(cache.get('a', 999, 500)).toBeUndefined(); // older than the caller accepts
    expect(cache.get('a', 1000, Infinity)).toBeUndefined(); // expired
    cache.set('huge', { ...entry(5, 0), body: Buffer.alloc(5000) });
    expect(cache.get('huge', 1, Infinity)).toBeUndefined();
  });

  it('counts keys and headers against the byte bound, not only bodies', () => {
    const small = (headers: Record<string, string> = {}) => ({
      status: 200,
      headers,
      body: Buffer.from('{}'),
      storedAt: 0,
      expiresAt: 1000,
    });
    // Keys of 10 KB (a long query): at most ten fit in 100 KB, however small their bodies.
    const byKey = new MicroCache(100_000);
    for (let i = 0; i < 20; i++) byKey.set(`GET venue-b /markets?${'q'.repeat(10_000)}=${i}`, small());
    expect(byKey.size).toBeLessThanOrEqual(10);
    const byHeaders = new MicroCache(100_000);
    for (let i = 0; i < 20; i++) byHeaders.set(`k${i}`, small({ etag: 'e'.repeat(10_000) }));
    expect(byHeaders.size).toBeLessThanOrEqual(10);
  });

  it('sweeps expired entries as new ones are stored, read again or not', () => {
    const cache = new MicroCache(1_000_000);
    const entry = (at: number, ttl: number) => ({
      status: 200,
      headers: {},
      body: Buffer.alloc(10),
      storedAt: at,
      expiresAt: at + ttl,
    });
    for (let i = 0; i < 10; i++) cache.set(`old${i}`, entry(0, 100));
    for (let i = 0; i < 10; i++) cache.set(`new${i}`, entry(200, 1000));
    expect(cache.size).toBe(10);
  });
});

describe('circuit breaker', () => {
  it('opens after the threshold, lets one probe through after the pause, closes on its success', () => {
    const states: string[] = [];
    const c = new Circuit(3, 1000, (s) => states.push(s));
    c.failure(0);
    c.failure(0);
    expect(c.allow(0)).toBe(true);
    c.failure(0);
    expect(c.state).toBe('open');
    expect(c.allow(999)).toBe(false);
    expect(c.retryAfterMs(500)).toBe(500);
    expect(c.allow(1000)).toBe(true); // the probe
    expect(c.allow(1000)).toBe(false); // only one
    c.success();
    expect(c.state).toBe('closed');
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });

  it('reopens when the probe fails; a success resets the count', () => {
    const c = new Circuit(2, 100);
    c.failure(0);
    c.success();
    c.failure(0);
    expect(c.state).toBe('closed');
    c.failure(0);
    expect(c.state).toBe('open');
    expect(c.allow(100)).toBe(true);
    c.failure(100);
    expect(c.state).toBe('open');
    expect(c.allow(150)).toBe(false);
  });
});

describe('GCRA budget (in-memory twin of the Redis script)', () => {
  it('allows the burst, then spaces requests by 1/rate, and refuses beyond the longest wait', () => {
    const g = new LocalGcra();
    const budget = { perSecond: 10, burst: 3 };
    const t0 = 1_000_000_000;
    const decisions = Array.from({ length: 6 }, () => g.take('k', budget, 250_000, t0));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions.map((d) => d.waitUs)).toEqual([0, 0, 0, 100_000, 200_000, 300_000]);
    // A second later the budget has refilled.
    expect(g.take('k', budget, 0, t0 + 1_000_000)).toEqual({ allowed: true, waitUs: 0 });
    expect(g.take('other', budget, 0, t0).allowed).toBe(true);
  });
});

describe('header hygiene', () => {
  it('forwards only the allowlisted caller headers', () => {
    const out = upstreamRequestHeaders({
      'x-api-key': 'dg_secret',
      authorization: 'Bearer x',
      cookie: 'a=b',
      connection: 'keep-alive, x-foo',
      'x-foo': 'hop',
      'proxy-authorization': 'x',
      'x-forwarded-for': '1.2.3.4',
      'accept-encoding': 'gzip',
      accept: 'application/json',
      'if-none-match': '"e"',
      te: 'trailers',
      host: 'gateway.example',
    });
    expect(out).toEqual({
      'user-agent': 'depthgate-gateway/1.0',
      'accept-encoding': 'gzip',
      accept: 'application/json',
      'if-none-match': '"e"',
    });
    expect(isConditional({ 'if-none-match': '"e"' })).toBe(true);
  });

  it('drops an allowlisted header the caller names in Connection (hop-by-hop by declaration)', () => {
    const incoming = { accept: 'application/json', 'accept-language': 'en', 'if-none-match': '"e"' };
    expect(upstreamRequestHeaders({ ...incoming, connection: 'keep-alive, Accept-Language , IF-NONE-MATCH' })).toEqual({
      'user-agent': 'depthgate-gateway/1.0',
      accept: 'application/json',
    });
    expect(upstreamRequestHeaders({ ...incoming, connection: 'keep-alive' })).toEqual({
      'user-agent': 'depthgate-gateway/1.0',
      ...incoming,
    });
    expect(connectionNamed(undefined)).toBeUndefined();
    expect(connectionNamed('close')).toBeUndefined();
    expect(connectionNamed('Keep-Alive')).toBeUndefined();
    expect(connectionNamed('Keep-Alive, ,close')).toBeUndefined();
    expect(connectionNamed('upgrade, Accept')).toEqual(new Set(['upgrade', 'accept']));
  });

  it('passes only content headers back to the caller', () => {
    expect(
      callerResponseHeaders({
        'Content-Type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': '10',
        'set-cookie': ['a=b'],
        server: 'cloudflare',
        'x-ratelimit-remaining': '3',
        'cf-ray': 'x',
        'x-request-id': 'upstream-id',
        'strict-transport-security': 'max-age=1',
        connection: 'keep-alive',
        etag: '"1"',
        'retry-after': '2',
      }),
    ).toEqual({
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'content-length': '10',
      etag: '"1"',
      'retry-after': '2',
    });
  });
});

describe('default budgets never exceed the documented limit in any window', () => {
  it.each([
    ['venue-b', 20, 1_000],
    ['venue-a-us', 20, 1_000],
    ['venue-a-clob', 1_500, 10_000],
    ['venue-a', 4_000, 10_000],
    ['venue-c', 120, 60_000],
  ] as const)('%s: at most %i per %i ms under saturating demand', (platform, limit, windowMs) => {
    const budget = DEFAULT_BUDGETS[platform];
    const g = new LocalGcra();
    const sent: number[] = [];
    // Saturating demand: at every millisecond, send as many as the limiter lets through without waiting.
    for (let ms = 0; ms < windowMs * 3; ms++) {
      while (g.take('k', budget, 0, ms * 1000).allowed) sent.push(ms);
    }
    let max = 0;
    for (let i = 0, j = 0; i < sent.length; i++) {
      while ((sent[i] ?? 0) - (sent[j] ?? 0) >= windowMs) j++;
      max = Math.max(max, i - j + 1);
    }
    expect(max).toBeLessThanOrEqual(limit);
    expect(max).toBeGreaterThan(limit * 0.9); // and it does not waste the budget
  });
});

describe('read-only POST bodies', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON; charset=UTF-8', true],
    ['application/json; charset="utf-8"', true],
    ['application/json;charset=utf8', true],
    ['application/vnd.api+json', true],
    ['application/problem+json; charset=utf-8', true],
    ['application/json; charset=iso-8859-1', false],
    ['application/json-seq', false],
    ['text/plain', false],
    ['application/x-www-form-urlencoded', false],
    ['multipart/form-data; boundary=x', false],
    ['json', false],
    ['', false],
    [undefined, false],
  ])('Content-Type %s is JSON: %s', (value, expected) => {
    expect(isJsonContentType(value)).toBe(expected);
  });
});
