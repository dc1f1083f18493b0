import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
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
export async function startPrivateRedis(options: { persist?: boolean } = {}): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dg-redis-'));
  const script = path.join(repoRoot, 'infra/local/redis.sh');
  const server: PrivateServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    start: async () => {
      await run(script, ['start', '--dir', dir, '--port', String(port), ...(options.persist ? ['--persist'] : [])]);
    },
    stop: async () => {
      await run(script, ['stop', '--dir', dir]);
    },
    destroy: async () => {
      await server.stop();
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** A ClickHouse of the test's own (infra/local/clickhouse.sh), for tests that stop and restart it. */
export async function startPrivateClickHouse(): Promise<PrivateServer> {
  const port = await freePort();
  const tcpPort = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dg-clickhouse-'));
  const script = path.join(repoRoot, 'infra/local/clickhouse.sh');
  const server: PrivateServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    start: async () => {
      await run(script, ['start', '--dir', dir, '--http-port', String(port), '--tcp-port', String(tcpPort)]);
    },
    stop: async () => {
      await run(script, ['stop', '--dir', dir]);
    },
    destroy: async () => {
      await server.stop();
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** Names of configuration variables that README.md does not document in the first column of a table row. */
export function undocumentedSettings(names: readonly string[]): string[] {
  const firstColumns = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
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

export { WsTestClient, type WsOpenOptions } from './ws-client';
