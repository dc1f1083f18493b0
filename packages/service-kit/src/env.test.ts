import { z } from 'zod';
import { ConfigError, envBool, envInt, envList, envOptionalInt, envUrl, parseEnv } from './env';

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
