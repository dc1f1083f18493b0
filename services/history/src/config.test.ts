import { ConfigError } from '@depthgate/service-kit';
import { thrownBy, undocumentedSettings } from '@depthgate/test-utils';
import { loadConfig, historyEnvSchema } from './config';

describe('history configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:7379');
    expect(config.KEY_CACHE_TTL_MS).toBeLessThanOrEqual(5000);
    expect(config.TRUST_PROXY_HOPS).toBe(0);
  });

  it('rejects values outside their bounds, naming each', () => {
    const env = { KEY_CACHE_TTL_MS: '6000', TRUST_PROXY_HOPS: 'true', RATE_LIMIT_DEFAULT_RPM: '0' };
    const issues = thrownBy(() => loadConfig(env), ConfigError).issues;
    expect(issues).toHaveLength(3);
    for (const name of Object.keys(env)) expect(issues.join('\n')).toContain(`${name}:`);
  });

  it('has ClickHouse and query defaults, and accepts credentials in the URL', () => {
    const config = loadConfig({});
    expect(config.CLICKHOUSE_URL).toBe('http://127.0.0.1:7123');
    expect(config.CLICKHOUSE_DATABASE).toBe('depthgate');
    expect(config.DEFAULT_LIMIT).toBe(1000);
    expect(config.MAX_LIMIT).toBe(1_000_000);
    expect(config.GZIP_LEVEL).toBe(3);
    expect(loadConfig({ CLICKHOUSE_URL: 'http://depthgate:ci-only-password@127.0.0.1:8123' }).CLICKHOUSE_URL).toBe(
      'http://depthgate:ci-only-password@127.0.0.1:8123',
    );
  });

  it('rejects a ClickHouse URL with a path, a bad database name and a default limit above the maximum', () => {
    for (const env of [
      { CLICKHOUSE_URL: 'http://127.0.0.1:8123/db' },
      { CLICKHOUSE_URL: 'ftp://127.0.0.1' },
      { CLICKHOUSE_URL: 'not a url' },
      { CLICKHOUSE_DATABASE: 'bad-name' },
      { CLICKHOUSE_DATABASE: 'x`; DROP' },
      { DEFAULT_LIMIT: '10', MAX_LIMIT: '5' },
      { GZIP_LEVEL: '0' },
    ]) {
      const [name] = Object.keys(env);
      expect(thrownBy(() => loadConfig(env), ConfigError).issues.join('\n')).toContain(`${name}:`);
    }
  });

  it('documents every setting in docs/configuration.md', () => {
    expect(undocumentedSettings(Object.keys(historyEnvSchema.shape))).toEqual([]);
  });
});
