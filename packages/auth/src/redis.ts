import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';
import type { RedisConfig } from './config';

export type { Redis } from 'ioredis';

/**
 * Where a client connects: one address (`url`), or — with `sentinels` — the master the sentinels name `name`,
 * through ioredis' own Sentinel support: it asks the sentinels for the master, listens for their `+switch-master`
 * (failoverDetector), reconnects to the new master after a failover, and leaves a server that answers as a replica.
 */
export interface RedisTarget {
  /** `redis[s]://[user:password@]host:port[/db]`; with sentinels only its scheme, user, password and db count. */
  url: string;
  sentinels?: readonly { host: string; port: number }[];
  /** The master's name in the sentinels' configuration. */
  name?: string;
  sentinelPassword?: string;
  /** TLS to the sentinels (default: as the URL's scheme). */
  sentinelTls?: boolean;
  /** CA certificate (PEM file) for TLS with a private CA. */
  tlsCaFile?: string;
}

/** The target a deployable's settings describe (docs/configuration.md; docs/operations.md, "Redis"). */
export function redisTarget(config: RedisConfig): RedisTarget {
  return {
    url: config.REDIS_URL,
    sentinels: config.REDIS_SENTINELS,
    name: config.REDIS_SENTINEL_NAME,
    sentinelPassword: config.REDIS_SENTINEL_PASSWORD,
    sentinelTls: config.REDIS_SENTINEL_TLS === undefined ? undefined : config.REDIS_SENTINEL_TLS === 'true',
    tlsCaFile: config.REDIS_TLS_CA_FILE,
  };
}

/** The connection part of a client's options: the URL's parts, TLS, and the sentinels when there are any. */
export function connectionOptions(target: RedisTarget): { url?: string; options: RedisOptions } {
  const url = new URL(target.url);
  const ca = target.tlsCaFile ? readFileSync(target.tlsCaFile) : undefined;
  const tls = url.protocol === 'rediss:' ? (ca ? { ca } : {}) : undefined;
  if (!target.sentinels || target.sentinels.length === 0) {
    return { url: target.url, options: ca && tls ? { tls } : {} };
  }
  const sentinelTls = target.sentinelTls ?? tls !== undefined;
  const db = url.pathname.replace(/^\//, '');
  return {
    options: {
      sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: target.name ?? 'mymaster',
      username: url.username ? decodeURIComponent(url.username) : undefined,
      password: url.password ? decodeURIComponent(url.password) : undefined,
      db: db === '' ? 0 : Number(db),
      tls,
      sentinelPassword: target.sentinelPassword,
      enableTLSForSentinelMode: sentinelTls,
      sentinelTLS: sentinelTls ? (ca ? { ca } : {}) : undefined,
      // Follow a failover as soon as a sentinel announces it, instead of at the next failed command.
      failoverDetector: true,
      sentinelCommandTimeout: 1000,
      sentinelRetryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
      // A demoted master answers writes with READONLY until we reconnect; reconnect (to the new master) at once.
      reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    },
  };
}

export interface RedisClientOptions {
  /** Shown in CLIENT LIST. */
  name: string;
  logger?: Logger;
  /** Per-command deadline. A request never waits longer than this on Redis. */
  commandTimeoutMs?: number;
  /** Queue commands until connected (CLI and subscriber connections only; never on a request path). */
  offlineQueue?: boolean;
}

/**
 * A Redis client that fails fast: no offline queue (a command while disconnected fails at once), a short command
 * timeout, one retry per command, and reconnects with capped backoff in the background. Callers decide what a
 * failure means (see rate-limit.ts and authenticator.ts); nothing here can make a request hang.
 */
export function createRedisClient(target: string | RedisTarget, options: RedisClientOptions): Redis {
  const connection = connectionOptions(typeof target === 'string' ? { url: target } : target);
  const common: RedisOptions = {
    ...connection.options,
    connectionName: options.name,
    enableOfflineQueue: options.offlineQueue ?? false,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
  };
  const client = connection.url === undefined ? new Redis(common) : new Redis(connection.url, common);
  // Without a listener ioredis prints every connection error; log the first of a run and every 30 s after.
  let lastLogged = 0;
  client.on('error', (err: Error) => {
    const now = Date.now();
    if (now - lastLogged > 30_000) {
      lastLogged = now;
      options.logger?.error({ err: { message: err.message }, redis: options.name }, 'redis connection error');
    }
  });
  client.on('ready', () => {
    if (lastLogged !== 0) options.logger?.info({ redis: options.name }, 'redis connection restored');
    lastLogged = 0;
  });
  return client;
}

/** Resolves once the client is ready, or rejects after `timeoutMs`. */
export function waitForRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`Redis not reachable within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}
