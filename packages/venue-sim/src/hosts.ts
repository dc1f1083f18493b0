/**
 * The simulated hosts. Each is its own 127.0.0.1 port, like the real separate hosts, at a fixed offset from the
 * base port (control = base).
 */
export const HOST_KEYS = [
  'control',
  'gamma',
  'clob',
  'data',
  'pmUsPublic',
  'pmUsAuth',
  'kalshi',
  'gemini',
  'coinbase',
  'ibkrPortal',
  'forecastex',
] as const;
export type HostKey = (typeof HOST_KEYS)[number];
export type PlatformHost = Exclude<HostKey, 'control'>;

export const PLATFORM_HOSTS = HOST_KEYS.filter((k): k is PlatformHost => k !== 'control');

export function portOffset(host: HostKey): number {
  return HOST_KEYS.indexOf(host);
}

/**
 * Names accepted wherever a platform is named (faults, rate limits, request filters, control endpoints): host keys,
 * the gateway's platform keys and the history service's exchange keys.
 */
const ALIASES: Record<string, readonly PlatformHost[]> = {
  gamma: ['gamma'],
  polymarket: ['gamma'],
  'venue-a': ['gamma'],
  clob: ['clob'],
  'polymarket-clob': ['clob'],
  'venue-a-clob': ['clob'],
  data: ['data'],
  'polymarket-data': ['data'],
  pmUsPublic: ['pmUsPublic'],
  pmUsAuth: ['pmUsAuth'],
  polymarketUs: ['pmUsPublic', 'pmUsAuth'],
  'polymarket-us': ['pmUsPublic', 'pmUsAuth'],
  polymarket_us: ['pmUsPublic', 'pmUsAuth'],
  'venue-a-us': ['pmUsPublic', 'pmUsAuth'],
  venue_a_us: ['pmUsPublic', 'pmUsAuth'],
  kalshi: ['kalshi'],
  'venue-b': ['kalshi'],
  venue_b: ['kalshi'],
  gemini: ['gemini'],
  'venue-c': ['gemini'],
  venue_c: ['gemini'],
  coinbase: ['coinbase'],
  'venue-d': ['coinbase'],
  ibkrPortal: ['ibkrPortal'],
  ibkr: ['ibkrPortal'],
  forecastex: ['forecastex'],
  'venue-e': ['forecastex', 'ibkrPortal'],
};

/** The hosts a name stands for, or undefined for an unknown name. */
export function resolveHosts(name: string): readonly PlatformHost[] | undefined {
  return Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined;
}

export const PLATFORM_NAMES = Object.keys(ALIASES);
