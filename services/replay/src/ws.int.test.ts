/**
 * The WebSocket replay of every venue that has one (testing/venues.ts `socket`), on the harness (testing/harness.ts:
 * the replay service and the history service as deployed, on the test ClickHouse, with a random recorded history per
 * venue). For each venue, 100 random windows (from 1 ms to the whole history, starting and ending anywhere: in a gap,
 * between rows, on one), each replayed over the venue's socket at `speed=max` and consumed by the venue's reference
 * client (testing/clients.ts, written from the venue's rules: Kalshi's `seq`, the CLOB's `hash`, …):
 *
 * - the socket ends with 1000 "replay finished";
 * - it carries the same messages, in the same order, as the HTTP replay of the window (whose lines say each one's
 *   recorded time), so the client's book after the messages up to a moment is the book at that moment: it must equal
 *   the history's `/book?at=` at the window's end and at two random moments inside it;
 * - the trades received equal the history's `/trades` of (from, to];
 * - a window crossing a recorded gap's end gets the venue's reset form (a whole book after the first).
 *
 * And a market whose first book comes inside the window (no gap recorded before it): that book in the venue's
 * whole-book form at its first snapshot, the client's book at the end the history's.
 *
 * Then sessions: two venues' sockets sharing a `session` get their messages in one time order.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { complementOfOne, formatDecimal, parseDecimal } from '@depthgate/feeds';
import { Rng } from '@depthgate/service-kit';
import { WsTestClient, repoRoot } from '@depthgate/test-utils';
import type { ExchangeKey } from '@depthgate/platforms';
import type { RecordedWindow } from './engine';
import { randomWindow } from './testing/history';
import { startHarness, storeWindow, TICKERS, type Harness } from './testing/harness';
import { VENUES, type Venue, type VenueSocketClient } from './testing/venues';

const WINDOWS = 100;

let h: Harness;

/**
 * Per venue a market whose first book comes 10 s after the start of its history (a market listed inside the window:
 * the recorder writes no gap before it), stored beside the harness's.
 */
const FIRST_BOOK: Record<ExchangeKey, string> = {
  venue_b: 'KXFIRSTBOOK-26MAR07-T1',
  venue_c: 'FIRSTUSD',
  venue_a_us: 'first-book-market',
  venue_a_clob: '10000000000000000000000000000000000000000000000000000000000000000000000000001',
  venue_d: 'FIRST-USD',
};
const firstBooks = new Map<ExchangeKey, RecordedWindow>();

beforeAll(async () => {
  h = await startHarness({ seed: 'ws', env: { REPLAY_SUBSCRIBE_TIMEOUT_MS: '1000' } });
  for (const v of VENUES) {
    const w = randomWindow(`ws-first-book|${v.exchange}`, v.grid, {
      events: 80,
      gapRate: 0,
      startBeforeFirstBook: true,
      ...(v.tradeId ? { tradeId: v.tradeId } : {}),
    });
    firstBooks.set(v.exchange, w);
    await storeWindow(h.db, v.exchange, FIRST_BOOK[v.exchange], w);
  }
}, 90_000);

afterAll(async () => {
  await h?.close();
});

/** Replays a window over the venue's socket; the replayed texts (acks left out) and the close. */
async function overSocket(
  v: Venue & { socket: VenueSocketClient },
  query: string,
  ticker = TICKERS[v.exchange],
): Promise<{ texts: string[]; code: number | undefined; reason: string | undefined }> {
  const c = await WsTestClient.open(h.wsUrl(v.socket.platform, query), { headers: { 'X-API-Key': h.key } });
  for (const frame of v.socket.subscribe(ticker)) c.send(frame);
  await c.untilClosed(30_000);
  return { texts: c.texts.filter((t) => !v.socket.isAck(t)), code: c.closeCode, reason: c.closeReason };
}

const socketVenues = VENUES.filter((v): v is Venue & { socket: VenueSocketClient } => v.socket !== undefined);

describe.each(socketVenues)('$name over /ws/replay/v1', (v) => {
  it(`${WINDOWS} random windows: the client's book equals /book?at= at the end and inside, its trades /trades; a gap gives the reset form`, async () => {
    const { first, last } = h.span(v.exchange);
    const w = h.windows.get(v.exchange) as RecordedWindow;
    const rng = new Rng(`ws-windows|${v.exchange}`);
    let resets = 0;
    let inner = 0;
    for (let i = 0; i < WINDOWS; i++) {
      // Lengths spread over orders of magnitude: 1 ms to the whole history.
      const length = Math.max(1, Math.floor((last - first) * rng.float() ** 3));
      const from = first + rng.int(Math.max(1, last - first - length + 1));
      const to = from + length;
      const ws = await overSocket(v, `from=${from}&to=${to}&speed=max`);
      expect([ws.code, ws.reason]).toEqual([1000, 'replay finished']);
      const http = await h.replayed(`/api/${v.exchange}/replay/${TICKERS[v.exchange]}?from=${from}&to=${to}`);
      expect(http.status).toBe(200);
      expect(ws.texts).toHaveLength(http.texts.length);
      const times = http.lines
        .slice(0, -1)
        .map((l) => Date.parse((JSON.parse(l.replace(/,"message":.*$/, '}')) as { ts: string }).ts));
      // Two moments inside the window, checked on the way.
      const moments = [from + rng.int(length + 1), from + rng.int(length + 1)].sort((a, b) => a - b);
      const client = v.client(TICKERS[v.exchange]);
      let wholeBooks = 0;
      let m = 0;
      const check = async (at: number) => {
        const expected = await h.historyBook(v.exchange, at);
        if (expected === undefined || client.book() === undefined) return;
        expect({ at, book: client.book() }).toEqual({ at, book: expected });
        inner++;
      };
      for (const [k, text] of ws.texts.entries()) {
        while (m < moments.length && (times[k] as number) > (moments[m] as number)) await check(moments[m++] as number);
        client.consume(text);
        if (client.isWholeBook(text)) wholeBooks++;
      }
      while (m < moments.length) await check(moments[m++] as number);
      const end = await h.historyBook(v.exchange, to);
      if (end !== undefined && client.book() !== undefined) expect(client.book()).toEqual(end);
      expect(client.trades).toEqual(await h.historyTrades(v, from, to));
      // A recorded gap that opens and closes inside the window (after the start's book) is sent as the venue's whole
      // book again. (One that was open at `from` is not a reset: its closing book is the window's first.)
      const closes = w.gaps.filter((g) => g.book && g.from > from && g.to <= to && (w.start?.ts ?? Infinity) < g.to);
      if (closes.length > 0 && wholeBooks > 0) {
        expect(wholeBooks).toBeGreaterThan(1);
        resets++;
      }
    }
    // The random windows did exercise books inside windows and gaps' resets.
    expect(inner).toBeGreaterThan(WINDOWS / 2);
    expect(resets).toBeGreaterThan(0);
  }, 240_000);

  it('a window starting before the market’s first book: its whole book at the first snapshot, then its changes; the book at the end is the history’s', async () => {
    const ticker = FIRST_BOOK[v.exchange];
    const first = (firstBooks.get(v.exchange) as RecordedWindow).firstBook as NonNullable<RecordedWindow['firstBook']>;
    // (T0, T0 + 60 s]: the first snapshot is at T0 + 10 s, a trade before it, changes after it.
    const from = first.ts - 10_000;
    const to = from + 60_000;
    const ws = await overSocket(v, `from=${from}&to=${to}&speed=max`, ticker);
    expect([ws.code, ws.reason]).toEqual([1000, 'replay finished']);
    // The HTTP replay's messages (the socket's, but for the subscription's own ids), whose lines give their times.
    const http = await h.replayed(`/api/${v.exchange}/replay/${ticker}?from=${from}&to=${to}`);
    expect(ws.texts).toHaveLength(http.texts.length);
    const times = http.lines
      .slice(0, -1)
      .map((l) => Date.parse((JSON.parse(l.replace(/,"message":.*$/, '}')) as { ts: string }).ts));
    const client = v.client(ticker);
    const wholeBooks: number[] = [];
    for (const [k, text] of ws.texts.entries()) {
      client.consume(text);
      if (client.isWholeBook(text)) wholeBooks.push(times[k] as number);
    }
    // The first whole book is the venue's whole-book (reset) form at the first snapshot.
    expect(wholeBooks[0]).toBe(first.ts);
    expect(times.filter((t) => t > first.ts).length).toBeGreaterThan(10);
    const end = await h.historyBook(v.exchange, to, ticker);
    expect(end).toBeDefined();
    expect(client.book()).toEqual(end);
    expect(client.trades).toEqual(await h.historyTrades(v, from, to, ticker));
  });
});

describe('sessions: one clock for several sockets', () => {
  const a = socketVenues[0] as Venue & { socket: VenueSocketClient };
  // Two venues (or, while one venue has a socket, the same venue twice).
  const b = socketVenues[1] ?? a;
  const open = (v: Venue & { socket: VenueSocketClient }, query: string) =>
    WsTestClient.open(h.wsUrl(v.socket.platform, query), { headers: { 'X-API-Key': h.key } });
  const subscribe = (c: WsTestClient, v: Venue & { socket: VenueSocketClient }) => {
    for (const frame of v.socket.subscribe(TICKERS[v.exchange])) c.send(frame);
  };

  it('the sockets of a session each get their whole replay, and finish together', async () => {
    const from = Math.max(h.span(a.exchange).first, h.span(b.exchange).first);
    const to = Math.min(h.span(a.exchange).last, h.span(b.exchange).last);
    const query = `from=${from}&to=${to}&speed=max&session=whole`;
    // Both join before either subscribes (a session starts once its members have subscribed and settled).
    const sockets = [await open(a, query), await open(b, query)];
    subscribe(sockets[0] as WsTestClient, a);
    subscribe(sockets[1] as WsTestClient, b);
    await Promise.all(sockets.map((c) => c.untilClosed(60_000)));
    for (const [i, v] of [a, b].entries()) {
      const c = sockets[i] as WsTestClient;
      expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
      const http = await h.replayed(`/api/${v.exchange}/replay/${TICKERS[v.exchange]}?from=${from}&to=${to}`);
      expect(c.texts.filter((t) => !v.socket.isAck(t))).toHaveLength(http.texts.length);
    }
  }, 120_000);

  it('a socket cannot join a session that has started, nor one of other terms (400 invalid_request)', async () => {
    const { first, last } = h.span(a.exchange);
    // A millionth of real time: the session runs (its first book sent) and then waits for as long as the test lasts.
    const query = `from=${first}&to=${last}&speed=0.000001&session=running`;
    const c = await open(a, query);
    const other = await WsTestClient.refused(
      h.wsUrl(b.socket.platform, `from=${first}&to=${last - 1}&speed=0.000001&session=running`),
      {
        headers: { 'X-API-Key': h.key },
      },
    );
    expect({ status: other.status, error: (other.json as { error: string }).error }).toEqual({
      status: 400,
      error: 'invalid_request',
    });
    subscribe(c, a);
    await c.until(() => c.texts.some((t) => !a.socket.isAck(t)), 'the session to start');
    const late = await WsTestClient.refused(h.wsUrl(b.socket.platform, query), { headers: { 'X-API-Key': h.key } });
    expect({ status: late.status, error: (late.json as { error: string }).error }).toEqual({
      status: 400,
      error: 'invalid_request',
    });
    expect((late.json as { message: string }).message).toContain('has started');
    // Another caller naming the same session gets a session of its own.
    const stranger = await WsTestClient.open(h.wsUrl(b.socket.platform, query), {
      headers: { 'X-API-Key': await h.issue({ requests_per_minute: 1000 }) },
    });
    stranger.ws.close();
    c.ws.close();
  }, 60_000);
});

describe('a socket with nothing to replay', () => {
  it('is closed 1008 when nothing replayable was subscribed within REPLAY_SUBSCRIBE_TIMEOUT_MS (here 1 s)', async () => {
    const { first, last } = h.span('venue_c');
    const silent = await WsTestClient.open(h.wsUrl('kalshi', `from=${first}&to=${last}`), {
      headers: { 'X-API-Key': h.key },
    });
    // Gemini answers an unknown symbol with its error and leaves it out: nothing is replayable, nothing starts.
    const refused = await WsTestClient.open(h.wsUrl('gemini', `from=${first}&to=${last}`), {
      headers: { 'X-API-Key': h.key },
    });
    refused.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: ['NEVERUSD'] }] });
    await Promise.all([silent.untilClosed(10_000), refused.untilClosed(10_000)]);
    for (const c of [silent, refused]) {
      expect(c.closeCode).toBe(1008);
      expect(c.closeReason).toMatch(/no subscribe to a replayable market within 1 s/);
    }
    expect(silent.texts).toEqual([]);
    expect(refused.messages).toEqual([expect.objectContaining({ type: 'error', reason: 'InvalidSymbol' })]);
  });
});

describe('the Kalshi example of docs/replay.md (services/replay/examples/kalshi.mjs, a plain ws bot)', () => {
  it('ends with the history’s book, its trades counted, seq contiguous', async () => {
    const v = VENUES.find((x) => x.exchange === 'venue_b') as Venue;
    const { first, last } = h.span('venue_b');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        path.join(repoRoot, 'services/replay/examples/kalshi.mjs'),
        TICKERS.venue_b,
        new Date(first).toISOString(),
        new Date(last).toISOString(),
      ],
      { env: { ...process.env, REPLAY_URL: h.url.replace('http:', 'ws:'), DEPTHGATE_KEY: h.key }, timeout: 60_000 },
    );
    const out = JSON.parse(stdout.trim().split('\n').pop() as string) as {
      close: [number, string];
      yes: [string, string][];
      no: [string, string][];
      trades: number;
      resets: number;
    };
    expect(out.close).toEqual([1000, 'replay finished']);
    const canon = (t: string) => formatDecimal(parseDecimal(t));
    const book = await h.historyBook('venue_b', last);
    // The history keeps Kalshi's book as the YES book: bids the YES bids, asks 1 − the NO bids.
    expect({
      bids: new Map(out.yes.map(([p, q]) => [canon(p), parseDecimal(q)])),
      asks: new Map(out.no.map(([p, q]) => [canon(complementOfOne(p)), parseDecimal(q)])),
    }).toEqual(book);
    expect(out.trades).toBe((await h.historyTrades(v, first - 1, last)).length);
  }, 90_000);
});
