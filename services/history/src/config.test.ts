import { ConfigError } from '@depthgate/service-kit';
import { undocumentedSettings } from '@depthgate/test-utils';
import { loadConfig, historyEnvSchema } from './config';

describe('history configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:7379');
    expect(config.KEY_CACHE_TTL_MS).toBeLessThanOrEqual(5000);
    expect(config.TRUST_PROXY_HOPS).toBe(0);
  });

  it('rejects values outside their bounds, naming each', () => {
    expect(() =>
      loadConfig({ KEY_CACHE_TTL_MS: '6000', TRUST_PROXY_HOPS: 'true', RATE_LIMIT_DEFAULT_RPM: '0' }),
    ).toThrow(ConfigError);
    try {
      loadConfig({ KEY_CACHE_TTL_MS: '6000', TRUST_PROXY_HOPS: 'true' });
    } catch (err) {
      expect((err as ConfigError).issues.join('\n')).toMatch(/KEY_CACHE_TTL_MS[\s\S]*TRUST_PROXY_HOPS/);
    }
  });

  it('documents every setting in README.md', () => {
    expect(undocumentedSettings(Object.keys(historyEnvSchema.shape))).toEqual([]);
  });
});
