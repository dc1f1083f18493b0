/**
 * Replay sockets per key (docs/replay.md, "Connections per key"), on the harness (testing/harness.ts: the replay
 * service on the test Redis and ClickHouse): a caller over its limit is refused before the upgrade with
 * `429 too_many_connections` in the JSON error form; a socket's place is given back when it closes, however it
 * closes; the limit is a key's own `ws_max_connections`, else REPLAY_WS_MAX_CONNECTIONS_PER_KEY, and per client
 * address without a key. Subscriptions likewise: a key's (or an address's) sockets hold at most its
 * `ws_max_subscriptions`, else REPLAY_WS_MAX_SUBSCRIPTIONS_*, together; over it a subscribe gets the venue's refusal.
 * (The count's own mechanics — across replicas, apart from the gateway's, leases — are
 * packages/auth's ws-limits.int.test.ts.)
 */
import http from 'node:http';
import { generateApiKey } from '@depthgate/auth';
import { WsTestClient, waitFor } from '@depthgate/test-utils';
import { startHarness, TICKERS, type Harness } from './testing/harness';
import { VENUES, type Venue, type VenueSocketClient } from './testing/venues';

let h: Harness;
const PER_KEY = 3;

beforeAll(async () => {
  h = await startHarness({
    seed: 'limits',
    events: 60,
    env: {
      REPLAY_WS_MAX_CONNECTIONS_PER_KEY: String(PER_KEY),
      REPLAY_WS_MAX_CONNECTIONS_ANONYMOUS: '1',
      REPLAY_WS_MAX_SUBSCRIPTIONS_ANONYMOUS: '1',
      RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: '1',
    },
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
const openOnceFree = (key: string | undefined) => openOnceFreeOn(() => open(key));

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

describe('replay subscriptions per key', () => {
  /** The subscriptions each venue's test subscribe holds (testing/venues.ts: the book and the trades where apart). */
  const HOLDS: Record<string, number> = { venue_b: 2, venue_c: 1, venue_a_us: 2, venue_a_clob: 1, venue_d: 2 };
  const LIMIT = /depthgate: subscription limit reached: /;

  /** Every socket a test opened: closed after it, whatever happened. */
  const opened: WsTestClient[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) if (!c.closed) await closed(c);
  });

  const socketOf = (v: Venue) => ({ ...v, socket: v.socket as VenueSocketClient });
  const openOn = async (v: Venue & { socket: VenueSocketClient }, key: string | undefined, q?: string) => {
    const { first, last } = h.span(v.exchange);
    const c = await WsTestClient.open(
      h.wsUrl(v.socket.platform, q ?? `from=${first}&to=${last}&speed=0.000001`),
      key === undefined ? {} : headers(key),
    );
    opened.push(c);
    return c;
  };
  const subscribe = (c: WsTestClient, v: Venue & { socket: VenueSocketClient }) => {
    for (const frame of v.socket.subscribe(TICKERS[v.exchange])) c.send(frame);
  };
  /** The texts received after the first `from`. */
  const since = (c: WsTestClient, from: number) => c.texts.slice(from);

  for (const v of VENUES.filter((x) => x.socket).map(socketOf)) {
    it(`${v.name}: a key's sockets hold its ws_max_subscriptions together; one more is refused in the venue's form`, async () => {
      const key = await h.issue({ requests_per_minute: 100_000, ws_max_subscriptions: HOLDS[v.exchange] });
      const a = await openOn(v, key);
      subscribe(a, v);
      // Accepted: the replay starts (its first message that is not an ack).
      await a.until(() => a.texts.some((t) => !v.socket.isAck(t)), 'the replay to start');
      expect(a.texts.filter((t) => LIMIT.test(t))).toEqual([]);
      const b = await openOn(v, key);
      subscribe(b, v);
      await b.until(() => b.texts.some((t) => LIMIT.test(t)), 'the refusal');
      const refusal = b.texts.find((t) => LIMIT.test(t)) as string;
      expect(refusal).toContain(
        `depthgate: subscription limit reached: this API key may hold ${HOLDS[v.exchange]} subscriptions (channel × market) across its replay sockets`,
      );
      expect(JSON.parse(refusal)).toMatchObject(
        {
          venue_b: { id: 1, type: 'error', msg: { code: 10 } },
          venue_c: { type: 'error', result: 'error', reason: 'SubscriptionLimit' },
          venue_a_us: { requestId: 'md' },
          venue_a_clob: { event_type: 'depthgate_error', error: 'subscription_limit' },
          venue_d: { type: 'error', message: 'Failed to subscribe' },
        }[v.exchange] as object,
      );
      expect(b.closed).toBe(false);
      // The first socket's places come back when it closes: the second's subscribe is taken then.
      await closed(a);
      await waitFor(
        async () => {
          const from = b.texts.length;
          subscribe(b, v);
          await b.until(
            () => since(b, from).some((t) => LIMIT.test(t) || !v.socket.isAck(t)),
            'an answer to the subscribe',
          );
          return since(b, from).every((t) => !LIMIT.test(t));
        },
        { timeoutMs: 10_000, intervalMs: 50, what: 'the places to come back' },
      );
      await closed(b);
    }, 60_000);
  }

  it('Kalshi: a market subscribed again counts again (each subscription is sent)', async () => {
    const v = socketOf(venue);
    const key = await h.issue({ requests_per_minute: 100_000, ws_max_subscriptions: 3 });
    const a = await openOn(v, key);
    subscribe(a, v);
    await a.until((ms) => ms.filter((m) => m.type === 'subscribed').length === 2, 'the acks');
    subscribe(a, v);
    await a.until((ms) => ms.some((m) => m.type === 'error'), 'the refusal');
    expect(a.messages.find((m) => m.type === 'error')).toEqual({
      id: 1,
      type: 'error',
      msg: {
        code: 10,
        msg: 'Channel error: depthgate: subscription limit reached: this API key may hold 3 subscriptions (channel × market) across its replay sockets',
      },
    });
    await closed(a);
  }, 60_000);

  it('limits callers without a key per client address (REPLAY_WS_MAX_SUBSCRIPTIONS_ANONYMOUS)', async () => {
    const v = socketOf(venue);
    // Inside the anonymous caller's window (the last day).
    const a = await openOnceFreeOn(() => openOn(v, undefined, `from=${h.now - 3_600_000}&to=${h.now}&speed=0.000001`));
    subscribe(a, v);
    await a.until((ms) => ms.some((m) => m.type === 'error'), 'the refusal');
    expect(a.messages.find((m) => m.type === 'error')?.msg).toEqual({
      code: 10,
      msg: 'Channel error: depthgate: subscription limit reached: callers without an API key may hold 1 subscriptions (channel × market) across their replay sockets per address',
    });
    await closed(a);
  }, 60_000);
});

/** Opens a socket with `open` as soon as the caller has a place again (refused with 429 meanwhile). */
function openOnceFreeOn(open: () => Promise<WsTestClient>): Promise<WsTestClient> {
  return waitFor(
    () =>
      open().catch((err: unknown) => {
        if ((err as Error).message === 'handshake refused: 429') return undefined;
        throw err;
      }),
    { timeoutMs: 10_000, intervalMs: 50, what: 'the caller to have a place again' },
  );
}

describe('made-up keys (RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: 1)', () => {
  it('past the limit a handshake with a key this process never answered is 429 rate_limited (JSON); a key it answered still opens', async () => {
    const key = await h.issue({ requests_per_minute: 100_000 });
    await closed(await open(key));
    const first = await refused(generateApiKey());
    expect([first.status, first.json]).toEqual([401, { error: 'unauthorized', message: 'Invalid API key' }]);
    const over = await refused(generateApiKey());
    expect(over.status).toBe(429);
    expect(over.json).toEqual({
      error: 'rate_limited',
      message: expect.stringMatching(/^Too many unknown API keys from this address; retry in \d+ s$/),
    });
    expect((await refused(await h.issue({ requests_per_minute: 100_000 }))).status).toBe(429);
    await closed(await openOnceFree(key));
  }, 60_000);
});
