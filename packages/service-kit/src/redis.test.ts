import { z } from 'zod';
import { ConfigError, parseEnv } from './env';
import { connectionOptions, createRedisClient, redisEnvShape, redisTarget } from './redis';

const parse = (env: Record<string, string>) => parseEnv(z.object(redisEnvShape), env);

describe('Redis settings', () => {
  it('default to one Redis at REDIS_URL, no sentinels', () => {
    const config = parse({});
    expect(config.REDIS_SENTINELS).toEqual([]);
    expect(connectionOptions(redisTarget(config))).toEqual({ url: 'redis://127.0.0.1:7379', options: {} });
  });

  it('read the sentinels, the master name, their password and TLS', () => {
    const config = parse({
      REDIS_URL: 'rediss://depthgate:p%40ss@ignored:1/2',
      REDIS_SENTINELS: '10.0.0.1:26379, sentinel-2.redis:26379,[fd00::3]:26380',
      REDIS_SENTINEL_NAME: 'depthgate',
      REDIS_SENTINEL_PASSWORD: 'spw',
    });
    const { url, options } = connectionOptions(redisTarget(config));
    expect(url).toBeUndefined();
    expect(options).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-2.redis', port: 26379 },
        { host: 'fd00::3', port: 26380 },
      ],
      name: 'depthgate',
      username: 'depthgate',
      password: 'p@ss',
      db: 2,
      tls: {},
      sentinelPassword: 'spw',
      enableTLSForSentinelMode: true,
      sentinelTLS: {},
      failoverDetector: true,
    });
  });

  it('reconnect at once when a server answers READONLY (a demoted master), with one address as with Sentinel', () => {
    for (const target of [
      { url: 'redis://127.0.0.1:1' },
      { url: 'redis://x', sentinels: [{ host: '127.0.0.1', port: 1 }] },
    ]) {
      const client = createRedisClient(target, { name: 't' });
      client.disconnect();
      const reconnect = client.options.reconnectOnError as (err: Error) => boolean | 1 | 2;
      expect(reconnect(new Error("READONLY You can't write against a read only replica."))).toBe(2);
      expect(reconnect(new Error('ERR other'))).toBe(false);
    }
  });

  it('take TLS to the sentinels from REDIS_SENTINEL_TLS over the URL scheme', () => {
    const plain = parse({ REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_TLS: 'true' });
    expect(connectionOptions(redisTarget(plain)).options).toMatchObject({
      tls: undefined,
      enableTLSForSentinelMode: true,
    });
    const tls = parse({ REDIS_URL: 'rediss://x', REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_TLS: 'false' });
    expect(connectionOptions(redisTarget(tls)).options).toMatchObject({ tls: {}, enableTLSForSentinelMode: false });
  });

  it.each(['a', 'a:', ':1', 'a:b', 'a:1:2'])('reject a sentinel address %j', (sentinels) => {
    expect(() => parse({ REDIS_SENTINELS: sentinels })).toThrow(ConfigError);
  });
});
