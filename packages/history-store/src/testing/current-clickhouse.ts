/**
 * A current ClickHouse (the engine of the `chdb` npm package, 26.7) as a local HTTP server for tests: see
 * current-clickhouse-server.ts. `./dev test` installs chdb into `.tools/chdb` (outside the workspace, so a plain
 * install stays lean) and exports its folder as DG_CHDB_DIR.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface CurrentClickHouse {
  /** Its HTTP interface, for a HistoryStore. */
  url: string;
  /** The engine's version (`SELECT version()`). */
  version: string;
  /** The next insert fails ambiguously: `stall` (never answers: the client gives up), `commit-then-drop`. */
  failNextInsert(how: 'stall' | 'commit-then-drop'): Promise<void>;
  /** Queued inserts wait until released (the worst moment for a writer that probes in between). */
  holdQueue(): Promise<void>;
  releaseQueue(): Promise<void>;
  /** From now on the server behaves as if the client had not sent this setting (what an unpinned client gets). */
  ignoreSetting(name: string): Promise<void>;
  /** The inserts it received (was each queued?), and the engine's defaults of the queue's settings. */
  state(): Promise<{
    inserts: { table: string; queued: boolean; settings: Record<string, string> }[];
    queued: number;
    defaults: Record<string, string>;
  }>;
  close(): Promise<void>;
}

/** Where `./dev test` installed chdb. */
export function chdbDir(): string {
  const dir = process.env.DG_CHDB_DIR ?? path.resolve(__dirname, '../../../../.tools/chdb');
  if (!existsSync(path.join(dir, 'node_modules', 'chdb', 'package.json'))) {
    throw new Error(`chdb is not installed in ${dir}: run the tests through ./dev test (it installs it there)`);
  }
  return dir;
}

export async function startCurrentClickHouse(): Promise<CurrentClickHouse> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'dg-chdb-'));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
      path.join(__dirname, 'current-clickhouse-server.ts'),
      '--chdb',
      chdbDir(),
      '--data',
      data,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const stdout = child.stdout;
  if (!stdout) throw new Error('no stdout from the current ClickHouse');
  const ready = await new Promise<{ port: number; version: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the current ClickHouse did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`the current ClickHouse exited (${code}) before it listened`)));
    createInterface({ input: stdout }).on('line', (line) => {
      const m = /^listening (\d+) (\S+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), version: m[2] ?? '' });
      }
    });
  });
  const url = `http://127.0.0.1:${ready.port}`;
  const call = async (pathAndQuery: string) => {
    const res = await fetch(`${url}${pathAndQuery}`, { method: 'POST' });
    if (!res.ok) throw new Error(`${pathAndQuery}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<unknown>;
  };
  return {
    url,
    version: ready.version,
    failNextInsert: async (how) => void (await call(`/__dg/fail-next-insert?how=${how}`)),
    holdQueue: async () => void (await call('/__dg/hold-queue')),
    releaseQueue: async () => void (await call('/__dg/release-queue')),
    ignoreSetting: async (name) => void (await call(`/__dg/ignore-setting?name=${encodeURIComponent(name)}`)),
    state: () => call('/__dg/state') as ReturnType<CurrentClickHouse['state']>,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(data, { recursive: true, force: true });
    },
  };
}
