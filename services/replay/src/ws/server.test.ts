/**
 * The replay's handshakes on a plain HTTP server (no Redis, no ClickHouse: every handshake here is refused before
 * the caller is looked up): a refusal is answered and the connection then closes even when the client keeps its
 * side open.
 */
import http from 'node:http';
import type net from 'node:net';
import { Writable } from 'node:stream';
import type { Auth } from '@depthgate/auth';
import type { HistoryStore, OrderBookQueries } from '@depthgate/history-store';
import { createLogger, createRegistry } from '@depthgate/service-kit';
import { halfOpenExchange, waitFor, webSocketHandshake } from '@depthgate/test-utils';
import { ReplayMetrics } from '../metrics';
import { ReplaySockets } from './server';

const quiet = () =>
  createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

let server: http.Server;
let port: number;
let sockets: ReplaySockets;
/** The server's side of each upgrade request, in order. */
const upgraded: net.Socket[] = [];

beforeAll(async () => {
  sockets = new ReplaySockets({
    // Nothing here reaches the caller's lookup: Redis is never asked.
    auth: { redis: {} } as unknown as Auth,
    store: {} as HistoryStore,
    queries: {} as OrderBookQueries,
    metrics: new ReplayMetrics(createRegistry('replay-test', { defaultMetrics: false })),
    logger: quiet(),
    queryTimeoutMs: 1000,
    pageRows: 1000,
    now: Date.now,
    trustProxyHops: 0,
    settleMs: 0,
    subscribeTimeoutMs: 60_000,
    messagesPerSecond: 20,
    writeTimeoutMs: 60_000,
    connections: { perKey: 1, anonymous: 1, leaseMs: 60_000, redisKeyPrefix: 't:' },
    subscriptions: { perKey: 1, anonymous: 1 },
  });
  server = http.createServer((_req, res) => res.end());
  server.on('upgrade', (_req, socket: net.Socket) => upgraded.push(socket));
  server.on('upgrade', sockets.upgrade);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  sockets.closeAll();
  for (const s of upgraded) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

it('a refused handshake is answered, and its connection closed even when the client keeps its side open', async () => {
  const { client, answer } = halfOpenExchange(port, webSocketHandshake('/nope'));
  const text = await answer;
  expect(text).toMatch(/^HTTP\/1\.1 404 /);
  expect(text).toContain('"error":"not_found"');
  const serverSide = upgraded.at(-1) as net.Socket;
  // The client holds its side open; the server does not wait for it.
  await waitFor(() => serverSide.destroyed, { timeoutMs: 10_000, what: 'the server to close the connection' });
  client.destroy();
}, 20_000);
