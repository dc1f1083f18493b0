import type { GatewayPlatforms } from '../platforms/registry';
import type { Platform } from '../platforms/types';

/** Distinct Host values remembered; arbitrary ones cannot grow memory past this (the memo then starts over). */
const MEMO_SIZE = 256;

/**
 * Routing by host: the platform a `Host` header names as `{platform key or alias}.{baseDomain}` (any port, any case,
 * a trailing dot allowed), or undefined for the bare domain and every other host, which keep the gateway's own paths.
 * For clients that build URLs from a host alone and drop any path prefix (polymarket-us: `new URL('/v1/…', base)`).
 */
export function hostRouter(
  baseDomain: string,
  platforms: GatewayPlatforms,
): (host: string | undefined) => Platform | undefined {
  const suffix = `.${baseDomain}`;
  const resolve = (host: string): Platform | undefined => {
    let name = host.toLowerCase();
    const colon = name.lastIndexOf(':');
    if (colon !== -1 && /^\d*$/.test(name.slice(colon + 1))) name = name.slice(0, colon);
    if (name.endsWith('.')) name = name.slice(0, -1);
    if (!name.endsWith(suffix)) return undefined;
    const label = name.slice(0, -suffix.length);
    return label === '' || label.includes('.') ? undefined : platforms.resolve(label);
  };
  const memo = new Map<string, Platform | null>();
  return (host) => {
    if (host === undefined) return undefined;
    let platform = memo.get(host);
    if (platform === undefined) {
      platform = resolve(host) ?? null;
      if (memo.size >= MEMO_SIZE) memo.clear();
      memo.set(host, platform);
    }
    return platform ?? undefined;
  };
}
