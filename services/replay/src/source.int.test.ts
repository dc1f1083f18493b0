import {
  HistoryStore,
  OrderBookQueries,
  insertDeltaRows,
  insertGapRows,
  insertSnapshotRows,
  insertTradeRows,
  type DeltaRow,
  type SnapshotRow,
} from '@depthgate/history-store';
import { createTestDatabase, type TestDatabase } from '@depthgate/history-store/testing';
import { testClickHouseUrl, uniqueName } from '@depthgate/test-utils';
import { coinbaseEncoder, kalshiEncoder, PageWait, replay, replayPaged } from './engine';
import { openWindow, readWindow, type WindowSpec } from './source';
import { KalshiClient } from './testing/clients';
import { exactBook } from './testing/history';

const exchange = 'venue_b' as const;
const ticker = 'KXREPLAY-26MAR07-T1';
const T = 1_772_841_600_000;

const snapshot = (ts: number, bids: [string, string][], asks: [string, string][]): SnapshotRow[] => [
  ...bids.map(([price, quantity]) => ({ exchange, ticker, ts, side: 'bid' as const, price, quantity })),
  ...asks.map(([price, quantity]) => ({ exchange, ticker, ts, side: 'ask' as const, price, quantity })),
];
const delta = (ts: number, sequence: number, side: 'bid' | 'ask', price: string, q: string): DeltaRow => ({
  exchange,
  ticker,
  ts,
  sequence,
  side,
  price,
  quantity_delta: q,
  received_ts: ts + 7,
});

/**
 * A small recorded history: a book at T, changes, trades, a gap closed by a fresh book at T+40, a cadence snapshot at
 * T+50, a gap from T+60 that closes after the windows read here, and another ticker's rows that must not leak in.
 */
describe('readWindow: one ticker’s recorded window from ClickHouse', () => {
  let db: TestDatabase;
  let queries: OrderBookQueries;
  beforeAll(async () => {
    db = await createTestDatabase({ url: testClickHouseUrl(), database: uniqueName('replay') });
    queries = new OrderBookQueries(db.store);
    await insertSnapshotRows(db.store, [
      ...snapshot(
        T,
        [
          ['0.40', '100'],
          ['0.41', '50'],
        ],
        [['0.60', '10']],
      ),
      ...snapshot(
        T + 40,
        [['0.45', '5']],
        [
          ['0.55', '6'],
          ['0.56', '7'],
        ],
      ),
      ...snapshot(
        T + 50,
        [
          ['0.45', '5'],
          ['0.46', '1.5'],
        ],
        [
          ['0.55', '6'],
          ['0.56', '7'],
        ],
      ),
      { exchange, ticker: 'OTHER', ts: T, side: 'bid', price: '0.10', quantity: '1' },
    ]);
    await insertDeltaRows(db.store, [
      delta(T + 5, 1, 'bid', '0.40', '-30'),
      delta(T + 10, 2, 'ask', '0.61', '20'),
      delta(T + 10, 3, 'bid', '0.41', '-50'),
      delta(T + 20, 5, 'ask', '0.60', '-10'),
      delta(T + 40, 7, 'bid', '0.46', '1.5'),
      delta(T + 55, 9, 'bid', '0.45', '-5'),
      { ...delta(T + 10, 1, 'bid', '0.10', '5'), ticker: 'OTHER' },
    ]);
    const trade = (ts: number, sequence: number, id: string, side: 'buy' | 'sell') => ({
      exchange,
      ticker,
      ts,
      sequence,
      trade_id: id,
      price: '0.41',
      size: '50',
      side,
      venue_side: side === 'buy' ? 'yes' : 'no',
      received_ts: ts + 3,
    });
    await insertTradeRows(db.store, [
      trade(T + 10, 4, 'trade-1', 'sell'),
      trade(T + 35, 6, 'trade-2', 'buy'),
      trade(T + 45, 8, 'trade-3', 'buy'),
    ]);
    await insertGapRows(db.store, [
      { exchange, ticker, from_ts: T + 30, to_ts: T + 40, reason: 'disconnect', detected_at: T + 41 },
      { exchange, ticker, from_ts: T + 60, to_ts: T + 10_000, reason: 'stall', detected_at: T + 10_001 },
    ]);
  });
  afterAll(async () => {
    await db.drop();
    await db.close();
  });
  const scope = () => db.store.scope(30_000);
  const spec = (from: number, to: number, pageRows?: number): WindowSpec => ({
    exchange,
    ticker,
    from,
    to,
    visibleFrom: T,
    ...(pageRows ? { pageRows } : {}),
  });

  test('the book at `from` by rule 7, then the rows of (from, to] in order, and the gaps with their closing books', async () => {
    const w = await readWindow(queries, scope(), spec(T + 7, T + 100));
    expect(w.start).toEqual({
      ts: T + 7,
      book: {
        bids: expect.arrayContaining([
          ['0.4', '70'],
          ['0.41', '50'],
        ]) as unknown,
        asks: [['0.6', '10']],
      },
    });
    expect(w.start?.book.bids).toHaveLength(2);
    expect(w.deltas.map((d) => [d.ts - T, d.sequence, d.side, d.price, d.quantity_delta, d.received_ts])).toEqual([
      [10, 2, 'ask', '0.61', '20', T + 17],
      [10, 3, 'bid', '0.41', '-50', T + 17],
      [20, 5, 'ask', '0.6', '-10', T + 27],
      [40, 7, 'bid', '0.46', '1.5', T + 47],
      [55, 9, 'bid', '0.45', '-5', T + 62],
    ]);
    expect(w.trades.map((t) => [t.ts - T, t.sequence, t.trade_id, t.price, t.size, t.side])).toEqual([
      [10, 4, 'trade-1', '0.41', '50', 'sell'],
      [35, 6, 'trade-2', '0.41', '50', 'buy'],
      [45, 8, 'trade-3', '0.41', '50', 'buy'],
    ]);
    expect(w.gaps).toEqual([
      {
        from: T + 30,
        to: T + 40,
        reason: 'disconnect',
        // Its closing book's receive time (stored without one: its ts).
        received_ts: T + 40,
        book: {
          bids: [['0.45', '5']],
          asks: expect.arrayContaining([
            ['0.55', '6'],
            ['0.56', '7'],
          ]) as unknown,
        },
      },
      { from: T + 60, to: T + 10_000, reason: 'stall' },
    ]);
  });

  test('pages resume inside a millisecond without losing or repeating a row', async () => {
    const whole = await readWindow(queries, scope(), spec(T + 7, T + 100));
    for (const pageRows of [1, 2, 3]) {
      const paged = await readWindow(queries, scope(), spec(T + 7, T + 100, pageRows));
      expect(paged.deltas).toEqual(whole.deltas);
      expect(paged.trades).toEqual(whole.trades);
    }
  });

  test('a window starting inside a gap has no start book; the gap closes it', async () => {
    const w = await readWindow(queries, scope(), spec(T + 33, T + 50));
    expect(w.start).toBeUndefined();
    expect(w.gaps.map((g) => [g.from - T, g.to - T, g.reason])).toEqual([[30, 40, 'disconnect']]);
    expect(w.trades.map((t) => t.trade_id)).toEqual(['trade-2', 'trade-3']);
  });

  test('a window starting after a gap and a later snapshot starts from that snapshot', async () => {
    const w = await readWindow(queries, scope(), spec(T + 52, T + 58));
    expect(w.start?.book.bids).toEqual(
      expect.arrayContaining([
        ['0.45', '5'],
        ['0.46', '1.5'],
      ]),
    );
    expect(w.gaps).toEqual([]);
    expect(w.deltas.map((d) => d.sequence)).toEqual([9]);
  });

  test('a gap closed by an empty book (no snapshot at its end) closes with the empty book', async () => {
    const other = 'KXREPLAY-EMPTY';
    await insertSnapshotRows(db.store, [{ exchange, ticker: other, ts: T, side: 'bid', price: '0.30', quantity: '9' }]);
    await insertGapRows(db.store, [
      { exchange, ticker: other, from_ts: T + 10, to_ts: T + 20, reason: 'disconnect', detected_at: T + 21 },
    ]);
    await insertDeltaRows(db.store, [{ ...delta(T + 25, 3, 'ask', '0.70', '4'), ticker: other }]);
    const w = await readWindow(queries, scope(), { exchange, ticker: other, from: T + 5, to: T + 30, visibleFrom: T });
    expect(w.start?.book).toEqual({ bids: [['0.3', '9']], asks: [] });
    expect(w.gaps).toEqual([
      { from: T + 10, to: T + 20, reason: 'disconnect', received_ts: T + 20, book: { bids: [], asks: [] } },
    ]);
    // After the gap, the book restarts empty at its end (rule 7 as the history's /book applies it).
    const after = await readWindow(queries, scope(), {
      exchange,
      ticker: other,
      from: T + 26,
      to: T + 30,
      visibleFrom: T,
    });
    expect(after.start?.book).toEqual({ bids: [], asks: [['0.7', '4']] });
    // Far after the last book (past the first read's look back): the same book, found through the whole past.
    const later = await readWindow(queries, scope(), {
      exchange,
      ticker: other,
      from: T + 3_600_000,
      to: T + 3_600_001,
      visibleFrom: T,
    });
    expect(later.start?.book).toEqual({ bids: [], asks: [['0.7', '4']] });
  });

  describe('a window that starts before the ticker’s first book (a market listed inside it: no gap is recorded)', () => {
    const listed = 'KXREPLAY-LISTED';
    const S = T + 10_000;
    beforeAll(async () => {
      await insertTradeRows(db.store, [
        {
          exchange,
          ticker: listed,
          ts: T + 5_000,
          sequence: 1,
          trade_id: 'before-book',
          price: '0.50',
          size: '1',
          side: 'buy',
          venue_side: 'yes',
          received_ts: T + 5_001,
        },
      ]);
      await insertSnapshotRows(
        db.store,
        snapshot(S, [['0.48', '10']], [['0.52', '7']]).map((r) => ({ ...r, ticker: listed, received_ts: S + 2 })),
      );
      await insertDeltaRows(db.store, [
        { ...delta(S, 2, 'bid', '0.49', '4'), ticker: listed },
        { ...delta(T + 12_000, 3, 'ask', '0.52', '-7'), ticker: listed },
        { ...delta(T + 20_000, 4, 'ask', '0.53', '2'), ticker: listed },
      ]);
    });
    // The first snapshot, the change at its ts and the two after it.
    const endBook = exactBook({
      bids: [
        ['0.48', '10'],
        ['0.49', '4'],
      ],
      asks: [['0.53', '2']],
    });

    const window = { exchange, ticker: listed, from: T, to: T + 60_000, visibleFrom: T };
    const firstSnapshot = { ts: S, received_ts: S + 2, book: { bids: [['0.48', '10']], asks: [['0.52', '7']] } };
    const kalshi = () => kalshiEncoder({ ticker: listed, book: { sid: 1, seq: 0 }, tradeSid: 2 });
    const replayed = (w: Awaited<ReturnType<typeof readWindow>>) => {
      const client = new KalshiClient();
      const messages = [...replay(w, kalshi())];
      for (const m of messages) client.consume(m.text);
      return { client, messages };
    };

    test('the book starts at its first snapshot in the window, played as a reset; the client ends with the book', async () => {
      const w = await readWindow(queries, scope(), window);
      expect([w.start, w.firstBook, w.gaps]).toEqual([undefined, firstSnapshot, []]);
      const { client, messages } = replayed(w);
      expect(messages.map((m) => [m.ts - T, (JSON.parse(m.text) as { type: string }).type])).toEqual([
        [5_000, 'trade'],
        [10_000, 'orderbook_snapshot'],
        [10_000, 'orderbook_delta'],
        [12_000, 'orderbook_delta'],
        [20_000, 'orderbook_delta'],
      ]);
      expect(messages[1]?.received_ts).toBe(S + 2);
      expect(client.book()).toEqual(endBook);
      // Page by page, the same.
      const paged = replayPaged(await openWindow(queries, scope(), { ...window, pageRows: 1 }), kalshi());
      const texts: string[] = [];
      for (let r = paged.next(); !r.done; r = paged.next())
        if (r.value instanceof PageWait) await r.value.ready;
        else texts.push(r.value.text);
      expect(texts).toEqual(messages.map((m) => m.text));
    });

    test('on the receive clock too, at the first snapshot’s receive time; none when the window ends before it', async () => {
      const w = await readWindow(queries, scope(), { ...window, clock: 'received_ts' });
      expect([w.start, w.firstBook]).toEqual([undefined, firstSnapshot]);
      expect(replayed(w).client.book()).toEqual(endBook);
      // Received at S + 2, after a receive-time window ending at S + 1; recorded at S, after a window ending at S − 1.
      const received = { ...window, to: S + 1, clock: 'received_ts' as const };
      expect((await readWindow(queries, scope(), received)).firstBook).toBeUndefined();
      expect((await readWindow(queries, scope(), { ...window, to: S - 1 })).firstBook).toBeUndefined();
    });
  });

  test('replayed as Kalshi, a client following the venue’s rules ends with the recorded book', async () => {
    const w = await readWindow(queries, scope(), spec(T, T + 59));
    const client = new KalshiClient();
    const encoder = kalshiEncoder({ ticker, book: { sid: 1, seq: 0 }, tradeSid: 2 });
    const texts = [...replay(w, encoder)].map((m) => m.text);
    for (const t of texts) client.consume(t);
    // The book after the gap's snapshot at T+40 and the deltas at T+40 and T+55.
    expect(client.book()).toEqual(
      exactBook({
        bids: [['0.46', '1.5']],
        asks: [
          ['0.55', '6'],
          ['0.56', '7'],
        ],
      }),
    );
    expect(client.trades.map((t) => t.split('|').pop())).toEqual(['trade-1', 'trade-2', 'trade-3']);
    expect(texts.filter((t) => t.startsWith('{"type":"orderbook_snapshot"'))).toHaveLength(2);
  });
  test('read page by page (1, 2, 3, 5 rows a read), a replay sends what the whole window sends: the gap across pages', async () => {
    const encoder = () => kalshiEncoder({ ticker, book: { sid: 1, seq: 0 }, tradeSid: 2 });
    for (const [from, to] of [
      [T + 7, T + 100],
      [T + 33, T + 58],
      [T, T + 59],
    ] as const) {
      const expected = [...replay(await readWindow(queries, scope(), spec(from, to)), encoder())].map((m) => m.text);
      for (const pageRows of [1, 2, 3, 5]) {
        const messages = replayPaged(await openWindow(queries, scope(), spec(from, to, pageRows)), encoder());
        const texts: string[] = [];
        let waits = 0;
        for (let r = messages.next(); !r.done; r = messages.next()) {
          if (r.value instanceof PageWait) {
            waits++;
            await r.value.ready;
          } else texts.push(r.value.text);
        }
        expect([from - T, pageRows, texts]).toEqual([from - T, pageRows, expected]);
        // Pages were read while the replay ran (not before it started).
        if (pageRows < 3) expect(waits).toBeGreaterThan(0);
      }
    }
  });

  test('the last trade at or before `from`: read once per window, the newest by (ts, sequence), none before any', async () => {
    expect((await readWindow(queries, scope(), spec(T + 7, T + 8))).lastTrade).toBeUndefined();
    const at35 = await readWindow(queries, scope(), spec(T + 35, T + 36));
    expect(at35.lastTrade).toEqual({
      ts: T + 35,
      received_ts: T + 38,
      sequence: 6,
      trade_id: 'trade-2',
      price: '0.41',
      size: '50',
      side: 'buy',
      venue_side: 'yes',
    });
    expect((await readWindow(queries, scope(), spec(T + 44, T + 50))).lastTrade?.trade_id).toBe('trade-2');
    expect((await readWindow(queries, scope(), spec(T + 3_600_000, T + 3_600_001))).lastTrade?.trade_id).toBe(
      'trade-3',
    );
  });

  test('the last trade is one the caller may see: none older than the start of its window (`visibleFrom`)', async () => {
    // trade-2 (T+35) is the last at T+44, but the caller's window starts at T+40.
    expect((await readWindow(queries, scope(), { ...spec(T + 44, T + 50), visibleFrom: T + 40 })).lastTrade).toBe(
      undefined,
    );
    // An hour on (past the first read's look back): trade-3 (T+45) when visible, none when the window starts after it.
    const later = spec(T + 3_600_000, T + 3_600_001);
    expect((await readWindow(queries, scope(), { ...later, visibleFrom: T + 45 })).lastTrade?.trade_id).toBe('trade-3');
    expect((await readWindow(queries, scope(), { ...later, visibleFrom: T + 46 })).lastTrade).toBeUndefined();
  });

  test('of the trades at the last moment, the last one (a trade stored twice counts by its first copy)', async () => {
    const other = 'KXREPLAY-LAST';
    const t = (sequence: number, id: string, price: string) => ({
      exchange,
      ticker: other,
      ts: T + 20,
      sequence,
      trade_id: id,
      price,
      size: '1.50',
      side: 'sell' as const,
      venue_side: 'no',
      received_ts: T + 21,
    });
    // 1001 at sequence 10 (a second writer's copy at 30), 1002 at 20: the last is 1002.
    await insertTradeRows(db.store, [t(10, '1001', '0.30'), t(20, '1002', '0.31'), t(30, '1001', '0.30')]);
    await insertTradeRows(db.store, [{ ...t(5, '1000', '0.29'), ts: T + 10 }]);
    await insertSnapshotRows(db.store, [{ exchange, ticker: other, ts: T, side: 'bid', price: '0.30', quantity: '2' }]);
    const w = await readWindow(queries, scope(), { exchange, ticker: other, from: T + 25, to: T + 26, visibleFrom: T });
    expect(w.lastTrade).toMatchObject({ trade_id: '1002', price: '0.31', size: '1.5', sequence: 20 });
    // Coinbase sends it first as `last_match` (the venue's own first message of the matches channel).
    const texts = [...replay(w, coinbaseEncoder({ product: other }))].map((m) => JSON.parse(m.text) as object);
    expect(texts).toContainEqual(expect.objectContaining({ type: 'last_match', price: '0.31' }));
  });
  describe('on the receive clock (clock received_ts): the rows received in (from, to]', () => {
    const recv = 'KXREPLAY-RECV';
    const d = (sequence: number, ts: number, received: number, side: 'bid' | 'ask', price: string, q: string) => ({
      ...delta(T + ts, sequence, side, price, q),
      ticker: recv,
      received_ts: T + received,
    });
    const tr = (sequence: number, ts: number, received: number, id: string) => ({
      exchange,
      ticker: recv,
      ts: T + ts,
      sequence,
      trade_id: id,
      price: '0.50',
      size: '2',
      side: 'buy' as const,
      venue_side: 'yes',
      received_ts: T + received,
    });
    const at = (ts: number, received: number, bids: [string, string][], asks: [string, string][]) =>
      snapshot(T + ts, bids, asks).map((r) => ({ ...r, ticker: recv, received_ts: T + received }));
    const rspec = (from: number, to: number, pageRows?: number): WindowSpec => ({
      exchange,
      ticker: recv,
      from: T + from,
      to: T + to,
      clock: 'received_ts',
      visibleFrom: T,
      ...(pageRows ? { pageRows } : {}),
    });
    beforeAll(async () => {
      // Received in sequence order; the venue's times are not (d2 stamped before d1, t0 read back from REST late).
      await insertSnapshotRows(db.store, [
        ...at(0, 2, [['0.40', '10']], [['0.60', '5']]),
        ...at(60, 70, [['0.45', '1']], [['0.55', '2']]),
      ]);
      await insertDeltaRows(db.store, [
        d(1, 20, 22, 'bid', '0.41', '3'),
        d(2, 15, 30, 'ask', '0.60', '-2'),
        d(4, 40, 41, 'bid', '0.40', '-4'),
        d(5, 65, 75, 'ask', '0.55', '1'),
      ]);
      await insertTradeRows(db.store, [tr(3, 25, 40, 'r-1'), tr(6, 5, 80, 'r-0')]);
      await insertGapRows(db.store, [
        { exchange, ticker: recv, from_ts: T + 40, to_ts: T + 60, reason: 'disconnect', detected_at: T + 50 },
      ]);
    });

    test('the book received by `from`, then every row received after it in (ts, sequence) order, the gap at its receive time', async () => {
      const w = await readWindow(queries, scope(), rspec(25, 90));
      // S1 and d1 (received at +22); d2, stamped earlier, arrived after `from`.
      expect(w.start).toEqual({
        ts: T + 20,
        received_ts: T + 25,
        book: {
          bids: expect.arrayContaining([
            ['0.4', '10'],
            ['0.41', '3'],
          ]) as unknown,
          asks: [['0.6', '5']],
        },
      });
      expect(w.trades.map((t) => [t.trade_id, t.received_ts])).toEqual([
        ['r-0', T + 80],
        ['r-1', T + 40],
      ]);
      expect(w.deltas.map((x) => x.sequence)).toEqual([2, 4, 5]);
      expect(w.gaps).toEqual([
        {
          from: T + 40,
          to: T + 60,
          reason: 'disconnect',
          received_ts: T + 70,
          book: { bids: [['0.45', '1']], asks: [['0.55', '2']] },
        },
      ]);
      expect(w.lastTrade).toBeUndefined();
      // Page by page, the same.
      for (const pageRows of [1, 2]) {
        const paged = await readWindow(queries, scope(), rspec(25, 90, pageRows));
        expect([paged.deltas, paged.trades, paged.gaps, paged.start]).toEqual([w.deltas, w.trades, w.gaps, w.start]);
      }
      // Replayed as Kalshi: the gap's fresh book, then d4.
      const client = new KalshiClient();
      for (const m of replay(w, kalshiEncoder({ ticker: recv, book: { sid: 1, seq: 0 }, tradeSid: 2 })))
        client.consume(m.text);
      expect(client.book()).toEqual(exactBook({ bids: [['0.45', '1']], asks: [['0.55', '3']] }));
    });

    test('a window ending before the gap’s book is received ends inside the gap; one narrower holds only its rows', async () => {
      const w = await readWindow(queries, scope(), rspec(22, 60));
      expect(w.deltas.map((x) => x.sequence)).toEqual([2, 4]);
      expect(w.trades.map((t) => t.trade_id)).toEqual(['r-1']);
      expect(w.gaps).toEqual([{ from: T + 40, to: T + 60, reason: 'disconnect' }]);
      const none = await readWindow(queries, scope(), rspec(22, 22));
      expect([none.deltas, none.trades, none.gaps]).toEqual([[], [], []]);
      expect(none.start?.ts).toBe(T + 20);
    });

    test('`from` inside a gap (detected by then, its book received later): no start book; the gap’s book opens it', async () => {
      const w = await readWindow(queries, scope(), rspec(55, 90));
      expect(w.start).toBeUndefined();
      expect(w.gaps.map((g) => [g.to - T, g.received_ts === undefined ? undefined : g.received_ts - T])).toEqual([
        [60, 70],
      ]);
      expect(w.deltas.map((x) => x.sequence)).toEqual([5]);
      expect(w.trades.map((t) => t.trade_id)).toEqual(['r-0']);
      // After the gap's book was received: it is the start.
      const after = await readWindow(queries, scope(), rspec(72, 90));
      expect(after.start).toEqual({
        ts: T + 60,
        received_ts: T + 72,
        book: { bids: [['0.45', '1']], asks: [['0.55', '2']] },
      });
      expect(after.gaps).toEqual([]);
    });

    test('the last trade received by `from`, whatever its venue time', async () => {
      expect((await readWindow(queries, scope(), rspec(85, 90))).lastTrade?.trade_id).toBe('r-0');
      expect((await readWindow(queries, scope(), rspec(45, 50))).lastTrade?.trade_id).toBe('r-1');
    });

    test('of the trades the caller may see: the window is on venue time, so r-0 (T+5, received T+80) is not', async () => {
      const w = await readWindow(queries, scope(), { ...rspec(85, 90), visibleFrom: T + 10 });
      expect(w.lastTrade?.trade_id).toBe('r-1');
    });
  });
});

/**
 * A long window: 300,000 changes of one ticker, 100 ms apart (about 8 hours). ClickHouse 18.16 cannot stop a
 * `ORDER BY … LIMIT n` read early, so a page read over the rest of the window reads all of it; ClickHouse counts the
 * rows each query reads, and a store that allows at most 100,000 of them a query refuses any read that does.
 */
describe('a long window is read page by page, each read near its page', () => {
  const long = 'KXLONG-26MAR07';
  const ROWS = 300_000;
  const STEP_MS = 100;
  const last = T + (ROWS - 1) * STEP_MS;
  let db: TestDatabase;
  let bounded: HistoryStore;
  beforeAll(async () => {
    db = await createTestDatabase({ url: testClickHouseUrl(), database: uniqueName('replay_long') });
    await db.fillDeltas({ exchange, ticker: long, fromTs: T, stepMs: STEP_MS, rows: ROWS });
    await insertSnapshotRows(db.store, [
      { exchange, ticker: long, ts: T, side: 'bid', price: '0.48', quantity: '1000' },
    ]);
    bounded = new HistoryStore({
      url: testClickHouseUrl(),
      database: db.database,
      settings: { max_rows_to_read: '100000', read_overflow_mode: 'throw' },
    });
  }, 60_000);
  afterAll(async () => {
    await bounded.close();
    await db.drop();
    await db.close();
  });

  for (const clock of ['ts', 'received_ts'] as const)
    test(`on the ${clock === 'ts' ? 'venue' : 'receive'} clock, no read of the first pages reads more than 100,000 rows`, async () => {
      const scope = bounded.scope(30_000);
      try {
        const window = await openWindow(new OrderBookQueries(bounded), scope, {
          exchange,
          ticker: long,
          from: T,
          to: last,
          clock,
          pageRows: 1000,
          visibleFrom: 0,
        });
        // The first three pages: the changes after `from` in order (a page never splits a millisecond).
        const sequences: number[] = [];
        for (let i = 0; i < 3; i++) sequences.push(...(await window.nextPage()).deltas.map((d) => d.sequence));
        expect(sequences).toEqual([...Array(sequences.length).keys()].map((i) => i + 1));
        expect(sequences.length).toBeGreaterThanOrEqual(2997);
      } finally {
        scope.dispose();
      }
    });
});
