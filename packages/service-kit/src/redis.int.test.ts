import net from 'node:net';
import { linesSink, startPrivateRedis, testRedisUrl, waitFor, type PrivateServer } from '@depthgate/test-utils';
import { createLogger } from './logger';
import { createRedisClient, waitForRedis, type Redis } from './redis';

/**
 * One address in front of two servers, as a managed Redis's endpoint: new connections go to `target`, connections
 * already open stay with the server they reached (a failover moves the address, not the open connections).
 */
async function movableAddress(initial: number): Promise<{ port: number; target: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const address = {
    port: 0,
    target: initial,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: address.target });
    for (const [s, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(s);
      s.on('error', () => other.destroy());
      s.on('close', () => {
        sockets.delete(s);
        other.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  address.port = (server.address() as net.AddressInfo).port;
  return address;
}

describe('a Redis failover behind one address (REDIS_URL, no Sentinel)', () => {
  let a: PrivateServer;
  let b: PrivateServer;
  const clients: Redis[] = [];
  const client = (url: string, name: string) => {
    // Generous deadlines: the test's own commands must not time out on a loaded machine.
    const c = createRedisClient(url, { name, offlineQueue: true, commandTimeoutMs: 30_000 });
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    [a, b] = await Promise.all([startPrivateRedis(), startPrivateRedis()]);
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await Promise.all([a.destroy(), b.destroy()]);
  });

  it('a client whose connection stays on the demoted master (READONLY) reconnects and writes to the new one', async () => {
    const adminA = client(a.url, 'admin-a');
    const adminB = client(b.url, 'admin-b');
    // (A replica's first sync waits 5 s by default, for more replicas to share it.)
    for (const admin of [adminA, adminB]) await admin.config('SET', 'repl-diskless-sync-delay', '0');
    await adminB.replicaof('127.0.0.1', String(a.port));
    const address = await movableAddress(a.port);
    try {
      // The request-path client as the services make it (no offline queue, one retry), with a command timeout a
      // loaded machine cannot run out of.
      const redis = createRedisClient(`redis://127.0.0.1:${address.port}`, {
        name: 'service',
        commandTimeoutMs: 30_000,
      });
      clients.push(redis);
      await waitForRedis(redis, 30_000);
      expect(await redis.set('k', 'before')).toBe('OK');
      await waitFor(async () => (await adminB.get('k')) === 'before', { what: 'the replica to have the write' });

      // The failover: B promoted, A demoted to its replica, the address moved to B.
      await adminB.replicaof('NO', 'ONE');
      await adminA.replicaof('127.0.0.1', String(b.port));
      address.target = b.port;
      expect((await adminA.role())[0]).toBe('slave');

      // Without reconnecting on READONLY, every write would fail on the connection still open to A.
      await waitFor(async () => (await redis.set('k', 'after').catch(() => undefined)) === 'OK', {
        timeoutMs: 30_000,
        what: 'a write through the address to succeed',
      });
      expect(await adminB.get('k')).toBe('after');
      expect(await redis.incr('n')).toBe(1);
    } finally {
      await address.close();
    }
  });
});

describe('a client ioredis gives up though nobody closed it', () => {
  const url = testRedisUrl();

  it('connects again (a connector disconnected while it connects: the Sentinel failover race)', async () => {
    const lines: string[] = [];
    const logger = createLogger({ name: 'test', level: 'warn', destination: linesSink(lines) });
    const redis = createRedisClient(url, { name: 'revived', logger });
    try {
      const ended = new Promise((resolve) => redis.once('end', resolve));
      // What the failover detector of a dead connection does to a client asking the sentinels for the new master:
      // its connector is disconnected (for a reconnection) while it connects. ioredis then ends the client for good.
      redis.disconnect(true);
      await ended;
      await waitForRedis(redis, 30_000);
      expect(await redis.ping()).toBe('PONG');
      const warnings = lines.map((l) => JSON.parse(l) as { level: string }).filter((l) => l.level === 'warn');
      expect(warnings).toEqual([
        expect.objectContaining({
          msg: 'redis connection ended though not closed: connecting again',
          redis: 'revived',
        }),
      ]);
    } finally {
      redis.disconnect();
    }
  });

  it('a subscriber ended while it reconnects connects again and is subscribed again', async () => {
    const subscriber = createRedisClient(url, { name: 'revived-subscriber', subscriber: true });
    const publisher = createRedisClient(url, { name: 'publisher', offlineQueue: true, commandTimeoutMs: 30_000 });
    const channel = `revival-${process.pid}-${Date.now()}`;
    try {
      const received: string[] = [];
      subscriber.on('message', (_channel: string, message: string) => received.push(message));
      await subscriber.subscribe(channel);
      // A subscribed connection drops; as its reconnection starts, its connector is disconnected again (the race).
      const ended = new Promise((resolve) => subscriber.once('end', resolve));
      subscriber.once('connecting', () => subscriber.disconnect(true));
      subscriber.disconnect(true);
      await ended;
      await waitFor(async () => (await publisher.publish(channel, 'after')) === 1, {
        timeoutMs: 30_000,
        what: 'the subscriber to be subscribed again',
      });
      await waitFor(() => received.includes('after'), { timeoutMs: 30_000, what: 'the message' });
    } finally {
      subscriber.disconnect();
      publisher.disconnect();
    }
  });

  it('stays closed when closed on purpose (QUIT or disconnect)', async () => {
    for (const close of [(r: Redis) => void r.quit(), (r: Redis) => r.disconnect()]) {
      const redis = createRedisClient(url, { name: 'closed' });
      await waitForRedis(redis, 30_000);
      const ended = new Promise((resolve) => redis.once('end', resolve));
      close(redis);
      await ended;
      // Longer than the first reconnection delay (200 ms) a revival would wait.
      await new Promise((r) => setTimeout(r, 600));
      expect(redis.status).toBe('end');
    }
  });
});
