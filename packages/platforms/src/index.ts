/**
 * @depthgate/platforms: the registry of market platforms. One line per platform; every list of platforms in the
 * product (keys and aliases, exchanges, environment variables, budgets, credentials, signers, the simulator's hosts,
 * the gateway's routes, OpenAPI) derives from it. Adding a platform: docs/ADD_NEW_PLATFORM.md.
 */
import type { UrlSpec } from './descriptor';
import type { Registry } from './env';
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

/** Recorded platforms, by their stored code (1, 2, 3: the order of every per-exchange array). */
const RECORDED = Object.values(PLATFORMS as Registry)
  .filter((d) => d.exchange !== undefined)
  .sort((a, b) => (a.exchange?.code ?? 0) - (b.exchange?.code ?? 0));

/** Exchange keys in the order of their stored codes. */
export const EXCHANGE_KEYS = RECORDED.map((d) => d.exchange?.key) as ExchangeKey[];

/** The ClickHouse Enum8 code of each exchange (part of the stored data: never renumbered). */
export const EXCHANGE_CODES = Object.fromEntries(RECORDED.map((d) => [d.exchange?.key, d.exchange?.code])) as Readonly<
  Record<ExchangeKey, number>
>;

/** The platform key of each exchange (`venue_b` → `venue-b`). */
export const EXCHANGE_PLATFORMS = Object.fromEntries(RECORDED.map((d) => [d.exchange?.key, d.key])) as Readonly<
  Record<ExchangeKey, PlatformKey>
>;

export const EXCHANGE_ALIASES: Readonly<Record<string, ExchangeKey>> = Object.fromEntries(
  RECORDED.flatMap((d) => (d.exchange?.aliases ?? []).map((alias) => [alias, d.exchange?.key])),
);

export function canonicalExchange(name: string): ExchangeKey | undefined {
  const lower = name.toLowerCase();
  if ((EXCHANGE_KEYS as readonly string[]).includes(lower)) return lower as ExchangeKey;
  return Object.hasOwn(EXCHANGE_ALIASES, lower) ? EXCHANGE_ALIASES[lower] : undefined;
}

type RecordedKey = { [K in PlatformKey]: [ExchangeOf<Platforms[K]>] extends [never] ? never : K }[PlatformKey];
/** The sub-registry of the recorded platforms (the recorder configures only these). */
export const RECORDED_PLATFORMS = Object.fromEntries(RECORDED.map((d) => [d.key, d])) as Pick<Platforms, RecordedKey>;

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
export * from './env';
export * from './signing';
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
