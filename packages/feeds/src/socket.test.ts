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
    const socket = new FeedSocket<'d' | 's' | 'u'>({
      logger: quiet,
      handshake: () => {
        if (++calls < 3) throw new Error('no signature yet');
        return { url: s.url };
      },
      stallMs: 10_000,
      pingMs: 0,
      reconnectMinMs: 10,
      reconnectMaxMs: 20,
      causes: { disconnect: 'd', stall: 's', unusable: 'u' },
      onOpen: () => undefined,
      onMessage: () => undefined,
      onClose: () => undefined,
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
});
