/**
 * Redis connections shared by the deployables that use Redis (gateway, history, the keys CLI, the recorder in
 * redundant mode): the settings that say where Redis is (one address or Sentinel) and a client that fails fast.
 */
import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { envList, envOptionalString, envString, envUrl } from './env';
import type { Logger } from './logger';

export type { Redis } from 'ioredis';

/** `host:port`, `[v6]:port`. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** A comma-separated list of sentinels, `host:port` each (empty: no Sentinel). */
export const envSentinels = () =>
  envList().pipe(
    z.array(z.string().regex(HOST_PORT, 'expected host:port')).transform((list) =>
      list.map((s) => {
        const m = HOST_PORT.exec(s) as RegExpExecArray;
        return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: Number(m[2]) };
      }),
    ),
  );

/** `true`, `false` or unset (a TLS choice that defaults to the URL's scheme). */
export const envTlsChoice = () => envOptionalString().pipe(z.enum(['true', 'false']).optional());

/**
 * Where Redis is: one address (REDIS_URL), or a master found through Redis Sentinel. Shared by both services and the
 * keys CLI (docs/configuration.md; docs/operations.md, "Redis").
 */
export const redisEnvShape = {
  /**
   * Redis holding key records and rate-limit counters: `redis://` or `rediss://` (TLS), user and password in the
   * URL. With REDIS_SENTINELS its host is ignored (the sentinels name the master); its scheme, user, password and
   * database still apply to the master's connection.
   */
  REDIS_URL: envUrl('redis://127.0.0.1:7379'),
  /** Redis Sentinel: `host:port` of the sentinels, comma-separated. Set: the master is asked of them, and followed through failovers. */
  REDIS_SENTINELS: envSentinels(),
  /** The master's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  REDIS_SENTINEL_NAME: envString('mymaster'),
  /** Password of the sentinels themselves (their `requirepass`), when they have one. */
  REDIS_SENTINEL_PASSWORD: envOptionalString(),
  /** TLS to the sentinels: `true` or `false`; unset: as REDIS_URL's scheme says (`rediss:` → TLS). */
  REDIS_SENTINEL_TLS: envTlsChoice(),
  /** A PEM file of the CA that signed the Redis (and sentinel) certificates, for TLS with a private CA. */
  REDIS_TLS_CA_FILE: envOptionalString(),
};

export interface RedisConfig {
  REDIS_URL: string;
  REDIS_SENTINELS?: { host: string; port: number }[];
  REDIS_SENTINEL_NAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
  REDIS_SENTINEL_TLS?: 'true' | 'false';
  REDIS_TLS_CA_FILE?: string;
}

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

/** Delay before the `attempt`-th reconnection in a row: 200 ms doubling to 2 s. */
const backoff = (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000);

/** ioredis' options for a client with RESP2 replies as the `Redis` type has them (`replyMapping` legacy). */
type ClientOptions = RedisOptions & { replyMapping?: 'legacy' };

/** The connection part of a client's options: the URL's parts, TLS, and the sentinels when there are any. */
export function connectionOptions(target: RedisTarget): { url?: string; options: ClientOptions } {
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
      sentinelRetryStrategy: backoff,
    },
  };
}

/**
 * ioredis' `reconnectOnError`: a server that answers READONLY was demoted to a replica, and a connection open to it
 * stays there (behind one address the failover moved, as behind the sentinels). Reconnect at once — to the new
 * master, which the address (or the sentinels) now names — and resend the command where the connection queues
 * (2); a client without an offline queue fails that one command and the next go to the new master.
 */
export function reconnectOnReadonly(err: Error): 2 | false {
  return err.message.startsWith('READONLY') ? 2 : false;
}

export interface RedisClientOptions {
  /** Shown in CLIENT LIST. */
  name: string;
  logger?: Logger;
  /** Per-command deadline. A request never waits longer than this on Redis. */
  commandTimeoutMs?: number;
  /** Queue commands until connected (CLI connections only; never on a request path). */
  offlineQueue?: boolean;
  /**
   * A pub/sub subscriber connection: its commands wait for Redis however long it is away (queued, no retry limit, no
   * command timeout), so a SUBSCRIBE asked for while Redis is unreachable is made once it is up — ioredis resubscribes
   * after a reconnection only to channels whose SUBSCRIBE was answered. Never on a request path.
   */
  subscriber?: boolean;
}

/**
 * The ioredis client, made to connect again when ioredis ends it though nobody closed it. ioredis gives a connection
 * up for good (status `end`: every later command fails "Connection is closed") when its connector is disconnected
 * while it connects. With Sentinel that is a race a failover runs into: the master dies, the client reconnects and
 * asks the sentinels for the new master; meanwhile the failover detector of the connection that died hears
 * `+switch-master` and disconnects the connector; the answer from the sentinels then finds the connector closed and
 * the client ends (redis/ioredis#1683: "Connection is closed" for good on some pods after a failover; our Sentinel
 * failover test hit it too). A service would then stay degraded until restarted.
 * Closed on purpose (`quit`, `disconnect()`) it stays closed.
 */
class RevivingRedis extends Redis {
  private closedOnPurpose = false;
  private revivals = 0;

  constructor(
    connection: { url?: string; options: ClientOptions },
    private readonly onRevive: () => void,
  ) {
    const { url, options } = connection;
    super(...((url === undefined ? [options] : [url, options]) as [string, typeof options]));
    this.on('ready', () => (this.revivals = 0));
    this.on('end', () => {
      if (this.closedOnPurpose) return;
      // Once per run of revivals (a client that keeps ending is logged again only after it was ready).
      if (this.revivals === 0) this.onRevive();
      setTimeout(() => {
        if (!this.closedOnPurpose && this.status === 'end') this.connect().catch(() => undefined);
      }, backoff(++this.revivals)).unref();
    });
  }

  override disconnect(reconnect = false): void {
    if (!reconnect) this.closedOnPurpose = true;
    super.disconnect(reconnect);
  }

  /** Every command goes through here, QUIT (and the other commands that close the connection) too. */
  override sendCommand(...args: Parameters<Redis['sendCommand']>): ReturnType<Redis['sendCommand']> {
    if (args[0].name === 'quit' || args[0].name === 'shutdown') this.closedOnPurpose = true;
    return super.sendCommand(...args);
  }
}

/**
 * A Redis client that fails fast: no offline queue (a command while disconnected fails at once), a short command
 * timeout, one retry per command, and reconnects with capped backoff in the background — also when ioredis itself
 * would give the connection up (RevivingRedis). Callers decide what a failure means (see rate-limit.ts and
 * authenticator.ts); nothing here can make a request hang. A `subscriber` connection instead waits for Redis (it
 * serves no request).
 */
export function createRedisClient(target: string | RedisTarget, options: RedisClientOptions): Redis {
  const connection = connectionOptions(typeof target === 'string' ? { url: target } : target);
  const common: ClientOptions = {
    ...connection.options,
    connectionName: options.name,
    enableOfflineQueue: options.subscriber === true || options.offlineQueue === true,
    enableAutoPipelining: true,
    maxRetriesPerRequest: options.subscriber === true ? null : 1,
    commandTimeout: options.subscriber === true ? undefined : (options.commandTimeoutMs ?? 500),
    connectTimeout: 2000,
    retryStrategy: backoff,
    reconnectOnError: reconnectOnReadonly,
  };
  const client = new RevivingRedis({ url: connection.url, options: common }, () =>
    options.logger?.warn({ redis: options.name }, 'redis connection ended though not closed: connecting again'),
  );
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
