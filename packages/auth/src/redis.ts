import { Redis } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';

export type { Redis } from 'ioredis';

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
export function createRedisClient(url: string, options: RedisClientOptions): Redis {
  const client = new Redis(url, {
    connectionName: options.name,
    enableOfflineQueue: options.offlineQueue ?? false,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
  });
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
