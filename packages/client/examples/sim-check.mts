/**
 * Rebuilds recorded books with `@depthgate/client` and checks them, exactly, against the history service's book
 * endpoint and the venue simulator's own book, at random moments, for every recorded exchange of a running
 * `./dev up --sim` stack. Prints the counts; exits 1 on any mismatch.
 *
 *   ./dev up --sim
 *   set -a; eval "$(./dev env)"; set +a
 *   export API_KEY=$(./dev keys create --name sim-check --requests-per-minute 1000000 | tail -n 1)
 *   node packages/client/examples/sim-check.mts [--moments 1000] [--seed 1] [--concurrency 8] [--disconnect]
 *
 * `--disconnect` first cuts every recorded feed of the simulator (a feed fault), so the recorder records gaps
 * (`disconnect`) and resumes with fresh snapshots; it then waits 10 s. Moments falling in those gaps must be
 * `in_gap` for the service and the client alike.
 *
 * For each exchange it draws `--moments` moments, each on a random recorded ticker, between the later of the
 * recorder's first snapshot and the oldest moment the simulator still remembers (it keeps 60 s by default) and
 * 3 s ago (what the recorder may still be writing). For each moment:
 *
 * - `HistoryClient.rebuild` gives an `OrderBook` by rule 7 on this side: the latest snapshot at or before it plus
 *   every delta up to it, from the row streams;
 * - `HistoryClient.book` gives the service's own book at it; both must list the same levels, to the digit, and
 *   have the same checksum — or both say the moment lies in a recorded gap;
 * - the simulator's book at that moment (`/control/books/{exchange}/{ticker}?at=`) must have the same levels, by
 *   value. Gemini (`venue_c`) has no event times: the recorder stamps what it receives, so a moment within a
 *   network delay after a simulator event sees the book before that event; such moments are compared with the
 *   simulator's book just before the event (within 250 ms) and counted apart.
 *
 * Needs the stack's simulator (SIM_URL), history service (HISTORY_URL) and a key with room for a few thousand
 * requests a minute (API_KEY; the demo key's 600 a minute would make this wait on 429s).
 */
import {
  BookError,
  Decimal,
  EXCHANGES as RECORDED,
  HistoryClient,
  bookChecksum,
  type Exchange,
  type Level,
  type OrderBook,
} from '@depthgate/client';

const EXCHANGES: readonly Exchange[] = RECORDED.map((e) => e.key);

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const name = process.argv[i] as string;
  if (name === '--disconnect') continue;
  args.set(name, process.argv[++i] ?? '');
}
const MOMENTS = Number(args.get('--moments') ?? 1000);
const SEED = Number(args.get('--seed') ?? 1);
const CONCURRENCY = Number(args.get('--concurrency') ?? 8);
const DISCONNECT = process.argv.includes('--disconnect');
const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: see the usage at the top of this file`);
  return v;
};
const SIM_URL = env('SIM_URL');
const history = new HistoryClient({ baseUrl: env('HISTORY_URL'), apiKey: env('API_KEY') });

/** mulberry32: a small seeded PRNG, so a run can be repeated. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function simGet<T>(path: string): Promise<T> {
  const res = await fetch(`${SIM_URL}${path}`);
  if (!res.ok) throw new Error(`simulator ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The simulator's levels, best first, in canonical text (its own text keeps the venue's precision: `0.4800`). */
interface SimBook {
  bids: [string, string][];
  asks: [string, string][];
}
const canonical = (levels: [string, string][]): Level[] =>
  levels.map(([p, q]) => ({ price: Decimal.parse(p).toString(), quantity: Decimal.parse(q).toString() }));
const same = (a: Level[], b: Level[]) => JSON.stringify(a) === JSON.stringify(b);
const bookOf = (b: SimBook) => ({ bids: canonical(b.bids), asks: canonical(b.asks) });

/** Runs `work` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

interface Moment {
  exchange: Exchange;
  ticker: string;
  at: number;
  /** The simulator's book at `at`, and just before its last event when that event is within 250 ms (Gemini). */
  sim?: { at: { bids: Level[]; asks: Level[] }; beforeLastEvent?: { bids: Level[]; asks: Level[] } };
}

interface Counts {
  moments: number;
  inGaps: number;
  serviceEqual: number;
  simulatorEqual: number;
  simulatorEqualBeforeInFlightEvent: number;
  mismatches: number;
}

async function main(): Promise<void> {
  if (DISCONNECT) {
    for (const platform of EXCHANGES) {
      const res = await fetch(`${SIM_URL}/control/feed-faults`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ platform, kind: 'disconnect' }),
      });
      if (res.status !== 201) throw new Error(`feed fault for ${platform}: ${res.status} ${await res.text()}`);
    }
    await new Promise((r) => setTimeout(r, 10_000));
  }
  const rand = prng(SEED);
  const recorded = await simGet<Record<Exchange, string[]>>('/control/tickers');
  const now = Date.now();
  const moments: Moment[] = [];
  const events = new Map<string, number[]>();
  for (const exchange of EXCHANGES) {
    const windows: { ticker: string; from: number; to: number }[] = [];
    for (const ticker of recorded[exchange] ?? []) {
      const coverage = await history.coverage(exchange, ticker);
      // The recorder's data starts after the generated history, which ends with a seed_end gap.
      const seedEnd = Math.max(
        0,
        ...coverage.gaps.filter((g) => g.reason === 'seed_end').map((g) => Date.parse(g.to_ts)),
      );
      const retained = await simGet<{ events: { ts: number }[] }>(`/control/books/${exchange}/${ticker}/events`);
      events.set(
        `${exchange} ${ticker}`,
        retained.events.map((e) => e.ts),
      );
      const oldest = retained.events[0]?.ts ?? now;
      const from = Math.max(seedEnd, oldest + 5_000);
      const to = now - 3_000;
      if (to > from) windows.push({ ticker, from, to });
    }
    if (windows.length === 0) throw new Error(`${exchange}: nothing recorded inside the simulator's memory yet`);
    for (let i = 0; i < MOMENTS; i++) {
      const w = windows[Math.floor(rand() * windows.length)] as (typeof windows)[number];
      moments.push({ exchange, ticker: w.ticker, at: w.from + Math.floor(rand() * (w.to - w.from)) });
    }
  }

  // The simulator forgets: read its books first.
  await pool(moments, 16, async (m) => {
    const at = bookOf(await simGet<SimBook>(`/control/books/${m.exchange}/${m.ticker}?at=${m.at}`));
    const times = events.get(`${m.exchange} ${m.ticker}`) ?? [];
    const last = times.filter((t) => t <= m.at).pop();
    const beforeLastEvent =
      m.exchange === 'venue_c' && last !== undefined && m.at - last <= 250
        ? bookOf(await simGet<SimBook>(`/control/books/${m.exchange}/${m.ticker}?at=${last - 1}`))
        : undefined;
    m.sim = { at, beforeLastEvent };
  });

  const counts = new Map<Exchange, Counts>(
    EXCHANGES.map((e) => [
      e,
      {
        moments: 0,
        inGaps: 0,
        serviceEqual: 0,
        simulatorEqual: 0,
        simulatorEqualBeforeInFlightEvent: 0,
        mismatches: 0,
      },
    ]),
  );
  const problems: string[] = [];
  await pool(moments, CONCURRENCY, async (m) => {
    const c = counts.get(m.exchange) as Counts;
    c.moments++;
    const where = `${m.exchange} ${m.ticker} at ${new Date(m.at).toISOString()}`;
    const service = await history.book(m.exchange, m.ticker, { at: m.at });
    let book: OrderBook | undefined;
    try {
      book = await history.rebuild(m.exchange, m.ticker, m.at);
    } catch (err) {
      if (!(err instanceof BookError && err.code === 'in_gap')) throw err;
    }
    if (service.status === 'in_gap' || book === undefined) {
      if (service.status === 'in_gap' && book === undefined) c.inGaps++;
      else {
        c.mismatches++;
        problems.push(`${where}: the service says ${service.status}, the client ${book ? 'has a book' : 'in_gap'}`);
      }
      return;
    }
    if (service.status !== 'ok') throw new Error(`${where}: the service answered ${service.status}`);
    const mine = { bids: book.bids(), asks: book.asks() };
    if (
      same(mine.bids, service.bids) &&
      same(mine.asks, service.asks) &&
      book.checksum() === bookChecksum(service.bids, service.asks)
    ) {
      c.serviceEqual++;
    } else {
      c.mismatches++;
      problems.push(
        `${where}: client ${JSON.stringify(mine)} ≠ service ${JSON.stringify({ bids: service.bids, asks: service.asks })}`,
      );
      return;
    }
    const sim = m.sim as NonNullable<Moment['sim']>;
    if (same(mine.bids, sim.at.bids) && same(mine.asks, sim.at.asks)) c.simulatorEqual++;
    else if (
      sim.beforeLastEvent &&
      same(mine.bids, sim.beforeLastEvent.bids) &&
      same(mine.asks, sim.beforeLastEvent.asks)
    ) {
      c.simulatorEqualBeforeInFlightEvent++;
    } else {
      c.mismatches++;
      problems.push(`${where}: client ${JSON.stringify(mine)} ≠ simulator ${JSON.stringify(sim.at)}`);
    }
  });

  console.log(`seed ${SEED}, ${MOMENTS} moments per exchange`);
  console.log(
    'exchange    moments  in gaps  = service  = simulator  = simulator before an in-flight event  mismatches',
  );
  for (const [exchange, c] of counts) {
    console.log(
      `${exchange.padEnd(10)} ${String(c.moments).padStart(8)} ${String(c.inGaps).padStart(8)} ${String(c.serviceEqual).padStart(10)} ${String(c.simulatorEqual).padStart(12)} ${String(c.simulatorEqualBeforeInFlightEvent).padStart(38)} ${String(c.mismatches).padStart(11)}`,
    );
  }
  for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
  if (problems.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
