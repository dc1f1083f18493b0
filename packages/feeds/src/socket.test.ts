import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { FeedSocket, type FeedLogger } from './socket';

const quiet: FeedLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A feed server that records what each connection receives and can be told to go silent. */
async function server() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  const connections: { ws: WebSocket; received: string[]; headers: Record<string, unknown> }[] = [];
  wss.on('connection', (ws, req) => {
    const c = { ws, received: [] as string[], headers: req.headers };
    connections.push(c);
    ws.on('message', (d) => c.received.push(String(d)));
  });
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, connections, close: () => wss.close() };
}

const until = async (f: () => boolean, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

type Cause = 'd' | 's' | 'u';

/** A socket on `url` with the tests' usual options (no pings, quick reconnects); `o` overrides them. */
function feedSocket(url: string, o: Partial<ConstructorParameters<typeof FeedSocket<Cause>>[0]>): FeedSocket<Cause> {
  return new FeedSocket<Cause>({
    logger: quiet,
    handshake: () => ({ url }),
    stallMs: 10_000,
    pingMs: 0,
    reconnectMinMs: 10,
    reconnectMaxMs: 20,
    causes: { disconnect: 'd', stall: 's', unusable: 'u' },
    onOpen: () => undefined,
    onMessage: () => undefined,
    onClose: () => undefined,
    ...o,
  });
}

describe('FeedSocket', () => {
  it('replaces a connection whose feed went silent, with fresh handshake headers, and keeps alive by text', async () => {
    const s = await server();
    const closes: string[] = [];
    let opens = 0;
    let n = 0;
    const socket = new FeedSocket<'gone' | 'quiet' | 'bad'>({
      logger: quiet,
      handshake: () => ({ url: s.url, headers: { 'x-attempt': String(++n) } }),
      stallMs: 300,
      pingMs: 50,
      keepAliveText: 'PING',
      reconnectMinMs: 20,
      reconnectMaxMs: 40,
      causes: { disconnect: 'gone', stall: 'quiet', unusable: 'bad' },
      onOpen: () => opens++,
      onMessage: (text) => {
        if (text === 'boom') throw new Error('unusable');
      },
      onClose: (e) => closes.push(e.cause),
    });
    socket.start();
    await until(() => (s.connections[0]?.received.length ?? 0) >= 2, 'keep-alives');
    expect(new Set(s.connections[0]?.received)).toEqual(new Set(['PING']));
    // The server sends nothing by itself: the socket decides the feed stalled and connects again.
    await until(() => closes.length === 1 && opens === 2, 'a replacement');
    expect(closes).toEqual(['quiet']);
    expect(s.connections[1]?.headers['x-attempt']).toBe('2');
    s.connections[1]?.ws.send('boom');
    await until(() => closes.length === 2, 'the unusable message to end the connection');
    await until(() => s.connections.length === 3, 'a third connection');
    s.connections[2]?.ws.terminate();
    await until(() => closes.length === 3, 'the disconnect');
    expect(closes).toEqual(['quiet', 'bad', 'gone']);
    await socket.stop();
    await s.close();
  });

  it('retries a handshake that cannot be built, and stops for good', async () => {
    const s = await server();
    let calls = 0;
    const socket = feedSocket(s.url, {
      handshake: () => {
        if (++calls < 3) throw new Error('no signature yet');
        return { url: s.url };
      },
    });
    socket.start();
    await until(() => socket.isOpen, 'the third attempt to connect');
    expect(calls).toBe(3);
    await socket.stop();
    expect(socket.isOpen).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    expect(s.connections).toHaveLength(1);
    await s.close();
  });

  it('a URL the WebSocket library refuses is logged, reported as a failed attempt and retried, never an unhandled rejection', async () => {
    const s = await server();
    const errors: string[] = [];
    const closes: { cause: Cause; wasOpen: boolean }[] = [];
    let calls = 0;
    const socket = feedSocket(s.url, {
      logger: { ...quiet, error: (_o, msg) => errors.push(msg) },
      onClose: ({ cause, wasOpen }) => closes.push({ cause, wasOpen }),
      // A fragment, then a scheme `ws` does not take, then the feed.
      handshake: () => ({ url: [`${s.url}/v2#frag`, 'ftp://127.0.0.1/'][calls++] ?? s.url }),
    });
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      socket.start();
      await until(() => socket.isOpen, 'the third attempt to connect');
      expect(calls).toBe(3);
      expect(errors).toEqual(Array(2).fill('cannot open a feed connection (its handshake or URL)'));
      // Its owner hears of each, as of an attempt the feed refused.
      expect(closes).toEqual(Array(2).fill({ cause: 'd', wasOpen: false }));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      await socket.stop();
      await s.close();
    }
  });

  it('holds messages the owner does not admit, in order, and hands them over when it does', async () => {
    const s = await server();
    const got: string[] = [];
    let budget = 3;
    const socket = feedSocket(s.url, {
      admit: () => budget > 0,
      onMessage: (text) => {
        budget--;
        got.push(text);
      },
    });
    socket.start();
    await until(() => s.connections.length === 1 && socket.isOpen, 'the connection');
    // One read holding many messages: three are admitted, the rest wait.
    for (let i = 0; i < 10; i++) s.connections[0]?.ws.send(`m${i}`);
    await until(() => got.length === 3, 'the admitted messages');
    await new Promise((r) => setTimeout(r, 30));
    expect(got).toEqual(['m0', 'm1', 'm2']);
    budget = 100;
    await until(() => got.length === 10, 'the held messages');
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
    // Reading resumed: later messages come through.
    s.connections[0]?.ws.send('after');
    await until(() => got.length === 11, 'a message after the hold');
    // Held messages of a connection that ends go with it.
    budget = 0;
    s.connections[0]?.ws.send('lost');
    await new Promise((r) => setTimeout(r, 30));
    s.connections[0]?.ws.terminate();
    await until(() => s.connections.length === 2 && socket.isOpen, 'the next connection');
    budget = 100;
    s.connections[1]?.ws.send('fresh');
    await until(() => got.length === 12, "the next connection's message");
    expect(got.at(-1)).toBe('fresh');
    await socket.stop();
    await s.close();
  });

  it('does not count its own pause as the feed’s silence, and still finds a silent feed after it', async () => {
    const s = await server();
    const closes: string[] = [];
    const socket = feedSocket(s.url, { stallMs: 300, onClose: (e) => closes.push(e.cause) });
    socket.start();
    await until(() => s.connections.length === 1 && socket.isOpen, 'the connection');
    // The feed sends every 20 ms, all along.
    const feed = setInterval(() => s.connections[0]?.ws.send('tick'), 20);
    try {
      await until(() => socket.heardAt > 0, 'a frame');
      // The process is away for more than the stall threshold (a busy loop, as a long pause or a starved CPU would be):
      // when it comes back, its timers run before any frame is read. (The feed's sender shares the process here, so
      // it is away too: the check after the pause must not count that time as the feed's silence.)
      await new Promise<void>((resolve) =>
        setTimeout(() => {
          const end = Date.now() + 800;
          while (Date.now() < end) {
            /* away */
          }
          resolve();
        }, 0),
      );
      const back = Date.now();
      await until(() => socket.heardAt > back, 'a frame after the pause');
      expect(closes).toEqual([]);
      expect(s.connections).toHaveLength(1);
      // A feed that goes silent is still found.
      clearInterval(feed);
      await until(() => closes.length === 1, 'the stall');
      expect(closes).toEqual(['s']);
    } finally {
      clearInterval(feed);
      await socket.stop();
      await s.close();
    }
  });

  it('does not take a hold for a stall: the feed was not silent, it was not read', async () => {
    const s = await server();
    const got: string[] = [];
    const closes: string[] = [];
    let admit = false;
    const socket = feedSocket(s.url, {
      stallMs: 100,
      admit: () => admit,
      onMessage: (text) => got.push(text),
      onClose: (e) => closes.push(e.cause),
    });
    socket.start();
    await until(() => s.connections.length === 1 && socket.isOpen, 'the connection');
    const opened = socket.heardAt;
    expect(opened).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 20)); // the clock moves on: the frame's time is later than the opening's
    s.connections[0]?.ws.send('held');
    await until(() => socket.heardAt > opened, 'the frame heard');
    const heard = socket.heardAt;
    // Held for several stall periods.
    await new Promise((r) => setTimeout(r, 500));
    expect(closes).toEqual([]);
    expect(got).toEqual([]);
    admit = true;
    await until(() => got.length === 1, 'the held message');
    expect(closes).toEqual([]);
    expect(s.connections).toHaveLength(1);
    // Handing over held messages is not hearing anything new.
    expect(socket.heardAt).toBe(heard);
    await socket.stop();
    await s.close();
  });
});
