/**
 * History service benchmark (run by bench/history/run.sh, which starts everything it needs). Measures, on the
 * data set already loaded:
 *
 * 1. rows/s of 10k, 100k and 1M-row snapshot and delta responses, gzip off and on, beside ClickHouse's own HTTP
 *    interface returning the same rows as JSONEachRow (its default gzip level 3 when gzip is on) — interleaved runs,
 *    median of each; the target is ≥ 0.7× ClickHouse;
 * 2. p50/p99 latency of 1,000-row queries from 32 concurrent keep-alive clients (this Node process, node:http);
 * 3. the service's peak RSS while it streams 1M rows (sampled from /proc every 20 ms).
 *
 * Environment: HISTORY_URL, API_KEY, CLICKHOUSE_URL, CLICKHOUSE_DATABASE, CLICKHOUSE_CLUSTER, SERVICE_PID; BENCH_QUICK=1 for a short
 * run (10k/100k only, 10 s of latency).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';

const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is not set (run bench/history/run.sh)`);
  return v;
};
const HISTORY_URL = env('HISTORY_URL');
const API_KEY = env('API_KEY');
const CLICKHOUSE_URL = env('CLICKHOUSE_URL');
const DB = env('CLICKHOUSE_DATABASE', 'bench');
/** Cluster mode (`run.sh --cluster`): the cluster the tables are spread over. */
const CLUSTER = process.env.CLICKHOUSE_CLUSTER ?? '';
const SERVICE_PID = Number(env('SERVICE_PID'));
const CLICKHOUSE_PID = Number(env('CLICKHOUSE_PID', '0'));
const ONLY = process.env.BENCH_ONLY;
const QUICK = process.env.BENCH_QUICK === '1';
if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(DB)) throw new Error('bad database name');

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Fetched {
  status: number;
  bytes: number;
  ms: number;
  body?: Buffer;
  headers: http.IncomingHttpHeaders;
}

/** One HTTP exchange; the body is kept only when asked (large bodies are counted, not stored). */
function fetchRaw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; keep?: boolean } = {},
): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
      let bytes = 0;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (options.keep) chunks.push(c);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          bytes,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          body: options.keep ? Buffer.concat(chunks) : undefined,
          headers: res.headers,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function ch(query: string): Promise<string> {
  const r = await fetchRaw(CLICKHOUSE_URL, { method: 'POST', body: query, keep: true });
  const text = r.body?.toString('utf8') ?? '';
  if (r.status !== 200) throw new Error(`ClickHouse ${r.status}: ${text.slice(0, 300)}`);
  return text;
}

async function chRows<T>(query: string): Promise<T[]> {
  return (await ch(`${query} FORMAT JSONEachRow`))
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as T);
}

const iso = (ms: number) => new Date(ms).toISOString();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

type Kind = 'snapshots' | 'deltas';
interface Span {
  exchange: string;
  ticker: string;
  rows: number;
  first: number;
  last: number;
}

async function spans(kind: Kind): Promise<Span[]> {
  const k = kind === 'snapshots' ? 'snapshot' : 'delta';
  const rows = await chRows<{ ex: string; ticker: string; n: string; f: string; l: string }>(
    `SELECT toString(exchange) AS ex, ticker, countMerge(row_count) AS n, minMerge(first_ts) AS f, maxMerge(last_ts) AS l
     FROM ${DB}.ticker_catalogue WHERE kind = '${k}' GROUP BY exchange, ticker ORDER BY n DESC`,
  );
  return rows.map((r) => ({
    exchange: r.ex,
    ticker: r.ticker,
    rows: Number(r.n),
    first: Number(r.f),
    last: Number(r.l),
  }));
}

/** [start, end] of the first `n` rows of a ticker at or after `from` (end = ts of the n-th row). */
async function rangeFor(kind: Kind, s: Span, n: number, from: number): Promise<[number, number]> {
  const [row] = await chRows<{ ts: string }>(
    `SELECT ts FROM ${DB}.${kind} WHERE exchange = '${s.exchange}' AND ticker = '${s.ticker}' AND ts >= ${from}
     ORDER BY ts LIMIT 1 OFFSET ${n - 1}`,
  );
  if (!row) throw new Error(`${s.ticker} has fewer than ${n} ${kind} rows after ${iso(from)}`);
  return [from, Number(row.ts)];
}

function clickhouseQuery(kind: Kind, s: Span, [start, end]: [number, number], n: number): string {
  const where = `exchange = '${s.exchange}' AND ticker = '${s.ticker}' AND ts >= ${start} AND ts <= ${end}`;
  // The same rows the service returns: for snapshots every row up to the n-th row's ts (whole books).
  return kind === 'deltas'
    ? `SELECT ts, sequence, side, price, quantity_delta FROM ${DB}.deltas WHERE ${where} ORDER BY ts, sequence LIMIT ${n} FORMAT JSONEachRow`
    : `SELECT ts, side, price, quantity FROM ${DB}.snapshots WHERE ${where} ORDER BY ts, side, toFloat64(price) FORMAT JSONEachRow`;
}

function countQuery(kind: Kind, s: Span, [start, end]: [number, number], n: number): string {
  const where = `exchange = '${s.exchange}' AND ticker = '${s.ticker}' AND ts >= ${start} AND ts <= ${end}`;
  return kind === 'deltas'
    ? `SELECT count() FROM (SELECT ts FROM ${DB}.deltas WHERE ${where} ORDER BY ts, sequence LIMIT ${n})`
    : `SELECT count() FROM ${DB}.snapshots WHERE ${where}`;
}

function serviceUrl(kind: Kind, s: Span, [start, end]: [number, number], n: number): string {
  return `${HISTORY_URL}/api/${s.exchange}/${kind}/${s.ticker}?start_ts=${iso(start)}&end_ts=${iso(end)}&limit=${n}`;
}

const gzipHeaders = (gzip: boolean) => ({ 'accept-encoding': gzip ? 'gzip' : 'identity' });

async function throughput(): Promise<string[]> {
  const lines = [
    '| rows | endpoint | gzip | service rows/s | ClickHouse JSONEachRow rows/s | ratio | service MB | ClickHouse MB |',
    '| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  const sizes = QUICK ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
  for (const kind of ['deltas', 'snapshots'] as Kind[]) {
    const top = (await spans(kind))[0] as Span;
    for (const n of sizes) {
      const range = await rangeFor(kind, top, n, top.first + Math.floor((top.last - top.first) / 5));
      // Check once (untimed) that both sides return the same number of rows.
      const check = await fetchRaw(serviceUrl(kind, top, range, n), {
        headers: { 'x-api-key': API_KEY, ...gzipHeaders(false) },
        keep: true,
      });
      const count = Number(/"count":(\d+)\}$/.exec(check.body?.toString('utf8').slice(-40) ?? '')?.[1]);
      const chCount = Number((await ch(countQuery(kind, top, range, n))).trim());
      if (check.status !== 200 || count !== chCount)
        throw new Error(`row counts differ for ${kind} ${n}: service ${count}, ClickHouse ${chCount}`);
      for (const gzip of [false, true]) {
        const ours: number[] = [];
        const theirs: number[] = [];
        let ourBytes = 0;
        let theirBytes = 0;
        const runs = n >= 1_000_000 ? 3 : n >= 100_000 ? 5 : 9;
        for (let i = 0; i < runs; i++) {
          const a = await fetchRaw(serviceUrl(kind, top, range, n), {
            headers: { 'x-api-key': API_KEY, ...gzipHeaders(gzip) },
          });
          if (a.status !== 200) throw new Error(`service answered ${a.status}`);
          ours.push(a.ms);
          ourBytes = a.bytes;
          const b = await fetchRaw(`${CLICKHOUSE_URL}/?enable_http_compression=${gzip ? 1 : 0}`, {
            method: 'POST',
            body: clickhouseQuery(kind, top, range, n),
            headers: gzipHeaders(gzip),
          });
          if (b.status !== 200) throw new Error(`ClickHouse answered ${b.status}`);
          theirs.push(b.ms);
          theirBytes = b.bytes;
        }
        const ourRate = (count * 1000) / median(ours);
        const theirRate = (count * 1000) / median(theirs);
        lines.push(
          `| ${fmt(count)} | ${kind} | ${gzip ? 'on' : 'off'} | ${fmt(ourRate)} | ${fmt(theirRate)} | ${(ourRate / theirRate).toFixed(2)}× | ${(ourBytes / 1e6).toFixed(1)} | ${(theirBytes / 1e6).toFixed(1)} |`,
        );
        console.error(lines[lines.length - 1]);
      }
    }
  }
  return lines;
}

/** Who answers in a latency run: the service, or ClickHouse's own HTTP interface given the same windows. */
type Target = 'service' | 'clickhouse';

/** 1,000-row requests from 32 concurrent clients for `seconds`; returns one table row and the CPU line. */
async function latencyRun(target: Target, gzip: boolean): Promise<{ row: string; cpu: string }> {
  const clients = 32;
  const seconds = QUICK ? 10 : 30;
  const limit = 1000;
  const pool = [
    ...(await spans('deltas')).map((s) => ['deltas', s] as const),
    ...(await spans('snapshots')).map((s) => ['snapshots', s] as const),
  ];
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  // The same sequence of (kind, ticker, start) for both targets. ClickHouse gets the window the service's planner
  // would choose (limit × 1.25 rows at the ticker's mean density) and one thread, as the service asks for.
  const next = (): Promise<Fetched> => {
    const [kind, s] = pool[Math.floor(random() * pool.length)] as (typeof pool)[number];
    const start = s.first + Math.floor(random() * (s.last - s.first) * 0.95);
    if (target === 'service')
      return fetchRaw(`${HISTORY_URL}/api/${s.exchange}/${kind}/${s.ticker}?start_ts=${iso(start)}&limit=${limit}`, {
        headers: { 'x-api-key': API_KEY, ...gzipHeaders(gzip) },
      });
    const end = start + Math.ceil((limit * 1.25 * (s.last - s.first)) / s.rows);
    const where = `exchange = '${s.exchange}' AND ticker = '${s.ticker}' AND ts >= ${start} AND ts < ${end}`;
    const query =
      kind === 'deltas'
        ? `SELECT ts, sequence, side, price, quantity_delta FROM ${DB}.deltas WHERE ${where} ORDER BY ts, sequence LIMIT ${limit} FORMAT JSONEachRow`
        : `SELECT ts, side, price, quantity FROM ${DB}.snapshots WHERE ${where} ORDER BY ts, side, toFloat64(price) LIMIT ${limit} FORMAT JSONEachRow`;
    return fetchRaw(`${CLICKHOUSE_URL}/?max_threads=1&enable_http_compression=${gzip ? 1 : 0}`, {
      method: 'POST',
      body: query,
      headers: gzipHeaders(gzip),
    });
  };
  const times: number[] = [];
  let errors = 0;
  let cpuStart: { service: number; clickhouse: number; self: number } | undefined;
  const warmupUntil = Date.now() + 3000;
  const warm = setTimeout(() => {
    cpuStart = { service: cpuMs(SERVICE_PID), clickhouse: cpuMs(CLICKHOUSE_PID), self: cpuMs(process.pid) };
  }, 3000);
  const stopAt = warmupUntil + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < stopAt) {
        const r = await next();
        if (Date.now() < warmupUntil) continue;
        if (r.status !== 200) errors++;
        else times.push(r.ms);
      }
    }),
  );
  clearTimeout(warm);
  const per = (pid: number, start: number) => ((cpuMs(pid) - start) / Math.max(1, times.length)).toFixed(2);
  const who = target === 'service' ? 'service' : 'ClickHouse directly (JSONEachRow, same windows)';
  const cpu = cpuStart
    ? `${who}, gzip ${gzip ? 'on' : 'off'}: CPU per request: service ${per(SERVICE_PID, cpuStart.service)} ms, ClickHouse ${per(CLICKHOUSE_PID, cpuStart.clickhouse)} ms, load generator ${per(process.pid, cpuStart.self)} ms.`
    : '';
  const sorted = [...times].sort((a, b) => a - b);
  const row = `| ${who} | ${gzip ? 'on' : 'off'} | ${fmt(times.length)} | ${errors} | ${fmt(times.length / seconds)} | ${pct(sorted, 50).toFixed(1)} ms | ${pct(sorted, 90).toFixed(1)} ms | ${pct(sorted, 99).toFixed(1)} ms | ${(sorted[sorted.length - 1] ?? 0).toFixed(1)} ms |`;
  console.error(row);
  return { row, cpu };
}

async function latency(): Promise<string[]> {
  const runs: { row: string; cpu: string }[] = [];
  for (const gzip of process.env.BENCH_LATENCY_GZIP === '0' ? [false] : [false, true])
    for (const target of ['service', 'clickhouse'] as Target[]) runs.push(await latencyRun(target, gzip));
  return [
    '| answered by | gzip | requests | errors | requests/s | p50 | p90 | p99 | max |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...runs.map((r) => r.row),
    '',
    `(1,000-row requests, snapshots and deltas at random over the data set's tickers, random start_ts, 32 clients; ${QUICK ? 10 : 30} s each after a 3 s warm-up)`,
    '',
    ...runs.map((r) => `- ${r.cpu}`),
  ];
}

/** CPU time (user + system) a process has used, in ms (0 when unknown). */
function cpuMs(pid: number): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
  } catch {
    return 0;
  }
}

function rssKb(): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${SERVICE_PID}/status`, 'utf8');
  const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: get('VmRSS'), hwm: get('VmHWM') };
}

async function memory(state: string): Promise<string[]> {
  const lines: string[] = [];
  const n = QUICK ? 100_000 : 1_000_000;
  for (const kind of ['deltas', 'snapshots'] as Kind[]) {
    const top = (await spans(kind))[0] as Span;
    const range = await rangeFor(kind, top, n, top.first);
    for (const gzip of [false, true]) {
      const before = rssKb().rss;
      let peak = before;
      const timer = setInterval(() => {
        peak = Math.max(peak, rssKb().rss);
      }, 20);
      const r = await fetchRaw(serviceUrl(kind, top, range, n), {
        headers: { 'x-api-key': API_KEY, ...gzipHeaders(gzip) },
      });
      clearInterval(timer);
      peak = Math.max(peak, rssKb().rss);
      lines.push(
        `| ${state} | ${fmt(n)} ${kind} (${(r.bytes / 1e6).toFixed(0)} MB sent) | ${gzip ? 'on' : 'off'} | ${(before / 1024).toFixed(0)} MB | ${(peak / 1024).toFixed(0)} MB | ${(r.ms / 1000).toFixed(2)} s |`,
      );
      console.error(lines[lines.length - 1]);
    }
  }
  return lines;
}

async function main(): Promise<void> {
  const [version] = await chRows<{ v: string }>('SELECT version() AS v');
  // In cluster mode the rows are in each shard's `_local` tables: one replica of every shard, summed.
  const parts = CLUSTER ? `cluster('${CLUSTER}', system, parts)` : 'system.parts';
  const suffix = CLUSTER ? '_local' : '';
  const totalsQuery = (bytes: string) =>
    `SELECT replaceOne(table, '_local', '') AS name, sum(rows) AS rows, sum(${bytes}) AS bytes, count() AS parts
     FROM ${parts} WHERE database = '${DB}' AND active AND table IN ('snapshots${suffix}', 'deltas${suffix}')
     GROUP BY name ORDER BY name`;
  const totals = await chRows<{ name: string; rows: string; bytes: string; parts: string }>(
    totalsQuery('bytes_on_disk'),
  ).catch(async () => chRows<{ name: string; rows: string; bytes: string; parts: string }>(totalsQuery('bytes')));
  const total = totals.reduce((n, t) => n + Number(t.rows), 0);
  const header = [
    `Data set: ${fmt(total)} rows (${totals.map((t) => `${t.name} ${fmt(Number(t.rows))} rows, ${(Number(t.bytes) / 2 ** 20).toFixed(0)} MiB on disk in ${t.parts} parts`).join('; ')}).`,
    `ClickHouse ${version?.v}; Node ${process.version}; ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}); load average before: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}.`,
  ];
  console.error(header.join('\n'));
  const sections: string[] = [...header];
  // Memory first on the fresh process (the target's case), and again at the end, after the load phases.
  const memoryHeader = [
    '| service | response | gzip | RSS before | peak RSS while streaming | duration |',
    '| --- | --- | --- | ---: | ---: | ---: |',
  ];
  const fresh = !ONLY || ONLY === 'memory' ? await memory('freshly started') : [];
  if (!ONLY || ONLY === 'throughput') sections.push('', '### Throughput', '', ...(await throughput()));
  if (!ONLY || ONLY === 'latency') {
    console.error('measuring latency at 32 concurrent clients …');
    sections.push('', '### Latency of 1,000-row queries', '', ...(await latency()));
  }
  if (!ONLY || ONLY === 'memory') {
    const after = ONLY ? [] : await memory('after the runs above');
    sections.push('', '### Service memory while streaming', '', ...memoryHeader, ...fresh, ...after);
  }
  sections.push(
    '',
    `Load average after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}.`,
  );
  process.stdout.write(`${sections.join('\n')}\n`);
  agent.destroy();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
