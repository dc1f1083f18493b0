import { PLATFORMS, type PlatformKey } from '@depthgate/platforms';
import { createLogger } from '@depthgate/service-kit';
import { loadConfig } from '../config';
import { createPlatforms } from '../platforms/registry';
import { asyncApiDocument } from './asyncapi';
import { CLOSE } from './close-codes';
import { STREAMS } from './registry';
import {
  RESYNC_REASONS,
  Topic,
  type Outgoing,
  type PerSubscriber,
  type ResyncReason,
  type Subscriber,
  type UpstreamContext,
} from './types';
import { applyKalshiDelta, kalshiBookFrom, kalshiSnapshotMsg } from './venue-b';

const logger = createLogger({ name: 'test', level: 'silent' });
const config = loadConfig({});

/** An upstream session with one topic and one subscriber, recording what the hub would be told. */
function session(platform: keyof typeof STREAMS, channel: string, market: string, handle: unknown = {}) {
  const module = STREAMS[platform];
  const stream = module.create({ platform: config.platforms[platform] as never, config, logger });
  const topic = new Topic(`${channel} ${market}`, channel, market);
  const sub: Subscriber = { client: { id: 1, open: true, send: () => undefined }, topic, handle };
  topic.subscribers.add(sub);
  const sent: string[] = [];
  const delivered: string[] = [];
  const gaps: ResyncReason[] = [];
  const out = (o: Outgoing | PerSubscriber) => {
    const v = typeof o === 'function' ? o(sub) : o;
    if (v !== undefined) delivered.push(String(v));
  };
  const ctx: UpstreamContext = {
    logger,
    send: (t) => sent.push(t),
    topic: (c, m) => (c === channel && m === market ? topic : undefined),
    topics: () => [topic],
    snapshot: (t, o) => {
      t.status = 'live';
      t.version++;
      out(o);
    },
    deliver: (_t, o) => out(o),
    live: (t) => {
      t.status = 'live';
    },
    gap: (t, reason) => {
      t.status = 'resyncing';
      gaps.push(reason);
    },
    fail: () => undefined,
    reconnect: () => undefined,
  };
  const upstream = stream.openSession(ctx);
  upstream.subscribe([topic]);
  return { stream, topic, sub, upstream, sent, delivered, gaps };
}

describe('stream modules', () => {
  it('every platform whose descriptor declares a feed has a stream module, and no other', () => {
    const withFeeds = (Object.keys(PLATFORMS) as PlatformKey[]).filter((k) => 'feeds' in PLATFORMS[k]).sort();
    expect(Object.keys(STREAMS).sort()).toEqual(withFeeds);
  });

  it('Kalshi: the kept book applies signed changes exactly and renders Kalshi’s snapshot in its own fields', () => {
    const s = kalshiBookFrom({
      market_ticker: 'KX-1',
      market_id: 'm',
      yes_dollars_fp: [
        ['0.4600', '988.00'],
        ['0.4500', '1355.00'],
      ],
      no_dollars_fp: [['0.5300', '12.00']],
    });
    expect(applyKalshiDelta(s, { side: 'yes', price_dollars: '0.4500', delta_fp: '-355.25' })).toBe(true);
    expect(applyKalshiDelta(s, { side: 'no', price_dollars: '0.5300', delta_fp: '-12.00' })).toBe(true);
    expect(applyKalshiDelta(s, { side: 'no', price_dollars: '0.5400', delta_fp: '5.50' })).toBe(true);
    expect(JSON.parse(kalshiSnapshotMsg('KX-1', s, 1))).toEqual({
      market_ticker: 'KX-1',
      market_id: 'm',
      yes_dollars_fp: [
        ['0.4500', '999.75'],
        ['0.4600', '988.00'],
      ],
      no_dollars_fp: [['0.5400', '5.50']],
    });
    // Below zero: the book is not Kalshi's any more (the caller resyncs); nothing changes.
    expect(applyKalshiDelta(s, { side: 'yes', price_dollars: '0.4600', delta_fp: '-988.01' })).toBe(false);
    expect(JSON.parse(kalshiSnapshotMsg('KX-1', s, 2)).yes_dollars_fp[1]).toEqual(['0.4600', '988.00']);
  });

  it('Kalshi: a seq gap on a market’s subscription resyncs that market', () => {
    const k = session('venue-b', 'orderbook_delta', 'KX-1', { sid: 1, seq: 0, channel: 'orderbook_delta', cmdId: 1 });
    k.upstream.onMessage(JSON.stringify({ id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 7 } }));
    k.upstream.onMessage(
      JSON.stringify({
        type: 'orderbook_snapshot',
        sid: 7,
        seq: 1,
        msg: { market_ticker: 'KX-1', yes_dollars_fp: [['0.1000', '1.00']], no_dollars_fp: [] },
      }),
    );
    k.upstream.onMessage(
      JSON.stringify({
        type: 'orderbook_delta',
        sid: 7,
        seq: 2,
        msg: { market_ticker: 'KX-1', side: 'yes', price_dollars: '0.1000', delta_fp: '1.00' },
      }),
    );
    expect(k.gaps).toEqual([]);
    k.upstream.onMessage(
      JSON.stringify({
        type: 'orderbook_delta',
        sid: 7,
        seq: 4,
        msg: { market_ticker: 'KX-1', side: 'yes', price_dollars: '0.1000', delta_fp: '1.00' },
      }),
    );
    expect(k.gaps).toEqual(['sequence_gap']);
    expect(k.delivered.map((d) => JSON.parse(d).type)).toEqual(['orderbook_snapshot', 'orderbook_delta']);
  });

  it('Gemini: a resync gives the fresh book plus every vanished level at "0", in the first message’s form', () => {
    const g = session('venue-c', 'l2', 'BTCUSD');
    const first = {
      type: 'l2_updates',
      symbol: 'BTCUSD',
      changes: [
        ['buy', '10.00', '1'],
        ['sell', '11.00', '2'],
        ['sell', '12.00', '3'],
      ],
      trades: [],
      auction_events: [],
    };
    g.upstream.onMessage(JSON.stringify(first));
    g.upstream.onMessage(JSON.stringify({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['buy', '9.50', '4']] }));
    g.topic.status = 'resyncing';
    // Between the unsubscribe and the new subscribe, the old subscription's tail is ignored; the first message after
    // the new subscribe is the book.
    g.upstream.onMessage(JSON.stringify({ type: 'l2_updates', symbol: 'BTCUSD', changes: [['buy', '9.00', '5']] }));
    g.upstream.subscribe([g.topic]);
    g.upstream.onMessage(
      JSON.stringify({
        ...first,
        changes: [
          ['buy', '10.00', '7'],
          ['sell', '11.50', '1'],
        ],
      }),
    );
    const resync = JSON.parse(g.delivered.at(-1) as string);
    expect(resync.changes).toEqual([
      ['buy', '10.00', '7'],
      ['sell', '11.50', '1'],
      ['buy', '9.50', '0'],
      ['sell', '11.00', '0'],
      ['sell', '12.00', '0'],
    ]);
    expect(resync).toMatchObject({ trades: [], auction_events: [] });
    expect(g.delivered).toHaveLength(3);
  });

  it('CLOB: a price_change whose best prices disagree with the kept book resyncs the asset', () => {
    const c = session('venue-a-clob', 'market', '123', { assets: new Map([['123', undefined]]) });
    c.upstream.onMessage(
      JSON.stringify([
        {
          event_type: 'book',
          asset_id: '123',
          market: '0xm',
          bids: [{ price: '0.40', size: '10' }],
          asks: [{ price: '0.60', size: '5' }],
          timestamp: '1',
        },
      ]),
    );
    const change = (item: object) =>
      JSON.stringify({
        market: '0xm',
        price_changes: [{ asset_id: '123', ...item }],
        timestamp: '2',
        event_type: 'price_change',
      });
    c.upstream.onMessage(change({ price: '0.45', size: '3', side: 'BUY', best_bid: '0.45', best_ask: '0.6' }));
    expect(c.gaps).toEqual([]);
    c.upstream.onMessage(change({ price: '0.55', size: '3', side: 'SELL', best_bid: '0.45', best_ask: '0.50' }));
    expect(c.gaps).toEqual(['book_mismatch']);
    expect(JSON.parse(c.stream.join(c.topic, c.sub) as string)).toMatchObject({
      event_type: 'book',
      bids: [
        { price: '0.40', size: '10' },
        { price: '0.45', size: '3' },
      ],
      asks: [
        { price: '0.60', size: '5' },
        { price: '0.55', size: '3' },
      ],
    });
  });

  it('the AsyncAPI document has every stream, its messages, the close codes and the handshake errors', () => {
    const doc = asyncApiDocument(createPlatforms(config)) as {
      channels: Record<string, { address: string; messages: Record<string, unknown> }>;
      info: { 'x-close-codes': { code: number }[]; 'x-handshake-errors': { error: string }[] };
    };
    expect(Object.keys(doc.channels).sort()).toEqual(Object.keys(STREAMS).sort());
    expect(doc.channels['venue-b']?.address).toBe('/ws/v1/venue-b');
    expect(Object.keys(doc.channels['venue-b']?.messages ?? {})).toEqual(
      expect.arrayContaining(['subscribe', 'orderbook_snapshot', 'depthgate_notice', 'error']),
    );
    expect(doc.info['x-close-codes'].map((c) => c.code)).toEqual(Object.values(CLOSE).map((c) => c.code));
    expect(doc.info['x-handshake-errors'].map((e) => e.error)).toContain('too_many_connections');
  });

  it('the AsyncAPI notice of every platform: stale and resynced as examples, the schema’s notices and reasons where they sit', () => {
    const doc = asyncApiDocument(createPlatforms(config)) as {
      components: { messages: Record<string, { name: string; payload: Schema; examples: { payload: unknown }[] }> };
    };
    interface Schema {
      properties?: Record<string, Schema & { enum?: string[] }>;
    }
    const notices = Object.entries(doc.components.messages).filter(([id]) =>
      /\.receive\.(depthgate_notice|depthgateNotice)$/.test(id),
    );
    expect(notices.map(([id]) => id.split('.')[0]).sort()).toEqual(Object.keys(STREAMS).sort());
    for (const [, m] of notices) {
      // The schema's path to the notice's fields (Kalshi: msg, Polymarket US: depthgateNotice), followed in each example.
      const path: string[] = [];
      let at = m.payload;
      while (at.properties && !at.properties.notice) {
        const key = Object.keys(at.properties)[0] as string;
        path.push(key);
        at = at.properties[key] as Schema;
      }
      expect(at.properties?.notice?.enum).toEqual(['stale', 'resynced']);
      expect(at.properties?.reason?.enum).toEqual([...RESYNC_REASONS]);
      const fields = m.examples.map((e) => path.reduce((o, k) => (o as Record<string, unknown>)[k], e.payload));
      expect(fields).toEqual([
        expect.objectContaining({ notice: 'stale', reason: 'upstream_stall' }),
        expect.objectContaining({ notice: 'resynced', reason: 'upstream_stall' }),
      ]);
    }
  });
});
