/**
 * The replay service end to end, on the test Redis and ClickHouse: the replay service served as main.ts serves it
 * (HTTP and the WebSocket replay's upgrades), and the history service as deployed (its built entrypoint,
 * services/history/dist/main.js, started as a process on the same database and key prefix — a service never imports
 * another) as the reference.
 *
 * For each recorded exchange, a random recorded history (src/testing/history.ts: books, changes in messages of 1–3
 * rows, trades, gaps closed by fresh books) is stored (src/testing/harness.ts); the replayed messages of the whole history and of windows
 * inside it are consumed by the venue's reference client (src/testing/clients.ts, written from the venue's rules),
 * whose book must equal the history's `/book?at=` at the window's end and whose trades must equal the history's
 * `/trades` of the window. Backpressure, every bad input and its JSON error; then Kalshi over the WebSocket replay.
 */
import http from 'node:http';
import net from 'node:net';
import { insertGapRows, insertSnapshotRows, insertTradeRows } from '@depthgate/history-store';
import type { TestDatabase } from '@depthgate/history-store/testing';
import type { ExchangeKey } from '@depthgate/platforms';
import type { Registry } from '@depthgate/service-kit';
import { WsTestClient, waitFor } from '@depthgate/test-utils';
import type { RecordedWindow } from './engine';
import { KalshiClient } from './testing/clients';
import { startHarness, TICKERS, type Harness, type Replayed } from './testing/harness';
import { VENUES, type Venue } from './testing/venues';

describe('GET /api/{exchange}/replay/{ticker}', () => {
  let h: Harness;
  let db: TestDatabase;
  let registry: Registry;
  let url: string;
  let key: string;
  let now: number;
  const windows = new Map<ExchangeKey, RecordedWindow>();

  beforeAll(async () => {
    h = await startHarness();
    ({ db, registry, url, key, now } = h);
    for (const [k, w] of h.windows) windows.set(k, w);
  }, 90_000);

  afterAll(async () => {
    await h?.close();
  });

  const issue = (input?: Parameters<Harness['issue']>[0]) => h.issue(input);
  const replayed = (pathAndQuery: string, headers?: Record<string, string>) => h.replayed(pathAndQuery, headers);
  const historyBook = (exchange: ExchangeKey, at: number) => h.historyBook(exchange, at);
  const historyTrades = (v: Venue, from: number, to: number) => h.historyTrades(v, from, to);

  describe.each(VENUES)('$name', (v) => {
    const windowsOf = (w: RecordedWindow): [number, number][] => {
      const times = [...w.deltas.map((d) => d.ts), ...w.trades.map((t) => t.ts), ...w.gaps.map((g) => g.to)];
      const first = w.start?.ts ?? Math.min(...times);
      const last = Math.max(...times);
      // The whole history, and windows inside it (starting and ending anywhere: in a gap, between rows, on one).
      const span = last - first;
      return [
        [first, last],
        [first + Math.floor(span / 3), first + Math.floor((2 * span) / 3)],
        [first + Math.floor(span / 7), last - Math.floor(span / 5)],
        [first + Math.floor(span / 2), first + Math.floor(span / 2) + 1],
      ];
    };

    it('a client rebuilding the book from the replayed messages ends with the history’s /book, and receives its /trades', async () => {
      const w = windows.get(v.exchange) as RecordedWindow;
      let compared = 0;
      for (const [from, to] of windowsOf(w)) {
        const r = await replayed(
          `/api/${v.exchange}/replay/${TICKERS[v.exchange]}?from=${new Date(from).toISOString()}&to=${to}`,
        );
        expect(r.status).toBe(200);
        expect(r.type).toBe('application/x-ndjson; charset=utf-8');
        expect(JSON.parse(r.lines[r.lines.length - 1] as string)).toEqual({ type: 'end', count: r.texts.length });
        const client = v.client(TICKERS[v.exchange]);
        let previous = -Infinity;
        for (const [i, text] of r.texts.entries()) {
          const line = JSON.parse((r.lines[i] as string).replace(text, 'null')) as { ts: string; received_ts: string };
          const ts = Date.parse(line.ts);
          expect(ts).toBeGreaterThanOrEqual(previous);
          expect(ts).toBeGreaterThanOrEqual(from);
          expect(ts).toBeLessThanOrEqual(to);
          expect(line.received_ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
          previous = ts;
          client.consume(text);
        }
        const expected = await historyBook(v.exchange, to);
        if (expected !== undefined) {
          expect(client.book()).toEqual(expected);
          compared++;
        }
        expect(client.trades).toEqual(await historyTrades(v, from, to));
      }
      // The whole history ends on a book at least.
      expect(compared).toBeGreaterThan(0);
    });
  });

  describe('backpressure', () => {
    const T = Date.UTC(2026, 2, 7);
    const ticker = 'FLOODUSD';
    const rows = 200_000;
    beforeAll(async () => {
      await insertSnapshotRows(db.store, [
        { exchange: 'venue_c', ticker, ts: T, side: 'bid', price: '0.40', quantity: '1' },
      ]);
      // One delta per millisecond: one l2_updates message each, about 26 MB of lines.
      await db.fillDeltas({ exchange: 'venue_c', ticker, fromTs: T + 1, stepMs: 1, rows });
    });

    const sent = async () =>
      ((await registry.getSingleMetric('replay_messages_total')?.get())?.values ?? [])
        .filter((v) => v.labels.exchange === 'venue_c')
        .reduce((sum, v) => sum + v.value, 0);
    const outcome = async (name: string) =>
      ((await registry.getSingleMetric('replay_streams_total')?.get())?.values ?? [])
        .filter((v) => v.labels.exchange === 'venue_c' && v.labels.outcome === name)
        .reduce((sum, v) => sum + v.value, 0);

    /** Starts the replay with a reader that reads nothing; resolves once the service has stopped writing. */
    async function stalled(): Promise<{ req: http.ClientRequest; res: http.IncomingMessage; written: number }> {
      const before = await sent();
      const { req, res } = await new Promise<{ req: http.ClientRequest; res: http.IncomingMessage }>(
        (resolve, reject) => {
          const req = http.get(
            `${url}/api/venue_c/replay/${ticker}?from=${T}&to=${T + rows}`,
            { headers: { 'X-API-Key': key } },
            (res) => resolve({ req, res }),
          );
          req.on('error', reject);
        },
      );
      expect(res.statusCode).toBe(200);
      // The response is not read: the service must stop once the socket is full, whatever time it is given.
      let last = -1;
      const written = await waitFor(
        async () => {
          const now = (await sent()) - before;
          const stable = now > 0 && now === last;
          last = now;
          return stable ? now : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 300, what: 'the replay to stop writing to a reader that reads nothing' },
      );
      return { req, res, written };
    }

    it('a reader that stops reading stops the replay (a bounded buffer); reading again finishes it', async () => {
      const { res, written } = await stalled();
      // Far from all of it: what the sockets' kernel buffers hold (a few MB on loopback) and one batch of the service's.
      expect(written).toBeLessThan(rows / 2);
      const complete = await outcome('complete');
      res.setEncoding('utf8');
      let body = '';
      for await (const chunk of res) body += chunk as string;
      const lines = body.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(rows + 2);
      expect(JSON.parse(lines[lines.length - 1] as string)).toEqual({ type: 'end', count: rows + 1 });
      expect(await outcome('complete')).toBe(complete + 1);
    });

    it('a reader that goes away ends the replay (counted as cancelled)', async () => {
      const cancelled = await outcome('cancelled');
      const { req } = await stalled();
      req.destroy();
      await waitFor(async () => (await outcome('cancelled')) === cancelled + 1, {
        timeoutMs: 10_000,
        what: 'the replay to end as cancelled',
      });
    });
  });

  describe('received_ts of a gap’s reset', () => {
    const T = Date.UTC(2026, 2, 8);
    const ticker = 'KXREPLAY-RESET';
    const row = (ts: number, received: number, side: 'bid' | 'ask', price: string, quantity: string) => ({
      exchange: 'venue_b' as const,
      ticker,
      ts,
      side,
      price,
      quantity,
      received_ts: received,
    });
    beforeAll(async () => {
      await insertSnapshotRows(db.store, [
        row(T, T + 1, 'bid', '0.40', '10'),
        // The book that closes the gap: written at T+20 (the gap's end), its newest message received at T+27.
        row(T + 20, T + 27, 'bid', '0.42', '3'),
        row(T + 20, T + 27, 'ask', '0.58', '4'),
      ]);
      await insertGapRows(db.store, [
        { exchange: 'venue_b', ticker, from_ts: T + 10, to_ts: T + 20, reason: 'disconnect', detected_at: T + 15 },
      ]);
    });

    it('on the venue clock, the reset line carries when the closing book was received', async () => {
      const r = await replayed(`/api/venue_b/replay/${ticker}?from=${T}&to=${T + 30}`);
      expect(r.status).toBe(200);
      const lines = r.lines
        .slice(0, -1)
        .map((l) => JSON.parse(l) as { ts: string; received_ts: string; message: object });
      expect(lines.map((l) => [l.ts, l.received_ts, (l.message as { type: string }).type])).toEqual([
        [new Date(T).toISOString(), new Date(T).toISOString(), 'orderbook_snapshot'],
        [new Date(T + 20).toISOString(), new Date(T + 27).toISOString(), 'orderbook_snapshot'],
      ]);
    });
  });

  describe('the last trade before the window, as the caller may see it', () => {
    const day = 86_400_000;
    const product = 'OLD-USD';
    beforeAll(async () => {
      await insertSnapshotRows(db.store, [
        { exchange: 'venue_d', ticker: product, ts: now - 4 * day, side: 'bid', price: '100', quantity: '1' },
      ]);
      // The product's last trade, three days before the service's now.
      await insertTradeRows(db.store, [
        {
          exchange: 'venue_d',
          ticker: product,
          ts: now - 3 * day,
          sequence: 1,
          trade_id: '77',
          price: '101',
          size: '0.5',
          side: 'buy',
          venue_side: 'sell',
          received_ts: now - 3 * day,
        },
      ]);
    });

    it('anonymous (the last day): Coinbase sends no last_match for a trade 3 days old; a full-history key gets it', async () => {
      const from = new Date(now - day / 2).toISOString();
      const path = `/api/venue_d/replay/${product}?from=${from}&to=${now - day / 2 + 1000}`;
      const types = (r: Replayed) => r.texts.map((t) => (JSON.parse(t) as { type: string }).type);
      const anonymous = await replayed(path, {});
      expect(anonymous.status).toBe(200);
      expect(types(anonymous)).toEqual(['snapshot']);
      const keyed = await replayed(path);
      expect(types(keyed)).toEqual(['snapshot', 'last_match']);
    });
  });

  describe('the last trade before a window without a book at `from` (inside a gap)', () => {
    const T = Date.UTC(2026, 2, 9);
    const asset = '20000000000000000000000000000000000000000000000000000000000000000000000000002';
    const markets = [
      ['venue_d', 'GAP-USD'],
      ['venue_a_clob', asset],
    ] as const;
    beforeAll(async () => {
      for (const [exchange, ticker] of markets) {
        await insertSnapshotRows(db.store, [
          { exchange, ticker, ts: T, side: 'bid', price: '0.40', quantity: '10' },
          { exchange, ticker, ts: T + 20, side: 'ask', price: '0.60', quantity: '5' },
        ]);
        await insertTradeRows(db.store, [
          {
            exchange,
            ticker,
            ts: T + 5,
            sequence: 1,
            trade_id: `0x${'cd'.repeat(32)}`,
            price: '0.45',
            size: '2',
            side: 'buy',
            venue_side: 'sell',
            received_ts: T + 5,
          },
        ]);
        await insertGapRows(db.store, [
          { exchange, ticker, from_ts: T + 10, to_ts: T + 20, reason: 'disconnect', detected_at: T + 12 },
        ]);
      }
    });
    const lines = async (exchange: string, ticker: string) => {
      const r = await replayed(`/api/${exchange}/replay/${ticker}?from=${T + 15}&to=${T + 30}`);
      expect(r.status).toBe(200);
      return r.lines.slice(0, -1).map((l) => JSON.parse(l) as { ts: string; received_ts: string; message: object });
    };

    it('Coinbase sends last_match first, at `from`; then the snapshot at the gap’s end', async () => {
      const got = await lines('venue_d', 'GAP-USD');
      expect(got.map((l) => [l.ts, l.received_ts, (l.message as { type: string }).type])).toEqual([
        [new Date(T + 15).toISOString(), new Date(T + 15).toISOString(), 'last_match'],
        [new Date(T + 20).toISOString(), new Date(T + 20).toISOString(), 'snapshot'],
      ]);
      expect(got[0]?.message).toMatchObject({ price: '0.45', size: '2', side: 'sell' });
    });

    it('the CLOB’s first book, at the gap’s end, says the last trade’s price', async () => {
      const got = await lines('venue_a_clob', asset);
      expect(got.map((l) => l.message)).toEqual([
        expect.objectContaining({ event_type: 'book', timestamp: String(T + 20), last_trade_price: '0.45' }),
      ]);
    });
  });

  describe('bad input', () => {
    const T = Date.UTC(2026, 2, 7);
    const ticker = TICKERS.venue_b;
    const error = async (pathAndQuery: string, headers?: Record<string, string>) => {
      const r = await replayed(pathAndQuery, headers);
      return { status: r.status, body: JSON.parse(r.body) as { error: string; message: string } };
    };

    it('timestamps: missing, malformed, epoch seconds, repeated, to before from → 400 invalid_timestamp', async () => {
      const cases: [string, RegExp][] = [
        [`to=${T + 10}`, /from is required/],
        [`from=${T}`, /to is required/],
        [`from=yesterday&to=${T}`, /from is not a valid timestamp/],
        [`from=${T / 1000}&to=${T}`, /looks like epoch seconds/],
        [`from=${T}&from=${T}&to=${T + 1}`, /at most once/],
        [`from=${T + 10}&to=${T}`, /to \(.*\) is before from/],
      ];
      for (const [query, message] of cases) {
        const r = await error(`/api/venue_b/replay/${ticker}?${query}`);
        expect(r).toEqual({
          status: 400,
          body: { error: 'invalid_timestamp', message: expect.stringMatching(message) },
        });
      }
    });

    it('an unknown exchange is 404 unknown_exchange naming them; an alias is accepted', async () => {
      const r = await error(`/api/nowhere/replay/${ticker}?from=${T}&to=${T + 1}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('unknown_exchange');
      expect(r.body.message).toContain('venue_b');
      const dashed = await error(`/api/venue-b/replay/${ticker}?from=${T}&to=${T + 1}`);
      expect(dashed.body.message).toContain('"-" spells the gateway');
      const alias = await replayed(`/api/KALSHI/replay/${ticker}?from=${T}&to=${T + 1}`);
      expect(alias.status).toBe(200);
    });

    it('a ticker never recorded, or outside the key’s ticker_prefixes, is 404 unknown_ticker', async () => {
      expect(await error(`/api/venue_b/replay/NEVER-RECORDED?from=${T}&to=${T + 1}`)).toEqual({
        status: 404,
        body: { error: 'unknown_ticker', message: 'Unknown ticker "NEVER-RECORDED" on venue_b' },
      });
      expect((await error(`/api/venue_b/replay/bad%20ticker?from=${T}&to=${T + 1}`)).body.error).toBe('unknown_ticker');
      const narrow = await issue({ ticker_prefixes: ['OTHER'] });
      expect(await error(`/api/venue_b/replay/${ticker}?from=${T}&to=${T + 1}`, { 'X-API-Key': narrow })).toEqual({
        status: 404,
        body: { error: 'unknown_ticker', message: `Unknown ticker "${ticker}" on venue_b` },
      });
      // Case-insensitively, when one stored ticker matches.
      expect((await replayed(`/api/venue_b/replay/${ticker.toLowerCase()}?from=${T}&to=${T + 1}`)).status).toBe(200);
    });

    it('a window outside the caller’s entitlement is 400 invalid_timestamp naming its start', async () => {
      const day = 86_400_000;
      // Anonymous: the last day.
      const anonymous = await error(`/api/venue_b/replay/${ticker}?from=${T}&to=${T + 1}`, {});
      expect(anonymous.status).toBe(400);
      expect(anonymous.body.error).toBe('invalid_timestamp');
      expect(anonymous.body.message).toContain(new Date(now - day).toISOString());
      // max_data_age_days, and full_history_prefixes bypassing it.
      const aged = await issue({ max_data_age_days: 2 });
      const refused = await error(`/api/venue_b/replay/${ticker}?from=${T}&to=${T + 1}`, { 'X-API-Key': aged });
      expect(refused.body.message).toContain(new Date(now - 2 * day).toISOString());
      const full = await issue({ max_data_age_days: 2, full_history_prefixes: ['kxreplay'] });
      expect(
        (await replayed(`/api/venue_b/replay/${ticker}?from=${T}&to=${T + 1}`, { 'X-API-Key': full })).status,
      ).toBe(200);
    });

    it('a bad key is 401; a window of 250,001 rows (250 pages) is replayed whole, page by page', async () => {
      expect(await error(`/api/venue_b/replay/${ticker}?from=${T}&to=${T + 1}`, { 'X-API-Key': 'dg_nope' })).toEqual({
        status: 401,
        body: { error: 'unauthorized', message: 'Invalid API key' },
      });
      await insertSnapshotRows(db.store, [
        { exchange: 'venue_c', ticker: 'BIGUSD', ts: T, side: 'bid', price: '0.10', quantity: '1' },
      ]);
      await db.fillDeltas({ exchange: 'venue_c', ticker: 'BIGUSD', fromTs: T + 1, stepMs: 1, rows: 250_001 });
      const big = await replayed(`/api/venue_c/replay/BIGUSD?from=${T}&to=${T + 300_000}`);
      expect(big.status).toBe(200);
      // The book at `from`, then one l2_updates per millisecond's delta, then the end line.
      expect(big.lines.length).toBe(250_003);
      expect(JSON.parse(big.lines[250_002] as string)).toEqual({ type: 'end', count: 250_002 });
      expect((JSON.parse(big.lines[250_001] as string) as { ts: string }).ts).toBe(new Date(T + 250_001).toISOString());
    });

    it('what Node’s HTTP parser refuses, and unknown paths, get the JSON error form', async () => {
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(new URL(url).port), '127.0.0.1', () =>
          socket.write('GET /api HTTP/1.1\r\nHost x\r\n\r\n'),
        );
        let data = '';
        socket.on('data', (c) => (data += c.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
        error: 'invalid_request',
        message: 'Malformed HTTP request',
      });
      expect(await error('/api/venue_b/replays/x')).toEqual({
        status: 404,
        body: { error: 'not_found', message: 'No route for GET /api/venue_b/replays/x' },
      });
    });

    it('serves /health, /ready and /metrics with its own query budget’s metrics', async () => {
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect((await fetch(`${url}/ready`)).status).toBe(200);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain('replay_clickhouse_queue_waiting');
      expect(metrics).toMatch(/replay_streams_total\{[^}]*exchange="venue_b",outcome="complete"[^}]*\} [1-9]/);
      expect(metrics).toMatch(/replay_messages_total\{[^}]*exchange="venue_d"[^}]*\} [1-9]/);
    });
  });

  describe('WebSocket replay (/ws/replay/v1/{platform}), Kalshi', () => {
    const ticker = TICKERS.venue_b;
    const kalshi = VENUES.find((x) => x.exchange === 'venue_b') as Venue;
    const socketUrl = (query: string, platform = 'kalshi') =>
      `${url.replace('http:', 'ws:')}/ws/replay/v1/${platform}?${query}`;
    const span = () => {
      const w = windows.get('venue_b') as RecordedWindow;
      const first = w.start?.ts as number;
      const last = Math.max(...w.deltas.map((d) => d.ts), ...w.trades.map((t) => t.ts), ...w.gaps.map((g) => g.to));
      return { first, last };
    };
    const subscribe = (
      id: number,
      channels: string[],
      market: Record<string, unknown> = { market_ticker: ticker },
    ) => ({
      id,
      cmd: 'subscribe',
      params: { channels, ...market },
    });

    it('subscribe → one subscribed per channel, then the window as Kalshi sends it, closed with 1000 "replay finished"', async () => {
      const { first, last } = span();
      for (const [from, to, speed] of [
        [first, last, 'max'],
        [first + Math.floor((last - first) / 3), first + Math.floor((last - first) / 2), 'max'],
        // Paced on the recorded clock (no timing is asserted: the same messages, in the same order).
        [first, first + 200, '1'],
      ] as const) {
        const c = await WsTestClient.open(socketUrl(`from=${from}&to=${to}&speed=${speed}`), {
          headers: { 'X-API-Key': key },
        });
        c.send(subscribe(7, ['orderbook_delta', 'trade']));
        await c.untilClosed(30_000);
        expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
        expect(c.texts.slice(0, 2).map((t) => JSON.parse(t) as unknown)).toEqual([
          { id: 7, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } },
          { id: 7, type: 'subscribed', msg: { channel: 'trade', sid: 2 } },
        ]);
        const texts = c.texts.slice(2);
        // The same messages as the HTTP replay of the window (whose book is on sid 1, its trades on sid 2).
        expect(texts).toEqual((await replayed(`/api/venue_b/replay/${ticker}?from=${from}&to=${to}`)).texts);
        const client = new KalshiClient();
        for (const t of texts) client.consume(t);
        expect(client.book()).toEqual(await historyBook('venue_b', to));
        expect(client.trades).toEqual(await historyTrades(kalshi, from, to));
      }
    });

    it('a client that goes away ends a paced replay at once, even mid-wait (counted as cancelled)', async () => {
      const { first, last } = span();
      const cancelled = async () =>
        ((await registry.getSingleMetric('replay_streams_total')?.get())?.values ?? [])
          .filter((v) => v.labels.exchange === 'venue_b' && v.labels.outcome === 'cancelled')
          .reduce((sum, v) => sum + v.value, 0);
      const before = await cancelled();
      // At a millionth of real time a message one recorded millisecond after `from` is due 1000 s after the start.
      const c = await WsTestClient.open(socketUrl(`from=${first}&to=${last}&speed=0.000001`), {
        headers: { 'X-API-Key': key },
      });
      c.send(subscribe(1, ['orderbook_delta', 'trade']));
      await c.until((m) => m.some((x) => x.type === 'orderbook_snapshot'), 'the first book');
      c.ws.close();
      await waitFor(async () => (await cancelled()) === before + 1, {
        timeoutMs: 10_000,
        what: 'the replay to end as cancelled',
      });
    });

    it('unsubscribe: before the start the sid leaves the replay; after it, nothing more of the sid is sent', async () => {
      const { first, last } = span();
      const before = await WsTestClient.open(socketUrl(`from=${first}&to=${last}&speed=max`), {
        headers: { 'X-API-Key': key },
      });
      before.send(subscribe(1, ['orderbook_delta', 'trade']));
      before.send({ id: 2, cmd: 'unsubscribe', params: { sids: [2] } });
      await before.untilClosed(30_000);
      expect([before.closeCode, before.closeReason]).toEqual([1000, 'replay finished']);
      expect(before.messages.slice(0, 3)).toEqual([
        { id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } },
        { id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 2 } },
        { id: 2, sid: 2, seq: 1, type: 'unsubscribed' },
      ]);
      const rest = before.texts.slice(3);
      expect(rest.every((t) => (JSON.parse(t) as { sid: number }).sid === 1)).toBe(true);
      const client = new KalshiClient();
      for (const t of rest) client.consume(t);
      expect(client.book()).toEqual(await historyBook('venue_b', last));
      // After the start (at a millionth of real time, the message after the first book is due 1000 s later).
      const after = await WsTestClient.open(socketUrl(`from=${first}&to=${last}&speed=0.000001`), {
        headers: { 'X-API-Key': key },
      });
      after.send(subscribe(1, ['orderbook_delta']));
      await after.until((m) => m.some((x) => x.type === 'orderbook_snapshot'), 'the first book');
      after.send({ id: 2, cmd: 'unsubscribe', params: { sids: [1] } });
      await after.until((m) => m.some((x) => x.type === 'unsubscribed'), 'the answer');
      // The sid's next seq: its snapshot was 1, the change read ahead of it was never sent.
      expect(after.messages.slice(1)).toEqual([
        expect.objectContaining({ type: 'orderbook_snapshot', sid: 1, seq: 1 }),
        { id: 2, sid: 1, seq: 2, type: 'unsubscribed' },
      ]);
      after.ws.close();
    });

    it('only the channels subscribed are sent', async () => {
      const { first, last } = span();
      const c = await WsTestClient.open(socketUrl(`from=${first}&to=${last}&speed=max`), {
        headers: { 'X-API-Key': key },
      });
      c.send(subscribe(1, ['trade'], { market_tickers: [ticker] }));
      await c.untilClosed(30_000);
      expect(c.closeCode).toBe(1000);
      const [reply, ...rest] = c.messages;
      expect(reply).toEqual({ id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 1 } });
      expect(rest.length).toBeGreaterThan(0);
      expect(rest.every((m) => m.type === 'trade' && m.sid === 1)).toBe(true);
      const client = new KalshiClient();
      for (const t of c.texts.slice(1)) client.consume(t);
      expect(client.trades).toEqual(await historyTrades(kalshi, first, last));
    });

    it('bad commands get Kalshi’s error form and the socket stays open for a good one', async () => {
      const { first } = span();
      const c = await WsTestClient.open(socketUrl(`from=${first}&to=${first + 50}&speed=max`), {
        headers: { 'X-API-Key': key },
      });
      const cases: [unknown, number][] = [
        ['not json', 1],
        [[1, 2], 1],
        [{ id: 2, cmd: 'subscribe' }, 2],
        [subscribe(3, []), 3],
        [subscribe(4, ['orderbook_delta', 'ticker']), 8],
        [subscribe(5, ['trade'], {}), 14],
        [subscribe(6, ['trade'], { market_ticker: 'KXNEVER-RECORDED' }), 16],
        [{ id: 7, cmd: 'unsubscribe', params: { sids: [1] } }, 7],
        [{ id: 7, cmd: 'update_subscription', params: { sid: 1, action: 'get_snapshot' } }, 13],
        [{ id: 8, cmd: 'dance' }, 5],
      ];
      for (const [i, [message, code]] of cases.entries()) {
        c.send(message);
        await c.until((m) => m.length > i, `the answer to case ${i}`);
        expect(c.messages[i]).toEqual({
          id: (message as { id?: number }).id ?? null,
          type: 'error',
          msg: { code, msg: expect.any(String) },
        });
      }
      // list_subscriptions is answered as Kalshi answers it: none held yet.
      c.send({ id: 8, cmd: 'list_subscriptions' });
      await c.until((m) => m.length > cases.length, 'the subscriptions listed');
      expect(c.messages[cases.length]).toEqual({ id: 8, type: 'ok', msg: [] });
      c.send(subscribe(9, ['orderbook_delta']));
      await c.untilClosed(30_000);
      expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
      expect(c.messages[cases.length + 1]).toEqual({
        id: 9,
        type: 'subscribed',
        msg: { channel: 'orderbook_delta', sid: 1 },
      });
      // A second subscribe after the replay started would be refused (13); here the window ended first.
    });

    it('a window before the caller’s entitlement is refused for the market (code 11, naming the window’s start)', async () => {
      const { first } = span();
      const c = await WsTestClient.open(socketUrl(`from=${first}&to=${first + 50}`));
      c.send(subscribe(1, ['orderbook_delta']));
      await c.until((m) => m.length > 0, 'the answer');
      expect(c.messages[0]).toEqual({
        id: 1,
        type: 'error',
        msg: { code: 11, msg: expect.stringContaining(new Date(now - 86_400_000).toISOString()) },
      });
      c.ws.close();
    });

    it('a handshake counts against the key’s requests per minute (429 rate_limited when used up)', async () => {
      const { first } = span();
      const limited = await issue({ requests_per_minute: 1 });
      const target = socketUrl(`from=${first}&to=${first + 10}`);
      const c = await WsTestClient.open(target, { headers: { 'X-API-Key': limited } });
      c.ws.close();
      const r = await WsTestClient.refused(target, { headers: { 'X-API-Key': limited } });
      expect({ status: r.status, error: (r.json as { error: string }).error }).toEqual({
        status: 429,
        error: 'rate_limited',
      });
    });

    it('handshakes it cannot serve are refused in the JSON error form', async () => {
      const T = Date.UTC(2026, 2, 7);
      const cases: [string, Record<string, string>, number, string][] = [
        [socketUrl(`from=${T}&to=${T + 1}`, 'nowhere'), {}, 404, 'unknown_platform'],
        [socketUrl(`from=${T}&to=${T + 1}`, 'venue-e'), {}, 404, 'unknown_platform'],
        [socketUrl(`to=${T + 1}`), {}, 400, 'invalid_timestamp'],
        [socketUrl(`from=${T + 2}&to=${T + 1}`), {}, 400, 'invalid_timestamp'],
        [socketUrl(`from=${T}&to=${T + 1}&speed=fast`), {}, 400, 'invalid_request'],
        [socketUrl(`from=${T}&to=${T + 1}&speed=0`), {}, 400, 'invalid_request'],
        [socketUrl(`from=${T}&to=${T + 1}`), { 'X-API-Key': 'dg_nope' }, 401, 'unauthorized'],
        [`${url.replace('http:', 'ws:')}/ws/replay/v2/kalshi`, {}, 404, 'not_found'],
      ];
      for (const [target, headers, status, code] of cases) {
        const r = await WsTestClient.refused(target, { headers });
        expect({ status: r.status, error: (r.json as { error: string }).error }).toEqual({ status, error: code });
        expect(typeof (r.json as { message: string }).message).toBe('string');
      }
    });
  });
});
