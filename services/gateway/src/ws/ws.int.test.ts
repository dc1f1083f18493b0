import { generateApiKey } from '@depthgate/auth';
import { signers, type Simulator } from '@depthgate/venue-sim';
import type { RunningGateway } from '../server';
import { simSecrets, startGatewayHarness, type GatewayHarness } from '../testing/harness';
import { ClientBooks, refused, settle, WsClient, type BookPlatform } from '../testing/ws';

/** Upstream liveness and resync settings scaled down so that faults resolve within a test. */
const WS_ENV = {
  WS_UPSTREAM_STALL_MS: '700',
  WS_UPSTREAM_PING_MS: '150',
  WS_RECONNECT_MIN_MS: '50',
  WS_RECONNECT_MAX_MS: '300',
  WS_UPSTREAM_LINGER_MS: '0',
  WS_KEY_CHECK_MS: '100',
  KEY_CACHE_TTL_MS: '1000',
  WS_RECONCILE_INTERVAL_MS: '200',
  WS_RECONCILE_GRACE_MS: '150',
  WS_GEMINI_RESUBSCRIBE_DELAY_MS: '20',
};

let h: GatewayHarness;
let sim: Simulator;
let gw: RunningGateway;
/** Without REST reconciliation, which would find a stalled feed's book stale before the silence threshold does. */
let gwNoReconcile: RunningGateway;
let key: string;
const clients: WsClient[] = [];

beforeAll(async () => {
  h = await startGatewayHarness({ heartbeatIntervalMs: 100 });
  sim = h.sim;
  key = await h.newKey();
  gw = await h.gateway(WS_ENV);
  gwNoReconcile = await h.gateway({ ...WS_ENV, WS_RECONCILE_INTERVAL_MS: '0' });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  sim.feedFaults.clear();
});

afterAll(async () => {
  await h.close();
  const logs = h.logs();
  expect(logs).not.toContain(key);
  for (const secret of simSecrets(sim)) expect(logs).not.toContain(secret);
});

const url = (path: string, g: RunningGateway = gw) => `ws://127.0.0.1:${g.port}${path}`;
const open = async (path: string, o: Parameters<typeof WsClient.open>[1] = {}, g?: RunningGateway) => {
  const c = await WsClient.open(url(path, g), { headers: { 'X-API-Key': key }, ...o });
  clients.push(c);
  return c;
};

/** Polls until `f` holds (a bound for failing, not a timing assertion). */
async function eventually(f: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function metric(name: string, labels: Record<string, string>, g: RunningGateway = gw): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${g.port}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** Each platform: how a client subscribes to one market's book, and the message that starts that book. */
interface Case {
  platform: string;
  book: BookPlatform;
  /** The simulator's feed name and its book partition. */
  feed: string;
  path: string;
  market: () => string;
  subscribe: (market: string) => unknown;
  isSnapshot: (m: Record<string, unknown>) => boolean;
  /** A live change to a book (none on Polymarket US, whose every message is the whole book). */
  isUpdate: (m: Record<string, unknown>) => boolean;
  /** The gateway's notice in this platform's form, and where its `notice` and `reason` are. */
  isNotice: (m: Record<string, unknown>) => boolean;
  noticeBody: (m: Record<string, unknown>) => { notice?: unknown; reason?: unknown };
  /** Events after a dropped message until the loss is visible (Kalshi: a later seq; Polymarket US: the next book). */
  afterDrop: number;
}

const CASES: Case[] = [
  {
    platform: 'venue-b',
    afterDrop: 3,
    book: 'venue-b',
    feed: 'venue-b',
    path: '/ws/v1/kalshi',
    market: () => sim.books.tickers('kalshi')[0] as string,
    subscribe: (t) => ({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [t] } }),
    isSnapshot: (m) => m.type === 'orderbook_snapshot',
    isUpdate: (m) => m.type === 'orderbook_delta',
    isNotice: (m) => m.type === 'depthgate_notice',
    noticeBody: (m) => m.msg as Record<string, unknown>,
  },
  {
    platform: 'venue-a-clob',
    afterDrop: 1,
    book: 'venue-a-clob',
    feed: 'venue-a-clob',
    path: '/ws/v1/polymarket-clob/ws/market',
    market: () => sim.books.tickers('venue-a-clob')[0] as string,
    subscribe: (a) => ({ assets_ids: [a], type: 'market' }),
    isSnapshot: (m) => m.event_type === 'book',
    isUpdate: (m) => m.event_type === 'price_change',
    isNotice: (m) => m.event_type === 'depthgate_notice',
    noticeBody: (m) => m,
  },
  {
    platform: 'venue-a-us',
    afterDrop: 2,
    book: 'venue-a-us',
    feed: 'venue-a-us',
    path: '/ws/v1/venue-a-us',
    market: () => sim.books.tickers('venue-a-us')[0] as string,
    subscribe: (slug) => ({
      subscribe: { requestId: 'md-1', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [slug] },
    }),
    isSnapshot: (m) => m.marketData !== undefined,
    isUpdate: () => false,
    isNotice: (m) => m.depthgateNotice !== undefined,
    noticeBody: (m) => m.depthgateNotice as Record<string, unknown>,
  },
  {
    platform: 'venue-c',
    afterDrop: 1,
    book: 'venue-c',
    feed: 'venue-c',
    path: '/ws/v1/gemini/v2/marketdata',
    market: () => sim.books.tickers('gemini')[0] as string,
    subscribe: (s) => ({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [s] }] }),
    isSnapshot: (m) => m.type === 'l2_updates' && 'auction_events' in m,
    isUpdate: (m) => m.type === 'l2_updates' && !('auction_events' in m),
    isNotice: (m) => m.type === 'depthgate_notice',
    noticeBody: (m) => m,
  },
  {
    platform: 'venue-d',
    afterDrop: 1,
    book: 'venue-d',
    feed: 'venue-d',
    path: '/ws/v1/coinbase',
    market: () => 'BTC-USD',
    subscribe: (p) => ({ type: 'subscribe', product_ids: [p], channels: ['level2'] }),
    isSnapshot: (m) => m.type === 'snapshot',
    isUpdate: (m) => m.type === 'l2update',
    isNotice: (m) => m.type === 'depthgate_notice',
    noticeBody: (m) => m,
  },
];

async function subscribed(c: Case, market: string, path = c.path, g?: RunningGateway): Promise<WsClient> {
  const client = await open(path, {}, g);
  client.send(c.subscribe(market));
  await client.until(() => client.messages.some(c.isSnapshot), `${c.platform} snapshot`);
  return client;
}

/** Moves the venue's book of one market (and others) by `n` events of that market. */
function move(c: Case, market: string, n: number): void {
  const target = sim.books.last(c.book, market).seq + n;
  while (sim.books.last(c.book, market).seq < target) sim.books.step(5);
}

describe.each(CASES)('$platform through /ws', (c) => {
  test('the gateway authenticates upstream itself; the client’s key and credentials never reach the upstream', async () => {
    const market = c.market();
    sim.clearRequests();
    sim.feedFaults.clearReceived(c.feed);
    // The client sends credentials of its own: the gateway neither forwards nor uses them.
    const client = await WsClient.open(url(`${c.path}?api_key=${key}`), {
      headers: { 'KALSHI-ACCESS-KEY': 'caller', 'X-PM-Access-Key': 'caller', 'CB-ACCESS-KEY': 'caller' },
    });
    clients.push(client);
    client.send(c.subscribe(market));
    await client.until(() => client.messages.some(c.isSnapshot), 'the first book');
    const handshakes = sim.requests().filter((r) => r.websocket);
    expect(handshakes.length).toBeGreaterThan(0);
    for (const r of handshakes) {
      expect(r.query).toBe('');
      expect(JSON.stringify(r.headers)).not.toContain(key);
      expect(JSON.stringify(r.headers)).not.toContain('caller');
    }
    const upstream = handshakes.at(-1);
    const signed = { 'venue-b': 'valid', 'venue-a-us': 'valid', 'venue-d': 'valid' } as Record<string, string>;
    expect(upstream?.auth).toBe(signed[c.platform] ?? 'not_required');
    const received = sim.feedFaults.received(c.feed).join('\n');
    expect(received).toContain(market);
    expect(received).not.toContain(key);
    expect(received).not.toContain('caller');
  });

  test('a late joiner gets the platform’s snapshot from the gateway, then live messages; every book is the venue’s', async () => {
    const market = c.market();
    const early = await subscribed(c, market);
    move(c, market, 30);
    sim.feedFaults.clearReceived(c.feed);
    const late = await subscribed(c, market);
    // Served from the gateway's book: the upstream was not asked again.
    expect(sim.feedFaults.received(c.feed).filter((m) => m.includes(market))).toEqual([]);
    move(c, market, 30);
    // The snapshot first, then live messages.
    if (c.platform !== 'venue-a-us') {
      await late.until((ms) => ms.some(c.isUpdate), 'a live message');
      expect(late.messages.findIndex(c.isSnapshot)).toBeLessThan(late.messages.findIndex(c.isUpdate));
    } else {
      await late.until((ms) => ms.filter(c.isSnapshot).length > 1, 'a live message');
    }
    for (const client of [early, late]) {
      const books = new ClientBooks(c.book);
      const { client: seen, venue } = await settle(sim, client, books, c.book, market);
      expect(seen).toEqual(venue);
      expect(books.seqGaps).toBe(0);
    }
  });

  test('many clients of one market share one upstream subscription', async () => {
    const market = c.market();
    sim.feedFaults.clearReceived(c.feed);
    await eventually(
      async () => (await metric('gateway_ws_subscriptions', { platform: c.platform })) === 0,
      'earlier clients gone',
    );
    await Promise.all([1, 2, 3, 4, 5].map(() => subscribed(c, market)));
    const subscribes = sim.feedFaults.received(c.feed).filter((m) => m.includes(market) && !m.includes('unsub'));
    expect(subscribes).toHaveLength(1);
    expect(await metric('gateway_ws_upstream_subscriptions', { platform: c.platform })).toBe(1);
    expect(await metric('gateway_ws_subscriptions', { platform: c.platform })).toBe(5);
  });

  test.each(['disconnect', 'stall'] as const)(
    'after an upstream %s, every client gets stale, the venue’s fresh snapshot, then resynced, and ends with the venue’s book',
    async (fault) => {
      const market = c.market();
      const g = fault === 'stall' ? gwNoReconcile : gw;
      const a = await subscribed(c, market, c.path, g);
      const b = await subscribed(c, market, c.path, g);
      move(c, market, 10);
      const seenBefore = [a.messages.length, b.messages.length];
      // A stall: the connection stays open and sends nothing (heartbeats, pings and the CLOB's PONG included).
      if (fault === 'disconnect') expect(sim.feedFaults.disconnect(c.feed)).toBeGreaterThan(0);
      else expect(sim.feedFaults.stall(c.feed, 2_500)).toBeGreaterThan(0);
      move(c, market, 10);
      const reason = fault === 'disconnect' ? 'upstream_disconnect' : 'upstream_stall';
      const notice = (m: Record<string, unknown>) => (c.isNotice(m) ? c.noticeBody(m) : undefined);
      for (const [i, x] of [a, b].entries()) {
        await x.until(
          (ms) => ms.some((m) => notice(m)?.notice === 'resynced'),
          'stale, the fresh snapshot and resynced',
        );
        // What the client got since the fault, as steps: stale, then the snapshot, then resynced (updates of the
        // fresh book may follow the snapshot before resynced).
        const steps = x.messages
          .slice(seenBefore[i])
          .map((m) =>
            notice(m)
              ? `${String(notice(m)?.notice)} ${String(notice(m)?.reason)}`
              : c.isSnapshot(m)
                ? 'snapshot'
                : undefined,
          )
          .filter((m) => m !== undefined);
        const stale = steps.indexOf(`stale ${reason}`);
        const resynced = steps.indexOf(`resynced ${reason}`);
        expect(stale).toBeGreaterThanOrEqual(0);
        expect(steps.slice(stale + 1, resynced)).toContain('snapshot');
        expect(steps.filter((m) => m !== 'snapshot')).toEqual([`stale ${reason}`, `resynced ${reason}`]);
      }
      move(c, market, 10);
      for (const x of [a, b]) {
        const { client: seen, venue } = await settle(sim, x, new ClientBooks(c.book), c.book, market);
        expect(seen).toEqual(venue);
      }
    },
  );

  test('after a dropped upstream message, every client ends with the venue’s book (resynced where the loss shows)', async () => {
    const market = c.market();
    const a = await subscribed(c, market);
    const b = await subscribed(c, market);
    const seenBefore = [a.messages.length, b.messages.length];
    sim.feedFaults.dropNext(c.feed, { ticker: market });
    move(c, market, c.afterDrop);
    for (const x of [a, b]) {
      const { client: seen, venue } = await settle(sim, x, new ClientBooks(c.book), c.book, market);
      expect(seen).toEqual(venue);
    }
    expect(sim.feedFaults.stats(c.feed).dropped).toBeGreaterThan(0);
    // Polymarket US sends the whole book every time: the next message heals it. The Polymarket CLOB sends an asset's
    // whole `book` after every trade, which heals a loss before anything shows it when the lost change's event traded.
    // Elsewhere the loss is found (a Kalshi seq gap; a REST book that disagrees) and every client is told before its
    // fresh snapshot.
    if (c.platform !== 'venue-a-us') {
      for (const [i, x] of [a, b].entries()) {
        const told = x.messages.some(
          (m) => c.isNotice(m) && ['sequence_gap', 'book_mismatch'].includes(c.noticeBody(m).reason as string),
        );
        const healed = c.platform === 'venue-a-clob' && x.messages.slice(seenBefore[i]).some(c.isSnapshot);
        expect(told || healed).toBe(true);
      }
    }
  });
});

describe('caller authentication and limits', () => {
  const kalshi = CASES[0] as Case;

  test('the key as X-API-Key, HTTP Basic, a Sec-WebSocket-Protocol token or api_key; masked in the logs', async () => {
    const plain = await WsClient.open(url('/ws/v1/kalshi'), {
      headers: { Authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
    });
    clients.push(plain);
    const browser = await WsClient.open(url('/ws/v1/kalshi'), { protocols: ['depthgate', key] });
    clients.push(browser);
    expect(browser.ws.protocol).toBe('depthgate');
    const query = await WsClient.open(url(`/ws/v1/kalshi?api_key=${key}`));
    clients.push(query);
    // The name percent-encoded reads the same (URLSearchParams), and is masked the same.
    const encoded = await WsClient.open(url(`/ws/v1/kalshi?api%5Fkey=${key}`));
    clients.push(encoded);
    expect(h.logs()).toContain('api_key=[redacted]');
    expect(h.logs()).toContain('api%5Fkey=[redacted]');
    expect(h.logs()).not.toContain(key);
    expect(await refused(url('/ws/v1/kalshi'), { protocols: [key] })).toEqual({
      status: 400,
      body: {
        error: 'invalid_request',
        message: 'A key offered as a subprotocol needs the subprotocol "depthgate" offered with it',
      },
    });
  });

  test('missing, unknown and revoked keys get 401; a platform outside the key’s allowlist 403', async () => {
    const invalid = { status: 401, body: { error: 'unauthorized', message: 'Invalid API key' } };
    expect(await refused(url('/ws/v1/kalshi'))).toEqual(invalid);
    expect(await refused(url('/ws/v1/kalshi'), { headers: { 'X-API-Key': 'dg_nope' } })).toEqual(invalid);
    const { record, key: revoked } = await h.store.create({ name: 'revoked' });
    await h.store.revoke(record.id);
    expect(await refused(url('/ws/v1/kalshi'), { headers: { 'X-API-Key': revoked } })).toEqual(invalid);
    const coinbaseOnly = await h.newKey({ platforms: ['venue-d'] });
    expect(await refused(url('/ws/v1/kalshi'), { headers: { 'X-API-Key': coinbaseOnly } })).toEqual({
      status: 403,
      body: { error: 'forbidden', message: 'This API key may not use platform venue-b' },
    });
    // The platform's own key header carries the caller's key only where the platform's client has no other way.
    const pm = await WsClient.open(url('/ws/v1/venue-a-us'), { headers: { 'X-PM-Access-Key': key } });
    clients.push(pm);
    expect(await refused(url('/ws/v1/kalshi'), { headers: { 'X-PM-Access-Key': key } })).toEqual(invalid);
  });

  test('made-up keys past RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: handshakes and requests from the address get 429; a key it used still connects', async () => {
    const g = await h.gateway({ ...WS_ENV, RATE_LIMIT_UNKNOWN_KEYS_PER_MINUTE: '1' });
    clients.push(await WsClient.open(url('/ws/v1/kalshi', g), { headers: { 'X-API-Key': key } }));
    const madeUp = () => ({ headers: { 'X-API-Key': generateApiKey() } });
    expect(await refused(url('/ws/v1/kalshi', g), madeUp())).toEqual({
      status: 401,
      body: { error: 'unauthorized', message: 'Invalid API key' },
    });
    const throttled = await refused(url('/ws/v1/kalshi', g), madeUp());
    expect(throttled).toEqual({
      status: 429,
      body: {
        error: 'rate_limited',
        message: expect.stringMatching(/^Too many unknown API keys from this address; retry in \d+ s$/),
      },
    });
    // The process counts REST requests and handshakes together.
    const rest = await fetch(`http://127.0.0.1:${g.port}/api/v1/venue-b/exchange/announcements`, madeUp());
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await rest.json()).toMatchObject({ error: 'rate_limited' });
    clients.push(await WsClient.open(url('/ws/v1/kalshi', g), { headers: { 'X-API-Key': key } }));
    expect(
      await fetch(`http://127.0.0.1:${g.port}/api/v1/venue-b/exchange/announcements`, {
        headers: { 'X-API-Key': key },
      }),
    ).toMatchObject({ status: 200 });
  });

  test('a key revoked while its connections are open: they are closed with 4001 within the key cache TTL', async () => {
    const { record, key: doomed } = await h.store.create({ name: 'doomed' });
    const a = await WsClient.open(url('/ws/v1/kalshi'), { headers: { 'X-API-Key': doomed } });
    const b = await WsClient.open(url('/ws/v1/gemini'), { headers: { 'X-API-Key': doomed } });
    clients.push(a, b);
    await h.store.revoke(record.id);
    for (const x of [a, b]) {
      await x.untilClosed(3_000);
      expect(x.closeCode).toBe(4001);
      expect(x.closeReason).toBe('API key revoked');
    }
  });

  test('per-key connection and subscription limits (key record), refused in the platform’s form; nothing reaches the upstream', async () => {
    const limited = await h.newKey({ ws_max_connections: 2, ws_max_subscriptions: 3 });
    const headers = { 'X-API-Key': limited };
    const a = await WsClient.open(url('/ws/v1/kalshi'), { headers });
    const b = await WsClient.open(url('/ws/v1/kalshi'), { headers });
    clients.push(a, b);
    expect(await refused(url('/ws/v1/kalshi'), { headers })).toEqual({
      status: 429,
      body: { error: 'too_many_connections', message: 'This API key may hold 2 WebSocket connections at once' },
    });
    const [t1, t2, t3] = sim.books.tickers('kalshi').slice(-3) as [string, string, string];
    a.send({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [t1, t2] } });
    await a.until(() => a.ofType('type', 'orderbook_snapshot').length === 2, 'two snapshots');
    sim.feedFaults.clearReceived('venue-b');
    b.send({ id: 9, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'ticker'], market_tickers: [t3] } });
    await b.until(() => b.messages.length > 0, 'an answer');
    expect(b.messages[0]).toEqual({
      id: 9,
      type: 'error',
      msg: {
        code: 10,
        msg: 'Channel error: depthgate: subscription limit reached: this API key may hold 3 subscriptions (channel × market) across its connections',
      },
    });
    b.send({ id: 10, cmd: 'subscribe', params: { channels: ['ticker'], market_tickers: [t3] } });
    await b.until(() => b.ofType('type', 'subscribed').length === 1, 'the third subscription');
    const upstream = () => sim.feedFaults.received('venue-b').filter((m) => m.includes(t3));
    await eventually(async () => upstream().length > 0, 'the upstream subscribe');
    expect(upstream()).toEqual([
      expect.stringMatching(
        /^\{"id":\d+,"cmd":"subscribe","params":\{"channels":\["ticker"\],"market_tickers":\[".*"\]\}\}$/,
      ),
    ]);
    // Closing a connection gives its subscriptions back.
    await a.close();
    await eventually(
      async () => (await metric('gateway_ws_subscriptions', { platform: 'venue-b' })) === 1,
      'a’s subscriptions released',
    );
    b.send({ id: 11, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [t1, t2] } });
    await b.until(() => b.ofType('type', 'orderbook_snapshot').length === 2, 'room again');
  });

  test('concurrent handshakes of one key are each counted: the limit holds, and a close frees only its own place', async () => {
    const limited = await h.newKey({ ws_max_connections: 2 });
    const headers = { 'X-API-Key': limited };
    const attempt = () =>
      WsClient.open(url('/ws/v1/kalshi'), { headers }).then(
        (c) => (clients.push(c), c),
        (err: Error) => err.message,
      );
    // Five at once, all waiting for the key's count in Redis together.
    const results = await Promise.all(Array.from({ length: 5 }, attempt));
    const opened = results.filter((r): r is WsClient => typeof r !== 'string');
    expect(opened).toHaveLength(2);
    expect(results.filter((r) => typeof r === 'string')).toEqual(Array(3).fill('handshake refused: 429'));
    // Closing one gives back one place, not the other's.
    await (opened[0] as WsClient).close();
    await eventually(async () => typeof (await attempt()) !== 'string', 'the freed place');
    expect(await refused(url('/ws/v1/kalshi'), { headers })).toMatchObject({ status: 429 });
  });

  test('a handshake is a request of the key’s rate limit (shared with REST): past it, 429 rate_limited before anything opens', async () => {
    const limited = await h.newKey({ requests_per_minute: 2 });
    const headers = { 'X-API-Key': limited };
    const a = await WsClient.open(url('/ws/v1/kalshi'), { headers });
    clients.push(a);
    // One REST request of the same key: its second request of the minute.
    expect(
      (await fetch(url('/api/v1/venue-b/exchange/announcements?limit=1').replace('ws:', 'http:'), { headers })).status,
    ).toBe(200);
    const over = await refused(url('/ws/v1/kalshi'), { headers });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ error: 'rate_limited' });
    expect((over.body as { message: string }).message).toMatch(
      /^Rate limit exceeded: 2 requests per minute; retry in \d+ s$/,
    );
  });

  test('Polymarket US: a replacement the key’s limit refuses leaves the subscription it would replace as it was', async () => {
    const limited = await h.newKey({ ws_max_subscriptions: 2 });
    const x = await WsClient.open(url('/ws/v1/venue-a-us'), { headers: { 'X-API-Key': limited } });
    clients.push(x);
    const [s1, s2, s3] = sim.books.tickers('venue-a-us').slice(0, 3) as [string, string, string];
    const subscribe = (requestId: string, marketSlugs: string[]) => ({
      subscribe: { requestId, subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs },
    });
    const LIMIT =
      'depthgate: subscription limit reached: this API key may hold 2 subscriptions (channel × market) across its connections';
    const errors = (requestId: string) => x.messages.filter((m) => m.requestId === requestId && m.error !== undefined);
    const books = (requestId: string, slug: string) =>
      x.messages.filter(
        (m) => m.requestId === requestId && m.marketData !== undefined && JSON.stringify(m).includes(slug),
      );
    const held = () => metric('gateway_ws_subscriptions', { platform: 'venue-a-us' });
    x.send(subscribe('r', [s1, s2]));
    await x.until(() => books('r', s1).length > 0 && books('r', s2).length > 0, 'the two books');
    // Three markets in place of two: one more than the key may hold. Refused; the two stay.
    x.send(subscribe('r', [s1, s2, s3]));
    await x.until(() => errors('r').length === 1, 'the refusal');
    expect(errors('r')[0]).toEqual({ requestId: 'r', error: LIMIT });
    expect(await held()).toBe(2);
    // Within the limit it replaces: the old places go to the new markets, and the key holds two, no more.
    x.send(subscribe('r', [s2, s3]));
    await x.until(() => books('r', s3).length > 0, 'the new market’s book');
    x.send(subscribe('q', [s1]));
    await x.until(() => errors('q').length === 1, 'a third market refused');
    expect(errors('q')[0]).toEqual({ requestId: 'q', error: LIMIT });
    // One market in place of two gives one place back: now it fits.
    x.send(subscribe('r', [s3]));
    await eventually(async () => (await held()) === 1, 'the replaced subscription’s extra place given back');
    x.send(subscribe('q', [s1]));
    await x.until(() => books('q', s1).length > 0, 'the book of the market that fits again');
    expect(errors('q')).toHaveLength(1);
  });

  test('a client that does not read is closed with 4009 (slow consumer); the others are unaffected', async () => {
    const g = await h.gateway({ ...WS_ENV, WS_MAX_BUFFERED_BYTES: '16384' });
    const market = kalshi.market();
    const subscribe = kalshi.subscribe(market);
    const fast = await open('/ws/v1/kalshi', {}, g);
    const slow = await open('/ws/v1/kalshi', {}, g);
    for (const x of [fast, slow]) {
      x.send(subscribe);
      await x.until(() => x.messages.some(kalshi.isSnapshot), 'a snapshot');
    }
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    while ((await metric('gateway_ws_drops_total', { platform: 'venue-b', reason: 'slow_consumer' }, g)) === 0) {
      move(kalshi, market, 200);
      await new Promise((r) => setTimeout(r, 20));
    }
    socket.resume();
    await slow.untilClosed();
    expect(slow.closeCode).toBe(4009);
    expect(slow.closeReason).toBe('slow consumer: send buffer above the limit');
    const books = new ClientBooks('venue-b');
    const { client: seen, venue } = await settle(sim, fast, books, 'venue-b', market);
    expect(fast.closed).toBe(false);
    expect(seen).toEqual(venue);
    expect(books.seqGaps).toBe(0);
  });
  test('while all clients together hold more than WS_MAX_BUFFERED_TOTAL_BYTES unsent, those furthest behind are cut', async () => {
    // Each client may hold much more than the process may hold for all of them: the process-wide bound acts.
    const g = await h.gateway({
      ...WS_ENV,
      WS_MAX_BUFFERED_BYTES: String(256 * 1024 * 1024),
      WS_MAX_BUFFERED_TOTAL_BYTES: '32768',
    });
    const market = kalshi.market();
    const subscribe = kalshi.subscribe(market);
    const fast = await open('/ws/v1/kalshi', {}, g);
    const slow = [await open('/ws/v1/kalshi', {}, g), await open('/ws/v1/kalshi', {}, g)];
    for (const x of [fast, ...slow]) {
      x.send(subscribe);
      await x.until(() => x.messages.some(kalshi.isSnapshot), 'a snapshot');
    }
    const sockets = slow.map((x) => (x.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket);
    for (const s of sockets) s.pause();
    while ((await metric('gateway_ws_drops_total', { platform: 'venue-b', reason: 'slow_consumer' }, g)) < 2) {
      move(kalshi, market, 200);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const s of sockets) s.resume();
    for (const x of slow) {
      await x.untilClosed();
      expect(x.closeCode).toBe(4009);
    }
    const books = new ClientBooks('venue-b');
    const { client: seen, venue } = await settle(sim, fast, books, 'venue-b', market);
    expect(fast.closed).toBe(false);
    expect(seen).toEqual(venue);
    expect(books.seqGaps).toBe(0);
  });
});

describe('metrics', () => {
  test('connections, subscriptions, upstream subscriptions and connections, messages in and out, resyncs', async () => {
    const g = await h.gateway(WS_ENV);
    const kalshi = CASES[0] as Case;
    const m = (name: string, labels: Record<string, string> = {}) =>
      metric(name, { platform: 'venue-b', ...labels }, g);
    const market = kalshi.market();
    const x = await open(kalshi.path, {}, g);
    expect(await m('gateway_ws_handshakes_total', { result: 'accepted' })).toBe(1);
    expect(await m('gateway_ws_connections')).toBe(1);
    x.send(kalshi.subscribe(market));
    await x.until(() => x.messages.some(kalshi.isSnapshot), 'the snapshot');
    move(kalshi, market, 5);
    await x.until(() => x.messages.some(kalshi.isUpdate), 'live messages');
    expect(await m('gateway_ws_subscriptions')).toBe(1);
    expect(await m('gateway_ws_upstream_subscriptions')).toBe(1);
    expect(await m('gateway_ws_upstream_connections')).toBe(1);
    expect(await m('gateway_ws_messages_in_total', { source: 'client' })).toBe(1);
    expect(await m('gateway_ws_messages_out_total', { destination: 'upstream' })).toBeGreaterThanOrEqual(1);
    expect(await m('gateway_ws_messages_in_total', { source: 'upstream' })).toBeGreaterThan(0);

    expect(sim.feedFaults.disconnect('venue-b')).toBeGreaterThan(0);
    await x.until(
      () => x.messages.some(kalshi.isNotice) && x.messages.filter(kalshi.isSnapshot).length === 2,
      'the notice and the fresh snapshot',
    );
    await x.sync();
    expect(await m('gateway_ws_resyncs_total', { reason: 'upstream_disconnect' })).toBe(1);
    await eventually(async () => (await m('gateway_ws_upstream_connections')) === 1, 'the upstream connection back');
    // Every message of the shared topic counts (snapshots, live messages, the notice); the protocol's own replies
    // (Kalshi's `subscribed`) are the session's.
    const fromTopic = x.messages.filter((msg) => msg.type !== 'subscribed').length;
    expect(await m('gateway_ws_messages_out_total', { destination: 'client' })).toBe(fromTopic);

    await x.close();
    await eventually(async () => (await m('gateway_ws_connections')) === 0, 'the connection closed');
    expect(await m('gateway_ws_subscriptions')).toBe(0);
    expect(await m('gateway_ws_upstream_subscriptions')).toBe(0);
  });
});

describe('bad input', () => {
  test('unknown platforms, platforms without a stream, unknown channels and paths: 404 with the gateway’s error', async () => {
    expect(await refused(url('/ws/v1/nope'), { headers: { 'X-API-Key': key } })).toMatchObject({
      status: 404,
      body: {
        error: 'unknown_platform',
        message:
          'Unknown platform "nope"; platforms with a stream: venue-a-clob (polymarket-clob), venue-a-us (polymarket-us), venue-b (kalshi), venue-c (gemini), venue-d (coinbase)',
      },
    });
    expect(await refused(url('/ws/v1/venue-e'), { headers: { 'X-API-Key': key } })).toMatchObject({
      status: 404,
      body: { error: 'unknown_platform', message: expect.stringContaining('has no WebSocket stream') },
    });
    expect(await refused(url('/ws/kalshi/fills'), { headers: { 'X-API-Key': key } })).toEqual({
      status: 404,
      body: {
        error: 'unknown_channel',
        message: 'Unknown channel "fills" of venue-b; channels: orderbook_delta, ticker, trade',
      },
    });
    expect(await refused(url('/ws/v1/kalshi/v2/marketdata'), { headers: { 'X-API-Key': key } })).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
    expect(await refused(url('/elsewhere'), { headers: { 'X-API-Key': key } })).toMatchObject({ status: 404 });
  });

  test.each([
    ['/ws/v1/kalshi', { id: null, type: 'error', msg: { code: 1, msg: 'Unable to process message' } }],
    ['/ws/v1/venue-a-us', { error: 'invalid message: expected a JSON object' }],
    [
      '/ws/v1/gemini',
      {
        type: 'error',
        result: 'error',
        reason: 'InvalidJson',
        message: 'expected {"type":"subscribe","subscriptions":[{"name":"l2","symbols":[…]}]}',
      },
    ],
    [
      '/ws/v1/coinbase',
      { type: 'error', message: 'Failed to subscribe', reason: 'type must be subscribe or unsubscribe' },
    ],
    [
      '/ws/v1/polymarket-clob',
      {
        event_type: 'depthgate_error',
        error: 'invalid_message',
        message:
          'expected {"assets_ids":[…],"type":"market"} or {"assets_ids":[…],"operation":"subscribe"|"unsubscribe"}, or PING',
      },
    ],
  ])('%s: a malformed message gets the platform’s error; nothing reaches the upstream', async (path, answer) => {
    const x = await open(path);
    x.send('{"not json');
    await x.until(() => x.messages.length > 0, 'an error');
    expect(x.messages[0]).toEqual(answer);
    expect(x.closed).toBe(false);
  });

  test('a channel outside /ws/{platform}/{channel}, an unknown channel or market, oversized and binary messages', async () => {
    const only = await open('/ws/kalshi/ticker');
    only.send({ id: 3, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: ['X'] } });
    only.send({ id: 4, cmd: 'subscribe', params: { channels: ['fills'], market_tickers: ['X'] } });
    only.send({ id: 5, cmd: 'subscribe', params: { channels: ['ticker'], market_tickers: ['no spaces allowed'] } });
    await only.until(() => only.messages.length === 3, 'three errors');
    expect(only.messages.map((m) => (m.msg as { code: number }).code)).toEqual([8, 8, 11]);
    sim.feedFaults.clearReceived('venue-b');
    only.send({ id: 6, cmd: 'subscribe', params: { channels: ['ticker'], market_tickers: ['KXNOSUCH-1'] } });
    await only.until(() => only.ofType('type', 'error').length === 4, 'the upstream’s refusal, passed on');
    expect(only.messages.at(-1)).toEqual({
      id: 6,
      type: 'error',
      msg: { code: 16, msg: 'Market not found: KXNOSUCH-1' },
    });

    const big = await open('/ws/v1/gemini');
    big.send(`{"type":"subscribe","pad":"${'x'.repeat(70 * 1024)}"}`);
    await big.untilClosed();
    expect(big.closeCode).toBe(1009);
    const binary = await open('/ws/v1/gemini');
    binary.ws.send(Buffer.from([1, 2, 3]));
    await binary.untilClosed();
    expect(binary.closeCode).toBe(1003);
    expect(binary.closeReason).toBe('binary frames are not accepted');
  });

  test.each([
    ['/ws/v1/kalshi', { id: 7, cmd: 'unsubscribe', params: { sids: [{ toString: 0 }] } }, 'type', 'error'],
    [
      '/ws/v1/kalshi',
      { id: 8, cmd: 'update_subscription', params: { sid: { toString: 0 }, action: 'add_markets' } },
      'type',
      'error',
    ],
    ['/ws/v1/gemini', { type: 'subscribe', subscriptions: [{ name: { toString: 0 } }] }, 'reason', 'InvalidJson'],
    ['/ws/v1/coinbase', { type: 'subscribe', channels: [{ name: { toString: 0 } }] }, 'type', 'error'],
  ])(
    '%s: a JSON object where a name belongs gets the platform’s error, naming it as JSON',
    async (path, message, field, value) => {
      const x = await open(path);
      x.send(message);
      await x.until(() => x.ofType(field, value).length > 0, 'the error');
      expect(JSON.stringify(x.ofType(field, value)[0])).toContain('{\\"toString\\":0}');
      expect(x.closed).toBe(false);
    },
  );

  test('messages sent faster than they are handled are each answered, in the order sent', async () => {
    const x = await open('/ws/v1/kalshi');
    // Under the burst allowance (twice WS_CLIENT_MESSAGES_PER_SECOND), above the messages read ahead of the one handled.
    for (let id = 1; id <= 90; id++) x.send({ id, cmd: 'unsubscribe', params: { sids: [1_000_000 + id] } });
    await x.until(() => x.messages.length >= 90, 'an answer to every message', 30_000);
    expect(x.messages.map((m) => m.id)).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
    expect(x.closed).toBe(false);
  });

  test('a client that floods messages is closed with 4429', async () => {
    const x = await open('/ws/v1/polymarket-clob');
    for (let i = 0; i < 300; i++) x.send('PING');
    await x.untilClosed();
    expect(x.closeCode).toBe(4429);
  });
});

describe('routing by host, and draining', () => {
  test('with GATEWAY_BASE_DOMAIN, {platform}.{domain}/{its own path} is that platform’s stream (polymarket-us’s ws)', async () => {
    const g = await h.gateway({ ...WS_ENV, GATEWAY_BASE_DOMAIN: 'localhost' });
    const slug = sim.books.tickers('venue-a-us')[0] as string;
    // The library signs with its own key id: the gateway takes the depthgate key from it and re-signs upstream.
    const headers = {
      Host: `venue-a-us.localhost:${g.port}`,
      ...signers.polymarketUsHeaders(
        { accessKey: key, secretKeyBase64: sim.credentials.polymarketUs.secretKeyBase64 },
        'GET',
        '/v1/ws/markets',
      ),
    };
    const x = await WsClient.open(url('/v1/ws/markets', g), { headers });
    clients.push(x);
    x.send({ subscribe: { requestId: 'r', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [slug] } });
    await x.until(() => x.messages.some((m) => m.marketData !== undefined), 'a book');
    expect(x.messages[0]).toMatchObject({ requestId: 'r', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA' });
  });

  test('at shutdown every client is told to reconnect elsewhere (1001)', async () => {
    const g = await h.gateway(WS_ENV);
    const x = await open('/ws/v1/gemini', {}, g);
    await g.shutdown('test');
    await x.untilClosed();
    expect(x.closeCode).toBe(1001);
    expect(x.closeReason).toBe('gateway shutting down');
  });
});
