// https://docs.kalshi.com/websockets/orderbook-updates
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { KALSHI_WS_ERRORS, kalshiWire, type KalshiWsError } from '@depthgate/feeds';
import { formatScaled } from '../../core/decimal';
import type { BookEngine } from '../../book/engine';
import type { OrderBook } from '../../book/order-book';
import { BID, type BookEvent, type Instrument, type Trade } from '../../book/types';
import { type FeedConnection, FeedHub, parseJsonObject } from '../../feeds/feed-hub';
import type { AuthCheck, AuthInput, RecordedRequest } from '../../http/types';
import type { KalshiCatalog } from './catalog';
import { KalshiTradeIds } from './trade-ids';
import { kalshiTrade } from './trades';

/** Kalshi's WebSocket error codes (one table with the gateway's and the replay's). */
const ERR = KALSHI_WS_ERRORS;

export const KALSHI_WS_PATH = '/trade-api/ws/v2';

/** The channels simulated: the order book, and the public ticker and trade channels [V]. */
const KALSHI_CHANNELS = ['orderbook_delta', 'ticker', 'trade'] as const;
type Channel = (typeof KALSHI_CHANNELS)[number];

interface Subscription {
  sid: number;
  seq: number;
  channel: Channel;
  tickers: Set<string>;
  /** A `ticker` subscription without market tickers: every market's messages [V] (`tickers` stays empty). */
  everyMarket: boolean;
}

/** A subscription and the connection that holds it. */
interface Held {
  conn: FeedConnection;
  sub: Subscription;
}

/** What a market's last `ticker` message said, to send the next only when something changed. */
interface TickerState {
  bid: number | undefined;
  ask: number | undefined;
  last: number | undefined;
  volume: number;
}

interface KalshiConnState {
  nextSid: number;
  subs: Map<number, Subscription>;
}

export interface KalshiFeedOptions {
  seed: number;
  snapshotFields: 'fp' | 'dollars';
  heartbeatIntervalMs: number;
  verify: (input: AuthInput) => AuthCheck;
  unauthorizedBody: (reason: string) => string;
}

/**
 * The `orderbook_delta`, `ticker` and `trade` channels. The handshake is signed like REST (`timestamp + GET +
 * /trade-api/ws/v2`) [V]; `subscribe` answers one `subscribed` with a `sid` per channel, then, on `orderbook_delta`, per
 * market an `orderbook_snapshot` followed by `orderbook_delta` messages, `seq` counting per subscription [V]. Field
 * names are the fixed-point ones seen in production-shaped fixtures [3P]: dollar strings with 4 decimals, counts with
 * 2. `trade` messages carry the engine's trades in the current schema [V] (trades.ts: the ids the REST trades
 * have), without `seq` (the schema defines none on trades [V]); `ticker` messages (without `seq`; sent when the best
 * prices or the last trade change) carry both the legacy cent integers and the dollar strings [3P]. `ticker` subscribed
 * without market tickers follows every market [V].
 */
export class KalshiFeed {
  readonly hub: FeedHub;
  /** Subscriptions per market ticker. */
  private readonly byTicker = new Map<string, Set<Held>>();
  /** Subscriptions of every market (`ticker` subscribed without market tickers). */
  private readonly everyMarket = new Set<Held>();
  private readonly tickers = new Map<string, TickerState>();
  private readonly ids: KalshiTradeIds;

  constructor(
    private readonly engine: BookEngine,
    private readonly catalog: KalshiCatalog,
    private readonly opts: KalshiFeedOptions,
    private readonly clock: () => number,
  ) {
    // Every book message carries its subscription's `seq` [V], which would reveal a swap: no reorder fault here.
    this.hub = new FeedHub(clock);
    this.ids = new KalshiTradeIds(opts.seed);
    engine.on('venue-b', (inst, event, book) => this.onEvent(inst, event, book));
    // Kalshi keeps connections alive with WebSocket ping frames [V] (docs: every 10 s).
    this.hub.startHeartbeat(opts.heartbeatIntervalMs, (c) => c.ws.ping());
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, record: RecordedRequest): void {
    if (record.path !== KALSHI_WS_PATH) {
      FeedHub.refuse(socket, record, 404, this.opts.unauthorizedBody('not found'));
      return;
    }
    const check = this.opts.verify({
      method: 'GET',
      path: record.path,
      query: record.query,
      headers: req.headers,
      body: Buffer.alloc(0),
    });
    record.auth = check.state === 'absent' ? 'absent' : check.state;
    if (check.error) record.authError = check.error;
    if (check.state !== 'valid') {
      FeedHub.refuse(socket, record, 401, this.opts.unauthorizedBody(check.error ?? 'missing credentials'));
      return;
    }
    this.hub.accept(req, socket, head, record, (conn) => {
      const state: KalshiConnState = { nextSid: 1, subs: new Map() };
      conn.state = state;
      conn.onMessage((data) => this.onMessage(conn, state, parseJsonObject(data)));
      conn.ws.on('close', () => {
        for (const sub of state.subs.values()) this.unindex(conn, sub);
      });
    });
  }

  private error(conn: FeedConnection, id: unknown, error: KalshiWsError, detail?: string): void {
    this.hub.send(conn, kalshiWire.refusal(id, error, detail));
  }

  /** Whether the connection may hold `adding` more (channel, market) pairs; when not, command `id` is refused (26). */
  private room(conn: FeedConnection, state: KalshiConnState, id: unknown, adding: number): boolean {
    if (this.hub.admits(held(state), adding)) return true;
    this.error(conn, id, ERR.marketLimit, `the simulator holds ${this.hub.maxSubscriptions} on a connection`);
    return false;
  }

  private onMessage(conn: FeedConnection, state: KalshiConnState, m: Record<string, unknown> | undefined): void {
    if (!m) return this.error(conn, null, ERR.unprocessable);
    const id = m.id;
    const params = (m.params && typeof m.params === 'object' ? m.params : {}) as Record<string, unknown>;
    // A command that needs parameters and has none (list_subscriptions needs none).
    if (params !== m.params && (m.cmd === 'subscribe' || m.cmd === 'unsubscribe' || m.cmd === 'update_subscription'))
      return this.error(conn, id, ERR.params);
    switch (m.cmd) {
      case 'subscribe': {
        const channels = Array.isArray(params.channels) ? params.channels : [];
        if (channels.length === 0) return this.error(conn, id, ERR.channels);
        if (!channels.every((c) => (KALSHI_CHANNELS as readonly unknown[]).includes(c)))
          return this.error(conn, id, ERR.channel);
        const tickers = tickerList(params);
        // Without market tickers, `ticker` follows every market (Kalshi's docs and starter code subscribe so [V]);
        // the book and `trade` need them.
        const everyMarket = tickers.length === 0;
        if (everyMarket && channels.some((c) => c !== 'ticker')) return this.error(conn, id, ERR.market);
        const unknown = tickers.find((t) => !this.catalog.marketsByTicker.has(t));
        if (unknown !== undefined) return this.error(conn, id, ERR.marketNotFound, unknown);
        const adding = new Set(channels).size * Math.max(1, tickers.length);
        if (!this.room(conn, state, id, adding)) return;
        for (const channel of new Set(channels as Channel[])) {
          const sub: Subscription = { sid: state.nextSid++, seq: 0, channel, tickers: new Set(tickers), everyMarket };
          state.subs.set(sub.sid, sub);
          this.hub.send(conn, kalshiWire.subscribed(id, channel, sub.sid));
          if (channel === 'orderbook_delta') for (const t of sub.tickers) this.snapshot(conn, sub, t);
          this.index(conn, sub);
        }
        return;
      }
      case 'unsubscribe': {
        const sids = Array.isArray(params.sids) ? params.sids : [];
        if (sids.length === 0) return this.error(conn, id, ERR.sids);
        for (const sid of sids) {
          const sub = typeof sid === 'number' ? state.subs.get(sid) : undefined;
          if (!sub) return this.error(conn, id, ERR.sid);
          state.subs.delete(sub.sid);
          this.unindex(conn, sub);
          this.hub.send(conn, kalshiWire.unsubscribed(id, sub.sid, ++sub.seq));
        }
        return;
      }
      case 'update_subscription': {
        const sids = params.sid !== undefined ? [params.sid] : Array.isArray(params.sids) ? params.sids : [];
        if (sids.length !== 1) return this.error(conn, id, ERR.oneSid);
        const sid = sids[0];
        const sub = typeof sid === 'number' ? state.subs.get(sid) : undefined;
        if (!sub) return this.error(conn, id, ERR.sid);
        if (typeof params.action !== 'string') return this.error(conn, id, ERR.actionRequired);
        // [U] Kalshi's answer: a subscription of every market has no markets to add or delete.
        if (sub.everyMarket && (params.action === 'add_markets' || params.action === 'delete_markets'))
          return this.error(conn, id, ERR.action, 'the subscription follows every market');
        const tickers = tickerList(params);
        const unknown = tickers.find((t) => !this.catalog.marketsByTicker.has(t));
        if (unknown !== undefined) return this.error(conn, id, ERR.marketNotFound, unknown);
        switch (params.action) {
          case 'add_markets':
            if (!this.room(conn, state, id, tickers.filter((t) => !sub.tickers.has(t)).length)) return;
            this.unindex(conn, sub);
            for (const t of tickers) sub.tickers.add(t);
            this.index(conn, sub);
            if (sub.channel === 'orderbook_delta') for (const t of tickers) this.snapshot(conn, sub, t);
            break;
          case 'delete_markets':
            this.unindex(conn, sub);
            for (const t of tickers) sub.tickers.delete(t);
            this.index(conn, sub);
            break;
          case 'get_snapshot':
            if (sub.channel !== 'orderbook_delta') return this.error(conn, id, ERR.action);
            for (const t of tickers.length ? tickers : [...sub.tickers])
              if (sub.tickers.has(t)) this.snapshot(conn, sub, t);
            break;
          default:
            return this.error(conn, id, ERR.action);
        }
        this.hub.send(conn, kalshiWire.ok(id, sub.sid, sub.seq, [...sub.tickers]));
        return;
      }
      case 'list_subscriptions':
        this.hub.send(conn, kalshiWire.subscriptions(id, [...state.subs.values()]));
        return;
      default:
        return this.error(conn, id, ERR.command);
    }
  }

  private index(conn: FeedConnection, sub: Subscription): void {
    if (sub.everyMarket) {
      this.everyMarket.add({ conn, sub });
      conn.everyTicker = true;
    }
    for (const t of sub.tickers) {
      let set = this.byTicker.get(t);
      if (!set) this.byTicker.set(t, (set = new Set()));
      set.add({ conn, sub });
      conn.tickers.add(t);
    }
  }

  private unindex(conn: FeedConnection, sub: Subscription): void {
    if (sub.everyMarket) {
      for (const e of this.everyMarket) if (e.sub === sub) this.everyMarket.delete(e);
      conn.everyTicker = [...this.everyMarket].some((e) => e.conn === conn);
    }
    for (const t of sub.tickers) {
      const set = this.byTicker.get(t);
      if (!set) continue;
      for (const e of set) if (e.sub === sub) set.delete(e);
      // The connection stops following t unless another of its subscriptions does (feed faults select by ticker).
      if (![...set].some((e) => e.conn === conn)) conn.tickers.delete(t);
      if (set.size === 0) this.byTicker.delete(t);
    }
  }

  private snapshot(conn: FeedConnection, sub: Subscription, ticker: string): void {
    const book = this.engine.book('venue-b', ticker) as OrderBook;
    const market = this.catalog.marketsByTicker.get(ticker);
    const yes = book.bids
      .levels()
      .reverse()
      .map(([p, q]) => [formatScaled(p, 4), formatScaled(q, 2)] as const);
    const no = book.asks
      .levels()
      .reverse()
      .map(([p, q]) => [formatScaled(10000 - p, 4), formatScaled(q, 2)] as const);
    this.hub.send(
      conn,
      kalshiWire.snapshot(sub.sid, ++sub.seq, {
        ticker,
        marketId: market?.market_id,
        yes,
        no,
        fields: this.opts.snapshotFields,
      }),
    );
  }

  private onEvent(inst: Instrument, event: BookEvent, book: OrderBook): void {
    const named = this.byTicker.get(inst.ticker);
    const subs = this.everyMarket.size === 0 ? named : new Set([...(named ?? []), ...this.everyMarket]);
    const trades = event.trades;
    const tickerChanged = this.tickerChange(inst.ticker, book, trades);
    if (!subs || subs.size === 0) return;
    const ch = event.changes;
    const marketId = this.catalog.marketsByTicker.get(inst.ticker)?.market_id ?? '';
    const bodyOf = kalshiWire.deltaBodies(inst.ticker, marketId, event.ts);
    const has = (channel: Channel) => [...subs].some((e) => e.sub.channel === channel);
    // A dropped message is dropped for every subscriber of the channel, as a lost upstream message would be.
    const drop = (channel: Channel) => has(channel) && this.hub.shouldDrop(inst.ticker);
    for (let i = 0; i < ch.length; i += 4) {
      const dropped = drop('orderbook_delta');
      const yesSide = ch[i] === BID;
      const price = yesSide ? (ch[i + 1] as number) : 10000 - (ch[i + 1] as number);
      const body = bodyOf(formatScaled(price, 4), formatScaled(ch[i + 3] as number, 2), yesSide ? 'yes' : 'no');
      for (const { conn, sub } of subs) {
        if (sub.channel !== 'orderbook_delta') continue;
        const seq = ++sub.seq;
        if (!dropped) this.hub.send(conn, kalshiWire.delta(sub.sid, seq, body));
      }
    }
    // After the book's changes, one message per fill (the trade channel's messages carry no seq [V]).
    if (trades.length > 0 && has('trade')) {
      for (const t of trades) {
        const dropped = drop('trade');
        if (dropped) continue;
        const body = kalshiTrade.ws(this.ids.fields(inst.ticker, { ...t, ts: event.ts }));
        for (const { conn, sub } of subs)
          if (sub.channel === 'trade') this.hub.send(conn, kalshiWire.trade(sub.sid, body));
      }
    }
    if (tickerChanged && has('ticker') && !drop('ticker')) {
      const ticker = this.tickerBody(inst.ticker);
      for (const { conn, sub } of subs)
        if (sub.channel === 'ticker') this.hub.send(conn, `{"type":"ticker","sid":${sub.sid},"msg":${ticker}}`);
    }
  }

  /** Follows a market's best prices and last trade; true when either changed with this event. */
  private tickerChange(ticker: string, book: OrderBook, trades: readonly Trade[]): boolean {
    let state = this.tickers.get(ticker);
    if (!state) this.tickers.set(ticker, (state = { bid: undefined, ask: undefined, last: undefined, volume: 0 }));
    const bid = book.bids.best();
    const ask = book.asks.best();
    const last = trades.length > 0 ? (trades[trades.length - 1] as Trade).price : state.last;
    for (const t of trades) state.volume += t.size;
    const changed = bid !== state.bid || ask !== state.ask || last !== state.last;
    state.bid = bid;
    state.ask = ask;
    state.last = last;
    return changed;
  }

  /** The market's `ticker` body as it is now. */
  private tickerBody(ticker: string): string {
    const next = this.tickers.get(ticker) as TickerState;
    const cents = (p: number | undefined) => (p === undefined ? 0 : Math.round(p / 100));
    const dollars = (p: number | undefined) => (p === undefined ? '' : formatScaled(p, 4));
    return JSON.stringify({
      market_ticker: ticker,
      market_id: this.catalog.marketsByTicker.get(ticker)?.market_id ?? '',
      price: cents(next.last),
      yes_bid: cents(next.bid),
      yes_ask: cents(next.ask),
      price_dollars: dollars(next.last),
      yes_bid_dollars: dollars(next.bid),
      yes_ask_dollars: dollars(next.ask),
      volume: Math.floor(next.volume / 100),
      volume_fp: formatScaled(next.volume, 2),
      ts: Math.floor(this.clock() / 1000),
    });
  }

  close(): void {
    this.hub.close();
    this.byTicker.clear();
    this.everyMarket.clear();
  }
}

function tickerList(params: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (typeof params.market_ticker === 'string') out.push(params.market_ticker);
  if (Array.isArray(params.market_tickers))
    for (const t of params.market_tickers) if (typeof t === 'string') out.push(t);
  return [...new Set(out)];
}

/**
 * The (channel, market) pairs a connection's subscriptions hold (FeedHub.maxSubscriptions); a subscription left with
 * no market (delete_markets) still counts as one, so that emptied sids cannot pile up either.
 */
function held(state: KalshiConnState): number {
  let n = 0;
  for (const sub of state.subs.values()) n += Math.max(1, sub.tickers.size);
  return n;
}
