import { encodeSegment, memoizedTargetParser, parseGatewayTarget, parseHostedTarget } from './path';

function ok(target: string) {
  const r = parseGatewayTarget(target);
  if (!r.ok) throw new Error(`expected ${target} to parse: ${r.reason}`);
  return r.target;
}

describe('gateway path parsing', () => {
  it('splits platform, resource and query', () => {
    expect(ok('/api/v1/venue-b/markets/KXBTCD-26MAR07-T100000/orderbook?depth=10&x=%20')).toEqual({
      platform: 'venue-b',
      segments: ['markets', 'KXBTCD-26MAR07-T100000', 'orderbook'],
      path: '/markets/KXBTCD-26MAR07-T100000/orderbook',
      query: 'depth=10&x=%20',
    });
    expect(ok('/api/v1/Kalshi/events').platform).toBe('kalshi');
    expect(ok('/api/v1/venue-a-us/events?seriesId=1&seriesId=2').query).toBe('seriesId=1&seriesId=2');
  });

  it('no resource is the platform root', () => {
    for (const target of ['/api/v1/venue-a-clob/', '/api/v1/venue-a-clob']) {
      expect(ok(target)).toEqual({ platform: 'venue-a-clob', segments: [], path: '/', query: '' });
    }
    expect(ok('/api/v1/venue-a-clob/?geo_block_token=x').query).toBe('geo_block_token=x');
  });

  it('keeps path parameters that are not dot segments', () => {
    expect(ok('/api/v1/venue-b/markets;v=1/x').path).toBe('/markets;v=1/x');
    expect(ok('/api/v1/venue-b/a..;b').path).toBe('/a..;b');
  });

  it('keeps a trailing slash and tickers with dots', () => {
    expect(ok('/api/v1/venue-b/markets/').path).toBe('/markets/');
    expect(ok('/api/v1/venue-b/markets/KXBTCD-25DEC31-T92749.99').path).toBe('/markets/KXBTCD-25DEC31-T92749.99');
  });

  it('re-encodes segments canonically', () => {
    expect(ok('/api/v1/venue-c/v1/book/btc%75sd').path).toBe('/v1/book/btcusd');
    expect(ok('/api/v1/venue-a/events/slug/a%20b').path).toBe('/events/slug/a%20b');
    expect(encodeSegment('a b?#%/é')).toBe('a%20b%3F%23%25%2F%C3%A9');
    expect(encodeSegment("x:y@z!$&'()*+,;=")).toBe("x:y@z!$&'()*+,;=");
  });

  it.each([
    ['/api/v1/venue-b/../admin', 'dot segments'],
    ['/api/v1/venue-b/markets/../../x', 'dot segments'],
    ['/api/v1/venue-b/%2e%2e/x', 'dot segments'],
    ['/api/v1/venue-b/%2E%2e/x', 'dot segments'],
    ['/api/v1/venue-b/./x', 'dot segments'],
    ['/api/v1/venue-b/a%2f..%2fb', 'encoded slash'],
    ['/api/v1/venue-b/a%2Fb', 'encoded slash'],
    ['/api/v1/venue-b/a%5cb', 'encoded slash or backslash'],
    ['/api/v1/venue-b/a\\b', 'backslash'],
    ['/api/v1/venue-b/%252e%252e/x', 'double-encoded'],
    ['/api/v1/venue-b/%252f', 'double-encoded'],
    ['/api/v1/venue-b//evil.example/x', 'empty path segment'],
    ['/api/v1/venue-b/http://evil.example/x', 'empty path segment'],
    ['/api/v1/venue-b/x%00y', 'control character'],
    ['/api/v1/venue-b/x%0d%0aHost:%20evil', 'control character'],
    ['/api/v1/venue-b/%zz', 'malformed'],
    ['/api/v1/venue-b/%e0%a4%a', 'malformed'],
    ['/api/v1/venue-b/..;/admin', 'dot segments'],
    ['/api/v1/venue-b/markets/..;x/..;/y', 'dot segments'],
    ['/api/v1/venue-b/.;jsessionid=1/x', 'dot segments'],
    ['/api/v1/venue-b/%2e%2e;/x', 'dot segments'],
    ['/api/v1/venue-b/..%3b/x', 'dot segments'],
    ['/api/v1/venue-b/markets//', 'empty path segment'],
    ['/api/v1/', 'empty path segment'],
    ['/api/v1/%2e%2e/markets', 'dot segments'],
    ['http://evil.example/api/v1/venue-b/markets', 'origin-form'],
    ['//evil.example/api/v1/venue-b/markets', 'paths start with'],
  ])('refuses %s', (target, reason) => {
    const r = parseGatewayTarget(target);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it('never yields a path that leaves the base, whatever the input (fuzz)', () => {
    const pieces = [
      '..',
      '.',
      '%2e',
      '%2E',
      '%252e',
      '/',
      '%2f',
      '%5c',
      '\\',
      'a',
      'B',
      '%',
      '%25',
      '%00',
      '~',
      ':',
      '@',
      '?',
      '#',
      ';',
      'é',
      '%c3%a9',
      '//',
      ' ',
    ];
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let accepted = 0;
    for (let i = 0; i < 20000; i++) {
      let s = '';
      const len = 1 + rnd(8);
      for (let j = 0; j < len; j++) s += pieces[rnd(pieces.length)];
      const r = parseGatewayTarget(`/api/v1/venue-b/${s}`);
      if (!r.ok) continue;
      accepted++;
      const path = r.target.path;
      expect(path.startsWith('/')).toBe(true);
      expect(path).not.toMatch(/\/\/|\\|%2f|%5c/i);
      for (const seg of path.split('/').slice(1)) {
        const decoded = decodeURIComponent(seg);
        expect(decoded === '.' || decoded === '..').toBe(false);
        expect(decoded.split(';')[0]).not.toMatch(/^\.\.?$/);
        expect(decoded).not.toMatch(/[/\\]/);
        expect(decodeURIComponent(decoded.replace(/%(?![0-9a-f]{2})/gi, '%25'))).not.toMatch(/^\.\.?$|[/\\]/);
      }
      // What we send is stable: parsing our own output gives the same path.
      const again = parseGatewayTarget(`/api/v1/venue-b${path}`);
      expect(again.ok && again.target.path).toBe(path);
    }
    expect(accepted).toBeGreaterThan(100);
  });
});

describe('memoized parsing', () => {
  it('answers repeated targets from memory, shares frozen results, forgets the least recently used', () => {
    const parse = memoizedTargetParser(parseGatewayTarget, 2);
    const a = parse('/api/v1/venue-b/markets');
    expect(parse('/api/v1/venue-b/markets')).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a.ok && Object.isFrozen(a.target.segments)).toBe(true);
    parse('/api/v1/venue-b/events');
    parse('/api/v1/venue-b/series'); // evicts /markets
    expect(parse('/api/v1/venue-b/markets')).not.toBe(a);
    expect(parse('/api/v1/venue-b/markets')).toEqual(a);
    const bad = parse('/api/v1/venue-b/../x');
    expect(bad.ok).toBe(false);
    expect(parse('/api/v1/venue-b/../x')).toBe(bad);
  });
});

describe('targets routed by Host', () => {
  it('the whole path is the resource; `/` is the root', () => {
    expect(parseHostedTarget('/v1/events?limit=1')).toEqual({
      ok: true,
      target: { segments: ['v1', 'events'], path: '/v1/events', query: 'limit=1' },
    });
    expect(parseHostedTarget('/')).toEqual({ ok: true, target: { segments: [], path: '/', query: '' } });
  });

  it.each([
    ['/v1/../admin', 'dot segments'],
    ['/v1/..;/admin', 'dot segments'],
    ['//evil.example/x', 'empty path segment'],
    ['/a%2fb', 'encoded slash'],
    ['/a\\b', 'backslash'],
    ['http://evil.example/x', 'origin-form'],
    ['*', 'origin-form'],
  ])('refuses %s', (target, reason) => {
    const r = parseHostedTarget(target);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });
});
