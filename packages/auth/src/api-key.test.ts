import { createHash } from 'node:crypto';
import { KEY_ID_PATTERN, KEY_PREFIX, generateApiKey, generateKeyId, hashApiKey, isWellFormedApiKey } from './api-key';

describe('API keys', () => {
  it('have the dg_ prefix, a fixed length and pass their own checksum', () => {
    const key = generateApiKey();
    expect(key.startsWith(KEY_PREFIX)).toBe(true);
    expect(key).toMatch(/^dg_[0-9A-Za-z]{39}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('carry at least 128 random bits: no repeats and every body character position varies', () => {
    const keys = Array.from({ length: 2000 }, generateApiKey);
    expect(new Set(keys).size).toBe(keys.length);
    // The leading base62 digit of a 192-bit number only takes a few values; every other one takes them all.
    for (let pos = 4; pos < 3 + 33; pos++) {
      expect(new Set(keys.map((k) => k[pos])).size).toBeGreaterThan(20);
    }
  });

  it('reject any single-character change through the checksum', () => {
    const key = generateApiKey();
    for (let pos = 3; pos < key.length; pos++) {
      const c = key[pos] === 'A' ? 'B' : 'A';
      expect(isWellFormedApiKey(key.slice(0, pos) + c + key.slice(pos + 1))).toBe(false);
    }
  });

  it('reject wrong prefixes, lengths and characters', () => {
    const key = generateApiKey();
    for (const bad of [
      '',
      'dg_',
      key.slice(1),
      `x${key.slice(1)}`,
      `${key}0`,
      key.slice(0, -1),
      key.replace(/.$/, '-'),
      ` ${key}`,
    ]) {
      expect(isWellFormedApiKey(bad)).toBe(false);
    }
  });

  it('hash to the SHA-256 hex digest of the key', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).not.toBe(hashApiKey(generateApiKey()));
  });

  it('ids are public, distinct and never the key', () => {
    const id = generateKeyId();
    expect(id).toMatch(KEY_ID_PATTERN);
    expect(generateKeyId()).not.toBe(id);
  });
});
