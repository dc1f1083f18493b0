/**
 * Receive-time windows (`clock=received`) on the harness (testing/harness.ts: the replay service and the history
 * service on the test ClickHouse, a random recorded history per venue, read in pages of 1000 rows). For each venue,
 * random windows on the receive clock over the HTTP replay:
 *
 * - every line is received in [from, to] (the book at `from` at `from`, every row and gap reset after it);
 * - the trades are exactly the recorded trades received in (from, to];
 * - the book a venue client rebuilds from the window equals the book received by `to` (the service's own start book
 *   of the empty window at `to`): the rows received in the window carry the book received by `from` to it.
 *
 * Then the socket: the same window over the venue's socket carries the same messages; bad `clock` values are refused.
 */
import { Rng } from '@depthgate/service-kit';
import { WsTestClient } from '@depthgate/test-utils';
import type { RecordedWindow } from './engine';
import { startHarness, TICKERS, type Harness } from './testing/harness';
import { VENUES } from './testing/venues';

const WINDOWS = 20;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ seed: 'clock' });
}, 90_000);

afterAll(async () => {
  await h?.close();
});

const received = (line: string) =>
  Date.parse((JSON.parse(line.replace(/,"ts":.*$/, '}')) as { received_ts: string }).received_ts);

describe.each(VENUES)('$name, clock=received', (v) => {
  it(`${WINDOWS} random receive-time windows: rows received in them, trades exactly, the book received by the end`, async () => {
    const { first, last } = h.span(v.exchange);
    const w = h.windows.get(v.exchange) as RecordedWindow;
    const ticker = TICKERS[v.exchange];
    const rng = new Rng(`clock-windows|${v.exchange}`);
    let books = 0;
    let trades = 0;
    for (let i = 0; i < WINDOWS; i++) {
      const length = Math.max(1, Math.floor((last - first) * rng.float() ** 2));
      const from = first + rng.int(Math.max(1, last - first - length + 1));
      const to = from + length;
      const path = `/api/${v.exchange}/replay/${ticker}`;
      const replayed = await h.replayed(`${path}?from=${from}&to=${to}&clock=received`);
      expect(replayed.status).toBe(200);
      for (const line of replayed.lines.slice(0, -1)) {
        const at = received(line);
        expect(at >= from && at <= to).toBe(true);
      }
      const client = v.client(ticker);
      for (const text of replayed.texts) client.consume(text);
      const expected = w.trades.filter((t) => (t.received_ts ?? t.ts) > from && (t.received_ts ?? t.ts) <= to);
      expect(client.trades).toEqual(expected.map((t) => v.tradeKey(t)));
      trades += expected.length;
      // The book received by `to`, as the service opens an empty window there.
      const atEnd = await h.replayed(`${path}?from=${to}&to=${to}&clock=received`);
      const end = v.client(ticker);
      for (const text of atEnd.texts) end.consume(text);
      if (end.book() === undefined || client.book() === undefined) continue;
      expect(client.book()).toEqual(end.book());
      books++;
    }
    expect(books).toBeGreaterThan(WINDOWS / 2);
    expect(trades).toBeGreaterThan(0);
  });
});

describe('the clock parameter', () => {
  const kalshi = VENUES.find((v) => v.exchange === 'venue_b');

  it('a socket with clock=received carries what the HTTP replay of the same receive-time window carries', async () => {
    const v = kalshi as NonNullable<typeof kalshi>;
    const socket = v.socket as NonNullable<typeof v.socket>;
    const { first, last } = h.span('venue_b');
    const from = first + Math.floor((last - first) / 4);
    const to = last - Math.floor((last - first) / 4);
    const http = await h.replayed(`/api/venue_b/replay/${TICKERS.venue_b}?from=${from}&to=${to}&clock=received`);
    const c = await WsTestClient.open(h.wsUrl(socket.platform, `from=${from}&to=${to}&speed=max&clock=received`), {
      headers: { 'X-API-Key': h.key },
    });
    for (const frame of socket.subscribe(TICKERS.venue_b)) c.send(frame);
    await c.untilClosed(30_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    const texts = c.texts.filter((t) => !socket.isAck(t));
    expect(texts.length).toBeGreaterThan(10);
    expect(texts).toEqual(http.texts);
  });

  it('anything but venue or received is 400 invalid_request, on the HTTP replay and at the handshake', async () => {
    const { first } = h.span('venue_b');
    const bad = await h.replayed(`/api/venue_b/replay/${TICKERS.venue_b}?from=${first}&to=${first + 1}&clock=exchange`);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({
      error: 'invalid_request',
      message: 'clock must be venue or received, not "exchange"',
    });
    const twice = await h.replayed(
      `/api/venue_b/replay/${TICKERS.venue_b}?from=${first}&to=${first + 1}&clock=venue&clock=received`,
    );
    expect(JSON.parse(twice.body)).toEqual({ error: 'invalid_request', message: 'clock must be given at most once' });
    const socket = (kalshi as NonNullable<typeof kalshi>).socket as NonNullable<NonNullable<typeof kalshi>['socket']>;
    const refused = await WsTestClient.refused(
      h.wsUrl(socket.platform, `from=${first}&to=${first + 1}&clock=received_ts`),
      {
        headers: { 'X-API-Key': h.key },
      },
    );
    expect([refused.status, refused.json]).toEqual([
      400,
      { error: 'invalid_request', message: 'clock must be venue or received, not "received_ts"' },
    ]);
  });
});
