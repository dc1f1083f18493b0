// https://docs.kalshi.com/websockets/websocket-connection
/**
 * Kalshi (`venue-b`): `wss://api.elections.kalshi.com/trade-api/ws/v2`, channels `orderbook_delta`, `ticker`, `trade`.
 *
 * Clients speak Kalshi's protocol [V]: `{"id","cmd":"subscribe","params":{"channels":[…],"market_tickers":[…]}}`
 * answered with one `subscribed` per channel (its `sid`), `unsubscribe` (`sids`), `update_subscription` (`sid`,
 * `market_tickers`, `action` add_markets / delete_markets / get_snapshot), `list_subscriptions`; errors are
 * `{"id","type":"error","msg":{"code","msg"}}` with Kalshi's codes [3P]. The gateway answers these itself: each client
 * subscription has its own `sid` and `seq` (counting its messages, as Kalshi's do), and every upstream message is
 * re-framed with them; the payload (`msg`) is Kalshi's, byte for byte.
 *
 * Upstream, the handshake is RSA-PSS-signed over `timestamp + GET + /trade-api/ws/v2` [V]; each (channel, market)
 * is its own upstream subscription, so a `seq` gap names exactly the market whose book is in doubt, which is then
 * subscribed again for a fresh `orderbook_snapshot`. The gateway keeps each book (YES and NO bids, as Kalshi sends
 * them) to give a client that subscribes later Kalshi's own snapshot at once; a delta that would take a level below
 * zero is a resync too. Trades lost in a `seq` gap cannot be resent: subscribers get the notice.
 */
import { feedHandshakeHeaders, type Platforms } from '@depthgate/platforms';
import {
  ASK,
  BID,
  formatFixed,
  fractionDigits,
  jsonWritable,
  KALSHI_WS_ERRORS,
  kalshiWire,
  type KalshiWsError,
  LocalBook,
  type SideCode,
  parseObject,
  stringList,
  valueText,
} from '@depthgate/feeds';
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

const KALSHI_CHANNELS = ['orderbook_delta', 'ticker', 'trade'] as const;
const TICKER = /^[A-Za-z0-9._-]{1,100}$/;
/** Markets one command may name: the gateway's bound on one message's work. */
const MAX_MARKETS_PER_COMMAND = 1000;

/** Kalshi's WebSocket error codes (one table with the simulator's and the replay's). */
const ERR = KALSHI_WS_ERRORS;

/** One client subscription: its `sid`, its `seq` counter and its markets. */
interface KalshiSub {
  sid: number;
  seq: number;
  channel: string;
  /** The client's command id of the subscribe, for errors about it. */
  cmdId: unknown;
  markets: Map<string, Subscriber<KalshiSub>>;
}

type Style = 'fp' | 'dollars' | 'legacy';

/** An `orderbook_delta` topic's book, as Kalshi sends it: YES bids (BID side) and NO bids (ASK side). */
interface KalshiBook {
  book: LocalBook;
  style: Style;
  marketId: unknown;
  /** Fraction digits of the counts (2 for `_fp`). */
  places: number;
  snapshot?: { version: number; msg: string };
}

const SNAPSHOT_FIELDS: Record<Style, [string, string]> = {
  fp: ['yes_dollars_fp', 'no_dollars_fp'],
  dollars: ['yes_dollars', 'no_dollars'],
  legacy: ['yes', 'no'],
};

function styleOf(msg: Record<string, unknown>): Style {
  if ('yes_dollars_fp' in msg || 'no_dollars_fp' in msg) return 'fp';
  if ('yes_dollars' in msg || 'no_dollars' in msg) return 'dollars';
  return 'legacy';
}

/** A snapshot's levels as text pairs (legacy integer cents and counts as their decimal text). */
function levels(v: unknown): [string, string][] {
  if (!Array.isArray(v)) return [];
  const out: [string, string][] = [];
  for (const level of v as unknown[]) {
    if (!Array.isArray(level) || level.length < 2) throw new Error('malformed Kalshi level');
    const [p, q] = level as unknown[];
    const text = (x: unknown) => (typeof x === 'string' ? x : typeof x === 'number' ? String(x) : undefined);
    const pt = text(p);
    const qt = text(q);
    if (pt === undefined || qt === undefined) throw new Error('malformed Kalshi level');
    out.push([pt, qt]);
  }
  return out;
}

export function kalshiBookFrom(msg: Record<string, unknown>): KalshiBook {
  const style = styleOf(msg);
  const [yk, nk] = SNAPSHOT_FIELDS[style];
  const book = new LocalBook();
  let places = style === 'fp' ? 2 : 0;
  for (const [side, key] of [
    [BID, yk],
    [ASK, nk],
  ] as const) {
    for (const [p, q] of levels(msg[key])) {
      book.setLevel(side, p, q);
      places = Math.max(places, fractionDigits(q));
    }
  }
  return { book, style, marketId: msg.market_id, places };
}

/** The `msg` of Kalshi's `orderbook_snapshot` for the kept book: each side ascending by price, as Kalshi's. */
export function kalshiSnapshotMsg(market: string, s: KalshiBook, version: number): string {
  if (s.snapshot?.version === version) return s.snapshot.msg;
  const [yk, nk] = SNAPSHOT_FIELDS[s.style];
  const side = (code: SideCode) =>
    s.book.sorted(code, 'asc').map((l) => (s.style === 'legacy' ? [Number(l.p), Number(l.s)] : [l.p as string, l.s]));
  const msg = JSON.stringify({
    market_ticker: market,
    ...(s.marketId !== undefined ? { market_id: s.marketId } : {}),
    [yk]: side(BID),
    [nk]: side(ASK),
  });
  s.snapshot = { version, msg };
  return msg;
}

/** Applies an `orderbook_delta` msg; false when it cannot be applied (the book is not Kalshi's any more). */
export function applyKalshiDelta(s: KalshiBook, msg: Record<string, unknown>): boolean {
  const side = msg.side === 'yes' ? BID : msg.side === 'no' ? ASK : undefined;
  const price =
    s.style === 'legacy'
      ? typeof msg.price === 'number'
        ? String(msg.price)
        : undefined
      : typeof msg.price_dollars === 'string'
        ? msg.price_dollars
        : undefined;
  const delta =
    typeof msg.delta_fp === 'string' ? msg.delta_fp : typeof msg.delta === 'number' ? String(msg.delta) : undefined;
  if (side === undefined || price === undefined || delta === undefined) return false;
  s.places = Math.max(s.places, fractionDigits(delta));
  return s.book.addToLevel(side, price, delta, (q) => formatFixed(q, s.places));
}

const frame = (type: string, h: KalshiSub, msg: string, withSeq: boolean) =>
  withSeq
    ? `{"type":"${type}","sid":${h.sid},"seq":${++h.seq},"msg":${msg}}`
    : `{"type":"${type}","sid":${h.sid},"msg":${msg}}`;

class KalshiUpstream implements UpstreamSession {
  private nextId = 1;
  /** Subscribe commands waiting for `subscribed`; undefined once their topic left. */
  private readonly commands = new Map<number, Topic | undefined>();
  private readonly bySid = new Map<number, { topic: Topic; lastSeq: number | undefined }>();

  constructor(private readonly ctx: UpstreamContext) {}

  subscribe(topics: readonly Topic[]): void {
    for (const t of topics) {
      const id = this.nextId++;
      this.commands.set(id, t);
      t.ref = undefined;
      this.ctx.send(
        JSON.stringify({ id, cmd: 'subscribe', params: { channels: [t.channel], market_tickers: [t.market] } }),
      );
    }
  }

  unsubscribe(topics: readonly Topic[]): void {
    for (const t of topics) {
      const sid = t.ref as number | undefined;
      if (sid !== undefined) {
        this.bySid.delete(sid);
        t.ref = undefined;
        this.ctx.send(JSON.stringify({ id: this.nextId++, cmd: 'unsubscribe', params: { sids: [sid] } }));
      }
      for (const [id, c] of this.commands) if (c === t) this.commands.set(id, undefined);
    }
  }

  resync(topic: Topic): void {
    this.unsubscribe([topic]);
    this.subscribe([topic]);
  }

  onMessage(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    const type = m.type;
    const msg = (m.msg ?? {}) as Record<string, unknown>;
    if (type === 'subscribed') return this.subscribed(m, msg);
    if (type === 'error') return this.error(m, msg);
    const entry = typeof m.sid === 'number' ? this.bySid.get(m.sid) : undefined;
    if (!entry) return; // a subscription dropped, or a reply (`ok`, `unsubscribed`)
    const t = entry.topic;
    const seq = typeof m.seq === 'number' ? m.seq : undefined;
    const gap = seq !== undefined && entry.lastSeq !== undefined && seq !== entry.lastSeq + 1;
    if (seq !== undefined) entry.lastSeq = seq;
    const body = JSON.stringify(msg);
    switch (type) {
      case 'orderbook_snapshot': {
        const state = kalshiBookFrom(msg);
        t.state = state;
        this.ctx.snapshot(t, (sub) => frame('orderbook_snapshot', sub.handle as KalshiSub, body, true));
        return;
      }
      case 'orderbook_delta': {
        if (gap) return this.ctx.gap(t, 'sequence_gap');
        const state = t.state as KalshiBook | undefined;
        if (t.status !== 'live' || !state) return;
        if (!applyKalshiDelta(state, msg)) return this.ctx.gap(t, 'book_mismatch');
        t.version++;
        this.ctx.deliver(t, (sub) => frame('orderbook_delta', sub.handle as KalshiSub, body, true));
        return;
      }
      case 'trade':
        this.ctx.deliver(t, (sub) => frame('trade', sub.handle as KalshiSub, body, true));
        if (gap) this.ctx.gap(t, 'sequence_gap');
        return;
      default:
        // `ticker` and any other message of a subscribed channel, re-framed with the client's sid.
        if (typeof type === 'string' && /^[a-z_0-9]+$/.test(type))
          this.ctx.deliver(t, (sub) => frame(type, sub.handle as KalshiSub, body, seq !== undefined));
    }
  }

  private subscribed(m: Record<string, unknown>, msg: Record<string, unknown>): void {
    const id = typeof m.id === 'number' ? m.id : -1;
    const t = this.commands.get(id);
    this.commands.delete(id);
    const sid = msg.sid;
    if (typeof sid !== 'number') return;
    if (!t || this.ctx.topic(t.channel, t.market) !== t) {
      this.ctx.send(JSON.stringify({ id: this.nextId++, cmd: 'unsubscribe', params: { sids: [sid] } }));
      return;
    }
    t.ref = sid;
    this.bySid.set(sid, { topic: t, lastSeq: undefined });
    if (t.channel !== 'orderbook_delta') this.ctx.live(t);
  }

  private error(m: Record<string, unknown>, msg: Record<string, unknown>): void {
    const id = typeof m.id === 'number' ? m.id : -1;
    const t = this.commands.get(id);
    this.commands.delete(id);
    const error = { code: typeof msg.code === 'number' ? msg.code : undefined, message: String(msg.msg ?? 'error') };
    if (t) this.ctx.fail(t, error);
    else this.ctx.logger.warn({ error }, 'Kalshi error');
  }
}

class KalshiClient {
  private nextSid = 1;
  private readonly subs = new Map<number, KalshiSub>();

  constructor(private readonly ctx: ClientContext<KalshiSub>) {}

  private reply(value: unknown): void {
    this.ctx.send(JSON.stringify(value));
  }

  private error(id: unknown, error: KalshiWsError, detail?: string): void {
    this.ctx.send(kalshiWire.refusal(id, error, detail));
  }

  async onMessage(text: string): Promise<void> {
    const m = parseObject(text);
    // Every answer echoes the id: one nested too deep to be written back cannot be answered as its command.
    if (!m || !jsonWritable(m.id)) return this.error(null, ERR.unprocessable);
    const id = m.id;
    const params = m.params;
    const p = (params && typeof params === 'object' ? params : undefined) as Record<string, unknown> | undefined;
    switch (m.cmd) {
      case 'subscribe':
        return this.subscribe(id, p);
      case 'unsubscribe':
        return this.unsubscribe(id, p);
      case 'update_subscription':
        return this.update(id, p);
      case 'list_subscriptions':
        return this.reply({
          id,
          type: 'ok',
          msg: [...this.subs.values()].map((s) => ({ channel: s.channel, sid: s.sid })),
        });
      default:
        return this.error(id, ERR.command);
    }
  }

  /** The markets a command names, validated; an error sent (and undefined) otherwise. */
  private markets(id: unknown, p: Record<string, unknown>): string[] | undefined {
    const list: string[] = [];
    if (p.market_ticker !== undefined) {
      if (typeof p.market_ticker !== 'string') return void this.error(id, ERR.parameter, 'market_ticker');
      list.push(p.market_ticker);
    }
    if (p.market_tickers !== undefined) {
      const more = stringList(p.market_tickers);
      if (!more) return void this.error(id, ERR.parameter, 'market_tickers');
      list.push(...more);
    }
    const unique = [...new Set(list)];
    if (unique.length === 0) {
      return void this.error(id, ERR.market, 'depthgate subscribes named markets only (market_tickers)');
    }
    if (unique.length > MAX_MARKETS_PER_COMMAND)
      return void this.error(id, ERR.parameter, `at most ${MAX_MARKETS_PER_COMMAND} markets per command`);
    const bad = unique.find((t) => !TICKER.test(t));
    if (bad !== undefined) return void this.error(id, ERR.parameter, `market ticker "${bad.slice(0, 100)}"`);
    return unique;
  }

  private async subscribe(id: unknown, p: Record<string, unknown> | undefined): Promise<void> {
    if (!p) return this.error(id, ERR.params);
    const channels = stringList(p.channels);
    if (!channels || channels.length === 0) return this.error(id, ERR.channels);
    const unknown = channels.find((c) => !(KALSHI_CHANNELS as readonly string[]).includes(c));
    if (unknown !== undefined) return this.error(id, ERR.channel, unknown.slice(0, 100));
    const only = this.ctx.onlyChannel;
    if (only !== undefined && channels.some((c) => c !== only))
      return this.error(id, ERR.channel, `this connection (/ws/…/${only}) carries ${only} only`);
    const markets = this.markets(id, p);
    if (!markets) return;
    const wanted = [...new Set(channels)];
    const refused = await this.ctx.reserve(wanted.length * markets.length);
    if (refused !== undefined) return this.error(id, ERR.channelError, `depthgate: ${refused}`);
    for (const channel of wanted) {
      const h: KalshiSub = { sid: this.nextSid++, seq: 0, channel, cmdId: id, markets: new Map() };
      this.subs.set(h.sid, h);
      this.reply({ id, type: 'subscribed', msg: { channel, sid: h.sid } });
      for (const market of markets) h.markets.set(market, this.ctx.attach(channel, market, h));
    }
  }

  private unsubscribe(id: unknown, p: Record<string, unknown> | undefined): void {
    const sids = p && Array.isArray(p.sids) ? (p.sids as unknown[]) : undefined;
    if (!sids || sids.length === 0) return this.error(id, ERR.sids);
    for (const sid of sids) {
      const h = typeof sid === 'number' ? this.subs.get(sid) : undefined;
      if (!h) {
        this.error(id, ERR.sid, valueText(sid).slice(0, 40));
        continue;
      }
      this.subs.delete(h.sid);
      this.ctx.detach(h.markets.values());
      h.markets.clear();
      this.reply({ id, sid: h.sid, seq: ++h.seq, type: 'unsubscribed' });
    }
  }

  private async update(id: unknown, p: Record<string, unknown> | undefined): Promise<void> {
    if (!p) return this.error(id, ERR.params);
    const sids = Array.isArray(p.sids) ? (p.sids as unknown[]) : p.sid !== undefined ? [p.sid] : [];
    if (sids.length !== 1) return this.error(id, ERR.oneSid);
    const h = typeof sids[0] === 'number' ? this.subs.get(sids[0]) : undefined;
    if (!h) return this.error(id, ERR.sid, valueText(sids[0]).slice(0, 40));
    if (typeof p.action !== 'string') return this.error(id, ERR.actionRequired);
    const named = p.market_ticker !== undefined || p.market_tickers !== undefined;
    switch (p.action) {
      case 'add_markets': {
        const markets = this.markets(id, p);
        if (!markets) return;
        const fresh = markets.filter((t) => !h.markets.has(t));
        const refused = await this.ctx.reserve(fresh.length);
        if (refused !== undefined) return this.error(id, ERR.channelError, `depthgate: ${refused}`);
        if (!this.subs.has(h.sid)) {
          // Unsubscribed meanwhile (a client connection hands over one message at a time, so not through it): the
          // places go back, and the client is told as if the unsubscribe had come first.
          this.ctx.release(fresh.length);
          return this.error(id, ERR.sid, String(h.sid));
        }
        for (const market of fresh) h.markets.set(market, this.ctx.attach(h.channel, market, h));
        break;
      }
      case 'delete_markets': {
        const markets = this.markets(id, p);
        if (!markets) return;
        const gone = markets.flatMap((t) => {
          const sub = h.markets.get(t);
          h.markets.delete(t);
          return sub ? [sub] : [];
        });
        this.ctx.detach(gone);
        break;
      }
      case 'get_snapshot': {
        if (h.channel !== 'orderbook_delta') return this.error(id, ERR.action);
        const markets = named ? this.markets(id, p) : [...h.markets.keys()];
        if (!markets) return;
        for (const t of markets) {
          const sub = h.markets.get(t);
          const snapshot = sub ? kalshiStream.join(sub.topic, sub) : undefined;
          if (snapshot !== undefined) this.ctx.send(snapshot);
        }
        break;
      }
      default:
        return this.error(id, ERR.action, p.action.slice(0, 40));
    }
    this.reply({ id, sid: h.sid, seq: h.seq, type: 'ok', msg: { market_tickers: [...h.markets.keys()] } });
  }

  dropped(sub: Subscriber<KalshiSub>): void {
    sub.handle.markets.delete(sub.topic.market);
  }
}

/** What a client gets first, its notices and refusals: the same for every Kalshi stream. */
const kalshiStream = {
  join(topic: Topic, sub: Subscriber): string | undefined {
    const state = topic.state as KalshiBook | undefined;
    if (topic.channel !== 'orderbook_delta' || !state) return undefined;
    return frame(
      'orderbook_snapshot',
      sub.handle as KalshiSub,
      kalshiSnapshotMsg(topic.market, state, topic.version),
      true,
    );
  },
  notice(sub: Subscriber, notice: Notice, reason: ResyncReason): string {
    const h = sub.handle as KalshiSub;
    return JSON.stringify({
      type: 'depthgate_notice',
      sid: h.sid,
      msg: { notice, reason, channel: h.channel, market_ticker: sub.topic.market },
    });
  },
  failed(sub: Subscriber, error: { code?: number; message: string }): string {
    const h = sub.handle as KalshiSub;
    return JSON.stringify({
      id: h.cmdId ?? null,
      type: 'error',
      msg: { code: error.code ?? ERR.channelError[0], msg: error.message },
    });
  },
};

export const venueBStream: StreamModule<Platforms['venue-b']> = {
  docs: {
    send: [
      {
        name: 'subscribe',
        summary: 'One subscription (sid) per channel; named markets only',
        example: {
          id: 1,
          cmd: 'subscribe',
          params: { channels: ['orderbook_delta'], market_tickers: ['KXBTCD-26MAR07-T100000'] },
        },
      },
      {
        name: 'unsubscribe',
        summary: 'Ends subscriptions',
        example: { id: 2, cmd: 'unsubscribe', params: { sids: [1] } },
      },
      {
        name: 'update_subscription',
        summary: 'add_markets, delete_markets, or get_snapshot (the kept book, at once)',
        example: {
          id: 3,
          cmd: 'update_subscription',
          params: { sid: 1, market_tickers: ['KXBTCD-26MAR07-T100000'], action: 'get_snapshot' },
        },
      },
      {
        name: 'list_subscriptions',
        summary: 'The connection’s subscriptions',
        example: { id: 4, cmd: 'list_subscriptions' },
      },
    ],
    receive: [
      {
        name: 'subscribed',
        summary: 'Per channel, with its sid',
        example: { id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } },
      },
      {
        name: 'orderbook_snapshot',
        summary: 'The whole book (YES and NO bids): first, after every resync, and on get_snapshot',
        example: {
          type: 'orderbook_snapshot',
          sid: 1,
          seq: 1,
          msg: {
            market_ticker: 'KXBTCD-26MAR07-T100000',
            yes_dollars_fp: [['0.4500', '1355.00']],
            no_dollars_fp: [['0.5300', '12.00']],
          },
        },
      },
      {
        name: 'orderbook_delta',
        summary: 'A signed change of one level; seq counts per sid',
        example: {
          type: 'orderbook_delta',
          sid: 1,
          seq: 2,
          msg: {
            market_ticker: 'KXBTCD-26MAR07-T100000',
            price_dollars: '0.4500',
            delta_fp: '-20.00',
            side: 'yes',
            ts: '2026-03-07T15:00:00.123000Z',
          },
        },
      },
      {
        name: 'ticker',
        summary: 'Kalshi’s ticker message, re-framed with the client’s sid',
        example: {
          type: 'ticker',
          sid: 2,
          msg: { market_ticker: 'KXBTCD-26MAR07-T100000', yes_bid_dollars: '0.4500' },
        },
      },
      {
        name: 'trade',
        summary: 'Kalshi’s trade message, with the client’s sid and seq',
        example: {
          type: 'trade',
          sid: 3,
          seq: 1,
          msg: { market_ticker: 'KXBTCD-26MAR07-T100000', count_fp: '10.00', taker_side: 'yes' },
        },
      },
      noticeDoc(
        'depthgate_notice',
        {
          type: 'depthgate_notice',
          sid: 1,
          msg: {
            notice: 'stale',
            reason: 'upstream_stall',
            channel: 'orderbook_delta',
            market_ticker: 'KXBTCD-26MAR07-T100000',
          },
        },
        ['msg'],
      ),
      {
        name: 'error',
        summary: 'Kalshi’s error form and codes; the gateway’s own refusals start with "depthgate:"',
        example: { id: 1, type: 'error', msg: { code: 16, msg: 'Market not found: KXNOSUCH' } },
      },
    ],
  },
  channels: KALSHI_CHANNELS,
  paths: ['/trade-api/ws/v2'],
  // Kalshi's limits on WebSocket connections and subscriptions are not documented [U]: conservative values.
  limits: {
    topicsPerConnection: 1000,
    maxConnections: 20,
    connectsPerSecond: 5,
    messagesPerSecond: 50,
    source: 'Kalshi documents no WebSocket limits [U]; conservative defaults',
  },
  create(ctx) {
    const signer = ctx.platform.signer;
    const feedUrl = ctx.platform.feeds.main;
    return {
      handshake: (nowMs) => ({ url: feedUrl, headers: feedHandshakeHeaders(signer, feedUrl, nowMs) }),
      keepAlive: 'ping',
      // Kalshi's WebSocket API needs an API key for its order-book channel [V]; the gateway holds one or none.
      unavailable: signer ? undefined : 'Kalshi streams need KALSHI_ACCESS_KEY and KALSHI_PRIVATE_KEY on the gateway',
      openSession: (c) => new KalshiUpstream(c),
      openClient: (c) => new KalshiClient(c as ClientContext<KalshiSub>),
      ...kalshiStream,
    };
  },
};
