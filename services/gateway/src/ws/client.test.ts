import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { generateApiKey, type KeyLimits } from '@depthgate/auth';
import { createLogger, Registry } from '@depthgate/service-kit';
import { ClientConnection } from './client';
import { Frame } from './frame';
import type { StreamHub } from './hub';
import { WsMetrics } from './metrics';
import type { ClientContext, ClientSession, PlatformStream, Subscriber } from './types';
import { venueAUsStream } from './venue-a-us';
import { venueBStream } from './venue-b';
import { venueDStream } from './venue-d';

const logger = createLogger({ name: 'test', level: 'silent' });
const HIGH_WATER_MARK = 16 * 1024;

/**
 * The upgraded socket as a Writable keeps its state: bytes written and not yet sent, and whether a `drain` is due (a
 * write found the buffer at or above its high-water mark). `sendAll()` is the client having read everything.
 */
class FakeSocket extends EventEmitter {
  unsent = 0;
  writableNeedDrain = false;
  /** Every frame written, as bytes. */
  readonly written: Buffer[] = [];
  cork(): void {}
  uncork(): void {}
  write(bytes: Buffer): boolean {
    this.written.push(bytes);
    this.unsent += bytes.length;
    if (this.unsent >= HIGH_WATER_MARK) this.writableNeedDrain = true;
    return !this.writableNeedDrain;
  }
  /** The client read all but `left` bytes: no `drain` (the buffer is not empty). */
  sendAllBut(left: number): void {
    this.unsent = Math.min(this.unsent, left);
  }
  sendAll(): void {
    this.unsent = 0;
    if (!this.writableNeedDrain) return;
    this.writableNeedDrain = false;
    this.emit('drain');
  }
}

/** What of `ws`'s WebSocket the connection uses: its events, reading paused and resumed, the bytes unsent. */
class FakeWs extends EventEmitter {
  isPaused = false;
  constructor(private readonly socket: FakeSocket) {
    super();
  }
  get bufferedAmount(): number {
    return this.socket.unsent;
  }
  pause(): void {
    this.isPaused = true;
  }
  resume(): void {
    this.isPaused = false;
  }
  close(code: number, reason = ''): void {
    this.emit('close', code, Buffer.from(reason));
  }
  terminate(): void {}
  ping(): void {}
}

/** Lets every pending turn of the event loop (timers aside) run. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** A connection whose platform session answers each message with `answerBytes` (like Kalshi's `get_snapshot`). */
function connection(answerBytes: number, maxBufferedBytes: number) {
  const socket = new FakeSocket();
  const ws = new FakeWs(socket);
  const handled: string[] = [];
  const closes: number[] = [];
  const stream = {
    openClient: (ctx: ClientContext<unknown>) => ({
      onMessage: (text: string) => {
        handled.push(text);
        ctx.send('x'.repeat(answerBytes));
      },
    }),
  } as unknown as PlatformStream;
  const client = new ClientConnection({
    id: 1,
    connId: 'c1',
    ws: ws as unknown as WebSocket,
    socket: socket as unknown as Duplex,
    platform: 'test',
    hub: {} as StreamHub,
    stream,
    keyId: 'k',
    maxSubscriptions: 10,
    limits: { close: () => undefined } as unknown as KeyLimits,
    onlyChannel: undefined,
    maxBufferedBytes,
    messagesPerSecond: 1000,
    metrics: new WsMetrics(new Registry()).forPlatform('test'),
    logger,
    onClosed: (_client, code) => closes.push(code),
  });
  /** Client messages arriving in one read of the socket (one turn). */
  const receive = (...texts: string[]) => {
    for (const t of texts) ws.emit('message', Buffer.from(t), false);
  };
  return { socket, ws, client, handled, closes, receive };
}

describe('ClientConnection', () => {
  it('handles a client’s next message only once what it has unsent is back under its bound', async () => {
    const c = connection(100 * 1024, 64 * 1024);
    c.receive('m1', 'm2', 'm3', 'm4');
    await turns();
    // The first answer alone is over the bound: the other requests wait for the client to read it.
    expect(c.handled).toEqual(['m1']);
    expect(c.socket.unsent).toBeGreaterThan(100 * 1024);
    c.socket.sendAll();
    await turns();
    expect(c.handled).toEqual(['m1', 'm2']);
    c.socket.sendAll();
    await turns();
    c.socket.sendAll();
    await turns();
    expect(c.handled).toEqual(['m1', 'm2', 'm3', 'm4']);
    // Paced: the burst itself does not make a slow consumer (live frames meanwhile follow the usual rule).
    expect(c.client.open).toBe(true);
    expect(c.closes).toEqual([]);
  });

  it('a waiting message goes on at an uncork that finds the client back within its bound, though its socket never empties', async () => {
    const c = connection(100 * 1024, 64 * 1024);
    c.receive('m1', 'm2');
    await turns();
    expect(c.handled).toEqual(['m1']);
    // The client keeps up with live traffic but never reads everything: no drain comes.
    c.socket.sendAllBut(10 * 1024);
    c.client.send('a live frame');
    await turns();
    expect(c.handled).toEqual(['m1', 'm2']);
    expect(c.socket.listenerCount('drain') + c.socket.listenerCount('close')).toBe(0);
  });

  it('answers within the bound go out back to back: no wait below the bound or below the high-water mark', async () => {
    const under = connection(1024, 64 * 1024);
    under.receive('a', 'b', 'c');
    await turns();
    expect(under.handled).toEqual(['a', 'b', 'c']);
    // A bound below the socket's high-water mark: nothing says a drain will come, and what is unsent is small.
    const tiny = connection(4 * 1024, 2 * 1024);
    tiny.receive('a', 'b');
    await turns();
    expect(tiny.handled).toEqual(['a', 'b']);
  });

  it('a waiting message is not handled once the connection closed', async () => {
    const c = connection(100 * 1024, 64 * 1024);
    c.receive('m1', 'm2');
    await turns();
    expect(c.handled).toEqual(['m1']);
    c.ws.emit('close', 1006, Buffer.from(''));
    c.socket.emit('close');
    await turns();
    expect(c.handled).toEqual(['m1']);
    expect(c.socket.listenerCount('drain')).toBe(0);
  });
});

/** The text of a server frame as `Frame.encode` writes it (unmasked, final). */
function payloadOf(frame: Buffer): string {
  const head = frame[1] === 126 ? 4 : frame[1] === 127 ? 10 : 2;
  expect(Frame.encode(frame.subarray(head).toString()).equals(frame)).toBe(true);
  return frame.subarray(head).toString();
}

/**
 * A client session of `stream` on a hub with `room` places for new upstream topics and a key limit that grants
 * everything (`whileReserving` runs while a reservation is awaited): what the hub attached and detached, the
 * subscriptions it returned, what the client was sent, what the key holds.
 */
function onFakeHub(stream: PlatformStream, platform: string, room: { n: number }, whileReserving = () => {}) {
  const socket = new FakeSocket();
  const ws = new FakeWs(socket);
  const attached: string[] = [];
  const detached: string[] = [];
  const subs: Subscriber[] = [];
  let held = 0;
  const hub = {
    room: () => room.n,
    attach: (_client: unknown, _conn: unknown, channel: string, market: string, handle: unknown) => {
      attached.push(`${channel} ${market}`);
      const sub = { topic: { key: `${channel} ${market}`, channel, market }, handle } as unknown as Subscriber;
      subs.push(sub);
      return sub;
    },
    detach: (sub: { topic: { market: string } }) => detached.push(sub.topic.market),
  };
  const limits = {
    reserve: async (_conn: string, n: number) => {
      whileReserving();
      held += n;
      return true;
    },
    release: (_conn: string, n: number) => {
      held -= n;
    },
    close: () => undefined,
  };
  const client = new ClientConnection({
    id: 1,
    connId: 'c1',
    ws: ws as unknown as WebSocket,
    socket: socket as unknown as Duplex,
    platform,
    hub: hub as unknown as StreamHub,
    stream,
    keyId: 'k',
    maxSubscriptions: 100,
    limits: limits as unknown as KeyLimits,
    onlyChannel: undefined,
    maxBufferedBytes: 1 << 20,
    messagesPerSecond: 1000,
    metrics: new WsMetrics(new Registry()).forPlatform(platform),
    logger,
    onClosed: (_client, code, reason) => closes.push(`${code} ${reason}`),
  });
  const closes: string[] = [];
  const receive = async (message: unknown) => {
    ws.emit('message', Buffer.from(JSON.stringify(message)), false);
    await turns();
  };
  const receiveText = async (text: string) => {
    ws.emit('message', Buffer.from(text), false);
    await turns();
  };
  const sent = () => socket.written.map(payloadOf);
  return { client, receive, receiveText, sent, attached, detached, subs, closes, held: () => held };
}

describe('a client message carrying an API key', () => {
  const key = generateApiKey();
  const escaped = `\\u0064${key.slice(1)}`; // "\u0064g_…": the session's JSON.parse makes it the key
  const cases: [string, () => PlatformStream, string][] = [
    [
      'Polymarket US (a market slug)',
      () =>
        venueAUsStream.create({
          platform: { signer: undefined, feeds: { main: 'wss://example.invalid/v1/ws/markets' } },
        } as unknown as Parameters<typeof venueAUsStream.create>[0]) as unknown as PlatformStream,
      `{"subscribe":{"requestId":"md-1","subscriptionType":"SUBSCRIPTION_TYPE_MARKET_DATA","marketSlugs":["KEY"]}}`,
    ],
    [
      'Kalshi (a market ticker)',
      () => kalshiStream() as unknown as PlatformStream,
      `{"id":1,"cmd":"subscribe","params":{"channels":["orderbook_delta"],"market_tickers":["KEY"]}}`,
    ],
  ];
  for (const [name, stream, frame] of cases) {
    it(`${name}: is handled no further (nothing subscribed upstream, nothing quoted back) and the connection is closed 4400`, async () => {
      for (const spelling of [key, escaped]) {
        const c = onFakeHub(stream(), 'test', { n: 100 });
        // The same subscribe with a market's name reaches the hub: the key would have too.
        await c.receive(JSON.parse(frame.replace('KEY', 'a-market')));
        expect(c.attached).toHaveLength(1);
        c.attached.length = 0;
        await c.receiveText(frame.replace('KEY', spelling));
        expect([c.attached, c.sent().filter((m) => m.includes(key)), c.closes]).toEqual([
          [],
          [],
          ['4400 a message carries an API key; send the key in the handshake only'],
        ]);
      }
    });
  }
});

describe('Polymarket US: a subscription replaced by its requestId', () => {
  function pmUs(room: { n: number }) {
    const stream = venueAUsStream.create({
      platform: { signer: undefined, feeds: { main: 'wss://example.invalid/v1/ws/markets' } },
    } as unknown as Parameters<typeof venueAUsStream.create>[0]);
    const c = onFakeHub(stream as unknown as PlatformStream, 'venue-a-us', room);
    const subscribe = (requestId: string, slugs: string[]) =>
      c.receive({ subscribe: { requestId, subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: slugs } });
    return { ...c, subscribe };
  }

  it('refused for want of upstream room, the old subscription stays and nothing is taken from the key', async () => {
    const room = { n: 2 };
    const c = pmUs(room);
    await c.subscribe('md-1', ['a-market']);
    expect(c.attached).toEqual(['SUBSCRIPTION_TYPE_MARKET_DATA a-market']);
    expect([c.sent(), c.held()]).toEqual([[], 1]);
    // The gateway's upstream subscriptions are full: a replacement making new topics is refused.
    room.n = 1;
    await c.subscribe('md-1', ['a-market', 'b-market']);
    expect(c.sent()).toEqual([
      JSON.stringify({
        requestId: 'md-1',
        error: 'depthgate: the gateway holds as many upstream subscriptions of this platform as it may; retry later',
      }),
    ]);
    expect([c.detached, c.attached.length, c.held()]).toEqual([[], 1, 1]);
    // With room again the same replacement goes through: the old market is detached, both attached, one more place.
    room.n = 2;
    await c.subscribe('md-1', ['a-market', 'b-market']);
    expect(c.sent()).toHaveLength(1);
    expect(c.detached).toEqual(['a-market']);
    expect(c.attached.slice(1)).toEqual([
      'SUBSCRIPTION_TYPE_MARKET_DATA a-market',
      'SUBSCRIPTION_TYPE_MARKET_DATA b-market',
    ]);
    expect(c.held()).toBe(2);
  });
});

describe('Coinbase: subscriptions and the key’s places', () => {
  const coinbase = () =>
    venueDStream.create({
      platform: { credentials: {}, feeds: { main: 'wss://example.invalid' } },
    } as unknown as Parameters<typeof venueDStream.create>[0]) as unknown as PlatformStream;

  it('a subscription dropped while a subscribe naming it waits for its places is not attached again without one', async () => {
    let whileReserving = () => {};
    const c = onFakeHub(coinbase(), 'venue-d', { n: 100 }, () => whileReserving());
    await c.receive({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['level2'] });
    expect([c.attached, c.held()]).toEqual([['level2 BTC-USD'], 1]);
    // BTC-USD's book fails upstream while the next subscribe (BTC-USD again, and ETH-USD) waits for the key.
    whileReserving = () => c.client.dropped(c.subs[0] as Subscriber);
    await c.receive({ type: 'subscribe', product_ids: ['BTC-USD', 'ETH-USD'], channels: ['level2'] });
    // One place was reserved (ETH-USD's): one attached; the key holds what the connection holds.
    expect([c.attached, c.held()]).toEqual([['level2 BTC-USD', 'level2 ETH-USD'], 1]);
    expect(JSON.parse(c.sent().at(-1) as string)).toEqual({
      type: 'subscriptions',
      channels: [{ name: 'level2', product_ids: ['ETH-USD'] }],
    });
  });
});

/** Kalshi's stream, its sessions driven directly (no upstream is reached). */
const kalshiStream = () =>
  venueBStream.create({
    platform: { signer: undefined, feeds: { main: 'wss://example.invalid/trade-api/ws/v2' } },
  } as unknown as Parameters<typeof venueBStream.create>[0]);

describe('Kalshi: a command whose id cannot be echoed', () => {
  it('an id nested deeper than JSON.stringify can write is answered code 1 with id null, and the session goes on', async () => {
    const stream = kalshiStream();
    const sent: string[] = [];
    const ctx = {
      logger,
      onlyChannel: undefined,
      send: (text: unknown) => void sent.push(String(text)),
      close: () => undefined,
    } as unknown as ClientContext<unknown>;
    const session: ClientSession = stream.openClient(ctx);
    const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`; // fits a 64 KiB frame; JSON.parse takes it
    await session.onMessage(`{"id":${deep},"cmd":"list_subscriptions"}`);
    await session.onMessage(JSON.stringify({ id: 2, cmd: 'list_subscriptions' }));
    expect(sent.map((m) => JSON.parse(m) as unknown)).toEqual([
      { id: null, type: 'error', msg: { code: 1, msg: expect.any(String) } },
      { id: 2, type: 'ok', msg: [] },
    ]);
  });
});

describe('Kalshi: add_markets and the key’s places', () => {
  it('a subscription unsubscribed while add_markets waits for its places: they are given back, nothing is attached, the client is told the sid is unknown', async () => {
    const stream = kalshiStream();
    const sent: string[] = [];
    const attached: string[] = [];
    let held = 0;
    let whileReserving = () => {};
    const ctx: ClientContext<unknown> = {
      logger,
      onlyChannel: undefined,
      send: (text) => void sent.push(String(text)),
      close: () => undefined,
      reserve: async (n) => {
        whileReserving();
        held += n;
        return undefined;
      },
      attach: (channel, market, handle) => {
        attached.push(`${channel} ${market}`);
        return { topic: { key: `${channel} ${market}`, channel, market }, handle } as unknown as Subscriber;
      },
      detach: (subs, keep = 0) => {
        const n = [...subs].length;
        held -= n - Math.min(n, keep);
      },
      release: (n) => {
        held -= n;
      },
    };
    // The session driven directly: a client connection hands it one message at a time (an unsubscribe cannot come
    // between add_markets and its places there), so this is the only way into that turn of events.
    const session: ClientSession = stream.openClient(ctx);
    const receive = (m: unknown) => session.onMessage(JSON.stringify(m));
    await receive({ id: 1, cmd: 'subscribe', params: { channels: ['ticker'], market_tickers: ['KX-A'] } });
    expect([attached, held]).toEqual([['ticker KX-A'], 1]);
    whileReserving = () => void receive({ id: 3, cmd: 'unsubscribe', params: { sids: [1] } });
    await receive({
      id: 2,
      cmd: 'update_subscription',
      params: { sid: 1, action: 'add_markets', market_tickers: ['KX-B', 'KX-C'] },
    });
    expect([attached, held]).toEqual([['ticker KX-A'], 0]);
    expect(sent.map((m) => JSON.parse(m) as unknown).slice(1)).toEqual([
      { id: 3, sid: 1, seq: 1, type: 'unsubscribed' },
      { id: 2, type: 'error', msg: { code: 7, msg: expect.stringContaining('Unknown subscription ID') } },
    ]);
  });
});
