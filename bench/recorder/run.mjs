// Recorder benchmark (bench/recorder/run.sh, `./dev bench recorder`): in one run, on this machine,
//
//   1. its own ClickHouse (infra/local/clickhouse.sh, data under $DG_DEV_DIR/bench/recorder), the schema migrated;
//   2. the venue simulator as a process, its books moving at a high rate on the recorded platforms;
//   3. the recorder as a process (the built entrypoint, services/recorder/dist/main.js), recording all three feeds;
//   4. capacity: after a warm-up, a steady window with the simulator as fast as asked (--ups, high enough that the
//      recorder or the simulator is the limit): delta rows/s written (count() in ClickHouse at both ends) — the
//      recorder's measured maximum on this machine — its peak RSS and CPU;
//   5. lag: the simulator slowed (PUT /control/books/rate) to produce 50 % of that maximum, a warm-up, then a
//      window of the recorder's lag histogram (venue event → insert acknowledged). The load is a fraction of the
//      capacity measured in this run, so the figure means the same on any machine;
//   6. the anchor: ClickHouse's own ingest of the capacity window's delta rows from a local file
//      (`INSERT … FORMAT TabSeparated` over HTTP from a TSV export of the window), in the same run.
//
// Prints a Markdown table for docs/benchmarks.md. Options: --seconds N (each window, 30), --warmup N (10),
// --ups N (simulator updates/s in the capacity window, 12000), --load F (fraction of the capacity in the lag
// window, 0.5), --changes N (levels per update, 20), --tickers p=N,… (simulator instruments),
// --platforms a,b (venue-b,venue-c,venue-a-us), --semi N (recorder's
// --max-semi-space-size in MiB, 8), --trace (memory every second). Ports: DG_BENCH_CLICKHOUSE_HTTP_PORT (17226),
// DG_BENCH_CLICKHOUSE_TCP_PORT (17913). DG_BENCH_NODE_FLAGS: more node flags for the recorder (e.g. --trace-gc).
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { benchmarkSql } from '@depthgate/history-store';
import { ROOT, freePort, freePortRange, fmt, sampleRss, sleep, start, stopAll, waitHttp } from '../lib.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SECONDS = Number(opt('seconds', '30'));
const WARMUP = Number(opt('warmup', '10'));
const UPS = Number(opt('ups', '12000'));
const LOAD = Number(opt('load', '0.5'));
const CHANGES = Number(opt('changes', '20'));
const TICKERS = opt('tickers', 'venue-b=8,venue-c=12,venue-a-us=12');
const PLATFORMS = opt('platforms', 'venue-b,venue-c,venue-a-us');
const SEMI = Number(opt('semi', '8'));
const CH_HTTP = Number(process.env.DG_BENCH_CLICKHOUSE_HTTP_PORT ?? 17226);
const CH_TCP = Number(process.env.DG_BENCH_CLICKHOUSE_TCP_PORT ?? 17913);
const DEV = process.env.DG_DEV_DIR ?? path.join(ROOT, '.dev');
const DIR = path.join(DEV, 'bench', 'recorder');
const DB = 'bench_recorder';
/** Every ClickHouse query of the benchmark, from @depthgate/history-store's build. */
const SQL = benchmarkSql(DB);
const CH = `http://127.0.0.1:${CH_HTTP}`;

const log = (...m) => process.stderr.write(`${m.join(' ')}\n`);

async function ch(query, body) {
  const url = body === undefined ? CH : `${CH}/?query=${encodeURIComponent(query)}`;
  const res = await fetch(url, { method: 'POST', body: body ?? query });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${text.slice(0, 300)}`);
  return text.trim();
}

async function metricValues(url) {
  const text = await (await fetch(url)).text();
  const out = new Map();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const sp = line.lastIndexOf(' ');
    out.set(line.slice(0, sp), Number(line.slice(sp + 1)));
  }
  return out;
}

/** Lag quantiles from the difference of two scrapes of recorder_lag_seconds (all exchanges), interpolated. */
function lagQuantiles(before, after, qs) {
  const buckets = new Map();
  for (const [k, v] of after) {
    const m = /^recorder_lag_seconds_bucket\{.*le="([^"]+)"/.exec(k);
    if (!m) continue;
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + v - (before.get(k) ?? 0));
  }
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  return qs.map((q) => {
    const rank = q * total;
    let prevBound = 0;
    let prevCount = 0;
    for (const b of bounds) {
      const c = buckets.get(b) ?? 0;
      if (c >= rank) {
        if (b === Infinity) return prevBound;
        return prevBound + ((b - prevBound) * (rank - prevCount)) / Math.max(1, c - prevCount);
      }
      prevBound = b;
      prevCount = c;
    }
    return NaN;
  });
}

function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks (100 Hz)
  } catch {
    return NaN;
  }
}

async function main() {
  for (const f of [
    'services/recorder/dist/main.js',
    'services/history/dist/cli/migrate.js',
    'packages/venue-sim/dist/cli.js',
  ]) {
    try {
      statSync(path.join(ROOT, f));
    } catch {
      throw new Error(`${f} is missing: build first (./dev bench builds; or pnpm build)`);
    }
  }
  mkdirSync(DIR, { recursive: true });
  const logDir = DIR;
  const load0 = os.loadavg();

  log(`==> ClickHouse for the benchmark on ${CH_HTTP}`);
  execFileSync(
    path.join(ROOT, 'infra/local/clickhouse.sh'),
    ['start', '--dir', path.join(DIR, 'clickhouse'), '--http-port', String(CH_HTTP), '--tcp-port', String(CH_TCP)],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    await ch(SQL.dropDatabase());
    execFileSync('node', [path.join(ROOT, 'services/history/dist/cli/migrate.js')], {
      env: { ...process.env, CLICKHOUSE_URL: CH, CLICKHOUSE_DATABASE: DB },
      stdio: ['ignore', 'ignore', 'inherit'],
    });

    log(`==> simulator: ${UPS} updates/s × ${CHANGES} levels on ${PLATFORMS} (${TICKERS})`);
    const simBase = await freePortRange(11);
    const envFile = path.join(DIR, 'sim.env');
    const sim = start(
      'sim',
      'node',
      [
        path.join(ROOT, 'packages/venue-sim/dist/cli.js'),
        '--port',
        String(simBase),
        '--write-env',
        envFile,
        '--updates-per-second',
        String(UPS),
        '--changes-per-update',
        String(CHANGES),
        '--platforms',
        PLATFORMS,
        '--tickers',
        TICKERS,
        '--no-rate-limits',
        '--max-recorded-requests',
        '0',
        '--retention-ms',
        '5000',
        '--log-level',
        'warn',
      ],
      { logDir },
    );
    await waitHttp(`http://127.0.0.1:${simBase}/ready`);
    const simEnv = Object.fromEntries(
      readFileSync(envFile, 'utf8')
        .split('\n')
        .filter((l) => /^[A-Z0-9_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );

    log('==> recorder (services/recorder/dist/main.js)');
    const port = await freePort();
    const spool = path.join(DIR, 'spool');
    rmSync(spool, { recursive: true, force: true });
    // The memory settings it is deployed with (infra/k8s/base/recorder/statefulset.yaml, the image's
    // MALLOC_ARENA_MAX); --semi N tries another semi-space size, DG_BENCH_NODE_FLAGS adds node/V8 flags (diagnosis,
    // e.g. --trace-gc: the recorder's log, recorder.log in the benchmark's log directory).
    const nodeFlags = (process.env.DG_BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
    const recorder = start(
      'recorder',
      'node',
      [`--max-semi-space-size=${SEMI}`, ...nodeFlags, path.join(ROOT, 'services/recorder/dist/main.js')],
      {
        logDir,
        env: {
          ...simEnv,
          CLICKHOUSE_URL: CH,
          CLICKHOUSE_DATABASE: DB,
          RECORDER_PORT: String(port),
          RECORDER_SPOOL_DIR: spool,
          LOG_LEVEL: 'warn',
          MALLOC_ARENA_MAX: '2',
        },
      },
    );
    await waitHttp(`http://127.0.0.1:${port}/ready`, { timeoutMs: 60_000 });
    const rss = sampleRss(recorder.pid, 100);
    const trace = args.includes('--trace')
      ? setInterval(async () => {
          const m = await metricValues(`http://127.0.0.1:${port}/metrics`).catch(() => new Map());
          const pick = (p) => [...m].filter(([k]) => k.startsWith(p)).reduce((n, [, v]) => n + v, 0);
          log(
            `  rss ${fmt(pick('process_resident_memory_bytes') / 2 ** 20)} MiB, heap ${fmt(pick('nodejs_heap_size_used_bytes') / 2 ** 20)}/${fmt(pick('nodejs_heap_size_total_bytes') / 2 ** 20)} MiB, external ${fmt(pick('nodejs_external_memory_bytes') / 2 ** 20)} MiB, buffered rows ${pick('recorder_buffer_rows')}`,
          );
        }, 1000)
      : undefined;

    const count = async () => Number(await ch(SQL.rowCount('delta')));
    const metricsUrl = `http://127.0.0.1:${port}/metrics`;
    const sum = (m, prefix) => [...m].filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
    const produced = (m) =>
      [...m].filter(([k]) => /^recorder_rows_produced_total\{.*table="deltas"/.test(k)).reduce((n, [, v]) => n + v, 0);

    // --- capacity -------------------------------------------------------------------------------------------
    log(`==> warm-up ${WARMUP} s`);
    await sleep(WARMUP * 1000);
    const m0 = await metricValues(metricsUrl);
    const c0 = await count();
    const ts0 = Number(await ch(SQL.maxTs('delta')));
    const cpu0 = cpuSeconds(recorder.pid);
    const simCpu0 = cpuSeconds(sim.pid);
    const t0 = Date.now();
    log(`==> capacity window ${SECONDS} s at ${UPS} updates/s`);
    await sleep(SECONDS * 1000);
    const c1 = await count();
    const t1 = Date.now();
    const cpu1 = cpuSeconds(recorder.pid);
    const simCpu1 = cpuSeconds(sim.pid);
    const m1 = await metricValues(metricsUrl);
    const ts1 = Number(await ch(SQL.maxTs('delta')));
    const seconds = (t1 - t0) / 1000;
    const rowsPerSecond = (c1 - c0) / seconds;
    const producedPerSecond = (produced(m1) - produced(m0)) / seconds;
    const [capP50, capP99] = lagQuantiles(m0, m1, [0.5, 0.99]);
    const messages = (sum(m1, 'recorder_messages_total') - sum(m0, 'recorder_messages_total')) / seconds;

    // --- lag at a fraction of that capacity ---------------------------------------------------------------------
    // Delta rows per simulator update, as the recorder turned them into rows in the capacity window; the rate that
    // makes LOAD × the measured maximum follows from it.
    const rowsPerUpdate = producedPerSecond / UPS;
    const lagUps = Math.max(1, Math.round((LOAD * rowsPerSecond) / Math.max(rowsPerUpdate, 1e-9)));
    const rate = await fetch(`http://127.0.0.1:${simBase}/control/books/rate`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ updatesPerSecond: lagUps }),
    });
    if (!rate.ok) throw new Error(`simulator rate: ${rate.status} ${await rate.text()}`);
    log(`==> lag window: ${lagUps} updates/s (${LOAD * 100} % of ${fmt(rowsPerSecond)} rows/s); warm-up ${WARMUP} s`);
    await sleep(WARMUP * 1000);
    const m2 = await metricValues(metricsUrl);
    const c2 = await count();
    const t2 = Date.now();
    await sleep(SECONDS * 1000);
    const m3 = await metricValues(metricsUrl);
    const c3 = await count();
    const lagRowsPerSecond = (c3 - c2) / ((Date.now() - t2) / 1000);
    const [p50, p99] = lagQuantiles(m2, m3, [0.5, 0.99]);
    const peakRss = rss.stop();
    if (trace) clearInterval(trace);
    const gaps = sum(m3, 'recorder_gaps_total');
    const spooled = sum(m3, 'recorder_spool_bytes');

    // The anchor runs alone: the simulator and the recorder are stopped first.
    await stopAll();
    log('==> anchor: ClickHouse ingesting the same rows from a local file');
    const file = path.join(DIR, 'window.tsv');
    const res = await fetch(CH, {
      method: 'POST',
      body: SQL.exportDeltas(ts0, ts1),
    });
    await pipeline(res.body, createWriteStream(file));
    await ch(SQL.createAnchor());
    await ch(SQL.truncateAnchor());
    const anchorRows = Number(execFileSync('wc', ['-l', file], { encoding: 'utf8' }).trim().split(' ')[0]);
    const a0 = process.hrtime.bigint();
    execFileSync('curl', [
      '-sS',
      '--fail',
      '--data-binary',
      `@${file}`,
      `${CH}/?query=${encodeURIComponent(SQL.insertAnchor())}`,
    ]);
    const anchorSeconds = Number(process.hrtime.bigint() - a0) / 1e9;
    const anchorRate = anchorRows / anchorSeconds;
    rmSync(file, { force: true });
    const load1 = os.loadavg();

    const out = [
      `| figure | recorder | anchor |`,
      `| --- | --- | --- |`,
      `| delta rows/s into ClickHouse, capacity (simulator at ${UPS} updates/s, steady ${fmt(seconds)} s window) | ${fmt(rowsPerSecond)} | ${fmt(anchorRate)} (ClickHouse ingesting the window's ${anchorRows} rows from a local TSV file, one INSERT) |`,
      `| end-to-end lag p50 / p99 (venue event → insert acknowledged) at ${LOAD * 100} % of that capacity (${lagUps} updates/s, ${fmt(lagRowsPerSecond)} rows/s) | ${fmt(p50, 2)} s / ${fmt(p99, 2)} s | target p99 ≤ 2 s |`,
      `| lag p50 / p99 at capacity (for reference: a saturated recorder queues) | ${fmt(capP50, 2)} s / ${fmt(capP99, 2)} s | |`,
      `| recorder peak RSS | ${fmt(peakRss)} MiB | target < 300 MiB |`,
      `| recorder CPU | ${fmt(((cpu1 - cpu0) / seconds) * 100)} % of a core | simulator ${fmt(((simCpu1 - simCpu0) / seconds) * 100)} % |`,
      `| feed messages/s received at capacity | ${fmt(messages)} | |`,
      `| gaps recorded / spool bytes at the end | ${gaps} / ${spooled} | |`,
      '',
      `Simulator: ${UPS} updates/s × ${CHANGES} levels, platforms ${PLATFORMS}, tickers ${TICKERS}. Machine: ${os.cpus().length} cores, ` +
        `load average before ${load0.map((l) => l.toFixed(2)).join(' ')}, after ${load1.map((l) => l.toFixed(2)).join(' ')}.`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await stopAll();
    execFileSync(path.join(ROOT, 'infra/local/clickhouse.sh'), ['stop', '--dir', path.join(DIR, 'clickhouse')], {
      stdio: 'ignore',
    });
  }
}

main().catch(async (err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  await stopAll();
  try {
    execFileSync(path.join(ROOT, 'infra/local/clickhouse.sh'), ['stop', '--dir', path.join(DIR, 'clickhouse')], {
      stdio: 'ignore',
    });
  } catch {
    /* not running */
  }
  process.exit(1);
});
