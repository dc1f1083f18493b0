import { loadConfig } from '../config';
import { createPlatforms } from '../platforms/registry';
import { hostRouter } from './hosts';

describe('routing by host', () => {
  const platforms = createPlatforms(loadConfig({}));
  const route = hostRouter('gw.example.com', platforms);
  const key = (host: string | undefined) => route(host)?.key;

  it('names a platform by key or alias, any port, any case, a trailing dot allowed', () => {
    expect(key('venue-a-us.gw.example.com')).toBe('venue-a-us');
    expect(key('venue-a-us.gw.example.com:7080')).toBe('venue-a-us');
    expect(key('Polymarket-US.GW.Example.com')).toBe('venue-a-us');
    expect(key('kalshi.gw.example.com.:443')).toBe('venue-b');
    expect(key('polymarket-clob.gw.example.com')).toBe('venue-a-clob');
  });

  it('leaves the bare domain, unknown and nested names and other hosts to the gateway’s own paths', () => {
    for (const host of [
      'gw.example.com',
      'gw.example.com:7080',
      'nope.gw.example.com',
      'a.venue-b.gw.example.com',
      '.gw.example.com',
      'venue-b.gw.example.com.evil.test',
      'venue-b.xgw.example.com',
      'venue-b-gw.example.com',
      '127.0.0.1:7080',
      '[::1]:7080',
      undefined,
    ])
      expect(key(host)).toBeUndefined();
  });

  it('answers repeated hosts from memory without growing beyond its bound', () => {
    expect(route('venue-b.gw.example.com')).toBe(route('venue-b.gw.example.com'));
    for (let i = 0; i < 1000; i++) expect(key(`x${i}.gw.example.com`)).toBeUndefined();
    expect(key('venue-b.gw.example.com')).toBe('venue-b');
  });
});
