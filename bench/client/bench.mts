/**
 * @depthgate/client benchmark (run by bench/client/run.sh, which starts the history benchmark's stack):
 *
 * 1. finds the busiest ticker of the data set (most deltas, from `coverage`) and its busiest whole day;
 * 2. downloads that day's deltas as the service's NDJSON stream, and the snapshot the day starts from;
 * 3. measures, in interleaved rounds on the same bytes (median of each):
 *    - anchor: the raw parse — the bytes decoded, split into lines, `JSON.parse` of each line;
 *    - the same raw parse of the deltas and of the day's later snapshots: all the NDJSON the verified replay reads;
 *    - the client's replay as a caller runs it: `HistoryClient.replay` over the day (NDJSON lines parsed, rows
 *      checked, every delta applied to an `OrderBook`, the book yielded after every moment, each later snapshot
 *      checked by its digest: `format=digest`), with the answers served from memory through `fetch` (a Response per
 *      request, its body in views of 64 KiB as a socket gives it), so the network is not in the figure;
 *    - the same against a service without digests (`format=digest` refused: the later snapshots' rows are read and
 *      compared, as every replay did before 2026-11-29);
 *    - the same with `verifySnapshots: false` (the day's later snapshots are not read and compared);
 *    - without the async iteration: `parseLine` + `OrderBook.apply` in a loop (parse and book alone), and `parseLine`
 *      alone (the checked parse of each line: what any replay of the deltas does at the least);
 * 4. over the network: the same replay against the running service (5 rounds after one unmeasured).
 *
 * Environment: HISTORY_URL, API_KEY, BENCH_ROUNDS; BENCH_WHOLE_BODY=1 serves each body in one copied chunk
 * (`new Response(bytes)`), as the benchmark did before 2026-11-28; BENCH_BASELINE=<another build's
 * dist/esm/index.js>: also 40 alternating rounds of the live replay with that build's client and this one (the whole
 * replay, and the time to its first event).
 */
import os from 'node:os';
import { EXCHANGES as RECORDED, HistoryClient, OrderBook, parseLine, type SnapshotRow } from '@depthgate/client';
import { servedBody } from './socket-body.mts';

const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is not set (run bench/client/run.sh)`);
  return v;
};
const HISTORY_URL = env('HISTORY_URL');
const API_KEY = env('API_KEY');
const ROUNDS = Number(env('BENCH_ROUNDS', '15'));
const DAY = 86_400_000;
const EXCHANGES = RECORDED.map((e) => e.key);

const client = new HistoryClient({ baseUrl: HISTORY_URL, apiKey: API_KEY });
const iso = (ms: number) => new Date(ms).toISOString();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const best = (xs: number[]) => Math.min(...xs);

async function busiest(): Promise<{ exchange: string; ticker: string; day: number; rows: number }> {
  let best = { exchange: '', ticker: '', rows: -1, first: 0, last: 0 };
  for (const exchange of EXCHANGES) {
    for (const ticker of await client.tickers(exchange)) {
      const c = await client.coverage(exchange, ticker);
      if (c.deltas.rows > best.rows) {
        best = {
          exchange,
          ticker,
          rows: c.deltas.rows,
          first: Date.parse(c.deltas.first_ts as string),
          last: Date.parse(c.deltas.last_ts as string),
        };
      }
    }
  }
  // Its busiest whole UTC day.
  let day = { day: 0, rows: -1 };
  for (let d = Math.ceil(best.first / DAY) * DAY; d + DAY <= best.last; d += DAY) {
    const c = await client.coverage(best.exchange, best.ticker, { start: d, end: d + DAY - 1 });
    if (c.deltas.rows > day.rows) day = { day: d, rows: c.deltas.rows };
  }
  return { exchange: best.exchange, ticker: best.ticker, day: day.day, rows: day.rows };
}

async function download(path: string): Promise<Uint8Array> {
  const res = await fetch(`${HISTORY_URL}${path}`, {
    headers: { 'X-API-Key': API_KEY, Accept: 'application/x-ndjson' },
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** A fetch that answers from memory, by path: what the replay asks for. */
function memoryFetch(bodies: { coverage: string; snapshots: Uint8Array; deltas: Uint8Array }): typeof fetch {
  return async (input) => {
    const url = new URL(String(input));
    const kind = url.pathname.split('/')[3];
    if (kind === 'coverage') return new Response(bodies.coverage, { headers: { 'Content-Type': 'application/json' } });
    const body = kind === 'snapshots' ? bodies.snapshots : bodies.deltas;
    return new Response(servedBody(body), { headers: { 'Content-Type': 'application/x-ndjson' } });
  };
}

function rawParse(bytes: Uint8Array): number {
  const text = new TextDecoder().decode(bytes);
  let n = 0;
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    const o = JSON.parse(text.slice(start, nl)) as { type?: string };
    if (o.type === undefined) n++;
    start = nl + 1;
  }
  return n;
}

/**
 * `parseLine` of every line in a plain loop, and each delta applied to a book from `snapshot`; without a snapshot, the
 * checked parse alone (no book): the floor of any replay's per-delta work.
 */
function loopReplay(bytes: Uint8Array, snapshot?: SnapshotRow[]): number {
  const text = new TextDecoder().decode(bytes);
  const book = snapshot && OrderBook.fromSnapshot(snapshot);
  let n = 0;
  let start = 0;
  let line = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    const item = parseLine('delta', text.slice(start, nl), { line: ++line });
    if (!('type' in item)) {
      book?.apply(item);
      n++;
    }
    start = nl + 1;
  }
  book?.settle();
  return n;
}

async function clientReplay(
  memory: HistoryClient,
  exchange: string,
  ticker: string,
  from: number,
  to: number,
  verifySnapshots = true,
) {
  let moments = 0;
  let checksum = 0;
  for await (const e of memory.replay(exchange, ticker, { from, to, verifySnapshots })) {
    if (e.type === 'book') {
      moments++;
      checksum = e.book.depth();
    }
  }
  return { moments, checksum };
}

/** BENCH_BASELINE: the live replay with another build's client and this one, alternating, medians of each. */
async function liveAgainst(path: string, exchange: string, ticker: string, from: number, to: number): Promise<void> {
  const Baseline = ((await import(path)) as { HistoryClient: typeof HistoryClient }).HistoryClient;
  const sides = { baseline: new Baseline({ baseUrl: HISTORY_URL, apiKey: API_KEY }), this: client };
  const whole = { baseline: [] as number[], this: [] as number[] };
  const first = { baseline: [] as number[], this: [] as number[] };
  for (let r = 0; r < 44; r++) {
    for (const side of r % 2 ? (['baseline', 'this'] as const) : (['this', 'baseline'] as const)) {
      let t = performance.now();
      await clientReplay(sides[side], exchange, ticker, from, to);
      const w = performance.now() - t;
      t = performance.now();
      const events = sides[side].replay(exchange, ticker, { from, to });
      await events.next();
      const f = performance.now() - t;
      await events.return(undefined);
      if (r >= 4) {
        whole[side].push(w);
        first[side].push(f);
      }
    }
  }
  console.log(
    `\nLive replay, 40 alternating rounds, medians: the whole replay ${median(whole.this).toFixed(1)} ms against the ` +
      `baseline's ${median(whole.baseline).toFixed(1)} (${(median(whole.this) / median(whole.baseline)).toFixed(2)}×); ` +
      `its first event ${median(first.this).toFixed(1)} ms against ${median(first.baseline).toFixed(1)} ` +
      `(${(median(first.this) / median(first.baseline)).toFixed(2)}×).`,
  );
}

async function main(): Promise<void> {
  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const target = await busiest();
  const { exchange, ticker, day } = target;
  const to = day + DAY - 1;
  // The day's deltas from the snapshot it starts from (rule 7): that snapshot, and every delta from its ts.
  const start = await client.rebuild(exchange, ticker, day);
  const from = start.snapshotTs as number;
  const snapshotRows: SnapshotRow[] = [];
  for await (const r of client.snapshots(exchange, ticker, { start: from, end: from })) snapshotRows.push(r);
  const q = (s: number, e: number) => `start_ts=${iso(s)}&end_ts=${iso(e)}&format=ndjson`;
  const deltas = await download(`/api/${exchange}/deltas/${encodeURIComponent(ticker)}?${q(from, to)}`);
  const snapshots = await download(`/api/${exchange}/snapshots/${encodeURIComponent(ticker)}?${q(from, from)}`);
  const coverage = JSON.stringify({
    exchange,
    ticker,
    start_ts: iso(from),
    end_ts: iso(to),
    snapshots: { rows: 0, books: 0, first_ts: null, last_ts: null },
    deltas: { rows: 0, first_ts: null, last_ts: null },
    gaps: [],
  });
  // The replay also reads the day's later snapshots (to check the book against them): serve those from memory too.
  const laterSnapshots = await download(`/api/${exchange}/snapshots/${encodeURIComponent(ticker)}?${q(from + 1, to)}`);
  const laterDigests = await download(
    `/api/${exchange}/snapshots/${encodeURIComponent(ticker)}?${q(from + 1, to).replace('ndjson', 'digest')}`,
  );
  const rows = rawParse(deltas);
  const laterRows = rawParse(laterSnapshots);
  /** The replay's answers from memory; `digests: false` refuses format=digest as a service before it does. */
  const memoryClient = (digests: boolean) =>
    new HistoryClient({
      baseUrl: 'http://memory.invalid',
      fetch: async (input, init) => {
        const url = new URL(String(input));
        const startTs = url.searchParams.get('start_ts');
        if (url.searchParams.get('format') === 'digest') {
          if (!digests) {
            return new Response('{"error":"invalid_format","message":"format must be json, ndjson, csv or parquet"}', {
              status: 400,
              headers: { 'Content-Type': 'application/json' },
            });
          }
          return memoryFetch({ coverage, snapshots: laterDigests, deltas })(input, init);
        }
        const body =
          url.pathname.includes('/snapshots/') && startTs !== null && Date.parse(startTs) > from
            ? laterSnapshots
            : snapshots;
        return memoryFetch({ coverage, snapshots: body, deltas })(input, init);
      },
    });
  const memory = memoryClient(true);
  const memoryRows = memoryClient(false);

  const anchor: number[] = [];
  const both: number[] = [];
  const replay: number[] = [];
  const quick: number[] = [];
  const byRows: number[] = [];
  const loop: number[] = [];
  const parseOnly: number[] = [];
  let moments = 0;
  for (let r = 0; r < ROUNDS + 2; r++) {
    let t = performance.now();
    if (rawParse(deltas) !== rows) throw new Error('raw parse count changed');
    const a = performance.now() - t;
    t = performance.now();
    if (rawParse(deltas) !== rows || rawParse(laterSnapshots) !== laterRows) throw new Error('raw parse count changed');
    const e = performance.now() - t;
    t = performance.now();
    moments = (await clientReplay(memory, exchange, ticker, from, to)).moments;
    const b = performance.now() - t;
    t = performance.now();
    if (loopReplay(deltas, snapshotRows) !== rows) throw new Error('loop replay count changed');
    const c = performance.now() - t;
    t = performance.now();
    if (loopReplay(deltas) !== rows) throw new Error('loop parse count changed');
    const g = performance.now() - t;
    t = performance.now();
    if ((await clientReplay(memory, exchange, ticker, from, to, false)).moments !== moments) {
      throw new Error('the replay without snapshot checks saw other moments');
    }
    const d = performance.now() - t;
    t = performance.now();
    if ((await clientReplay(memoryRows, exchange, ticker, from, to)).moments !== moments) {
      throw new Error('the replay checking the snapshots by their rows saw other moments');
    }
    const f = performance.now() - t;
    if (r >= 2) {
      byRows.push(f);
      anchor.push(a);
      both.push(e);
      replay.push(b);
      loop.push(c);
      parseOnly.push(g);
      quick.push(d);
    }
  }
  // Against the running service: 5 rounds after one unmeasured (its first request warms the service's caches).
  const liveMs: number[] = [];
  let live = { moments: 0, checksum: 0 };
  for (let r = 0; r < 6; r++) {
    const t = performance.now();
    live = await clientReplay(client, exchange, ticker, from, to);
    if (r > 0) liveMs.push(performance.now() - t);
  }

  const perSec = (ms: number) => Math.round((rows / ms) * 1000);
  const fmt = (n: number) => n.toLocaleString('en-US');
  console.log(
    `\n${ticker} (${exchange}), ${iso(day).slice(0, 10)}: ${fmt(rows)} deltas (${fmt(moments)} moments), ` +
      `${(deltas.length / 1e6).toFixed(1)} MB of NDJSON; Node ${process.version}, ${os.cpus().length} cores, ` +
      `load average ${load} at the start; ${ROUNDS} interleaved rounds (median, and the best round)\n`,
  );
  console.log('| what | median ms | deltas/s | vs raw parse | best ms | deltas/s |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  const rowOf = (name: string, xs: number[]) =>
    console.log(
      `| ${name} | ${median(xs).toFixed(1)} | ${fmt(perSec(median(xs)))} | ${(median(anchor) / median(xs)).toFixed(2)}× | ` +
        `${best(xs).toFixed(1)} | ${fmt(perSec(best(xs)))} |`,
    );
  rowOf('raw parse of the NDJSON (split lines, JSON.parse each) — anchor', anchor);
  rowOf('raw parse of the deltas and the later snapshots (all the NDJSON `replay()` reads)', both);
  rowOf(
    '**client `replay()`**: stream parsed, rows checked, every delta applied, a book per moment, checked against each of the day’s snapshots (by their digests)',
    replay,
  );
  rowOf(
    'client `replay()` against a service without digests: each of the day’s snapshots read and compared by its rows',
    byRows,
  );
  rowOf('**client `replay({ verifySnapshots: false })`**: the same without reading the later snapshots', quick);
  rowOf('client `parseLine` + `OrderBook.apply` in a loop', loop);
  rowOf('client `parseLine` alone in a loop (each line checked, no book)', parseOnly);
  rowOf('client `replay()` against the running service (network and the service included, 5 rounds)', liveMs);
  console.log(
    `\nThe replay that reads the snapshots' rows, against the raw parse of all the NDJSON it reads (${fmt(laterRows)} ` +
      `snapshot rows besides the deltas): ${(median(both) / median(byRows)).toFixed(2)}×; the digests of the same ` +
      `${fmt(rawParse(laterDigests))} books: ${(laterDigests.length / 1e3).toFixed(1)} kB against ` +
      `${(laterSnapshots.length / 1e6).toFixed(2)} MB of rows.`,
  );
  if (process.env.BENCH_BASELINE) await liveAgainst(process.env.BENCH_BASELINE, exchange, ticker, from, to);
  if (live.moments !== moments)
    throw new Error(`the live replay saw ${live.moments} moments, the memory one ${moments}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
