/**
 * @depthgate/platforms: the registry of market platforms. One line per platform; every list of platforms in the
 * product (keys and aliases, exchanges, environment variables, budgets, credentials, signers, the simulator's hosts,
 * the gateway's routes, OpenAPI) derives from it. Adding a platform: docs/ADD_NEW_PLATFORM.md.
 */
import type { UrlSpec } from './descriptor';
import type { Registry } from './env';
import { exchangesOf, type Exchanges } from './exchanges';
import { venueA } from './venue-a/descriptor';
import { venueAClob } from './venue-a-clob/descriptor';
import { venueAUs } from './venue-a-us/descriptor';
import { venueB } from './venue-b/descriptor';
import { venueC } from './venue-c/descriptor';
import { venueD } from './venue-d/descriptor';
import { venueE } from './venue-e/descriptor';

/** The platforms, by neutral key. Each deployable's own part is a map typed `Record<PlatformKey, …>`. */
export const PLATFORMS = {
  'venue-a': venueA,
  'venue-a-clob': venueAClob,
  'venue-a-us': venueAUs,
  'venue-b': venueB,
  'venue-c': venueC,
  'venue-d': venueD,
  'venue-e': venueE,
} as const satisfies Registry;

export type Platforms = typeof PLATFORMS;
export type PlatformKey = keyof Platforms;
export const PLATFORM_KEYS = Object.keys(PLATFORMS) as PlatformKey[];

/** Real platform names accepted wherever a platform key is (gateway paths, `--platforms`). */
export function platformAliases(registry: Registry = PLATFORMS): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, d] of Object.entries(registry)) for (const alias of d.aliases) out[alias] = key;
  return out;
}
export const PLATFORM_ALIASES = platformAliases() as Readonly<Record<string, PlatformKey>>;

/** The platform key a name stands for (a key or an alias, any case), or undefined. */
export function canonicalPlatform(name: string): PlatformKey | undefined {
  return resolvePlatformName(name, PLATFORMS) as PlatformKey | undefined;
}

/** `canonicalPlatform` over any registry (the gateway resolves names over the platforms it was built with). */
export function resolvePlatformName(name: string, registry: Registry): string | undefined {
  const lower = name.toLowerCase();
  if (Object.hasOwn(registry, lower)) return lower;
  for (const [key, d] of Object.entries(registry)) if (d.aliases.includes(lower)) return key;
  return undefined;
}

type ExchangeOf<D> = D extends { exchange?: { key: infer E } } ? E : never;
/** The history service's exchange keys: `venue_b`, `venue_c`, `venue_a_us`. */
export type ExchangeKey = { [K in PlatformKey]: ExchangeOf<Platforms[K]> }[PlatformKey];

/** The product's recorded exchanges (exchanges.ts): every list of them derives from this one. */
export const EXCHANGES = exchangesOf(PLATFORMS) as Exchanges<ExchangeKey>;
/** Exchange keys in the order of their stored codes. */
export const EXCHANGE_KEYS: readonly ExchangeKey[] = EXCHANGES.keys;
/** The ClickHouse Enum8 code of each exchange (part of the stored data: never renumbered). */
export const EXCHANGE_CODES = EXCHANGES.codes;
/** The platform key of each exchange (`venue_b` → `venue-b`). */
export const EXCHANGE_PLATFORMS = EXCHANGES.platforms as Readonly<Record<ExchangeKey, PlatformKey>>;
export const EXCHANGE_ALIASES = EXCHANGES.aliases;

export function canonicalExchange(name: string): ExchangeKey | undefined {
  return EXCHANGES.canonical(name);
}

type RecordedKey = { [K in PlatformKey]: [ExchangeOf<Platforms[K]>] extends [never] ? never : K }[PlatformKey];
/** The sub-registry of the recorded platforms (the recorder configures only these). */
export const RECORDED_PLATFORMS = Object.fromEntries(
  EXCHANGES.list.map((e) => [e.platform, PLATFORMS[e.platform as PlatformKey]]),
) as Pick<Platforms, RecordedKey>;

/** The sub-registry of the recorded platforms of any registry (a test's, with a fixture platform). */
export function recordedPlatforms(registry: Registry): Registry {
  return Object.fromEntries(
    Object.values(registry)
      .filter((d) => d.exchange !== undefined)
      .map((d) => [d.key, d]),
  );
}

type HostNames<D> = D extends { hosts: Readonly<Record<infer H, UrlSpec>> } ? H & string : never;
type FeedNames<D> = D extends { feeds?: Readonly<Record<infer F, UrlSpec>> } ? F & string : never;
type Qualified<K extends string, N extends string> = N extends 'main' ? K : `${K}/${N}`;
/** Host ids of a registry: `venue-b`, `venue-a-us/auth`, … (gateway targets, simulator hosts). */
export type HostIdOf<R> = { [K in keyof R & string]: Qualified<K, HostNames<R[K]>> }[keyof R & string];
/** Feed ids of a registry: `venue-b`, … */
export type FeedIdOf<R> = { [K in keyof R & string]: Qualified<K, FeedNames<R[K]>> }[keyof R & string];
export type HostId = HostIdOf<Platforms>;
export type FeedId = FeedIdOf<Platforms>;

export * from './descriptor';
export * from './exchanges';
export * from './env';
export * from './signing';
export * from './silence';
export {
  kalshiMessage,
  kalshiPrivateKey,
  kalshiSignature,
  kalshiSigner,
  type KalshiCredentials,
} from './venue-b/signer';
export {
  polymarketUsKey,
  polymarketUsMessage,
  polymarketUsSigner,
  type PolymarketUsCredentials,
} from './venue-a-us/signer';
export { polymarketClobSignature, polymarketClobSigner, type PolymarketClobCredentials } from './venue-a-clob/signer';
export {
  coinbaseHmacSigner,
  coinbaseJwtSigner,
  coinbaseSignature,
  type CoinbaseHmacCredentials,
  type CoinbaseJwtCredentials,
} from './venue-d/signer';
