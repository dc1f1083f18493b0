// Side by side A/B of the history service's pages: two builds of the service on the benchmark's data set, one request
// to each and ClickHouse's own JSONEachRow of the same rows per round, in rotating order (the one asked second finds
// ClickHouse's caches warm), medians of each. Usage, after `./dev bench history` has generated the data set:
//
//   infra/local/clickhouse.sh start --dir .dev/bench/history/clickhouse --http-port 17223 --tcp-port 17910
//   infra/local/redis.sh start --dir .dev/bench/history/redis --port 17389
//   node bench/history/ab-pages.mjs ROOT_A ROOT_B [rounds=100] [rows=10000]   # ROOT_*: built worktrees
//   node bench/history/ab-pages.mjs ROOT_A ROOT_B ROUNDS --path '/api/…?…' --anchor FILE.sql   # any request, beside
//                                                         # ClickHouse answering FILE.sql (its FORMAT in the SQL)
//   … --env-a 'K=V,K=V' --env-b 'K=V'   # settings added to one service's environment, e.g. the image's allocator:
//       --env-a "LD_PRELOAD=$(find /usr/lib -name libjemalloc.so.2),MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0"
//       (a MALLOC_CONF's own commas are kept: a part without '=' continues the value before it)
//
// Run each pair in both orders (A B, then B A) and compare the two. Ports: DG_BENCH_CLICKHOUSE_HTTP_PORT,
// DG_BENCH_REDIS_PORT as for ./dev bench history; the two services take the next two free ports.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort, start, stopAll, tempDir, waitHttp } from '../lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
/** `--name value` taken out of the arguments. */
function option(name) {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const [, value] = args.splice(at, 2);
  return value;
}
const onePath = option('--path');
/** `K=V,K=V` as an environment; a part without `=` belongs to the value before it (MALLOC_CONF's own commas). */
function envOption(name) {
  const env = {};
  let last;
  for (const part of (option(name) ?? '').split(',').filter((p) => p !== '')) {
    const at = part.indexOf('=');
    if (at > 0) env[(last = part.slice(0, at))] = part.slice(at + 1);
    else if (last !== undefined) env[last] += `,${part}`;
    else throw new Error(`${name}: ${part} is not K=V`);
  }
  return env;
}
const extraEnv = { A: envOption('--env-a'), B: envOption('--env-b') };
const anchorFile = option('--anchor');
const [A, B] = [args[0], args[1]];
if (!A || !B || (onePath === undefined) !== (anchorFile === undefined)) {
  console.error('usage: node bench/history/ab-pages.mjs ROOT_A ROOT_B [rounds] [rows] | ROUNDS --path P --anchor F');
  process.exit(2);
}
const rounds = Number(args[2] ?? 100);
const rowsWanted = Number(args[3] ?? 10_000);
const CH = `http://127.0.0.1:${process.env.DG_BENCH_CLICKHOUSE_HTTP_PORT ?? 17223}`;
const REDIS = `redis://127.0.0.1:${process.env.DG_BENCH_REDIS_PORT ?? 17389}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const logDir = tempDir('ab-pages');

/** One request, read to its end: status, wall ms, the start of the body (for errors). */
function request(url, headers = {}, body = undefined) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const req = http.request(url, { agent, method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let head = '';
      res.on('data', (c) => {
        if (head.length < 300) head += c.toString('utf8', 0, 300);
      });
      res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t) / 1e6, head }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
async function chRows(sql) {
  const r = await new Promise((resolve, reject) => {
    const req = http.request(`${CH}/?database=bench`, { method: 'POST' }, (res) => {
      let s = '';
      res.on('data', (c) => (s += c));
      res.on('end', () => resolve(s));
    });
    req.on('error', reject);
    req.end(`${sql} FORMAT JSONEachRow`);
  });
  return r
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const { benchmarkSql } = await import(pathToFileURL(`${ROOT}/packages/history-store/dist/index.js`).href);
const SQL = benchmarkSql('bench');
const key = execFileSync(
  process.execPath,
  [`${ROOT}/packages/auth/dist/cli.js`, 'create', '--name', 'ab-pages', '--requests-per-minute', '100000000'],
  { env: { ...process.env, REDIS_URL: REDIS } },
)
  .toString()
  .trim()
  .split('\n')
  .pop();

/**
 * A service of the build at `root`, as bench/history/stack.sh starts it but on glibc's malloc (`MALLOC_ARENA_MAX=2`)
 * where the image and the benchmark use jemalloc: compare builds with it, not its absolute figures with the
 * benchmark's (jemalloc costs small streams more CPU: docs/benchmarks.md, "Warm-up and the allocator"), unless
 * `--env-a` / `--env-b` put it on another allocator.
 */
async function service(name, root) {
  const port = await freePort();
  start(name, process.execPath, ['--max-semi-space-size=4', `${root}/services/history/dist/main.js`], {
    env: {
      ...process.env,
      CLICKHOUSE_URL: CH,
      CLICKHOUSE_DATABASE: 'bench',
      REDIS_URL: REDIS,
      HISTORY_PORT: String(port),
      LOG_LEVEL: 'warn',
      ACCESS_LOG: 'false',
      MAX_LIMIT: '1000000',
      QUERY_TIMEOUT_MS: '60000',
      CLICKHOUSE_QUERY_CONCURRENCY: '4',
      MALLOC_ARENA_MAX: '2',
      ...extraEnv[name],
    },
    logDir,
  });
  await waitHttp(`http://127.0.0.1:${port}/ready`);
  return port;
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const iso = (ms) => new Date(ms).toISOString();

/** What is measured: a name, the service's path and query, ClickHouse's SQL for the same rows. */
async function cases() {
  if (onePath !== undefined) return [{ name: onePath, path: onePath, anchor: readFileSync(anchorFile, 'utf8') }];
  const out = [];
  for (const [kind, rowKind] of [
    ['deltas', 'delta'],
    ['snapshots', 'snapshot'],
  ]) {
    // The busiest ticker, from a fifth into its span (as the throughput part of bench.mts).
    const [top] = await chRows(SQL.spans(rowKind));
    const from = Number(top.f) + Math.floor((Number(top.l) - Number(top.f)) / 5);
    const [nth] = await chRows(SQL.nthTs(rowKind, top.ex, top.ticker, from, rowsWanted));
    const range = { from, to: Number(nth.ts), toInclusive: true };
    out.push({
      name: `${kind}, ${rowsWanted} rows`,
      path: `/api/${top.ex}/${kind}/${top.ticker}?start_ts=${iso(range.from)}&end_ts=${iso(range.to)}&limit=${rowsWanted}`,
      anchor: SQL.rows(rowKind, top.ex, top.ticker, range, {
        limit: kind === 'deltas' ? rowsWanted : undefined,
        format: 'JSONEachRow',
      }),
    });
  }
  return out;
}

try {
  const ports = { A: await service('A', A), B: await service('B', B) };
  const headers = { 'x-api-key': key, 'accept-encoding': 'identity' };
  for (const c of await cases()) {
    const ask = {
      A: () => request(`http://127.0.0.1:${ports.A}${c.path}`, headers),
      B: () => request(`http://127.0.0.1:${ports.B}${c.path}`, headers),
      CH: () => request(`${CH}/?database=bench&enable_http_compression=0`, {}, c.anchor),
    };
    const orders = [
      ['A', 'B', 'CH'],
      ['B', 'A', 'CH'],
      ['CH', 'A', 'B'],
      ['CH', 'B', 'A'],
      ['A', 'CH', 'B'],
      ['B', 'CH', 'A'],
    ];
    const times = { A: [], B: [], CH: [] };
    for (let i = 0; i < 10 + rounds; i++) {
      for (const who of orders[i % orders.length]) {
        const r = await ask[who]();
        if (r.status !== 200) throw new Error(`${who} answered ${r.status}: ${r.head}`);
        if (i >= 10) times[who].push(r.ms);
      }
    }
    const m = { A: median(times.A), B: median(times.B), CH: median(times.CH) };
    console.log(
      `${c.name}, ${rounds} rounds: A ${m.A.toFixed(2)} ms (ClickHouse's time ÷ A's ${(m.CH / m.A).toFixed(2)}×), ` +
        `B ${m.B.toFixed(2)} ms (${(m.CH / m.B).toFixed(2)}×), ClickHouse ${m.CH.toFixed(2)} ms; B's time ÷ A's ${(m.B / m.A).toFixed(3)}`,
    );
  }
} finally {
  agent.destroy();
  await stopAll();
}
