/**
 * What the recorder's end-to-end tests check against the simulator (recorder.int.test.ts, durability.int.test.ts):
 * rule 7 at random moments, every change recorded once or inside a gap, every trade stored once or inside a trades
 * gap, no duplicate rows, quiet moments for the receive-clocked feed, the venues' own sequences on the rows, and the
 * verification points and what the history API's `/book` says of them.
 */
import { EXCHANGE_CODES, PLATFORMS, exchangesOf, type ExchangeKey, type Registry } from '@depthgate/platforms';
import { waitFor } from '@depthgate/test-utils';
import type { VerificationMethod } from '@depthgate/history-store';
import type { Recorder } from '../recorder';
import { RECONCILE_AGENT_SUFFIX } from '../venues/rest';
import { exchangeIndex } from '../writer/batch';
import { Rng } from '@depthgate/service-kit';
import { formatDecimal, parseDecimal } from '@depthgate/feeds';
import { rebuild, type FlatBook, type Row } from './support';
import { deltaKey, simBookAt, simBookNow, simChanges, sleep, type HistoryApi, type RecorderHarness } from './harness';

export const VENUE_CLOCK: ExchangeKey[] = ['venue_b', 'venue_a_us'];
export const ALL: ExchangeKey[] = ['venue_b', 'venue_c', 'venue_a_us'];

export interface Gap {
  from: number;
  to: number;
  reason: string;
}

/** The book's gaps among the rows (`stream`: the trades' gaps). */
export function gapsOf(rows: readonly Row[], stream: 'book' | 'trades' = 'book'): Gap[] {
  return rows
    .filter((r) => r.kind === 'gap' && (r.stream ?? 'book') === stream)
    .map((r) => ({ from: r.fromTs as number, to: r.toTs as number, reason: r.reason as string }));
}

export function firstSnapshot(rows: readonly Row[]): number {
  return Math.min(...rows.filter((r) => r.kind === 'snapshot').map((r) => r.ts));
}

/**
 * A stretch of a ticker where the recorded book is known to differ from the venue's without a gap: a Polymarket US
 * book message lost (no sequence shows it) leaves the book behind until the next one, whose diff carries the lost
 * change at its later time (docs/history-internals.md, "Known limits"). `from` and `to` inclusive.
 */
export interface KnownLoss {
  ticker: string;
  from: number;
  to: number;
}

const inKnownLoss = (known: readonly KnownLoss[], ticker: string, t: number) =>
  known.some((k) => k.ticker === ticker && t >= k.from && t <= k.to);

/** Rule 7 equals the simulator's book at random moments (and at event times) outside the ticker's gaps. */
export async function expectRule7(
  h: RecorderHarness,
  exchange: ExchangeKey,
  end: number,
  seed: number,
  known: readonly KnownLoss[] = [],
): Promise<number> {
  const rng = new Rng(seed, 'rule-7 moments');
  let checked = 0;
  for (const ticker of h.sim.books.tickers(exchange)) {
    const rows = await h.rows(exchange, ticker);
    const gaps = gapsOf(rows);
    const start = firstSnapshot(rows);
    expect(Number.isFinite(start)).toBe(true);
    const events = h.sim.books.events(exchange, ticker).filter((e) => e.ts > start && e.ts <= end);
    const moments = new Set<number>();
    for (let i = 0; i < 12; i++) moments.add(start + Math.floor(rng.float() * (end - start)));
    for (let i = 0; i < 8 && events.length > 0; i++) {
      const e = events[Math.floor(rng.float() * events.length)];
      if (e) moments.add(e.ts).add(e.ts - 1);
    }
    for (const t of moments) {
      if (t < start || gaps.some((g) => t >= g.from && t < g.to) || inKnownLoss(known, ticker, t)) continue;
      const got = rebuild(rows, t);
      const want = simBookAt(h.sim, exchange, ticker, t);
      if (JSON.stringify(sorted(got)) !== JSON.stringify(sorted(want))) {
        throw new Error(
          `${exchange} ${ticker} at ${t}: rebuilt ${JSON.stringify(sorted(got))}\n  simulator ${JSON.stringify(sorted(want))}\n  gaps ${JSON.stringify(gaps)}`,
        );
      }
      checked++;
    }
  }
  return checked;
}

export function sorted(book: FlatBook | undefined): [string, string][] {
  return Object.entries(book ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
}

/**
 * Every change the simulator emitted after the ticker's first snapshot (and up to `end`) is recorded exactly once,
 * unless it falls inside a recorded gap; nothing is recorded outside a gap that the simulator did not emit (`known`
 * losses aside). A row inside a gap may differ from the venue's change: the book it was computed from (absolute
 * sizes less our level) was already wrong before the loss was found, which is what the gap says; no book is read there.
 */
export async function expectEveryChangeOnce(
  h: RecorderHarness,
  exchange: ExchangeKey,
  end: number,
  known: readonly KnownLoss[] = [],
): Promise<{ recorded: number; inGaps: number }> {
  let recorded = 0;
  let inGaps = 0;
  for (const ticker of h.sim.books.tickers(exchange)) {
    const rows = await h.rows(exchange, ticker);
    const gaps = gapsOf(rows);
    const start = firstSnapshot(rows);
    const counts = new Map<string, number>();
    for (const r of rows) {
      if (r.kind !== 'delta') continue;
      const k = `${r.ts} ${deltaKey(r)}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    for (const c of simChanges(h.sim, exchange, ticker)) {
      if (c.ts <= start || c.ts > end || inKnownLoss(known, ticker, c.ts)) continue;
      const k = `${c.ts} ${c.key}`;
      const n = counts.get(k) ?? 0;
      if (n > 0) {
        counts.set(k, n - 1);
        recorded++;
        continue;
      }
      if (!gaps.some((g) => c.ts >= g.from && c.ts <= g.to)) {
        throw new Error(
          `${exchange} ${ticker}: change ${k} is neither recorded nor inside a gap ${JSON.stringify(gaps)}`,
        );
      }
      inGaps++;
    }
    const phantoms = [...counts].filter(([k, n]) => {
      const ts = Number(k.split(' ')[0]);
      return n > 0 && ts > start && !inKnownLoss(known, ticker, ts) && !gaps.some((g) => ts >= g.from && ts <= g.to);
    });
    expect([exchange, ticker, phantoms]).toEqual([exchange, ticker, []]);
  }
  return { recorded, inGaps };
}

/** No (ticker, ts, sequence) twice, and sequences increase with ts per ticker. */
export async function expectNoDuplicates(h: RecorderHarness): Promise<void> {
  const deltas = await h.db.distinctKeys('deltas');
  expect(deltas.rows).toBeGreaterThan(0);
  expect(deltas.keys).toBe(deltas.rows);
  const snapshots = await h.db.distinctKeys('snapshots');
  expect(snapshots.keys).toBe(snapshots.rows);
  for (const exchange of ALL) {
    const rows = (await h.rows(exchange)).filter((r) => r.kind === 'delta');
    const byTicker = new Map<string, Row[]>();
    for (const r of rows) byTicker.set(r.ticker, [...(byTicker.get(r.ticker) ?? []), r]);
    for (const list of byTicker.values()) {
      list.sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
      for (let i = 1; i < list.length; i++) {
        expect((list[i] as Row).ts).toBeGreaterThanOrEqual((list[i - 1] as Row).ts);
      }
    }
  }
}

/** Pauses the books, lets everything in flight arrive and be written, returns the quiet moment. */
export async function quietMoment(h: RecorderHarness): Promise<{ at: number; gemini: Map<string, FlatBook> }> {
  h.sim.books.pause();
  await sleep(400);
  const at = Date.now();
  const gemini = new Map(h.sim.books.tickers('venue_c').map((t) => [t, simBookNow(h.sim, 'venue_c', t)]));
  await sleep(300);
  return { at, gemini };
}

export function expectGeminiAt(rows: Map<string, Row[]>, q: { at: number; gemini: Map<string, FlatBook> }): void {
  for (const [ticker, want] of q.gemini) {
    const list = rows.get(ticker) ?? [];
    const gaps = gapsOf(list);
    if (gaps.some((g) => q.at >= g.from && q.at < g.to)) continue;
    expect([ticker, sorted(rebuild(list, q.at))]).toEqual([ticker, sorted(want)]);
  }
}

export async function geminiRows(h: RecorderHarness): Promise<Map<string, Row[]>> {
  const out = new Map<string, Row[]>();
  for (const r of await h.rows('venue_c')) out.set(r.ticker, [...(out.get(r.ticker) ?? []), r]);
  return out;
}

/** A stored or emitted trade as the checks compare it: time, exact decimals, sides. */
function tradeKey(t: { ts: number; price: string; size: string; side: string; venueSide: string }): string {
  return `${t.ts} ${formatDecimal(parseDecimal(t.price))} ${formatDecimal(parseDecimal(t.size))} ${t.side} ${t.venueSide}`;
}

/**
 * The simulator's trades (its control API's list) after each ticker's first snapshot and up to `end`: each stored
 * exactly once, with the venue's id where it has one and the same time, price, size and sides — or, with
 * `gaps: true` (a venue without trade history), not stored and inside one of the ticker's trades gaps. Nothing is
 * stored that the simulator did not emit, and no trade is stored twice.
 */
export async function expectEveryTradeOnce(
  h: RecorderHarness,
  exchange: ExchangeKey,
  end: number,
  options: { gaps: boolean },
): Promise<{ stored: number; inGaps: number }> {
  let stored = 0;
  let inGaps = 0;
  for (const ticker of h.sim.books.tickers(exchange)) {
    const rows = await h.rows(exchange, ticker);
    const start = firstSnapshot(rows);
    const gaps = gapsOf(rows, 'trades');
    const trades = rows.filter((r) => r.kind === 'trade');
    // Stored once: no id twice.
    const ids = trades.map((r) => r.tradeId as string);
    expect(new Set(ids).size).toBe(ids.length);
    const emitted = h.sim.trades(exchange, ticker);
    const byKey = new Map<string, number>();
    for (const r of trades) {
      const k = tradeKey({
        ts: r.ts,
        price: r.price as string,
        size: r.size as string,
        side: r.tradeSide as string,
        venueSide: r.venueSide as string,
      });
      byKey.set(k, (byKey.get(k) ?? 0) + 1);
    }
    const storedIds = new Set(ids);
    for (const t of emitted) {
      const k = tradeKey(t);
      const n = byKey.get(k) ?? 0;
      const found = n > 0 && (t.id === null || storedIds.has(t.id));
      if (found) byKey.set(k, n - 1);
      if (t.ts <= start || t.ts > end) continue;
      if (found) {
        stored++;
        continue;
      }
      if (!options.gaps || !gaps.some((g) => t.ts >= g.from && t.ts <= g.to)) {
        // What was stored and emitted within 1.5 s of it, beside it in the failure.
        const near = (entries: [number, ...unknown[]][]) => entries.filter(([ts]) => Math.abs(ts - t.ts) < 1500);
        throw new Error(
          `${exchange} ${ticker}: trade ${t.id ?? '(no id)'} ${k} is neither stored nor inside a trades gap ${JSON.stringify(gaps)}; stored trades within 1.5 s [ts, sequence, id]: ${JSON.stringify(near(trades.map((r) => [r.ts, r.sequence, r.tradeId])))}; emitted [ts, id]: ${JSON.stringify(near(emitted.map((e) => [e.ts, e.id])))}`,
        );
      }
      inGaps++;
    }
    // Nothing the simulator did not emit.
    expect([...byKey].filter(([, n]) => n > 0)).toEqual([]);
  }
  return { stored, inGaps };
}

/** Waits until the trades of every audited ticker are read back past `since` (its open window starts after it). */
export async function tradesAuditedPast(recorder: Recorder, since: number): Promise<void> {
  await waitFor(
    () =>
      [...recorder.venues.values()].every((v) =>
        [...v.recorders.values()].every(
          (r) => r.tradeWindows.length === 0 && (r.tradeWindow === undefined || r.tradeWindow.from > since),
        ),
      ),
    { timeoutMs: 30_000, what: 'every ticker audited past the quiet moment' },
  );
}

/**
 * Every trade row the recorder produced is stored as one row (a second copy of a trade would be a row more than the
 * distinct trades, until the replacing engine merged it, and a row more than produced after).
 */
export async function expectTradesProducedOnce(h: RecorderHarness, recorder: Recorder): Promise<number> {
  let total = 0;
  for (const exchange of ALL) {
    const trades = (await h.rows(exchange)).filter((r) => r.kind === 'trade');
    const distinct = new Set(trades.map((r) => `${r.ticker} ${r.tradeId}`));
    const produced = recorder.sink.produced.trades[exchangeIndex(EXCHANGE_CODES[exchange])] ?? 0;
    expect([exchange, trades.length]).toEqual([exchange, distinct.size]);
    expect([exchange, trades.length]).toEqual([exchange, produced]);
    total += produced;
  }
  return total;
}

/**
 * The recorder's reconciliation reads of `exchange`, as the simulator's request log saw them (their User-Agent says
 * so): every two consecutive ones are at least 1 / (fraction × the platform's documented limit) apart, so over the run
 * they never exceed that fraction of the budget. Returns how many there were.
 */
export function expectReconcileWithinBudget(h: RecorderHarness, exchange: ExchangeKey, fraction: number): number {
  const info = exchangesOf(PLATFORMS).info(exchange);
  const budget = (PLATFORMS as Registry)[info.platform]?.budget.perSecond ?? 0;
  const reads = h.sim
    .requests({ platform: info.platform })
    .filter((r) => String(r.headers['user-agent'] ?? '').endsWith(RECONCILE_AGENT_SUFFIX))
    .map((r) => r.receivedAt)
    .sort((a, b) => a - b);
  // Milliseconds are whole on both clocks: the recorder starts a read once Date.now() reaches its due time.
  const spacing = Math.floor(1000 / (fraction * budget));
  const closest = Math.min(...reads.slice(1).map((t, i) => t - (reads[i] as number)));
  expect({ exchange, reads: reads.length > 1, closest: closest >= spacing }).toEqual({
    exchange,
    reads: true,
    closest: true,
  });
  const perSecond = ((reads.length - 1) * 1000) / ((reads.at(-1) as number) - (reads[0] as number));
  expect(perSecond).toBeLessThanOrEqual(fraction * budget);
  return reads.length;
}

/**
 * Kalshi's book rows keep their message's `sid:seq`: every delta has one, a snapshot one unless it is the recorder's
 * own book (''), and up to `until` (before any message was lost or a subscription replaced) the seqs of each sid are
 * exactly 1, 2, … n: every message the simulator sent on it is behind a row. Returns the rows checked.
 */
export async function expectKalshiSequences(h: RecorderHarness, until: number): Promise<number> {
  const bySid = new Map<string, Set<number>>();
  let checked = 0;
  for (const r of await h.rows('venue_b')) {
    if (r.kind !== 'delta' && r.kind !== 'snapshot') continue;
    if (r.kind === 'snapshot' && r.venueSeq === '') continue; // a cadence or quiet snapshot of our book
    expect([r.kind, r.venueSeq]).toEqual([r.kind, expect.stringMatching(/^\d+:\d+$/)]);
    if (r.ts > until) continue;
    const [sid, seq] = (r.venueSeq as string).split(':') as [string, string];
    bySid.set(sid, (bySid.get(sid) ?? new Set()).add(Number(seq)));
    checked++;
  }
  expect(bySid.size).toBeGreaterThan(0);
  for (const [sid, seqs] of bySid) {
    const sorted = [...seqs].sort((a, b) => a - b);
    expect([sid, sorted]).toEqual([sid, sorted.map((_, i) => i + 1)]);
  }
  return checked;
}

/**
 * The verification points of an exchange: some for every ticker, by every method of `methods` and no other than those
 * and `optional` (a method whose points may all be replaced by newer ones of the same second: coalescing keeps one
 * point a second, the newest); and for
 * each ticker at each of `moments` the history API's `/book` names the stored points around it (the last at or before
 * the moment, the first after it). Returns the points stored.
 */
export async function expectVerifiedBooks(
  h: RecorderHarness,
  api: HistoryApi,
  exchange: ExchangeKey,
  moments: readonly number[],
  methods: readonly VerificationMethod[],
  optional: readonly VerificationMethod[] = [],
): Promise<number> {
  const points = await h.verifications(exchange);
  const tickers = h.sim.books.tickers(exchange);
  const found = new Set(points.map((p) => p.method));
  const allowed = new Set([...methods, ...optional]);
  expect([exchange, methods.filter((m) => !found.has(m)), [...found].filter((m) => !allowed.has(m))]).toEqual([
    exchange,
    [],
    [],
  ]);
  const iso = (ts: number) => new Date(ts).toISOString();
  for (const ticker of tickers) {
    const mine = points.filter((p) => p.ticker === ticker);
    expect([exchange, ticker, mine.length > 0]).toEqual([exchange, ticker, true]);
    for (const at of moments) {
      const before = mine.filter((p) => p.ts <= at).at(-1);
      const after = mine.find((p) => p.ts > at);
      const answer = await api.get(`/api/${exchange}/book/${encodeURIComponent(ticker)}?at=${iso(at)}`);
      expect([exchange, ticker, answer.status]).toEqual([exchange, ticker, 200]);
      expect([exchange, ticker, answer.body.verified]).toEqual([
        exchange,
        ticker,
        {
          before: before === undefined ? null : iso(before.ts),
          before_method: before?.method ?? null,
          after: after === undefined ? null : iso(after.ts),
          after_method: after?.method ?? null,
        },
      ]);
    }
  }
  return points.length;
}
