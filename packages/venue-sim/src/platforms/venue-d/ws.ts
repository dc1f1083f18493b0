// https://docs.cdp.coinbase.com/exchange/websocket-feed/channels
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { COINBASE_CHANNELS, coinbaseWire, parseCoinbaseSubscribe, type CoinbaseChannel } from '@depthgate/feeds';
import type { BookEngine } from '../../book/engine';
import { BID, type BookEvent, type Instrument } from '../../book/types';
import { formatScaled } from '../../core/decimal';
import { isoMicros } from '../../core/time';
import { type FeedConnection, FeedHub, parseJsonObject } from '../../feeds/feed-hub';
import type { RecordedRequest } from '../../http/types';
import { feedHeartbeatMs, type PlatformContext } from '../context';
import { verifyCoinbaseSubscribe, type CoinbaseVerifier } from './auth';
import type { CoinbaseCatalog, CoinbaseProduct } from './catalog';
import type { CoinbaseTrades } from './trades';

export const COINBASE_WS_PATH = '/';

type Channel = CoinbaseChannel;

/** `level2_batch` gathers a product's changes over this window [V] (50 ms). */
const BATCH_MS = 50;

/**
 * The Exchange WebSocket feed (`wss://ws-feed.exchange.coinbase.com`) [V]: `{"type":"subscribe","product_ids":[…],
 * "channels":["level2", {"name":"ticker","product_ids":[…]}]}` (and `unsubscribe`) is answered with the connection's
 * whole `subscriptions` list, then each new channel's initial message. Channels:
 * - `level2`: a `snapshot` (bids and asks, best first, `[price, size]`; no `time`, no `sequence`), then `l2update`s
 *   whose `changes` carry a level's new size ("0.00000000" removes it) and whose `time` is the change's [V]; neither
 *   carries a sequence [V]. It needs the signed subscribe (`key`, `passphrase`, `timestamp`, `signature` over
 *   `timestamp + GET/users/self/verify`) [3P]; `level2_batch` is the same, public, gathered in 50 ms windows [V].
 * - `matches`: a `last_match` when subscribed (once the product traded), then a `match` per trade of the books, each
 *   with its own `sequence` and the next `trade_id` (trades.ts) [V]; `ticker`: the product's ticker when subscribed
 *   [U], then one after each event that traded [V]; `heartbeat`: one per product every second with the product's
 *   `sequence` (the REST book's) and `last_trade_id` [V] (or at the simulator's `heartbeatIntervalMs`).
 * A lost match shows as a `trade_id` gap on `matches` and as a heartbeat `last_trade_id` ahead of the last match seen;
 * a lost `l2update` shows nowhere on the stream (the real feed's neither), only against the REST book.
 * Errors are `{"type":"error","message",…,"reason"}` [3P].
 */
export class CoinbaseFeed {
  readonly hub: FeedHub;
  /** product → connection → its channels for that product. */
  private readonly subs = new Map<string, Map<FeedConnection, Set<Channel>>>();
  private readonly batch = new Map<string, Map<string, string>>();
  private batchTimer: NodeJS.Timeout | undefined;
  private readonly engine: BookEngine;
  private readonly clock: () => number;

  constructor(
    ctx: PlatformContext,
    private readonly catalog: CoinbaseCatalog,
    private readonly verifier: CoinbaseVerifier,
    private readonly trades: CoinbaseTrades,
  ) {
    this.engine = ctx.engine;
    this.clock = ctx.clock;
    // level2 messages carry no sequence [V]: a swap of two of them is invisible, so they may be reordered (matches,
    // which carry one, never are).
    this.hub = new FeedHub(ctx.clock, { reorder: true });
    this.engine.on('venue-d', (inst, event) => this.onEvent(inst, event));
    const beat = feedHeartbeatMs(ctx, 'venue-d');
    if (beat > 0) this.hub.startHeartbeat(beat, (c) => this.heartbeat(c));
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, record: RecordedRequest): void {
    if (record.path !== COINBASE_WS_PATH) {
      FeedHub.refuse(socket, record, 404, JSON.stringify({ message: 'NotFound' }));
      return;
    }
    this.hub.accept(req, socket, head, record, (conn) => {
      const channels = new Map<Channel, Set<string>>();
      conn.state = channels;
      conn.onMessage((data) => this.onMessage(conn, channels, parseJsonObject(data), record));
      conn.ws.on('close', () => {
        for (const products of channels.values()) for (const p of products) this.subs.get(p)?.delete(conn);
      });
    });
  }

  private error(conn: FeedConnection, message: string, reason: string): void {
    this.hub.send(conn, coinbaseWire.error(message, reason));
  }

  /** A signed subscribe is verified here; its result is the connection's recorded `auth` (the handshake has none). */
  private onMessage(
    conn: FeedConnection,
    channels: Map<Channel, Set<string>>,
    m: Record<string, unknown> | undefined,
    record: RecordedRequest,
  ): void {
    const fail = (reason: string) => this.error(conn, 'Failed to subscribe', reason);
    const parsed = parseCoinbaseSubscribe(m);
    if ('error' in parsed) return fail(parsed.error);
    const pairs = parsed.pairs;
    const bad = pairs.find(([, p]) => !this.catalog.byId.has(p));
    if (bad) return fail(`${bad[1]} is not a valid product`);
    if (parsed.type === 'subscribe' && pairs.some(([c]) => c === 'level2')) {
      const check = verifyCoinbaseSubscribe(m as Record<string, unknown>, this.verifier);
      record.auth = check.state;
      if (check.error) record.authError = check.error;
      if (check.state === 'absent') return fail('level2 channel requires authentication');
      if (check.state !== 'valid') {
        return this.error(conn, 'Authentication Failed', JSON.stringify({ message: check.error }));
      }
    }
    const added: [Channel, string][] = [];
    for (const [c, p] of pairs) {
      let products = channels.get(c);
      let byConn = this.subs.get(p);
      if (parsed.type === 'subscribe') {
        if (!products) channels.set(c, (products = new Set()));
        if (products.has(p)) continue;
        products.add(p);
        if (!byConn) this.subs.set(p, (byConn = new Map()));
        let own = byConn.get(conn);
        if (!own) byConn.set(conn, (own = new Set()));
        own.add(c);
        conn.tickers.add(p);
        added.push([c, p]);
      } else {
        products?.delete(p);
        byConn?.get(conn)?.delete(c);
        if (byConn?.get(conn)?.size === 0) {
          byConn.delete(conn);
          conn.tickers.delete(p);
        }
      }
    }
    const list = COINBASE_CHANNELS.filter((c) => (channels.get(c)?.size ?? 0) > 0).map((c) => ({
      name: c,
      product_ids: [...(channels.get(c) as Set<string>)],
    }));
    this.hub.send(conn, coinbaseWire.subscriptions(list));
    for (const [c, p] of added) {
      if (c === 'level2' || c === 'level2_batch') this.hub.send(conn, this.snapshot(p));
      else if (c === 'ticker') this.hub.send(conn, this.ticker(p));
      else if (c === 'matches') {
        const last = this.engine.lastTrade('venue-d', p);
        if (last) this.hub.send(conn, this.trades.match(this.instrument(p), last, 'last_match'));
      }
    }
  }

  private product(id: string): CoinbaseProduct {
    return this.catalog.byId.get(id) as CoinbaseProduct;
  }

  private instrument(id: string): Instrument {
    return this.engine.instrument('venue-d', id) as Instrument;
  }

  private sequence(id: string): number {
    return this.trades.productSequence(this.engine, id);
  }

  private snapshot(id: string): string {
    const p = this.product(id);
    const book = this.engine.book('venue-d', id);
    const side = (s: 'bids' | 'asks') =>
      (book?.[s].levels() ?? []).map(([pr, q]) => [formatScaled(pr, 2), formatScaled(q, p.baseDecimals)] as const);
    // [V] the docs' snapshot has no `time` (nor a sequence); ccxt reads none.
    return coinbaseWire.snapshot(id, side('bids'), side('asks'));
  }

  private ticker(id: string): string {
    const p = this.product(id);
    const book = this.engine.book('venue-d', id);
    const bid = book?.bids.best() ?? p.mid;
    const ask = book?.asks.best() ?? p.mid;
    const last = this.engine.lastTrade('venue-d', id);
    const price = last?.price ?? Math.round((bid + ask) / 2);
    const px = (x: number) => formatScaled(x, 2);
    const sz = (x: number) => formatScaled(x, p.baseDecimals);
    return JSON.stringify({
      type: 'ticker',
      sequence: this.sequence(id),
      product_id: id,
      price: px(price),
      open_24h: px(price - 1234),
      volume_24h: sz(123_456_789_012),
      low_24h: px(price - 3020),
      high_24h: px(price + 2011),
      volume_30d: sz(29_876_543_210_000),
      best_bid: px(bid),
      best_bid_size: sz(book?.bids.get(bid) ?? 0),
      best_ask: px(ask),
      best_ask_size: sz(book?.asks.get(ask) ?? 0),
      // [3P] the ticker's side is the taker's (the match's is the maker's).
      side: last ? (last.takerSide === BID ? 'buy' : 'sell') : 'buy',
      time: isoMicros(last?.ts ?? this.engine.lastTs('venue-d', id) ?? this.clock()),
      trade_id: this.trades.tradeId(last?.no ?? 0),
      last_size: sz(last?.size ?? 0),
    });
  }

  private heartbeat(conn: FeedConnection): void {
    const channels = conn.state as Map<Channel, Set<string>> | undefined;
    for (const id of channels?.get('heartbeat') ?? []) {
      this.hub.send(
        conn,
        JSON.stringify({
          type: 'heartbeat',
          sequence: this.sequence(id),
          last_trade_id: this.trades.tradeId(this.engine.lastTradeNo('venue-d', id)),
          product_id: id,
          time: isoMicros(this.clock()),
        }),
      );
    }
  }

  private onEvent(inst: Instrument, event: BookEvent): void {
    const id = inst.ticker;
    const conns = this.subs.get(id);
    if (!conns || conns.size === 0) return;
    const p = this.product(id);
    let books = false;
    let batched = false;
    let matches = false;
    let tickers = false;
    for (const channels of conns.values()) {
      books ||= channels.has('level2');
      batched ||= channels.has('level2_batch');
      matches ||= channels.has('matches');
      tickers ||= channels.has('ticker');
    }
    // A drop fault drops one message for every subscriber: the book change (on level2 and level2_batch alike), or one
    // match. A reorder swaps the book's next two messages (l2update or batch).
    if ((books || batched) && !this.hub.shouldDrop(id)) {
      if (books) {
        const ch = event.changes;
        const changes: string[] = [];
        for (let i = 0; i < ch.length; i += 4) {
          const price = formatScaled(ch[i + 1] as number, 2);
          changes.push(
            coinbaseWire.change(
              ch[i] === BID ? 'buy' : 'sell',
              price,
              formatScaled(ch[i + 2] as number, p.baseDecimals),
            ),
          );
        }
        const l2update = coinbaseWire.l2update(id, changes, isoMicros(event.ts));
        this.hub.deliver(id, conns.keys(), (conn) => (conns.get(conn)?.has('level2') ? l2update : undefined));
      }
      if (batched) this.addToBatch(id, event.changes, p);
    }
    if (event.trades.length === 0) return;
    if (matches) {
      for (const t of event.trades) {
        if (this.hub.shouldDrop(id)) continue;
        const match = this.trades.match(inst, { ...t, ts: event.ts, seq: event.seq });
        for (const [conn, channels] of conns) if (channels.has('matches')) this.hub.send(conn, match);
      }
    }
    if (tickers) {
      const ticker = this.ticker(id);
      for (const [conn, channels] of conns) if (channels.has('ticker')) this.hub.send(conn, ticker);
    }
  }

  /** A product's changes over the window, the last size of each level kept. */
  private addToBatch(id: string, ch: readonly number[], p: CoinbaseProduct): void {
    let levels = this.batch.get(id);
    if (!levels) this.batch.set(id, (levels = new Map()));
    for (let i = 0; i < ch.length; i += 4) {
      const side = ch[i] === BID ? 'buy' : 'sell';
      const price = formatScaled(ch[i + 1] as number, 2);
      levels.set(
        `${side}:${price}`,
        coinbaseWire.change(side, price, formatScaled(ch[i + 2] as number, p.baseDecimals)),
      );
    }
    this.batchTimer ??= setTimeout(() => this.flushBatch(), BATCH_MS);
  }

  private flushBatch(): void {
    this.batchTimer = undefined;
    const time = isoMicros(this.clock());
    for (const [id, levels] of this.batch) {
      const msg = coinbaseWire.l2update(id, [...levels.values()], time);
      const subs = this.subs.get(id);
      if (subs) this.hub.deliver(id, subs.keys(), (conn) => (subs.get(conn)?.has('level2_batch') ? msg : undefined));
    }
    this.batch.clear();
  }

  close(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.hub.close();
    this.subs.clear();
  }
}
