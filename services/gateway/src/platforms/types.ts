import type { PlatformKey } from '@depthgate/auth';
import type { ErrorCode } from '@depthgate/service-kit';
import type { Signer } from '../signers/types';
import { encodeSegment } from '../proxy/path';
import type { Budget } from '../config';

/** One upstream origin a platform forwards to (a platform may have several: public and authenticated hosts). */
export interface UpstreamTarget {
  /** Unique name in metrics and logs: `venue-b`, `venue-a-us/auth`. */
  id: string;
  platform: PlatformKey;
  /** `https://api.elections.kalshi.com` */
  origin: string;
  /** Path every request is under, e.g. `/trade-api/v2` ('' for none). */
  basePath: string;
  /** Host name (and port) as signed by schemes that include it. */
  host: string;
  signer?: Signer;
  /** TLS for this origin only: `ca` pins a certificate; `verify: false` accepts a self-signed one. */
  tls?: { ca?: string; verify: boolean };
  /** How a refused or unreachable connection is reported (default 502 `bad_gateway`). */
  unreachable?: { code: ErrorCode; message: string };
  budget: Budget | null;
}

export interface Resource {
  /** Decoded segments of the resource path. */
  segments: readonly string[];
  /** Canonical encoded path, starting with `/`. */
  path: string;
}

export interface Route {
  target: UpstreamTarget;
  /** Encoded path relative to the target's base path, starting with `/`. */
  path: string;
  /** Raw query string without `?`. */
  query: string;
  /** Whether the signer (if any) applies: public routes of some platforms are sent unsigned. */
  sign: boolean;
}

export interface KeepAlive {
  target: UpstreamTarget;
  method: string;
  path: string;
  intervalMs: number;
}

/**
 * A platform plug-in: its upstream targets, how a resource path maps to one of them (aliases, rewrites), and
 * which requests are signed. Adding a platform is one new file and one registry line (docs/ADD_NEW_PLATFORM.md).
 */
export interface Platform {
  key: PlatformKey;
  title: string;
  docs: string;
  targets: readonly UpstreamTarget[];
  route(resource: Resource, query: string): Route;
  keepAlive?: KeepAlive;
}

export function makeTarget(
  platform: PlatformKey,
  id: string,
  url: string,
  options: {
    budget: Budget | null;
    signer?: Signer;
    tls?: UpstreamTarget['tls'];
    unreachable?: UpstreamTarget['unreachable'];
  },
): UpstreamTarget {
  const parsed = new URL(url);
  return {
    id,
    platform,
    origin: parsed.origin,
    basePath: parsed.pathname.replace(/\/+$/, ''),
    host: parsed.host,
    ...options,
  };
}

export const joinSegments = (segments: readonly string[]): string => `/${segments.map(encodeSegment).join('/')}`;

export function appendQuery(query: string, extra: Record<string, string>): string {
  const add = new URLSearchParams(extra).toString();
  return query === '' ? add : `${query}&${add}`;
}

/** Prefixes `/v1` unless the resource already names an API version (`/v1/...`, `/v2/...`). */
export function versioned(resource: Resource, defaultVersion = 'v1'): string {
  return /^v\d+$/.test(resource.segments[0] ?? '') ? resource.path : `/${defaultVersion}${resource.path}`;
}
