import { execFile, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root (this file lives in packages/test-utils/src or .../dist). */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');

/**
 * The value of a variable that `./dev test` exports for integration tests. Missing means the test was started
 * some other way; say how to run it instead of failing obscurely.
 */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run integration tests through ./dev test`);
  return value;
}

/** A stream that keeps each chunk written to it, as a string, in `lines` (a logger's destination in a test). */
export function linesSink(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
}

export const testRedisUrl = () => requireEnv('TEST_REDIS_URL');
export const testClickHouseUrl = () => requireEnv('TEST_CLICKHOUSE_URL');

/** A unique, short name for per-test isolation (Redis key prefixes, ClickHouse databases). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A service's built entrypoint running as a process on a port of its own. */
export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  url: string;
  /** SIGTERM, and wait for the exit (at once when it has exited already). */
  stop(): Promise<void>;
}

/** Whether nothing listens on `port` of 127.0.0.1 now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Starts a service's built entrypoint (`entry`, from the repository's root: a service never imports another) as a
 * process listening on a free port (given to it as `portVariable`), and waits for its `/ready`. A port found free can
 * be taken by another process before the child binds it (other test files, another suite on the machine): a child that
 * exits before it is ready while its port is held by someone else is started again on another port, three times at
 * most; any other exit before ready is the error. `env` is the child's whole environment.
 */
export async function startServiceProcess(o: {
  entry: string;
  portVariable: string;
  env: NodeJS.ProcessEnv;
  /** The service, for messages: "the history service". */
  what: string;
  /** Default: stdout and stderr inherited. */
  stdio?: StdioOptions;
  /** Where each attempt's port comes from (default: `freePort`; a test of this function gives its own). */
  ports?: () => Promise<number>;
}): Promise<ServiceProcess> {
  const entry = path.resolve(repoRoot, o.entry);
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (./dev test builds)`);
  for (let attempt = 1; ; attempt++) {
    const port = await (o.ports ?? freePort)();
    const child = spawn(process.execPath, [entry], {
      env: { ...o.env, [o.portVariable]: String(port) },
      stdio: o.stdio ?? ['ignore', 'inherit', 'inherit'],
    });
    const url = `http://127.0.0.1:${port}`;
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    };
    let state: 'ready' | 'exited';
    try {
      // An exit ends the wait at once (a probe's error would only be reported when the wait times out).
      state = await waitFor(
        async () => {
          if (child.exitCode !== null) return 'exited' as const;
          // Bounded: whatever took the port may accept a connection and never answer.
          const res = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
          return res?.status === 200 ? ('ready' as const) : false;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: `${o.what} to be ready` },
      );
    } catch (err) {
      await stop();
      throw err;
    }
    if (state === 'ready') return { child, port, url, stop };
    if (attempt < 3 && !(await portFree(port))) continue;
    throw new Error(`${o.what} exited (${child.exitCode})`);
  }
}

/**
 * A local port that refuses connections and that no other test can take in the meantime. A port freed by
 * `freePort()` cannot serve: the kernel may hand it to a parallel worker's server before the test dials it (a CI run
 * once got that worker's 404 instead of a refusal). Ports below 1024 are never handed out for `listen(0)`, so a
 * privileged port nothing listens on stays refused; this checks it once and says so clearly if the machine differs.
 */
export async function refusedPort(): Promise<number> {
  for (const port of [1, 9, 13]) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error('refusedPort: ports 1, 9 and 13 on 127.0.0.1 all accept connections on this machine');
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${options.what ?? 'condition'}${lastError ? `: ${String(lastError)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
}

export interface PrivateServer {
  url: string;
  port: number;
  dir: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

/**
 * A Redis of the test's own, started with the same script a person uses (infra/local/redis.sh), for tests
 * that stop and restart it without disturbing other tests.
 */
export function startPrivateRedis(options: { persist?: boolean } = {}): Promise<PrivateServer> {
  return privateServer('infra/local/redis.sh', 1, ([port]) => ({
    url: `redis://127.0.0.1:${port}`,
    args: ['--port', String(port), ...(options.persist ? ['--persist'] : [])],
  }));
}

/** A ClickHouse of the test's own (infra/local/clickhouse.sh), for tests that stop and restart it. */
export function startPrivateClickHouse(): Promise<PrivateServer> {
  return privateServer('infra/local/clickhouse.sh', 2, ([port, tcpPort]) => ({
    url: `http://127.0.0.1:${port}`,
    args: ['--http-port', String(port), '--tcp-port', String(tcpPort)],
  }));
}

/** A server started by an infra/local script (`start|stop --dir DIR …`) on free ports, in a fresh folder. */
function privateServer(
  scriptPath: string,
  portCount: number,
  describe: (ports: number[]) => { url: string; args: string[] },
): Promise<PrivateServer> {
  const script = path.join(repoRoot, scriptPath);
  return onFreePorts(portCount, async (ports) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), `dg-${path.basename(scriptPath, '.sh')}-`));
    const { url, args } = describe(ports);
    const server: PrivateServer = {
      url,
      port: ports[0] as number,
      dir,
      start: async () => {
        await run(script, ['start', '--dir', dir, ...args]);
      },
      stop: async () => {
        await run(script, ['stop', '--dir', dir]);
      },
      destroy: async () => {
        await server.stop();
        if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
      },
    };
    try {
      await server.start();
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return server;
  });
}

/**
 * Runs `start` on `count` free ports, again on fresh ones (up to 5 times) when a port was taken in between: another
 * process on this shared machine may bind a port after `freePort` found it free and before the server does.
 */
async function onFreePorts<T>(count: number, start: (ports: number[]) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    try {
      return await start(ports);
    } catch (err) {
      if (attempt >= 5 || !/is taken by another process/.test(String((err as Error).message))) throw err;
    }
  }
}

/** Names of configuration variables that docs/configuration.md does not document in a table row's first column. */
export function undocumentedSettings(names: readonly string[]): string[] {
  const firstColumns = readFileSync(path.join(repoRoot, 'docs', 'configuration.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| '))
    .map((line) => line.split('|')[1] ?? '');
  return names.filter((name) => !firstColumns.some((cell) => cell.includes(`\`${name}\``)));
}

/**
 * The error `fn` throws, checked to be a `type`: fails (throws) when `fn` returns normally or throws something
 * else. Lets a test inspect an error's details without `try { … } catch { expect(…) }`, which passes silently when
 * nothing is thrown.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function thrownBy<E extends Error>(fn: () => unknown, type: abstract new (...args: any[]) => E): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw new Error(`expected a ${type.name}, got ${err instanceof Error ? err.name : typeof err}: ${String(err)}`, {
      cause: err,
    });
  }
  throw new Error(`expected a ${type.name} to be thrown, but nothing was thrown`);
}

/** A server of the local ClickHouse cluster (infra/local/clickhouse-cluster.sh). */
export interface ClusterNode {
  name: string;
  shard: number;
  replica: number;
  url: string;
  /** Its native protocol's address (`127.0.0.1:port`), for `remote()`. */
  native: string;
}

export interface TestCluster {
  /** The cluster's name in the servers' `remote_servers` (CLICKHOUSE_CLUSTER). */
  name: string;
  nodes: ClusterNode[];
  node(name: string): ClusterNode;
  /** Stops one server: SIGTERM, or SIGKILL with `kill` (a crash). */
  stopNode(name: string, options?: { kill?: boolean }): Promise<void>;
  startNode(name: string): Promise<void>;
}

/**
 * The ClickHouse cluster `./dev test --cluster` started (TEST_CLICKHOUSE_CLUSTER_DIR: 2 shards × 2 replicas and a
 * ZooKeeper), with its servers and a way to stop and start each of them.
 */
export function testCluster(): TestCluster {
  const dir = requireEnv('TEST_CLICKHOUSE_CLUSTER_DIR');
  const described = JSON.parse(readFileSync(path.join(dir, 'cluster.json'), 'utf8')) as {
    name: string;
    nodes: { name: string; shard: number; replica: number; httpPort: number; tcpPort: number }[];
  };
  const script = path.join(repoRoot, 'infra/local/clickhouse-cluster.sh');
  const nodes = described.nodes.map((n) => ({
    name: n.name,
    shard: n.shard,
    replica: n.replica,
    url: `http://127.0.0.1:${n.httpPort}`,
    native: `127.0.0.1:${n.tcpPort}`,
  }));
  return {
    name: described.name,
    nodes,
    node(name) {
      const found = nodes.find((n) => n.name === name);
      if (!found) throw new Error(`no node ${name} in the test cluster`);
      return found;
    },
    async stopNode(name, options = {}) {
      await run(script, ['node-stop', '--dir', dir, '--node', name, ...(options.kill ? ['--kill'] : [])]);
    },
    async startNode(name) {
      await run(script, ['node-start', '--dir', dir, '--node', name]);
    },
  };
}

/**
 * One HTTP/1.1 exchange on a raw socket (requests no client library would send: an Upgrade other than WebSocket, a
 * malformed handshake): the answer's head and its body (Content-Length bytes; nothing for a 101), then the socket is
 * closed.
 */
export function rawExchange(
  port: number,
  request: string,
  host = '127.0.0.1',
): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(request));
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = got.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (got.length < end + 4 + length) return;
      socket.destroy();
      resolve({ head, body: got.slice(end + 4, end + 4 + length) });
    });
    socket.on('error', reject);
  });
}

/**
 * A client that sends `request` and never closes its own side (allowHalfOpen: it does not answer the server's FIN
 * with its own), as a client that just stops would: resolves with what it received once the server ended its side.
 * The caller destroys `client`.
 */
export function halfOpenExchange(port: number, request: string): { client: net.Socket; answer: Promise<string> } {
  const client = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  let received = '';
  const answer = new Promise<string>((resolve, reject) => {
    client.on('data', (d: Buffer) => (received += d.toString('latin1')));
    client.on('end', () => resolve(received));
    client.on('error', reject);
  });
  answer.catch(() => undefined);
  client.write(request);
  return { client, answer };
}

/** A WebSocket handshake's request for `path` (no key: refused by any service that wants one). */
export const webSocketHandshake = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
  'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';

export { WsTestClient, type WsOpenOptions } from './ws-client';
export { LoopStalls } from './loop-stalls';
export * from './contract';
