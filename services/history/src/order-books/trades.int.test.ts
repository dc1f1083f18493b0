/**
 * Trades served (issue 23): the trades endpoint, deltas with include=trades, bars and Parquet, against the real
 * ClickHouse and Redis of `./dev test`. Rows are generated with a seed: deltas and trades of one ticker sharing its
 * counter, trades written twice (the same row again, and a second writer's copy with its own sequence), trade ids
 * that need quoting, gaps of both streams, and trades older than the windows of some callers. Every answer is
 * checked against the contract by the harness.
 */
import request from 'supertest';
import { DAY_MS } from '@depthgate/auth';
import {
  insertDeltaRows,
  insertGapRows,
  insertSnapshotRows,
  insertTradeRows,
  type DeltaRow,
  type GapRow,
  type SnapshotRow,
  type TradeRow,
} from '@depthgate/history-store';
import { Rng } from '@depthgate/service-kit';
import { createHarness, type Harness } from '../testing/harness';
import { fetchPage, queriesSent, walk, type Row } from '../testing/pages';
import { readParquet } from '../testing/parquet';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0, 0);
const T = 'KXTRADES-26JUN01-T50';
const OTHER = 'GEMI-TRADES';
/** The rows start three hours ago: inside an anonymous caller's day. */
const B = NOW - 3 * 3_600_000;
/** Trades three days ago: outside the anonymous day and a two-day key's window. */
const OLD = NOW - 3 * DAY_MS;
const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------------------------
// Exact decimals (units of 1e-18), independent of the service's code.

const E18 = 10n ** 18n;
function units(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`not a decimal: ${text}`);
  const v = BigInt(m[2] as string) * E18 + BigInt((m[3] ?? '').padEnd(18, '0'));
  return m[1] ? -v : v;
}
function text(v: bigint): string {
  const sign = v < 0n ? '-' : '';
  const a = v < 0n ? -v : v;
  const fraction = (a % E18).toString().padStart(18, '0').replace(/0+$/, '');
  return `${sign}${a / E18}${fraction ? `.${fraction}` : ''}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The data.

interface Stored {
  deltas: DeltaRow[];
  trades: TradeRow[];
  /** Written again, the same rows (a retried insert). */
  again: TradeRow[];
  /** A second writer's copies: another sequence and receive time. */
  second: TradeRow[];
  snapshots: SnapshotRow[];
  gaps: GapRow[];
}

function generate(): Stored {
  const rng = new Rng('trades-api');
  const out: Stored = { deltas: [], trades: [], again: [], second: [], snapshots: [], gaps: [] };
  let sequence = 1_795_400_000_000_000;
  let ts = B;
  for (let i = 0; i < 900; i++) {
    ts += rng.chance(0.25) ? 0 : rng.range(1, 9000);
    const book = i % 3 !== 0 || rng.chance(0.3);
    if (book) {
      out.deltas.push({
        exchange: 'venue_b',
        ticker: T,
        ts,
        sequence: sequence++,
        side: rng.chance(0.5) ? 'bid' : 'ask',
        price: `0.${rng.range(10, 90)}`,
        quantity_delta: `${rng.chance(0.5) ? '-' : ''}${rng.range(1, 500)}.${rng.range(0, 99)}`,
        received_ts: ts + 2,
      });
    } else {
      const id = rng.chance(0.1)
        ? `id,"${i}"`
        : rng.chance(0.2)
          ? `h:${i.toString(16).padStart(16, '0')}`
          : `${rng.uuid()}`;
      const trade: TradeRow = {
        exchange: 'venue_b',
        ticker: T,
        ts,
        sequence: sequence++,
        trade_id: id,
        price: `0.${rng.range(10, 90)}${rng.chance(0.3) ? '5' : ''}`,
        size: `${rng.range(1, 300)}.${rng.range(0, 99)}`,
        side: rng.chance(0.5) ? 'buy' : 'sell',
        venue_side: rng.chance(0.5) ? 'yes' : 'no',
        received_ts: ts + 3,
      };
      out.trades.push(trade);
      if (rng.chance(0.08)) out.again.push({ ...trade });
      if (rng.chance(0.06)) out.second.push({ ...trade, sequence: BigInt(trade.sequence) + 5n, received_ts: ts + 9 });
    }
    if (i % 100 === 0) {
      for (const side of ['bid', 'ask'] as const)
        out.snapshots.push({
          exchange: 'venue_b',
          ticker: T,
          ts,
          side,
          price: side === 'bid' ? '0.4' : '0.6',
          quantity: String(i + 1),
          received_ts: ts + 1,
        });
    }
  }
  for (let k = 0; k < 30; k++)
    out.trades.push({
      exchange: 'venue_b',
      ticker: T,
      ts: OLD + k * 60_000,
      sequence: 1_000 + k,
      trade_id: `old-${k}`,
      price: '0.5',
      size: '1',
      side: 'buy',
      venue_side: '',
    });
  out.trades.push({
    exchange: 'venue_b',
    ticker: OTHER,
    ts: B,
    sequence: 1,
    trade_id: '1',
    price: '0.5',
    size: '1',
    side: 'sell',
    venue_side: '',
  });
  out.gaps.push(
    {
      exchange: 'venue_b',
      ticker: T,
      from_ts: B + 600_000,
      to_ts: B + 660_000,
      reason: 'disconnect',
      detected_at: B + 661_000,
      stream: 'trades',
    },
    {
      exchange: 'venue_b',
      ticker: T,
      from_ts: B + 900_000,
      to_ts: B + 930_000,
      reason: 'stall',
      detected_at: B + 931_000,
    },
  );
  return out;
}

const stored = generate();

/** The trades of T as served: one per (ts, trade_id) — the copy with the smallest sequence — by (ts, sequence, id). */
function expectedTrades(from = -Infinity): TradeRow[] {
  const byKey = new Map<string, TradeRow>();
  for (const t of [...stored.trades, ...stored.again, ...stored.second]) {
    if (t.ticker !== T || t.ts < from) continue;
    const key = `${t.ts}\n${t.trade_id}`;
    const had = byKey.get(key);
    if (had === undefined || BigInt(t.sequence) < BigInt(had.sequence)) byKey.set(key, t);
  }
  return [...byKey.values()].sort(
    (a, b) =>
      a.ts - b.ts ||
      Number(BigInt(a.sequence) - BigInt(b.sequence)) ||
      (a.trade_id < b.trade_id ? -1 : a.trade_id > b.trade_id ? 1 : 0),
  );
}

/** A stored trade as the trades endpoint's JSON row, with the fields asked for. */
function tradeJson(t: TradeRow, fields: string[] = []): Row {
  const row: Row = {
    ts: iso(t.ts),
    trade_id: t.trade_id,
    price: text(units(t.price)),
    size: text(units(t.size)),
    side: t.side,
  };
  if (fields.includes('received_ts')) row.received_ts = iso(t.received_ts ?? t.ts);
  if (fields.includes('venue_side')) row.venue_side = t.venue_side;
  if (fields.includes('sequence')) row.sequence = Number(t.sequence);
  return row;
}

let h: Harness;
let full: string;
let kx2d: string;
let btc: string;

beforeAll(async () => {
  h = await createHarness({ now: NOW, env: { RATE_LIMIT_ANONYMOUS_RPM: '100000', DEFAULT_LIMIT: '100' } });
  // The copies of a trade stay rows of their own (the server merges them when it will): the reads' deduplication is
  // what is tested; the last test merges them.
  await h.db.merges('trades', false);
  await insertDeltaRows(h.ch, stored.deltas);
  await insertSnapshotRows(h.ch, stored.snapshots);
  await insertTradeRows(h.ch, stored.trades);
  await insertTradeRows(h.ch, stored.again);
  await insertTradeRows(h.ch, stored.second);
  await insertGapRows(h.ch, stored.gaps);
  full = await h.key({});
  kx2d = await h.key({ ticker_prefixes: ['kx'], max_data_age_days: 2 });
  btc = await h.key({ ticker_prefixes: ['BTC'] });
});

afterAll(async () => {
  await h?.close();
});

async function bytes(
  path: string,
  key?: string,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  let r = request(h.app)
    .get(path)
    .set('accept-encoding', 'identity')
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
  if (key) r = r.set('x-api-key', key);
  const res = await r;
  return { status: res.status, headers: res.headers as Record<string, string>, body: res.body as Buffer };
}

describe('GET /api/{exchange}/trades/{ticker}', () => {
  it('answers each trade once, by (ts, sequence), in the JSON shape of the contract', async () => {
    const first = expectedTrades()[30] as TradeRow;
    const page = await fetchPage(
      h.app,
      `/api/kalshi/trades/${T.toLowerCase()}?start_ts=${iso(first.ts)}&limit=2`,
      full,
    );
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(page.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['exchange', 'ticker', 'rows', 'count', 'next_cursor']);
    expect(body.exchange).toBe('venue_b');
    expect(body.ticker).toBe(T);
    expect(body.rows).toEqual(
      expectedTrades(first.ts)
        .slice(0, 2)
        .map((t) => tradeJson(t)),
    );
    expect(typeof body.next_cursor).toBe('string');
    expect(page.link).toContain('/api/venue_b/trades/KXTRADES-26JUN01-T50?limit=2&cursor=');
  });

  it('serves a trade written twice once: the same row again, or a second writer’s copy (the first by sequence)', async () => {
    expect(stored.again.length).toBeGreaterThan(3);
    expect(stored.second.length).toBeGreaterThan(3);
    const all = await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson&fields=sequence,received_ts`, full);
    const keys = all.rows.map((r) => `${String(r.ts)}\n${String(r.trade_id)}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(all.rows).toEqual(expectedTrades().map((t) => tradeJson(t, ['received_ts', 'sequence'])));
    expect(all.count).toBe(expectedTrades().length);
  });

  it('walks every trade exactly with cursors: no row twice, none skipped (JSON pages, Link, streams with a limit)', async () => {
    const want = expectedTrades().map((t) => tradeJson(t, ['sequence']));
    for (const limit of [1, 7, 64]) {
      const viaCursor = await walk(h.app, `/api/venue_b/trades/${T}?limit=${limit}&fields=sequence`, full);
      expect(viaCursor.rows).toEqual(want);
      // A page that the limit filled to the last trade knows it is the last (it read one row more): no empty page.
      expect(viaCursor.pages.length).toBe(Math.ceil(want.length / limit));
    }
    expect(
      (await walk(h.app, `/api/venue_b/trades/${T}?limit=13&fields=sequence`, full, { via: 'link' })).rows,
    ).toEqual(want);
    for (const format of ['ndjson', 'csv']) {
      const streamed = await walk(h.app, `/api/venue_b/trades/${T}?format=${format}&limit=50&fields=sequence`, full);
      expect(streamed.rows.map((r) => ({ ...r, sequence: Number(r.sequence) }))).toEqual(want);
    }
  });

  it('a whole range the catalogue expects to be small streams in one ClickHouse query', async () => {
    // 10,000 trades in an hour: more than a stream's first window of 4,096 rows, which was three queries (4,096,
    // 16,384, the rest), each deduplicating its trades.
    const DENSE = 'KXDENSE-26JUN01';
    const from = NOW - 2 * 3_600_000;
    const trades: TradeRow[] = Array.from({ length: 10_000 }, (_, k) => ({
      exchange: 'venue_b',
      ticker: DENSE,
      ts: from + Math.floor(k * 0.36) * 1000,
      sequence: 1 + k,
      trade_id: `d-${k}`,
      price: '0.5',
      size: `${1 + (k % 7)}`,
      side: k % 2 === 0 ? 'buy' : 'sell',
      venue_side: '',
    }));
    await insertTradeRows(h.ch, trades);
    const before = await queriesSent(h.app, 'window');
    const res = await request(h.app)
      .get(`/api/venue_b/trades/${DENSE}?start_ts=${iso(from)}&end_ts=${iso(NOW)}&format=ndjson`)
      .set('x-api-key', full);
    expect(res.status).toBe(200);
    const lines = res.text.trimEnd().split('\n');
    expect(JSON.parse(lines[lines.length - 1] as string)).toEqual({ type: 'end', count: 10_000, next_cursor: null });
    expect(lines.slice(0, -1).map((l) => (JSON.parse(l) as { trade_id: string }).trade_id)).toEqual(
      trades.map((t) => t.trade_id),
    );
    expect((await queriesSent(h.app, 'window')) - before).toBe(1);
  });

  it('NDJSON and CSV: the rows, the optional fields in order, quoted ids, the end line', async () => {
    const fields = 'sequence,venue_side,received_ts';
    const nd = await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson&fields=${fields}`, full);
    const csv = await fetchPage(h.app, `/api/venue_b/trades/${T}?format=csv&fields=${fields}`, full);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(csv.headers['content-disposition']).toBe(`inline; filename="venue_b-${T}-trades.csv"`);
    expect(csv.body.split('\n')[0]).toBe('ts,trade_id,price,size,side,received_ts,venue_side,sequence');
    const quoted = csv.body.split('\n').find((l) => l.includes('"'));
    expect(quoted).toMatch(/^[^,]+,"id,""\d+""",/);
    expect(Object.keys(nd.rows[0] as Row)).toEqual([
      'ts',
      'trade_id',
      'price',
      'size',
      'side',
      'received_ts',
      'venue_side',
      'sequence',
    ]);
    expect(csv.rows.map((r) => ({ ...r, sequence: Number(r.sequence) }))).toEqual(nd.rows);
    expect(nd.body.endsWith(`{"type":"end","count":${nd.rows.length},"next_cursor":null}\n`)).toBe(true);
    expect(csv.body.endsWith(`#end,${nd.rows.length},\n`)).toBe(true);
  });

  it('include=gaps: the trades’ gaps among the trades (not the book’s)', async () => {
    const nd = await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson&include=gaps`, full);
    expect(nd.gaps).toEqual([
      { from_ts: iso(B + 600_000), to_ts: iso(B + 660_000), reason: 'disconnect', detected_at: iso(B + 661_000) },
    ]);
    const at = nd.items.findIndex((i) => 'gap' in i);
    const before = nd.items[at - 1] as { row: Row };
    const after = nd.items[at + 1] as { row: Row };
    expect(Date.parse(String(before.row.ts))).toBeLessThanOrEqual(B + 600_000);
    expect(Date.parse(String(after.row.ts))).toBeGreaterThan(B + 600_000);
    const json = await fetchPage(h.app, `/api/venue_b/trades/${T}?include=gaps&limit=1000`, full);
    expect(json.gaps).toEqual(nd.gaps);
  });

  it('applies entitlements and windows: ticker_prefixes, max_data_age_days, the anonymous day', async () => {
    const recent = expectedTrades(NOW - DAY_MS).length;
    const inTwoDays = expectedTrades(NOW - 2 * DAY_MS).length;
    expect(expectedTrades().length).toBeGreaterThan(inTwoDays);
    const anonymous = await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson`);
    expect(anonymous.rows).toHaveLength(recent);
    const twoDays = await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson&start_ts=${iso(OLD - 1)}`, kx2d);
    expect(twoDays.rows).toHaveLength(inTwoDays);
    expect((await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson`, full)).rows).toHaveLength(
      expectedTrades().length,
    );
    for (const path of [`/api/venue_b/trades/${T}`, `/api/venue_b/bars/${T}?interval=1h`]) {
      const hidden = await fetchPage(h.app, path, btc);
      expect(hidden.status).toBe(404);
      expect(JSON.parse(hidden.body)).toEqual({ error: 'unknown_ticker', message: `Unknown ticker "${T}" on venue_b` });
    }
    expect((await fetchPage(h.app, `/api/venue_b/trades/${OTHER}?format=ndjson`, kx2d)).status).toBe(404);
  });
});

describe('deltas with include=trades', () => {
  /** The delta rows and the trade lines of the two separate streams, in one (ts, sequence) order. */
  async function separate(): Promise<Row[]> {
    const deltas = (await fetchPage(h.app, `/api/venue_b/deltas/${T}?format=ndjson`, full)).rows.map((r) => ({
      row: r,
      ts: String(r.ts),
      sequence: BigInt(r.sequence as number),
    }));
    const trades = (await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson&fields=sequence`, full)).rows.map(
      ({ sequence, ...r }) => ({
        row: { type: 'trade', ...r } as Row,
        ts: String(r.ts),
        sequence: BigInt(sequence as number),
      }),
    );
    return [...deltas, ...trades]
      .sort((a, b) =>
        a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0,
      )
      .map((x) => x.row);
  }

  it('interleaves the trades with the deltas in one (ts, sequence) order: exactly the rows of the two streams', async () => {
    const want = await separate();
    const nd = await fetchPage(h.app, `/api/venue_b/deltas/${T}?format=ndjson&include=trades`, full);
    expect(nd.rows).toEqual(want);
    expect(nd.count).toBe(want.length);
    expect(nd.rows.filter((r) => r.type === 'trade')).toHaveLength(expectedTrades().length);
    // Sorted: the deltas carry their sequence; every trade sits between rows of its ts.
    const ts = nd.rows.map((r) => String(r.ts));
    expect([...ts].sort()).toEqual(ts);
    const json = await walk(h.app, `/api/venue_b/deltas/${T}?include=trades&limit=37`, full);
    expect(json.rows).toEqual(want);
  });

  it('walks exactly with cursors, in every format (the limit counts deltas and trades alike)', async () => {
    const want = await separate();
    for (const format of ['json', 'ndjson', 'csv']) {
      const walked = await walk(h.app, `/api/venue_b/deltas/${T}?format=${format}&include=trades&limit=29`, full);
      const rows = walked.rows.map((r) => (r.type === 'trade' ? r : { ...r, sequence: Number(r.sequence) }));
      expect([format, rows]).toEqual([format, want]);
      expect(walked.pages.slice(0, -1).every((p) => p.count === 29)).toBe(true);
    }
  });

  it('CSV: the deltas’ header, trade lines #trade,ts,trade_id,price,size,side (and received_ts when asked)', async () => {
    const csv = await fetchPage(h.app, `/api/venue_b/deltas/${T}?format=csv&include=trades&fields=received_ts`, full);
    const lines = csv.body.split('\n');
    expect(lines[0]).toBe('ts,sequence,side,price,quantity_delta,received_ts');
    const trade = expectedTrades(NOW - DAY_MS)[0] as TradeRow;
    expect(lines).toContain(
      `#trade,${iso(trade.ts)},${trade.trade_id.includes(',') ? `"${trade.trade_id.replace(/"/g, '""')}"` : trade.trade_id},${text(units(trade.price))},${text(units(trade.size))},${trade.side},${iso(trade.received_ts ?? trade.ts)}`,
    );
    const nd = await fetchPage(h.app, `/api/venue_b/deltas/${T}?format=ndjson&include=trades&fields=received_ts`, full);
    expect(csv.rows.map((r) => (r.type === 'trade' ? r : { ...r, sequence: Number(r.sequence) }))).toEqual(nd.rows);
  });

  it('include=gaps,trades: the book’s gaps and the trades’ gaps, each a marker of its own kind, once over a walk', async () => {
    const book = { from_ts: iso(B + 900_000), to_ts: iso(B + 930_000), reason: 'stall', detected_at: iso(B + 931_000) };
    const trades = {
      from_ts: iso(B + 600_000),
      to_ts: iso(B + 660_000),
      reason: 'disconnect',
      detected_at: iso(B + 661_000),
    };
    const nd = await fetchPage(h.app, `/api/venue_b/deltas/${T}?format=ndjson&include=gaps,trades`, full);
    expect(nd.gaps).toEqual([book]);
    expect(nd.tradesGaps).toEqual([trades]);
    expect(nd.body).toContain(`{"type":"trades_gap","from_ts":"${trades.from_ts}"`);
    const csv = await fetchPage(h.app, `/api/venue_b/deltas/${T}?format=csv&include=trades,gaps`, full);
    expect(csv.body).toContain(`#trades_gap,${trades.from_ts},${trades.to_ts},disconnect,${trades.detected_at}\n`);
    expect(csv.items).toEqual(nd.items.map((i) => ('row' in i && i.row.type !== 'trade' ? { row: { ...i.row } } : i)));
    const json = await walk(h.app, `/api/venue_b/deltas/${T}?include=gaps,trades&limit=50`, full);
    expect(json.gaps).toEqual([book]);
    expect(json.tradesGaps).toEqual([trades]);
    expect(JSON.parse((json.pages[0] as { body: string }).body)).toHaveProperty('trades_gaps');
  });
});

describe('GET /api/{exchange}/bars/{ticker}', () => {
  interface Bar {
    ts: string;
    open: string;
    high: string;
    low: string;
    close: string;
    volume: string;
    vwap: string;
    trades: number;
  }

  /** The bars of the served trades (each once), computed here with BigInt. */
  function expectedBars(intervalMs: number, from = NOW - 2 * DAY_MS): Bar[] {
    const groups = new Map<number, TradeRow[]>();
    for (const t of expectedTrades(from)) {
      const start = Math.floor(t.ts / intervalMs) * intervalMs;
      groups.set(start, [...(groups.get(start) ?? []), t]);
    }
    return [...groups.entries()].map(([start, trades]) => {
      const prices = trades.map((t) => units(t.price));
      const volume = trades.reduce((s, t) => s + units(t.size), 0n);
      const notional = trades.reduce((s, t) => s + units(t.price) * units(t.size), 0n);
      // Scale 36 / scale 18 → scale 18, halves away from zero.
      const q = notional / volume;
      const vwap = 2n * (notional % volume) >= volume ? q + 1n : q;
      return {
        ts: iso(start),
        open: text(prices[0] as bigint),
        high: text(prices.reduce((a, b) => (b > a ? b : a))),
        low: text(prices.reduce((a, b) => (b < a ? b : a))),
        close: text(prices[prices.length - 1] as bigint),
        volume: text(volume),
        vwap: text(vwap),
        trades: trades.length,
      };
    });
  }

  it.each([
    ['1m', 60_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1d', DAY_MS],
  ])(
    '%s: a bar’s volume is the sum of its trades’ sizes, open/close its first/last trade, vwap exact',
    async (interval, ms) => {
      const from = Math.ceil((NOW - 2 * DAY_MS) / ms) * ms;
      const page = await fetchPage(h.app, `/api/venue_b/bars/${T}?interval=${interval}&limit=100000`, kx2d);
      expect(page.status).toBe(200);
      const body = JSON.parse(page.body) as {
        interval: string;
        rows: Bar[];
        count: number;
        next_cursor: string | null;
      };
      expect(body.interval).toBe(interval);
      expect(body.rows).toEqual(expectedBars(ms, from));
      expect(body.count).toBe(body.rows.length);
      expect(body.next_cursor).toBeNull();
      // Bars without trades are absent: every bar holds one.
      expect(body.rows.every((b) => b.trades >= 1)).toBe(true);
    },
  );

  it('walks bars with cursors exactly (a cursor of another interval, or of the trades, is refused)', async () => {
    const want = expectedBars(60_000, NOW - DAY_MS);
    expect(want.length).toBeGreaterThan(20);
    // A page held whole (within its first MiB): one piece with its length, and its Link when cut.
    const held = await bytes(`/api/venue_b/bars/${T}?interval=1m&limit=7`);
    expect(held.headers['content-length']).toBe(String(held.body.length));
    expect(held.headers.link).toMatch(/^<\/api\/venue_b\/bars\/.+&cursor=.+>; rel="next"$/);
    const walked = await walk(h.app, `/api/venue_b/bars/${T}?interval=1m&limit=7`, undefined);
    expect(walked.rows).toEqual(want);
    const linked = await walk(h.app, `/api/venue_b/bars/${T}?interval=1m&limit=9`, undefined, { via: 'link' });
    expect(linked.rows).toEqual(want);
    const first = await fetchPage(h.app, `/api/venue_b/bars/${T}?interval=1m&limit=3`, full);
    const cursor = first.nextCursor as string;
    const wrong = await fetchPage(h.app, `/api/venue_b/bars/${T}?interval=5m&cursor=${cursor}`, full);
    expect([wrong.status, (JSON.parse(wrong.body) as { error: string }).error]).toEqual([400, 'invalid_cursor']);
    const trades = await fetchPage(h.app, `/api/venue_b/trades/${T}?cursor=${cursor}`, full);
    expect(JSON.parse(trades.body)).toMatchObject({ error: 'invalid_cursor' });
    expect((JSON.parse(trades.body) as { message: string }).message).toContain('issued for the bars of');
  });

  it('bounds: start_ts rounds up to a bar’s start, end_ts is inclusive; nothing traded answers no bars', async () => {
    const all = expectedBars(300_000, NOW - DAY_MS);
    const second = all[1] as Bar;
    const page = await fetchPage(
      h.app,
      `/api/venue_b/bars/${T}?interval=5m&start_ts=${iso(Date.parse(second.ts) - 1)}&end_ts=${iso(Date.parse(second.ts) + 299_999)}`,
      full,
    );
    expect((JSON.parse(page.body) as { rows: Bar[] }).rows).toEqual([second]);
    const none = await fetchPage(h.app, `/api/venue_b/bars/${T}?interval=1d&start_ts=${iso(NOW + 1)}`, full);
    expect(JSON.parse(none.body)).toEqual({
      exchange: 'venue_b',
      ticker: T,
      interval: '1d',
      rows: [],
      count: 0,
      next_cursor: null,
    });
  });

  it('a sparse ticker’s month of 1-minute bars is one ClickHouse query: windows are sized by its trades too', async () => {
    // 60 trades over 30 days, twelve hours apart: 43,200 minutes of range, far more than a first window of 4,096 bars
    // — which was four queries (4,096, 8,192, 16,384 bars and the rest), each aggregating a handful of trades.
    const SPARSE = 'KXSPARSE-26JUN01';
    const from = NOW - 30 * DAY_MS;
    const trades: TradeRow[] = Array.from({ length: 60 }, (_, k) => ({
      exchange: 'venue_b',
      ticker: SPARSE,
      ts: from + k * 12 * 3_600_000,
      sequence: 1 + k,
      trade_id: `s-${k}`,
      price: `0.${10 + k}`,
      size: `${k + 1}`,
      side: k % 2 === 0 ? 'buy' : 'sell',
      venue_side: '',
    }));
    await insertTradeRows(h.ch, trades);
    const before = await queriesSent(h.app, 'bars');
    const page = await fetchPage(
      h.app,
      `/api/venue_b/bars/${SPARSE}?interval=1m&start_ts=${iso(from)}&end_ts=${iso(NOW)}&limit=100000`,
      full,
    );
    expect(page.status).toBe(200);
    const body = JSON.parse(page.body) as { rows: Bar[]; next_cursor: string | null };
    expect(body.rows.map((b) => [b.ts, b.open, b.volume, b.trades])).toEqual(
      trades.map((t) => [iso(t.ts), text(units(t.price)), t.size, 1]),
    );
    expect(body.next_cursor).toBeNull();
    expect((await queriesSent(h.app, 'bars')) - before).toBe(1);
  });

  it('a window that fills the page is the last read: no window ahead is aggregated for nothing', async () => {
    // A trade a minute for 3,000 minutes: the first window (the limit and one more bar) fills a page of 1,000.
    const DENSE = 'KXDENSE-26JUN01';
    const from = NOW - 3000 * 60_000;
    const trades: TradeRow[] = Array.from({ length: 3000 }, (_, k) => ({
      exchange: 'venue_b',
      ticker: DENSE,
      ts: from + k * 60_000,
      sequence: 1 + k,
      trade_id: `d-${k}`,
      price: '0.5',
      size: '1',
      side: 'buy',
      venue_side: '',
    }));
    await insertTradeRows(h.ch, trades);
    // The windows a bars answer read (history_response_windows; a window read ahead ends after the answer, so the
    // queries' own count could be read before it).
    const windows = async () =>
      Number(
        /^history_response_windows_sum\{[^}]*endpoint="bars"[^}]*\} (\d+)$/m.exec(
          (await request(h.app).get('/metrics')).text,
        )?.[1] ?? 0,
      );
    const before = await windows();
    const page = await fetchPage(
      h.app,
      `/api/venue_b/bars/${DENSE}?interval=1m&start_ts=${iso(from)}&limit=1000`,
      full,
    );
    expect(page.status).toBe(200);
    const body = JSON.parse(page.body) as { rows: Bar[]; next_cursor: string | null };
    expect(body.rows.map((b) => b.ts)).toEqual(trades.slice(0, 1000).map((t) => iso(t.ts)));
    expect(body.next_cursor).not.toBeNull();
    expect((await windows()) - before).toBe(1);
  });
});

describe('format=parquet', () => {
  it.each([
    ['trades', `/api/venue_b/trades/${T}?fields=received_ts,venue_side,sequence&include=gaps`],
    ['trades', `/api/venue_b/trades/${T}?limit=100`],
    ['deltas', `/api/venue_b/deltas/${T}?fields=received_ts&include=gaps`],
    ['deltas', `/api/venue_b/deltas/${T}?limit=250`],
    ['snapshots', `/api/venue_b/snapshots/${T}?fields=received_ts`],
  ])('%s: the rows and types of the NDJSON answer; its end and gaps in the footer (%s)', async (endpoint, path) => {
    const nd = await fetchPage(h.app, `${path}&format=ndjson`, full);
    const pq = await bytes(`${path}&format=parquet`, full);
    expect(pq.status).toBe(200);
    expect(pq.headers['content-type']).toBe('application/vnd.apache.parquet');
    expect(pq.headers['content-disposition']).toBe(`inline; filename="venue_b-${T}-${endpoint}.parquet"`);
    expect(pq.body.subarray(0, 4).toString()).toBe('PAR1');
    const back = await readParquet(pq.body);
    expect(back.rows).toEqual(nd.rows);
    expect(back.rows.length).toBeGreaterThan(10);
    expect(back.types.ts).toBe('TIMESTAMP WITH TIME ZONE');
    expect(back.types.price).toBe('DECIMAL(38,18)');
    expect(back.metadata['depthgate.count']).toBe(String(nd.count));
    expect(back.metadata['depthgate.next_cursor']).toBe(nd.nextCursor ?? undefined);
    expect(back.metadata['depthgate.endpoint']).toBe(endpoint);
    if (path.includes('include=gaps')) expect(JSON.parse(back.metadata['depthgate.gaps'] ?? '')).toEqual(nd.gaps);
    else expect(back.metadata['depthgate.gaps']).toBeUndefined();
  });

  it('continues with the footer’s cursor as a stream does, and is asked for by Accept too', async () => {
    const first = await bytes(`/api/venue_b/trades/${T}?format=parquet&limit=100`, full);
    const cursor = (await readParquet(first.body)).metadata['depthgate.next_cursor'] as string;
    const rest = await bytes(`/api/venue_b/trades/${T}?format=parquet&cursor=${cursor}`, full);
    const all = [...(await readParquet(first.body)).rows, ...(await readParquet(rest.body)).rows];
    expect(all).toEqual(expectedTrades().map((t) => tradeJson(t)));
    const byAccept = await request(h.app)
      .get(`/api/venue_b/trades/${T}?limit=3`)
      .set({ 'x-api-key': full, accept: 'application/vnd.apache.parquet' });
    expect(byAccept.headers['content-type']).toBe('application/vnd.apache.parquet');
  });
});

describe('bad input', () => {
  it.each([
    [`/api/venue_b/bars/${T}?interval=7m`, 'invalid_interval', 'interval must be 1m, 5m, 1h, 1d, got "7m"'],
    [`/api/venue_b/bars/${T}`, 'invalid_interval', 'interval is required: 1m, 5m, 1h, 1d'],
    [`/api/venue_b/bars/${T}?interval=1m&limit=0`, 'invalid_limit', undefined],
    [`/api/venue_b/trades/${T}?format=xlsx`, 'invalid_format', undefined],
    [`/api/venue_b/trades/${T}?include=bogus`, 'invalid_include', undefined],
    [
      `/api/venue_b/trades/${T}?include=trades`,
      'invalid_include',
      'include=trades is for the deltas endpoint, not the trades',
    ],
    [`/api/venue_b/snapshots/${T}?include=trades`, 'invalid_include', undefined],
    [`/api/venue_b/deltas/${T}?include=gaps,trades&format=parquet`, 'invalid_include', undefined],
    [`/api/venue_b/trades/${T}?fields=quantity`, 'invalid_fields', undefined],
  ])('%s → 400 %s', async (path, error, message) => {
    const res = await fetchPage(h.app, path, full);
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body) as { error: string; message: string };
    expect(body.error).toBe(error);
    if (message !== undefined) expect(body.message).toBe(message);
  });

  it('a cursor of another endpoint (or another walk of the deltas) is 400 invalid_cursor, saying which', async () => {
    const cursorOf = async (path: string) => (await fetchPage(h.app, path, full)).nextCursor as string;
    const deltas = await cursorOf(`/api/venue_b/deltas/${T}?format=json&limit=2`);
    const trades = await cursorOf(`/api/venue_b/trades/${T}?limit=2`);
    const interleaved = await cursorOf(`/api/venue_b/deltas/${T}?include=trades&limit=2`);
    for (const [path, issued] of [
      [`/api/venue_b/trades/${T}?cursor=${deltas}`, 'deltas'],
      [`/api/venue_b/deltas/${T}?cursor=${trades}`, 'trades'],
      [`/api/venue_b/deltas/${T}?cursor=${interleaved}`, 'deltas with trades (include=trades)'],
      [`/api/venue_b/deltas/${T}?include=trades&cursor=${deltas}`, 'deltas'],
      [`/api/venue_b/bars/${T}?interval=1m&cursor=${trades}`, 'trades'],
    ] as const) {
      const res = await fetchPage(h.app, path, full);
      expect(res.status).toBe(400);
      const body = JSON.parse(res.body) as { error: string; message: string };
      expect(body.error).toBe('invalid_cursor');
      expect(body.message).toContain(`issued for the ${issued} of ${T} on venue_b`);
    }
  });
});

describe('once the table has merged the copies', () => {
  it('still serves every trade once (the replacing engine kept one copy of each)', async () => {
    await h.db.merges('trades', true);
    await h.db.merge('trades');
    const nd = await fetchPage(h.app, `/api/venue_b/trades/${T}?format=ndjson`, full);
    // (A second writer's copy may be the one kept: its sequence can move it among the trades of its ts.)
    const served = nd.rows.map((r) => `${String(r.ts)} ${String(r.trade_id)}`);
    expect(served).toHaveLength(expectedTrades().length);
    expect([...served].sort()).toEqual(
      expectedTrades()
        .map((t) => `${iso(t.ts)} ${t.trade_id}`)
        .sort(),
    );
  });
});
