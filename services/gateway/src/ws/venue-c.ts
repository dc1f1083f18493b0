// https://docs.gemini.com/websocket-api/#market-data-version-2
/**
 * Gemini (`venue-c`): market data v2, `wss://api.gemini.com/v2/marketdata` ([U] URL, [3P] format), channel `l2`.
 *
 * Clients speak its protocol: `{"type":"subscribe"|"unsubscribe","subscriptions":[{"name":"l2","symbols":[…]}]}`;
 * they receive `l2_updates` (the first one of a symbol carries the whole book, with `trades` and `auction_events`;
 * later ones the changed levels with their new absolute size, "0" removing a level) and `trade` messages, verbatim;
 * errors are `{"type":"error","result":"error","reason","message"}`; `{"type":"heartbeat","timestamp"}` keeps the
 * connection alive. Each symbol is one upstream subscription; the gateway keeps its book. A client joining later gets
 * the book as a first `l2_updates` at once. The feed carries no sequence numbers, so a resync (after a lost
 * connection, a stall, or a REST book that disagrees) cannot rely on the client resetting its book: it is an
 * `l2_updates` in the first message's form listing every level of the fresh book and, with size "0", every level of
 * the old one that is gone, so that applying it to any earlier state gives the platform's book.
 */
import type { Platforms } from '@depthgate/platforms';
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

const SYMBOL = /^[A-Z0-9-]{1,64}$/;
const CHANGE_SIDE: Record<string, SideCode> = { buy: BID, sell: ASK };

interface GeminiBook {
  book: LocalBook;
  join?: { version: number; text: string };
}

type Change = [string, string, string];

function changesOf(m: Record<string, unknown>): Change[] {
  const raw = m.changes;
  if (!Array.isArray(raw)) throw new Error('l2_updates without changes');
  for (const c of raw as unknown[]) {
    if (!Array.isArray(c) || c.length < 3 || !c.every((x) => typeof x === 'string') || !(String(c[0]) in CHANGE_SIDE))
      throw new Error('malformed l2_updates change');
  }
  return raw as Change[];
}

function bookFrom(changes: readonly Change[]): LocalBook {
  const book = new LocalBook();
  for (const [side, p, q] of changes) book.setLevel(CHANGE_SIDE[side] as SideCode, p, q);
  return book;
}

/** Every level of a book as `l2_updates` changes: bids best first, then asks best first. */
function levelsOf(book: LocalBook): Change[] {
  return [
    ...book.sorted(BID, 'desc').map((l): Change => ['buy', l.p as string, l.s]),
    ...book.sorted(ASK, 'asc').map((l): Change => ['sell', l.p as string, l.s]),
  ];
}

const initialMessage = (symbol: string, changes: Change[], trades: unknown = [], auctions: unknown = []) =>
  JSON.stringify({ type: 'l2_updates', symbol, changes, trades, auction_events: auctions });

class GeminiUpstream implements UpstreamSession {
  /** Topics just subscribed: their next `l2_updates` is the whole book [3P]. */
  private readonly fresh = new Set<Topic>();

  constructor(
    private readonly ctx: UpstreamContext,
    private readonly resubscribeDelayMs: number,
  ) {}

  private send(type: 'subscribe' | 'unsubscribe', topics: readonly Topic[]): void {
    if (topics.length === 0) return;
    this.ctx.send(JSON.stringify({ type, subscriptions: [{ name: 'l2', symbols: topics.map((t) => t.market) }] }));
  }

  subscribe(topics: readonly Topic[]): void {
    for (const t of topics) this.fresh.add(t);
    this.send('subscribe', topics);
  }

  unsubscribe(topics: readonly Topic[]): void {
    for (const t of topics) this.fresh.delete(t);
    this.send('unsubscribe', topics);
  }

  /** Unsubscribes, then (after Gemini's pause [3P]) subscribes again: the next first message is a fresh book. */
  resync(topic: Topic): void {
    this.unsubscribe([topic]);
    setTimeout(() => {
      if (this.ctx.topic(topic.channel, topic.market) === topic) this.subscribe([topic]);
    }, this.resubscribeDelayMs).unref();
  }

  onMessage(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    const type = m.type;
    if (type === 'heartbeat') return;
    if (type === 'error') {
      const symbol = /invalid symbol (\S+)/i.exec(String(m.message ?? ''))?.[1]?.toUpperCase();
      const t = symbol === undefined ? undefined : this.ctx.topic('l2', symbol);
      if (t) this.ctx.fail(t, { message: String(m.message) });
      else this.ctx.logger.warn({ error: m }, 'Gemini error');
      return;
    }
    const symbol = typeof m.symbol === 'string' ? m.symbol.toUpperCase() : undefined;
    const t = symbol === undefined ? undefined : this.ctx.topic('l2', symbol);
    if (!t || symbol === undefined) return;
    if (type === 'trade') {
      if (t.status === 'live') this.ctx.deliver(t, text);
      return;
    }
    if (type !== 'l2_updates') return;
    const changes = changesOf(m);
    const state = t.state as GeminiBook | undefined;
    if (!this.fresh.delete(t)) {
      // A change of a live book; or, while resyncing, the old subscription's tail (the fresh book follows).
      if (t.status !== 'live' || !state) return;
      for (const [side, p, q] of changes) state.book.setLevel(CHANGE_SIDE[side] as SideCode, p, q);
      t.version++;
      this.ctx.deliver(t, text);
      return;
    }
    const book = bookFrom(changes);
    t.state = { book } satisfies GeminiBook;
    if (!state) return this.ctx.snapshot(t, text);
    const gone: Change[] = [];
    for (const [code, name] of [
      [BID, 'buy'],
      [ASK, 'sell'],
    ] as const) {
      for (const [key, level] of state.book.side(code)) {
        if (!book.side(code).has(key)) gone.push([name, level.p as string, '0']);
      }
    }
    this.ctx.snapshot(t, initialMessage(symbol, [...levelsOf(book), ...gone], m.trades, m.auction_events));
  }
}

class GeminiClient {
  private readonly subs = new Map<string, Subscriber<undefined>>();

  constructor(private readonly ctx: ClientContext<undefined>) {}

  private error(reason: string, message: string): void {
    this.ctx.send(JSON.stringify({ type: 'error', result: 'error', reason, message }));
  }

  async onMessage(text: string): Promise<void> {
    const m = parseObject(text);
    if (!m || (m.type !== 'subscribe' && m.type !== 'unsubscribe') || !Array.isArray(m.subscriptions)) {
      return this.error('InvalidJson', 'expected {"type":"subscribe","subscriptions":[{"name":"l2","symbols":[…]}]}');
    }
    const symbols: string[] = [];
    for (const s of m.subscriptions as unknown[]) {
      const sub = (s ?? {}) as { name?: unknown; symbols?: unknown };
      if (sub.name !== 'l2')
        return this.error(
          'InvalidJson',
          `unsupported subscription "${valueText(sub.name).slice(0, 40)}"; depthgate streams l2`,
        );
      const list = stringList(sub.symbols);
      if (!list) return this.error('InvalidJson', 'symbols must be a list of strings');
      symbols.push(...list.map((x) => x.toUpperCase()));
    }
    const bad = symbols.find((x) => !SYMBOL.test(x));
    if (bad !== undefined) return this.error('InvalidSymbol', `invalid symbol ${bad.slice(0, 64)}`);
    const unique = [...new Set(symbols)];
    if (m.type === 'unsubscribe') {
      const gone = unique.flatMap((x) => {
        const sub = this.subs.get(x);
        this.subs.delete(x);
        return sub ? [sub] : [];
      });
      this.ctx.detach(gone);
      return;
    }
    const fresh = unique.filter((x) => !this.subs.has(x));
    const refused = await this.ctx.reserve(fresh.length);
    if (refused !== undefined) return this.error('SubscriptionLimit', `depthgate: ${refused}`);
    for (const x of fresh) this.subs.set(x, this.ctx.attach('l2', x, undefined));
  }

  dropped(sub: Subscriber): void {
    this.subs.delete(sub.topic.market);
  }
}

export const venueCStream: StreamModule<Platforms['venue-c']> = {
  docs: {
    send: [
      {
        name: 'subscribe',
        summary: 'l2 of symbols',
        example: { type: 'subscribe', subscriptions: [{ name: 'l2', symbols: ['BTCUSD'] }] },
      },
      {
        name: 'unsubscribe',
        summary: 'Stops symbols',
        example: { type: 'unsubscribe', subscriptions: [{ name: 'l2', symbols: ['BTCUSD'] }] },
      },
    ],
    receive: [
      {
        name: 'l2_updates',
        summary:
          'First (and after a resync) the whole book with trades and auction_events — after a resync also every vanished level with size "0" — then changed levels with their new size',
        example: {
          type: 'l2_updates',
          symbol: 'BTCUSD',
          changes: [['buy', '87123.42', '1.40467712']],
          trades: [],
          auction_events: [],
        },
      },
      {
        name: 'trade',
        summary: 'Gemini’s trade message',
        example: { type: 'trade', symbol: 'BTCUSD', price: '87123.42', quantity: '0.01', side: 'buy' },
      },
      { name: 'heartbeat', summary: 'Every 5 s', example: { type: 'heartbeat', timestamp: 1772895600000 } },
      noticeDoc('depthgate_notice', {
        type: 'depthgate_notice',
        notice: 'stale',
        reason: 'upstream_stall',
        symbol: 'BTCUSD',
      }),
      {
        name: 'error',
        summary: 'Gemini’s error form',
        example: { type: 'error', result: 'error', reason: 'InvalidSymbol', message: 'invalid symbol NOPE' },
      },
    ],
  },
  channels: ['l2'],
  paths: ['/v2/marketdata'],
  // Gemini documents no WebSocket subscription limits [U]; public REST is 120/min [V].
  limits: {
    topicsPerConnection: 200,
    maxConnections: 10,
    connectsPerSecond: 1,
    messagesPerSecond: 5,
    source: 'Gemini documents no WebSocket limits [U]; conservative defaults',
  },
  create(ctx) {
    const url = ctx.platform.feeds.main;
    const delay = ctx.config.WS_GEMINI_RESUBSCRIBE_DELAY_MS;
    return {
      handshake: () => ({ url }),
      keepAlive: 'ping',
      clientHeartbeat: {
        message: () => `{"type":"heartbeat","timestamp":${Date.now()}}`,
      },
      openSession: (c) => new GeminiUpstream(c, delay),
      openClient: (c) => new GeminiClient(c as ClientContext<undefined>),
      join(topic: Topic): string | undefined {
        const state = topic.state as GeminiBook | undefined;
        if (!state) return undefined;
        if (state.join?.version !== topic.version) {
          state.join = { version: topic.version, text: initialMessage(topic.market, levelsOf(state.book)) };
        }
        return state.join.text;
      },
      notice(sub: Subscriber, notice: Notice, reason: ResyncReason): string {
        return JSON.stringify({ type: 'depthgate_notice', notice, reason, symbol: sub.topic.market });
      },
      failed(_sub: Subscriber, error: { message: string }): string {
        return JSON.stringify({ type: 'error', result: 'error', reason: 'InvalidSymbol', message: error.message });
      },
      reconcile: {
        path: (symbol) => `/v1/book/${encodeURIComponent(symbol)}?limit_bids=0&limit_asks=0`,
        parse: (body) => {
          const b = body as Record<'bids' | 'asks', { price: string; amount: string }[]>;
          const side = (l: unknown) =>
            (Array.isArray(l) ? (l as { price: string; amount: string }[]) : []).map(
              (x) => [x.price, x.amount] as [string, string],
            );
          return { bids: side(b.bids), asks: side(b.asks) };
        },
        kept: (topic) => {
          const state = topic.state as GeminiBook | undefined;
          if (!state) return undefined;
          return { bids: state.book.pairs(BID), asks: state.book.pairs(ASK) };
        },
      },
    };
  },
};
