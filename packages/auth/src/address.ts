import { isIPv6 } from 'node:net';
import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/**
 * The client's address of a request: the peer's, or through `trustProxyHops` reverse proxies the address they
 * forwarded (X-Forwarded-For read from the right, as Express reads `req.ip` with `trust proxy` set to a hop count).
 * One reading for every place that counts by address: HTTP requests (Express or not), WebSocket handshakes.
 */
export function clientAddress(req: IncomingMessage, trustProxyHops: number): string {
  // No proxy trusted (the default): the peer, without reading X-Forwarded-For at all.
  if (trustProxyHops === 0) return req.socket.remoteAddress ?? 'unknown';
  // (proxy-addr's type says string; without a socket address and a forwarded one it gives undefined.)
  return (proxyaddr(req, (_addr, hop) => hop < trustProxyHops) as string | undefined) ?? 'unknown';
}

/**
 * The rate-limit identity of a client address: IPv4 as is (IPv4-mapped IPv6 too), IPv6 by its /56 prefix, so one
 * client cannot rotate through the addresses of its own allocation.
 */
export function ipBucket(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1] ?? ip;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  const hex = groups.map((g) => g.padStart(4, '0').toLowerCase()).join('');
  return `${hex.slice(0, 14)}::/56`;
}
