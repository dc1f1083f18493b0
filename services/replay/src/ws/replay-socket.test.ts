/**
 * A replay socket on a real WebSocket pair (the `ws` library on loopback), with the history stubbed: the catalogue
 * answers from a list of recorded tickers, and every other read (opening a window) is counted and refused. What is
 * checked here is the socket's own handling — its replies, its closes, its reads — not the replay's messages (the
 * integration tests replay real windows).
 */
import type net from 'node:net';
import { Writable } from 'node:stream';
import { generateApiKey, type Caller } from '@depthgate/auth';
import { QueryScope, type CatalogueSpan, type HistoryStore, type OrderBookQueries } from '@depthgate/history-store';
import { createLogger, createRegistry } from '@depthgate/service-kit';
import { waitFor } from '@depthgate/test-utils';
import { WebSocket, WebSocketServer } from 'ws';
import { PageWait, type PagedWindow, type RecordedDelta, type RecordedTrade, type WindowPage } from '../engine';
import { ReplayMetrics } from '../metrics';
import type { MarketStream, ReplayProtocol, VenueSocket } from './protocol';
import { clobSocket } from './protocols/clob';
import { coinbaseSocket } from './protocols/coinbase';
import { geminiSocket } from './protocols/gemini';
import { kalshiSocket } from './protocols/kalshi';
import { pmUsSocket } from './protocols/polymarket-us';
import { marketReplay, ReplaySocket } from './replay-socket';
import { Session, type SessionMember, type SessionStream, type SessionTerms } from './session';

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 3, 1);

/** A logger whose lines are kept in `into`. */
const capture = (into: Array<{ level: number; msg: string }>) =>
  createLogger({
    name: 't',
    level: 'debug',
    destination: new Writable({
      write: (chunk: Buffer, _e, cb) => {
        for (const line of String(chunk).split('\n').filter(Boolean)) into.push(JSON.parse(line));
        cb();
      },
    }),
  });

const quiet = () =>
  createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

/** A key that sees every ticker from the start of history, but those starting `bbb` only for the last day. */
const keyCaller: Caller = {
  kind: 'key',
  key: {
    id: 'k1',
    name: 'test',
    tickerPrefixes: null,
    fullHistoryPrefixes: ['aaa'],
    maxDataAgeDays: 1,
    requestsPerMinute: null,
    platforms: null,
  },
};

interface Pair {
  client: WebSocket;
  server: WebSocket;
  /** The history's scopes opened (one per subscribe resolved, one per replay started). */
  scopes: number;
  /** Catalogue lookups, and the other reads (windows) asked for. */
  catalogue: number;
  reads: string[];
  /** The socket's places held in its caller's subscription limit (`max`). */
  places: number;
  /** The client's raw socket (paused: the client reads nothing more). */
  raw: net.Socket;
  /** The server's replay socket. */
  socket: ReplaySocket;
}

const servers: WebSocketServer[] = [];
const clients: WebSocket[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.terminate();
  for (const s of servers.splice(0)) {
    for (const ws of s.clients) ws.terminate();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A replay socket of `venue` on a fresh server, its client connected. */
async function pair(
  o: {
    venue?: VenueSocket;
    caller?: Caller;
    recorded?: string[];
    settleMs?: number;
    terms?: Partial<SessionTerms>;
    /** The caller's subscription limit. */
    max?: number;
    /** The wall clock (default: NOW, standing still). */
    now?: () => number;
    /** REPLAY_WS_WRITE_TIMEOUT_MS (default 60 s). */
    writeTimeoutMs?: number;
    /** The catalogue answers only when its scope is aborted (then fails as a cancelled read does). */
    catalogueHangs?: boolean;
    /** Where the socket's log lines go (default: nowhere). */
    logged?: Array<{ level: number; msg: string }>;
  } = {},
): Promise<Pair> {
  const recorded = o.recorded ?? [];
  const terms: SessionTerms = { from: NOW - 2 * DAY_MS, to: NOW, speed: 'max', clock: 'ts', ...o.terms };
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, maxPayload: 64 * 1024 });
  servers.push(wss);
  await new Promise((resolve) => wss.once('listening', resolve));
  const p = { scopes: 0, catalogue: 0, reads: [] as string[], places: 0 } as Pair;
  const max = o.max ?? Infinity;
  const spans = (ticker: string): CatalogueSpan[] =>
    recorded
      .filter((t) => t.toLowerCase() === ticker.toLowerCase())
      .map((t) => ({ ticker: t, kind: 'snapshot', firstTs: 0, lastTs: NOW, rows: 1 }));
  const queries = new Proxy(
    {
      catalogue: (_scope: unknown, _exchange: unknown, ticker: string) => {
        p.catalogue++;
        return Promise.resolve(spans(ticker));
      },
      catalogues: (scope: QueryScope, _exchange: unknown, tickers: string[]) => {
        p.catalogue++;
        if (o.catalogueHangs) {
          return new Promise((_resolve, reject) =>
            scope.signal.addEventListener('abort', () => reject(new Error('query cancelled'))),
          );
        }
        return Promise.resolve(tickers.flatMap(spans));
      },
    },
    {
      get(target, name: string) {
        if (name in target) return target[name as keyof typeof target];
        return () => {
          p.reads.push(name);
          return Promise.reject(new Error('no window in this test'));
        };
      },
    },
  ) as unknown as OrderBookQueries;
  const store = {
    scope: (budgetMs: number, options: { answerStarted?: () => boolean } = {}) => {
      p.scopes++;
      return new QueryScope(() => Promise.resolve(), budgetMs, options.answerStarted);
    },
  } as unknown as HistoryStore;
  const settleMs = o.settleMs ?? 0;
  wss.on('connection', (ws) => {
    ws.on('error', () => undefined);
    p.server = ws;
    p.socket = new ReplaySocket({
      ws,
      venue: o.venue ?? clobSocket,
      caller: o.caller ?? keyCaller,
      places: {
        reserve: (n) => {
          if (p.places + n > max) return Promise.resolve(`subscription limit reached: at most ${max}`);
          p.places += n;
          return Promise.resolve(undefined);
        },
        release: (n) => void (p.places -= n),
      },
      session: new Session(terms, settleMs, () => undefined),
      terms,
      store,
      queries,
      metrics: new ReplayMetrics(createRegistry('replay-test', { defaultMetrics: false })),
      logger: o.logged ? capture(o.logged) : quiet(),
      queryTimeoutMs: 5000,
      pageRows: 1000,
      settleMs,
      subscribeTimeoutMs: 60_000,
      // Not what these tests look at (ws-robustness.int.test.ts closes a flood with 4429).
      messagesPerSecond: 100_000,
      writeTimeoutMs: o.writeTimeoutMs ?? 60_000,
      acceptedAt: (o.now ?? (() => NOW))(),
    });
  });
  const { port } = wss.address() as net.AddressInfo;
  const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
  clients.push(client);
  client.on('error', () => undefined);
  await new Promise((resolve, reject) => {
    client.once('open', resolve);
    client.once('error', reject);
  });
  await waitFor(() => p.server !== undefined, { what: 'the server side' });
  p.client = client;
  p.raw = (client as unknown as { _socket: net.Socket })._socket;
  return p;
}

/** Sends frames in one write (the server reads them together, in one turn). */
function sendTogether(p: Pair, frames: string[]): void {
  p.raw.cork();
  for (const f of frames) p.client.send(f);
  p.raw.uncork();
}

describe('ReplaySocket', () => {
  it('a client gone while its markets are looked up is no failure: nothing logged at warn', async () => {
    const logged: Array<{ level: number; msg: string }> = [];
    const p = await pair({ venue: kalshiSocket, recorded: ['aaa1'], catalogueHangs: true, logged });
    p.client.send(
      JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_ticker: 'aaa1' } }),
    );
    await waitFor(() => p.catalogue === 1, { what: 'the lookup to start' });
    const closed = new Promise((resolve) => p.server.once('close', resolve));
    p.client.close();
    await closed;
    // The lookup, cancelled with the socket, has failed by now (its rejection comes from the close's abort).
    await new Promise((resolve) => setImmediate(resolve));
    expect(logged.filter((l) => l.level >= 40)).toEqual([]);
    expect(logged.map((l) => l.msg)).toContain('WebSocket replay ended with its socket: its reads cancelled');
  });

  it('closes 4009 a socket whose client reads nothing of what waits for REPLAY_WS_WRITE_TIMEOUT_MS', async () => {
    const p = await pair({ venue: kalshiSocket, writeTimeoutMs: 200 });
    p.raw.pause();
    // More than the loopback's buffers hold: what the client does not read stays in the server's socket.
    const big = 'x'.repeat(8 * 1024 * 1024);
    let waited: number | Promise<number> = 0;
    for (let i = 0; i < 8 && !(waited instanceof Promise); i++) waited = p.socket.send(big);
    expect(waited).toBeInstanceOf(Promise);
    await waited;
    // Closed by the server, not by the client (which has read nothing); the session goes on without it.
    expect(p.server.readyState).toBe(WebSocket.CLOSING);
    expect(p.socket.gone()).toBe(true);
    const closed = new Promise<[number, string]>((resolve) =>
      p.client.once('close', (code, reason) => resolve([code, String(reason)])),
    );
    p.raw.resume();
    expect(await closed).toEqual([4009, 'slow consumer: nothing read for too long']);
  });

  it('a CLOB subscribe closed 1008 (its window starts before the caller’s) leaves nothing armed: no replay starts', async () => {
    const p = await pair({ venue: clobSocket, recorded: ['aaa1', 'bbb1'], settleMs: 0 });
    // The first asset is accepted and arms the replay's start (settle time 0); the second's window starts before the
    // caller's (bbb: the last day only): the socket is closed 1008.
    sendTogether(p, [
      JSON.stringify({ assets_ids: ['aaa1'], type: 'market' }),
      JSON.stringify({ assets_ids: ['bbb1'], operation: 'subscribe' }),
    ]);
    // The client reads nothing more: the close is not answered, so the server's socket stays closing.
    p.raw.pause();
    await waitFor(() => p.server.readyState === WebSocket.CLOSING, { what: 'the server to close the socket' });
    // A timer armed after the settle timer (0 ms) fires after it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Two subscribes resolved; no replay started (it would open a scope and read the window).
    expect(p.catalogue).toBe(2);
    expect({ scopes: p.scopes, reads: p.reads }).toEqual({ scopes: 2, reads: [] });
    // The close the client gets once it reads again.
    const closed = new Promise<[number, string]>((resolve) =>
      p.client.once('close', (code, reason) => resolve([code, String(reason)])),
    );
    p.raw.resume();
    expect(await closed).toEqual([1008, expect.stringMatching(/^from is before the start of your window, /)]);
  });

  it('computes an anonymous caller’s day once, when the socket is accepted: a window valid then is not refused as time passes', async () => {
    let now = NOW;
    const anonymous: Caller = { kind: 'anonymous', ip: '127.0.0.1' };
    // The window starts a second inside the anonymous day as it was when the socket was accepted.
    const from = NOW - DAY_MS + 1000;
    const p = await pair({ venue: clobSocket, caller: anonymous, recorded: ['aaa1'], terms: { from }, now: () => now });
    // The client subscribes five seconds later (a library that waits, a slow network).
    now = NOW + 5000;
    const closed = new Promise<[number, string]>((resolve) =>
      p.client.once('close', (code, reason) => resolve([code, String(reason)])),
    );
    p.client.send(JSON.stringify({ assets_ids: ['aaa1'], type: 'market' }));
    // The replay starts: its window is read (refused by this test's history: the socket then closes 1011 'replay
    // failed'), not a close 1008 'from is before the start of your window'.
    expect(await closed).toEqual([1011, 'replay failed']);
    expect(p.reads.length).toBeGreaterThan(0);
  });

  it('replies to frames a client sends but never reads stop at the high-water mark: the socket stops reading', async () => {
    const p = await pair({ venue: kalshiSocket });
    // The peak of what the server holds unsent, right after each of its sends.
    let peak = 0;
    const send = p.server.send.bind(p.server) as (data: string, cb?: (err?: Error) => void) => void;
    (p.server as unknown as { send: typeof send }).send = (data, cb) => {
      send(data, cb);
      peak = Math.max(peak, p.server.bufferedAmount);
    };
    let received = 0;
    p.server.on('message', () => received++);
    // Each frame is an unknown command whose error echoes its 60 KB id: 500 of them ask for 30 MB of replies, far
    // more than the kernel's buffers on both sides hold.
    const FRAMES = 500;
    const id = 'i'.repeat(60_000);
    p.raw.pause();
    for (let i = 0; i < FRAMES; i++) p.client.send(JSON.stringify({ id: `${i}:${id}`, cmd: 'x' }));
    // Either every frame was taken (and answered into memory), or the server stopped reading.
    await waitFor(() => received === FRAMES || p.server.isPaused, { timeoutMs: 30_000, what: 'the server to stop' });
    expect(received).toBeLessThan(FRAMES);
    // Once the client reads, every frame is answered, in order.
    const replies: number[] = [];
    p.client.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id: string; msg: { code: number } };
      replies.push(m.msg.code === 5 ? Number(m.id.slice(0, m.id.indexOf(':'))) : -1);
    });
    p.raw.resume();
    await waitFor(() => replies.length === FRAMES, { timeoutMs: 30_000, what: 'every reply' });
    expect(replies).toEqual([...Array(FRAMES).keys()]);
    // At most the high-water mark (1 MiB) and the reply that crossed it were ever held.
    expect(peak).toBeLessThanOrEqual(1024 * 1024 + 61_000);
  }, 60_000);

  it('a frame carrying an API key closes the socket 4400 before anything of it is looked up or quoted back (text, escaped, binary)', async () => {
    const key = generateApiKey();
    const escaped = `\\u0064${key.slice(1)}`;
    const frames: [string, boolean][] = [
      // Kalshi quotes an unknown market, and an unknown command's id, back in its error.
      [
        JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_ticker: key } }),
        false,
      ],
      [`{"id":"${escaped}","cmd":"x"}`, false],
      [JSON.stringify({ id: key, cmd: 'x' }), true],
    ];
    for (const [frame, binary] of frames) {
      const p = await pair({ venue: kalshiSocket, recorded: ['aaa1'] });
      // The first thing the client gets: the close, or a reply (which would quote the key).
      const first = new Promise<[number | string, string]>((resolve) => {
        p.client.once('close', (code, reason) => resolve([code, String(reason)]));
        p.client.once('message', (data) => resolve(['reply', String(data)]));
      });
      p.client.send(frame, { binary });
      expect([frame, await first]).toEqual([
        frame,
        [4400, 'a message carries an API key; send the key in the handshake only'],
      ]);
      expect({ catalogue: p.catalogue, scopes: p.scopes }).toEqual({ catalogue: 0, scopes: 0 });
    }
  });

  it('a CLOB subscribe of 5,000 asset ids is refused before any lookup', async () => {
    const p = await pair({ venue: clobSocket, recorded: ['aaa1'] });
    const replies: string[] = [];
    p.client.on('message', (data) => replies.push(String(data)));
    p.client.send(JSON.stringify({ assets_ids: [...Array(5000).keys()].map((i) => `x${i}`), type: 'market' }));
    await waitFor(() => replies.length === 1 || p.catalogue >= 5000, { what: 'the refusal' });
    expect(p.catalogue).toBe(0);
    expect(replies.map((r) => JSON.parse(r) as unknown)).toEqual([
      {
        event_type: 'depthgate_error',
        error: 'subscription_limit',
        message: 'depthgate: at most 500 assets per subscribe',
      },
    ]);
  });

  it('a subscribe’s markets are looked up in one catalogue query (a CLOB frame of 500 assets, one recorded)', async () => {
    // (No replay starts meanwhile: the settle time is long.)
    const p = await pair({ venue: clobSocket, recorded: ['aaa1'], settleMs: 60_000 });
    const replies: string[] = [];
    p.client.on('message', (data) => replies.push(String(data)));
    p.client.send(
      JSON.stringify({ assets_ids: [...[...Array(499).keys()].map((i) => `x${i}`), 'AAA1'], type: 'market' }),
    );
    // The next frame is handled once that subscribe is done.
    p.client.send('PING');
    await waitFor(() => replies.length === 1, { what: 'the pong' });
    expect(replies).toEqual(['PONG']);
    expect(p.catalogue).toBe(1);
  });

  it('every venue refuses a subscribe of more than 500 markets in its own form, before any lookup', async () => {
    const names = [...Array(501).keys()].map((i) => `m${i}`);
    const cases: [VenueSocket, string, unknown][] = [
      [
        kalshiSocket,
        JSON.stringify({ id: 7, cmd: 'subscribe', params: { channels: ['trade'], market_tickers: names } }),
        { id: 7, type: 'error', msg: { code: 11, msg: 'Invalid parameter: at most 500 markets per command' } },
      ],
      [
        geminiSocket,
        JSON.stringify({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: names }] }),
        {
          type: 'error',
          result: 'error',
          reason: 'SubscriptionLimit',
          message: 'depthgate: at most 500 symbols per subscribe',
        },
      ],
      [
        coinbaseSocket,
        JSON.stringify({ type: 'subscribe', product_ids: names, channels: ['level2'] }),
        { type: 'error', message: 'Failed to subscribe', reason: 'depthgate: at most 500 products per subscribe' },
      ],
    ];
    for (const [venue, frame, refusal] of cases) {
      const p = await pair({ venue });
      const replies: unknown[] = [];
      p.client.on('message', (data) => replies.push(JSON.parse(String(data))));
      p.client.send(frame);
      await waitFor(() => replies.length === 1, { what: `${venue.name}'s refusal` });
      expect(replies).toEqual([refusal]);
      expect(p.catalogue).toBe(0);
    }
  });

  it('takes a subscribe’s subscriptions from the caller’s limit, refused in the venue’s form; an unsubscribe gives them back', async () => {
    const p = await pair({ venue: clobSocket, recorded: ['aaa1', 'aaa2', 'aaa3'], settleMs: 60_000, max: 2 });
    const replies: string[] = [];
    p.client.on('message', (data) => replies.push(String(data)));
    /** Sends frames, then PING: resolves once all were handled (the PONG). */
    const handled = async (...frames: unknown[]) => {
      const before = replies.filter((r) => r === 'PONG').length;
      for (const f of frames) p.client.send(JSON.stringify(f));
      p.client.send('PING');
      await waitFor(() => replies.filter((r) => r === 'PONG').length > before, { what: 'the frames to be handled' });
    };
    await handled({ assets_ids: ['aaa1', 'aaa2'], type: 'market' });
    expect(p.places).toBe(2);
    await handled({ assets_ids: ['aaa3'], operation: 'subscribe' });
    expect(p.places).toBe(2);
    expect(JSON.parse(replies.at(-2) as string)).toEqual({
      event_type: 'depthgate_error',
      error: 'subscription_limit',
      message: 'depthgate: subscription limit reached: at most 2',
    });
    // Assets already held take nothing more.
    await handled({ assets_ids: ['aaa1'], operation: 'subscribe' });
    expect(p.places).toBe(2);
    await handled({ assets_ids: ['aaa1'], operation: 'unsubscribe' }, { assets_ids: ['aaa3'], operation: 'subscribe' });
    expect(p.places).toBe(2);
    expect(replies.filter((r) => r !== 'PONG')).toHaveLength(1);
  });
});

/** A market's window: a book at 0, then one page (read after a turn of the loop) of `rows` changes and a trade. */
function bigWindow(rows: number): { window: PagedWindow; asked: () => number } {
  const deltas: RecordedDelta[] = Array.from({ length: rows }, (_, i) => ({
    ts: 1 + i,
    sequence: 1 + i,
    side: 'bid',
    price: '0.40',
    quantity_delta: i % 2 === 0 ? '1' : '-1',
  }));
  const trade = { ts: rows + 1, sequence: rows + 1, trade_id: 't1', price: '0.40', size: '1', side: 'buy' as const };
  const page: WindowPage = { deltas, trades: [{ ...trade, venue_side: '' }], gaps: [], until: Infinity };
  let asked = 0;
  return {
    window: {
      ticker: 'T',
      start: { ts: 0, book: { bids: [['0.40', '10']], asks: [['0.60', '10']] } },
      opening: { ts: 0, received_ts: 0 },
      nextPage: () => {
        asked++;
        return new Promise((resolve) => setImmediate(() => resolve(page)));
      },
    },
    asked: () => asked,
  };
}

/** A market's window in one page: a book at 0, then a change of its bid at each of `times`, a trade at each of `trades`. */
function smallWindow(ticker: string, times: number[], tradeTimes: number[] = []): PagedWindow {
  const deltas: RecordedDelta[] = times.map((ts, i) => ({
    ts,
    sequence: 1 + i,
    side: 'bid',
    price: '0.40',
    quantity_delta: '1',
  }));
  const trades: RecordedTrade[] = tradeTimes.map((ts, i) => ({
    ts,
    sequence: 1000 + i,
    trade_id: `t${i}`,
    price: '0.40',
    size: '1',
    side: 'buy',
    venue_side: 'buy',
  }));
  const page: WindowPage = { deltas, trades, gaps: [], until: Infinity };
  return {
    ticker,
    start: { ts: 0, book: { bids: [['0.40', '10']], asks: [['0.60', '10']] } },
    opening: { ts: 0, received_ts: 0 },
    nextPage: () => page,
  };
}

/** Plays `streams` in a session of one member at speed `max`, each message handed to `onSend`; settles at the end. */
function played(streams: SessionStream[], onSend: (text: string) => void): Promise<void> {
  const terms: SessionTerms = { from: 0, to: Number.MAX_SAFE_INTEGER, speed: 'max', clock: 'ts' };
  return new Promise<void>((resolve) => {
    const member: SessionMember = {
      send: (text) => (onSend(text), text.length),
      cork: () => undefined,
      uncork: () => undefined,
      gone: () => false,
      finished: () => resolve(),
      failed: () => resolve(),
    };
    const session = new Session(terms, 0, () => undefined);
    session.join(member, terms);
    session.ready(member, streams);
  });
}

/**
 * A socket of `venue` subscribed by `frames` (before the start) to markets A (a change at 1, a trade at 3) and B
 * (changes at 2 and 4), played in a session of one; `onSend` gets each message sent and the socket's protocol.
 */
async function twoMarketsPlayed(
  venue: VenueSocket,
  frames: unknown[],
  onSend: (text: string, p: ReplayProtocol) => void,
): Promise<void> {
  const p = venue.create();
  for (const m of frames) {
    const f = p.frame(JSON.stringify(m), false, false);
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    p.accept(f.request, f.request.tickers);
  }
  const [a, b] = p.streams() as [MarketStream, MarketStream];
  expect([a.ticker, b.ticker]).toEqual(['A', 'B']);
  const streams = [marketReplay(smallWindow('A', [1], [3]), a), marketReplay(smallWindow('B', [2, 4]), b)];
  await played(streams, (text) => onSend(text, p));
}

describe('marketReplay', () => {
  it('plays rows that give nothing (a Kalshi trade subscription over 10,000 book changes) over many turns of the event loop', async () => {
    const p = kalshiSocket.create();
    const f = p.frame(
      JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['trade'], market_ticker: 'T' } }),
      false,
      false,
    );
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    p.accept(f.request, ['T']);
    const [stream] = p.streams();
    // The event loop's turns, counted by a callback that queues itself for the next one.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const sent: { text: string; turn: number }[] = [];
    const start = turns;
    await played([marketReplay(bigWindow(10_000).window, stream as MarketStream)], (text) =>
      sent.push({ text, turn: turns }),
    );
    ticking = false;
    // Only the trade is sent; the 10,000 changes before it took a turn of the loop every 1,000 rows at most.
    expect(sent.map((m) => (JSON.parse(m.text) as { type: string }).type)).toEqual(['trade']);
    expect((sent[0] as { turn: number }).turn - start).toBeGreaterThanOrEqual(10);
  });

  it('sends nothing of a market after its unsubscribe, not even the message read ahead of it (CLOB assets)', async () => {
    const p = clobSocket.create();
    const f = p.frame(JSON.stringify({ assets_ids: ['A', 'B'], type: 'market' }), false, false);
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    p.accept(f.request, ['A', 'B']);
    const [a, b] = p.streams() as [MarketStream, MarketStream];
    const sent: string[] = [];
    await played([marketReplay(smallWindow('A', [1, 3]), a), marketReplay(smallWindow('B', [2, 4]), b)], (text) => {
      const m = JSON.parse(text) as { event_type: string; asset_id?: string; price_changes?: { asset_id: string }[] };
      sent.push(`${m.event_type} ${m.asset_id ?? m.price_changes?.[0]?.asset_id}`);
      // The client unsubscribes A when B's book arrives: A's change (at 1) is then the merge's next message of A,
      // read ahead while B's book (at 0) went first.
      if (m.event_type === 'book' && m.asset_id === 'B')
        p.frame(JSON.stringify({ assets_ids: ['A'], operation: 'unsubscribe' }), false, true);
    });
    expect(sent).toEqual(['book A', 'book B', 'price_change B', 'price_change B']);
  });

  it('sends nothing of a channel after its unsubscribe, not even the message read ahead of it, and the rest of the market goes on (Coinbase level2, matches kept)', async () => {
    const sent: string[] = [];
    await twoMarketsPlayed(
      coinbaseSocket,
      [
        { type: 'subscribe', product_ids: ['A', 'B'], channels: ['level2'] },
        { type: 'subscribe', product_ids: ['A'], channels: ['matches'] },
      ],
      (text, p) => {
        const m = JSON.parse(text) as { type: string; product_id: string };
        sent.push(`${m.type} ${m.product_id}`);
        // The client drops A's level2 (keeping its matches) when B's snapshot arrives: A's l2update (at 1) is then
        // the merge's next message of A, read ahead while B's snapshot (at 0) went first.
        if (m.type === 'snapshot' && m.product_id === 'B')
          p.frame(JSON.stringify({ type: 'unsubscribe', product_ids: ['A'], channels: ['level2'] }), false, true);
      },
    );
    expect(sent).toEqual(['snapshot A', 'snapshot B', 'l2update B', 'match A', 'l2update B']);
  });

  it('sends nothing of a subscription after its unsubscribe, not even the message read ahead of it, and the market’s others go on (Polymarket US)', async () => {
    const sent: string[] = [];
    const subscribe = (requestId: string, subscriptionType: string, slug: string) => ({
      subscribe: { requestId, subscriptionType, marketSlugs: [slug] },
    });
    await twoMarketsPlayed(
      pmUsSocket,
      [
        subscribe('mdA', 'SUBSCRIPTION_TYPE_MARKET_DATA', 'A'),
        subscribe('mdB', 'SUBSCRIPTION_TYPE_MARKET_DATA', 'B'),
        subscribe('trA', 'SUBSCRIPTION_TYPE_TRADE', 'A'),
      ],
      (text, p) => {
        sent.push((JSON.parse(text) as { requestId: string }).requestId);
        // The client ends mdA (A's book; its trades stay on trA) when B's first book arrives: A's book at 1 is then
        // the merge's next message of A, read ahead while B's book (at 0) went first.
        if (sent.length === 2) p.frame(JSON.stringify({ unsubscribe: { requestId: 'mdA' } }), false, true);
      },
    );
    expect(sent).toEqual(['mdA', 'mdB', 'mdB', 'trA', 'mdB']);
  });

  it('sends nothing of a subscription after its unsubscribe, not even the message read ahead of it, and the market’s others go on (Kalshi sids)', async () => {
    const sent: string[] = [];
    const replies: unknown[] = [];
    const subscribe = (id: number, channel: string, market: string) => ({
      id,
      cmd: 'subscribe',
      params: { channels: [channel], market_ticker: market },
    });
    await twoMarketsPlayed(
      kalshiSocket,
      [subscribe(1, 'orderbook_delta', 'A'), subscribe(2, 'orderbook_delta', 'B'), subscribe(3, 'trade', 'A')],
      (text, p) => {
        const m = JSON.parse(text) as { type: string; sid: number; seq?: number };
        sent.push(`${m.type} ${m.sid}${m.seq === undefined ? '' : `/${m.seq}`}`);
        // The client ends sid 1 (A's book; its trades stay on sid 3) when B's snapshot arrives: A's delta at 1 is then
        // the merge's next message of A, read ahead while B's snapshot (at 0) went first.
        if (m.type === 'orderbook_snapshot' && m.sid === 2) {
          const f = p.frame(JSON.stringify({ id: 4, cmd: 'unsubscribe', params: { sids: [1] } }), false, true);
          if (f.kind === 'reply') replies.push(...f.texts.map((t) => JSON.parse(t) as unknown));
        }
      },
    );
    expect(sent).toEqual([
      'orderbook_snapshot 1/1',
      'orderbook_snapshot 2/1',
      'orderbook_delta 2/2',
      'trade 3',
      'orderbook_delta 2/3',
    ]);
    // Its seq follows the last message sent on it (the one read ahead was never numbered).
    expect(replies).toEqual([{ id: 4, sid: 1, seq: 2, type: 'unsubscribed' }]);
  });

  it('no longer reads a market unsubscribed after the start (a CLOB asset)', async () => {
    const p = clobSocket.create();
    const f = p.frame(JSON.stringify({ assets_ids: ['T'], type: 'market' }), false, false);
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    p.accept(f.request, ['T']);
    const [stream] = p.streams();
    const { window, asked } = bigWindow(10_000);
    const { messages } = marketReplay(window, stream as MarketStream);
    // The book at the start, then the page being read.
    const first = messages.next();
    expect(first.done === false && !(first.value instanceof PageWait) && JSON.parse(first.value.text)).toMatchObject({
      event_type: 'book',
    });
    expect(p.frame(JSON.stringify({ assets_ids: ['T'], operation: 'unsubscribe' }), false, true)).toEqual({
      kind: 'reply',
      texts: [],
    });
    expect(messages.next()).toEqual({ done: true, value: undefined });
    expect(asked()).toBeLessThanOrEqual(1);
  });
});
