import { ConfigError } from '@depthgate/service-kit';
import { thrownBy, undocumentedSettings } from '@depthgate/test-utils';
import { loadConfig, replayEnvSchema } from './config';

describe('replay configuration', () => {
  it('has working defaults, its own port and query budget', () => {
    const config = loadConfig({});
    expect(config.REPLAY_PORT).toBe(7083);
    expect(config.REPLAY_QUERY_CONCURRENCY).toBe(4);
    expect(config.REPLAY_PAGE_ROWS).toBe(10_000);
    expect(config.CLICKHOUSE_DATABASE).toBe('depthgate');
    expect(config.REDIS_KEY_PREFIX).toBe('dg:');
  });

  it('rejects values outside their bounds, naming each', () => {
    const env = {
      REPLAY_PORT: '70000',
      REPLAY_QUERY_CONCURRENCY: '0',
      REPLAY_PAGE_ROWS: '10',
      CLICKHOUSE_URL: 'http://127.0.0.1:8123/db',
    };
    const issues = thrownBy(() => loadConfig(env), ConfigError).issues;
    expect(issues).toHaveLength(4);
    for (const name of Object.keys(env)) expect(issues.join('\n')).toContain(`${name}:`);
  });

  it('bounds replay sockets per key and per anonymous address', () => {
    const config = loadConfig({});
    expect([config.REPLAY_WS_MAX_CONNECTIONS_PER_KEY, config.REPLAY_WS_MAX_CONNECTIONS_ANONYMOUS]).toEqual([20, 2]);
    const issues = thrownBy(
      () => loadConfig({ REPLAY_WS_MAX_CONNECTIONS_PER_KEY: '0', REPLAY_WS_KEY_LEASE_MS: '10' }),
      ConfigError,
    ).issues;
    expect(issues.join('\n')).toMatch(
      /REPLAY_WS_MAX_CONNECTIONS_PER_KEY:[\s\S]*REPLAY_WS_KEY_LEASE_MS:|REPLAY_WS_KEY_LEASE_MS:[\s\S]*REPLAY_WS_MAX_CONNECTIONS_PER_KEY:/,
    );
  });

  it('documents every setting in docs/configuration.md', () => {
    expect(undocumentedSettings(Object.keys(replayEnvSchema.shape))).toEqual([]);
  });
});
