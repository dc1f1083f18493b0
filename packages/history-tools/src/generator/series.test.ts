import type { ExchangeKey } from '@depthgate/platforms';
import type { Side } from '@depthgate/history-store';
import { formatUnits, generateTickers } from './profiles';
import { TickerSeries, expectedRows, type GeneratedTrade, type SeriesOptions } from './series';

interface Snap {
  ts: number;
  levels: Map<string, bigint>;
  received: number;
}
interface Delta {
  ts: number;
  sequence: number;
  key: string;
  change: bigint;
  received: number;
}

/** Parses a decimal string to a BigInt at 18 places — independently of how the generator made it. */
function scaled(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = (m[3] ?? '').padEnd(18, '0');
  const v = BigInt(m[2] as string) * 10n ** 18n + BigInt(frac);
  return m[1] === '-' ? -v : v;
}

interface Trade {
  ts: number;
  sequence: number;
  key: string;
  size: bigint;
  side: string;
  id: string;
  venueSide: string;
  received: number;
}

function collect(
  options: SeriesOptions,
  chunkMs = 3_600_000,
): { snaps: Snap[]; deltas: Delta[]; trades: Trade[]; series: TickerSeries } {
  const series = new TickerSeries(options);
  const snaps: Snap[] = [];
  const deltas: Delta[] = [];
  const trades: Trade[] = [];
  const p = series.profile;
  const sink = {
    trade(t: GeneratedTrade) {
      // The level the taker took from: the asks for a buy, the bids for a sell.
      trades.push({
        ts: t.ts,
        sequence: t.sequence,
        key: `${t.side === 'buy' ? 'ask' : 'bid'} ${scaled(formatUnits(t.price, p.priceScale))}`,
        size: scaled(formatUnits(t.size, p.qtyScale)),
        side: t.side,
        id: t.tradeId,
        venueSide: t.venueSide,
        received: t.receivedTs,
      });
    },
    snapshotLevel(ts: number, side: Side, price: number, quantity: number, received: number) {
      let last = snaps[snaps.length - 1];
      if (!last || last.ts !== ts) {
        last = { ts, levels: new Map(), received };
        snaps.push(last);
      }
      if (last.received !== received) throw new Error(`levels of the book at ${ts} received at different times`);
      const key = `${side} ${scaled(formatUnits(price, p.priceScale))}`;
      if (last.levels.has(key)) throw new Error(`level ${key} twice in the snapshot at ${ts}`);
      last.levels.set(key, scaled(formatUnits(quantity, p.qtyScale)));
    },
    delta(ts: number, sequence: number, side: Side, price: number, change: number, received: number) {
      deltas.push({
        ts,
        sequence,
        key: `${side} ${scaled(formatUnits(price, p.priceScale))}`,
        change: scaled(formatUnits(change, p.qtyScale)),
        received,
      });
    },
  };
  // Advance in uneven steps: the output must not depend on how the range is walked.
  for (let t = options.from; !series.done; t += chunkMs) series.advance(t + chunkMs, sink);
  return { snaps, deltas, trades, series };
}

const base = {
  seed: 'test',
  from: Date.UTC(2026, 2, 7),
  to: Date.UTC(2026, 2, 7, 4),
  snapshotIntervalMs: 300_000,
  eventsPerMinute: 40,
};

const cases: [ExchangeKey, string][] = [
  ['venue_b', 'KXBTCD-26MAR07-T100000'],
  ['venue_a_us', 'will-bitcoin-close-above-100k-on-mar-31'],
  ['venue_a_us', 'fed-cuts-rates-in-april-2026'],
  ['venue_c', 'BTCUSD'],
  ['venue_c', 'DOGEUSD'],
  ['venue_c', 'GEMI-FEDJAN26-DN25'],
];

describe('generated series', () => {
  it.each(cases)(
    '%s %s: each snapshot plus the deltas up to the next reproduces the next exactly',
    (exchange, ticker) => {
      const { snaps, deltas } = collect({ ...base, exchange, ticker });
      expect(snaps.length).toBe(48);
      expect(deltas.length).toBeGreaterThan(1000);
      let d = 0;
      for (let i = 0; i + 1 < snaps.length; i++) {
        const from = snaps[i] as Snap;
        const to = snaps[i + 1] as Snap;
        const book = new Map(from.levels);
        while (d < deltas.length && (deltas[d] as Delta).ts < to.ts) {
          const delta = deltas[d] as Delta;
          if (delta.ts < from.ts) throw new Error(`delta at ${delta.ts} before its snapshot at ${from.ts}`);
          if (delta.change === 0n) throw new Error(`zero delta at ${delta.ts}`);
          const next = (book.get(delta.key) ?? 0n) + delta.change;
          if (next < 0n) throw new Error(`level ${delta.key} below zero at ${delta.ts}`);
          if (next === 0n) book.delete(delta.key);
          else book.set(delta.key, next);
          d++;
        }
        expect(book).toEqual(to.levels);
      }
    },
  );

  it.each(cases)(
    '%s %s: sequence strictly increasing by one over deltas and trades, never a crossed book, all inside the range',
    (exchange, ticker) => {
      const { snaps, deltas, trades } = collect({ ...base, exchange, ticker });
      const rows = [...deltas, ...trades].sort((a, b) => a.sequence - b.sequence);
      let misordered = 0;
      for (let i = 1; i < rows.length; i++) {
        const [prev, cur] = [
          rows[i - 1] as { ts: number; sequence: number },
          rows[i] as { ts: number; sequence: number },
        ];
        if (cur.sequence !== prev.sequence + 1 || cur.ts < prev.ts) misordered++;
      }
      expect(misordered).toBe(0);
      for (const s of snaps) {
        const bids = [...s.levels.keys()]
          .filter((k) => k.startsWith('bid'))
          .map((k) => BigInt(k.split(' ')[1] as string));
        const asks = [...s.levels.keys()]
          .filter((k) => k.startsWith('ask'))
          .map((k) => BigInt(k.split(' ')[1] as string));
        expect(bids.length).toBeGreaterThan(0);
        expect(asks.length).toBeGreaterThan(0);
        const maxBid = bids.reduce((a, b) => (a > b ? a : b));
        const minAsk = asks.reduce((a, b) => (a < b ? a : b));
        expect(maxBid < minAsk).toBe(true);
        expect([...s.levels.values()].every((q) => q > 0n)).toBe(true);
        expect(s.ts).toBeGreaterThanOrEqual(base.from);
        expect(s.ts).toBeLessThan(base.to);
      }
      expect((deltas[deltas.length - 1] as Delta).ts).toBeLessThan(base.to);
    },
  );

  it.each(cases)(
    '%s %s: every trade takes liquidity the book held: the next delta reduces its level by exactly its size',
    (exchange, ticker) => {
      const { snaps, deltas, trades } = collect({ ...base, exchange, ticker });
      expect(trades.length).toBeGreaterThan(50);
      const bySequence = new Map(deltas.map((d) => [d.sequence, d]));
      // The book before each row, from the first snapshot on (the rows are one ticker's, in sequence order).
      const first = snaps[0] as Snap;
      const book = new Map(first.levels);
      const rows = [...deltas.map((d) => ({ d })), ...trades.map((t) => ({ t }))]
        .filter((r) => ('d' in r ? r.d.ts : r.t.ts) >= first.ts)
        .sort((a, b) => ('d' in a ? a.d.sequence : a.t.sequence) - ('d' in b ? b.d.sequence : b.t.sequence));
      let checked = 0;
      for (const r of rows) {
        if ('t' in r) {
          const next = bySequence.get(r.t.sequence + 1) as Delta;
          expect([next.ts, next.key, next.change]).toEqual([r.t.ts, r.t.key, -r.t.size]);
          expect(r.t.size > 0n).toBe(true);
          expect(r.t.size <= (book.get(r.t.key) ?? 0n)).toBe(true);
          // The top of its side: no better price rests on that side.
          const [side, price] = r.t.key.split(' ') as [string, string];
          const better = [...book.keys()].filter((k) => {
            const [s2, p2] = k.split(' ') as [string, string];
            return s2 === side && (side === 'ask' ? BigInt(p2) < BigInt(price) : BigInt(p2) > BigInt(price));
          });
          expect(better).toEqual([]);
          expect(r.t.received).toBe(next.received);
          checked++;
        } else {
          const level = (book.get(r.d.key) ?? 0n) + r.d.change;
          if (level === 0n) book.delete(r.d.key);
          else book.set(r.d.key, level);
        }
      }
      expect(checked).toBeGreaterThan(40);
      expect(new Set(trades.map((t) => t.id)).size).toBe(trades.length);
      const sides = new Set(trades.map((t) => `${t.side} ${t.venueSide}`));
      if (exchange === 'venue_b') expect(sides).toEqual(new Set(['buy yes', 'sell no']));
      if (exchange === 'venue_a_us') for (const t of trades) expect(t.id).toMatch(/^h:[0-9a-f]{16}$/);
    },
  );

  it('trades take only sequence numbers: left out, the deltas count up by one (the book is drawn apart from them)', () => {
    const options = { ...base, exchange: 'venue_b' as const, ticker: 'KXFED-26APR-T4.25' };
    const { deltas, trades } = collect(options);
    // Renumbered without the trades, the deltas count up by one: trades took only sequence numbers.
    const taken = new Set(trades.map((t) => t.sequence));
    const first = (deltas[0] as Delta).sequence;
    let skipped = 0;
    for (const [i, d] of deltas.entries()) {
      while (taken.has(first + i + skipped)) skipped++;
      expect(d.sequence).toBe(first + i + skipped);
    }
  });

  it('receive times: ts plus a latency of 2 to 750 ms, never going backwards, one per message', () => {
    const { snaps, deltas } = collect({ ...base, exchange: 'venue_b', ticker: 'KXBTCD-26MAR07-T100000' });
    const rows = [...snaps.map((s) => ({ ts: s.ts, received: s.received })), ...deltas].sort(
      (a, b) => a.ts - b.ts || a.received - b.received,
    );
    const latencies = rows.map((r) => r.received - r.ts);
    expect(Math.min(...latencies)).toBeGreaterThanOrEqual(2);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(750);
    for (let i = 1; i < rows.length; i++) {
      expect((rows[i] as { received: number }).received).toBeGreaterThanOrEqual(
        (rows[i - 1] as { received: number }).received,
      );
    }
    // Rows of one message share their receive time; most messages arrive within 100 ms.
    const byTs = new Map<number, Set<number>>();
    for (const d of deltas) byTs.set(d.ts, (byTs.get(d.ts) ?? new Set()).add(d.received));
    expect([...byTs.values()].every((set) => set.size === 1)).toBe(true);
    expect(latencies.filter((l) => l <= 100).length / latencies.length).toBeGreaterThan(0.9);
  });

  it('is deterministic for a seed, whatever the walking steps; another seed differs', () => {
    const options = { ...base, exchange: 'venue_b' as const, ticker: 'KXFED-26APR-T4.25' };
    const a = collect(options, 3_600_000);
    const b = collect(options, 7_777);
    expect(b.snaps).toEqual(a.snaps);
    expect(b.deltas).toEqual(a.deltas);
    expect(b.trades).toEqual(a.trades);
    const c = collect({ ...options, seed: 'other' });
    expect(c.deltas).not.toEqual(a.deltas);
  });

  it('writes prices and sizes on the venue grids', () => {
    const kalshi = new TickerSeries({ ...base, exchange: 'venue_b', ticker: 'KXBTCD-26MAR07-T100000' });
    expect(kalshi.profile).toMatchObject({ priceScale: 4, tick: 100, qtyScale: 2 });
    const gemini = new TickerSeries({ ...base, exchange: 'venue_c', ticker: 'BTCUSD' });
    expect(gemini.profile).toMatchObject({ priceScale: 2, tick: 1, qtyScale: 8 });
    const pmus = new TickerSeries({ ...base, exchange: 'venue_a_us', ticker: 'fed-cuts-rates-in-april-2026' });
    expect(pmus.profile.priceScale).toBe(3);
    for (const s of [kalshi, pmus]) {
      for (const price of [...s.book().bids.keys(), ...s.book().asks.keys()]) {
        expect(price % s.profile.tick).toBe(0);
        expect(price).toBeGreaterThan(0);
        expect(price).toBeLessThan(10 ** s.profile.priceScale);
      }
    }
  });

  it('formats integer units exactly', () => {
    expect(formatUnits(4800, 4)).toBe('0.4800');
    expect(formatUnits(15000, 2)).toBe('150.00');
    expect(formatUnits(-1, 2)).toBe('-0.01');
    expect(formatUnits(123456789, 8)).toBe('1.23456789');
    expect(formatUnits(42, 0)).toBe('42');
    expect(formatUnits(Number.MAX_SAFE_INTEGER, 8)).toBe('90071992.54740991');
    expect(() => formatUnits(0.5, 2)).toThrow(RangeError);
  });

  it('estimates its row count closely', () => {
    const options = { ...base, exchange: 'venue_c' as const, ticker: 'ETHUSD' };
    const { snaps, deltas } = collect(options);
    const estimate = expectedRows(options);
    const snapshotRows = snaps.reduce((n, s) => n + s.levels.size, 0);
    expect(Math.abs(snapshotRows - estimate.snapshots) / estimate.snapshots).toBeLessThan(0.2);
    expect(Math.abs(deltas.length - estimate.deltas) / estimate.deltas).toBeLessThan(0.1);
  });

  it('names tickers in each venue’s shapes', () => {
    const b = generateTickers('venue_b', 20, 's');
    const a = generateTickers('venue_a_us', 20, 's');
    const c = generateTickers('venue_c', 20, 's');
    for (const t of b) expect(t).toMatch(/^KX[A-Z0-9]+-\d{2}[A-Z]{3}\d{2,6}-[A-Z0-9.]+$/);
    for (const t of a) expect(t).toMatch(/^[a-z0-9]+(-[a-z0-9]+)+$/);
    for (const t of c) expect(t).toMatch(/^([A-Z]+|GEMI(-[A-Z0-9]+)+)$/);
    expect(new Set(b).size).toBe(20);
    expect(generateTickers('venue_b', 20, 's')).toEqual(b);
  });
});
