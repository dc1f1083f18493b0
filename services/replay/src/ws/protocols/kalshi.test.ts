import { replay } from '../../engine';
import { KalshiClient } from '../../testing/clients';
import { directBook, randomWindow } from '../../testing/history';
import { binary } from '../../testing/venues';
import type { MarketStream, ReplayProtocol } from '../protocol';
import { kalshiSocket } from './kalshi';

/** Subscribes `channels` of `market` with command `id`, accepted (the market recorded): its acks. */
function subscribed(p: ReplayProtocol, id: number, channels: string[], market: string): unknown[] {
  const f = p.frame(
    JSON.stringify({ id, cmd: 'subscribe', params: { channels, market_ticker: market } }),
    false,
    false,
  );
  if (f.kind !== 'subscribe') throw new Error(`not a subscribe: ${JSON.stringify(f)}`);
  return p.accept(f.request, [market]).map((t) => JSON.parse(t) as unknown);
}

/** A JSON array nested `depth` deep (JSON.parse takes it; JSON.stringify runs out of stack on it). */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('Kalshi replay protocol', () => {
  it('a command whose id is nested too deep to be echoed gets code 1 with id null, as any command it cannot answer', () => {
    const p = kalshiSocket.create();
    for (const cmd of ['"x"', '"subscribe"'])
      for (const started of [false, true]) {
        const f = p.frame(`{"id":${nested(30_000)},"cmd":${cmd},"params":{}}`, false, started);
        expect(f).toEqual({ kind: 'reply', texts: [expect.any(String)] });
        if (f.kind !== 'reply') throw new Error('unreachable');
        expect(JSON.parse(f.texts[0] as string)).toEqual({
          id: null,
          type: 'error',
          msg: { code: 1, msg: 'Unable to process message' },
        });
      }
    // An id that can be echoed is, even a nested one.
    const f = p.frame(`{"id":${nested(3)},"cmd":"x"}`, false, false);
    expect(f.kind === 'reply' && JSON.parse(f.texts[0] as string)).toMatchObject({ id: [[[]]], msg: { code: 5 } });
  });

  it('a market subscribed again gets its messages on each subscription’s sid, its book first on each, as the gateway', () => {
    const p = kalshiSocket.create();
    expect(subscribed(p, 1, ['orderbook_delta', 'trade'], 'T')).toEqual([
      { id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } },
      { id: 1, type: 'subscribed', msg: { channel: 'trade', sid: 2 } },
    ]);
    expect(subscribed(p, 2, ['orderbook_delta', 'trade'], 'T')).toEqual([
      { id: 2, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3 } },
      { id: 2, type: 'subscribed', msg: { channel: 'trade', sid: 4 } },
    ]);
    // One stream: the market is read once.
    const streams = p.streams();
    expect(streams.map((s) => s.ticker)).toEqual(['T']);
    const w = randomWindow('kalshi-twice', binary, {
      events: 200,
      gapRate: 0.05,
      tradeId: (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    });
    const bySid = new Map<number, string[]>();
    for (const m of replay(w, streams[0]?.encoder as never)) {
      const sid = (JSON.parse(m.text) as { sid: number }).sid;
      bySid.set(sid, [...(bySid.get(sid) ?? []), m.text]);
    }
    expect([...bySid.keys()].sort()).toEqual([1, 2, 3, 4]);
    // Each book subscription on its own: the snapshot first, seq contiguous from 1, the recorded book at the end.
    const [first, second] = [1, 3].map((sid) => {
      const client = new KalshiClient();
      for (const t of bySid.get(sid) ?? []) client.consume(t);
      expect(client.book()).toEqual(directBook(w, Number.MAX_SAFE_INTEGER));
      return (bySid.get(sid) ?? []).map((t) => JSON.parse(t) as { seq: number; msg: unknown });
    });
    expect(second?.map((m) => m.msg)).toEqual(first?.map((m) => m.msg));
    expect(second?.map((m) => m.seq)).toEqual(first?.map((m) => m.seq));
    // And every trade on each trade subscription.
    const trades = (sid: number) => (bySid.get(sid) ?? []).map((t) => (JSON.parse(t) as { msg: unknown }).msg);
    expect(trades(4)).toEqual(trades(2));
    expect(trades(2)).toHaveLength(w.trades.length);
  });

  it('unsubscribe ends the sids it names, each answered unsubscribed (as the simulator); an unknown sid is 7, none 4', () => {
    const p = kalshiSocket.create();
    subscribed(p, 1, ['orderbook_delta', 'trade'], 'T');
    subscribed(p, 2, ['orderbook_delta'], 'U');
    expect(p.held()).toBe(3);
    const unsubscribe = (id: number, sids: unknown, started = false) => {
      const f = p.frame(JSON.stringify({ id, cmd: 'unsubscribe', params: { sids } }), false, started);
      if (f.kind !== 'reply') throw new Error(`not a reply: ${JSON.stringify(f)}`);
      return f.texts.map((t) => JSON.parse(t) as unknown);
    };
    expect(unsubscribe(3, [2])).toEqual([{ id: 3, sid: 2, seq: 1, type: 'unsubscribed' }]);
    expect(p.held()).toBe(2);
    expect(unsubscribe(4, [2])).toEqual([{ id: 4, type: 'error', msg: { code: 7, msg: 'Unknown subscription ID' } }]);
    expect(unsubscribe(5, [])).toEqual([{ id: 5, type: 'error', msg: { code: 4, msg: 'Subscription IDs required' } }]);
    // Before the start: T's trades are gone from the replay, U's book stays.
    const streams = p.streams();
    expect(streams.map((s) => s.ticker)).toEqual(['T', 'U']);
    const w = randomWindow('kalshi-unsub', binary, { events: 50, gapRate: 0 });
    const sids = new Map<number, number>();
    for (const s of streams)
      for (const m of replay(w, s.encoder)) {
        const sid = (JSON.parse(m.text) as { sid: number }).sid;
        sids.set(sid, (sids.get(sid) ?? 0) + 1);
      }
    expect([...sids.keys()].sort()).toEqual([1, 3]);
    // After it: the sid's messages are no longer wanted, the market's others are; a market with none left is not read.
    // Its `seq` follows the last one sent on it.
    const seq = (sids.get(3) ?? 0) + 1;
    expect(unsubscribe(6, [3], true)).toEqual([{ id: 6, sid: 3, seq, type: 'unsubscribed' }]);
    const [t, u] = streams as [MarketStream, MarketStream];
    expect([u.wanted?.('3'), u.wanted?.()]).toEqual([false, false]);
    expect([t.wanted?.('1'), t.wanted?.()]).toEqual([true, true]);
    expect(p.held()).toBe(1);
  });

  it('list_subscriptions answers the subscriptions still held, by sid, before and after the start (as the simulator)', () => {
    const p = kalshiSocket.create();
    const list = (id: number, started: boolean) => {
      const f = p.frame(JSON.stringify({ id, cmd: 'list_subscriptions' }), false, started);
      if (f.kind !== 'reply') throw new Error(`not a reply: ${JSON.stringify(f)}`);
      return f.texts.map((t) => JSON.parse(t) as unknown);
    };
    expect(list(1, false)).toEqual([{ id: 1, type: 'ok', msg: [] }]);
    subscribed(p, 2, ['trade', 'orderbook_delta'], 'T');
    subscribed(p, 3, ['orderbook_delta'], 'U');
    expect(list(4, false)).toEqual([
      {
        id: 4,
        type: 'ok',
        msg: [
          { channel: 'trade', sid: 1 },
          { channel: 'orderbook_delta', sid: 2 },
          { channel: 'orderbook_delta', sid: 3 },
        ],
      },
    ]);
    p.frame(JSON.stringify({ id: 5, cmd: 'unsubscribe', params: { sids: [2] } }), false, true);
    expect(list(6, true)).toEqual([
      {
        id: 6,
        type: 'ok',
        msg: [
          { channel: 'trade', sid: 1 },
          { channel: 'orderbook_delta', sid: 3 },
        ],
      },
    ]);
    // update_subscription stays unsupported: 13.
    const f = p.frame(JSON.stringify({ id: 7, cmd: 'update_subscription', params: { sid: 1 } }), false, false);
    expect(f.kind === 'reply' && JSON.parse(f.texts[0] as string)).toMatchObject({ id: 7, msg: { code: 13 } });
  });
});
