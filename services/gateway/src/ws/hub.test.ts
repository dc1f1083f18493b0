import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger, Registry } from '@depthgate/service-kit';
import { StreamHub } from './hub';
import { WsMetrics } from './metrics';
import type { ClientLink, Outgoing, PlatformStream, Subscriber, Topic, UpstreamContext } from './types';

const logger = createLogger({ name: 'test', level: 'silent' });

/** An upstream that records, per connection, the markets subscribed and unsubscribed. */
async function upstream() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  const connections: { ws: WebSocket; subscribed: string[]; unsubscribed: string[] }[] = [];
  wss.on('connection', (ws) => {
    const c = { ws, subscribed: [] as string[], unsubscribed: [] as string[] };
    connections.push(c);
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as { op: string; markets: string[] };
      (m.op === 'sub' ? c.subscribed : c.unsubscribed).push(...m.markets);
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    connections,
    close: () => new Promise((r) => wss.close(r)),
  };
}

/** A platform whose protocol is `{"op":"sub"|"unsub","markets":[…]}` up and `{"market","book"}` down. */
function stream(url: string): PlatformStream {
  return {
    handshake: () => ({ url }),
    keepAlive: 'ping',
    openSession: (ctx: UpstreamContext) => ({
      subscribe: (topics: readonly Topic[]) =>
        ctx.send(JSON.stringify({ op: 'sub', markets: topics.map((t) => t.market) })),
      unsubscribe: (topics: readonly Topic[]) =>
        ctx.send(JSON.stringify({ op: 'unsub', markets: topics.map((t) => t.market) })),
      resync: () => undefined,
      onMessage: (text: string) => {
        const m = JSON.parse(text) as { market: string; book: string };
        const topic = ctx.topic('book', m.market);
        if (topic) ctx.snapshot(topic, text);
      },
    }),
    openClient: () => ({ onMessage: () => undefined }),
    join: (topic: Topic) => `late ${topic.market}`,
    notice: () => undefined,
    failed: () => undefined,
  };
}

class Client implements ClientLink {
  readonly open = true;
  readonly got: string[] = [];
  constructor(readonly id: number) {}
  send(data: Outgoing): void {
    this.got.push(Buffer.isBuffer(data) || typeof data === 'string' ? String(data) : data.bytes.subarray(2).toString());
  }
}

const until = async (f: () => boolean, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('StreamHub', () => {
  it('spreads topics over upstream connections within the platform’s limits; identical subscriptions share one', async () => {
    const up = await upstream();
    const metrics = new WsMetrics(new Registry());
    const hub = new StreamHub({
      platform: 'test',
      title: 'Test',
      stream: stream(up.url),
      limits: { topicsPerConnection: 2, maxConnections: 2, connectsPerSecond: 100, messagesPerSecond: 100, source: '' },
      logger,
      metrics,
      stallMs: 10_000,
      pingMs: 0,
      reconnectMinMs: 10,
      reconnectMaxMs: 20,
      lingerMs: 0,
      reconcileIntervalMs: 0,
      reconcileGraceMs: 0,
    });
    const owner = { dropped: () => undefined };
    const a = new Client(1);
    const b = new Client(2);
    expect(hub.room()).toBe(4);
    const subs: Subscriber[] = [];
    for (const market of ['m1', 'm2', 'm3']) subs.push(hub.attach(a, owner, 'book', market, undefined));
    // b subscribes to what a holds: no new upstream subscription.
    subs.push(hub.attach(b, owner, 'book', 'm1', undefined));
    expect(hub.room()).toBe(1);
    await until(
      () => up.connections.reduce((n, c) => n + c.subscribed.length, 0) === 3,
      'three upstream subscriptions',
    );
    expect(up.connections).toHaveLength(2);
    expect(up.connections.map((c) => c.subscribed.length).sort()).toEqual([1, 2]);
    expect(up.connections.flatMap((c) => c.subscribed).sort()).toEqual(['m1', 'm2', 'm3']);

    // The upstream's book goes to every subscriber of its topic; a client joining after it gets the module's join.
    const onM1 = up.connections.find((c) => c.subscribed.includes('m1'));
    onM1?.ws.send(JSON.stringify({ market: 'm1', book: 'x' }));
    await until(() => a.got.length === 1 && b.got.length === 1, 'the book at both clients');
    const c = new Client(3);
    subs.push(hub.attach(c, owner, 'book', 'm1', undefined));
    expect(c.got).toEqual(['late m1']);

    // The last subscriber of m1 leaving drops it upstream; others are untouched.
    for (const s of subs.filter((s) => s.topic.market === 'm1')) hub.detach(s);
    await until(() => (onM1?.unsubscribed.length ?? 0) === 1, 'the upstream unsubscribe');
    expect(onM1?.unsubscribed).toEqual(['m1']);
    expect(hub.room()).toBe(2);
    await hub.stop();
    await up.close();
  });
});
