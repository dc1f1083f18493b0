import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger, Registry } from '@depthgate/service-kit';
import type { UpstreamTarget } from '../platforms/types';
import type { Forwarder } from '../proxy/forwarder';
import { ownCallsTo } from '../testing/own-calls';
import { StreamHub } from './hub';
import { WsMetrics } from './metrics';
import {
  Topic,
  type ClientLink,
  type Notice,
  type Outgoing,
  type PlatformStream,
  type ResyncReason,
  type Subscriber,
  type UpstreamContext,
} from './types';

const logger = createLogger({ name: 'test', level: 'silent' });

interface UpstreamConn {
  ws: WebSocket;
  subscribed: string[];
  unsubscribed: string[];
  /** Messages received. */
  messages: number;
  /** Markets in the order they came: `+m` subscribed, `-m` unsubscribed. */
  log: string[];
}

/**
 * An upstream that records, per connection, the markets subscribed and unsubscribed (and may answer subscribes), on
 * `port` (default: any free one).
 */
async function upstream(port = 0) {
  const wss = new WebSocketServer({ port, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  const connections: UpstreamConn[] = [];
  const up = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    connections,
    onSubscribe: undefined as ((c: UpstreamConn, markets: string[]) => void) | undefined,
    close: () =>
      new Promise((r) => {
        for (const c of connections) c.ws.terminate();
        wss.close(r);
      }),
  };
  wss.on('connection', (ws) => {
    const c = { ws, subscribed: [] as string[], unsubscribed: [] as string[], messages: 0, log: [] as string[] };
    connections.push(c);
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as { op: string; markets: string[] };
      c.messages++;
      c.log.push(...m.markets.map((market) => `${m.op === 'sub' ? '+' : '-'}${market}`));
      (m.op === 'sub' ? c.subscribed : c.unsubscribed).push(...m.markets);
      if (m.op === 'sub') up.onSubscribe?.(c, m.markets);
    });
  });
  return up;
}

/**
 * A platform whose protocol is `{"op":"sub"|"unsub","markets":[…]}` up and `{"market","book"}` down (a book with
 * `"gap":true` is one the module cannot trust: it asks for a resync, which subscribes the market again).
 */
function stream(url: string): PlatformStream {
  return {
    handshake: () => ({ url }),
    keepAlive: 'ping',
    openSession: (ctx: UpstreamContext) => ({
      subscribe: (topics: readonly Topic[]) =>
        ctx.send(JSON.stringify({ op: 'sub', markets: topics.map((t) => t.market) })),
      unsubscribe: (topics: readonly Topic[]) =>
        ctx.send(JSON.stringify({ op: 'unsub', markets: topics.map((t) => t.market) })),
      resync: (topic: Topic) => ctx.send(JSON.stringify({ op: 'sub', markets: [topic.market] })),
      onMessage: (text: string) => {
        const m = JSON.parse(text) as { market: string; book: string; gap?: boolean };
        const topic = ctx.topic('book', m.market);
        if (!topic) return;
        if (m.gap) ctx.gap(topic, 'sequence_gap');
        else ctx.snapshot(topic, text);
      },
    }),
    openClient: () => ({ onMessage: () => undefined }),
    join: (topic: Topic) => `late ${topic.market}`,
    notice: (sub: Subscriber, notice: Notice, reason: ResyncReason) => `${notice} ${reason} ${sub.topic.market}`,
    failed: () => undefined,
  };
}

function hubOf(url: string, o: Partial<ConstructorParameters<typeof StreamHub>[0]> = {}): StreamHub {
  return new StreamHub({
    platform: 'test',
    title: 'Test',
    stream: stream(url),
    limits: { topicsPerConnection: 10, maxConnections: 2, connectsPerSecond: 100, messagesPerSecond: 100, source: '' },
    logger,
    metrics: new WsMetrics(new Registry()),
    stallMs: 10_000,
    pingMs: 0,
    reconnectMinMs: 10,
    reconnectMaxMs: 20,
    lingerMs: 0,
    reconcileIntervalMs: 0,
    reconcileGraceMs: 0,
    reconcileBudget: 0.1,
    ...o,
  });
}

class Client implements ClientLink {
  readonly open = true;
  readonly got: string[] = [];
  constructor(readonly id: number) {}
  send(data: Outgoing): void {
    this.got.push(Buffer.isBuffer(data) || typeof data === 'string' ? String(data) : data.bytes.subarray(2).toString());
  }
}

const until = async (f: () => boolean | Promise<boolean>, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!(await f())) {
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
      reconcileBudget: 0.1,
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
  it('an upstream connection silent beyond the threshold: its topics’ subscribers get stale, the fresh snapshot on a new connection, then resynced; other connections’ are untouched', async () => {
    const up = await upstream();
    // Each connection answers a subscribe with the market's book, numbered by connection, and beats every 50 ms but
    // the first one, which goes silent after its book (it still answers pings, as a stalled venue's server may: a
    // pong proves nothing about the feed).
    up.onSubscribe = (c, markets) => {
      for (const market of markets) c.ws.send(JSON.stringify({ market, book: `b${up.connections.indexOf(c) + 1}` }));
    };
    const beat = setInterval(() => {
      for (const c of up.connections.slice(1)) if (c.ws.readyState === c.ws.OPEN) c.ws.send('{"heartbeat":1}');
    }, 50);
    const hub = hubOf(up.url, {
      stallMs: 300,
      pingMs: 50,
      limits: { topicsPerConnection: 1, maxConnections: 3, connectsPerSecond: 100, messagesPerSecond: 100, source: '' },
    });
    const a = new Client(1);
    const b = new Client(2);
    hub.attach(a, { dropped: () => undefined }, 'book', 'm1', undefined);
    await until(() => a.got.length === 1, 'the first book of m1');
    hub.attach(b, { dropped: () => undefined }, 'book', 'm2', undefined);
    await until(() => a.got.length >= 4, 'the notice, the fresh book and resynced');
    clearInterval(beat);
    expect(a.got).toEqual([
      '{"market":"m1","book":"b1"}',
      'stale upstream_stall m1',
      '{"market":"m1","book":"b3"}',
      'resynced upstream_stall m1',
    ]);
    expect(b.got).toEqual(['{"market":"m2","book":"b2"}']);
    expect(up.connections).toHaveLength(3);
    await hub.stop();
    await up.close();
  });

  it('a topic the module cannot trust: stale, then the fresh snapshot on the same connection, then resynced; a client joining meanwhile is told too', async () => {
    const up = await upstream();
    // The upstream answers the first subscribe at once and holds the second (the resync) until released.
    let held: (() => void) | undefined;
    up.onSubscribe = (c, markets) => {
      const answer = (book: string) => () => {
        for (const market of markets) c.ws.send(JSON.stringify({ market, book }));
      };
      if (c.subscribed.length === 1) answer('b1')();
      else held = answer('b2');
    };
    const hub = hubOf(up.url);
    const a = new Client(1);
    const b = new Client(2);
    hub.attach(a, { dropped: () => undefined }, 'book', 'm1', undefined);
    hub.attach(b, { dropped: () => undefined }, 'book', 'm1', undefined);
    await until(() => a.got.length === 1 && b.got.length === 1, 'the first book');
    up.connections[0]?.ws.send(JSON.stringify({ market: 'm1', gap: true }));
    await until(() => a.got.length === 2 && held !== undefined, 'the notice and the resubscribe');
    const c = new Client(3);
    hub.attach(c, { dropped: () => undefined }, 'book', 'm1', undefined);
    held?.();
    await until(() => [a, b, c].every((x) => x.got.at(-1)?.startsWith('resynced') === true), 'resynced');
    for (const x of [a, b]) {
      expect(x.got).toEqual([
        '{"market":"m1","book":"b1"}',
        'stale sequence_gap m1',
        '{"market":"m1","book":"b2"}',
        'resynced sequence_gap m1',
      ]);
    }
    expect(c.got).toEqual(['stale sequence_gap m1', '{"market":"m1","book":"b2"}', 'resynced sequence_gap m1']);
    expect(up.connections).toHaveLength(1);
    await hub.stop();
    await up.close();
  });
  it('a topic whose upstream cannot be reached: stale at the first failed attempt (a client joining meanwhile too), then, once it is reached, the first snapshot and resynced', async () => {
    // A port nothing listens on, until the upstream starts there.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const hub = hubOf(`ws://127.0.0.1:${port}`);
    let up: Awaited<ReturnType<typeof upstream>> | undefined;
    try {
      const owner = { dropped: () => undefined };
      const a = new Client(1);
      hub.attach(a, owner, 'book', 'm1', undefined);
      await until(() => a.got.length === 1, 'the notice');
      expect(a.got).toEqual(['stale upstream_disconnect m1']);
      const b = new Client(2);
      hub.attach(b, owner, 'book', 'm1', undefined);
      expect(b.got).toEqual(['stale upstream_disconnect m1']);
      // More attempts fail (every 10 to 20 ms): the subscribers were told once.
      await new Promise((r) => setTimeout(r, 100));
      up = await upstream(port);
      up.onSubscribe = (c, markets) => {
        for (const market of markets) c.ws.send(JSON.stringify({ market, book: 'b1' }));
      };
      await until(() => [a, b].every((x) => x.got.length === 3), 'the first book and resynced');
      for (const x of [a, b])
        expect(x.got).toEqual([
          'stale upstream_disconnect m1',
          '{"market":"m1","book":"b1"}',
          'resynced upstream_disconnect m1',
        ]);
    } finally {
      await hub.stop();
      await up?.close();
    }
  });

  it('subscription churn faster than the platform’s message budget: adds and drops of one topic cancel out while messages wait, the rest go in one batch', async () => {
    const up = await upstream();
    const hub = hubOf(up.url, {
      limits: { topicsPerConnection: 100, maxConnections: 1, connectsPerSecond: 100, messagesPerSecond: 2, source: '' },
    });
    try {
      const owner = { dropped: () => undefined };
      const a = new Client(1);
      const sent = () => up.connections.flatMap((c) => c.log);
      const messages = () => up.connections.reduce((n, c) => n + c.messages, 0);
      // The budget's two messages at once: m1, m2.
      hub.attach(a, owner, 'book', 'm1', undefined);
      await until(() => sent().length === 1, 'the first subscribe');
      hub.attach(a, owner, 'book', 'm2', undefined);
      await until(() => sent().length === 2, 'the second subscribe');
      // With the budget spent: 50 markets subscribed and dropped, each in its own turn, then two kept.
      for (let i = 0; i < 50; i++) {
        const sub = hub.attach(a, owner, 'book', `churn${i}`, undefined);
        await new Promise((r) => setImmediate(r));
        hub.detach(sub);
        await new Promise((r) => setImmediate(r));
      }
      hub.attach(a, owner, 'book', 'm3', undefined);
      hub.attach(a, owner, 'book', 'm4', undefined);
      // Before, every turn's batch was queued: 100 churn messages ahead of m3 and m4, at two a second.
      await until(() => sent().includes('+m4'), 'm3 and m4 subscribed');
      const all = sent();
      expect(all.slice(0, 2)).toEqual(['+m1', '+m2']);
      expect(all.slice(-2)).toEqual(['+m3', '+m4']);
      // What churn reached the platform (the first churn subscribe, queued before the others came) was dropped again.
      const churn = all.slice(2, -2);
      expect(churn.filter((m) => m.startsWith('+')).map((m) => m.slice(1))).toEqual(
        churn.filter((m) => m.startsWith('-')).map((m) => m.slice(1)),
      );
      expect(churn.length).toBeLessThan(10);
      // m3 and m4 in one message.
      expect(messages()).toBe(2 + churn.length + 1);
    } finally {
      await hub.stop();
      await up.close();
    }
  });
});

describe('REST reconciliation', () => {
  type Book = { bids: [string, string][]; asks: [string, string][] };
  const book: Book = { bids: [['1', '2']], asks: [['3', '4']] };
  /** The test platform with a REST book of every market equal to the kept one. */
  const reconciled = (): PlatformStream => ({
    ...stream('ws://127.0.0.1:9'),
    reconcile: { path: (m) => `/book/${m}`, parse: (body) => body as Book, kept: () => book },
  });
  /** A live topic on a hub without upstream connections (reconciliation needs none). */
  function liveTopic(hub: StreamHub, market: string): void {
    const topic = new Topic(`book ${market}`, 'book', market);
    topic.status = 'live';
    hub.topics.set(topic.key, topic);
  }
  /** gateway_ws_reconciliations_total by result. */
  async function results(registry: Registry): Promise<Record<string, number>> {
    const metric = await registry.getSingleMetric('gateway_ws_reconciliations_total')?.get();
    return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels.result), v.value]));
  }

  /**
   * A REST book server counting its reads, and a forwarder to it within `budget`, counted in memory (Redis away: the
   * same arithmetic).
   */
  async function restBook(budget: { perSecond: number; burst: number }) {
    const served = { reads: 0 };
    const server = http.createServer((_req, res) => {
      served.reads++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(book));
    });
    return { served, ...(await ownCallsTo(server, budget)) };
  }

  it('a read the budget grants for later is waited for and made (the slot is taken either way)', async () => {
    const { served, budgets, forwarder, target, close } = await restBook({ perSecond: 1.9, burst: 6 }); // Gemini's
    // Callers took the whole burst: the next slot is granted for about half a second later.
    for (let i = 0; i < 6; i++) await budgets.take(target.origin, { perSecond: 1.9, burst: 6 });
    const registry = new Registry();
    const hub = hubOf('ws://127.0.0.1:9', {
      stream: reconciled(),
      metrics: new WsMetrics(registry),
      reconcileIntervalMs: 3_600_000,
      rest: { forwarder, target },
    });
    try {
      liveTopic(hub, 'm1');
      await until(async () => (await results(registry)).match === 1, 'the comparison');
      expect(served.reads).toBe(1);
    } finally {
      await hub.stop();
      await close();
    }
  });

  it('reads within WS_RECONCILE_BUDGET of the platform’s budget: many books do not take the callers’ share', async () => {
    // 0.1 reads/s with a burst of 10; reconciliation's tenth is one read per 100 s.
    const budget = { perSecond: 0.1, burst: 10 };
    const { served, budgets, forwarder, target, close } = await restBook(budget);
    const registry = new Registry();
    const hub = hubOf('ws://127.0.0.1:9', {
      stream: reconciled(),
      metrics: new WsMetrics(registry),
      reconcileIntervalMs: 1_000,
      reconcileBudget: 0.1,
      rest: { forwarder, target },
    });
    try {
      for (let i = 1; i <= 5; i++) liveTopic(hub, `m${i}`);
      const tried = async () => Object.values(await results(registry)).reduce((a, b) => a + b, 0);
      await until(async () => (await tried()) >= 5, 'every book tried');
      // One read; the other books found no slot of reconciliation's share within an interval.
      expect(served.reads).toBe(1);
      expect((await results(registry)).match).toBe(1);
      // Callers keep the rest of the burst: nine slots at once.
      for (let i = 0; i < 9; i++)
        expect(await budgets.take(target.origin, budget)).toEqual({ allowed: true, waitUs: 0 });
    } finally {
      await hub.stop();
      await close();
    }
  });

  it('a difference is confirmed though the second read waits longer than UPSTREAM_BUDGET_MAX_WAIT_MS for its share', async () => {
    // Half of one read a second: a read every 2 s, the second one waited for beyond the 1 s callers wait at most.
    const { served, forwarder, target, close } = await restBook({ perSecond: 1, burst: 10 });
    const registry = new Registry();
    const stream = reconciled();
    const kept: Book = { bids: [['1', '2']], asks: [['3', '5']] };
    const hub = hubOf('ws://127.0.0.1:9', {
      stream: { ...stream, reconcile: { ...stream.reconcile!, kept: () => kept } },
      metrics: new WsMetrics(registry),
      reconcileIntervalMs: 60_000,
      reconcileGraceMs: 10,
      reconcileBudget: 0.5,
      rest: { forwarder, target },
    });
    try {
      liveTopic(hub, 'm1');
      await until(async () => Object.keys(await results(registry)).length > 0, 'the comparison');
      expect([await results(registry), served.reads]).toEqual([{ mismatch: 1 }, 2]);
    } finally {
      await hub.stop();
      await close();
    }
  });

  it('stop cancels a read waiting for its share of the budget: the wait ends, and the read is never made', async () => {
    const budget = { perSecond: 1, burst: 10 };
    const { served, budgets, forwarder, target, close } = await restBook(budget);
    // Reconciliation's share (a hundredth: a read per 100 s) was just used: its next slot is 100 s away.
    await budgets.share(target.origin, budget, 0.01, 0);
    const share = jest.spyOn(forwarder, 'share');
    const registry = new Registry();
    const hub = hubOf('ws://127.0.0.1:9', {
      stream: reconciled(),
      metrics: new WsMetrics(registry),
      reconcileIntervalMs: 3_600_000,
      reconcileBudget: 0.01,
      rest: { forwarder, target },
    });
    try {
      liveTopic(hub, 'm1');
      await until(() => share.mock.results.length === 1, 'the read waiting for its share');
      await hub.stop();
      // Without the cancellation the wait goes on for 100 s after stop, and the read follows it.
      await expect(share.mock.results[0]?.value).rejects.toMatchObject({ name: 'AbortError' });
      expect(served.reads).toBe(0);
      expect(await results(registry)).toEqual({});
    } finally {
      await hub.stop();
      await close();
    }
  });

  it('each book is tried at most once per interval, whatever came of it: no budget slot, a failed read, a match', async () => {
    jest.useFakeTimers();
    try {
      let reads = 0;
      const answers: (() => unknown)[] = [
        () => undefined, // no budget slot
        () => {
          throw new Error('Upstream test answered 503');
        },
        () => book,
      ];
      const forwarder = {
        share: async () => true,
        readJson: async () => (answers[reads++] as () => unknown)(),
      } as unknown as Forwarder;
      const registry = new Registry();
      const hub = hubOf('ws://127.0.0.1:9', {
        stream: reconciled(),
        metrics: new WsMetrics(registry),
        reconcileIntervalMs: 60_000,
        rest: { forwarder, target: {} as UpstreamTarget },
      });
      liveTopic(hub, 'm1');
      await jest.advanceTimersByTimeAsync(250);
      expect(reads).toBe(1);
      // Not again at the next ticks (every 250 ms), but an interval later.
      await jest.advanceTimersByTimeAsync(59_000);
      expect(reads).toBe(1);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(reads).toBe(2);
      await jest.advanceTimersByTimeAsync(59_750);
      expect(reads).toBe(2);
      await jest.advanceTimersByTimeAsync(250);
      expect(reads).toBe(3);
      expect(await results(registry)).toEqual({ no_budget: 1, failed: 1, match: 1 });
      await hub.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
