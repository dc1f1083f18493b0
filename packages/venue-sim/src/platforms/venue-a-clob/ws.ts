// https://docs.polymarket.com/developers/CLOB/websocket/market-channel
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData } from 'ws';
import type { BookEngine } from '../../book/engine';
import { BID, type BookEvent, type Instrument } from '../../book/types';
import { type FeedConnection, FeedHub } from '../../feeds/feed-hub';
import type { RecordedRequest } from '../../http/types';
import type { GammaMarketDef, PolymarketCatalog } from '../venue-a/catalog';
import { bookSummary, clobPrice, clobSize, tokenBook } from './books';
import type { ClobTrades } from './trades';

export const CLOB_WS_PATH = '/ws/market';

/** Token ids are decimal numbers of up to 78 digits (ERC-1155 ids) [V]. */
const TOKEN_ID = /^\d{1,100}$/;

/**
 * The CLOB market channel [V] (`wss://ws-subscriptions-clob.polymarket.com/ws/market`): public, no subscription
 * confirmation. `{"assets_ids":[…],"type":"market"}` subscribes (a later one adds assets, as ccxt sends one per watched
 * outcome), `{"assets_ids":[…],"operation":"subscribe"|"unsubscribe"}` adds or removes. Each newly subscribed asset
 * gets its `book` (sent as a JSON array of book events, as the platform sends initial books [3P]); every book change
 * then comes as a `price_change` whose `price_changes` carry, per level, the asset, price, new aggregate `size`
 * ("0" removes the level), side (BUY bids, SELL asks), an order hash and the asset's `best_bid`/`best_ask` after the
 * message [V]. A YES book change is also a NO book change (the NO book is the YES book mirrored at 1 − p), so one
 * message carries both assets' items, as the platform's does [3P]; a connection gets the items of the assets it
 * subscribed. Each trade of the YES book then comes as a `last_trade_price` of the YES asset [V] (trades.ts), after
 * the `price_change` of the levels it took; a connection subscribed to the NO asset only does not get it.
 * Keep-alive: the client sends the text `PING`, the server answers `PONG` [3P]; there are no server heartbeats.
 * Malformed messages are answered with the text `INVALID OPERATION` [U].
 */
export class ClobMarketFeed {
  readonly hub: FeedHub;
  private readonly byAsset = new Map<string, Set<FeedConnection>>();

  constructor(
    private readonly engine: BookEngine,
    private readonly catalog: PolymarketCatalog,
    private readonly trades: ClobTrades,
    private readonly clock: () => number,
  ) {
    this.hub = new FeedHub(clock);
    engine.on('venue-a-clob', (inst, event) => this.onEvent(inst, event));
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, record: RecordedRequest): void {
    if (record.path !== CLOB_WS_PATH) {
      FeedHub.refuse(socket, record, 404, '404 page not found', 'text/plain; charset=utf-8');
      return;
    }
    this.hub.accept(req, socket, head, record, (conn) => {
      conn.ws.on('message', (data, isBinary) => this.onMessage(conn, data, isBinary));
      conn.ws.on('close', () => {
        for (const a of conn.tickers) this.byAsset.get(a)?.delete(conn);
      });
    });
  }

  private onMessage(conn: FeedConnection, data: RawData, isBinary: boolean): void {
    const text = isBinary ? '' : rawText(data);
    if (text === 'PING') return this.hub.send(conn, 'PONG');
    let m: Record<string, unknown> | undefined;
    try {
      const v: unknown = JSON.parse(text);
      if (v && typeof v === 'object' && !Array.isArray(v)) m = v as Record<string, unknown>;
    } catch {
      m = undefined;
    }
    const assets = Array.isArray(m?.assets_ids) ? (m.assets_ids as unknown[]) : undefined;
    if (!m || !assets || !assets.every((a) => typeof a === 'string')) {
      return this.hub.send(conn, 'INVALID OPERATION');
    }
    const ids = assets as string[];
    const initial = typeof m.type === 'string' && m.type.toLowerCase() === 'market';
    if (initial || m.operation === 'subscribe') return this.subscribe(conn, ids);
    if (m.operation === 'unsubscribe') {
      for (const a of ids) {
        conn.tickers.delete(a);
        this.byAsset.get(a)?.delete(conn);
      }
      return;
    }
    this.hub.send(conn, 'INVALID OPERATION');
  }

  /** Unknown assets are ignored, as the platform does (no confirmation, no error) [3P]. */
  private subscribe(conn: FeedConnection, ids: string[]): void {
    const books: unknown[] = [];
    for (const a of ids) {
      if (!TOKEN_ID.test(a) || conn.tickers.has(a)) continue;
      const b = tokenBook(this.engine, this.catalog, a);
      if (!b) continue;
      conn.tickers.add(a);
      let set = this.byAsset.get(a);
      if (!set) this.byAsset.set(a, (set = new Set()));
      set.add(conn);
      const yes = b.market.tokens[0];
      books.push({ event_type: 'book', ...bookSummary(a, b, this.engine.lastTs('venue-a-clob', yes) ?? this.clock()) });
    }
    if (books.length > 0) this.hub.send(conn, JSON.stringify(books));
  }

  private onEvent(inst: Instrument, event: BookEvent): void {
    const t = this.catalog.tokens.get(inst.ticker);
    if (!t) return;
    const [yes, no] = t.market.tokens;
    const yesSubs = this.byAsset.get(yes);
    const noSubs = this.byAsset.get(no);
    if (!yesSubs?.size && !noSubs?.size) return;
    // A drop fault drops one message for every subscriber: the book change, or one trade.
    if (!this.hub.shouldDrop(yes)) this.sendChanges(t.market, event, yesSubs, noSubs);
    if (!yesSubs?.size) return;
    for (const trade of event.trades) {
      if (this.hub.shouldDrop(yes)) continue;
      const msg = this.trades.lastTradePrice(t.market, { ...trade, ts: event.ts, seq: event.seq });
      for (const conn of yesSubs) this.hub.send(conn, msg);
    }
  }

  private sendChanges(
    market: GammaMarketDef,
    event: BookEvent,
    yesSubs: Set<FeedConnection> | undefined,
    noSubs: Set<FeedConnection> | undefined,
  ): void {
    const [yes, no] = market.tokens;
    const yesBook = tokenBook(this.engine, this.catalog, yes);
    const noBook = tokenBook(this.engine, this.catalog, no);
    if (!yesBook || !noBook) return;
    const best = (levels: readonly [number, number][]) => {
      const p = levels[0]?.[0];
      return p === undefined ? '0' : clobPrice(p);
    };
    const yesBest = `,"best_bid":"${best(yesBook.book.bids)}","best_ask":"${best(yesBook.book.asks)}"}`;
    const noBest = `,"best_bid":"${best(noBook.book.bids)}","best_ask":"${best(noBook.book.asks)}"}`;
    const yesItems: string[] = [];
    const noItems: string[] = [];
    const ch = event.changes;
    for (let i = 0; i < ch.length; i += 4) {
      const bid = ch[i] === BID;
      const price = ch[i + 1] as number;
      const size = clobSize(ch[i + 2] as number);
      const hash = orderHash(yes, event.seq, i);
      yesItems.push(
        `{"asset_id":"${yes}","price":"${clobPrice(price)}","size":"${size}","side":"${bid ? 'BUY' : 'SELL'}","hash":"${hash}"${yesBest}`,
      );
      // YES bid at p = NO ask at 1 − p.
      noItems.push(
        `{"asset_id":"${no}","price":"${clobPrice(100 - price)}","size":"${size}","side":"${bid ? 'SELL' : 'BUY'}","hash":"${hash}"${noBest}`,
      );
    }
    const frame = (items: string[]) =>
      `{"market":"${market.conditionId}","price_changes":[${items.join(',')}],"timestamp":"${event.ts}","event_type":"price_change"}`;
    let both: string | undefined;
    let onlyYes: string | undefined;
    let onlyNo: string | undefined;
    const sent = new Set<FeedConnection>();
    for (const conn of yesSubs ?? []) {
      sent.add(conn);
      if (conn.tickers.has(no)) this.hub.send(conn, (both ??= frame([...yesItems, ...noItems])));
      else this.hub.send(conn, (onlyYes ??= frame(yesItems)));
    }
    for (const conn of noSubs ?? []) if (!sent.has(conn)) this.hub.send(conn, (onlyNo ??= frame(noItems)));
  }

  close(): void {
    this.hub.close();
    this.byAsset.clear();
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/** A stand-in for the hash of the order behind a change (the platform's is the order's own hash [3P]). */
function orderHash(token: string, seq: number, index: number): string {
  return `0x${createHash('sha256').update(`${token}:${seq}:${index}`).digest('hex')}`;
}
