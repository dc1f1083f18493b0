import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { thrownBy } from '@depthgate/test-utils';
import {
  ConfigError,
  envBool,
  envInt,
  envList,
  envOptionalInt,
  envUrl,
  envWsUrl,
  group,
  parseEnv,
  secret,
} from './env';

const schema = z.object({
  PORT: envInt(8080, { min: 0, max: 65535 }),
  ENABLED: envBool(true),
  LIST: envList(['a']),
  URL: envUrl('http://localhost:1/'),
  LIMIT: envOptionalInt({ min: 1 }),
});

describe('parseEnv', () => {
  it('applies defaults', () => {
    expect(parseEnv(schema, {})).toEqual({
      PORT: 8080,
      ENABLED: true,
      LIST: ['a'],
      URL: 'http://localhost:1',
      LIMIT: undefined,
    });
  });

  it('parses given values', () => {
    expect(
      parseEnv(schema, { PORT: '9', ENABLED: 'off', LIST: ' x, y ,,z', URL: 'https://h.example/base/', LIMIT: '3' }),
    ).toEqual({ PORT: 9, ENABLED: false, LIST: ['x', 'y', 'z'], URL: 'https://h.example/base', LIMIT: 3 });
  });

  it('lists every invalid setting by name', () => {
    try {
      parseEnv(schema, { PORT: '70000', ENABLED: 'maybe', URL: 'not a url', LIMIT: '0' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const issues = (err as ConfigError).issues.join('\n');
      for (const name of ['PORT', 'ENABLED', 'URL', 'LIMIT']) expect(issues).toContain(name);
    }
  });
});

describe('blank settings', () => {
  it('a blank integer means its default, as every other setting (not 0)', () => {
    for (const blank of ['', '  ']) {
      expect(parseEnv(schema, { PORT: blank, ENABLED: blank, LIST: blank, URL: blank, LIMIT: blank })).toEqual(
        parseEnv(schema, {}),
      );
    }
    expect(parseEnv(z.object({ N: envInt(5, { min: 1 }) }), { N: '' })).toEqual({ N: 5 });
    expect(() => parseEnv(z.object({ N: envInt(5, { min: 1 }) }), { N: '0' })).toThrow(ConfigError);
    expect(() => parseEnv(schema, { PORT: '1.5' })).toThrow(ConfigError);
    expect(() => parseEnv(schema, { PORT: 'x' })).toThrow(ConfigError);
  });
});

describe('a URL setting that is refused', () => {
  const urls = z.object({ REDIS_URL: envUrl('redis://127.0.0.1:1'), WS: envWsUrl('ws://127.0.0.1:1') });
  const issues = (env: Record<string, string>) => thrownBy(() => parseEnv(urls, env), ConfigError).issues;

  it('never shows the value, which may carry a password', () => {
    expect(issues({ REDIS_URL: 'redis://user:s3cret@host:6379:bad' })).toEqual(['REDIS_URL: not a URL']);
    expect(issues({ REDIS_URL: 'redis//:s3cret@host' })).toEqual(['REDIS_URL: not a URL']);
    expect(issues({ WS: 'ftp://user:s3cret@feeds.example.com/v2' })).toEqual([
      'WS: not a WebSocket URL (ws:// or wss://)',
    ]);
    expect(issues({ WS: 'wss://user:s3cret@feeds.example.com/v2#book' })).toEqual([
      'WS: a WebSocket URL has no #fragment',
    ]);
  });
});

describe('secret and group (credentials)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dg-secret-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a secret inline or from its _FILE (trimmed), and reports both set or an unreadable file', () => {
    const file = path.join(dir, 'key');
    writeFileSync(file, 'from-file\n');
    const issues: string[] = [];
    expect(secret({ K: 'inline' }, 'K', issues)).toBe('inline');
    expect(secret({ K_FILE: file }, 'K', issues)).toBe('from-file');
    expect(secret({}, 'K', issues)).toBeUndefined();
    expect(issues).toEqual([]);
    secret({ K: 'a', K_FILE: file }, 'K', issues);
    secret({ K_FILE: path.join(dir, 'missing') }, 'K', issues);
    expect(issues).toEqual([
      expect.stringMatching(/either K or K_FILE/),
      expect.stringMatching(/K_FILE: cannot read .*ENOENT/),
    ]);
  });

  it('builds a credential group from all its parts, none, or reports what is missing', () => {
    const issues: string[] = [];
    const build = (p: Record<string, string>) => `${p.A}:${p.B}`;
    expect(group('X', { A: 'a', B: 'b' }, build, issues)).toBe('a:b');
    expect(group('X', { A: undefined, B: undefined }, build, issues)).toBeUndefined();
    expect(issues).toEqual([]);
    expect(group('X', { A: 'a', B: undefined }, build, issues)).toBeUndefined();
    expect(issues).toEqual(['X credentials are incomplete: missing B']);
  });
});
