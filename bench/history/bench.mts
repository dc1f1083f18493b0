/**
 * History service benchmark (run by bench/history/run.sh, which starts everything it needs). Measures, on the
 * data set already loaded, every figure beside its anchor measured in the same run:
 *
 * 1. throughput: rows/s of 10k, 100k and 1M-row snapshot and delta responses (JSON), gzip off and on, beside
 *    ClickHouse's own HTTP interface returning the same rows as JSONEachRow — interleaved runs after unmeasured warm-up ones, median of each;
 * 2. latency: p50/p99 of 1,000-row queries from 32 concurrent keep-alive clients, beside ClickHouse given the same
 *    windows;
 * 3. memory: the service's peak RSS while it streams 1M rows;
 * 4. book: the book at a random moment from 32 clients, beside ClickHouse answering the same snapshot-and-delta and
 *    gap queries (the service's own SQL) directly; CPU per book answer beside paging the same deltas as 1,000-row
 *    JSON through the service; `reads`: the book's table reads one at a time, beside one page's read;
 * 5. bulk: NDJSON and CSV rows/s beside ClickHouse's own JSONEachRow and CSVWithNames for the same rows, gzip off
 *    and on; then the service's RSS while it streams a whole month of the busiest ticker to a reader that reads at
 *    5 % of the NDJSON rate just measured;
 * 6. cursor: 1M deltas walked in 1,000-row pages by next_cursor: the last pages beside the first.
 * 7. trades (issue 23): the trades' NDJSON and CSV streams beside ClickHouse's own JSONEachRow and CSVWithNames for
 *    the same rows (one per trade, in the service's order), gzip off and on; 1-minute bars over a whole month of the
 *    busiest ticker, p50/p99 beside ClickHouse answering the same aggregation (the service's bars query) directly;
 *    Parquet streams of deltas, snapshots and trades: rows/s beside the NDJSON stream of the same rows, and the
 *    file's size beside the gzipped NDJSON.
 *
 * Every ClickHouse query of the benchmark comes from @depthgate/history-store's build (`benchmarkSql`, and for the
 * book the service's own builders): no SQL is written here.
 *
 * Environment: HISTORY_URL, API_KEY, CLICKHOUSE_URL, CLICKHOUSE_DATABASE, CLICKHOUSE_CLUSTER (cluster mode), SERVICE_PID,
 * CLICKHOUSE_PID; BENCH_QUICK=1 for a short run; BENCH_ONLY=throughput|latency|memory|book|reads|bulk|cursor|trades (comma-separated) for some parts.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { BOOK_FIRST_LOOK_BACK_MS, BOOK_LAYOUT, benchmarkSql, type AnchorFormat } from '@depthgate/history-store';
import type { ExchangeKey } from '@depthgate/platforms';

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
const ONLY = new Set((process.env.BENCH_ONLY ?? '').split(',').filter((s) => s !== ''));
const QUICK = process.env.BENCH_QUICK === '1';
const wanted = (part: string) => ONLY.size === 0 || ONLY.has(part);
/** The earliest ts the bench key may read (a key without max_data_age_days: the start of history). */
const HISTORY_START = Date.UTC(2026, 2, 7);
const SQL = benchmarkSql(DB, CLUSTER === '' ? undefined : CLUSTER);

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Fetched {
  status: number;
  bytes: number;
  ms: number;
  body?: Buffer;
  headers: http.IncomingHttpHeaders;
}

/**
 * One HTTP exchange; the body is kept only when asked (large bodies are counted, not stored). `readBytesPerSecond`
 * reads no faster than that (a slow reader: it pauses the response between chunks).
 */
function fetchRaw(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    keep?: boolean;
    readBytesPerSecond?: number;
  } = {},
): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
      let bytes = 0;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (options.keep) chunks.push(c);
        const rate = options.readBytesPerSecond;
        if (rate !== undefined) {
          const due = (bytes / rate) * 1000 - Number(process.hrtime.bigint() - started) / 1e6;
          if (due > 0) {
            res.pause();
            setTimeout(() => res.resume(), due);
          }
        }
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

/** A query to ClickHouse over HTTP (the benchmark's text from history-store), its body. */
async function ch(query: string, settings: Record<string, string | number> = {}): Promise<Buffer> {
  const params = new URLSearchParams(Object.entries(settings).map(([k, v]): [string, string] => [k, String(v)]));
  const r = await fetchRaw(`${CLICKHOUSE_URL}/?${params.toString()}`, { method: 'POST', body: query, keep: true });
  const body = r.body ?? Buffer.alloc(0);
  if (r.status !== 200) throw new Error(`ClickHouse ${r.status}: ${body.toString('utf8').slice(0, 300)}`);
  return body;
}

async function chRows<T>(query: string): Promise<T[]> {
  return (await ch(`${query} FORMAT JSONEachRow`))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as T);
}

const iso = (ms: number) => new Date(ms).toISOString();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
/** The p-th percentile of a sorted list, by nearest rank as bench/lib.mjs's `pct` (the p99 of 100 is the second largest). */
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const keyHeaders = (gzip: boolean) => ({ 'x-api-key': API_KEY, 'accept-encoding': gzip ? 'gzip' : 'identity' });

/** A seeded sequence, so that the service and ClickHouse are given the same work. */
function randomFrom(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

type Kind = 'snapshots' | 'deltas' | 'trades';
const ROW_KIND = { snapshots: 'snapshot', deltas: 'delta', trades: 'trade' } as const;
interface Span {
  exchange: ExchangeKey;
  ticker: string;
  rows: number;
  first: number;
  last: number;
}

async function spans(kind: Kind): Promise<Span[]> {
  const rows = await chRows<{ ex: string; ticker: string; n: string; f: string; l: string }>(SQL.spans(ROW_KIND[kind]));
  return rows.map((r) => ({
    exchange: r.ex as Span['exchange'],
    ticker: r.ticker,
    rows: Number(r.n),
    first: Number(r.f),
    last: Number(r.l),
  }));
}

/** [start, end] of the first `n` rows of a ticker at or after `from` (end = ts of the n-th row). */
async function rangeFor(kind: Kind, s: Span, n: number, from: number): Promise<[number, number]> {
  const [row] = await chRows<{ ts: string }>(SQL.nthTs(ROW_KIND[kind], s.exchange, s.ticker, from, n));
  if (!row) throw new Error(`${s.ticker} has fewer than ${n} ${kind} rows after ${iso(from)}`);
  return [from, Number(row.ts)];
}

const inclusive = ([from, to]: [number, number]) => ({ from, to, toInclusive: true });

/**
 * The range a bulk measurement reads: from a third into the ticker's span, a million rows (100,000 with --quick), or
 * all the ticker holds from there when that is fewer (a data set whose busiest ticker is small).
 */
async function bulkRange(kind: Kind, s: Span): Promise<[number, number]> {
  const from = s.first + Math.floor((s.last - s.first) / 3);
  const [held] = await chRows<{ n: string }>(
    SQL.count(ROW_KIND[kind], s.exchange, s.ticker, inclusive([from, s.last])),
  );
  return rangeFor(kind, s, Math.min(QUICK ? 100_000 : 1_000_000, Number(held?.n)), from);
}

function serviceUrl(kind: Kind, s: Span, [start, end]: [number, number], query: string): string {
  return `${HISTORY_URL}/api/${s.exchange}/${kind}/${s.ticker}?start_ts=${iso(start)}&end_ts=${iso(end)}&${query}`;
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

function rssKb(): number {
  const status = readFileSync(`/proc/${SERVICE_PID}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
}

/** CPU of the service and ClickHouse between start() and stop(), per unit of work. */
function cpuMeter() {
  const start = { service: cpuMs(SERVICE_PID), clickhouse: cpuMs(CLICKHOUSE_PID) };
  return (units: number) => ({
    service: (cpuMs(SERVICE_PID) - start.service) / Math.max(1, units),
    clickhouse: (cpuMs(CLICKHOUSE_PID) - start.clickhouse) / Math.max(1, units),
  });
}

/** Rows each side of a comparison serves, unmeasured, before it is measured (see warmUp). */
const WARM_UP_ROWS = 1_000_000;

/**
 * Unmeasured rounds of each of `sides` (in turn) before a comparison measures them: enough for about WARM_UP_ROWS
 * rows through each when a round serves `rows`, at least 3 and at most 50. Both sides start cold in a run: the
 * service's JIT has not compiled its per-request paths nor its heap grown to its working size, ClickHouse's caches
 * are empty. On 20,145 trades a fresh service took 65, 42, then 34 ms (medians of its first three tens of requests)
 * and settled near 30 ms after about fifty; five rounds from cold had put the trades stream at 0.5× ClickHouse where
 * warm runs gave 0.7–0.9× (docs/benchmarks.md, "Warm-up and the allocator").
 */
async function warmUp(rows: number, ...sides: (() => Promise<unknown>)[]): Promise<void> {
  const rounds = Math.min(50, Math.max(3, Math.ceil(WARM_UP_ROWS / Math.max(1, rows))));
  for (let i = 0; i < rounds; i++) for (const side of sides) await side();
}

/** `runs` timings (ms) of each of `a` and `b`, the one going first alternating from round to round. */
async function alternate(
  runs: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<{ a: number[]; b: number[] }> {
  const times = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      times.a.push(await a());
      times.b.push(await b());
    } else {
      times.b.push(await b());
      times.a.push(await a());
    }
  }
  return times;
}

/**
 * `runs` interleaved timings of the service's `url` and ClickHouse answering `anchor` itself, gzip off or on, after
 * a warm-up: the median rows/s of each for `count` rows, and the bytes each sent.
 */
async function interleaved(
  url: string,
  anchor: string,
  count: number,
  gzip: boolean,
  runs: number,
): Promise<{ ourRate: number; theirRate: number; ourBytes: number; theirBytes: number }> {
  let ourBytes = 0;
  let theirBytes = 0;
  const service = async () => {
    const a = await fetchRaw(url, { headers: keyHeaders(gzip) });
    if (a.status !== 200) throw new Error(`service answered ${a.status}`);
    ourBytes = a.bytes;
    return a.ms;
  };
  const clickhouse = async () => {
    const b = await fetchRaw(`${CLICKHOUSE_URL}/?enable_http_compression=${gzip ? 1 : 0}`, {
      method: 'POST',
      body: anchor,
      headers: { 'accept-encoding': gzip ? 'gzip' : 'identity' },
    });
    if (b.status !== 200) throw new Error(`ClickHouse answered ${b.status}`);
    theirBytes = b.bytes;
    return b.ms;
  };
  await warmUp(count, service, clickhouse);
  const times = await alternate(runs, service, clickhouse);
  return {
    ourRate: (count * 1000) / median(times.a),
    theirRate: (count * 1000) / median(times.b),
    ourBytes,
    theirBytes,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Throughput of JSON pages

async function throughput(): Promise<string[]> {
  const lines = [
    '| rows | endpoint | gzip | service rows/s | ClickHouse JSONEachRow rows/s | ratio | service MB | ClickHouse MB |',
    '| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  const sizes = QUICK ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
  for (const kind of ['deltas', 'snapshots'] as Kind[]) {
    const top = (await spans(kind))[0] as Span;
    const from = top.first + Math.floor((top.last - top.first) / 5);
    // A size the ticker does not hold from there is measured at what it holds (generator 4's data set has about
    // 550,000 deltas a ticker).
    const [held] = await chRows<{ n: string }>(
      SQL.count(ROW_KIND[kind], top.exchange, top.ticker, inclusive([from, top.last])),
    );
    for (const n of [...new Set(sizes.map((size) => Math.min(size, Number(held?.n))))]) {
      const range = await rangeFor(kind, top, n, from);
      const limit = kind === 'deltas' ? n : undefined;
      const check = await fetchRaw(serviceUrl(kind, top, range, `limit=${n}`), {
        headers: keyHeaders(false),
        keep: true,
      });
      const count = Number(/"count":(\d+)\}$/.exec(check.body?.toString('utf8').slice(-40) ?? '')?.[1]);
      const [chCount] = await chRows<{ n: string }>(
        SQL.count(ROW_KIND[kind], top.exchange, top.ticker, inclusive(range), limit),
      );
      if (check.status !== 200 || count !== Number(chCount?.n)) {
        throw new Error(`row counts differ for ${kind} ${n}: service ${count}, ClickHouse ${chCount?.n}`);
      }
      const anchor = SQL.rows(ROW_KIND[kind], top.exchange, top.ticker, inclusive(range), {
        limit,
        format: 'JSONEachRow',
      });
      for (const gzip of [false, true]) {
        const runs = n >= 1_000_000 ? 3 : n >= 100_000 ? 5 : 9;
        const r = await interleaved(serviceUrl(kind, top, range, `limit=${n}`), anchor, count, gzip, runs);
        lines.push(
          `| ${fmt(count)} | ${kind} | ${gzip ? 'on' : 'off'} | ${fmt(r.ourRate)} | ${fmt(r.theirRate)} | ${(r.ourRate / r.theirRate).toFixed(2)}× | ${(r.ourBytes / 1e6).toFixed(1)} | ${(r.theirBytes / 1e6).toFixed(1)} |`,
        );
        console.error(lines[lines.length - 1]);
      }
    }
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Latency of 1,000-row pages at 32 clients

/** Runs `next` from `clients` concurrent loops for `seconds` after a 3 s warm-up; latencies and CPU per request. */
async function closedLoop(
  clients: number,
  seconds: number,
  next: () => Promise<{ ok: boolean; units?: number }>,
): Promise<{
  times: number[];
  errors: number;
  units: number;
  cpu: { service: number; clickhouse: number; self: number };
}> {
  const times: number[] = [];
  let errors = 0;
  let units = 0;
  let meter: ReturnType<typeof cpuMeter> | undefined;
  let selfStart = 0;
  const warmupUntil = Date.now() + 3000;
  const warm = setTimeout(() => {
    meter = cpuMeter();
    selfStart = cpuMs(process.pid);
  }, 3000);
  const stopAt = warmupUntil + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < stopAt) {
        const started = process.hrtime.bigint();
        const r = await next();
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (Date.now() < warmupUntil || meter === undefined) continue;
        if (!r.ok) errors++;
        else {
          times.push(ms);
          units += r.units ?? 1;
        }
      }
    }),
  );
  clearTimeout(warm);
  const per = meter ? meter(times.length) : { service: NaN, clickhouse: NaN };
  return {
    times: times.sort((a, b) => a - b),
    errors,
    units,
    cpu: { ...per, self: (cpuMs(process.pid) - selfStart) / Math.max(1, times.length) },
  };
}

function latencyRow(who: string, gzip: string, seconds: number, r: Awaited<ReturnType<typeof closedLoop>>): string {
  const t = r.times;
  return `| ${who} | ${gzip} | ${fmt(t.length)} | ${r.errors} | ${fmt(t.length / seconds)} | ${pct(t, 50).toFixed(1)} ms | ${pct(t, 90).toFixed(1)} ms | ${pct(t, 99).toFixed(1)} ms | ${(t[t.length - 1] ?? 0).toFixed(1)} ms |`;
}

async function latency(): Promise<string[]> {
  const clients = 32;
  const seconds = QUICK ? 10 : 30;
  const limit = 1000;
  const pool = [
    ...(await spans('deltas')).map((s) => ['deltas', s] as const),
    ...(await spans('snapshots')).map((s) => ['snapshots', s] as const),
  ];
  const rows: string[] = [];
  const cpu: string[] = [];
  for (const gzip of process.env.BENCH_LATENCY_GZIP === '0' ? [false] : [false, true]) {
    for (const target of ['service', 'clickhouse'] as const) {
      // The same sequence of (kind, ticker, start) for both. ClickHouse gets the window the service's planner would
      // choose (limit × 1.25 rows at the ticker's mean density) and one thread, as the service asks for.
      const random = randomFrom(12345);
      const r = await closedLoop(clients, seconds, async () => {
        const [kind, s] = pool[Math.floor(random() * pool.length)] as (typeof pool)[number];
        const start = s.first + Math.floor(random() * (s.last - s.first) * 0.95);
        if (target === 'service') {
          const a = await fetchRaw(
            `${HISTORY_URL}/api/${s.exchange}/${kind}/${s.ticker}?start_ts=${iso(start)}&limit=${limit}`,
            {
              headers: keyHeaders(gzip),
            },
          );
          return { ok: a.status === 200 };
        }
        const end = start + Math.ceil((limit * 1.25 * (s.last - s.first)) / s.rows);
        const window = { from: start, to: end, toInclusive: false };
        const b = await fetchRaw(`${CLICKHOUSE_URL}/?max_threads=1&enable_http_compression=${gzip ? 1 : 0}`, {
          method: 'POST',
          body: SQL.rows(ROW_KIND[kind], s.exchange, s.ticker, window, { limit, format: 'JSONEachRow' }),
          headers: { 'accept-encoding': gzip ? 'gzip' : 'identity' },
        });
        return { ok: b.status === 200 };
      });
      const who = target === 'service' ? 'service' : 'ClickHouse directly (JSONEachRow, same windows)';
      rows.push(latencyRow(who, gzip ? 'on' : 'off', seconds, r));
      console.error(rows[rows.length - 1]);
      cpu.push(
        `- ${who}, gzip ${gzip ? 'on' : 'off'}: CPU per request: service ${r.cpu.service.toFixed(2)} ms, ClickHouse ${r.cpu.clickhouse.toFixed(2)} ms, load generator ${r.cpu.self.toFixed(2)} ms.`,
      );
    }
  }
  return [
    '| answered by | gzip | requests | errors | requests/s | p50 | p90 | p99 | max |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    `(1,000-row requests, snapshots and deltas at random over the data set's tickers, random start_ts, ${clients} clients; ${seconds} s each after a 3 s warm-up)`,
    '',
    ...cpu,
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// 3. Memory while streaming 1M rows

async function memory(state: string): Promise<string[]> {
  const lines: string[] = [];
  const n = QUICK ? 100_000 : 1_000_000;
  for (const kind of ['deltas', 'snapshots'] as Kind[]) {
    const top = (await spans(kind))[0] as Span;
    const range = await rangeFor(kind, top, n, top.first);
    for (const gzip of [false, true]) {
      const before = rssKb();
      let peak = before;
      const timer = setInterval(() => (peak = Math.max(peak, rssKb())), 20);
      const r = await fetchRaw(serviceUrl(kind, top, range, `limit=${n}`), { headers: keyHeaders(gzip) });
      clearInterval(timer);
      peak = Math.max(peak, rssKb());
      lines.push(
        `| ${state} | ${fmt(n)} ${kind} (${(r.bytes / 1e6).toFixed(0)} MB sent) | ${gzip ? 'on' : 'off'} | ${(before / 1024).toFixed(0)} MB | ${(peak / 1024).toFixed(0)} MB | ${(r.ms / 1000).toFixed(2)} s |`,
      );
      console.error(lines[lines.length - 1]);
    }
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------------------
// 4. The book at a random moment

interface Moment {
  s: Span;
  at: number;
}

/** A random moment of a random ticker (the book phases' sequence, given the same seed). */
function randomMoment(tickers: Span[], random: () => number): Moment {
  const s = tickers[Math.floor(random() * tickers.length)] as Span;
  return { s, at: s.first + 600_000 + Math.floor(random() * (s.last - s.first - 600_000)) };
}

/** Where the service's first book read starts for a moment: BOOK_FIRST_LOOK_BACK_MS before it, within history. */
const firstBookRead = (m: Moment) => Math.max(HISTORY_START, m.at - BOOK_FIRST_LOOK_BACK_MS);

/**
 * ClickHouse answering the service's book reads directly, as the service asks them: the last 15 minutes' snapshots,
 * deltas and gaps in one read; only when that holds no snapshot and no gap, where the book starts and a read from
 * there.
 */
async function bookFromClickHouse(m: Moment): Promise<boolean> {
  const first = firstBookRead(m);
  const raw = await ch(SQL.book(m.s.exchange, m.s.ticker, first, m.at), { max_threads: 1 });
  let kinds = 0;
  for (let o = 0; o + BOOK_LAYOUT.size <= raw.length; o += BOOK_LAYOUT.size) kinds |= 1 << (raw[o] as number);
  if ((kinds & ((1 << 1) | (1 << 3))) === 0 && first > HISTORY_START) {
    const [base] = await chRows<{ snapshot_ts: string; gap_end: string }>(
      SQL.bookBase(m.s.exchange, m.s.ticker, HISTORY_START, m.at),
    );
    const from = Math.max(Number(base?.snapshot_ts ?? 0), Number(base?.gap_end ?? 0));
    if (from > 0) await ch(SQL.book(m.s.exchange, m.s.ticker, from, m.at), { max_threads: 1 });
  }
  return true;
}

async function book(): Promise<string[]> {
  const clients = 32;
  const seconds = QUICK ? 10 : 30;
  const tickers = await spans('deltas');
  const lines: string[] = [];
  const cpu: string[] = [];
  // Where each moment's book started (from the service's answers): the deltas a client would page instead.
  const snapshotOf = new Map<string, number>();
  const key = (m: Moment) => `${m.s.exchange}/${m.s.ticker}@${m.at}`;
  for (const target of ['service', 'clickhouse'] as const) {
    const random = randomFrom(777);
    const r = await closedLoop(clients, seconds, async () => {
      const m = randomMoment(tickers, random);
      if (target === 'clickhouse') return { ok: await bookFromClickHouse(m) };
      const a = await fetchRaw(`${HISTORY_URL}/api/${m.s.exchange}/book/${m.s.ticker}?at=${iso(m.at)}`, {
        headers: keyHeaders(false),
        keep: true,
      });
      if (a.status !== 200) return { ok: false };
      const body = JSON.parse(a.body?.toString('utf8') ?? '{}') as { status: string; snapshot_ts: string | null };
      if (body.snapshot_ts) snapshotOf.set(key(m), Date.parse(body.snapshot_ts));
      return { ok: body.status === 'ok' };
    });
    const who =
      target === 'service' ? 'service: GET /book?at=T' : 'ClickHouse directly (the same book and gap queries)';
    lines.push(latencyRow(who, 'off', seconds, r));
    console.error(lines[lines.length - 1]);
    cpu.push(
      `- ${who}: CPU per book: service ${r.cpu.service.toFixed(2)} ms, ClickHouse ${r.cpu.clickhouse.toFixed(2)} ms, together ${(r.cpu.service + r.cpu.clickhouse).toFixed(2)} ms.`,
    );
  }
  // The same moments rebuilt by paging: the deltas from the snapshot to T as 1,000-row JSON pages (cursor walk), and
  // the same with the snapshot fetched too — what a client does without the book endpoint.
  for (const withSnapshot of [false, true]) {
    const random = randomFrom(777);
    let deltaRows = 0;
    let pages = 0;
    let drawn = 0;
    let unknown = 0;
    const r = await closedLoop(clients, seconds, async () => {
      const m = randomMoment(tickers, random);
      drawn++;
      const s = snapshotOf.get(key(m));
      if (s === undefined) {
        unknown++;
        return { ok: true, units: 0 };
      }
      if (withSnapshot) {
        const snap = await fetchRaw(
          `${HISTORY_URL}/api/${m.s.exchange}/snapshots/${m.s.ticker}?start_ts=${iso(s)}&limit=1`,
          {
            headers: keyHeaders(false),
          },
        );
        if (snap.status !== 200) return { ok: false };
      }
      let url: string | undefined =
        `${HISTORY_URL}/api/${m.s.exchange}/deltas/${m.s.ticker}?start_ts=${iso(s)}&end_ts=${iso(m.at)}&limit=1000&format=json`;
      while (url !== undefined) {
        const page = await fetchRaw(url, { headers: keyHeaders(false), keep: true });
        if (page.status !== 200) return { ok: false };
        const body = JSON.parse(page.body?.toString('utf8') ?? '{}') as { count: number; next_cursor: string | null };
        deltaRows += body.count;
        pages++;
        url = body.next_cursor
          ? `${HISTORY_URL}/api/${m.s.exchange}/deltas/${m.s.ticker}?limit=1000&format=json&cursor=${body.next_cursor}`
          : undefined;
      }
      return { ok: true };
    });
    const who = withSnapshot
      ? 'paging the snapshot and the deltas to T (1,000-row JSON pages)'
      : 'paging the deltas from the snapshot to T (1,000-row JSON pages)';
    lines.push(latencyRow(who, 'off', seconds, r));
    console.error(lines[lines.length - 1]);
    cpu.push(
      `- ${who}: CPU per rebuilt book: service ${r.cpu.service.toFixed(2)} ms, ClickHouse ${r.cpu.clickhouse.toFixed(2)} ms, together ${(r.cpu.service + r.cpu.clickhouse).toFixed(2)} ms (${(deltaRows / Math.max(1, r.times.length)).toFixed(0)} deltas in ${(pages / Math.max(1, r.times.length)).toFixed(2)} pages per book; ${fmt(unknown)} of the ${fmt(drawn)} moments drawn, warm-up included, had no snapshot ts from the service's answers).`,
    );
  }
  return [
    '| answered by | gzip | books | errors | books/s | p50 | p90 | p99 | max |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...lines,
    '',
    `(the book at a random moment of a random ticker, the same sequence for every row, ${clients} clients, ${seconds} s each after a 3 s warm-up)`,
    '',
    ...cpu,
  ];
}

/**
 * What a book's reads cost ClickHouse, one at a time: for the book's moments (the same sequence), the service's book
 * read, each of its three table reads alone, and one page of the deltas from the book's snapshot to T (the service's
 * page read, 1,000-row limit), each form over every moment in a row on one connection after a warm-up, with
 * `max_threads=1` as the service asks; ClickHouse's CPU per query from /proc. Shows why a book cannot cost less than
 * one page of its deltas: it reads what that page reads and the snapshot and the gaps, and every table read has a
 * fixed cost whatever it returns.
 */
async function reads(): Promise<string[]> {
  const n = QUICK ? 100 : 300;
  const tickers = await spans('deltas');
  const random = randomFrom(777);
  const moments: (Moment & { from: number; snapshot: number })[] = [];
  while (moments.length < n) {
    const { s, at } = randomMoment(tickers, random);
    const from = firstBookRead({ s, at });
    // The book's snapshot: the newest snapshot row in the book's read (moments whose read holds none are skipped).
    const raw = await ch(SQL.book(s.exchange, s.ticker, from, at), { max_threads: 1 });
    let snapshot = -1;
    for (let o = 0; o + BOOK_LAYOUT.size <= raw.length; o += BOOK_LAYOUT.size) {
      if (raw[o + BOOK_LAYOUT.kind] === 1)
        snapshot = Math.max(snapshot, Number(raw.readBigInt64LE(o + BOOK_LAYOUT.ts)));
    }
    if (snapshot >= 0) moments.push({ s, at, from, snapshot });
  }
  type M = (typeof moments)[number];
  const forms: [string, (m: M) => string][] = [
    [
      'the book read (snapshots, deltas and gaps in one UNION ALL), as the service sends it',
      (m) => SQL.book(m.s.exchange, m.s.ticker, m.from, m.at),
    ],
    [
      "its snapshot read alone (the 15 minutes' snapshots)",
      (m) => SQL.bookPart('snapshots', m.s.exchange, m.s.ticker, m.from, m.at),
    ],
    [
      "its delta read alone (the 15 minutes' deltas)",
      (m) => SQL.bookPart('deltas', m.s.exchange, m.s.ticker, m.from, m.at),
    ],
    ['its gap read alone', (m) => SQL.bookPart('gaps', m.s.exchange, m.s.ticker, m.from, m.at)],
    [
      "one page of deltas from the book's snapshot to T (the service's page read) — anchor",
      (m) => SQL.deltaPage(m.s.exchange, m.s.ticker, m.snapshot, m.at),
    ],
    ['a query that reads no table (`SELECT version()`)', () => SQL.version()],
  ];
  const lines = ['| ClickHouse query, one at a time | CPU per query | time per query |', '| --- | ---: | ---: |'];
  for (const [who, query] of forms) {
    for (const m of moments.slice(0, 30)) await ch(query(m), { max_threads: 1 });
    const cpu0 = cpuMs(CLICKHOUSE_PID);
    const t0 = performance.now();
    for (const m of moments) await ch(query(m), { max_threads: 1 });
    const ms = performance.now() - t0;
    lines.push(`| ${who} | ${((cpuMs(CLICKHOUSE_PID) - cpu0) / n).toFixed(2)} ms | ${(ms / n).toFixed(2)} ms |`);
    console.error(lines[lines.length - 1]);
  }
  return [
    ...lines,
    '',
    `(${n} moments of the book phase's sequence, each form over all of them in a row on one connection, \`max_threads=1\`, after 30 warm-up queries; CPU of the ClickHouse server from /proc)`,
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// 5. Bulk streams

async function bulk(): Promise<{ lines: string[]; ndjsonBytesPerSecond: number }> {
  const lines = [
    '| rows | endpoint | format | gzip | service rows/s | ClickHouse rows/s | anchor | ratio | service MB | ClickHouse MB |',
    '| ---: | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |',
  ];
  let ndjsonBytesPerSecond = 0;
  for (const kind of ['deltas', 'snapshots'] as Kind[]) {
    const top = (await spans(kind))[0] as Span;
    const range = await bulkRange(kind, top);
    const [counted] = await chRows<{ n: string }>(
      SQL.count(ROW_KIND[kind], top.exchange, top.ticker, inclusive(range)),
    );
    const count = Number(counted?.n);
    for (const [format, anchorFormat] of [
      ['ndjson', 'JSONEachRow'],
      ['csv', 'CSVWithNames'],
    ] as [string, AnchorFormat][]) {
      const anchor = SQL.rows(ROW_KIND[kind], top.exchange, top.ticker, inclusive(range), { format: anchorFormat });
      const check = await fetchRaw(serviceUrl(kind, top, range, `format=${format}`), {
        headers: keyHeaders(false),
        keep: true,
      });
      const text = check.body?.toString('utf8') ?? '';
      const end = text.slice(text.lastIndexOf('\n', text.length - 2) + 1);
      const served = format === 'ndjson' ? (JSON.parse(end) as { count: number }).count : Number(end.split(',')[1]);
      if (check.status !== 200 || served !== count)
        throw new Error(`${kind} ${format}: service ${served} rows, ClickHouse ${count}`);
      for (const gzip of [false, true]) {
        const r = await interleaved(
          serviceUrl(kind, top, range, `format=${format}`),
          anchor,
          count,
          gzip,
          QUICK ? 3 : 5,
        );
        if (kind === 'deltas' && format === 'ndjson' && !gzip) {
          ndjsonBytesPerSecond = (r.ourBytes * r.ourRate) / count;
        }
        lines.push(
          `| ${fmt(count)} | ${kind} | ${format.toUpperCase()} | ${gzip ? 'on' : 'off'} | ${fmt(r.ourRate)} | ${fmt(r.theirRate)} | ${anchorFormat} | ${(r.ourRate / r.theirRate).toFixed(2)}× | ${(r.ourBytes / 1e6).toFixed(1)} | ${(r.theirBytes / 1e6).toFixed(1)} |`,
        );
        console.error(lines[lines.length - 1]);
      }
    }
  }
  return { lines, ndjsonBytesPerSecond };
}

/** RSS while a whole month of the busiest ticker streams as NDJSON to a reader at `bytesPerSecond`. */
async function slowStream(bytesPerSecond: number): Promise<string[]> {
  const top = (await spans('deltas'))[0] as Span;
  // The month of the range's middle, whole.
  const mid = new Date(top.first + (top.last - top.first) / 2);
  const from = Date.UTC(mid.getUTCFullYear(), mid.getUTCMonth(), 1);
  const to = Date.UTC(mid.getUTCFullYear(), mid.getUTCMonth() + 1, 1) - 1;
  const [counted] = await chRows<{ n: string }>(SQL.count('delta', top.exchange, top.ticker, inclusive([from, to])));
  const lines: string[] = [];
  for (const gzip of [false, true]) {
    const before = rssKb();
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, rssKb())), 50);
    const meter = cpuMeter();
    const r = await fetchRaw(
      `${HISTORY_URL}/api/${top.exchange}/deltas/${top.ticker}?start_ts=${iso(from)}&end_ts=${iso(to)}&format=ndjson`,
      {
        headers: keyHeaders(gzip),
        readBytesPerSecond: gzip ? bytesPerSecond / 8 : bytesPerSecond,
        keep: false,
      },
    );
    clearInterval(timer);
    peak = Math.max(peak, rssKb());
    const cpu = meter(1);
    lines.push(
      `| ${iso(from).slice(0, 7)}, ${top.ticker}: ${fmt(Number(counted?.n))} deltas (${(r.bytes / 1e6).toFixed(0)} MB sent) | ${gzip ? 'on' : 'off'} | ${((gzip ? bytesPerSecond / 8 : bytesPerSecond) / 1e6).toFixed(1)} MB/s | ${(before / 1024).toFixed(0)} MB | ${(peak / 1024).toFixed(0)} MB | ${(r.ms / 1000).toFixed(1)} s | ${(cpu.clickhouse / 1000).toFixed(1)} s |`,
    );
    console.error(lines[lines.length - 1]);
  }
  return [
    '| stream | gzip | reader | RSS before | peak RSS | duration | ClickHouse CPU |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...lines,
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// 6. A cursor walk through 1M deltas

async function cursorWalk(): Promise<string[]> {
  const total = QUICK ? 100_000 : 1_000_000;
  const pageRows = 1000;
  const top = (await spans('deltas'))[0] as Span;
  const start = top.first + Math.floor((top.last - top.first) / 4);
  const times: number[] = [];
  const cpu: { service: number; clickhouse: number }[] = [];
  let url: string | undefined =
    `${HISTORY_URL}/api/${top.exchange}/deltas/${top.ticker}?start_ts=${iso(start)}&limit=${pageRows}&format=json`;
  let rows = 0;
  while (url !== undefined && rows < total) {
    const meter = cpuMeter();
    const page = await fetchRaw(url, { headers: keyHeaders(false), keep: true });
    if (page.status !== 200) throw new Error(`page ${times.length + 1}: ${page.status}`);
    cpu.push(meter(1));
    times.push(page.ms);
    const body = JSON.parse(page.body?.toString('utf8') ?? '{}') as { count: number; next_cursor: string | null };
    rows += body.count;
    url = body.next_cursor
      ? `${HISTORY_URL}/api/${top.exchange}/deltas/${top.ticker}?limit=${pageRows}&format=json&cursor=${body.next_cursor}`
      : undefined;
  }
  const first = times.slice(0, 50);
  const last = times.slice(-50);
  const cpuOf = (xs: typeof cpu) => xs.reduce((n, c) => n + c.service + c.clickhouse, 0) / Math.max(1, xs.length);
  return [
    `${fmt(rows)} deltas of ${top.ticker} from ${iso(start)}, ${fmt(times.length)} pages of ${fmt(pageRows)} rows, one client, following next_cursor:`,
    '',
    '| pages | median time | mean CPU (service + ClickHouse) |',
    '| --- | ---: | ---: |',
    `| first page | ${(times[0] ?? NaN).toFixed(2)} ms | ${cpuOf(cpu.slice(0, 1)).toFixed(1)} ms |`,
    `| first 50 | ${median(first).toFixed(2)} ms | ${cpuOf(cpu.slice(0, 50)).toFixed(2)} ms |`,
    `| last 50 | ${median(last).toFixed(2)} ms | ${cpuOf(cpu.slice(-50)).toFixed(2)} ms |`,
    `| last page | ${(times[times.length - 1] ?? NaN).toFixed(2)} ms | ${cpuOf(cpu.slice(-1)).toFixed(1)} ms |`,
    '',
    `Last 50 pages / first 50 pages: ${(median(last) / median(first)).toFixed(2)}× by time, ${(cpuOf(cpu.slice(-50)) / cpuOf(cpu.slice(0, 50))).toFixed(2)}× by CPU (target ≤ 1.5×). (CPU per page is read from /proc in 10 ms ticks: single pages are noisy, 50 are not.)`,
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// 7. Trades: their streams, bars, and Parquet

/** The count a stream's end line gives (NDJSON or CSV). */
function endCount(format: string, text: string): number {
  const end = text.slice(text.lastIndexOf('\n', text.length - 2) + 1);
  return format === 'ndjson' ? (JSON.parse(end) as { count: number }).count : Number(end.split(',')[1]);
}

/** Trades NDJSON and CSV beside ClickHouse's JSONEachRow and CSVWithNames for the same rows (target ≥ 1.0×). */
async function tradeStreams(): Promise<string[]> {
  const lines = [
    '| rows | format | gzip | service rows/s | ClickHouse rows/s | anchor | ratio | service MB | ClickHouse MB |',
    '| ---: | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |',
  ];
  const top = (await spans('trades'))[0] as Span;
  const n = Math.min(QUICK ? 100_000 : 1_000_000, Math.floor(top.rows * 0.6)); // from a third of the span on
  const range = await rangeFor('trades', top, n, top.first);
  const [counted] = await chRows<{ n: string }>(SQL.count('trade', top.exchange, top.ticker, inclusive(range)));
  const count = Number(counted?.n);
  for (const [format, anchorFormat] of [
    ['ndjson', 'JSONEachRow'],
    ['csv', 'CSVWithNames'],
  ] as [string, AnchorFormat][]) {
    const url = serviceUrl('trades', top, range, `format=${format}`);
    const check = await fetchRaw(url, { headers: keyHeaders(false), keep: true });
    const served = endCount(format, check.body?.toString('utf8') ?? '');
    if (check.status !== 200 || served !== count)
      throw new Error(`trades ${format}: service ${served}, ClickHouse ${count}`);
    const anchor = SQL.rows('trade', top.exchange, top.ticker, inclusive(range), { format: anchorFormat });
    for (const gzip of [false, true]) {
      const r = await interleaved(url, anchor, count, gzip, QUICK ? 3 : 9);
      lines.push(
        `| ${fmt(count)} | ${format.toUpperCase()} | ${gzip ? 'on' : 'off'} | ${fmt(r.ourRate)} | ${fmt(r.theirRate)} | ${anchorFormat} | ${(r.ourRate / r.theirRate).toFixed(2)}× | ${(r.ourBytes / 1e6).toFixed(1)} | ${(r.theirBytes / 1e6).toFixed(1)} |`,
      );
      console.error(lines[lines.length - 1]);
    }
  }
  return [`${top.ticker} (${top.exchange}), the first ${fmt(count)} trades:`, '', ...lines];
}

/**
 * 1-minute bars over a whole month of the busiest ticker: the service (`/bars?interval=1m`, one page holding the
 * month) beside ClickHouse answering the service's bars query itself in JSONEachRow, interleaved, p50/p99 of each
 * (target: the service's p99 ≤ ClickHouse's).
 */
async function bars(): Promise<string[]> {
  const top = (await spans('trades'))[0] as Span;
  const mid = new Date(top.first + (top.last - top.first) / 2);
  const from = Date.UTC(mid.getUTCFullYear(), mid.getUTCMonth(), 1);
  const to = Date.UTC(mid.getUTCFullYear(), mid.getUTCMonth() + 1, 1);
  const url = `${HISTORY_URL}/api/${top.exchange}/bars/${top.ticker}?interval=1m&start_ts=${iso(from)}&end_ts=${iso(to - 1)}&limit=100000`;
  const check = await fetchRaw(url, { headers: keyHeaders(false), keep: true });
  const page = JSON.parse(check.body?.toString('utf8') ?? '{}') as { count: number; next_cursor: string | null };
  const anchor = SQL.bars(top.exchange, top.ticker, 60_000, from, to, 'JSONEachRow');
  const theirRows = (await ch(anchor))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '').length;
  if (check.status !== 200 || page.next_cursor !== null || page.count !== theirRows)
    throw new Error(`bars: service ${check.status} ${page.count} bars, ClickHouse ${theirRows}`);
  const [counted] = await chRows<{ n: string }>(
    SQL.count('trade', top.exchange, top.ticker, { from, to, toInclusive: false }),
  );
  // 400: a p99 of 100 requests is their second largest, which one stray pause on either side decides (1.04–4.11× over
  // runs of 100 on 2026-11-28/29; docs/benchmarks.md, "Trades, bars and Parquet").
  const runs = QUICK ? 20 : 400;
  const service = async () => (await fetchRaw(url, { headers: keyHeaders(false) })).ms;
  const clickhouse = async () => {
    const t0 = performance.now();
    await ch(anchor);
    return performance.now() - t0;
  };
  const trades = Number(counted?.n);
  await warmUp(trades, service, clickhouse);
  const meter = cpuMeter();
  const times = await alternate(runs, service, clickhouse);
  const cpu = meter(runs);
  const ours = times.a.sort((a, b) => a - b);
  const theirs = times.b.sort((a, b) => a - b);
  const row = (who: string, t: number[]) =>
    `| ${who} | ${pct(t, 50).toFixed(1)} ms | ${pct(t, 90).toFixed(1)} ms | ${pct(t, 99).toFixed(1)} ms | ${(t[t.length - 1] ?? 0).toFixed(1)} ms |`;
  const lines = [
    `${iso(from).slice(0, 7)}, ${top.ticker} (${top.exchange}): ${fmt(trades)} trades, ${fmt(page.count)} one-minute bars; ${runs} requests each, alternating which goes first, one client, after a warm-up:`,
    '',
    '| answered by | p50 | p90 | p99 | max |',
    '| --- | ---: | ---: | ---: | ---: |',
    row('service: GET /bars?interval=1m (one page: the month)', ours),
    row('ClickHouse directly: the same aggregation (the service’s bars query, JSONEachRow)', theirs),
    '',
    `p99 service / ClickHouse: ${(pct(ours, 99) / pct(theirs, 99)).toFixed(2)}× (target ≤ 1.0×). CPU per round (both requests): service ${cpu.service.toFixed(1)} ms, ClickHouse ${cpu.clickhouse.toFixed(1)} ms.`,
  ];
  for (const l of lines) console.error(l);
  return lines;
}

/**
 * Parquet beside NDJSON for the same rows: rows/s of each (gzip off; Parquet is compressed in its pages), and the
 * file's size beside the gzipped NDJSON's (targets: ≥ 1.0× the NDJSON rows/s, ≤ 0.3× the gzipped size).
 */
async function parquet(): Promise<string[]> {
  const lines = [
    '| rows | endpoint | NDJSON rows/s | Parquet rows/s | ratio | NDJSON MB | gzipped NDJSON MB | Parquet MB | Parquet / gzipped NDJSON |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const kind of ['deltas', 'snapshots', 'trades'] as Kind[]) {
    const top = (await spans(kind))[0] as Span;
    const range = await bulkRange(kind, top);
    const [counted] = await chRows<{ n: string }>(
      SQL.count(ROW_KIND[kind], top.exchange, top.ticker, inclusive(range)),
    );
    const count = Number(counted?.n);
    const nd = serviceUrl(kind, top, range, 'format=ndjson');
    const pq = serviceUrl(kind, top, range, 'format=parquet');
    const check = await fetchRaw(pq, { headers: keyHeaders(false), keep: true });
    const body = check.body ?? Buffer.alloc(0);
    if (check.status !== 200 || body.subarray(body.length - 4).toString() !== 'PAR1')
      throw new Error(`${kind} parquet: ${check.status}, ${body.length} bytes`);
    if (!body.includes(Buffer.from(`depthgate.count`)) || !body.includes(Buffer.from(String(count))))
      throw new Error(`${kind} parquet: the footer does not say ${count} rows`);
    let ndBytes = 0;
    let pqBytes = 0;
    const ndjson = async () => {
      const a = await fetchRaw(nd, { headers: keyHeaders(false) });
      ndBytes = a.bytes;
      return a.ms;
    };
    const parquetFile = async () => {
      const b = await fetchRaw(pq, { headers: keyHeaders(false) });
      pqBytes = b.bytes;
      return b.ms;
    };
    await warmUp(count, ndjson, parquetFile);
    const times = await alternate(QUICK ? 3 : 9, ndjson, parquetFile);
    const gz = await fetchRaw(nd, { headers: keyHeaders(true) });
    const ndRate = (count * 1000) / median(times.a);
    const pqRate = (count * 1000) / median(times.b);
    lines.push(
      `| ${fmt(count)} | ${kind} | ${fmt(ndRate)} | ${fmt(pqRate)} | ${(pqRate / ndRate).toFixed(2)}× | ${(ndBytes / 1e6).toFixed(1)} | ${(gz.bytes / 1e6).toFixed(1)} | ${(pqBytes / 1e6).toFixed(1)} | ${(pqBytes / gz.bytes).toFixed(2)}× |`,
    );
    console.error(lines[lines.length - 1]);
  }
  return lines;
}

async function main(): Promise<void> {
  const [version] = await chRows<{ v: string }>(SQL.version());
  const totals = await chRows<{ name: string; rows: string; bytes: string; parts: string }>(SQL.tableSizes());
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
  const fresh = wanted('memory') ? await memory('freshly started') : [];
  if (wanted('throughput')) sections.push('', '### Throughput (JSON pages)', '', ...(await throughput()));
  if (wanted('latency')) {
    console.error('measuring latency at 32 concurrent clients …');
    sections.push('', '### Latency of 1,000-row queries', '', ...(await latency()));
  }
  if (wanted('book')) {
    console.error('measuring the book at a moment at 32 concurrent clients …');
    sections.push('', '### The book at a random moment', '', ...(await book()));
  }
  if (wanted('reads')) {
    console.error("measuring the book's reads one at a time …");
    sections.push('', "### The book's reads, one at a time", '', ...(await reads()));
  }
  if (wanted('bulk')) {
    console.error('measuring bulk streams …');
    const b = await bulk();
    sections.push('', '### Bulk streams (NDJSON, CSV)', '', ...b.lines);
    const rate = b.ndjsonBytesPerSecond * 0.05;
    sections.push(
      '',
      `A whole month of the busiest ticker to a slow reader: it reads at 5 % of the uncompressed NDJSON rate measured above (${(b.ndjsonBytesPerSecond / 1e6).toFixed(0)} MB/s), with gzip at an eighth of that; the service's RSS sampled every 50 ms:`,
      '',
      ...(await slowStream(rate)),
    );
  }
  if (wanted('cursor')) {
    console.error('walking 1M deltas by cursor …');
    sections.push('', '### Cursor paging', '', ...(await cursorWalk()));
  }
  if (wanted('trades')) {
    console.error('measuring the trades: streams, bars, Parquet …');
    sections.push('', '### Trades streams (NDJSON, CSV)', '', ...(await tradeStreams()));
    sections.push('', '### One-minute bars over a month', '', ...(await bars()));
    sections.push('', '### Parquet beside NDJSON', '', ...(await parquet()));
  }
  if (wanted('memory')) {
    const after = ONLY.size === 1 ? [] : await memory('after the runs above');
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
