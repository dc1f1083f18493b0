// Recorder benchmark (bench/recorder/run.sh, `./dev bench recorder`): in one run, on this machine,
//
//   1. its own ClickHouse (infra/local/clickhouse.sh, data under $DG_DEV_DIR/bench/recorder), the schema migrated;
//   2. the venue simulator as a process, its books moving (and trading) at a high rate on the recorded platforms;
//   3. the recorder as a process (the built entrypoint, services/recorder/dist/main.js), recording all three feeds;
//   4. capacity: after a warm-up, a steady window with the simulator as fast as asked (--ups, high enough that the
//      recorder or the simulator is the limit): delta rows/s written (count() in ClickHouse at both ends) — the
//      recorder's measured maximum on this machine — its peak RSS and CPU; with `--trades both` (the default) once
//      with trades off (RECORDER_TRADES=false) and once with them on, a recorder started afresh for each, so the
//      capacity with trades is set beside the capacity without them (the issue's ≥ 0.9×), as delta rows per second of
//      the recorder's own CPU (its capacity on its one core): when the simulator or the machine's other load is the
//      window's limit, raw rows/s would compare the simulator's two runs instead (both are printed);
//   5. lag: the simulator slowed (PUT /control/books/rate) to produce 50 % of that maximum (the last mode's: trades
//      on), a warm-up, then a window of the recorder's lag histogram (venue event → insert acknowledged; a trade
//      from its receipt). The load is a fraction of the capacity measured in this run, so the figure means the same
//      on any machine;
//   6. the anchor: ClickHouse's own ingest of the capacity window's delta rows from a local file
//      (`INSERT … FORMAT TabSeparated` over HTTP from a TSV export of the window), in the same run.
//
// `--faults` runs the reconciliation measurement instead: a recording of --minutes N (10) at --ups (default 200
// there) with drop (1–20 messages of one ticker), disconnect and stall faults injected in turn on every feed every
// --fault-every S seconds (20); then the books stop, the recorder gets two audit intervals to read its last windows
// back, stops (SIGTERM), and every trade the simulator made (its control API, GET /control/trades) after each
// ticker's first snapshot is looked up in ClickHouse: stored exactly once, stored more than once, missing inside a
// trades gap, missing outside any gap. Stalls last --stall-timeout-ms (15000, the recorder's RECORDER_STALL_TIMEOUT_MS
// in that run: above the simulator's 10 s heartbeats, so quiet books are no stall) + 3 s;
// RECORDER_TRADES_AUDIT_INTERVAL_MS is --audit-ms (15000).
//
// `--book-faults` runs issue 24's measured fault run instead (bookFaultRun below): all five recorded exchanges for
// --minutes N (30) with a fault every --fault-every S (30) seconds across the five feeds, then --moments N (1,000)
// random moments per exchange against the simulator's books, the time from each silent drop to its gap, and the REST
// book reads per exchange against 10 % of each venue's documented budget.
//
// `--replicas 2` runs issue 27's redundancy cost instead (replicasRun below): the same simulator load (--ups, 2000
// there, --trades on) recorded for --seconds by one recorder, then by two recording at once, every recorder with
// RECORDER_REDIS_URL (a Redis of the benchmark's own unless DG_BENCH_REDIS_URL names one; a fresh
// RECORDER_REDIS_PREFIX per phase) and its own RECORDER_ID and spool; the CPU seconds (/proc/<pid>/stat) per row
// written (delta + snapshot rows counted in ClickHouse) of each recorder process and of ClickHouse's server, and
// two/one for the recorders together and for ClickHouse (target: two ≤ 2.2× one). Rows written two/one says
// whether the two stored one copy (1.0) or each its own (2.0: recording without redundancy).
//
// `--dedup-reads` runs issue 27's measurement of ClickHouse-side deduplication instead (bench/recorder/dedup.mjs,
// on the benchmark's ClickHouse only: no simulator, no recorder, no migration): in a database of its own, one copy
// and two copies of --rows N (5,000,000) generated delta rows, plain and ReplacingMergeTree, merged and not, and a
// term-fenced table; their storage, the seconds of inserting 1 copy vs 2 (and of OPTIMIZE FINAL), and the read cost
// of each dedup form against one copy (a ~1,000-row page window, --page-rounds N (80); the whole ticker, --rounds N
// (40); p50/p90/p99 and ratios to plain MergeTree); then the same on current ClickHouse through chdb in-process when
// it is installed (DG_CHDB_DIR, else .tools/chdb).
//
// Prints a Markdown table for docs/benchmarks.md. Options: --seconds N (each window, 30), --warmup N (10),
// --ups N (simulator updates/s in the capacity window, 12000), --load F (fraction of the capacity in the lag
// window, 0.5), --changes N (levels per update, 20), --tickers p=N,… (simulator instruments),
// --platforms a,b (venue-b,venue-c,venue-a-us), --trades both|on|off (both), --semi N (recorder's
// --max-semi-space-size in MiB, 8), --trace (memory every second); --faults [--minutes N] [--fault-every S]
// [--stall-timeout-ms N] [--audit-ms N]; --book-faults [--minutes N] [--fault-every S] [--moments N]
// [--reconcile-ms N] [--grace-ms N] [--stall-timeout-ms N]; --replicas 2 [--ups N] [--seconds N] [--warmup N];
// --dedup-reads [--rows N] [--rounds N] [--page-rounds N]. Ports: DG_BENCH_CLICKHOUSE_HTTP_PORT (17226),
// DG_BENCH_CLICKHOUSE_TCP_PORT (17913). DG_BENCH_NODE_FLAGS: more node flags for the recorder (e.g. --trace-gc).
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { benchmarkSql } from '@depthgate/history-store';
import { dedupReadsRun } from './dedup.mjs';
import {
  ROOT,
  freePort,
  freePortRange,
  fmt,
  sampleRss,
  sleep,
  start,
  startRedis,
  stopAll,
  stopSome,
  waitHttp,
} from '../lib.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SECONDS = Number(opt('seconds', '30'));
const WARMUP = Number(opt('warmup', '10'));
const FAULTS = args.includes('--faults');
const BOOK_FAULTS = args.includes('--book-faults');
const REPLICAS = Number(opt('replicas', '1'));
const DEDUP_READS = args.includes('--dedup-reads');
const UPS = Number(opt('ups', FAULTS || BOOK_FAULTS ? '200' : REPLICAS > 1 ? '2000' : '12000'));
const LOAD = Number(opt('load', '0.5'));
const CHANGES = Number(opt('changes', BOOK_FAULTS ? '3' : '20'));
const TICKERS = opt(
  'tickers',
  BOOK_FAULTS ? 'venue-b=8,venue-c=6,venue-a-us=8,venue-a-clob=6,venue-d=3' : 'venue-b=8,venue-c=12,venue-a-us=12',
);
const PLATFORMS = opt(
  'platforms',
  BOOK_FAULTS ? 'venue-b,venue-c,venue-a-us,venue-a-clob,venue-d' : 'venue-b,venue-c,venue-a-us',
);
const SEMI = Number(opt('semi', '8'));
const TRADES = opt('trades', 'both');
const MODES = TRADES === 'both' ? ['off', 'on'] : [TRADES];
const MINUTES = Number(opt('minutes', BOOK_FAULTS ? '30' : '10'));
const FAULT_EVERY = Number(opt('fault-every', BOOK_FAULTS ? '30' : '20'));
const STALL_TIMEOUT_MS = Number(opt('stall-timeout-ms', '15000'));
const AUDIT_MS = Number(opt('audit-ms', '15000'));
const MOMENTS = Number(opt('moments', '1000'));
const RECONCILE_MS = Number(opt('reconcile-ms', '60000'));
const GRACE_MS = Number(opt('grace-ms', '3000'));
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

/** The recorded exchanges and their simulator platforms. */
const EXCHANGE_OF = {
  'venue-b': 'venue_b',
  'venue-c': 'venue_c',
  'venue-a-us': 'venue_a_us',
  'venue-a-clob': 'venue_a_clob',
  'venue-d': 'venue_d',
};

async function main() {
  for (const f of DEDUP_READS
    ? []
    : ['services/recorder/dist/main.js', 'services/history/dist/cli/migrate.js', 'packages/venue-sim/dist/cli.js']) {
    try {
      statSync(path.join(ROOT, f));
    } catch {
      throw new Error(`${f} is missing: build first (./dev bench builds; or pnpm build)`);
    }
  }
  if (!['both', 'on', 'off'].includes(TRADES)) throw new Error('--trades is both, on or off');
  mkdirSync(DIR, { recursive: true });
  const load0 = os.loadavg();

  log(`==> ClickHouse for the benchmark on ${CH_HTTP}`);
  execFileSync(
    path.join(ROOT, 'infra/local/clickhouse.sh'),
    ['start', '--dir', path.join(DIR, 'clickhouse'), '--http-port', String(CH_HTTP), '--tcp-port', String(CH_TCP)],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    if (!DEDUP_READS) {
      await ch(SQL.dropDatabase());
      execFileSync('node', [path.join(ROOT, 'services/history/dist/cli/migrate.js')], {
        env: { ...process.env, CLICKHOUSE_URL: CH, CLICKHOUSE_DATABASE: DB },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    }
    const out = DEDUP_READS
      ? await dedupReadsRun({
          url: CH,
          rows: Number(opt('rows', '5000000')),
          rounds: Number(opt('rounds', '40')),
          pageRounds: Number(opt('page-rounds', '80')),
          log,
        })
      : BOOK_FAULTS
        ? await bookFaultRun()
        : FAULTS
          ? await faultRun()
          : REPLICAS > 1
            ? await replicasRun()
            : await capacityRun();
    const load1 = os.loadavg();
    process.stdout.write(
      `${out.join('\n')}\n\nMachine: ${os.cpus().length} cores, load average before ${load0.map((l) => l.toFixed(2)).join(' ')}, after ${load1.map((l) => l.toFixed(2)).join(' ')}.\n`,
    );
  } finally {
    await stopAll();
    execFileSync(path.join(ROOT, 'infra/local/clickhouse.sh'), ['stop', '--dir', path.join(DIR, 'clickhouse')], {
      stdio: 'ignore',
    });
  }
}

/** The simulator as a process: its control port (base) and the upstream variables it wrote for the recorder. */
async function startSim(retentionMs, recordedRequests = 0) {
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
      String(recordedRequests),
      '--retention-ms',
      String(retentionMs),
      '--log-level',
      'warn',
    ],
    { logDir: DIR },
  );
  await waitHttp(`http://127.0.0.1:${simBase}/ready`);
  const simEnv = Object.fromEntries(
    readFileSync(envFile, 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z0-9_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const control = (method, route, body) =>
    fetch(`http://127.0.0.1:${simBase}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (res) => {
      if (!res.ok) throw new Error(`simulator ${method} ${route}: ${res.status} ${await res.text()}`);
      return res.json();
    });
  return { sim, simEnv, control };
}

/** The recorder as a process (a fresh spool each time), ready; `extra` adds settings. */
async function startRecorder(simEnv, name, extra) {
  const port = await freePort();
  const spool = path.join(DIR, `spool-${name}`);
  rmSync(spool, { recursive: true, force: true });
  // The memory settings it is deployed with (infra/k8s/base/recorder/statefulset.yaml, the image's
  // MALLOC_ARENA_MAX); --semi N tries another semi-space size, DG_BENCH_NODE_FLAGS adds node/V8 flags (diagnosis,
  // e.g. --trace-gc: the recorder's log, recorder-<mode>.log in the benchmark's log directory).
  const nodeFlags = (process.env.DG_BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
  const recorder = start(
    `recorder-${name}`,
    'node',
    [`--max-semi-space-size=${SEMI}`, ...nodeFlags, path.join(ROOT, 'services/recorder/dist/main.js')],
    {
      logDir: DIR,
      env: {
        ...simEnv,
        CLICKHOUSE_URL: CH,
        CLICKHOUSE_DATABASE: DB,
        RECORDER_PORT: String(port),
        RECORDER_SPOOL_DIR: spool,
        LOG_LEVEL: 'warn',
        MALLOC_ARENA_MAX: '2',
        ...extra,
      },
    },
  );
  await waitHttp(`http://127.0.0.1:${port}/ready`, { timeoutMs: 60_000 });
  return { recorder, metricsUrl: `http://127.0.0.1:${port}/metrics` };
}

const sum = (m, prefix) => [...m].filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
const ofTable = (m, name, table) =>
  [...m].filter(([k]) => k.startsWith(`${name}{`) && k.includes(`table="${table}"`)).reduce((n, [, v]) => n + v, 0);

async function capacityRun() {
  const { sim, simEnv, control } = await startSim(5000);
  const count = async () => Number(await ch(SQL.rowCount('delta')));
  const results = [];
  let lag;
  let anchorWindow;
  for (const [i, mode] of MODES.entries()) {
    log(`==> recorder with trades ${mode} (services/recorder/dist/main.js)`);
    await control('PUT', '/control/books/rate', { updatesPerSecond: UPS });
    const { recorder, metricsUrl } = await startRecorder(simEnv, mode, { RECORDER_TRADES: String(mode === 'on') });
    const rss = sampleRss(recorder.pid, 100);
    const trace = args.includes('--trace')
      ? setInterval(async () => {
          const m = await metricValues(metricsUrl).catch(() => new Map());
          const pick = (p) => [...m].filter(([k]) => k.startsWith(p)).reduce((n, [, v]) => n + v, 0);
          log(
            `  rss ${fmt(pick('process_resident_memory_bytes') / 2 ** 20)} MiB, heap ${fmt(pick('nodejs_heap_size_used_bytes') / 2 ** 20)}/${fmt(pick('nodejs_heap_size_total_bytes') / 2 ** 20)} MiB, external ${fmt(pick('nodejs_external_memory_bytes') / 2 ** 20)} MiB, buffered rows ${pick('recorder_buffer_rows')}`,
          );
        }, 1000)
      : undefined;

    // --- capacity ---------------------------------------------------------------------------------------------
    log(`==> warm-up ${WARMUP} s`);
    await sleep(WARMUP * 1000);
    const m0 = await metricValues(metricsUrl);
    const c0 = await count();
    const ts0 = Number(await ch(SQL.maxTs('delta')));
    const cpu0 = cpuSeconds(recorder.pid);
    const simCpu0 = cpuSeconds(sim.pid);
    const t0 = Date.now();
    log(`==> capacity window ${SECONDS} s at ${UPS} updates/s, trades ${mode}`);
    await sleep(SECONDS * 1000);
    const c1 = await count();
    const t1 = Date.now();
    const cpu1 = cpuSeconds(recorder.pid);
    const simCpu1 = cpuSeconds(sim.pid);
    const m1 = await metricValues(metricsUrl);
    const ts1 = Number(await ch(SQL.maxTs('delta')));
    const seconds = (t1 - t0) / 1000;
    const result = {
      mode,
      seconds,
      rowsPerSecond: (c1 - c0) / seconds,
      producedPerSecond:
        (ofTable(m1, 'recorder_rows_produced_total', 'deltas') -
          ofTable(m0, 'recorder_rows_produced_total', 'deltas')) /
        seconds,
      tradesPerSecond:
        (ofTable(m1, 'recorder_rows_total', 'trades') - ofTable(m0, 'recorder_rows_total', 'trades')) / seconds,
      messages: (sum(m1, 'recorder_messages_total') - sum(m0, 'recorder_messages_total')) / seconds,
      cap: lagQuantiles(m0, m1, [0.5, 0.99]),
      cpu: ((cpu1 - cpu0) / seconds) * 100,
      simCpu: ((simCpu1 - simCpu0) / seconds) * 100,
    };
    anchorWindow = [ts0, ts1];

    // --- lag at a fraction of that capacity (the last mode's: trades on by default) -------------------------------
    if (i === MODES.length - 1) {
      // Delta rows per simulator update, as the recorder turned them into rows in the capacity window; the rate
      // that makes LOAD × the measured maximum follows from it.
      const rowsPerUpdate = result.producedPerSecond / UPS;
      const lagUps = Math.max(1, Math.round((LOAD * result.rowsPerSecond) / Math.max(rowsPerUpdate, 1e-9)));
      await control('PUT', '/control/books/rate', { updatesPerSecond: lagUps });
      log(
        `==> lag window: ${lagUps} updates/s (${LOAD * 100} % of ${fmt(result.rowsPerSecond)} rows/s); warm-up ${WARMUP} s`,
      );
      await sleep(WARMUP * 1000);
      const m2 = await metricValues(metricsUrl);
      const c2 = await count();
      const t2 = Date.now();
      await sleep(SECONDS * 1000);
      const m3 = await metricValues(metricsUrl);
      const c3 = await count();
      lag = {
        mode,
        ups: lagUps,
        rowsPerSecond: (c3 - c2) / ((Date.now() - t2) / 1000),
        quantiles: lagQuantiles(m2, m3, [0.5, 0.99]),
        gaps: sum(m3, 'recorder_gaps_total'),
        tradeGaps: sum(m3, 'recorder_trade_gaps_total'),
        spooled: sum(m3, 'recorder_spool_bytes'),
      };
    }
    result.peakRss = rss.stop();
    if (trace) clearInterval(trace);
    await stopSome([recorder.pid]);
    results.push(result);
  }

  // The anchor runs alone: the simulator and the recorder are stopped first.
  await stopAll();
  log('==> anchor: ClickHouse ingesting the same rows from a local file');
  const file = path.join(DIR, 'window.tsv');
  const res = await fetch(CH, { method: 'POST', body: SQL.exportDeltas(anchorWindow[0], anchorWindow[1]) });
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
  const anchorRate = anchorRows / (Number(process.hrtime.bigint() - a0) / 1e9);
  rmSync(file, { force: true });

  const out = [`| figure | recorder | anchor |`, `| --- | --- | --- |`];
  for (const r of results) {
    out.push(
      `| delta rows/s into ClickHouse, capacity, trades ${r.mode} (simulator at ${UPS} updates/s, steady ${fmt(r.seconds)} s window) | ${fmt(r.rowsPerSecond)} | ${r === results.at(-1) ? `${fmt(anchorRate)} (ClickHouse ingesting the window's ${anchorRows} rows from a local TSV file, one INSERT)` : ''} |`,
    );
  }
  // Rows per second of the recorder's own CPU: its capacity on one core (it is one Node thread), whoever the limit of
  // the window was. When the simulator (or the machine's other load) is the limit, the raw rows/s measure it, not the
  // recorder: the recorder's CPU share then says so, and the per-CPU-second figure still compares the two modes.
  const perCpu = (r) => r.rowsPerSecond / Math.max(r.cpu / 100, 1e-9);
  const limit = (r) => (r.cpu >= 90 ? 'the recorder' : `not the recorder: ${fmt(r.cpu)} % of a core`);
  for (const r of results) {
    out.push(
      `| delta rows per second of the recorder's CPU, trades ${r.mode} (its capacity on one core; the window's limit: ${limit(r)}) | ${fmt(perCpu(r))} | |`,
    );
  }
  const off = results.find((r) => r.mode === 'off');
  const on = results.find((r) => r.mode === 'on');
  if (off && on) {
    out.push(
      `| capacity with trades / without, per CPU-second of the recorder (raw rows/s: ${fmt(on.rowsPerSecond / off.rowsPerSecond, 2)}×) | ${fmt(perCpu(on) / perCpu(off), 2)}× | target ≥ 0.9× |`,
    );
  }
  if (on) out.push(`| trade rows/s written at capacity, trades on | ${fmt(on.tradesPerSecond)} | |`);
  out.push(
    `| end-to-end lag p50 / p99 (venue event → insert acknowledged; a trade from its receipt), trades ${lag.mode}, at ${LOAD * 100} % of that capacity (${lag.ups} updates/s, ${fmt(lag.rowsPerSecond)} delta rows/s) | ${fmt(lag.quantiles[0], 2)} s / ${fmt(lag.quantiles[1], 2)} s | target p99 ≤ 1 s |`,
  );
  for (const r of results) {
    out.push(
      `| trades ${r.mode}: lag p50 / p99 at capacity (a saturated recorder queues); peak RSS; CPU; feed messages/s | ${fmt(r.cap[0], 2)} s / ${fmt(r.cap[1], 2)} s; ${fmt(r.peakRss)} MiB; ${fmt(r.cpu)} % of a core (simulator ${fmt(r.simCpu)} %); ${fmt(r.messages)} | RSS target < 300 MiB |`,
    );
  }
  out.push(
    `| gaps (book / trades) / spool bytes at the end of the lag window | ${lag.gaps} / ${lag.tradeGaps} / ${lag.spooled} | |`,
  );
  out.push('', `Simulator: ${UPS} updates/s × ${CHANGES} levels, platforms ${PLATFORMS}, tickers ${TICKERS}.`);
  return out;
}

/** The benchmark ClickHouse server's pid (infra/local/clickhouse.sh's pid file: `pid start-signature`). */
function clickhousePid() {
  return Number(
    readFileSync(path.join(DIR, 'clickhouse', 'clickhouse.pid'), 'utf8')
      .trim()
      .split(' ')[0],
  );
}

/**
 * Issue 27: the CPU cost of redundancy. One recorder records the simulator's load for a window, then two record the
 * same load at once (after both are ready and a warm-up); CPU seconds per row written, per recorder process and for
 * ClickHouse, and two/one.
 */
async function replicasRun() {
  if (REPLICAS < 2) throw new Error('--replicas is 2 or more');
  const { sim, simEnv } = await startSim(5000);
  const redis = process.env.DG_BENCH_REDIS_URL ? undefined : await startRedis(DIR);
  const redisUrl = process.env.DG_BENCH_REDIS_URL ?? redis.url;
  const chPid = clickhousePid();
  const rows = async () => Number(await ch(SQL.rowCount('delta'))) + Number(await ch(SQL.rowCount('snapshot')));
  const phases = [];
  try {
    for (const n of [1, REPLICAS]) {
      const prefix = `dg:bench:${Date.now()}:${n}:`;
      log(`==> ${n} recorder(s) on one Redis (prefix ${prefix}), ${UPS} updates/s`);
      const started = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          startRecorder(simEnv, `r${n}-${i}`, {
            RECORDER_TRADES: 'true',
            RECORDER_REDIS_URL: redisUrl,
            RECORDER_REDIS_PREFIX: prefix,
            RECORDER_ID: `bench-${n}-${i}`,
          }),
        ),
      );
      log(`==> warm-up ${WARMUP} s`);
      await sleep(WARMUP * 1000);
      const pids = started.map((r) => r.recorder.pid);
      const cpu0 = pids.map(cpuSeconds);
      const ch0 = cpuSeconds(chPid);
      const simCpu0 = cpuSeconds(sim.pid);
      const r0 = await rows();
      const t0 = Date.now();
      log(`==> window ${SECONDS} s`);
      await sleep(SECONDS * 1000);
      const r1 = await rows();
      const seconds = (Date.now() - t0) / 1000;
      const cpu = pids.map((pid, i) => cpuSeconds(pid) - cpu0[i]);
      const phase = {
        n,
        seconds,
        rows: r1 - r0,
        cpu,
        clickhouse: cpuSeconds(chPid) - ch0,
        sim: cpuSeconds(sim.pid) - simCpu0,
        gaps: new Map(),
      };
      // Gaps by reason (book gaps and trades gaps): a phase after the first starts on the tickers the one before
      // recorded, so its restart seams are recorder_start gaps; anything else is a gap of the recording itself.
      for (const r of started) {
        for (const [k, v] of await metricValues(r.metricsUrl)) {
          const reason = /^recorder_gaps_total\{.*reason="([^"]+)"/.exec(k)?.[1];
          if (reason !== undefined && v > 0) phase.gaps.set(reason, (phase.gaps.get(reason) ?? 0) + v);
        }
      }
      phases.push(phase);
      await stopSome(pids);
    }
  } finally {
    redis?.stop();
  }
  const [one, two] = phases;
  const perRow = (cpu, p) => cpu / Math.max(p.rows, 1);
  const sumOf = (list) => list.reduce((a, b) => a + b, 0);
  const us = (x) => fmt(x * 1e6, 2);
  const out = [`| figure | 1 recorder | ${REPLICAS} recorders | ${REPLICAS} / 1 |`, '| --- | --- | --- | --- |'];
  out.push(
    `| rows written (delta + snapshot) in ${fmt(one.seconds)} s / ${fmt(two.seconds)} s windows | ${one.rows} | ${two.rows} | ${fmt(two.rows / Math.max(one.rows, 1), 2)} (1.0: one copy) |`,
  );
  two.cpu.forEach((c, i) =>
    out.push(
      `| recorder ${i} CPU µs per row written | ${i === 0 ? us(perRow(one.cpu[0], one)) : ''} | ${us(perRow(c, two))} | |`,
    ),
  );
  out.push(
    `| recorders together, CPU µs per row written | ${us(perRow(sumOf(one.cpu), one))} | ${us(perRow(sumOf(two.cpu), two))} | **${fmt(perRow(sumOf(two.cpu), two) / perRow(sumOf(one.cpu), one), 2)}×** (target ≤ 2.2×) |`,
  );
  out.push(
    `| ClickHouse CPU µs per row written | ${us(perRow(one.clickhouse, one))} | ${us(perRow(two.clickhouse, two))} | ${fmt(perRow(two.clickhouse, two) / perRow(one.clickhouse, one), 2)}× |`,
  );
  out.push(
    `| recorders' CPU, % of a core (simulator's) | ${fmt((sumOf(one.cpu) / one.seconds) * 100)} (${fmt((one.sim / one.seconds) * 100)}) | ${fmt((sumOf(two.cpu) / two.seconds) * 100)} (${fmt((two.sim / two.seconds) * 100)}) | |`,
  );
  const gapsText = (gaps) => (gaps.size === 0 ? '0' : [...gaps].map(([reason, n]) => `${reason} ${n}`).join(', '));
  out.push(
    `| gaps recorded by reason (recorder_gaps_total; a phase's restart seams are recorder_start) | ${gapsText(one.gaps)} | ${gapsText(two.gaps)} | |`,
  );
  out.push('', `Simulator: ${UPS} updates/s × ${CHANGES} levels, platforms ${PLATFORMS}, tickers ${TICKERS}.`);
  return out;
}

/** Canonical decimal text (ClickHouse 18.16 prints every one of a Decimal(38, 18)'s places). */
function canonical(text) {
  const s = String(text);
  if (!s.includes('.')) return s;
  const t = s.replace(/0+$/, '').replace(/\.$/, '');
  return t === '-0' ? '0' : t;
}

async function faultRun() {
  const { simEnv, control } = await startSim((MINUTES + 10) * 60_000);
  const { recorder, metricsUrl } = await startRecorder(simEnv, 'faults', {
    RECORDER_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS),
    RECORDER_TRADES_AUDIT_INTERVAL_MS: String(AUDIT_MS),
  });
  const tickers = await control('GET', '/control/tickers');
  const platforms = PLATFORMS.split(',');
  log(`==> warm-up ${WARMUP} s`);
  await sleep(WARMUP * 1000);
  // Faults in turn: every FAULT_EVERY s the next feed gets the next kind (each feed each kind about equally often).
  const kinds = ['drop', 'disconnect', 'stall'];
  const injected = Object.fromEntries(platforms.map((p) => [p, { drop: 0, disconnect: 0, stall: 0, dropped: 0 }]));
  let random = 42;
  const next = (n) => {
    random = (random * 1103515245 + 12345) % 2 ** 31;
    return random % n;
  };
  const until = Date.now() + MINUTES * 60_000;
  log(`==> recording ${MINUTES} min with a fault every ${FAULT_EVERY} s`);
  for (let i = 0; Date.now() < until; i++) {
    const platform = platforms[i % platforms.length];
    const kind = kinds[Math.floor(i / platforms.length) % kinds.length];
    const list = tickers[EXCHANGE_OF[platform]] ?? [];
    const spec =
      kind === 'drop'
        ? { platform, kind, ticker: list[next(list.length)], count: 1 + next(20) }
        : kind === 'stall'
          ? { platform, kind, ms: STALL_TIMEOUT_MS + 3000 }
          : { platform, kind };
    await control('POST', '/control/feed-faults', spec);
    injected[platform][kind]++;
    if (kind === 'drop') injected[platform].dropped += spec.count;
    await sleep(Math.min(FAULT_EVERY * 1000, Math.max(0, until - Date.now())));
  }
  await control('POST', '/control/books/pause');
  const pausedAt = Date.now();
  log(`==> books stopped; ${fmt((2 * AUDIT_MS + 15_000) / 1000)} s for the last audits, then SIGTERM`);
  await sleep(2 * AUDIT_MS + 15_000);
  const metrics = await metricValues(metricsUrl);
  await stopSome([recorder.pid]);

  const firsts = new Map(
    (await ch(`${SQL.spans('snapshot')} FORMAT JSONEachRow`))
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const r = JSON.parse(l);
        return [`${r.ex} ${r.ticker}`, Number(r.f)];
      }),
  );
  const stored = (await ch(SQL.storedTrades()))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const gaps = (await ch(SQL.tradeGaps()))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const out = [
    '| exchange | trades made | stored exactly once | stored twice or more | missing, inside a trades gap | missing, outside any gap | stored, not made | exactly once | faults (drops / messages dropped, disconnects, stalls) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const platform of platforms) {
    const exchange = EXCHANGE_OF[platform];
    const made = (await control('GET', `/control/trades?platform=${platform}`)).trades;
    const key = (t) => `${t.ticker} ${t.ts} ${canonical(t.price)} ${canonical(t.size)} ${t.side} ${t.venueSide}`;
    // Stored trades by their fields (and the venue's id where it has one): for each distinct stored trade (its id),
    // how many rows it has.
    const perId = new Map();
    for (const r of stored.filter((x) => x.ex === exchange)) {
      const fields = key({ ticker: r.ticker, ts: Number(r.ts), price: r.px, size: r.sz, side: r.sd, venueSide: r.vs });
      const k = `${fields}${r.id.startsWith('h:') ? '' : ` ${r.id}`}`;
      const byId = perId.get(k) ?? new Map();
      byId.set(r.id, (byId.get(r.id) ?? 0) + 1);
      perId.set(k, byId);
    }
    const rows = new Map([...perId].map(([k, byId]) => [k, [...byId.values()]]));
    const counts = { made: 0, once: 0, twice: 0, inGap: 0, outside: 0 };
    for (const t of made) {
      const first = firsts.get(`${exchange} ${t.ticker}`);
      const k = `${key(t)}${t.id === null ? '' : ` ${t.id}`}`;
      const found = rows.get(k);
      const n = found?.shift();
      if (found && found.length === 0) rows.delete(k);
      if (first === undefined || t.ts <= first || t.ts > pausedAt) continue;
      counts.made++;
      if (n === 1) counts.once++;
      else if (n !== undefined) counts.twice++;
      else if (
        gaps.some((g) => g.ex === exchange && g.ticker === t.ticker && t.ts >= Number(g.f) && t.ts <= Number(g.t))
      )
        counts.inGap++;
      else counts.outside++;
    }
    const phantoms = [...rows.values()].reduce((n, l) => n + l.length, 0);
    const f = injected[platform];
    out.push(
      `| ${exchange} | ${counts.made} | ${counts.once} | ${counts.twice} | ${counts.inGap} | ${counts.outside} | ${phantoms} | ${fmt((100 * counts.once) / Math.max(1, counts.made), 2)} % | ${f.drop} / ${f.dropped}, ${f.disconnect}, ${f.stall} |`,
    );
  }
  const byExchange = (name) =>
    Object.values(EXCHANGE_OF)
      .map(
        (e) =>
          `${e} ${[...metrics].filter(([k]) => k.startsWith(`${name}{`) && k.includes(`exchange="${e}"`)).reduce((n, [, v]) => n + v, 0)}`,
      )
      .join(', ');
  out.push(
    '',
    `Recorder: trades backfilled ${byExchange('recorder_trades_backfilled_total')}; deduplicated ${byExchange('recorder_trades_deduplicated_total')}; trades gaps ${byExchange('recorder_trade_gaps_total')}; book gaps ${byExchange('recorder_gaps_total')}.`,
    `Recording ${MINUTES} min at ${UPS} updates/s × ${CHANGES} levels, platforms ${PLATFORMS}, tickers ${TICKERS}; RECORDER_STALL_TIMEOUT_MS ${STALL_TIMEOUT_MS}, stalls ${STALL_TIMEOUT_MS + 3000} ms, RECORDER_TRADES_AUDIT_INTERVAL_MS ${AUDIT_MS}. Counted: trades after each ticker's first snapshot, up to the books' stop.`,
  );
  return out;
}

/**
 * The fault kinds each simulator feed takes (its FeedHub's): reorder where no sequence shows a swap, a checksum on the
 * CLOB. In the order they are injected, after the drops they alternate with.
 */
const KINDS_OF = {
  'venue-b': ['drop', 'disconnect', 'stall'],
  'venue-c': ['drop', 'reorder', 'disconnect', 'stall'],
  'venue-a-us': ['drop', 'reorder', 'disconnect', 'stall'],
  'venue-a-clob': ['drop', 'reorder', 'corrupt_checksum', 'disconnect', 'stall'],
  'venue-d': ['drop', 'reorder', 'disconnect', 'stall'],
};
/** A REST book read at the simulator (path, query) → its ticker, per exchange (what reconciliation reads). */
const REST_BOOK = {
  venue_b: (p) => /\/markets\/([^/]+)\/orderbook$/.exec(p)?.[1],
  venue_c: (p) => /\/v1\/book\/([^/]+)$/.exec(p)?.[1],
  venue_a_us: (p) => /\/v1\/markets\/([^/]+)\/book$/.exec(p)?.[1],
  venue_a_clob: (p, q) => (/\/book$/.test(p) ? (new URLSearchParams(q).get('token_id') ?? undefined) : undefined),
  venue_d: (p) => /\/products\/([^/]+)\/book$/.exec(p)?.[1],
};
/**
 * Each venue's documented public REST budget for those reads, per second (shared/spec/upstreams.md): Kalshi basic
 * read 20/s, Polymarket US 20/s, Gemini 120/min, Coinbase 10/s, the CLOB's `/book` 1,500 per 10 s.
 */
const REST_BUDGET = { venue_b: 20, venue_c: 2, venue_a_us: 20, venue_a_clob: 150, venue_d: 10 };
/** Gemini stamps rows on receipt: its book at T is the venue's at some moment this much before T. */
const RECEIVE_LAG_MS = 1000;
/** A REST read's answer reaches the recorder within this. */
const REST_LATENCY_MS = 1000;

/** Exact decimal text → scaled bigint (18 places). */
function scaled(text) {
  const [i, f = ''] = String(text).split('.');
  const neg = i.startsWith('-');
  const v = BigInt(i.replace('-', '') || '0') * 10n ** 18n + BigInt((f + '0'.repeat(18)).slice(0, 18));
  return neg ? -v : v;
}
const sideName = (s) => (s === 'bid' || s === '1' || s === 'buy' ? 'bid' : 'ask');

/** A book as sorted `side:price=quantity` text, comparable. */
function bookKey(map) {
  return [...map]
    .filter(([, q]) => q !== 0n)
    .map(([k, q]) => `${k}=${q}`)
    .sort()
    .join(' ');
}

/** Rule 7 over a ticker's rows at each of `moments` (sorted): the latest snapshot ≤ T, then deltas snapshot ≤ ts ≤ T. */
function rebuildAt(rows, moments) {
  const snaps = new Map();
  const deltas = [];
  for (const r of rows) {
    if (r.k === 's') {
      const list = snaps.get(Number(r.ts)) ?? [];
      list.push(r);
      snaps.set(Number(r.ts), list);
    } else deltas.push(r);
  }
  const snapTs = [...snaps.keys()].sort((a, b) => a - b);
  deltas.sort((a, b) => Number(a.ts) - Number(b.ts) || (BigInt(a.sq) < BigInt(b.sq) ? -1 : 1));
  const out = new Map();
  for (const t of moments) {
    let s = -1;
    for (const x of snapTs) if (x <= t) s = x;
    if (s < 0) continue;
    const book = new Map();
    for (const r of snaps.get(s)) book.set(`${sideName(r.sd)}:${scaled(r.px)}`, scaled(r.q));
    for (const d of deltas) {
      const ts = Number(d.ts);
      if (ts < s) continue;
      if (ts > t) break;
      const k = `${sideName(d.sd)}:${scaled(d.px)}`;
      const q = (book.get(k) ?? 0n) + scaled(d.q);
      if (q === 0n) book.delete(k);
      else book.set(k, q);
    }
    out.set(t, bookKey(book));
  }
  return out;
}

const quantile = (list, q) => {
  if (list.length === 0) return NaN;
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};

/**
 * `--book-faults`: issue 24's measured fault run. All five recorded exchanges for --minutes (30) while every
 * --fault-every S (30) seconds the next feed, in turn, gets its next fault (every other one a drop of 1–5 messages
 * of a random ticker; the others its other kinds in turn: disconnect, stall, reorder, corrupt_checksum where the
 * feed takes them). Every exchange is reconciled against its REST book (RECORDER_RECONCILE_EXCHANGES all five,
 * --reconcile-ms, --grace-ms). Then the books stop, one reconciliation round passes, the recorder stops, and:
 * --moments N (1,000) random moments per exchange, rule 7 over the stored rows against the simulator's book (0 wrong
 * outside recorded gaps, but for a fault no protocol shows, within its bound: docs/history.md "Faults no feed can
 * show"); the time from each silent drop (Polymarket US, Gemini, Coinbase: no sequence) to its gap's detection; and
 * the REST book reads per exchange from the simulator's request log against 10 % of the venue's documented budget.
 */
async function bookFaultRun() {
  const { simEnv, control } = await startSim((MINUTES + 15) * 60_000, 1_000_000);
  const platforms = PLATFORMS.split(',');
  const tickers = await control('GET', '/control/tickers');
  const exchanges = platforms.map((p) => EXCHANGE_OF[p]);
  const tickerEnv = Object.fromEntries(
    exchanges.map((e) => [`RECORDER_${e.toUpperCase()}_TICKERS`, (tickers[e] ?? []).join(',')]),
  );
  const { recorder } = await startRecorder(simEnv, 'book-faults', {
    ...tickerEnv,
    RECORDER_EXCHANGES: exchanges.join(','),
    RECORDER_RECONCILE_EXCHANGES: exchanges.join(','),
    RECORDER_RECONCILE_INTERVAL_MS: String(RECONCILE_MS),
    RECORDER_RECONCILE_GRACE_MS: String(GRACE_MS),
    RECORDER_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS),
  });
  log(`==> warm-up ${WARMUP} s`);
  await sleep(WARMUP * 1000);
  const recordFrom = Date.now();
  let random = 24;
  const next = (n) => {
    random = (random * 1103515245 + 12345) % 2 ** 31;
    return random % n;
  };
  const faults = [];
  const perPlatform = Object.fromEntries(platforms.map((p) => [p, 0]));
  const until = Date.now() + MINUTES * 60_000;
  log(`==> recording ${MINUTES} min, a fault every ${FAULT_EVERY} s across ${platforms.join(', ')}`);
  for (let i = 0; Date.now() < until; i++) {
    const platform = platforms[i % platforms.length];
    const n = perPlatform[platform]++;
    const others = KINDS_OF[platform].filter((k) => k !== 'drop');
    const kind = n % 2 === 0 ? 'drop' : others[Math.floor(n / 2) % others.length];
    const list = tickers[EXCHANGE_OF[platform]] ?? [];
    const ticker = list[next(list.length)];
    const spec =
      kind === 'drop'
        ? { platform, kind, ticker, count: 1 + next(5) }
        : kind === 'reorder' || kind === 'corrupt_checksum'
          ? { platform, kind, ticker, count: 1 }
          : kind === 'stall'
            ? { platform, kind, ms: STALL_TIMEOUT_MS + 3000 }
            : { platform, kind };
    const injectedAt = Date.now();
    await control('POST', '/control/feed-faults', spec);
    const fault = { ...spec, exchange: EXCHANGE_OF[platform], injectedAt, appliedAt: injectedAt };
    faults.push(fault);
    const slot = Math.min(injectedAt + FAULT_EVERY * 1000, until);
    if (spec.ticker !== undefined) {
      // When the simulator applied it: its pending count back to 0 (a quiet ticker may take a while).
      const field = { drop: 'pendingDrops', reorder: 'pendingReorders', corrupt_checksum: 'pendingCorruptions' }[kind];
      fault.appliedAt = undefined;
      while (Date.now() < slot + 30_000) {
        const stats = await control('GET', `/control/feed-faults/${platform}`);
        if (stats[field] === 0) {
          fault.appliedAt = Date.now();
          break;
        }
        await sleep(20);
      }
    }
    await sleep(Math.max(0, slot - Date.now()));
  }
  await control('POST', '/control/books/pause');
  const pausedAt = Date.now();
  const tail = RECONCILE_MS + GRACE_MS + 10_000;
  log(`==> books stopped; ${fmt(tail / 1000)} s for a last reconciliation round, then SIGTERM`);
  await sleep(tail);
  await stopSome([recorder.pid]);

  // ---- what was stored, what the simulator saw ------------------------------------------------------------------
  const gaps = (await ch(SQL.bookGaps()))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((g) => ({ ex: g.ex, ticker: g.ticker, f: Number(g.f), t: Number(g.t), reason: g.reason, d: Number(g.d) }));
  const gapsOf = (e, t) => gaps.filter((g) => g.ex === e && g.ticker === t);
  const restReads = new Map();
  const reads = Object.fromEntries(exchanges.map((e) => [e, 0]));
  for (const platform of platforms) {
    const e = EXCHANGE_OF[platform];
    const { requests } = await control('GET', `/control/requests?platform=${platform}`);
    for (const r of requests) {
      const t = REST_BOOK[e](r.path, r.query);
      if (t === undefined) continue;
      const k = `${e} ${decodeURIComponent(t)}`;
      restReads.set(k, [...(restReads.get(k) ?? []), r.receivedAt]);
      if (r.receivedAt >= recordFrom && r.receivedAt <= pausedAt) reads[e]++;
    }
  }
  const events = new Map();
  const eventsOf = async (platform, t) => {
    const k = `${platform} ${t}`;
    if (!events.has(k)) {
      const body = await control(
        'GET',
        `/control/books/${platform}/${encodeURIComponent(t)}/events?since=${recordFrom - 60_000}`,
      );
      events.set(k, body.events);
    }
    return events.get(k);
  };
  const venueBook = async (platform, t, at) => {
    const b = await control('GET', `/control/books/${platform}/${encodeURIComponent(t)}?at=${at}`);
    const m = new Map();
    for (const [p, q] of b.bids) m.set(`bid:${scaled(p)}`, scaled(q));
    for (const [p, q] of b.asks) m.set(`ask:${scaled(p)}`, scaled(q));
    return bookKey(m);
  };

  // ---- the bound on each fault no protocol shows (docs/history.md) ------------------------------------------------
  const allowances = [];
  for (const f of faults) {
    const silent = f.kind === 'drop' || (f.kind === 'reorder' && f.exchange === 'venue_c');
    if (f.ticker === undefined || !silent || f.appliedAt === undefined) continue;
    if (f.exchange === 'venue_a_us') {
      const nextEvent = (await eventsOf(f.platform, f.ticker)).find((e) => e.ts > f.appliedAt);
      allowances.push({ f, from: f.injectedAt - 1, to: (nextEvent?.ts ?? pausedAt) - 1 });
    } else if (f.exchange === 'venue_c' || f.exchange === 'venue_d') {
      const read = (restReads.get(`${f.exchange} ${f.ticker}`) ?? []).find((at) => at > f.appliedAt);
      allowances.push({ f, from: f.injectedAt - 1, to: (read ?? Infinity) + REST_LATENCY_MS + GRACE_MS });
    }
  }
  const allowed = (e, t, at) =>
    allowances.some((a) => a.f.exchange === e && a.f.ticker === t && at >= a.from && at <= a.to);

  // ---- random moments ---------------------------------------------------------------------------------------------
  log(`==> ${MOMENTS} random moments per exchange against the simulator's books`);
  const rows = [
    '| exchange | moments | in a recorded gap | equal to the venue’s book | wrong, within a silent fault’s bound | wrong outside any gap or bound | faults injected | REST book reads/s (10 % of the documented budget) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const wrongExamples = [];
  for (const platform of platforms) {
    const e = EXCHANGE_OF[platform];
    const list = tickers[e] ?? [];
    const byTicker = new Map();
    for (let i = 0; i < MOMENTS; i++) {
      const t = list[next(list.length)];
      byTicker.set(t, [...(byTicker.get(t) ?? []), next(2 ** 30) / 2 ** 30]);
    }
    const c = { moments: 0, inGap: 0, equal: 0, bounded: 0, wrong: 0 };
    for (const [t, fractions] of byTicker) {
      const stored = (await ch(SQL.bookRows(e, t)))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      const snapshots = stored.filter((r) => r.k === 's').map((r) => Number(r.ts));
      if (snapshots.length === 0) throw new Error(`${e} ${t}: nothing recorded`);
      const start = Math.max(recordFrom, Math.min(...snapshots));
      const moments = fractions.map((x) => start + Math.floor(x * (pausedAt - start))).sort((a, b) => a - b);
      const built = rebuildAt(stored, moments);
      const tGaps = gapsOf(e, t);
      const evs = e === 'venue_c' ? await eventsOf(platform, t) : [];
      for (const at of moments) {
        c.moments++;
        if (tGaps.some((g) => at >= g.f && at < g.t)) {
          c.inGap++;
          continue;
        }
        const got = built.get(at);
        const candidates =
          e === 'venue_c'
            ? [at - RECEIVE_LAG_MS, ...evs.filter((x) => x.ts > at - RECEIVE_LAG_MS && x.ts <= at).map((x) => x.ts)]
            : [at];
        let equal = false;
        for (const m of candidates) if ((equal = (await venueBook(platform, t, m)) === got)) break;
        if (equal) c.equal++;
        else if (allowed(e, t, at)) c.bounded++;
        else {
          c.wrong++;
          if (wrongExamples.length < 5) wrongExamples.push(`${e} ${t} at ${new Date(at).toISOString()}`);
        }
      }
    }
    const kinds = KINDS_OF[platform]
      .map((k) => `${k} ${faults.filter((f) => f.platform === platform && f.kind === k).length}`)
      .join(', ');
    const perSecond = reads[e] / ((pausedAt - recordFrom) / 1000);
    rows.push(
      `| ${e} | ${c.moments} | ${c.inGap} | ${c.equal} | ${c.bounded} | **${c.wrong}** | ${kinds} | ${fmt(perSecond, 3)} (${fmt(REST_BUDGET[e] / 10, 2)}) ${perSecond <= REST_BUDGET[e] / 10 ? '✓' : '✗'} |`,
    );
  }

  // ---- a silent drop to its gap -----------------------------------------------------------------------------------
  const silentDrops = faults.filter(
    (f) => f.kind === 'drop' && ['venue_a_us', 'venue_c', 'venue_d'].includes(f.exchange) && f.appliedAt !== undefined,
  );
  const latencies = [];
  let healed = 0;
  for (const f of silentDrops) {
    const g = gapsOf(f.exchange, f.ticker)
      .filter((x) => x.f <= f.appliedAt && x.t >= f.appliedAt && x.d >= f.appliedAt)
      .sort((a, b) => a.d - b.d)[0];
    if (g) latencies.push(g.d - f.appliedAt);
    else healed++;
  }
  const reasons = new Map();
  for (const g of gaps) reasons.set(`${g.ex} ${g.reason}`, (reasons.get(`${g.ex} ${g.reason}`) ?? 0) + 1);
  rows.push(
    '',
    `Silent drops (Polymarket US, Gemini, Coinbase: no sequence): ${silentDrops.length}; ${latencies.length} ended in a gap, drop → detection p50 ${fmt(quantile(latencies, 0.5) / 1000, 2)} s, p99 ${fmt(quantile(latencies, 0.99) / 1000, 2)} s, max ${fmt(Math.max(...latencies, 0) / 1000, 2)} s (the reconciliation interval: ${fmt(RECONCILE_MS / 1000)} s; p99 ${quantile(latencies, 0.99) <= RECONCILE_MS ? '≤' : '>'} it); ${healed} repaired by the venue's next message before any read (no gap, within the bound).`,
    `Book gaps by reason: ${[...reasons].map(([k, n]) => `${k} ${n}`).join(', ')}.`,
    ...(wrongExamples.length > 0
      ? [`Wrong books outside any gap or bound (first ${wrongExamples.length}): ${wrongExamples.join('; ')}.`]
      : []),
    `Recording ${MINUTES} min at ${UPS} updates/s × ${CHANGES} levels, platforms ${PLATFORMS}, tickers ${TICKERS}; a fault every ${FAULT_EVERY} s; RECORDER_RECONCILE_INTERVAL_MS ${RECONCILE_MS}, RECORDER_RECONCILE_GRACE_MS ${GRACE_MS}, RECORDER_STALL_TIMEOUT_MS ${STALL_TIMEOUT_MS} (stalls ${STALL_TIMEOUT_MS + 3000} ms). Moments: uniform over each ticker's recording after its first snapshot, up to the books' stop; Gemini (stamped on receipt) compared with the venue's book up to ${RECEIVE_LAG_MS} ms before. REST reads: the simulator's request log, from the warm-up's end to the books' stop.`,
  );
  return rows;
}

main().catch(async (err) => {
  process.stderr.write(`${err.stack ?? err}${err.cause ? `\ncause: ${err.cause.stack ?? err.cause}` : ''}\n`);
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
