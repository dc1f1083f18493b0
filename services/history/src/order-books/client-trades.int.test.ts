/**
 * `@depthgate/client`'s trades, bars, interleaved deltas and `events()` against the real history service (ClickHouse
 * and Redis of `./dev test`), on generated books whose trades agree with them (packages/history-tools: a trade takes
 * liquidity the book held, just before the change that takes it), with a recorded gap of the book and one of the
 * trades. Properties, per ticker:
 *
 * - the interleaved stream (`deltas({ trades: true })`) is sorted by (ts, sequence) and holds exactly the rows of the
 *   two separate streams (`deltas()`, `trades()`), on both transports;
 * - a bar's volume is the sum of its trades' sizes, its open and close its first and last trade, high and low and the
 *   count its trades' (every interval);
 * - `events()`: the book rebuilt from the deltas stays consistent with the trades — a trade never takes more than
 *   its level holds, so it never leaves a negative level —; the book after each moment is `replay()`'s; the gaps of
 *   both streams come as their own events, and inside the book's gap trades come without a book.
 */
import { insertGapRows, storeOptions, type GapRow } from '@depthgate/history-store';
import {
  Decimal,
  HistoryClient,
  type Bar,
  type DeltaRow,
  type MarketEvent,
  type TradeLine,
  type TradeRow,
} from '@depthgate/client';
import { planGeneration, runGeneration } from '@depthgate/history-tools';
import { createHarness, type Harness } from '../testing/harness';

const FROM = Date.UTC(2026, 4, 1);
const TO = FROM + 3 * 3_600_000;
const TICKERS = [
  { exchange: 'venue_b' as const, ticker: 'KXBTCD-26MAY01-T95000' },
  { exchange: 'venue_c' as const, ticker: 'BTCUSD' },
  { exchange: 'venue_a_us' as const, ticker: 'will-btc-close-above-95k' },
];
const iso = (ms: number) => new Date(ms).toISOString();

let h: Harness;
let client: HistoryClient;
/** Per ticker: the book's gap and the trades' gap inserted. */
const inserted = new Map<string, { book: { from: number; to: number }; trades: { from: number; to: number } }>();

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

beforeAll(async () => {
  h = await createHarness({ now: TO + 60_000, env: { RATE_LIMIT_DEFAULT_RPM: '1000000' } });
  const key = await h.key({});
  client = new HistoryClient({ baseUrl: (await h.listen()).url, apiKey: key });
  const { plan } = planGeneration({
    tickers: TICKERS,
    from: FROM,
    to: TO,
    snapshotIntervalMs: 300_000,
    seed: 'client-trades',
    batchRows: 5000,
    eventsPerMinute: 40,
  });
  await runGeneration(h.ch, plan, { workers: 0, store: storeOptions(h.config) });
  const rows: GapRow[] = [];
  for (const { exchange, ticker } of TICKERS) {
    const books = [...new Set((await h.db.storedRows({ exchange, ticker })).snapshots.map((s) => s.ts))].sort(
      (a, b) => a - b,
    );
    // The book's gap ends at a stored snapshot, as the recorder writes them; the trades' gap leaves the book alone.
    const book = { from: (books[4] as number) + 61_000, to: books[6] as number };
    const trades = { from: (books[12] as number) + 1_000, to: (books[14] as number) + 30_000 };
    inserted.set(ticker, { book, trades });
    rows.push(
      { exchange, ticker, from_ts: book.from, to_ts: book.to, reason: 'reconnect', detected_at: book.to },
      {
        exchange,
        ticker,
        from_ts: trades.from,
        to_ts: trades.to,
        reason: 'disconnect',
        detected_at: trades.to,
        stream: 'trades',
      },
    );
  }
  await insertGapRows(h.ch, rows);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe.each(TICKERS)('$exchange $ticker', ({ exchange, ticker }) => {
  it('the interleaved stream is sorted by (ts, sequence) and holds exactly the rows of the two streams', async () => {
    const deltas = await collect(client.deltas(exchange, ticker, { start: FROM }));
    const trades = await collect(client.trades(exchange, ticker, { start: FROM, fields: ['sequence'] }));
    expect(trades.length).toBeGreaterThan(100);
    expect(deltas.length).toBeGreaterThan(3000);
    const sequenceOf = new Map(trades.map((t) => [`${t.ts} ${t.trade_id}`, t.sequence as number]));
    expect(sequenceOf.size).toBe(trades.length);
    const plain = trades.map(({ sequence: _s, ...t }) => t);
    for (const transport of ['stream', 'pages'] as const) {
      const merged = await collect(
        client.deltas(exchange, ticker, { start: FROM, trades: true, transport, pageSize: 2_500 }),
      );
      const isTrade = (r: DeltaRow | TradeLine): r is TradeLine => 'type' in r;
      // Exactly the two streams' rows.
      expect(merged.filter((r): r is DeltaRow => !isTrade(r))).toEqual(deltas);
      expect(merged.filter(isTrade).map(({ type: _t, ...t }) => t)).toEqual(plain);
      // Sorted: (ts, sequence) strictly increasing (deltas and trades share the ticker's counter).
      const keys = merged.map((r) => [
        Date.parse(r.ts),
        isTrade(r) ? sequenceOf.get(`${r.ts} ${r.trade_id}`) : r.sequence,
      ]);
      const unsorted = keys.filter((k, i) => {
        const p = keys[i - 1];
        return (
          p !== undefined &&
          !((k[0] as number) > (p[0] as number) || (k[0] === p[0] && (k[1] as number) > (p[1] as number)))
        );
      });
      expect([transport, unsorted]).toEqual([transport, []]);
      // Trades do arrive between changes of one moment: the ties are in the order they came.
      expect(
        merged.some((r, i) => isTrade(r) && merged[i + 1]?.ts === r.ts && !isTrade(merged[i + 1] as DeltaRow)),
      ).toBe(true);
    }
    // With the gaps: the trades' gap as its own marker, the book's as its own.
    const marked = await collect(client.deltas(exchange, ticker, { start: FROM, trades: true, gaps: true }));
    const gaps = inserted.get(ticker);
    expect(marked.filter((r) => 'type' in r && r.type === 'trades_gap')).toEqual([
      expect.objectContaining({ from_ts: iso(gaps!.trades.from), to_ts: iso(gaps!.trades.to), reason: 'disconnect' }),
    ]);
    expect(marked.filter((r) => 'type' in r && r.type === 'gap').map((g) => (g as { reason: string }).reason)).toEqual([
      'reconnect',
      'seed_end',
    ]);
    const tradeGaps = (await collect(client.trades(exchange, ticker, { start: FROM, gaps: true }))).filter(
      (r) => 'type' in r,
    );
    expect(tradeGaps).toEqual([expect.objectContaining({ type: 'gap', reason: 'disconnect' })]);
  });

  it.each(['1m', '5m', '1h'] as const)(
    'a %s bar is its trades: volume their sizes’ sum, open/close the first/last',
    async (interval) => {
      const trades = await collect(client.trades(exchange, ticker, { start: FROM, fields: ['sequence'] }));
      const bars = await collect(client.bars(exchange, ticker, interval, { start: FROM, pageSize: 50 }));
      const ms = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000 }[interval];
      const groups = new Map<number, TradeRow[]>();
      for (const t of trades) {
        const start = Math.floor(Date.parse(t.ts) / ms) * ms;
        groups.set(start, [...(groups.get(start) ?? []), t]);
      }
      const expected: Bar[] = [...groups.entries()].map(([start, list]) => {
        const prices = list.map((t) => Decimal.parse(t.price));
        const volume = list.reduce((sum, t) => sum.add(t.size), Decimal.ZERO);
        return {
          ts: iso(start),
          open: (list[0] as TradeRow).price,
          high: prices.reduce((a, b) => (b.gt(a) ? b : a)).toString(),
          low: prices.reduce((a, b) => (b.lt(a) ? b : a)).toString(),
          close: (list[list.length - 1] as TradeRow).price,
          volume: volume.toString(),
          vwap: expect.any(String) as unknown as string,
          trades: list.length,
        };
      });
      expect(bars.length).toBe(groups.size);
      expect(bars).toEqual(expected);
      // VWAP lies within [low, high] (its exact rounding is the service's own test).
      for (const b of bars) expect(Decimal.parse(b.vwap).gte(b.low) && Decimal.parse(b.vwap).lte(b.high)).toBe(true);
    },
  );

  it('events(): the book stays consistent with every trade, equals replay()’s after each moment; gaps of both streams', async () => {
    const coverage = await client.coverage(exchange, ticker);
    const first = Date.parse(coverage.snapshots.first_ts as string);
    const gaps = inserted.get(ticker)!;
    const seedEnd = coverage.gaps.find((g) => g.reason === 'seed_end');
    const inGap = (t: number) => coverage.gaps.some((g) => t >= Date.parse(g.from_ts) && t < Date.parse(g.to_ts));
    const counts = { delta: 0, trade: 0, noBook: 0 };
    const labels: string[] = [];
    /** The book's checksum after the last change of each moment. */
    const afterMoment = new Map<number, number>();
    const negative: string[] = [];
    let last: MarketEvent | undefined;
    for await (const e of client.events(exchange, ticker, { from: first, to: TO - 1 })) {
      if ('at' in e && last && 'at' in last) expect(e.at).toBeGreaterThanOrEqual(last.at);
      last = e;
      if (e.type === 'delta') {
        counts.delta++;
        afterMoment.set(e.at, e.book.checksum());
      } else if (e.type === 'trade') {
        counts.trade++;
        if (e.book === null) {
          counts.noBook++;
          expect([e.ts, inGap(e.at)]).toEqual([e.ts, true]);
          continue;
        }
        // The trade takes liquidity the book holds at its level: taking it leaves no negative level.
        const level = e.book.quantityAt(e.trade.side === 'buy' ? 'ask' : 'bid', e.trade.price) ?? '0';
        if (Decimal.parse(level).sub(e.trade.size).sign() < 0) {
          negative.push(`${e.ts} ${e.trade.trade_id} ${e.trade.side} ${e.trade.size} at ${e.trade.price}: ${level}`);
        }
      } else if (e.type === 'gap' || e.type === 'trades_gap') labels.push(`${e.type} ${e.gap.reason} ${e.gap.from_ts}`);
      else if (e.restarted) labels.push(`restarted ${e.ts}`);
    }
    expect(negative).toEqual([]);
    expect(counts.trade).toBeGreaterThan(100);
    expect(counts.noBook).toBeGreaterThan(0);
    expect(labels).toEqual([
      `gap reconnect ${iso(gaps.book.from)}`,
      `restarted ${iso(gaps.book.to)}`,
      `trades_gap disconnect ${iso(gaps.trades.from)}`,
      `gap seed_end ${seedEnd?.from_ts}`,
    ]);
    // Every change of the range outside the book's gaps is given, once (those inside are not applied).
    const deltas = await collect(client.deltas(exchange, ticker, { start: first, end: TO - 1 }));
    expect(counts.delta).toBe(deltas.filter((d) => !inGap(Date.parse(d.ts))).length);
    // The book after each moment is replay()'s.
    const replayed = new Map<number, number>();
    for await (const e of client.replay(exchange, ticker, { from: first, to: TO - 1, verifySnapshots: false })) {
      if (e.type === 'book') replayed.set(e.at, e.book.checksum());
    }
    expect(afterMoment.size).toBeGreaterThan(1000);
    expect(afterMoment).toEqual(replayed);
  });
});
