import { z } from 'zod';
import { KEY_ID_PATTERN } from './api-key';
import { PLATFORM_KEYS, TICKER_PREFIX_PATTERN, type PlatformKey } from './entitlements';

const prefixList = z.array(z.string().regex(TICKER_PREFIX_PATTERN)).min(1).nullable();
/**
 * A platform key as stored: one this version knows, or one a newer version added (a rolling deploy runs both): the
 * record stays valid, and resolveKey leaves the unknown one out.
 */
const STORED_PLATFORM = /^[a-z][a-z0-9-]{0,63}$/;
const KNOWN_PLATFORMS: ReadonlySet<string> = new Set(PLATFORM_KEYS);
const isKnownPlatform = (name: string): name is PlatformKey => KNOWN_PLATFORMS.has(name);

/** A key as stored. `key_hash` is the SHA-256 of the key; the key itself is never stored. */
export const keyRecordSchema = z.object({
  id: z.string().regex(KEY_ID_PATTERN),
  name: z.string().min(1).max(100),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  ticker_prefixes: prefixList,
  max_data_age_days: z.number().int().positive().nullable(),
  full_history_prefixes: prefixList,
  requests_per_minute: z.number().int().positive().nullable(),
  platforms: z.array(z.string().regex(STORED_PLATFORM)).min(1).nullable(),
  /** The gateway's WebSocket limits for this key (null: the gateway's defaults); absent in older records. */
  ws_max_connections: z.number().int().positive().nullable().optional(),
  ws_max_subscriptions: z.number().int().positive().nullable().optional(),
  key_hash: z.string().regex(/^[0-9a-f]{64}$/),
});

export type KeyRecord = z.infer<typeof keyRecordSchema>;

/**
 * A stored key record that is not a valid one (not JSON, or failing keyRecordSchema: edited by hand, written by
 * another version). Names the record's id when it has a readable one and what is wrong; never the key or its hash.
 */
export class InvalidKeyRecordError extends Error {
  constructor(
    readonly keyId: string | undefined,
    readonly problems: readonly string[],
  ) {
    super(`key record ${keyId ?? '(without a readable id)'} is invalid: ${problems.join('; ')}`);
    this.name = 'InvalidKeyRecordError';
  }
}

/** A record as stored (JSON), checked against the schema; InvalidKeyRecordError when it is not a valid one. */
export function parseKeyRecord(raw: string): KeyRecord {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new InvalidKeyRecordError(undefined, ['not JSON']);
  }
  const result = keyRecordSchema.safeParse(json);
  if (result.success) return result.data;
  const id = (json as { id?: unknown } | null)?.id;
  throw new InvalidKeyRecordError(
    typeof id === 'string' && KEY_ID_PATTERN.test(id) ? id : undefined,
    result.error.issues.map((issue) => `${issue.path.join('.') || '(record)'}: ${issue.message}`),
  );
}

/** What may be shown about a key: everything but its hash. */
export type PublicKeyRecord = Omit<KeyRecord, 'key_hash'>;

export function publicView(record: KeyRecord): PublicKeyRecord {
  const { key_hash: _hash, ...rest } = record;
  return rest;
}

export interface NewKeyInput {
  name: string;
  ticker_prefixes?: string[] | null;
  max_data_age_days?: number | null;
  full_history_prefixes?: string[] | null;
  requests_per_minute?: number | null;
  platforms?: PlatformKey[] | null;
  ws_max_connections?: number | null;
  ws_max_subscriptions?: number | null;
}

/** A valid key as the services use it on each request: prefixes lower-cased once, platforms as a set. */
export interface ResolvedKey {
  id: string;
  name: string;
  tickerPrefixes: readonly string[] | null;
  fullHistoryPrefixes: readonly string[] | null;
  maxDataAgeDays: number | null;
  requestsPerMinute: number | null;
  platforms: ReadonlySet<PlatformKey> | null;
  /** Open WebSocket connections and subscriptions this key may hold (null: the gateway's defaults). */
  wsMaxConnections?: number | null;
  wsMaxSubscriptions?: number | null;
}

/**
 * The key as the services use it. Granted platforms this version does not know are left out (the key works for the
 * others; granted only unknown ones, for none here), and given to `onUnknownPlatforms`.
 */
export function resolveKey(record: KeyRecord, onUnknownPlatforms?: (platforms: string[]) => void): ResolvedKey {
  let platforms: Set<PlatformKey> | null = null;
  if (record.platforms) {
    platforms = new Set(record.platforms.filter(isKnownPlatform));
    if (platforms.size < record.platforms.length)
      onUnknownPlatforms?.(record.platforms.filter((p) => !isKnownPlatform(p)));
  }
  return {
    id: record.id,
    name: record.name,
    tickerPrefixes: record.ticker_prefixes?.map((p) => p.toLowerCase()) ?? null,
    fullHistoryPrefixes: record.full_history_prefixes?.map((p) => p.toLowerCase()) ?? null,
    maxDataAgeDays: record.max_data_age_days,
    requestsPerMinute: record.requests_per_minute,
    platforms,
    wsMaxConnections: record.ws_max_connections ?? null,
    wsMaxSubscriptions: record.ws_max_subscriptions ?? null,
  };
}
