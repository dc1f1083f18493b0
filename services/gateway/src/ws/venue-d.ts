// https://docs.cdp.coinbase.com/exchange/websocket-feed/overview
/**
 * Coinbase Exchange (`venue-d`): `wss://ws-feed.exchange.coinbase.com` [V], channels `level2` (and `level2_batch`),
 * `ticker`, `heartbeat`, `matches`.
 *
 * Clients speak its protocol: `{"type":"subscribe"|"unsubscribe","product_ids":[…],"channels":["level2",
 * {"name":"ticker","product_ids":[…]}]}`, answered with the connection's `subscriptions`; they receive `snapshot`,
 * `l2update`, `ticker`, `heartbeat`, `match` (and `last_match` first) verbatim; errors are `{"type":"error","message",
 * "reason"}`. Authentication fields a client adds to its subscribe are ignored: they never leave the gateway.
 *
 * Upstream, `level2` needs a signed subscribe (`key`, `passphrase`, `timestamp`, `signature` over
 * `timestamp + GET/users/self/verify`) [3P]: the gateway signs it with COINBASE_API_* when configured and otherwise
 * subscribes `level2_batch`, the public variant with the same messages gathered in 50 ms windows [V]. A client's
 * `level2` and `level2_batch` share that one book subscription per product. The gateway also subscribes `heartbeat`
 * for every product it holds: one message per second per product [V], its proof that the connection is alive. It
 * keeps each book (late joiners get a `snapshot`), the last `ticker` and the last match (sent as `last_match`).
 * `level2` carries no sequence numbers: the books are compared with the REST book (WS_RECONCILE_INTERVAL_MS).
 */
import { coinbaseSignature, type Platforms } from '@depthgate/platforms';
import { ASK, BID, LocalBook, type SideCode, parseObject, stringList, valueText } from '@depthgate/feeds';
import {
  noticeDoc,
  type ClientContext,
  type Notice,
  type ResyncReason,
  type StreamModule,
  type Subscriber,
  type Topic,
  type UpstreamContext,
  type UpstreamSession,
} from './types';

const COINBASE_CHANNELS = ['level2', 'level2_batch', 'ticker', 'heartbeat', 'matches'] as const;
type ClientChannel = (typeof COINBASE_CHANNELS)[number];
/** The topic a client channel shares: both book channels are one book. */
const TOPIC_OF: Record<ClientChannel, string> = {
  level2: 'level2',
  level2_batch: 'level2',
  ticker: 'ticker',
  heartbeat: 'heartbeat',
  matches: 'matches',
};
const PRODUCT = /^[A-Z0-9]{1,12}-[A-Z0-9]{1,12}$/;
const SIDE: Record<string, SideCode> = { buy: BID, sell: ASK };

interface BookState {
  book: LocalBook;
  time: unknown;
  join?: { version: number; text: string };
}

interface Credentials {
  key: string;
  secret: string;
  passphrase: string;
}

/** [3P] the feed's signed subscribe: as a REST `GET /users/self/verify` with an empty body. */
function signedSubscribeFields(c: Credentials, nowMs: number): Record<string, string> {
  const seconds = Math.floor(nowMs / 1000);
  const signature = coinbaseSignature(c.secret, seconds, 'GET', '/users/self/verify', '');
  return { key: c.key, passphrase: c.passphrase, timestamp: String(seconds), signature };
}

function levels(v: unknown): [string, string][] {
  if (!Array.isArray(v)) throw new Error('snapshot without levels');
  return (v as unknown[]).map((l) => {
    if (!Array.isArray(l) || typeof l[0] !== 'string' || typeof l[1] !== 'string') throw new Error('malformed level');
    return [l[0], l[1]];
  });
}

class CoinbaseUpstream implements UpstreamSession {
  /** Upstream (channel, product) pairs subscribed on this connection, the gateway's own heartbeats included. */
  private readonly held = new Set<string>();

  constructor(
    private readonly ctx: UpstreamContext,
    private readonly bookChannel: 'level2' | 'level2_batch',
    private readonly credentials: Credentials | undefined,
  ) {}

  private upstreamChannel(t: Topic): string {
    return t.channel === 'level2' ? this.bookChannel : t.channel;
  }

  private send(type: 'subscribe' | 'unsubscribe', pairs: [string, string][]): void {
    if (pairs.length === 0) return;
    const byChannel = new Map<string, string[]>();
    for (const [c, p] of pairs) {
      let list = byChannel.get(c);
      if (!list) byChannel.set(c, (list = []));
      list.push(p);
    }
    const signed = type === 'subscribe' && byChannel.has('level2') && this.credentials;
    this.ctx.send(
      JSON.stringify({
        type,
        channels: [...byChannel].map(([name, product_ids]) => ({ name, product_ids })),
        ...(signed && this.credentials ? signedSubscribeFields(this.credentials, Date.now()) : {}),
      }),
    );
  }

  subscribe(topics: readonly Topic[]): void {
    const pairs: [string, string][] = [];
    for (const t of topics) {
      for (const c of [this.upstreamChannel(t), 'heartbeat']) {
        const k = `${c} ${t.market}`;
        if (this.held.has(k)) continue;
        this.held.add(k);
        pairs.push([c, t.market]);
      }
      // Ticker, matches and heartbeat have no book: live once asked for (their first message follows).
      if (t.channel !== 'level2') this.ctx.live(t);
    }
    this.send('subscribe', pairs);
  }

  unsubscribe(topics: readonly Topic[]): void {
    const pairs: [string, string][] = [];
    for (const t of topics) {
      const c = this.upstreamChannel(t);
      if (c !== 'heartbeat' && this.held.delete(`${c} ${t.market}`)) pairs.push([c, t.market]);
      const stillHeld = COINBASE_TOPICS.some((x) => this.ctx.topic(x, t.market) !== undefined);
      if (!stillHeld && this.held.delete(`heartbeat ${t.market}`)) pairs.push(['heartbeat', t.market]);
    }
    this.send('unsubscribe', pairs);
  }

  resync(topic: Topic): void {
    const c = this.upstreamChannel(topic);
    this.held.delete(`${c} ${topic.market}`);
    this.send('unsubscribe', [[c, topic.market]]);
    this.subscribe([topic]);
  }

  onMessage(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    const type = m.type;
    const product = typeof m.product_id === 'string' ? m.product_id : undefined;
    if (type === 'error') return this.error(m);
    if (product === undefined) return; // `subscriptions`
    switch (type) {
      case 'snapshot': {
        const t = this.ctx.topic('level2', product);
        if (!t) return;
        const book = new LocalBook();
        for (const [p, s] of levels(m.bids)) book.setLevel(BID, p, s);
        for (const [p, s] of levels(m.asks)) book.setLevel(ASK, p, s);
        t.state = { book, time: m.time } satisfies BookState;
        return this.ctx.snapshot(t, text);
      }
      case 'l2update': {
        const t = this.ctx.topic('level2', product);
        const state = t?.state as BookState | undefined;
        if (!t || !state || t.status !== 'live') return;
        const changes = m.changes;
        if (!Array.isArray(changes)) throw new Error('l2update without changes');
        for (const c of changes as unknown[]) {
          if (!Array.isArray(c) || typeof c[0] !== 'string' || !(c[0] in SIDE)) throw new Error('malformed change');
          state.book.setLevel(SIDE[c[0]] as SideCode, String(c[1]), String(c[2]));
        }
        state.time = m.time;
        t.version++;
        return this.ctx.deliver(t, text);
      }
      case 'ticker': {
        const t = this.ctx.topic('ticker', product);
        if (!t) return;
        t.state = text;
        return this.ctx.deliver(t, text);
      }
      case 'match':
      case 'last_match': {
        const t = this.ctx.topic('matches', product);
        if (!t) return;
        t.state = m;
        return this.ctx.deliver(t, text);
      }
      case 'heartbeat': {
        const t = this.ctx.topic('heartbeat', product);
        if (t) this.ctx.deliver(t, text);
        return;
      }
    }
  }

  /** `"<product> is not a valid product"` fails that product's topics; other errors are logged. */
  private error(m: Record<string, unknown>): void {
    const reason = String(m.reason ?? '');
    const product = /^(\S+) is not a valid product/.exec(reason)?.[1];
    if (product === undefined) {
      this.ctx.logger.warn({ message: m.message, reason }, 'Coinbase feed error');
      return;
    }
    for (const c of COINBASE_TOPICS) {
      const t = this.ctx.topic(c, product);
      if (t) this.ctx.fail(t, { message: reason });
    }
  }
}

const COINBASE_TOPICS = ['level2', 'ticker', 'heartbeat', 'matches'];

class CoinbaseClient {
  /** Topic key → the subscription and the client channels that share it. */
  private readonly subs = new Map<string, { sub: Subscriber<undefined>; names: Set<ClientChannel> }>();

  constructor(private readonly ctx: ClientContext<undefined>) {}

  private error(reason: string): void {
    this.ctx.send(JSON.stringify({ type: 'error', message: 'Failed to subscribe', reason }));
  }

  async onMessage(text: string): Promise<void> {
    const m = parseObject(text);
    if (!m || (m.type !== 'subscribe' && m.type !== 'unsubscribe')) {
      return this.error('type must be subscribe or unsubscribe');
    }
    const top = m.product_ids === undefined ? [] : stringList(m.product_ids);
    if (!top) return this.error('product_ids must be a list of strings');
    const pairs: [ClientChannel, string][] = [];
    for (const raw of Array.isArray(m.channels) ? (m.channels as unknown[]) : []) {
      const c = (raw ?? {}) as { name?: unknown; product_ids?: unknown };
      const name = typeof raw === 'string' ? raw : c.name;
      if (typeof name !== 'string' || !(COINBASE_CHANNELS as readonly string[]).includes(name)) {
        return this.error(`${valueText(name).slice(0, 40)} is not a valid channel`);
      }
      if (this.ctx.onlyChannel !== undefined && name !== this.ctx.onlyChannel) {
        return this.error(`this connection (/ws/…/${this.ctx.onlyChannel}) carries ${this.ctx.onlyChannel} only`);
      }
      const products = typeof raw === 'string' || c.product_ids === undefined ? top : stringList(c.product_ids);
      if (!products) return this.error('product_ids must be a list of strings');
      for (const p of products) {
        if (!PRODUCT.test(p)) return this.error(`${p.slice(0, 40)} is not a valid product`);
        pairs.push([name as ClientChannel, p]);
      }
    }
    if (pairs.length === 0) return this.error('No channels or product ids provided');
    // The topics a place is reserved for. One held before the reservation and dropped while it was awaited (its
    // topic failed upstream; the client was told) has none: it is not attached again.
    const fresh = new Set<string>();
    if (m.type === 'subscribe') {
      for (const [c, p] of pairs) if (!this.subs.has(`${TOPIC_OF[c]} ${p}`)) fresh.add(`${TOPIC_OF[c]} ${p}`);
      const refused = await this.ctx.reserve(fresh.size);
      if (refused !== undefined) return this.error(`depthgate: ${refused}`);
    }
    // The reply comes first, then each new subscription's first message (the platform's order).
    const attach: [ClientChannel, string][] = [];
    for (const [c, p] of pairs) {
      const key = `${TOPIC_OF[c]} ${p}`;
      const held = this.subs.get(key);
      if (m.type === 'subscribe') {
        if (held) held.names.add(c);
        else if (fresh.delete(key)) attach.push([c, p]); // each reserved topic once, under the first channel naming it
      } else if (held) {
        held.names.delete(c);
        if (held.names.size === 0) {
          this.subs.delete(key);
          this.ctx.detach([held.sub]);
        }
      }
    }
    const listed = new Map<ClientChannel, string[]>();
    for (const [c, p] of attach) listed.set(c, [...(listed.get(c) ?? []), p]);
    this.ctx.send(JSON.stringify({ type: 'subscriptions', channels: this.list(listed) }));
    for (const [c, p] of attach) {
      const sub = this.ctx.attach(TOPIC_OF[c], p, undefined);
      this.subs.set(`${TOPIC_OF[c]} ${p}`, { sub, names: new Set([c]) });
    }
  }

  /** The connection's channels with their products (those about to be attached included). */
  private list(extra: Map<ClientChannel, string[]>) {
    return COINBASE_CHANNELS.map((name) => {
      const products = [...this.subs.values()].filter((s) => s.names.has(name)).map((s) => s.sub.topic.market);
      return { name, product_ids: [...products, ...(extra.get(name) ?? [])] };
    }).filter((c) => c.product_ids.length > 0);
  }

  dropped(sub: Subscriber): void {
    this.subs.delete(sub.topic.key);
  }
}

export const venueDStream: StreamModule<Platforms['venue-d']> = {
  docs: {
    send: [
      {
        name: 'subscribe',
        summary: 'Channels for products; authentication fields are ignored (the gateway signs its own)',
        example: {
          type: 'subscribe',
          product_ids: ['BTC-USD'],
          channels: ['level2', { name: 'ticker', product_ids: ['ETH-USD'] }],
        },
      },
      {
        name: 'unsubscribe',
        summary: 'Stops channels of products',
        example: { type: 'unsubscribe', product_ids: ['BTC-USD'], channels: ['level2'] },
      },
    ],
    receive: [
      {
        name: 'subscriptions',
        summary: 'The connection’s channels',
        example: { type: 'subscriptions', channels: [{ name: 'level2', product_ids: ['BTC-USD'] }] },
      },
      {
        name: 'snapshot',
        summary: 'The whole book: first, and after every resync',
        example: {
          type: 'snapshot',
          product_id: 'BTC-USD',
          bids: [['87118.91', '0.92554796']],
          asks: [['87119.02', '0.10000000']],
        },
      },
      {
        name: 'l2update',
        summary: 'Changed levels with their new size',
        example: {
          type: 'l2update',
          product_id: 'BTC-USD',
          changes: [['buy', '87118.85', '0.88079795']],
          time: '2026-03-07T15:00:00.123000Z',
        },
      },
      {
        name: 'ticker',
        summary: 'After each trade; the last one first',
        example: {
          type: 'ticker',
          product_id: 'BTC-USD',
          price: '87118.95',
          best_bid: '87118.91',
          best_ask: '87119.02',
        },
      },
      {
        name: 'match',
        summary: 'Each trade; `last_match` first',
        example: {
          type: 'match',
          trade_id: 86326523,
          product_id: 'BTC-USD',
          price: '87118.91',
          size: '0.01',
          side: 'buy',
        },
      },
      {
        name: 'heartbeat',
        summary: 'Every second per product',
        example: { type: 'heartbeat', product_id: 'BTC-USD', sequence: 13051505700, last_trade_id: 86326523 },
      },
      noticeDoc('depthgate_notice', {
        type: 'depthgate_notice',
        notice: 'stale',
        reason: 'upstream_stall',
        channel: 'level2',
        product_id: 'BTC-USD',
      }),
      {
        name: 'error',
        summary: 'Coinbase’s error form',
        example: { type: 'error', message: 'Failed to subscribe', reason: 'full is not a valid channel' },
      },
    ],
  },
  channels: COINBASE_CHANNELS,
  paths: ['/'],
  limits: {
    topicsPerConnection: 200,
    maxConnections: 20,
    // [V] 8 connection requests per second per IP (bursts of 20); 100 client messages per second per IP.
    connectsPerSecond: 8,
    messagesPerSecond: 50,
    source: 'Coinbase Exchange: 8 connections/s and 100 messages/s per IP [V]; subscriptions per connection [U]',
  },
  create(ctx) {
    const url = ctx.platform.feeds.main;
    const hmac = ctx.platform.credentials.hmac;
    const credentials = hmac ? { key: hmac.key, secret: hmac.secret, passphrase: hmac.passphrase } : undefined;
    const bookChannel = credentials ? 'level2' : 'level2_batch';
    return {
      handshake: () => ({ url }),
      keepAlive: 'ping',
      openSession: (c) => new CoinbaseUpstream(c, bookChannel, credentials),
      openClient: (c) => new CoinbaseClient(c as ClientContext<undefined>),
      join(topic: Topic): string | undefined {
        if (topic.channel === 'ticker') return typeof topic.state === 'string' ? topic.state : undefined;
        if (topic.channel === 'matches') {
          const last = topic.state as Record<string, unknown> | undefined;
          return last ? JSON.stringify({ ...last, type: 'last_match' }) : undefined;
        }
        if (topic.channel !== 'level2') return undefined;
        const state = topic.state as BookState | undefined;
        if (!state) return undefined;
        if (state.join?.version !== topic.version) {
          const side = (code: SideCode, order: 'asc' | 'desc') => state.book.sorted(code, order).map((l) => [l.p, l.s]);
          const text = JSON.stringify({
            type: 'snapshot',
            product_id: topic.market,
            bids: side(BID, 'desc'),
            asks: side(ASK, 'asc'),
            ...(state.time !== undefined ? { time: state.time } : {}),
          });
          state.join = { version: topic.version, text };
        }
        return state.join.text;
      },
      notice(sub: Subscriber, notice: Notice, reason: ResyncReason): string {
        return JSON.stringify({
          type: 'depthgate_notice',
          notice,
          reason,
          channel: sub.topic.channel,
          product_id: sub.topic.market,
        });
      },
      failed(_sub: Subscriber, error: { message: string }): string {
        return JSON.stringify({ type: 'error', message: 'Failed to subscribe', reason: error.message });
      },
      reconcile: {
        path: (product) => `/products/${encodeURIComponent(product)}/book?level=2`,
        parse: (body) => {
          const b = body as Record<'bids' | 'asks', unknown>;
          const side = (l: unknown) =>
            (Array.isArray(l) ? (l as unknown[][]) : []).map((x) => [String(x[0]), String(x[1])] as [string, string]);
          return { bids: side(b.bids), asks: side(b.asks) };
        },
        kept: (topic) => {
          if (topic.channel !== 'level2') return undefined;
          const state = topic.state as BookState | undefined;
          if (!state) return undefined;
          return { bids: state.book.pairs(BID), asks: state.book.pairs(ASK) };
        },
      },
    };
  },
};
