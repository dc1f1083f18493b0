import type { Redis } from 'ioredis';
import { generateApiKey, generateKeyId, hashApiKey } from './api-key';
import { InvalidKeyRecordError, keyRecordSchema, parseKeyRecord, type KeyRecord, type NewKeyInput } from './key-record';

/** Where key records live. The Redis implementation is the real one; tests may use any other. */
export interface KeyStore {
  /** Creates a record and returns it with the key, which is never retrievable again. */
  create(input: NewKeyInput, now?: Date): Promise<{ record: KeyRecord; key: string }>;
  /** The record of a key hash, or null; InvalidKeyRecordError when the stored record is not a valid one. */
  findByHash(hash: string): Promise<KeyRecord | null>;
  /** The record of a key id, or null; InvalidKeyRecordError naming that id when the stored record is not a valid one. */
  get(id: string): Promise<KeyRecord | null>;
  /**
   * Every key's record, oldest first. A stored record that is not a valid one does not fail the listing: it is in
   * `invalid`, named by the id it is listed under.
   */
  list(): Promise<KeyListing>;
  /**
   * Marks the key revoked (idempotent: the first revocation's revoked_at stays, also against a revoke running at the
   * same time, which then returns that record). Returns null when no such key exists. A stored record that is not a valid one
   * cannot be marked (it may not even be JSON): it is deleted with its id, so its key is refused for good and no later
   * version can read it back to life; that record's InvalidKeyRecordError is returned.
   */
  revoke(id: string, now?: Date): Promise<KeyRecord | InvalidKeyRecordError | null>;
  /** Channel on which changes are announced (the payload is the key hash), so caches can drop entries at once. */
  readonly eventsChannel: string;
}

export interface KeyListing {
  records: KeyRecord[];
  invalid: InvalidKeyRecordError[];
}

/**
 * Redis layout, under a configurable prefix (default `dg:`):
 *   <prefix>key:h:<sha256>  → the record as JSON (the lookup a request does)
 *   <prefix>key:id:<id>     → the sha256 (to show or revoke by id)
 *   <prefix>keys            → sorted set of ids by creation time (to list)
 *   <prefix>key:events      → pub/sub channel announcing the hash of a created or revoked key
 */
export class RedisKeyStore implements KeyStore {
  readonly eventsChannel: string;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'dg:',
  ) {
    this.eventsChannel = `${prefix}key:events`;
  }

  private hashKey(hash: string) {
    return `${this.prefix}key:h:${hash}`;
  }
  private idKey(id: string) {
    return `${this.prefix}key:id:${id}`;
  }

  async create(input: NewKeyInput, now = new Date()): Promise<{ record: KeyRecord; key: string }> {
    const key = generateApiKey();
    const record = keyRecordSchema.parse({
      id: generateKeyId(),
      name: input.name,
      created_at: now.toISOString(),
      revoked_at: null,
      ticker_prefixes: input.ticker_prefixes ?? null,
      max_data_age_days: input.max_data_age_days ?? null,
      full_history_prefixes: input.full_history_prefixes ?? null,
      requests_per_minute: input.requests_per_minute ?? null,
      platforms: input.platforms ?? null,
      ws_max_connections: input.ws_max_connections ?? null,
      ws_max_subscriptions: input.ws_max_subscriptions ?? null,
      key_hash: hashApiKey(key),
    } satisfies KeyRecord);
    const result = await this.redis
      .multi()
      .set(this.hashKey(record.key_hash), JSON.stringify(record), 'NX')
      .set(this.idKey(record.id), record.key_hash, 'NX')
      .zadd(`${this.prefix}keys`, String(now.getTime()), record.id)
      .publish(this.eventsChannel, record.key_hash)
      .exec();
    if (!result || result.some(([err]) => err) || result[0]?.[1] !== 'OK' || result[1]?.[1] !== 'OK') {
      throw new Error('could not store the new key');
    }
    return { record, key };
  }

  async findByHash(hash: string): Promise<KeyRecord | null> {
    const raw = await this.redis.get(this.hashKey(hash));
    return raw === null ? null : parseKeyRecord(raw);
  }

  async get(id: string): Promise<KeyRecord | null> {
    const stored = await this.stored(id);
    return stored && this.parse(id, stored.raw);
  }

  /** The hash a key id names and its record as stored (null when missing), or null when no such id. */
  private async stored(id: string): Promise<{ hash: string; raw: string | null } | null> {
    const hash = await this.redis.get(this.idKey(id));
    if (hash === null) return null;
    return { hash, raw: await this.redis.get(this.hashKey(hash)) };
  }

  /** A stored record of `id`; InvalidKeyRecordError named by that id when it is not a valid one. */
  private parse(id: string, raw: string | null): KeyRecord | null {
    try {
      return raw === null ? null : parseKeyRecord(raw);
    } catch (err) {
      // Named by the id it was asked for: the stored one may be unreadable (not JSON), missing or another.
      if (err instanceof InvalidKeyRecordError) throw new InvalidKeyRecordError(id, err.problems);
      throw err;
    }
  }

  async list(): Promise<KeyListing> {
    const ids = await this.redis.zrange(`${this.prefix}keys`, '0', '-1');
    const listing: KeyListing = { records: [], invalid: [] };
    for (const entry of await Promise.all(ids.map((id) => this.read(id)))) {
      if (entry instanceof InvalidKeyRecordError) listing.invalid.push(entry);
      else if (entry) listing.records.push(entry);
    }
    return listing;
  }

  /** Like get, but an invalid stored record is returned as its InvalidKeyRecordError instead of thrown. */
  private read(id: string): Promise<KeyRecord | InvalidKeyRecordError | null> {
    return this.get(id).catch((err: unknown) => {
      if (!(err instanceof InvalidKeyRecordError)) throw err;
      return err;
    });
  }

  async revoke(id: string, now = new Date()): Promise<KeyRecord | InvalidKeyRecordError | null> {
    for (;;) {
      const stored = await this.stored(id);
      if (stored === null) return null;
      let record: KeyRecord | InvalidKeyRecordError | null;
      try {
        record = this.parse(id, stored.raw);
      } catch (err) {
        if (!(err instanceof InvalidKeyRecordError)) throw err;
        record = err;
      }
      if (record instanceof InvalidKeyRecordError) {
        const result = await this.redis
          .multi()
          .del(this.hashKey(stored.hash), this.idKey(id))
          .zrem(`${this.prefix}keys`, id)
          .publish(this.eventsChannel, stored.hash)
          .exec();
        if (!result || result.some(([e]) => e)) throw new Error(`could not delete the invalid key record ${id}`);
        return record;
      }
      if (!record) return null;
      if (record.revoked_at !== null) return record;
      const revoked: KeyRecord = { ...record, revoked_at: now.toISOString() };
      // Written only over the record as it was read: one written meanwhile (another revoke, which keeps its
      // revoked_at) is read again rather than overwritten.
      const written = await this.redis.eval(
        REPLACE_IF_UNCHANGED,
        1,
        this.hashKey(record.key_hash),
        stored.raw as string,
        JSON.stringify(revoked),
        this.eventsChannel,
        record.key_hash,
      );
      if (written === 1) return revoked;
    }
  }
}

/**
 * KEYS[1] set to ARGV[2] only if it still holds ARGV[1], the change then announced (PUBLISH ARGV[3] ARGV[4]); 1 when
 * written, 0 when the record had changed. Atomic in Redis, so a read-modify-write loses no concurrent write.
 */
const REPLACE_IF_UNCHANGED = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;
