/**
 * What a replay socket's client cannot break (docs/replay.md, "WebSocket"), on the harness (testing/harness.ts):
 * frames the WebSocket library refuses (over 64 KiB, text that is not UTF-8) close that socket with the code that says
 * why and leave the service serving; a subscribe naming a market with a JSON value that is not a string gets the
 * venue's refusal, not a failed replay; frames sent faster than they are handled are all answered, in order; a
 * malformed platform in the path is a 404 in the JSON error form; a client sending more frames than its rate allows is
 * closed 4429; subscribes that keep coming do not hold the start back past REPLAY_SUBSCRIBE_TIMEOUT_MS; a handshake
 * after the shutdown began is refused with 503. (The shutdown case comes last: it closes the harness's sockets for
 * good.)
 */
import { rawExchange, WsTestClient } from '@depthgate/test-utils';
import { startHarness, TICKERS, type Harness } from './testing/harness';
import { VENUES, type Venue, type VenueSocketClient } from './testing/venues';

let h: Harness;

beforeAll(async () => {
  // 200 frames a second, bursts of 400: the 300 subscribes below fit, a flood of 1,000 does not.
  h = await startHarness({ seed: 'robust', events: 60, env: { REPLAY_WS_MESSAGES_PER_SECOND: '200' } });
}, 90_000);

afterAll(async () => {
  await h?.close();
});

const venue = (exchange: string) => {
  const v = VENUES.find((x) => x.exchange === exchange);
  if (!v?.socket) throw new Error(`the venue table has no socket for ${exchange}`);
  return v as Venue & { socket: VenueSocketClient };
};
const kalshi = venue('venue_b');

/** A socket on the venue's whole recorded window, replayed so slowly that it stays open. */
function open(v: Venue & { socket: VenueSocketClient }): Promise<WsTestClient> {
  const { first, last } = h.span(v.exchange);
  return WsTestClient.open(h.wsUrl(v.socket.platform, `from=${first}&to=${last}&speed=0.000001`), {
    headers: { 'X-API-Key': h.key },
  });
}

async function serving(): Promise<void> {
  expect((await fetch(`${h.url}/health`)).status).toBe(200);
  // And a new socket still replays: its subscribe is acknowledged.
  const c = await open(kalshi);
  for (const frame of kalshi.socket.subscribe(TICKERS[kalshi.exchange])) c.send(frame);
  await c.until((ms) => ms.some((m) => m.type === 'subscribed'), 'the subscribe to be acknowledged');
  await c.close();
}

it('a frame over 64 KiB closes that socket with 1009, and the service goes on serving', async () => {
  const c = await open(kalshi);
  c.send('x'.repeat(70_000));
  await c.untilClosed();
  expect(c.closeCode).toBe(1009);
  await serving();
});

it('a text frame that is not UTF-8 closes that socket with 1007, and the service goes on serving', async () => {
  const c = await open(kalshi);
  c.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
  await c.untilClosed();
  expect(c.closeCode).toBe(1007);
  await serving();
});

it('a Gemini symbol that is not a string gets InvalidSymbol, and the socket stays open', async () => {
  const c = await open(venue('venue_c'));
  c.send({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [{ toString: 0 }] }] });
  await c.until((ms) => ms.some((m) => m.reason === 'InvalidSymbol'), 'the refusal');
  expect(c.messages.find((m) => m.reason === 'InvalidSymbol')?.message).toBe('invalid symbol {"toString":0}');
  expect(c.closed).toBe(false);
  await c.close();
});

it('a Coinbase product that is not a string gets the venue error, and the socket stays open', async () => {
  const c = await open(venue('venue_d'));
  c.send({ type: 'subscribe', product_ids: [{ toString: 0 }], channels: ['level2'] });
  await c.until((ms) => ms.some((m) => m.type === 'error'), 'the error');
  expect(c.messages.find((m) => m.type === 'error')?.reason).toBe('{"toString":0} is not a valid product');
  expect(c.closed).toBe(false);
  await c.close();
});

it('300 subscribes sent at once are each answered, in the order sent', async () => {
  const c = await open(kalshi);
  const ticker = TICKERS[kalshi.exchange];
  for (let id = 1; id <= 300; id++)
    c.send({ id, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_ticker: ticker } });
  await c.until(
    (ms) => ms.filter((m) => typeof m.id === 'number').length >= 300,
    'an answer to every subscribe',
    60_000,
  );
  expect(c.messages.filter((m) => typeof m.id === 'number').map((m) => m.id)).toEqual(
    Array.from({ length: 300 }, (_, i) => i + 1),
  );
  await c.close();
});

it('a client sending more frames than REPLAY_WS_MESSAGES_PER_SECOND allows (bursts of twice as many) is closed 4429', async () => {
  const c = await open(kalshi);
  for (let id = 1; id <= 1000; id++) c.send({ id, cmd: 'list_subscriptions' });
  await c.untilClosed();
  expect(c.closeCode).toBe(4429);
  expect(c.closeReason).toBe('too many messages');
  await serving();
});

describe('subscribes that keep coming', () => {
  let quick: Harness;
  beforeAll(async () => {
    quick = await startHarness({
      seed: 'keep-subscribing',
      events: 20,
      env: { REPLAY_SUBSCRIBE_TIMEOUT_MS: '1000', REPLAY_WS_MESSAGES_PER_SECOND: '200' },
    });
  }, 90_000);
  afterAll(async () => {
    await quick?.close();
  });

  it('hold the start back no longer than REPLAY_SUBSCRIBE_TIMEOUT_MS (here 1 s) after the socket opened', async () => {
    const gemini = venue('venue_c');
    const { first, last } = quick.span(gemini.exchange);
    const c = await WsTestClient.open(quick.wsUrl(gemini.socket.platform, `from=${first}&to=${last}&speed=max`), {
      headers: { 'X-API-Key': quick.key },
    });
    // The same subscribe every 10 ms, each accepted again and each restarting the settle (50 ms here), until the replay
    // sent its first message: without the deadline it never would, and each would be a catalogue query.
    const subscribe = () => {
      for (const frame of gemini.socket.subscribe(TICKERS[gemini.exchange])) c.send(frame);
    };
    subscribe();
    const again = setInterval(subscribe, 10);
    try {
      await c.until((ms) => ms.some((m) => m.type === 'l2_updates'), 'the replay’s first message', 20_000);
    } finally {
      clearInterval(again);
    }
    expect(c.closed).toBe(false);
    await c.close();
  });
});

it('a platform whose percent-escapes are malformed is 404 unknown_platform in the JSON error form', async () => {
  const r = await WsTestClient.refused(h.wsUrl('%E0%A4%A', 'speed=max'), { headers: { 'X-API-Key': h.key } });
  expect(r.status).toBe(404);
  expect(r.json).toMatchObject({ error: 'unknown_platform' });
});

it('a handshake the WebSocket library refuses is answered in the JSON error form; every handshake answer has X-Request-Id', async () => {
  const { first, last } = h.span(kalshi.exchange);
  const target = new URL(h.wsUrl(kalshi.socket.platform, `from=${first}&to=${last}&speed=1`));
  /** One handshake on a raw socket, with these headers added. */
  const raw = (headers: string) =>
    rawExchange(
      Number(target.port),
      `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: replay\r\nX-API-Key: ${h.key}\r\n` +
        `Upgrade: websocket\r\nConnection: Upgrade\r\n${headers}\r\n`,
      target.hostname,
    );
  const version = 'Sec-WebSocket-Version: 13\r\n';
  const badKey = await raw(`${version}Sec-WebSocket-Key: short\r\nX-Request-Id: replay-bad-key\r\n`);
  expect(badKey.head).toMatch(/^HTTP\/1\.1 400 /);
  expect(badKey.head).toMatch(/\r\nX-Request-Id: replay-bad-key(\r\n|$)/i);
  expect(JSON.parse(badKey.body)).toEqual({
    error: 'invalid_request',
    message: 'Missing or invalid Sec-WebSocket-Key header',
  });
  const key = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
  const badVersion = await raw(`Sec-WebSocket-Version: 99\r\n${key}`);
  expect(badVersion.head).toMatch(/^HTTP\/1\.1 400 /);
  expect(badVersion.head).toMatch(/\r\nSec-WebSocket-Version: 13(\r\n|$)/i);
  expect(JSON.parse(badVersion.body)).toMatchObject({ error: 'invalid_request' });
  const opened = await raw(`${version}${key}X-Request-Id: replay-open-1\r\n`);
  expect(opened.head).toMatch(/^HTTP\/1\.1 101 /);
  expect(opened.head).toMatch(/\r\nX-Request-Id: replay-open-1(\r\n|$)/i);
});

it('after the shutdown began, a handshake is refused with 503 and open sockets close with 1001', async () => {
  const c = await open(kalshi);
  h.sockets.closeAll();
  await c.untilClosed();
  expect([c.closeCode, c.closeReason]).toEqual([1001, 'the replay service is shutting down']);
  const { first, last } = h.span(kalshi.exchange);
  const r = await WsTestClient.refused(h.wsUrl(kalshi.socket.platform, `from=${first}&to=${last}`), {
    headers: { 'X-API-Key': h.key },
  });
  expect(r.status).toBe(503);
  expect(r.json).toMatchObject({ error: 'service_unavailable' });
});
