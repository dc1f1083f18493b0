import type { IncomingMessage } from 'node:http';
import { clientAddress, ipBucket } from './address';

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

describe('clientAddress', () => {
  const req = (forwarded?: string, peer: string | null = '10.0.0.1') =>
    ({
      headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
      socket: { remoteAddress: peer ?? undefined },
      connection: { remoteAddress: peer ?? undefined },
    }) as unknown as IncomingMessage;

  it('is the peer without trusted hops, X-Forwarded-For read from the right through them', () => {
    const r = req('203.0.113.1, 198.51.100.2');
    expect([0, 1, 2, 3].map((hops) => clientAddress(r, hops))).toEqual([
      '10.0.0.1',
      '198.51.100.2',
      '203.0.113.1',
      '203.0.113.1',
    ]);
    expect(clientAddress(req(), 1)).toBe('10.0.0.1');
  });

  it('says "unknown" without any address', () => {
    expect(clientAddress(req(undefined, null), 0)).toBe('unknown');
    expect(clientAddress(req(undefined, null), 1)).toBe('unknown');
  });
});
