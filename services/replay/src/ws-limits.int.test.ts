/**
 * Replay sockets per key (docs/replay.md, "Connections per key"), on the harness (testing/harness.ts: the replay
 * service on the test Redis and ClickHouse): a caller over its limit is refused before the upgrade with
 * `429 too_many_connections` in the JSON error form; a socket's place is given back when it closes, however it
 * closes; the limit is a key's own `ws_max_connections`, else REPLAY_WS_MAX_CONNECTIONS_PER_KEY, and per client
 * address without a key. (The count's own mechanics — across replicas, apart from the gateway's, leases — are
 * packages/auth's ws-limits.int.test.ts.)
 */
import http from 'node:http';
import { WsTestClient, waitFor } from '@depthgate/test-utils';
import { startHarness, TICKERS, type Harness } from './testing/harness';
import { VENUES } from './testing/venues';

let h: Harness;
const PER_KEY = 3;

beforeAll(async () => {
  h = await startHarness({
    seed: 'limits',
    events: 60,
    env: { REPLAY_WS_MAX_CONNECTIONS_PER_KEY: String(PER_KEY), REPLAY_WS_MAX_CONNECTIONS_ANONYMOUS: '1' },
  });
}, 90_000);

afterAll(async () => {
  await h?.close();
});

const kalshi = VENUES.find((v) => v.exchange === 'venue_b');
if (!kalshi?.socket) throw new Error('the venue table has no Kalshi socket');
const venue = { ...kalshi, socket: kalshi.socket };

/** A window of the whole recorded history, replayed so slowly that a subscribed socket stays open. */
function query(speed = '0.000001'): string {
  const { first, last } = h.span(venue.exchange);
  return `from=${first}&to=${last}&speed=${speed}`;
}

const headers = (key: string) => ({ headers: { 'X-API-Key': key } });
const open = (key: string | undefined, q = query()) =>
  WsTestClient.open(h.wsUrl(venue.socket.platform, q), key === undefined ? {} : headers(key));
const refused = (key: string | undefined, q = query()) =>
  WsTestClient.refused(h.wsUrl(venue.socket.platform, q), key === undefined ? {} : headers(key));

async function closed(c: WsTestClient): Promise<void> {
  c.ws.close();
  await c.untilClosed();
}

/** Opens a socket as soon as the caller has a place again (a closed socket's place is given back asynchronously). */
function openOnceFree(key: string | undefined): Promise<WsTestClient> {
  return waitFor(
    () =>
      open(key).catch((err: unknown) => {
        // Still over the limit: try again; anything else fails at once.
        if ((err as Error).message === 'handshake refused: 429') return undefined;
        throw err;
      }),
    { timeoutMs: 10_000, intervalMs: 50, what: 'the caller to have a place again' },
  );
}

describe('replay sockets per key', () => {
  it('refuses a key over its own ws_max_connections before the upgrade (429 too_many_connections, JSON)', async () => {
    const key = await h.issue({ requests_per_minute: 100_000, ws_max_connections: 2 });
    const a = await open(key);
    const b = await open(key);
    const over = await refused(key);
    expect(over.status).toBe(429);
    expect(over.json).toEqual({
      error: 'too_many_connections',
      message: 'This API key may hold 2 replay sockets at once',
    });
    // Another key is not affected.
    const other = await open(await h.issue({ requests_per_minute: 100_000, ws_max_connections: 1 }));
    // A place comes back when a socket closes.
    await closed(a);
    const c = await openOnceFree(key);
    expect((await refused(key)).status).toBe(429);
    for (const s of [b, c, other]) await closed(s);
  }, 60_000);

  it('applies REPLAY_WS_MAX_CONNECTIONS_PER_KEY to a key without its own limit', async () => {
    const key = await h.issue({ requests_per_minute: 100_000 });
    const sockets = [];
    for (let i = 0; i < PER_KEY; i++) sockets.push(await open(key));
    const over = await refused(key);
    expect([over.status, over.json]).toEqual([
      429,
      { error: 'too_many_connections', message: `This API key may hold ${PER_KEY} replay sockets at once` },
    ]);
    for (const s of sockets) await closed(s);
  }, 60_000);

  it('gives the place back when the replay finishes (1000) and when a subscribed socket is closed', async () => {
    const key = await h.issue({ requests_per_minute: 100_000, ws_max_connections: 1 });
    const a = await open(key, query('max'));
    for (const frame of venue.socket.subscribe(TICKERS[venue.exchange])) a.send(frame);
    await a.until(() => a.closed, 'the replay to finish');
    expect([a.closeCode, a.closeReason]).toEqual([1000, 'replay finished']);
    const b = await openOnceFree(key);
    for (const frame of venue.socket.subscribe(TICKERS[venue.exchange])) b.send(frame);
    await b.until(() => b.texts.some((t) => !venue.socket.isAck(t)), 'the replay to start');
    expect((await refused(key)).status).toBe(429);
    await closed(b);
    await closed(await openOnceFree(key));
  }, 60_000);

  it('gives back the place of a handshake refused after it was counted (a session of other terms: 400)', async () => {
    const key = await h.issue({ requests_per_minute: 100_000, ws_max_connections: 2 });
    const { first, last } = h.span(venue.exchange);
    const a = await open(key, `from=${first}&to=${last}&speed=0.000001&session=s1`);
    const other = await refused(key, `from=${first}&to=${last - 1}&speed=0.000001&session=s1`);
    expect([other.status, (other.json as { error: string }).error]).toEqual([400, 'invalid_request']);
    // Its place came back: the key's second place can be taken again.
    const b = await openOnceFree(key);
    expect((await refused(key)).status).toBe(429);
    for (const s of [a, b]) await closed(s);
  }, 60_000);

  it('forgets a named session whose only handshake failed at the upgrade (a bad Sec-WebSocket-Key)', async () => {
    const key = await h.issue({ requests_per_minute: 100_000 });
    const { first, last } = h.span(venue.exchange);
    const url = new URL(h.wsUrl(venue.socket.platform, `from=${first}&to=${last}&speed=0.000001&session=lost`));
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: {
          'X-API-Key': key,
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': 'not a key',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('upgrade', () => reject(new Error('upgraded with a bad key')));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(400);
    // The same name on other terms is a new session: the failed handshake's was forgotten (not 400 "other terms").
    const b = await waitFor(
      () =>
        open(key, `from=${first}&to=${last - 1}&speed=0.000001&session=lost`).catch((err: unknown) => {
          if ((err as Error).message === 'handshake refused: 400') return undefined;
          throw err;
        }),
      { timeoutMs: 10_000, intervalMs: 50, what: 'the session name to be free again' },
    );
    await closed(b);
  }, 60_000);

  it('limits callers without a key per client address (REPLAY_WS_MAX_CONNECTIONS_ANONYMOUS)', async () => {
    const a = await open(undefined);
    const over = await refused(undefined);
    expect([over.status, over.json]).toEqual([
      429,
      {
        error: 'too_many_connections',
        message: 'Callers without an API key may hold 1 replay sockets at once per address',
      },
    ]);
    // A key's sockets are counted apart from its address's anonymous ones.
    const keyed = await open(await h.issue({ requests_per_minute: 100_000 }));
    await closed(a);
    await closed(await openOnceFree(undefined));
    await closed(keyed);
  }, 60_000);
});
