// Shared helpers for the benchmarks: processes we start and stop, free ports, wrk, RSS sampling, an open-loop load
// generator. Plain ES modules so benchmarks run with the project's Node and nothing else.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function tempDir(name) {
  return mkdtempSync(path.join(os.tmpdir(), `dg-bench-${name}-`));
}

/** Whether `port` can be listened on now. */
function available(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * On a shared machine, `DG_BENCH_PORT_BASE=31400` keeps every port the benchmarks pick within base … base + 999
 * (handed out upwards, each checked free); without it the system picks.
 */
const PORT_BASE = Number(process.env.DG_BENCH_PORT_BASE ?? 0);
let portCursor = PORT_BASE;

async function fromBase(count) {
  for (; portCursor + count <= PORT_BASE + 1000; portCursor++) {
    const ok = await Promise.all(Array.from({ length: count }, (_, i) => available(portCursor + i)));
    if (ok.every(Boolean)) {
      const base = portCursor;
      portCursor += count;
      return base;
    }
  }
  throw new Error(`no ${count} free consecutive ports left in DG_BENCH_PORT_BASE … +999`);
}

export async function freePort() {
  if (PORT_BASE > 0) return fromBase(1);
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Consecutive free ports (the simulator takes base..base+10). */
export async function freePortRange(count) {
  if (PORT_BASE > 0) return fromBase(count);
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    const ok = await Promise.all(Array.from({ length: count }, (_, i) => available(base + i)));
    if (ok.every(Boolean)) return base;
  }
  throw new Error('no free port range');
}

const children = new Set();
/** Starts a long-running process whose output goes to a log file; stopped by stopAll(). */
export function start(name, command, args, { env = {}, logDir } = {}) {
  const log = openSync(path.join(logDir, `${name}.log`), 'a');
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', log, log], detached: true });
  child.name = name;
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** Stops the processes start() started (their process groups: SIGTERM, SIGKILL after 10 s) and waits for them. */
export async function stopAll() {
  await stopSome([...children].map((c) => c.pid));
}

/** Stops the given processes of start()'s (by pid), as stopAll() does. */
export async function stopSome(pids) {
  const pending = [...children]
    .filter((c) => pids.includes(c.pid))
    .map(
      (c) =>
        new Promise((resolve) => {
          c.once('exit', resolve);
          try {
            process.kill(-c.pid, 'SIGTERM');
          } catch {
            resolve();
          }
          setTimeout(() => {
            try {
              process.kill(-c.pid, 'SIGKILL');
            } catch {
              /* gone */
            }
            resolve();
          }, 10_000).unref();
        }),
    );
  await Promise.all(pending);
}

/** The simulator's `--write-env` file (KEY=value lines) as an object. */
export function parseEnvFile(file) {
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z0-9_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

export async function waitHttp(url, { timeoutMs = 30_000, headers = {} } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url, { headers });
      if (res.ok) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await sleep(100);
  }
}

/** Runs wrk and returns requests/s and latency percentiles (ms). */
export function wrk(url, { connections = 64, seconds = 10, headers = {}, threads = 1, rate } = {}) {
  const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--latency'];
  if (rate) args.push('-s', path.join(ROOT, 'bench/gateway/paced.lua'));
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const env = rate ? { ...process.env, RATE: String(rate), CONNECTIONS: String(connections) } : process.env;
  const out = execFileSync('wrk', args, { encoding: 'utf8', env });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const ms = (label) => {
    const m = new RegExp(`\\s${label}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(out)?.[1] ?? '';
  const requests = Number(/(\d+) requests in /.exec(out)?.[1] ?? NaN);
  return { rps, p50: ms('50'), p99: ms('99'), requests, non2xx, errors, raw: out };
}

/**
 * User + system CPU of the processes and of their children (nginx's workers), in clock ticks (100 a second on
 * Linux). Take it before and after a run: the difference over the run's requests is CPU per request.
 */
export function cpuTicks(pids) {
  const fields = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const all = new Set(pids);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (pids.includes(Number(fields(entry)[1]))) all.add(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  let sum = 0;
  for (const pid of all) {
    try {
      const f = fields(pid);
      sum += Number(f[11]) + Number(f[12]);
    } catch {
      /* exited meanwhile */
    }
  }
  return sum;
}

/** Samples a process's resident set size every `everyMs`; `stop()` returns the peak in MiB. */
export function sampleRss(pid, everyMs = 200) {
  let peak = 0;
  const read = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      /* exited */
    }
  };
  read();
  const timer = setInterval(read, everyMs);
  timer.unref();
  return { stop: () => (clearInterval(timer), read(), peak), peak: () => peak };
}

export function cleanup(dir) {
  rmSync(dir, { recursive: true, force: true });
}

export const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/**
 * The p-th percentile (nearest rank: the smallest value with at least p % of the list at or below it) of a list of
 * numbers; NaN when empty. The p99 of 100 values is the second largest, not the largest (which one stray value sets).
 */
export const pct = (list, p) => {
  if (list.length === 0) return NaN;
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

/** A Redis of the benchmark's own in `dir/redis` (infra/local/redis.sh); `stop()` may be called more than once. */
export async function startRedis(dir) {
  const port = await freePort();
  const redisDir = path.join(dir, 'redis');
  execFileSync(path.join(ROOT, 'infra/local/redis.sh'), ['start', '--dir', redisDir, '--port', String(port)], {
    stdio: 'ignore',
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    stop() {
      try {
        execFileSync(path.join(ROOT, 'infra/local/redis.sh'), ['stop', '--dir', redisDir], { stdio: 'ignore' });
      } catch {
        /* already stopped */
      }
    },
  };
}

/**
 * The venue simulator (seed 1, no rate limits, its environment written to `dir/sim.env`) with `args` added, started
 * with start() (stopped by stopAll()) and ready. Returns its port base, control URL and the environment it wrote.
 */
export async function startSim(dir, args = [], { env = {} } = {}) {
  const base = await freePortRange(11);
  const envFile = path.join(dir, 'sim.env');
  start(
    'sim',
    process.execPath,
    [
      path.join(ROOT, 'packages/venue-sim/dist/cli.js'),
      ...['--port', String(base), '--seed', '1', '--write-env', envFile, '--no-rate-limits'],
      ...args,
    ],
    { logDir: dir, env },
  );
  const control = `http://127.0.0.1:${base}`;
  await waitHttp(`${control}/ready`);
  return { base, control, env: parseEnvFile(envFile) };
}

/** A depthgate key in the Redis at `redisUrl` (packages/auth's CLI, `create --name bench` with `args`). */
export function createKey(redisUrl, args = []) {
  const out = execFileSync(
    process.execPath,
    [path.join(ROOT, 'packages/auth/dist/cli.js'), 'create', '--name', 'bench', ...args, '--json'],
    { env: { ...process.env, REDIS_URL: redisUrl }, encoding: 'utf8' },
  );
  return JSON.parse(out).key;
}
