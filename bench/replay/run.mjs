// Replay benchmark (issue 25, "Measured"): in one run, on this machine, a replay service and a history service (the
// built entrypoints, as deployed: the replay with infra/k8s/base/replay's config.env and heap cap) on a ClickHouse
// holding a generated recorded history of one venue (packages/history-tools' seed: books, changes, trades), and:
//   (1) throughput at speed=max: native messages per second of one window over the WebSocket replay beside the
//       NDJSON HTTP replay of the same window from the same service (the anchor, measured in the same run,
//       interleaved; the median of each), and the replay process's CPU per 1,000 messages of each;
//   (2) memory per replay socket: the replay's RSS and heap used with `--memory-sockets` sockets replaying at speed=1
//       (each holding its window), beside none, per socket;
//   (3) pacing at speed=1: `--replays` concurrent replays of `--pacing-seconds` each; per message, its delivery
//       offset (arrival − the arrival of the replay's first message, the book at `from`) minus its recorded offset
//       (its `ts` − the first message's, from the NDJSON replay of the same window): p50/p99/max;
//   (4) isolation: the history API's latency from 32 closed-loop clients (1,000-row deltas and snapshots pages at
//       random moments, bench/history's latency mix) without replays, with `--replays` replays at speed=max kept
//       running (a process of their own at nice `--clients-nice`), and without again: p99 with ÷ p99 without.
// Targets (issue 25): (1) ≥ 1.0×; (3) p99 ≤ 50 ms with 100 replays; (4) ≤ 1.2×.
//
// Usage: ./dev bench replay [--venue kalshi] [--quick] [--replays 100] [--pacing-seconds 60] [--memory-sockets 100]
//          [--fresh] [--clickhouse URL --redis URL] [--keep]
//   --venue: the venue replayed (a platform key, alias or exchange key: bench/replay/venues.mjs); its WebSocket
//            replay must exist (the handshake's 404 says which do).
//   --quick: a small data set and small loads (a check that the benchmark works, not a measurement).
//   --clickhouse URL --redis URL: use these servers (a database and key prefix of the run's own, dropped after)
//            instead of starting a ClickHouse and a Redis (infra/local; the ClickHouse's data is kept under
//            $DG_DEV_DIR/bench/replay and reused by later runs of the same recipe unless --fresh).
// Ports: DG_BENCH_CLICKHOUSE_HTTP_PORT (17227), DG_BENCH_CLICKHOUSE_TCP_PORT (17914); the services' and Redis's are
// picked free (DG_BENCH_PORT_BASE keeps them in a range). Writes nothing into the repository; prints a Markdown report
// on stdout, progress on stderr.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchmarkSql } from '@depthgate/history-store';
import { ROOT, cleanup, fmt, freePort, pct, sleep, start, stopAll, tempDir, waitHttp } from '../lib.mjs';
import { agent, ndjsonReplay, wsReplay } from './clients.mjs';
import { venueNamed } from './venues.mjs';

const args = process.argv.slice(2);
const has = (name) => args.includes(name);
const value = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const QUICK = has('--quick');
const venue = venueNamed(value('--venue', 'kalshi'));
const REPLAYS = Number(value('--replays', QUICK ? 10 : 100));
const PACING_SECONDS = Number(value('--pacing-seconds', QUICK ? 5 : 60));
const MEMORY_SOCKETS = Number(value('--memory-sockets', QUICK ? 5 : 100));
/** The generated history: tickers, range, mean change messages per minute per ticker. */
const DATA = QUICK
  ? { tickers: 2, from: '2026-03-07T00:00:00Z', to: '2026-03-07T02:00:00Z', eventsPerMinute: 300 }
  : { tickers: 8, from: '2026-03-07T00:00:00Z', to: '2026-03-08T00:00:00Z', eventsPerMinute: 600 };
/** Delta rows of a window: the throughput window, each memory socket's, each isolation replay's. */
const ROWS = QUICK
  ? { throughput: 10_000, memory: 2_000, isolation: 2_000 }
  : { throughput: 200_000, memory: 20_000, isolation: 20_000 };
const THROUGHPUT_RUNS = QUICK ? 2 : 5;
const HISTORY_CLIENTS = 32;
const ISOLATION_SECONDS = QUICK ? 5 : 30;
/** The parts to run (`--only throughput,memory,pacing,isolation`; default all). */
const ONLY = new Set(value('--only', 'throughput,memory,pacing,isolation').split(','));
/**
 * CPU priorities (nice values). The replay service's (`--replay-nice`, default 10) stands for its CPU weight in
 * Kubernetes: a container's CPU request sets its cgroup's weight, and under contention a node's CPU is shared by those
 * weights — infra/k8s/base gives the history 500m and the replay 50m, 10:1, as nice 10 is to nice 0 (110 against
 * 1024). Each process started here leads a session of its own, and Linux (with autogroup) shares the CPU between
 * sessions whatever their processes' nice values, so the weight is set where it applies: the replay's session's
 * (`/proc/PID/autogroup`; plain `nice` where there is no autogroup). The replays' clients (`--clients-nice`, 19)
 * stand for backtests running elsewhere.
 */
const REPLAY_NICE = Number(value('--replay-nice', '10'));
const CLIENTS_NICE = Number(value('--clients-nice', '19'));
const WARMUP_SECONDS = QUICK ? 1 : 3;
/** Windows start this long after a ticker's first row: the seed writes a book every 5 minutes. */
const BOOK_MS = 6 * 60_000;

const log = (...a) => console.error('[bench replay]', ...a);
const external = value('--clickhouse') !== undefined;
if (external !== (value('--redis') !== undefined)) throw new Error('--clickhouse and --redis go together');
const dir = tempDir('replay');
const dataDir = path.join(process.env.DG_DEV_DIR ?? path.join(ROOT, '.dev'), 'bench', 'replay');
const DB = external ? `replay_bench_${process.pid}` : `replay_bench_${venue.exchange}${QUICK ? '_quick' : ''}`;
const PREFIX = `dgbench${process.pid}:`;
const SQL = benchmarkSql(DB);
let clickhouseUrl;
let redisUrl;

const median = (list) => pct(list, 50);
const iso = (ms) => new Date(ms).toISOString();

async function ch(query) {
  const res = await fetch(`${clickhouseUrl}/`, { method: 'POST', body: query });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${text.slice(0, 300)}`);
  return text;
}
const chRows = async (query) =>
  (await ch(`${query} FORMAT JSONEachRow`))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

/** CPU (user + system) a process has used, in ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
const rssBytes = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
async function metric(url, name) {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

/**
 * The history service's own view of a phase (read at its start and its end): its ClickHouse queries' mean duration
 * (`history_clickhouse_query_duration_seconds`, Δsum ÷ Δcount; a window query includes streaming its rows) and its
 * event loop's delay p99 over the phase (prom-client's `nodejs_eventloop_lag_p99_seconds`, reset at every scrape).
 */
async function historyView(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const total = (name) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return {
    sum: total('history_clickhouse_query_duration_seconds_sum'),
    count: total('history_clickhouse_query_duration_seconds_count'),
    lagP99: total('nodejs_eventloop_lag_p99_seconds'),
  };
}

// --- the stack ----------------------------------------------------------------------------------------------------
async function startStack() {
  if (external) {
    clickhouseUrl = value('--clickhouse').replace(/\/$/, '');
    redisUrl = value('--redis');
  } else {
    const httpPort = Number(process.env.DG_BENCH_CLICKHOUSE_HTTP_PORT ?? 17227);
    const tcpPort = Number(process.env.DG_BENCH_CLICKHOUSE_TCP_PORT ?? 17914);
    mkdirSync(dataDir, { recursive: true });
    log(`ClickHouse (port ${httpPort}, data in ${dataDir}) and Redis`);
    execFileSync(
      path.join(ROOT, 'infra/local/clickhouse.sh'),
      [
        'start',
        '--dir',
        path.join(dataDir, 'clickhouse'),
        '--http-port',
        String(httpPort),
        '--tcp-port',
        String(tcpPort),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    clickhouseUrl = `http://127.0.0.1:${httpPort}`;
    const redisPort = await freePort();
    execFileSync(
      path.join(ROOT, 'infra/local/redis.sh'),
      ['start', '--dir', path.join(dir, 'redis'), '--port', String(redisPort)],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    redisUrl = `redis://127.0.0.1:${redisPort}`;
  }

  // The generated history (kept between runs of the same recipe on the benchmark's own ClickHouse).
  const recipe = `generator=seed exchange=${venue.exchange} tickers=${DATA.tickers} from=${DATA.from} to=${DATA.to} epm=${DATA.eventsPerMinute} seed=replay-bench`;
  const recipeFile = path.join(dataDir, `dataset-${venue.exchange}${QUICK ? '-quick' : ''}`);
  const db = DB;
  const reuse = !external && !has('--fresh') && existsSync(recipeFile) && readFileSync(recipeFile, 'utf8') === recipe;
  if (!reuse) {
    log(`generating the recorded history (${recipe}) into ${db}`);
    await ch(SQL.dropDatabase());
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'packages/history-tools/dist/cli/seed.js'),
        ...['--from', DATA.from, '--to', DATA.to, '--exchanges', venue.exchange],
        ...['--tickers-per-exchange', String(DATA.tickers), '--events-per-minute', String(DATA.eventsPerMinute)],
        ...['--seed', 'replay-bench'],
      ],
      {
        env: { ...process.env, CLICKHOUSE_URL: clickhouseUrl, CLICKHOUSE_DATABASE: db },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    // One part per month in each table, so that every run reads the same layout.
    for (const kind of ['delta', 'snapshot', 'trade']) await ch(SQL.optimize(kind));
    if (!external) writeFileSync(recipeFile, recipe);
  } else log(`reusing the recorded history in ${db} (${recipe}; --fresh regenerates)`);

  const key = execFileSync(
    process.execPath,
    [
      path.join(ROOT, 'packages/auth/dist/cli.js'),
      'create',
      ...['--name', 'replay-bench', '--requests-per-minute', '100000000', '--ws-max-connections', '100000'],
    ],
    { env: { ...process.env, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: PREFIX }, encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .pop();

  const common = {
    CLICKHOUSE_URL: clickhouseUrl,
    CLICKHOUSE_DATABASE: db,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    ACCESS_LOG: 'false',
  };
  const historyPort = await freePort();
  // As bench/history runs it: 4 queries at ClickHouse at once.
  const history = start('history', process.execPath, [path.join(ROOT, 'services/history/dist/main.js')], {
    logDir: dir,
    env: {
      ...common,
      HISTORY_PORT: String(historyPort),
      HISTORY_HOST: '127.0.0.1',
      EXPLORER_ENABLED: 'false',
      CLICKHOUSE_QUERY_CONCURRENCY: '4',
    },
  });
  const historyUrl = `http://127.0.0.1:${historyPort}`;
  await waitHttp(`${historyUrl}/ready`, { timeoutMs: 60_000 });

  // The replay as deployed: its Kubernetes settings (config.env) and heap cap (deployment.yaml's NODE_OPTIONS).
  const deployed = Object.fromEntries(
    readFileSync(path.join(ROOT, 'infra/k8s/base/replay/config.env'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z0-9_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const heapCap = /--max-old-space-size=\d+/.exec(
    readFileSync(path.join(ROOT, 'infra/k8s/base/replay/deployment.yaml'), 'utf8'),
  )?.[0];
  const replayPort = await freePort();
  const replay = start(
    'replay',
    'nice',
    [
      '-n',
      String(REPLAY_NICE),
      process.execPath,
      ...(heapCap ? [heapCap] : []),
      path.join(ROOT, 'services/replay/dist/main.js'),
    ],
    {
      logDir: dir,
      env: {
        ...deployed,
        ...common,
        REPLAY_PORT: String(replayPort),
        REPLAY_HOST: '127.0.0.1',
        TRUST_PROXY_HOPS: '0',
        SHUTDOWN_DELAY_MS: '0',
      },
    },
  );
  // Its session's CPU weight (see REPLAY_NICE); without autogroup, `nice` above is what applies.
  try {
    writeFileSync(`/proc/${replay.pid}/autogroup`, String(REPLAY_NICE));
  } catch {
    /* no autogroup here */
  }
  const replayUrl = `http://127.0.0.1:${replayPort}`;
  await waitHttp(`${replayUrl}/ready`, { timeoutMs: 60_000 });
  const clickhousePid = external
    ? undefined
    : // infra/local's pid file: "PID SIGNATURE".
      Number(
        readFileSync(path.join(dataDir, 'clickhouse', 'clickhouse.pid'), 'utf8')
          .trim()
          .split(/\s+/)[0],
      );
  return { key, historyUrl, replayUrl, history, replay, deployed, heapCap, clickhousePid };
}

// --- windows ------------------------------------------------------------------------------------------------------
async function spans(kind) {
  return (await chRows(SQL.spans(kind)))
    .filter((r) => r.ex === venue.exchange)
    .map((r) => ({ ticker: r.ticker, rows: Number(r.n), first: Number(r.f), last: Number(r.l) }));
}

/** A window of `rows` delta rows of `span` from `from`. */
async function rowsWindow(span, from, rows) {
  const [row] = await chRows(SQL.nthTs('delta', venue.exchange, span.ticker, from, rows));
  if (!row)
    throw new Error(`${span.ticker} has fewer than ${rows} rows after ${iso(from)}: a larger data set is needed`);
  return { ticker: span.ticker, from, to: Number(row.ts) };
}

/** `count` windows of `rows` rows each, over the tickers in turn, each ticker's following one another. */
async function windowsOfRows(all, count, rows) {
  const out = [];
  const next = new Map(all.map((s) => [s.ticker, s.first + BOOK_MS]));
  for (let i = 0; out.length < count && i < count * 4; i++) {
    const s = all[i % all.length];
    const from = next.get(s.ticker);
    const w = await rowsWindow(s, from, rows).catch(() => undefined);
    if (!w) {
      next.set(s.ticker, s.first + BOOK_MS); // start over on this ticker
      continue;
    }
    next.set(s.ticker, w.to + 1);
    out.push(w);
  }
  if (out.length < count) throw new Error(`not enough data for ${count} windows of ${rows} rows`);
  return out;
}

// --- (1) throughput -----------------------------------------------------------------------------------------------
async function throughput(s) {
  const [busiest] = await spans('delta');
  const window = await rowsWindow(busiest, busiest.first + BOOK_MS, ROWS.throughput);
  const one = { base: s.replayUrl, venue, ticker: window.ticker, window, key: s.key };
  log(
    `throughput: ${window.ticker} ${iso(window.from)} … ${iso(window.to)} (${ROWS.throughput} delta rows), ${THROUGHPUT_RUNS} runs each`,
  );
  await ndjsonReplay(one); // warm-up of both paths (JIT, connections)
  await wsReplay({ ...one, speed: 'max' });
  const runs = { ndjson: [], ws: [] };
  for (let i = 0; i < THROUGHPUT_RUNS; i++) {
    for (const kind of i % 2 === 0 ? ['ndjson', 'ws'] : ['ws', 'ndjson']) {
      const cpu0 = cpuMs(s.replay.pid);
      const r = kind === 'ndjson' ? await ndjsonReplay(one) : await wsReplay({ ...one, speed: 'max' });
      const cpu = cpuMs(s.replay.pid) - cpu0;
      const ok = kind === 'ndjson' ? r.complete : r.code === 1000;
      if (!ok) throw new Error(`${kind} replay did not complete (${JSON.stringify({ ...r, lines: undefined })})`);
      runs[kind].push({
        messages: r.messages,
        streaming: r.messages / ((r.endAt - r.firstAt) / 1000),
        whole: r.messages / ((r.endAt - r.startedAt) / 1000),
        firstMs: r.firstAt - r.startedAt,
        cpuPerK: (cpu / r.messages) * 1000,
      });
      log(`  ${kind}: ${r.messages} messages, ${fmt(runs[kind].at(-1).streaming)} msg/s`);
    }
  }
  const m = (kind, field) => median(runs[kind].map((r) => r[field]));
  const same = runs.ndjson[0].messages === runs.ws[0].messages;
  const lines = [
    `Window: ${window.ticker}, ${iso(window.from)} … ${iso(window.to)} (${fmt(ROWS.throughput)} delta rows and the trades between), ` +
      `${runs.ws[0].messages} messages over the WebSocket, ${runs.ndjson[0].messages} NDJSON lines${same ? ' (the same)' : ' (**not the same count**)'}; ` +
      `${THROUGHPUT_RUNS} runs of each, interleaved; medians.`,
    '',
    '| speed=max, one replay | messages/s, first message → end | messages/s, request → end | first message after | replay CPU per 1,000 messages |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| NDJSON HTTP replay (the anchor) | ${fmt(m('ndjson', 'streaming'))} | ${fmt(m('ndjson', 'whole'))} | ${fmt(m('ndjson', 'firstMs'))} ms | ${fmt(m('ndjson', 'cpuPerK'), 1)} ms |`,
    `| WebSocket replay (${venue.name}) | ${fmt(m('ws', 'streaming'))} | ${fmt(m('ws', 'whole'))} | ${fmt(m('ws', 'firstMs'))} ms | ${fmt(m('ws', 'cpuPerK'), 1)} ms |`,
    `| ↳ WebSocket ÷ NDJSON | **${fmt(m('ws', 'streaming') / m('ndjson', 'streaming'), 2)}×** | ${fmt(m('ws', 'whole') / m('ndjson', 'whole'), 2)}× | | ${fmt(m('ws', 'cpuPerK') / m('ndjson', 'cpuPerK'), 2)}× |`,
    '',
    `Target: ≥ 1.0× (first message → end). "Request → end" includes reading the window before the first message and, ` +
      `on the socket, REPLAY_SUBSCRIBE_SETTLE_MS (${s.deployed.REPLAY_SUBSCRIBE_SETTLE_MS ?? 250} ms) after the subscribe.`,
  ];
  return lines;
}

// --- (2) memory ---------------------------------------------------------------------------------------------------
async function memory(s) {
  const metrics = `${s.replayUrl}/metrics`;
  // The least of five readings 500 ms apart (the heap between collections), as bench/ws does.
  const reading = async () => {
    const rs = [];
    for (let i = 0; i < 5; i++) {
      rs.push({ rss: rssBytes(s.replay.pid), heap: await metric(metrics, 'nodejs_heap_size_used_bytes') });
      await sleep(500);
    }
    return { rss: Math.min(...rs.map((r) => r.rss)), heap: Math.min(...rs.map((r) => r.heap)) };
  };
  const windows = await windowsOfRows(await spans('delta'), MEMORY_SOCKETS, ROWS.memory);
  log(`memory: ${MEMORY_SOCKETS} sockets at speed=1, ${ROWS.memory} delta rows each`);
  const base = await reading();
  const sockets = [];
  let started = 0;
  const all = windows.map(
    (w) =>
      new Promise((resolve, reject) => {
        let first = true;
        wsReplay({
          base: s.replayUrl,
          venue,
          ticker: w.ticker,
          window: w,
          speed: 1,
          key: s.key,
          onSocket: (ws) => sockets.push(ws),
          onMessage: () => {
            if (!first) return;
            first = false;
            started++;
            resolve();
          },
        }).then(() => first && reject(new Error('a memory socket closed before its first message')), reject);
      }),
  );
  await Promise.all(all);
  const withSockets = await reading();
  for (const ws of sockets) ws.terminate();
  const per = (a, b) => (b - a) / MEMORY_SOCKETS / 1024;
  return [
    `| replay memory, ${started} sockets replaying at speed=1 (each window ${fmt(ROWS.memory)} delta rows) | RSS | heap used |`,
    '| --- | ---: | ---: |',
    `| none open | ${fmt(base.rss / 2 ** 20, 1)} MiB | ${fmt(base.heap / 2 ** 20, 1)} MiB |`,
    `| ${started} open | ${fmt(withSockets.rss / 2 ** 20, 1)} MiB | ${fmt(withSockets.heap / 2 ** 20, 1)} MiB |`,
    `| **per socket** | **${fmt(per(base.rss, withSockets.rss))} KiB** | **${fmt(per(base.heap, withSockets.heap))} KiB** |`,
    `| per delta row of its window | ${fmt((per(base.rss, withSockets.rss) * 1024) / ROWS.memory)} B | ${fmt((per(base.heap, withSockets.heap) * 1024) / ROWS.memory)} B |`,
  ];
}

// --- (3) pacing ---------------------------------------------------------------------------------------------------
const TS = /"ts":"([^"]+)"/;
async function pacing(s) {
  const all = await spans('delta');
  // REPLAYS windows of PACING_SECONDS, over the tickers in turn, each ticker's one after another.
  const windows = [];
  for (let i = 0; i < REPLAYS; i++) {
    const span = all[i % all.length];
    const k = Math.floor(i / all.length);
    const room = Math.max(1, Math.floor((span.last - span.first - BOOK_MS) / (PACING_SECONDS * 1000)) - 1);
    const from = span.first + BOOK_MS + (k % room) * PACING_SECONDS * 1000;
    windows.push({ ticker: span.ticker, from, to: from + PACING_SECONDS * 1000 });
  }
  log(`pacing: ${REPLAYS} replays at speed=1 of ${PACING_SECONDS} s; reading their recorded offsets first`);
  const expected = [];
  for (const w of windows) {
    const r = await ndjsonReplay({ base: s.replayUrl, venue, ticker: w.ticker, window: w, key: s.key, lines: true });
    const ts = r.lines.slice(0, -1).map((l) => Date.parse(TS.exec(l.slice(0, 120))[1]));
    expected.push(ts.map((t) => t - ts[0]));
  }
  const arrivals = expected.map((e) => new Float64Array(e.length).fill(NaN));
  log(`  ${expected.reduce((a, e) => a + e.length, 0)} messages expected; replaying`);
  const results = await Promise.all(
    windows.map((w, i) =>
      wsReplay({
        base: s.replayUrl,
        venue,
        ticker: w.ticker,
        window: w,
        speed: 1,
        key: s.key,
        onMessage: (n, at) => {
          if (n < arrivals[i].length) arrivals[i][n] = at;
        },
      }),
    ),
  );
  const lags = [];
  let mismatched = 0;
  const codes = {};
  results.forEach((r, i) => {
    codes[r.code] = (codes[r.code] ?? 0) + 1;
    if (r.messages !== expected[i].length) mismatched++;
    const a = arrivals[i];
    for (let n = 0; n < Math.min(a.length, r.messages); n++) lags.push(a[n] - a[0] - expected[i][n]);
  });
  lags.sort((x, y) => x - y);
  const over = lags.filter((l) => l > 50).length;
  return [
    `| pacing, ${REPLAYS} concurrent replays at speed=1, ${PACING_SECONDS} s each | messages | p50 | p99 | max | over 50 ms |`,
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    `| delivery offset − recorded offset | ${lags.length} | ${fmt(pct(lags, 50), 1)} ms | **${fmt(pct(lags, 99), 1)} ms** | ${fmt(lags.at(-1), 1)} ms | ${fmt((100 * over) / Math.max(1, lags.length), 2)} % |`,
    '',
    `Target: p99 ≤ 50 ms. Close codes: ${Object.entries(codes)
      .map(([c, n]) => `${c} × ${n}`)
      .join(', ')}; replays whose message count differs from their NDJSON replay: ${mismatched}. ` +
      `Offsets are from each replay's first message (the book at \`from\`, recorded offset 0).`,
  ];
}

// --- (4) isolation ------------------------------------------------------------------------------------------------
function fetchStatus(url, key) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, headers: { 'X-API-Key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
  });
}

/** `clients` closed-loop clients for `seconds` after a warm-up: latencies (ms, sorted) and errors. */
async function closedLoop(clients, seconds, next) {
  const times = [];
  let errors = 0;
  const warmUntil = Date.now() + WARMUP_SECONDS * 1000;
  const stopAt = warmUntil + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < stopAt) {
        const t0 = performance.now();
        const ok = await next();
        const ms = performance.now() - t0;
        if (Date.now() < warmUntil) continue;
        if (ok) times.push(ms);
        else errors++;
      }
    }),
  );
  return { times: times.sort((a, b) => a - b), errors };
}

/** A deterministic random sequence (the same requests in every phase). */
function randomFrom(seed) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
}

async function isolation(s) {
  const pool = [
    ...(await spans('delta')).map((sp) => ['deltas', sp]),
    ...(await spans('snapshot')).map((sp) => ['snapshots', sp]),
  ];
  const historyLoad = () => {
    const random = randomFrom(12345);
    return closedLoop(HISTORY_CLIENTS, ISOLATION_SECONDS, async () => {
      const [kind, sp] = pool[Math.floor(random() * pool.length)];
      const at = sp.first + Math.floor(random() * (sp.last - sp.first) * 0.95);
      const status = await fetchStatus(
        `${s.historyUrl}/api/${venue.exchange}/${kind}/${encodeURIComponent(sp.ticker)}?start_ts=${iso(at)}&limit=1000`,
        s.key,
      );
      return status === 200;
    });
  };
  const windows = await windowsOfRows(await spans('delta'), Math.max(REPLAYS, 8), ROWS.isolation);
  const rows = [];
  const row = (who, r) =>
    `| ${who} | ${r.times.length} | ${r.errors} | ${fmt(r.times.length / ISOLATION_SECONDS)} | ${fmt(pct(r.times, 50), 1)} ms | ${fmt(pct(r.times, 99), 1)} ms | ${fmt(r.view.queryMs, 1)} ms | ${fmt(r.view.lagP99Ms, 1)} ms |`;
  const viewed = async (load) => {
    const v0 = await historyView(s.historyUrl);
    const r = await load();
    const v1 = await historyView(s.historyUrl);
    return {
      ...r,
      view: { queryMs: ((v1.sum - v0.sum) / Math.max(1, v1.count - v0.count)) * 1000, lagP99Ms: v1.lagP99 * 1000 },
    };
  };

  log(`isolation: the history API at ${HISTORY_CLIENTS} clients for ${ISOLATION_SECONDS} s, without replays`);
  const before = await viewed(historyLoad);
  rows.push(row('without replays', before));

  log(`isolation: the same with ${REPLAYS} replays at speed=max running`);
  // A process of its own under `nice` (nice execs node: the IPC channel reaches it).
  const worker = spawn(
    'nice',
    [
      '-n',
      String(CLIENTS_NICE),
      process.execPath,
      new URL('./load.mjs', import.meta.url).pathname,
      JSON.stringify({ base: s.replayUrl, venueName: venue.platform, key: s.key, windows, replays: REPLAYS }),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const terminate = () => {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  };
  const workerMessage = () =>
    new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the replay load exited (${code})`)));
    });
  // Every replay has started (its first message), or the load cannot be run.
  let waited;
  await Promise.race([
    workerMessage(),
    new Promise((_, reject) => {
      waited = setTimeout(() => reject(new Error(`the ${REPLAYS} replays did not all start within 120 s`)), 120_000);
    }),
  ])
    .catch((err) => {
      terminate();
      throw err;
    })
    .finally(() => clearTimeout(waited));
  // Where the two cores went meanwhile: the replay, the history service, ClickHouse (when the benchmark started it),
  // the history's clients (this process) and the replays' clients.
  const who = {
    replay: s.replay.pid,
    history: s.history.pid,
    ClickHouse: s.clickhousePid,
    "the history's clients": process.pid,
    "the replays' clients": worker.pid,
  };
  const cpu0 = Object.fromEntries(Object.entries(who).map(([k, pid]) => [k, pid ? cpuMs(pid) : NaN]));
  const t0 = performance.now();
  const during = await viewed(historyLoad);
  const seconds = (performance.now() - t0) / 1000;
  const cores = Object.entries(who)
    .filter(([, pid]) => pid)
    .map(([k, pid]) => `${k} ${fmt((cpuMs(pid) - cpu0[k]) / 1000 / seconds, 2)}`)
    .join(', ');
  worker.send('stop');
  const load = await workerMessage();
  terminate();
  rows.push(row(`with ${REPLAYS} replays at speed=max`, during));

  log('isolation: without replays again');
  const after = await viewed(historyLoad);
  rows.push(row('without replays, after', after));

  const p99 = (r) => pct(r.times, 99);
  return [
    `| history API, ${HISTORY_CLIENTS} closed-loop clients, 1,000-row pages, ${ISOLATION_SECONDS} s | requests | errors | requests/s | p50 | p99 | history's ClickHouse query, mean | history's event-loop delay p99 |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    `| ↳ p99 with replays ÷ without (before) | | | | | **${fmt(p99(during) / p99(before), 2)}×** | | |`,
    '',
    `Target: ≤ 1.2×. The replays meanwhile: ${fmt(load.messages / load.seconds)} messages/s, ${load.replays} finished, ` +
      `${load.failures} failed${load.failures > 0 ? ` (${JSON.stringify(load.why)})` : ''}. CPU meanwhile, in cores: ${cores}. ` +
      `p99 without, after: ${fmt(p99(after) / p99(before), 2)}× before (the machine's drift).`,
  ];
}

async function main() {
  const load0 = os.loadavg();
  const s = await startStack();
  const probe = await wsReplay({
    base: s.replayUrl,
    venue,
    ticker: (await spans('delta'))[0].ticker,
    window: { from: Date.parse(DATA.from) + BOOK_MS, to: Date.parse(DATA.from) + BOOK_MS },
    speed: 'max',
    key: s.key,
  }).catch((err) => {
    throw new Error(`the WebSocket replay of ${venue.name} cannot be driven: ${err.message}`);
  });
  if (probe.code !== 1000)
    throw new Error(`the WebSocket replay of ${venue.name} closed ${probe.code} ${probe.reason}`);

  const out = [
    `## Replay benchmark${QUICK ? ' (--quick: a check, not a measurement)' : ''}`,
    '',
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; Node ${process.version}; ${os.cpus().length} CPUs; ` +
      `load average before: ${load0.map((x) => x.toFixed(2)).join(' ')}. Venue: ${venue.name} (\`${venue.platform}\`); ` +
      `data: ${DATA.tickers} tickers, ${DATA.from} … ${DATA.to}, ${DATA.eventsPerMinute} change messages per minute ` +
      `per ticker (seed). Replay as deployed: ${[
        'CLICKHOUSE_MAX_CONNECTIONS',
        'REPLAY_QUERY_CONCURRENCY',
        'REPLAY_PAGE_ROWS',
      ]
        .map((k) => `${k}=${s.deployed[k]}`)
        .join(
          ', ',
        )}, ${s.heapCap ?? 'no heap cap'}; the replay at nice ${REPLAY_NICE}, the replays' clients at nice ${CLIENTS_NICE}.`,
    '',
    ...(ONLY.has('throughput') ? ['### Throughput at speed=max', '', ...(await throughput(s)), ''] : []),
    ...(ONLY.has('memory') ? ['### Memory per replay socket', '', ...(await memory(s)), ''] : []),
    ...(ONLY.has('pacing') ? ['### Pacing at speed=1', '', ...(await pacing(s)), ''] : []),
    ...(ONLY.has('isolation') ? ['### Isolation of the history API', '', ...(await isolation(s)), ''] : []),
    `Load average after: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}.`,
  ];
  console.log(out.join('\n'));
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    if (external) await ch(SQL.dropDatabase()).catch(() => undefined);
    else {
      for (const [script, sub] of [
        ['redis.sh', path.join(dir, 'redis')],
        ['clickhouse.sh', path.join(dataDir, 'clickhouse')],
      ]) {
        try {
          execFileSync(path.join(ROOT, 'infra/local', script), ['stop', '--dir', sub], { stdio: 'ignore' });
        } catch {
          /* already stopped */
        }
      }
    }
    if (!has('--keep')) cleanup(dir);
    agent.destroy();
  });
