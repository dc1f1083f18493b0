import { createHash } from 'node:crypto';
import { loggableUrl } from '@depthgate/service-kit';
import {
  KEY_ID_PATTERN,
  KEY_PREFIX,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  isWellFormedApiKey,
  carriesApiKey,
  jsonCarriesApiKey,
} from './api-key';

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

  it('are found in a query or path however they are carried; key-shaped text without its checksum is not a key', () => {
    const key = generateApiKey();
    const encoded = `dg%5F${key.slice(3)}`;
    for (const query of [
      `api_key=${key}`,
      `ticker=KX&x-api-key=${key}`,
      `api%5Fkey=${encoded}`,
      `q=Bearer+${key}&limit=5`,
      `${key}`,
      `${encoded}=1`,
      `/products/${encoded}/book`,
    ]) {
      expect([query, carriesApiKey(query)]).toEqual([query, true]);
    }
    const forged = key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
    for (const query of ['', 'ticker=KXBTC&limit=5', `q=${forged}`, 'q=dg_short', `q=${'a'.repeat(60)}`]) {
      expect([query, carriesApiKey(query)]).toEqual([query, false]);
    }
  });

  it('are found in JSON as written or behind a string’s escapes; text that is not JSON, as written only', () => {
    const key = generateApiKey();
    const escaped = `\\u0064${key.slice(1)}`;
    for (const text of [`{"a":["${key}"]}`, `{"a":["${escaped}"]}`, `{"${escaped}":1}`, `PING ${key}`]) {
      expect([text, jsonCarriesApiKey(text)]).toEqual([text, true]);
    }
    for (const text of ['{"a":["KXBTC"]}', `{"a":"\\u0041"}`, 'PING', `not json ${escaped}`]) {
      expect([text, jsonCarriesApiKey(text)]).toEqual([text, false]);
    }
  });

  it('are masked in logged URLs wherever they stand (service-kit loggableUrl knows their shape)', () => {
    for (let i = 0; i < 20; i++) {
      const key = generateApiKey();
      for (const url of [`/a?q=${key}`, `/a?${key}`, `/a/${key}`, `/a?x=dg%5F${key.slice(3)}`]) {
        expect(loggableUrl(url)).not.toContain(key.slice(3));
      }
    }
  });
});
