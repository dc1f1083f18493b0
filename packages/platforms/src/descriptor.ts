/**
 * What a platform is, once: everything the deployables need to know about one upstream market platform that is not
 * their own logic. The gateway adds a `route()`, the recorder a feed adapter, the simulator its fake hosts, each in
 * its own package next to this descriptor's key (docs/ADD_NEW_PLATFORM.md).
 */
import type { z } from 'zod';
import type { Signer } from './signing';

/** Upstream request budget: a rate with a burst (GCRA), shared by every gateway replica. */
export interface Budget {
  perSecond: number;
  burst: number;
}

/** A URL a deployable reaches the platform at, overridable by one environment variable. */
export interface UrlSpec {
  /** The environment variable that overrides it (`UPSTREAM_VENUE_B_URL`). */
  env: string;
  /** The real platform's URL: the production default. It may carry a base path (`/trade-api/v2`). */
  default: string;
  /** What it serves, for the docs and logs. */
  description: string;
}

/**
 * How a feed shows an idle subscription alive by itself, and how often: what the venue sends when nothing else
 * happens. Every consumer of the feed derives its silence threshold from it (`feedSilenceMs`, silence.ts): the
 * gateway's WebSocket proxy and the recorder alike.
 */
export interface FeedHeartbeat {
  /**
   * `ping-frame`: WebSocket ping frames from the venue; `message`: a heartbeat message on the connection;
   * `channel`: a heartbeat message per subscribed market (a channel the consumer subscribes with each market);
   * `answer`: none by itself — the venue answers the text ping the consumer sends every `intervalMs`.
   */
  kind: 'ping-frame' | 'message' | 'channel' | 'answer';
  /** How often, in milliseconds (`answer`: how often the consumer pings, as the venue asks). */
  intervalMs: number;
  /** Where the rhythm is stated, tagged as in upstreams.md ([V], [3P], [U]); an assumption says so. */
  source: string;
}

/** A WebSocket feed: its URL, and its heartbeat rhythm. */
export interface FeedSpec extends UrlSpec {
  heartbeat: FeedHeartbeat;
}

/** One variable of a credential. */
export interface CredentialVar {
  env: string;
  /** A secret: also accepted as `${env}_FILE`, a mounted file read once at start-up (and trimmed). */
  secret?: boolean;
  description: string;
}

/** A credential: all of its variables or none (a partial set is a configuration error, never an unsigned call). */
export interface CredentialGroup<T = unknown> {
  /** Name in messages: `Kalshi`, `Coinbase JWT`. */
  name: string;
  vars: readonly CredentialVar[];
  /**
   * Builds the credential from its variables' values (keyed by variable name) and validates it: throws an Error
   * whose message names what is wrong (a key that is not RSA, a secret of the wrong length) — reported at start-up
   * with every other configuration problem.
   */
  build(values: Readonly<Record<string, string>>): T;
}

export type CredentialGroups = Readonly<Record<string, CredentialGroup>>;

/** The credentials of a platform as configured: each group built, or absent. */
export type ResolvedCredentials<G extends CredentialGroups> = {
  readonly [K in keyof G]?: G[K] extends CredentialGroup<infer T> ? T : never;
};

export type SettingsOf<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

export interface PlatformDescriptor<
  G extends CredentialGroups = CredentialGroups,
  S extends z.ZodRawShape = z.ZodRawShape,
  K extends string = string,
  X extends string = string,
  H extends string = string,
  F extends string = string,
> {
  /** The spec's neutral key: `venue-b`. Gateway paths, key allowlists, metrics, logs, simulator hosts. */
  key: K;
  /** The real platform's name: `Kalshi`. */
  title: string;
  /** What the spec says the platform covers. */
  covers: string;
  /** The platform's API documentation. */
  docs: string;
  /** Real names accepted wherever the key is (gateway paths, `--platforms`): `kalshi`. Lower case. */
  aliases: readonly string[];
  /**
   * Present when the history service serves recorded books of this platform: the spec's exchange key
   * (`venue_b`), real-name aliases (`kalshi`), and the code it is stored under (a ClickHouse Enum8 value:
   * part of the stored data, never renumbered).
   */
  exchange?: { key: X; code: number; aliases: readonly string[] };
  /** REST hosts; `main` first. A host named `auth` is addressed as `venue-a-us/auth` (gateway targets, simulator). */
  hosts: Readonly<Record<'main' | H, UrlSpec>>;
  /** WebSocket feeds (order books), each with its heartbeat rhythm; the platform's own feed is `main`. */
  feeds?: Readonly<Record<F, FeedSpec>>;
  /** The platform's documented limit as a budget, and where it is documented. */
  budget: Budget & { source: string };
  /** Credentials by id (`hmac`, `jwt`); `{}` for platforms without signing. */
  credentials: G;
  /** Platform-specific settings (zod shape of environment variables, each with a default). */
  settings: S;
  /** The request signer for the configured credentials, or undefined when none are configured (public calls only). */
  signer?(credentials: ResolvedCredentials<G>, settings: SettingsOf<S>): Signer | undefined;
}

/**
 * Declares a platform, keeping its exact types (credential and setting names) for the code that reads them.
 * `satisfies PlatformDescriptor` would widen the signer's parameters; this infers them.
 */
export function definePlatform<
  G extends CredentialGroups,
  S extends z.ZodRawShape,
  const K extends string,
  const X extends string = never,
  const H extends string = 'main',
  const F extends string = never,
>(descriptor: PlatformDescriptor<G, S, K, X, H, F>): PlatformDescriptor<G, S, K, X, H, F> {
  return descriptor;
}

/** A credential group with its built type inferred from `build`. */
export function credential<T>(group: CredentialGroup<T>): CredentialGroup<T> {
  return group;
}

/** The id a simulator host and a gateway target carry: `venue-b`, `venue-a-us/auth`. */
export function hostId(platform: string, host: string): string {
  return host === 'main' ? platform : `${platform}/${host}`;
}
