import { ipBucket } from './address';

describe('client address buckets', () => {
  it('keeps IPv4 (and IPv4-mapped IPv6) addresses as they are', () => {
    expect(ipBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(ipBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('groups IPv6 addresses by their /56 prefix, whatever their spelling', () => {
    const a = ipBucket('2001:db8:abcd:12ff:1::1');
    expect(a).toBe('20010db8abcd12::/56');
    expect(ipBucket('2001:0db8:ABCD:1200:ffff:ffff:ffff:ffff')).toBe(a);
    expect(ipBucket('2001:db8:abcd:1300::1')).not.toBe(a);
    expect(ipBucket('::1')).toBe('00000000000000::/56');
  });
});
