/**
 * Trades, bars, deltas with trades interleaved, and `events()`, against a small local service that answers the
 * documented shapes (docs/history.md: "Trades", "Deltas and trades in one stream", "Bars") over a series held here:
 * NDJSON streams with cursors, JSON pages with `gaps` and `trades_gaps`, bars pages. The real service is tested in
 * services/history/src/order-books/client-trades.int.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Decimal } from './decimal';
import { BookError, DataError } from './errors';
import { HistoryClient } from './history-client';
import type { MarketEvent } from './history-types';
import type { Bar, DeltaRow, Gap, Side, SnapshotRow, TradeLine, TradeRow, TradeSide } from './rows';

let server: http.Server;
let base: string;
let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
const seen: URL[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(new URL(req.url ?? '', 'http://x'));
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen.length = 0;
});

const T0 = Date.UTC(2026, 10, 23, 11, 0);
const S = 1000;
const iso = (ms: number) => new Date(ms).toISOString();
const json = (res: http.ServerResponse, body: unknown) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
};
const ndjson = (res: http.ServerResponse, lines: unknown[]) => {
  res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=utf-8' });
  res.end(lines.map((l) => JSON.stringify(l) + '\n').join(''));
};
async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** A trade as stored: with the sequence it shares with the deltas (the wire gives it only when asked). */
interface Stored {
  ts: number;
  sequence: number;
  trade_id: string;
  price: string;
  size: string;
  side: TradeSide;
}

interface Series {
  snapshots: SnapshotRow[];
  deltas: DeltaRow[];
  trades: Stored[];
  bookGaps: Gap[];
  tradeGaps: Gap[];
}

const snap = (ts: number, side: Side, price: string, quantity: string): SnapshotRow => ({
  ts: iso(ts),
  side,
  price,
  quantity,
});
const delta = (ts: number, sequence: number, side: Side, price: string, quantity_delta: string): DeltaRow => ({
  ts: iso(ts),
  sequence,
  side,
  price,
  quantity_delta,
});
const trade = (ts: number, sequence: number, side: TradeSide, price: string, size: string): Stored => ({
  ts,
  sequence,
  trade_id: `t${sequence}`,
  price,
  size,
  side,
});
const gap = (from: number, to: number, reason: string): Gap => ({
  from_ts: iso(from),
  to_ts: iso(to),
  reason,
  detected_at: iso(to),
});
const wireTrade = (t: Stored): TradeRow => ({
  ts: iso(t.ts),
  trade_id: t.trade_id,
  price: t.price,
  size: t.size,
  side: t.side,
});
const tradeLine = (t: Stored): TradeLine => ({ type: 'trade', ...wireTrade(t) });

/**
 * The series: a book at T0; a trade between two deltas of one ts (a tie, as it arrived); a gap of the trades (the book
 * goes on); a gap of the book with a trade inside it and a delta that must not be applied; the restart from the
 * snapshot at its end; a trade after it.
 */
const SERIES: Series = {
  snapshots: [
    snap(T0, 'bid', '0.4', '10'),
    snap(T0, 'ask', '0.6', '5'),
    snap(T0 + 7 * S, 'bid', '0.3', '4'),
    snap(T0 + 7 * S, 'ask', '0.7', '1'),
  ],
  deltas: [
    delta(T0, 1, 'bid', '0.4', '-1'),
    delta(T0 + S, 3, 'bid', '0.4', '-2'),
    delta(T0 + S, 4, 'ask', '0.55', '3'),
    delta(T0 + 2 * S, 6, 'ask', '0.55', '-3'),
    delta(T0 + 3500, 7, 'bid', '0.41', '1'),
    delta(T0 + 6 * S, 9, 'bid', '0.1', '99'),
    delta(T0 + 8 * S, 11, 'ask', '0.7', '-1'),
  ],
  trades: [
    trade(T0 + S, 2, 'sell', '0.4', '2'),
    trade(T0 + 2 * S, 5, 'buy', '0.55', '3'),
    trade(T0 + 6 * S, 8, 'buy', '0.6', '1'),
    trade(T0 + 8 * S, 10, 'buy', '0.7', '1'),
  ],
  bookGaps: [gap(T0 + 5 * S, T0 + 7 * S, 'reconnect')],
  tradeGaps: [gap(T0 + 3 * S, T0 + 4 * S, 'disconnect')],
};

/**
 * The service over a series, as documented: rows in (ts, sequence) order, `limit` rows a page with a cursor (here the
 * index of the next row), gap markers after every row with ts ≤ their start, the end line counting rows (trades among
 * deltas included).
 */
function service(series: Series): typeof handler {
  return (req, res) => {
    const url = new URL(req.url ?? '', 'http://x');
    const q = url.searchParams;
    const start = q.has('start_ts') ? Date.parse(q.get('start_ts') as string) : -Infinity;
    const end = q.has('end_ts') ? Date.parse(q.get('end_ts') as string) : Infinity;
    const include = (q.get('include') ?? '').split(',');
    const overlapping = (gaps: Gap[]) =>
      gaps.filter((g) => Date.parse(g.to_ts) >= start && Date.parse(g.from_ts) <= end);
    const endpoint = url.pathname.split('/')[3];
    if (endpoint === 'coverage') {
      return json(res, {
        exchange: 'venue_b',
        ticker: 'T',
        start_ts: iso(start),
        end_ts: null,
        snapshots: { rows: 0, books: 0, first_ts: null, last_ts: null },
        deltas: { rows: 0, first_ts: null, last_ts: null },
        gaps: overlapping(series.bookGaps),
      });
    }
    let rows: { ms: number; seq: number; row: object }[];
    let gaps: { type: string; gap: Gap }[] = [];
    if (endpoint === 'snapshots') {
      rows = series.snapshots.map((r) => ({ ms: Date.parse(r.ts), seq: 0, row: r }));
    } else if (endpoint === 'trades') {
      const fields = (q.get('fields') ?? '').split(',');
      rows = series.trades.map((t) => ({
        ms: t.ts,
        seq: t.sequence,
        row: fields.includes('sequence') ? { ...wireTrade(t), sequence: t.sequence } : wireTrade(t),
      }));
      if (include.includes('gaps')) gaps = overlapping(series.tradeGaps).map((g) => ({ type: 'gap', gap: g }));
    } else {
      rows = series.deltas.map((d) => ({ ms: Date.parse(d.ts), seq: d.sequence, row: d }));
      if (include.includes('trades')) {
        rows.push(...series.trades.map((t) => ({ ms: t.ts, seq: t.sequence, row: tradeLine(t) })));
        rows.sort((a, b) => a.ms - b.ms || a.seq - b.seq);
      }
      if (include.includes('gaps')) {
        gaps = overlapping(series.bookGaps).map((g) => ({ type: 'gap', gap: g }));
        if (include.includes('trades')) {
          gaps.push(...overlapping(series.tradeGaps).map((g) => ({ type: 'trades_gap', gap: g })));
        }
      }
    }
    const inRange = rows.filter((r) => r.ms >= start && r.ms <= end);
    const from = Number(q.get('cursor') ?? 0);
    const limit = Number(q.get('limit') ?? 1e9);
    const page = inRange.slice(from, from + limit);
    const next = from + limit < inRange.length ? String(from + limit) : null;
    // Each marker on the page that holds the first row after it (the last page: the markers after every row).
    const lo = from === 0 ? -Infinity : (inRange[from - 1]?.ms ?? -Infinity);
    const hi = next === null ? Infinity : (page[page.length - 1]?.ms ?? Infinity);
    const mine = gaps
      .filter((g) => Date.parse(g.gap.from_ts) >= lo && Date.parse(g.gap.from_ts) < hi)
      .sort((a, b) => Date.parse(a.gap.from_ts) - Date.parse(b.gap.from_ts));
    if (q.get('format') === 'ndjson') {
      const lines: unknown[] = [];
      let m = 0;
      for (const r of page) {
        while (m < mine.length && Date.parse((mine[m] as { gap: Gap }).gap.from_ts) < r.ms) {
          const g = mine[m++] as { type: string; gap: Gap };
          lines.push({ type: g.type, ...g.gap });
        }
        lines.push(r.row);
      }
      for (; m < mine.length; m++) lines.push({ type: mine[m]?.type, ...mine[m]?.gap });
      lines.push({ type: 'end', count: page.length, next_cursor: next });
      return ndjson(res, lines);
    }
    const body: Record<string, unknown> = { exchange: 'venue_b', ticker: 'T', rows: page.map((r) => r.row) };
    body.count = page.length;
    if (include.includes('gaps')) {
      body.gaps = mine.filter((g) => g.type === 'gap').map((g) => g.gap);
      if (include.includes('trades')) body.trades_gaps = mine.filter((g) => g.type === 'trades_gap').map((g) => g.gap);
    }
    body.next_cursor = next;
    json(res, body);
  };
}

describe('trades()', () => {
  it('streams every trade in order, cursors followed, with the fields asked for; pages give the same', async () => {
    handler = service(SERIES);
    const client = new HistoryClient({ baseUrl: base });
    const all = SERIES.trades.map(wireTrade);
    expect(await collect(client.trades('venue_b', 'T', { pageSize: 3 }))).toEqual(all);
    expect(seen.map((u) => [u.pathname, u.searchParams.get('format'), u.searchParams.get('cursor')])).toEqual([
      ['/api/venue_b/trades/T', 'ndjson', null],
      ['/api/venue_b/trades/T', 'ndjson', '3'],
    ]);
    expect(await collect(client.trades('venue_b', 'T', { transport: 'pages', pageSize: 2 }))).toEqual(all);
    const withSeq = await collect(client.trades('venue_b', 'T', { fields: ['sequence'] }));
    expect(withSeq.map((t) => t.sequence)).toEqual([2, 5, 8, 10]);
    expect(seen[seen.length - 1]?.searchParams.get('fields')).toBe('sequence');
  });

  it('gaps: the trades’ gaps among them, in time order, on both paths', async () => {
    handler = service(SERIES);
    const client = new HistoryClient({ baseUrl: base });
    for (const transport of ['stream', 'pages'] as const) {
      const got = await collect(client.trades('venue_b', 'T', { gaps: true, transport, pageSize: 1 }));
      expect(got.map((x) => ('type' in x ? `gap ${x.reason}` : x.trade_id))).toEqual([
        't2',
        't5',
        'gap disconnect',
        't8',
        't10',
      ]);
    }
  });

  it('tradePage: one page with its next_cursor', async () => {
    handler = service(SERIES);
    const page = await new HistoryClient({ baseUrl: base }).tradePage('venue_b', 'T', {
      start: T0 + 2 * S,
      limit: 2,
      fields: ['received_ts', 'venue_side'],
    });
    expect(page.rows).toEqual(SERIES.trades.slice(1, 3).map(wireTrade));
    expect(page.next_cursor).toBe('2');
    expect(seen[0]?.searchParams.get('start_ts')).toBe(iso(T0 + 2 * S));
    expect(seen[0]?.searchParams.get('fields')).toBe('received_ts,venue_side');
  });
});

describe('deltas() with trades', () => {
  const expected = () => {
    const merged = [
      ...SERIES.deltas.map((d) => ({ ms: Date.parse(d.ts), seq: d.sequence, row: d as DeltaRow | TradeLine })),
      ...SERIES.trades.map((t) => ({ ms: t.ts, seq: t.sequence, row: tradeLine(t) as DeltaRow | TradeLine })),
    ];
    return merged.sort((a, b) => a.ms - b.ms || a.seq - b.seq).map((r) => r.row);
  };

  it('one stream in (ts, sequence) order, trades typed, the end line counting them; pages give the same', async () => {
    handler = service(SERIES);
    const client = new HistoryClient({ baseUrl: base });
    const streamed = await collect(client.deltas('venue_b', 'T', { trades: true, pageSize: 4 }));
    expect(streamed).toEqual(expected());
    expect(seen[0]?.searchParams.get('include')).toBe('trades');
    expect(await collect(client.deltas('venue_b', 'T', { trades: true, transport: 'pages', pageSize: 4 }))).toEqual(
      expected(),
    );
  });

  it('with gaps: the book’s and the trades’ gaps, each as its own marker, where a stream places them', async () => {
    handler = service(SERIES);
    const client = new HistoryClient({ baseUrl: base });
    const names = (items: (DeltaRow | TradeLine | { type: 'gap' | 'trades_gap'; reason: string })[]) =>
      items.map((x) => (!('type' in x) ? `d${x.sequence}` : x.type === 'trade' ? x.trade_id : `${x.type} ${x.reason}`));
    const want = [
      'd1',
      't2',
      'd3',
      'd4',
      't5',
      'd6',
      'trades_gap disconnect',
      'd7',
      'gap reconnect',
      't8',
      'd9',
      't10',
      'd11',
    ];
    for (const transport of ['stream', 'pages'] as const) {
      const got = await collect(client.deltas('venue_b', 'T', { trades: true, gaps: true, transport, pageSize: 5 }));
      expect([transport, names(got)]).toEqual([transport, want]);
    }
    expect(seen[0]?.searchParams.get('include')).toBe('gaps,trades');
  });

  it('deltaPage with trades: trade lines among the rows, the trades’ gaps in trades_gaps', async () => {
    handler = service(SERIES);
    const page = await new HistoryClient({ baseUrl: base }).deltaPage('venue_b', 'T', { trades: true, gaps: true });
    expect(page.rows).toEqual(expected());
    expect(page.gaps).toEqual(SERIES.bookGaps);
    expect(page.trades_gaps).toEqual(SERIES.tradeGaps);
  });

  it('an end line that does not count the trades is a cut stream', async () => {
    handler = (_req, res) =>
      ndjson(res, [
        SERIES.deltas[0],
        tradeLine(SERIES.trades[0] as Stored),
        { type: 'trades_gap', ...SERIES.tradeGaps[0] },
        { type: 'end', count: 1, next_cursor: null },
      ]);
    const err = await collect(new HistoryClient({ baseUrl: base }).deltas('venue_b', 'T', { trades: true })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).code).toBe('stream_cut');
  });
});

describe('bars()', () => {
  const bar = (minute: number, close: string): Bar => ({
    ts: iso(T0 + minute * 60_000),
    open: '0.5',
    high: '0.6',
    low: '0.4',
    close,
    volume: '12.5',
    vwap: '0.52',
    trades: 3,
  });
  const BARS = [bar(0, '0.5'), bar(1, '0.55'), bar(3, '0.45'), bar(4, '0.6'), bar(9, '0.4')];

  it('walks the JSON pages by next_cursor, the interval in every request; barPage gives one', async () => {
    handler = (req, res) => {
      const q = new URL(req.url ?? '', 'http://x').searchParams;
      const from = Number(q.get('cursor') ?? 0);
      const limit = Number(q.get('limit') ?? 1000);
      const rows = BARS.slice(from, from + limit);
      json(res, {
        exchange: 'venue_b',
        ticker: 'T',
        interval: q.get('interval'),
        rows,
        count: rows.length,
        next_cursor: from + limit < BARS.length ? String(from + limit) : null,
      });
    };
    const client = new HistoryClient({ baseUrl: base });
    expect(await collect(client.bars('venue_b', 'T', '1m', { start: T0, pageSize: 2 }))).toEqual(BARS);
    expect(
      seen.map((u) => [u.searchParams.get('interval'), u.searchParams.get('cursor'), u.searchParams.get('format')]),
    ).toEqual([
      ['1m', null, null],
      ['1m', '2', null],
      ['1m', '4', null],
    ]);
    expect(seen[0]?.searchParams.get('start_ts')).toBe(iso(T0));
    const page = await client.barPage('venue_b', 'T', '5m', { limit: 2 });
    expect(page).toMatchObject({ interval: '5m', rows: BARS.slice(0, 2), count: 2, next_cursor: '2' });
  });

  it('refuses an interval the service has none of before asking; a page of another interval is malformed', async () => {
    const client = new HistoryClient({ baseUrl: base });
    expect(() => client.bars('venue_b', 'T', '7m' as '1m')).toThrow(/interval must be one of 1m, 5m, 1h, 1d/);
    await expect(client.barPage('venue_b', 'T', '2h' as '1h')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(seen).toHaveLength(0);
    handler = (_req, res) =>
      json(res, { exchange: 'venue_b', ticker: 'T', interval: '7m', rows: [], count: 0, next_cursor: null });
    await expect(client.barPage('venue_b', 'T', '1m')).rejects.toMatchObject({ code: 'malformed_body' });
  });
});

/** The book after the changes given so far, as a plain model: price → quantity per side (exact). */
class Model {
  readonly sides = { bid: new Map<string, Decimal>(), ask: new Map<string, Decimal>() };
  load(rows: SnapshotRow[]) {
    this.sides.bid.clear();
    this.sides.ask.clear();
    for (const r of rows) this.sides[r.side].set(Decimal.parse(r.price).toString(), Decimal.parse(r.quantity));
  }
  apply(d: DeltaRow) {
    const side = this.sides[d.side];
    const key = Decimal.parse(d.price).toString();
    const q = (side.get(key) ?? Decimal.ZERO).add(d.quantity_delta);
    if (q.isZero()) side.delete(key);
    else side.set(key, q);
  }
  levels(side: Side) {
    return [...this.sides[side].entries()]
      .sort((a, b) => (side === 'bid' ? -1 : 1) * Decimal.parse(a[0]).cmp(b[0]))
      .map(([price, q]) => ({ price, quantity: q.toString() }));
  }
}

const label = (e: MarketEvent) =>
  e.type === 'delta'
    ? `d${e.delta.sequence}`
    : e.type === 'trade'
      ? `${e.trade.trade_id}${e.book ? '' : ' (no book)'}`
      : e.type === 'snapshot'
        ? `snapshot +${(e.at - T0) / S}s${e.restarted ? ' restarted' : ''}`
        : `${e.type} ${e.gap.reason}`;

describe('events()', () => {
  it('merges changes and trades in the order they arrived, ties as they came, gaps of both streams as events', async () => {
    handler = service(SERIES);
    const events = await collect(new HistoryClient({ baseUrl: base }).events('venue_b', 'T', { from: T0 }));
    expect(events.map(label)).toEqual([
      'd1',
      't2',
      'd3',
      'd4',
      't5',
      'd6',
      'trades_gap disconnect',
      'd7',
      'gap reconnect',
      't8 (no book)',
      'snapshot +7s restarted',
      't10',
      'd11',
    ]);
    // One stream, with both kinds of gap markers; the book's gaps from coverage, as replay reads them.
    const stream = seen.filter((u) => u.pathname.includes('/deltas/'));
    expect(stream.map((u) => [u.searchParams.get('include'), u.searchParams.get('format')])).toEqual([
      ['gaps,trades', 'ndjson'],
    ]);
    // `ts` as the rows spell it, `at` the same moment.
    for (const e of events) if ('at' in e) expect(Date.parse(e.ts)).toBe(e.at);
    const t8 = events.find((e) => e.type === 'trade' && e.trade.trade_id === 't8');
    expect(t8).toMatchObject({ ts: iso(T0 + 6 * S), trade: tradeLine(SERIES.trades[2] as Stored), book: null });
  });

  it('each event carries the book current after it (the same OrderBook, kept current), equal to a plain model', async () => {
    handler = service(SERIES);
    const model = new Model();
    model.load(SERIES.snapshots.slice(0, 2));
    let book: unknown;
    const kept: { label: string; bids: unknown; asks: unknown }[] = [];
    for await (const e of new HistoryClient({ baseUrl: base }).events('venue_b', 'T', { from: T0 })) {
      if (e.type === 'delta') model.apply(e.delta);
      if (e.type === 'snapshot') model.load(SERIES.snapshots.filter((r) => Date.parse(r.ts) === e.at));
      if ((e.type === 'delta' || e.type === 'trade' || e.type === 'snapshot') && e.book) {
        expect([label(e), e.book.bids(), e.book.asks()]).toEqual([label(e), model.levels('bid'), model.levels('ask')]);
        book ??= e.book;
        expect(e.book).toBe(book);
        kept.push({ label: label(e), bids: e.book.clone().bids(), asks: e.book.clone().asks() });
      }
    }
    // The trade between two changes of one ts sees the first only; a trade's level holds at least its size.
    expect(kept.find((k) => k.label === 't2')).toEqual({
      label: 't2',
      bids: [{ price: '0.4', quantity: '9' }],
      asks: [{ price: '0.6', quantity: '5' }],
    });
    expect(kept.find((k) => k.label === 't5')?.asks).toEqual([
      { price: '0.55', quantity: '3' },
      { price: '0.6', quantity: '5' },
    ]);
    // The change inside the book's gap (d9) is never applied: after the restart the book is the snapshot's.
    expect(kept.find((k) => k.label === 't10')).toEqual({
      label: 't10',
      bids: [{ price: '0.3', quantity: '4' }],
      asks: [{ price: '0.7', quantity: '1' }],
    });
  });

  it('from: earlier changes are applied, not given; to: inclusive', async () => {
    handler = service(SERIES);
    const client = new HistoryClient({ baseUrl: base });
    const got: string[] = [];
    for await (const e of client.events('venue_b', 'T', { from: T0 + 2 * S, to: T0 + 3500 })) {
      got.push(label(e));
      // The first event given: the book already holds every change before it.
      if (got.length === 1 && e.type === 'trade') {
        expect([e.book?.bids(), e.book?.asks()]).toEqual([
          [{ price: '0.4', quantity: '7' }],
          [
            { price: '0.55', quantity: '3' },
            { price: '0.6', quantity: '5' },
          ],
        ]);
      }
    }
    expect(got).toEqual(['t5', 'd6', 'trades_gap disconnect', 'd7']);
  });

  it('onGap: error ends the walk at the first gap, of the trades as of the book', async () => {
    handler = service(SERIES);
    const client = new HistoryClient({ baseUrl: base });
    const seenLabels: string[] = [];
    const err = await (async () => {
      for await (const e of client.events('venue_b', 'T', { from: T0, onGap: 'error' })) seenLabels.push(label(e));
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BookError);
    expect((err as BookError).code).toBe('in_gap');
    expect((err as BookError).message).toContain('the trades have a recorded gap (disconnect');
    expect(seenLabels).toEqual(['d1', 't2', 'd3', 'd4', 't5', 'd6']);
    handler = service({ ...SERIES, tradeGaps: [] });
    const bookGap = await collect(client.events('venue_b', 'T', { from: T0, onGap: 'error' })).catch((e: unknown) => e);
    expect((bookGap as BookError).message).toContain('the series has a recorded gap (reconnect');
  });

  it('a trade that would take more than its level holds is visible at once: the book at it says so', async () => {
    // The service's trades agree with its book (tested against the real service); here a series where they do not,
    // to show what a consumer checking them sees.
    handler = service({
      ...SERIES,
      trades: [trade(T0 + S, 2, 'sell', '0.4', '50')],
      bookGaps: [],
      tradeGaps: [],
    });
    const over: string[] = [];
    const client = new HistoryClient({ baseUrl: base });
    for await (const e of client.events('venue_b', 'T', { from: T0, to: T0 + 4 * S })) {
      if (e.type !== 'trade' || !e.book) continue;
      const level = e.book.quantityAt(e.trade.side === 'buy' ? 'ask' : 'bid', e.trade.price) ?? '0';
      if (Decimal.parse(level).lt(e.trade.size)) over.push(`${e.trade.trade_id} ${e.trade.size} > ${level}`);
    }
    expect(over).toEqual(['t2 50 > 9']);
  });
});
