// https://docs.polymarket.com/developers/CLOB/websocket/market-channel
/**
 * Polymarket CLOB (`venue-a-clob`): the market channel, `wss://ws-subscriptions-clob.polymarket.com/ws/market` [V].
 *
 * Clients speak its protocol: `{"assets_ids":[…],"type":"market"}` (again to add assets, as ccxt does),
 * `{"assets_ids":[…],"operation":"subscribe"|"unsubscribe"}`, and the text `PING` (answered `PONG`) [V]; they receive
 * `book` (per asset), `price_change` (a market's changes, per asset: new aggregate size, `best_bid`, `best_ask`),
 * `last_trade_price`, `tick_size_change`, verbatim but for `price_change`, whose items are those of the client's
 * assets. The platform has no error message; the gateway's refusals are `{"event_type":"depthgate_error","error",
 * "message"}`.
 *
 * Upstream, one connection subscribes assets in batches (at most 500 per connection [3P]) and pings with `PING`. A
 * `book` replaces an asset's kept book. A `price_change` carries the asset's best prices after it [V]: a kept book
 * whose best prices differ is resynced (the asset is subscribed again, and a fresh `book` follows). A client joining
 * later gets a `book` from the kept book; its `hash` is the gateway's (sha1 of the levels), Polymarket's being
 * undocumented [U]. Custom features (`custom_feature_enabled`) are not requested.
 */
import { createHash } from 'node:crypto';
import type { Platforms } from '@depthgate/platforms';
import {
  ASK,
  BID,
  canonicalDecimal,
  clobDepthgateError,
  LocalBook,
  type SideCode,
  parseObject,
  stringList,
} from '@depthgate/feeds';
import { Frame } from './frame';
import {
  noticeDoc,
  type ClientContext,
  type ClientLink,
  type Notice,
  type ResyncReason,
  type StreamModule,
  type Subscriber,
  type Topic,
  type UpstreamContext,
  type UpstreamSession,
} from './types';

const CHANNEL = 'market';
/** Token ids are decimal ERC-1155 ids (up to 78 digits) [V]. */
const ASSET = /^\d{1,100}$/;
const SIDE: Record<string, SideCode> = { BUY: BID, SELL: ASK };

interface ClobBook {
  book: LocalBook;
  market: unknown;
  timestamp: unknown;
  join?: { version: number; text: string };
}

interface Level {
  price: string;
  size: string;
}

function levels(v: unknown): Level[] {
  if (!Array.isArray(v)) throw new Error('book without levels');
  for (const l of v as unknown[]) {
    const x = l as Partial<Level> | null;
    if (!x || typeof x.price !== 'string' || typeof x.size !== 'string') throw new Error('malformed book level');
  }
  return v as Level[];
}

/** The kept book's best price of a side as the platform spells an empty side ("0" [3P]). */
function best(book: LocalBook, side: SideCode): string {
  const top = book.sorted(side, side === BID ? 'desc' : 'asc')[0];
  return top ? canonicalDecimal(top.p as string) : '0';
}

function sameBest(expected: unknown, actual: string): boolean {
  if (typeof expected !== 'string' || expected === '') return true; // not given: nothing to check
  try {
    return canonicalDecimal(expected) === actual;
  } catch {
    return false;
  }
}

class ClobUpstream implements UpstreamSession {
  private initialSent = false;

  constructor(private readonly ctx: UpstreamContext) {}

  subscribe(topics: readonly Topic[]): void {
    if (topics.length === 0) return;
    const assets_ids = topics.map((t) => t.market);
    if (this.initialSent) this.ctx.send(JSON.stringify({ assets_ids, operation: 'subscribe' }));
    else this.ctx.send(JSON.stringify({ assets_ids, type: 'market' }));
    this.initialSent = true;
  }

  unsubscribe(topics: readonly Topic[]): void {
    if (topics.length === 0 || !this.initialSent) return;
    this.ctx.send(JSON.stringify({ assets_ids: topics.map((t) => t.market), operation: 'unsubscribe' }));
  }

  resync(topic: Topic): void {
    this.unsubscribe([topic]);
    this.subscribe([topic]);
  }

  onMessage(text: string): void {
    if (text === 'PONG') return;
    const v = JSON.parse(text) as unknown;
    for (const event of Array.isArray(v) ? (v as unknown[]) : [v]) {
      if (event && typeof event === 'object') this.event(event as Record<string, unknown>);
    }
  }

  private event(e: Record<string, unknown>): void {
    switch (e.event_type) {
      case 'book':
        return this.book(e);
      case 'price_change':
        return this.priceChange(e);
      default: {
        // last_trade_price, tick_size_change, best_bid_ask: an asset's own message, verbatim.
        const t = typeof e.asset_id === 'string' ? this.ctx.topic(CHANNEL, e.asset_id) : undefined;
        if (t && t.status === 'live') this.ctx.deliver(t, JSON.stringify(e));
      }
    }
  }

  private book(e: Record<string, unknown>): void {
    const t = typeof e.asset_id === 'string' ? this.ctx.topic(CHANNEL, e.asset_id) : undefined;
    if (!t) return;
    const book = new LocalBook();
    for (const l of levels(e.bids ?? e.buys)) book.setLevel(BID, l.price, l.size);
    for (const l of levels(e.asks ?? e.sells)) book.setLevel(ASK, l.price, l.size);
    t.state = { book, market: e.market, timestamp: e.timestamp } satisfies ClobBook;
    this.ctx.snapshot(t, JSON.stringify(e));
  }

  /**
   * Applies each live asset's items to its book, then sends every subscriber of those assets one message with the
   * items of its own assets; an asset whose book then disagrees with the message's best prices is resynced.
   */
  private priceChange(e: Record<string, unknown>): void {
    const items = e.price_changes;
    if (!Array.isArray(items)) throw new Error('price_change without price_changes');
    const byAsset = new Map<string, Record<string, unknown>[]>();
    for (const item of items as Record<string, unknown>[]) {
      if (!item || typeof item.asset_id !== 'string') throw new Error('malformed price_change item');
      const t = this.ctx.topic(CHANNEL, item.asset_id);
      if (!t || t.status !== 'live' || !t.state) continue;
      let list = byAsset.get(item.asset_id);
      if (!list) byAsset.set(item.asset_id, (list = []));
      list.push(item);
    }
    const doubtful: Topic[] = [];
    const topics: Topic[] = [];
    for (const [asset, list] of byAsset) {
      const t = this.ctx.topic(CHANNEL, asset) as Topic;
      const state = t.state as ClobBook;
      for (const item of list) {
        const side = SIDE[String(item.side)];
        if (side === undefined) throw new Error('price_change item without side');
        state.book.setLevel(side, String(item.price), String(item.size));
      }
      state.timestamp = e.timestamp;
      t.version++;
      topics.push(t);
      const last = list[list.length - 1] as Record<string, unknown>;
      if (!sameBest(last.best_bid, best(state.book, BID)) || !sameBest(last.best_ask, best(state.book, ASK)))
        doubtful.push(t);
    }
    if (topics.length === 0) return;
    // One message per client, with the items of its assets; built once per distinct set of assets.
    const head = { ...e };
    delete head.price_changes;
    const built = new Map<string, Frame>();
    const served = new Set<ClientLink>();
    const own = (sub: Subscriber) => (sub.handle as ClobSubs).assets;
    for (const t of topics) {
      this.ctx.deliver(t, (sub) => {
        if (served.has(sub.client)) return undefined;
        served.add(sub.client);
        const mine = [...byAsset.keys()].filter((a) => own(sub).has(a));
        const key = mine.join(',');
        let bytes = built.get(key);
        if (bytes === undefined) {
          const kept = mine.flatMap((a) => byAsset.get(a) ?? []);
          bytes = Frame.text(JSON.stringify({ market: e.market, price_changes: kept, ...head }));
          built.set(key, bytes);
        }
        return bytes;
      });
    }
    for (const t of doubtful) this.ctx.gap(t, 'book_mismatch');
  }
}

/** A client's assets: the handle every one of its subscriptions shares. */
interface ClobSubs {
  assets: Map<string, Subscriber<ClobSubs>>;
}

class ClobClient {
  private readonly subs: ClobSubs = { assets: new Map() };

  constructor(private readonly ctx: ClientContext<ClobSubs>) {}

  private error(error: string, message: string): void {
    this.ctx.send(clobDepthgateError(error, message));
  }

  async onMessage(text: string): Promise<void> {
    if (text === 'PING') return this.ctx.send('PONG');
    const m = parseObject(text);
    const assets = m === undefined ? undefined : stringList(m.assets_ids);
    if (!m || !assets) {
      return this.error(
        'invalid_message',
        'expected {"assets_ids":[…],"type":"market"} or {"assets_ids":[…],"operation":"subscribe"|"unsubscribe"}, or PING',
      );
    }
    const bad = assets.find((a) => !ASSET.test(a));
    if (bad !== undefined) return this.error('invalid_message', `invalid asset id "${bad.slice(0, 100)}"`);
    const initial = typeof m.type === 'string' && m.type.toLowerCase() === 'market';
    if (m.operation === 'unsubscribe') {
      const gone = assets.flatMap((a) => {
        const sub = this.subs.assets.get(a);
        this.subs.assets.delete(a);
        return sub ? [sub] : [];
      });
      this.ctx.detach(gone);
      return;
    }
    if (!initial && m.operation !== 'subscribe') {
      return this.error('invalid_message', 'expected "type":"market" or "operation":"subscribe"|"unsubscribe"');
    }
    const fresh = [...new Set(assets)].filter((a) => !this.subs.assets.has(a));
    const refused = await this.ctx.reserve(fresh.length);
    if (refused !== undefined) return this.error('subscription_limit', `depthgate: ${refused}`);
    for (const a of fresh) this.subs.assets.set(a, this.ctx.attach(CHANNEL, a, this.subs));
  }

  dropped(sub: Subscriber): void {
    this.subs.assets.delete(sub.topic.market);
  }
}

export const venueAClobStream: StreamModule<Platforms['venue-a-clob']> = {
  docs: {
    send: [
      {
        name: 'market',
        summary: 'Subscribes assets (again: adds)',
        example: {
          assets_ids: ['65818619657568813474341868652308942079804919287380422192892211131408793125422'],
          type: 'market',
        },
      },
      {
        name: 'operation',
        summary: 'Adds or removes assets',
        example: {
          assets_ids: ['65818619657568813474341868652308942079804919287380422192892211131408793125422'],
          operation: 'unsubscribe',
        },
      },
      { name: 'PING', summary: 'The text PING; answered PONG', example: 'PING' },
    ],
    receive: [
      {
        name: 'book',
        summary: 'An asset’s whole book: first, and after every resync',
        example: {
          event_type: 'book',
          asset_id: '6581…',
          market: '0xbd31…',
          bids: [{ price: '0.48', size: '30' }],
          asks: [{ price: '0.52', size: '25' }],
          timestamp: '1772895600000',
          hash: '…',
        },
      },
      {
        name: 'price_change',
        summary: 'New level sizes of the client’s assets, with each asset’s best prices',
        example: {
          market: '0xbd31…',
          price_changes: [
            { asset_id: '6581…', price: '0.5', size: '200', side: 'BUY', hash: '…', best_bid: '0.5', best_ask: '0.52' },
          ],
          timestamp: '1772895600123',
          event_type: 'price_change',
        },
      },
      {
        name: 'last_trade_price',
        summary: 'The platform’s message, verbatim',
        example: { event_type: 'last_trade_price', asset_id: '6581…', price: '0.5' },
      },
      noticeDoc('depthgate_notice', {
        event_type: 'depthgate_notice',
        notice: 'stale',
        reason: 'upstream_stall',
        asset_id: '6581…',
        market: '0xbd31…',
        timestamp: '1772895600200',
      }),
      {
        name: 'depthgate_error',
        summary: 'The gateway’s refusal (the platform has no error message)',
        example: { event_type: 'depthgate_error', error: 'invalid_message', message: 'invalid asset id "x"' },
      },
    ],
  },
  channels: [CHANNEL],
  paths: ['/ws/market'],
  limits: {
    // [3P] about 500 instruments per connection and about 10 connections before Polymarket throttles.
    topicsPerConnection: 500,
    maxConnections: 10,
    connectsPerSecond: 2,
    messagesPerSecond: 20,
    source: 'Polymarket CLOB market channel: ~500 assets per connection, ~10 connections [3P]',
  },
  create(ctx) {
    const url = ctx.platform.feeds.main;
    return {
      handshake: () => ({ url }),
      // [3P] no ping frames: the client sends the text PING about every 10 s and the server answers PONG.
      keepAlive: { text: 'PING', answer: 'PONG' },
      openSession: (c) => new ClobUpstream(c),
      openClient: (c) => new ClobClient(c as ClientContext<ClobSubs>),
      join(topic: Topic): string | undefined {
        const state = topic.state as ClobBook | undefined;
        if (!state) return undefined;
        if (state.join?.version !== topic.version) {
          // [3P] bids ascend and asks descend: the best price last on both sides, as the platform's book.
          const side = (code: SideCode, order: 'asc' | 'desc') =>
            state.book.sorted(code, order).map((l) => ({ price: l.p as string, size: l.s }));
          const bids = side(BID, 'asc');
          const asks = side(ASK, 'desc');
          const hash = createHash('sha1')
            .update(JSON.stringify([topic.market, bids, asks]))
            .digest('hex');
          state.join = {
            version: topic.version,
            text: JSON.stringify({
              event_type: 'book',
              asset_id: topic.market,
              market: state.market,
              bids,
              asks,
              timestamp: state.timestamp,
              hash,
            }),
          };
        }
        return state.join.text;
      },
      notice(sub: Subscriber, notice: Notice, reason: ResyncReason): string {
        const state = sub.topic.state as ClobBook | undefined;
        return JSON.stringify({
          event_type: 'depthgate_notice',
          notice,
          reason,
          asset_id: sub.topic.market,
          market: state?.market,
          timestamp: String(Date.now()),
        });
      },
      failed(_sub: Subscriber, error: { message: string }): string {
        return JSON.stringify({ event_type: 'depthgate_error', error: 'upstream_refused', message: error.message });
      },
      // No sequence numbers, and the best prices check only the top of the book: deeper losses show against REST.
      reconcile: {
        path: (asset) => `/book?token_id=${asset}`,
        parse: (body) => {
          const b = body as Record<'bids' | 'asks', unknown>;
          const side = (l: unknown) => levels(l).map((x) => [x.price, x.size] as [string, string]);
          return { bids: side(b.bids), asks: side(b.asks) };
        },
        kept: (topic) => {
          const state = topic.state as ClobBook | undefined;
          if (!state) return undefined;
          return { bids: state.book.pairs(BID), asks: state.book.pairs(ASK) };
        },
      },
    };
  },
};
