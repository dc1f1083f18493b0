import { Authenticator } from './authenticator';
import { generateApiKey, hashApiKey } from './api-key';
import type { Logger } from '@depthgate/service-kit';
import { parseKeyRecord, type KeyRecord, type NewKeyInput } from './key-record';
import type { KeyStore } from './key-store';
import { RefusedKeys } from './refused-keys';

/** A KeyStore over a Map, with a switch to make it fail like an unreachable Redis. */
class FakeStore implements KeyStore {
  readonly eventsChannel = 'events';
  readonly records = new Map<string, KeyRecord>();
  /** Records stored as given (JSON text), read as RedisKeyStore reads them. */
  readonly raw = new Map<string, string>();
  lookups = 0;
  down = false;

  add(key: string, overrides: Partial<KeyRecord> = {}): KeyRecord {
    const record: KeyRecord = {
      id: `key_${String(this.records.size).padStart(16, '0')}`,
      name: 'test',
      created_at: new Date(0).toISOString(),
      revoked_at: null,
      ticker_prefixes: null,
      max_data_age_days: null,
      full_history_prefixes: null,
      requests_per_minute: null,
      platforms: null,
      key_hash: hashApiKey(key),
      ...overrides,
    };
    this.records.set(record.key_hash, record);
    return record;
  }
  async findByHash(hash: string) {
    this.lookups++;
    await new Promise((r) => setImmediate(r));
    if (this.down) throw new Error('Connection is closed.');
    const raw = this.raw.get(hash);
    return raw === undefined ? (this.records.get(hash) ?? null) : parseKeyRecord(raw);
  }
  create(_input: NewKeyInput): Promise<{ record: KeyRecord; key: string }> {
    throw new Error('not used');
  }
  async get(id: string) {
    return [...this.records.values()].find((r) => r.id === id) ?? null;
  }
  async list() {
    return { records: [...this.records.values()], invalid: [] };
  }
  async revoke(id: string) {
    const r = await this.get(id);
    if (!r) return null;
    const revoked = { ...r, revoked_at: new Date().toISOString() };
    this.records.set(r.key_hash, revoked);
    return revoked;
  }
}

function setup(options: { ttl?: number; stale?: number; max?: number; unknownPerMinute?: number } = {}) {
  const store = new FakeStore();
  let now = 1_000_000;
  /** What the authenticator logs (it writes warnings and errors): level, fields, message. */
  const logged: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => logged.push({ level, fields, msg });
  const logger = { warn: at('warn'), error: at('error') } as unknown as Logger;
  const auth = new Authenticator({
    store,
    cacheTtlMs: options.ttl ?? 4000,
    maxStaleMs: options.stale ?? 60_000,
    maxEntries: options.max ?? 100,
    ...(options.unknownPerMinute === undefined
      ? {}
      : { refusedKeys: new RefusedKeys(options.unknownPerMinute, { now: () => now }) }),
    logger,
    now: () => now,
  });
  return { store, auth, advance: (ms: number) => (now += ms), logged };
}

describe('Authenticator', () => {
  it('accepts a stored key and answers from the cache afterwards, synchronously', async () => {
    const { store, auth } = setup();
    const key = generateApiKey();
    const record = store.add(key, { requests_per_minute: 7, ticker_prefixes: ['KX'] });
    const first = await auth.verify(key);
    expect(first).toMatchObject({
      status: 'valid',
      key: { id: record.id, requestsPerMinute: 7, tickerPrefixes: ['kx'] },
    });
    for (let i = 0; i < 100; i++) {
      const again = auth.verify(key);
      expect(again).not.toBeInstanceOf(Promise);
      expect(again).toMatchObject({ status: 'valid' });
    }
    expect(store.lookups).toBe(1);
  });

  it('rejects malformed keys without asking the store', async () => {
    const { store, auth } = setup();
    expect(await auth.verify('dg_not-a-key')).toEqual({ status: 'invalid' });
    expect(await auth.verify('')).toEqual({ status: 'invalid' });
    expect(store.lookups).toBe(0);
  });

  it('caches unknown keys too (negative cache)', async () => {
    const { store, auth } = setup();
    const key = generateApiKey();
    expect(await auth.verify(key)).toEqual({ status: 'invalid' });
    expect(await auth.verify(key)).toEqual({ status: 'invalid' });
    expect(store.lookups).toBe(1);
  });

  it('sees a revocation once the cache TTL has passed, and at once after invalidate()', async () => {
    const { store, auth, advance } = setup({ ttl: 4000 });
    const key = generateApiKey();
    const record = store.add(key);
    expect(await auth.verify(key)).toMatchObject({ status: 'valid' });
    await store.revoke(record.id);
    advance(3999);
    expect(await auth.verify(key)).toMatchObject({ status: 'valid' });
    advance(1);
    expect(await auth.verify(key)).toEqual({ status: 'revoked' });

    const other = generateApiKey();
    const otherRecord = store.add(other);
    expect(await auth.verify(other)).toMatchObject({ status: 'valid' });
    await store.revoke(otherRecord.id);
    auth.invalidate(hashApiKey(other));
    expect(await auth.verify(other)).toEqual({ status: 'revoked' });
  });

  it('makes one store lookup for concurrent checks of the same key', async () => {
    const { store, auth } = setup();
    const key = generateApiKey();
    store.add(key);
    const results = await Promise.all(Array.from({ length: 50 }, () => auth.verify(key)));
    expect(results.every((r) => r.status === 'valid')).toBe(true);
    expect(store.lookups).toBe(1);
  });

  it('while the store is down, serves cached answers up to maxStaleMs, then says unavailable', async () => {
    const { store, auth, advance } = setup({ ttl: 1000, stale: 10_000 });
    const known = generateApiKey();
    store.add(known);
    expect(await auth.verify(known)).toMatchObject({ status: 'valid' });
    store.down = true;
    advance(5000);
    expect(await auth.verify(known)).toMatchObject({ status: 'valid' });
    expect(await auth.verify(generateApiKey())).toEqual({ status: 'unavailable' });
    advance(6000);
    expect(await auth.verify(known)).toEqual({ status: 'unavailable' });
    store.down = false;
    expect(await auth.verify(known)).toMatchObject({ status: 'valid' });
  });

  it('keeps at most maxEntries answers for known keys, and a tenth of that for unknown ones', async () => {
    const { store, auth } = setup({ max: 30 });
    const known = Array.from({ length: 35 }, generateApiKey);
    for (const k of known) store.add(k);
    for (const k of known) await auth.verify(k);
    expect(store.lookups).toBe(35);
    await auth.verify(known[34] ?? '');
    await auth.verify(known[5] ?? '');
    expect(store.lookups).toBe(35);
    await auth.verify(known[4] ?? '');
    expect(store.lookups).toBe(36);

    const unknown = Array.from({ length: 5 }, generateApiKey);
    for (const k of unknown) await auth.verify(k);
    expect(store.lookups).toBe(41);
    await auth.verify(unknown[2] ?? '');
    expect(store.lookups).toBe(41);
    await auth.verify(unknown[1] ?? '');
    expect(store.lookups).toBe(42);
  });

  it('evicts the least recently used answer: a key in use outlives newer ones through a store outage', async () => {
    const { store, auth, advance } = setup({ max: 2 });
    const [a, b, c] = [generateApiKey(), generateApiKey(), generateApiKey()];
    for (const k of [a, b, c]) store.add(k);
    await auth.verify(a);
    await auth.verify(b);
    expect(auth.verify(a)).toMatchObject({ status: 'valid' }); // a hit: A is now the most recently used
    await auth.verify(c);
    store.down = true;
    advance(5000); // past the TTL: answers come from the cache only because the store cannot
    expect(await auth.verify(a)).toMatchObject({ status: 'valid' });
    expect(await auth.verify(c)).toMatchObject({ status: 'valid' });
    expect(await auth.verify(b)).toEqual({ status: 'unavailable' });
  });

  it('unknown keys push out only each other: sprayed made-up keys never evict a key in use', async () => {
    const { store, auth, advance } = setup({ max: 2 });
    const [a, b] = [generateApiKey(), generateApiKey()];
    for (const k of [a, b]) store.add(k);
    await auth.verify(a);
    await auth.verify(b);
    for (let i = 0; i < 50; i++) expect(await auth.verify(generateApiKey())).toEqual({ status: 'invalid' });
    store.down = true;
    advance(5000);
    expect(await auth.verify(a)).toMatchObject({ status: 'valid' });
    expect(await auth.verify(b)).toMatchObject({ status: 'valid' });
  });

  it('a stored record that fails validation: the key is invalid (not "store unreachable"), logged by id, never the key', async () => {
    const { store, auth, logged } = setup();
    const key = generateApiKey();
    const record = store.add(key);
    store.raw.set(record.key_hash, JSON.stringify({ ...record, requests_per_minute: 0 }));
    expect(await auth.verify(key)).toEqual({ status: 'invalid' });
    const garbled = generateApiKey();
    store.raw.set(hashApiKey(garbled), '{"id":');
    expect(await auth.verify(garbled)).toEqual({ status: 'invalid' });
    const msg = 'key record invalid: its key is refused until the record is fixed';
    expect(logged).toEqual([
      {
        level: 'error',
        fields: { keyId: record.id, problems: [expect.stringMatching(/^requests_per_minute: /)] },
        msg,
      },
      { level: 'error', fields: { keyId: undefined, problems: ['not JSON'] }, msg },
    ]);
    const text = JSON.stringify(logged);
    expect(text).not.toContain(key);
    expect(text).not.toContain(record.key_hash);
    // Fixed, it is valid again once the cached answer is dropped.
    store.raw.delete(record.key_hash);
    auth.invalidate(record.key_hash);
    expect(await auth.verify(key)).toMatchObject({ status: 'valid' });
  });

  it('a record granting a platform this version does not know (a newer replica’s) works for the known ones; the unknown one is ignored, logged once', async () => {
    const { store, auth, logged, advance } = setup();
    const key = generateApiKey();
    const record = store.add(key);
    store.raw.set(record.key_hash, JSON.stringify({ ...record, platforms: ['venue-b', 'venue-z'] }));
    expect(await auth.verify(key)).toMatchObject({ status: 'valid', key: { platforms: new Set(['venue-b']) } });
    // Only unknown ones: valid, but for no platform here (an empty allowlist, not "all").
    const other = generateApiKey();
    const only = store.add(other);
    store.raw.set(only.key_hash, JSON.stringify({ ...only, platforms: ['venue-z'] }));
    expect(await auth.verify(other)).toMatchObject({ status: 'valid', key: { platforms: new Set() } });
    // Looked up again after the cache TTL: not logged again.
    advance(10_000);
    expect(await auth.verify(key)).toMatchObject({ status: 'valid' });
    expect(store.lookups).toBe(3);
    expect(logged).toEqual([
      {
        level: 'warn',
        fields: { keyId: record.id, platforms: ['venue-z'] },
        msg: 'key record grants platforms this version does not know (a newer version added them?): ignored here',
      },
    ]);
  });

  it('a key created after its unknown answer was cached is known once the creation is announced', async () => {
    const { store, auth } = setup();
    const key = generateApiKey();
    expect(await auth.verify(key)).toEqual({ status: 'invalid' });
    store.add(key);
    auth.invalidate(hashApiKey(key));
    expect(await auth.verify(key)).toMatchObject({ status: 'valid' });
    expect(auth.verify(key)).toMatchObject({ status: 'valid' });
  });

  describe('made-up keys per client address (RefusedKeys)', () => {
    const from = (address: string) => ({ address: () => address });

    it('past the limit, an address’s keys the cache has no answer for are throttled without a store lookup until the window ends', async () => {
      const { store, auth, advance } = setup({ unknownPerMinute: 3 });
      for (let i = 0; i < 3; i++)
        expect(await auth.verify(generateApiKey(), from('203.0.113.9'))).toEqual({ status: 'invalid' });
      expect(store.lookups).toBe(3);
      const valid = generateApiKey();
      store.add(valid);
      // A key never seen here, even a valid one, is not looked up for that address now…
      expect(await auth.verify(valid, from('203.0.113.9'))).toEqual({ status: 'throttled', retryAfterMs: 60_000 });
      advance(59_000);
      expect(await auth.verify(generateApiKey(), from('203.0.113.9'))).toEqual({
        status: 'throttled',
        retryAfterMs: 1000,
      });
      expect(store.lookups).toBe(3);
      // …other addresses are not affected, nor is a call that names no address…
      expect(await auth.verify(valid, from('198.51.100.1'))).toMatchObject({ status: 'valid' });
      expect(store.lookups).toBe(4);
      // …and once the window has ended the address is looked up again.
      advance(1000);
      expect(await auth.verify(generateApiKey(), from('203.0.113.9'))).toEqual({ status: 'invalid' });
      expect(store.lookups).toBe(5);
    });

    it('from a throttled address a key the store knew is looked up as always; one refused before gets its cached 401 without a lookup', async () => {
      const { store, auth, advance } = setup({ unknownPerMinute: 1, ttl: 4000 });
      const [valid, revoked, unknown] = [generateApiKey(), generateApiKey(), generateApiKey()];
      store.add(valid);
      store.add(revoked, { revoked_at: new Date(0).toISOString() });
      expect(await auth.verify(valid, from('203.0.113.9'))).toMatchObject({ status: 'valid' });
      expect(await auth.verify(revoked, from('203.0.113.9'))).toEqual({ status: 'revoked' });
      expect(await auth.verify(unknown, from('203.0.113.9'))).toEqual({ status: 'invalid' });
      expect(await auth.verify(generateApiKey(), from('203.0.113.9'))).toMatchObject({ status: 'throttled' });
      // Fresh answers come from the cache, whoever asks.
      expect(auth.verify(unknown, from('203.0.113.9'))).toEqual({ status: 'invalid' });
      const lookups = store.lookups;
      advance(5000); // every answer stale
      expect(await auth.verify(valid, from('203.0.113.9'))).toMatchObject({ status: 'valid' });
      expect(await auth.verify(revoked, from('203.0.113.9'))).toEqual({ status: 'revoked' });
      expect(auth.verify(unknown, from('203.0.113.9'))).toEqual({ status: 'invalid' });
      expect(store.lookups).toBe(lookups + 2);
      // Not throttled, a stale refused key is looked up again, and counts again.
      expect(await auth.verify(unknown, from('198.51.100.1'))).toEqual({ status: 'invalid' });
      expect(store.lookups).toBe(lookups + 3);
      expect(await auth.verify(generateApiKey(), from('198.51.100.1'))).toMatchObject({ status: 'throttled' });
    });

    it('concurrent lookups cannot pass the limit together; copies of one key in flight cost one lookup and count once', async () => {
      const { store, auth } = setup({ unknownPerMinute: 3 });
      const spray = await Promise.all(
        Array.from({ length: 10 }, () => auth.verify(generateApiKey(), from('203.0.113.9'))),
      );
      expect(spray.filter((r) => r.status === 'invalid')).toHaveLength(3);
      expect(spray.filter((r) => r.status === 'throttled')).toHaveLength(7);
      expect(store.lookups).toBe(3);
      const other = setup({ unknownPerMinute: 2 });
      const one = generateApiKey();
      const copies = await Promise.all(Array.from({ length: 10 }, () => other.auth.verify(one, from('203.0.113.9'))));
      expect(copies.every((r) => r.status === 'invalid')).toBe(true);
      expect(other.store.lookups).toBe(1);
      expect(await other.auth.verify(generateApiKey(), from('203.0.113.9'))).toEqual({ status: 'invalid' });
      expect(await other.auth.verify(generateApiKey(), from('203.0.113.9'))).toMatchObject({ status: 'throttled' });
    });

    it('lookups of keys the store knows are given back, also concurrent ones: valid keys never use up the limit', async () => {
      const { store, auth } = setup({ unknownPerMinute: 2 });
      const keys = Array.from({ length: 20 }, () => generateApiKey());
      for (const k of keys) store.add(k);
      const all = await Promise.all(keys.slice(0, 2).map((k) => auth.verify(k, from('203.0.113.9'))));
      expect(all.every((r) => r.status === 'valid')).toBe(true);
      for (const k of keys.slice(2))
        expect(await auth.verify(k, from('203.0.113.9'))).toMatchObject({ status: 'valid' });
    });

    it('counts only keys the store did not know: valid keys, malformed ones and store outages never count', async () => {
      const { store, auth } = setup({ unknownPerMinute: 1 });
      for (let i = 0; i < 5; i++) {
        const k = generateApiKey();
        store.add(k);
        expect(await auth.verify(k, from('203.0.113.9'))).toMatchObject({ status: 'valid' });
      }
      expect(await auth.verify('dg_not-a-key', from('203.0.113.9'))).toEqual({ status: 'invalid' });
      store.down = true;
      expect(await auth.verify(generateApiKey(), from('203.0.113.9'))).toEqual({ status: 'unavailable' });
      store.down = false;
      expect(await auth.verify(generateApiKey(), from('203.0.113.9'))).toEqual({ status: 'invalid' });
      expect(await auth.verify(generateApiKey(), from('203.0.113.9'))).toMatchObject({ status: 'throttled' });
    });

    it('an address’s IPv6 neighbours (its /56) share its count; without RefusedKeys nothing is throttled', async () => {
      const { auth } = setup({ unknownPerMinute: 2 });
      expect(await auth.verify(generateApiKey(), from('2001:db8:abcd:1200::1'))).toEqual({ status: 'invalid' });
      expect(await auth.verify(generateApiKey(), from('2001:db8:abcd:12ff:ffff::2'))).toEqual({ status: 'invalid' });
      expect(await auth.verify(generateApiKey(), from('2001:db8:abcd:1234::3'))).toMatchObject({ status: 'throttled' });
      expect(await auth.verify(generateApiKey(), from('2001:db8:abcd:1300::1'))).toEqual({ status: 'invalid' });
      const plain = setup();
      for (let i = 0; i < 50; i++)
        expect(await plain.auth.verify(generateApiKey(), from('203.0.113.9'))).toEqual({ status: 'invalid' });
      expect(plain.store.lookups).toBe(50);
    });
  });
});
