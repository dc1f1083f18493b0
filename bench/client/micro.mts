/**
 * @depthgate/client micro-benchmark: the same code paths as bench.mts (`./dev bench client`) without the history
 * stack. It generates one busy ticker's day in the service's exact NDJSON row shapes — about 14,000 deltas over
 * about 5,500 moments, and a snapshot of about 65 levels every 5 minutes (288, plus the one the day starts from) —
 * serves them from memory through `fetch` (each body in views of 64 KiB, as a socket gives it: socket-body.mts;
 * BENCH_WHOLE_BODY=1 hands it over in one copied chunk, as before 2026-11-28), and measures in interleaved rounds
 * (median CPU time, `process.cpuUsage()`):
 *
 * - anchor: the deltas' bytes decoded, split into lines, `JSON.parse` of each line;
 * - the same raw parse of the deltas and of the later snapshots: all the NDJSON the verified replay reads;
 * - `replay()` (snapshot verification, the default: each later snapshot checked by its digest, `format=digest`) as a
 *   caller runs it;
 * - `replay()` against a service without digests (the later snapshots' rows read and compared, as before 2026-11-29);
 * - `replay({ verifySnapshots: false })`.
 *
 * Run (after `pnpm --filter @depthgate/client build`): node bench/client/micro.mts [rounds] [baseline]
 * where `baseline` is another build's ESM entry (e.g. main's `packages/client/dist/esm/index.js` copied aside): its two
 * replays are measured in the same interleaved rounds, for a before/after on one machine state.
 * Profile: node --cpu-prof --cpu-prof-dir=/tmp/prof bench/client/micro.mts
 */
import { HistoryClient, OrderBook, type SnapshotRow } from '@depthgate/client';
import { servedBody } from './socket-body.mts';

const ROUNDS = Number(process.argv[2] ?? 41);
const DAY0 = Date.UTC(2026, 9, 22);
const DAY = 86_400_000;
const SNAP_EVERY = 5 * 60_000;
const EXCHANGE = 'venue_c';
const TICKER = 'SOLUSD';

// ---- a deterministic day (a book's rows: bids, then asks, each by price ascending, as docs/history.md says) -------------------------------------------------------------------------------------

let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
/** Units of 10^-6 as the service's canonical decimal text (no trailing zeros, no trailing point). */
const dec = (units: number, scale: number): string => {
  const neg = units < 0;
  const s = String(Math.abs(units)).padStart(scale + 1, '0');
  let int = s.slice(0, s.length - scale);
  const frac = s.slice(s.length - scale).replace(/0+$/, '');
  if (int === '') int = '0';
  return (neg ? '-' : '') + int + (frac ? '.' + frac : '');
};
const price = (cents: number) => dec(cents, 2);
const qty = (units: number) => dec(units, 6);
const iso = (ms: number) => new Date(ms).toISOString();

const MID = 18_742; // 187.42
const bids = new Map<number, number>();
const asks = new Map<number, number>();
for (let i = 1; i <= 40; i++) {
  if (rand() < 0.82) bids.set(MID - i, 1 + Math.floor(rand() * 500_000_000));
  if (rand() < 0.82) asks.set(MID + i, 1 + Math.floor(rand() * 500_000_000));
}

function snapshotLines(ts: number): string {
  const t = iso(ts);
  let out = '';
  const b = [...bids].sort((x, y) => x[0] - y[0]);
  const a = [...asks].sort((x, y) => x[0] - y[0]);
  for (const [p, q] of b) out += `{"ts":"${t}","side":"bid","price":"${price(p)}","quantity":"${qty(q)}"}\n`;
  for (const [p, q] of a) out += `{"ts":"${t}","side":"ask","price":"${price(p)}","quantity":"${qty(q)}"}\n`;
  return out;
}

const first = snapshotLines(DAY0);
let later = '';
let laterRows = 0;
let deltas = '';
let deltaRows = 0;
let moments = 0;
let nextSnap = DAY0 + SNAP_EVERY;
for (let t = DAY0 + 1; t < DAY0 + DAY; t += 1 + Math.floor(rand() * 31_000)) {
  // A snapshot at S is the book after every delta with ts < S.
  while (nextSnap <= t && nextSnap < DAY0 + DAY) {
    const s = snapshotLines(nextSnap);
    later += s;
    laterRows += s.split('\n').length - 1;
    nextSnap += SNAP_EVERY;
  }
  moments++;
  const n = 1 + Math.floor(rand() * 4);
  const ts = iso(t);
  for (let i = 0; i < n; i++) {
    const bid = rand() < 0.5;
    const side = bid ? bids : asks;
    const p = bid ? MID - 1 - Math.floor(rand() * 40) : MID + 1 + Math.floor(rand() * 40);
    const old = side.get(p) ?? 0;
    const r = rand();
    const q =
      old > 0 && r < 0.15 ? 0 : r < 0.6 ? 1 + Math.floor(rand() * 500_000_000) : old + Math.floor(rand() * 9) + 1;
    if (q === old) continue;
    if (q === 0) side.delete(p);
    else side.set(p, q);
    deltas +=
      `{"ts":"${ts}","sequence":${t * 1000 + i},"side":"${bid ? 'bid' : 'ask'}","price":"${price(p)}",` +
      `"quantity_delta":"${qty(q - old)}"}\n`;
    deltaRows++;
  }
}
const end = (n: number) => `{"type":"end","count":${n},"next_cursor":null}\n`;
const enc = new TextEncoder();
const DELTAS = enc.encode(deltas + end(deltaRows));
const FIRST = enc.encode(first + end(first.split('\n').length - 1));
const LATER = enc.encode(later + end(laterRows));
/** The later snapshots' digest lines (`format=digest`), from their rows. */
const DIGESTS = (() => {
  const books = new Map<string, SnapshotRow[]>();
  for (const line of later.split('\n')) {
    if (line === '') continue;
    const row = JSON.parse(line) as SnapshotRow;
    books.set(row.ts, [...(books.get(row.ts) ?? []), row]);
  }
  const lines = [...books].map(
    ([ts, rows]) => `{"ts":"${ts}","levels":${rows.length},"digest":"${OrderBook.fromSnapshot(rows).digest()}"}\n`,
  );
  return enc.encode(lines.join('') + end(lines.length));
})();
const COVERAGE = JSON.stringify({
  exchange: EXCHANGE,
  ticker: TICKER,
  start_ts: iso(DAY0),
  end_ts: iso(DAY0 + DAY - 1),
  snapshots: { rows: 0, books: 0, first_ts: null, last_ts: null },
  deltas: { rows: 0, first_ts: null, last_ts: null },
  gaps: [],
});

// ---- served from memory, as bench.mts does ---------------------------------------------------------------------

const BASELINE = process.argv[3];
const Baseline: typeof HistoryClient | undefined = BASELINE
  ? ((await import(new URL(BASELINE, `file://${process.cwd()}/`).href)) as { HistoryClient: typeof HistoryClient })
      .HistoryClient
  : undefined;

/** Answers from memory; `digests: false` refuses format=digest, as a service before it did. */
const options = (digests: boolean) => ({
  baseUrl: 'http://memory.invalid',
  fetch: async (input: Parameters<typeof fetch>[0]) => {
    const url = new URL(String(input));
    const kind = url.pathname.split('/')[3];
    if (kind === 'coverage') return new Response(COVERAGE, { headers: { 'Content-Type': 'application/json' } });
    if (url.searchParams.get('format') === 'digest' && !digests) {
      return new Response('{"error":"invalid_format","message":"format must be json, ndjson, csv or parquet"}', {
        status: 400,
        headers: { 'Content-Type': 'application/json' },
      });
    }
    const start = Date.parse(url.searchParams.get('start_ts') ?? '');
    const body =
      kind === 'snapshots'
        ? url.searchParams.get('format') === 'digest'
          ? DIGESTS
          : start > DAY0
            ? LATER
            : FIRST
        : DELTAS;
    return new Response(servedBody(body), { headers: { 'Content-Type': 'application/x-ndjson' } });
  },
});
const current = new HistoryClient(options(true));
const byRows = new HistoryClient(options(false));
const baseline = Baseline && new Baseline(options(true));

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

async function replay(memory: HistoryClient, verifySnapshots: boolean): Promise<number> {
  let n = 0;
  let depth = 0;
  for await (const e of memory.replay(EXCHANGE, TICKER, { from: DAY0, to: DAY0 + DAY - 1, verifySnapshots })) {
    if (e.type === 'book') {
      n++;
      depth = e.book.depth();
    }
  }
  if (depth === 0) throw new Error('an empty book');
  return n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const runs: { name: string; run: () => Promise<unknown>; ms: number[] }[] = [
    {
      name: 'raw parse (split lines, `JSON.parse` each) — anchor',
      run: async () => rawParse(DELTAS) === deltaRows,
      ms: [],
    },
    {
      name: 'raw parse of the deltas and the later snapshots (all the NDJSON `replay()` reads)',
      run: async () => rawParse(DELTAS) === deltaRows && rawParse(LATER) === laterRows,
      ms: [],
    },
  ];
  for (const [who, client] of [
    ['', current],
    ['baseline ', baseline],
  ] as const) {
    if (client === undefined) continue;
    for (const verify of [true, false]) {
      runs.push({
        name: `${who}\`replay(${verify ? '' : '{ verifySnapshots: false }'})\``,
        run: async () => (await replay(client, verify)) === moments,
        ms: [],
      });
    }
  }
  runs.push({
    name: '`replay()` against a service without digests (the snapshots’ rows compared)',
    run: async () => (await replay(byRows, true)) === moments,
    ms: [],
  });
  for (let r = 0; r < ROUNDS + 3; r++) {
    for (const x of runs) {
      const c = process.cpuUsage();
      if (!(await x.run())) throw new Error(`${x.name}: another count`);
      const d = process.cpuUsage(c);
      if (r >= 3) x.ms.push((d.user + d.system) / 1000);
    }
  }
  const fmt = (n: number) => n.toLocaleString('en-US');
  console.log(
    `${fmt(deltaRows)} deltas (${fmt(moments)} moments, ${(DELTAS.length / 1e6).toFixed(1)} MB); ` +
      `${fmt(laterRows)} snapshot rows in ${Math.floor((DAY - 1) / SNAP_EVERY)} later snapshots; Node ${process.version}; ` +
      `${ROUNDS} interleaved rounds, median CPU ms`,
  );
  console.log('| what | median CPU ms | deltas/s | vs raw parse |');
  console.log('| --- | ---: | ---: | ---: |');
  const anchor = median((runs[0] as { ms: number[] }).ms);
  for (const x of runs) {
    const m = median(x.ms);
    console.log(
      `| ${x.name} | ${m.toFixed(2)} | ${fmt(Math.round((deltaRows / m) * 1000))} | ${(anchor / m).toFixed(2)}× |`,
    );
  }
  // The verified replay reads the later snapshots too: beside the raw parse of everything it reads.
  const all = median((runs[1] as { ms: number[] }).ms);
  for (const x of runs.filter((r) => r.name.includes('`replay()`'))) {
    console.log(`${x.name} vs the raw parse of all the NDJSON it reads: ${(all / median(x.ms)).toFixed(2)}×`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
