import { hostId, type AnyDescriptor, type Budget, type ResolvedPlatform, type Signer } from '@depthgate/platforms';
import { encodeSegment } from '../proxy/path';
import type { GatewayConfig } from '../config';

/** One upstream origin a platform forwards to (a platform may have several: public and authenticated hosts). */
export interface UpstreamTarget {
  /** Unique name in metrics and logs: `venue-b`, `venue-a-us/auth`. */
  id: string;
  platform: string;
  /** `https://api.elections.kalshi.com` */
  origin: string;
  /** Path every request is under, e.g. `/trade-api/v2` ('' for none). */
  basePath: string;
  /** Host name (and port) as signed by schemes that include it. */
  host: string;
  signer?: Signer;
  /** TLS for this origin only: `ca` pins a certificate; `verify: false` accepts a self-signed one. */
  tls?: { ca?: string; verify: boolean };
  /**
   * The message of a refused or unreachable connection, in place of the generic one (it is 502 `bad_gateway` either
   * way: an unreachable upstream is a bad gateway, whatever the target).
   */
  unreachable?: { message: string };
  /** The upstream's limit, counted per origin: targets on one origin (Kalshi's API and its `/v1`) share it. */
  budget: Budget | null;
  /**
   * Paths (relative to the base path, as routes give them) that also accept POST: the platform's read-only calls
   * that take a JSON body (batch reads). Every other path is GET and HEAD only.
   */
  post?: ReadonlySet<string>;
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

interface KeepAlive {
  target: UpstreamTarget;
  method: string;
  path: string;
  intervalMs: number;
}

/**
 * A platform as the gateway serves it: what its descriptor says (key, title, docs), its upstream targets, how a
 * resource path maps to one of them (aliases, rewrites), and which requests are signed.
 */
export interface Platform {
  key: string;
  title: string;
  docs: string;
  targets: readonly UpstreamTarget[];
  route(resource: Resource, query: string): Route;
  keepAlive?: KeepAlive;
}

/** What a platform's route module is given: its configuration, and a way to build targets on its hosts. */
export interface RouteContext<D extends AnyDescriptor = AnyDescriptor> {
  platform: ResolvedPlatform<D>;
  budget: Budget | null;
  config: GatewayConfig;
  /** A target on one of this platform's hosts (id `venue-a-us/auth`), with the platform's budget. */
  target(host: keyof D['hosts'] & string, options?: TargetOptions): UpstreamTarget;
}

interface TargetOptions {
  signer?: Signer;
  tls?: UpstreamTarget['tls'];
  unreachable?: UpstreamTarget['unreachable'];
  /** Read-only paths of this target that accept POST (see UpstreamTarget.post). */
  post?: readonly string[];
  /** Another URL than the host's own (a route served by another platform's host), with its own id. */
  url?: { id: string; url: string };
  /** Another budget than the platform's: that of the platform whose host serves the route. */
  budget?: Budget | null;
}

/**
 * The gateway's own part of a platform (docs/ADD_NEW_PLATFORM.md, step 2): from its configuration, the targets and
 * the `route()` that maps a resource onto one of them. Everything else about the platform is in its descriptor.
 */
export type RouteModule<D extends AnyDescriptor = AnyDescriptor> = (
  ctx: RouteContext<D>,
) => Pick<Platform, 'targets' | 'route' | 'keepAlive'>;

/** Builds a platform's targets from its configuration (see RouteContext.target). */
export function routeContext<D extends AnyDescriptor>(
  platform: ResolvedPlatform<D>,
  config: GatewayConfig,
): RouteContext<D> {
  const key = platform.descriptor.key;
  const budget = (config.budgets as Record<string, Budget | null>)[key] ?? null;
  return {
    platform,
    budget,
    config,
    target(host, options = {}) {
      const { url, post, budget: own, ...rest } = options;
      const urls = platform.urls as Record<string, string>;
      return makeTarget(key, url?.id ?? hostId(key, host), url?.url ?? (urls[host] as string), {
        budget: own === undefined ? budget : own,
        ...rest,
        ...(post ? { post: new Set(post) } : {}),
      });
    },
  };
}

function makeTarget(
  platform: string,
  id: string,
  url: string,
  options: {
    budget: Budget | null;
    signer?: Signer;
    tls?: UpstreamTarget['tls'];
    unreachable?: UpstreamTarget['unreachable'];
    post?: UpstreamTarget['post'];
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

/** A query parameter's name as a server decodes it (`+` is a space); a malformed one as given. */
function paramName(part: string): string {
  const eq = part.indexOf('=');
  const raw = (eq === -1 ? part : part.slice(0, eq)).replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The caller's query with `name` set to `value` and to nothing else: a mapped route's own parameter (the address or
 * market its path names) is the only one of that name the upstream sees. Every parameter the caller gave under that
 * name is removed, however it is spelt (`addr%65ss=`) and also behind a `;`, which some servers take as a separator.
 */
export function setQueryParam(query: string, name: string, value: string): string {
  const own = `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
  if (query === '') return own;
  const kept = query.split('&').filter((part) => !part.split(';').some((p) => paramName(p) === name));
  return kept.length === 0 ? own : `${kept.join('&')}&${own}`;
}

/** Prefixes `/v1` unless the resource already names an API version (`/v1/...`, `/v2/...`). */
export function versioned(resource: Resource, defaultVersion = 'v1'): string {
  return /^v\d+$/.test(resource.segments[0] ?? '') ? resource.path : `/${defaultVersion}${resource.path}`;
}
