// https://docs.polymarket.com/developers/CLOB/websocket/market-channel
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData } from 'ws';
import { CLOB_INVALID_OPERATION, clobWire, parseClobRequest } from '@depthgate/feeds';
import type { BookEngine } from '../../book/engine';
import { BID, type BookEvent, type Instrument, type IntBook, type IntLevel } from '../../book/types';
import { type FeedConnection, FeedHub, type Outgoing, rawText } from '../../feeds/feed-hub';
import type { RecordedRequest } from '../../http/types';
import type { GammaMarketDef } from '../venue-a/catalog';
import type { ClobTick } from '../venue-a/prices';
import { type ClobBooks, type ClobSummary, clobPrice, clobSize, hashOf, mirror, type TokenBook } from './books';
import type { ClobTrades } from './trades';

export const CLOB_WS_PATH = '/ws/market';

/** Token ids are decimal numbers of up to 78 digits (ERC-1155 ids) [V]. */
const TOKEN_ID = /^\d{1,100}$/;

/** What the channel has told about a market so far: its tick size and its YES token's last trade price. */
interface Announced {
  tick: ClobTick;
  lastTradePrice: string;
}

/**
 * The CLOB market channel [V] (`wss://ws-subscriptions-clob.polymarket.com/ws/market`): public, no subscription
 * confirmation. `{"assets_ids":[…],"type":"market"}` subscribes (a later one adds assets, as ccxt sends one per watched
 * outcome; `"initial_dump":false` skips the books), `{"assets_ids":[…],"operation":"subscribe"|"unsubscribe"}` adds or
 * removes. Each newly subscribed asset gets its `book` (sent as a JSON array of book events, as the platform sends
 * initial books [3P]). Then, per change of a market's book, in this order:
 *
 * 1. `tick_size_change` per asset, when the change moved the market's tick size (venue-a/prices.ts `tickSizeOf`);
 * 2. one `price_change` [V]: per changed level of each asset an entry with the asset, price, new aggregate `size`
 *    ("0" removes the level), side (BUY bids, SELL asks), `hash` (the asset's summary hash after this entry's change,
 *    at the message's timestamp: apply the entries in order) and the asset's `best_bid`/`best_ask` then. A YES book
 *    change is also a NO book change (the NO book is the YES book mirrored at 1 − p), so the message carries the YES
 *    entries, then the NO ones; a connection gets the entries of the assets it subscribed;
 * 3. per trade of the YES book, a `last_trade_price` of the YES asset (trades.ts) [V];
 * 4. after a trade, each asset's `book` ("emitted when there is a trade that affects the book" [V]), whose hash counts
 *    the new last trade price.
 *
 * A consumer that keeps each asset's book, `tick_size` (from `book`, then `tick_size_change`) and `last_trade_price`
 * (from `book`, then `last_trade_price`) reproduces every hash with `clobBookHash`; `GET /book` answers the summary of
 * the channel's last message about the asset. Keep-alive: the client sends the text `PING`, the server answers `PONG`
 * [3P]; there are no server heartbeats. Malformed messages are answered with the text `INVALID OPERATION` [U].
 *
 * Feed faults act on the messages of steps 1–4 (not on a subscription's initial books): `drop`, `reorder` (a market's
 * next two messages swapped) and `corrupt_checksum` (the next `book` or `price_change` of an asset carries a wrong
 * hash for it; the book is unchanged).
 */
export class ClobMarketFeed {
  readonly hub: FeedHub;
  private readonly byAsset = new Map<string, Set<FeedConnection>>();
  /** By market (its YES token). */
  private readonly announced = new Map<string, Announced>();

  constructor(
    engine: BookEngine,
    private readonly books: ClobBooks,
    private readonly trades: ClobTrades,
    clock: () => number,
  ) {
    this.hub = new FeedHub(clock, { reorder: true, checksum: true });
    for (const m of books.catalog.markets) this.announced.set(m.tokens[0], this.state(m));
    engine.on('venue-a-clob', (inst, event) => this.onEvent(inst, event));
  }

  private state(m: GammaMarketDef): Announced {
    return { tick: this.books.tickSize(m), lastTradePrice: this.books.lastTrade(m.tokens[0])?.price ?? '' };
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, record: RecordedRequest): void {
    if (record.path !== CLOB_WS_PATH) {
      FeedHub.refuse(socket, record, 404, '404 page not found', 'text/plain; charset=utf-8');
      return;
    }
    this.hub.accept(req, socket, head, record, (conn) => {
      conn.onMessage((data, isBinary) => this.onMessage(conn, data, isBinary));
      conn.ws.on('close', () => {
        for (const a of conn.tickers) this.byAsset.get(a)?.delete(conn);
      });
    });
  }

  private onMessage(conn: FeedConnection, data: RawData, isBinary: boolean): void {
    const r = parseClobRequest(isBinary ? '' : rawText(data), isBinary);
    if (r.kind === 'ping') return this.hub.send(conn, 'PONG');
    if (r.kind === 'invalid') return this.hub.send(conn, CLOB_INVALID_OPERATION);
    if (r.kind === 'subscribe') return this.subscribe(conn, r.assets, r.initialDump);
    for (const a of r.assets) {
      conn.tickers.delete(a);
      this.byAsset.get(a)?.delete(conn);
    }
  }

  /** Unknown assets are ignored, as the platform does (no confirmation, no error) [3P]. */
  private subscribe(conn: FeedConnection, ids: string[], dump: boolean): void {
    const books: ClobSummary[] = [];
    for (const a of ids) {
      if (!TOKEN_ID.test(a) || conn.tickers.has(a)) continue;
      const summary = this.books.summary(a);
      if (!summary) continue;
      conn.tickers.add(a);
      let set = this.byAsset.get(a);
      if (!set) this.byAsset.set(a, (set = new Set()));
      set.add(conn);
      books.push(summary);
    }
    if (dump && books.length > 0) this.hub.send(conn, `[${books.map((b) => bookMessage(b)).join(',')}]`);
  }

  private onEvent(inst: Instrument, event: BookEvent): void {
    const t = this.books.catalog.tokens.get(inst.ticker);
    if (!t) return;
    const m = t.market;
    const [yes, no] = m.tokens;
    const before = this.announced.get(yes) ?? this.state(m);
    const after = this.state(m);
    this.announced.set(yes, after);
    const yesSubs = this.byAsset.get(yes) ?? NOBODY;
    const noSubs = this.byAsset.get(no) ?? NOBODY;
    if (yesSubs.size === 0 && noSubs.size === 0) return;
    const ts = String(event.ts);
    const assets: Array<[string, ReadonlySet<FeedConnection>]> = [
      [yes, yesSubs],
      [no, noSubs],
    ];
    if (after.tick !== before.tick) {
      for (const [asset, subs] of assets) {
        if (subs.size === 0) continue;
        this.hub.publish(asset, subs, () => clobWire.tickSizeChange(asset, m.conditionId, before.tick, after.tick, ts));
      }
    }
    const everyone = noSubs.size === 0 ? yesSubs : yesSubs.size === 0 ? noSubs : new Set([...yesSubs, ...noSubs]);
    this.hub.publish([yes, no], everyone, () => this.priceChange(m, event, before.lastTradePrice, yesSubs, noSubs));
    if (event.trades.length === 0) return;
    if (yesSubs.size > 0) {
      for (const trade of event.trades) {
        this.hub.publish(yes, yesSubs, () => this.trades.lastTradePrice(m, { ...trade, ts: event.ts, seq: event.seq }));
      }
    }
    for (const [asset, subs] of assets) {
      if (subs.size === 0) continue;
      this.hub.publish(asset, subs, () => {
        const summary = this.books.summary(asset) as ClobSummary;
        if (this.hub.takeFault('corrupt_checksum', asset)) summary.hash = corruptHash(summary.hash);
        return bookMessage(summary);
      });
    }
  }

  /**
   * The `price_change` of a market's event, per connection (the entries of its assets): each entry's hash and best
   * prices are its asset's after that entry, replayed from the book before the event.
   */
  private priceChange(
    m: GammaMarketDef,
    event: BookEvent,
    lastTradePrice: string,
    yesSubs: ReadonlySet<FeedConnection>,
    noSubs: ReadonlySet<FeedConnection>,
  ): Outgoing {
    const [yes, no] = m.tokens;
    const tick = this.books.tickSize(m);
    const ts = event.ts;
    const now = (this.books.tokenBook(yes) as TokenBook).book;
    const bids = new Map(now.bids);
    const asks = new Map(now.asks);
    const ch = event.changes;
    for (let i = 0; i < ch.length; i += 4) {
      const side = ch[i] === BID ? bids : asks;
      const before = (ch[i + 2] as number) - (ch[i + 3] as number);
      if (before === 0) side.delete(ch[i + 1] as number);
      else side.set(ch[i + 1] as number, before);
    }
    const withYes = yesSubs.size > 0;
    const withNo = noSubs.size > 0;
    const badYes = withYes && this.hub.takeFault('corrupt_checksum', yes);
    const badNo = withNo && !badYes && this.hub.takeFault('corrupt_checksum', no);
    const yesItems: string[] = [];
    const noItems: string[] = [];
    for (let i = 0; i < ch.length; i += 4) {
      const bid = ch[i] === BID;
      const price = ch[i + 1] as number;
      const qty = ch[i + 2] as number;
      if (qty === 0) (bid ? bids : asks).delete(price);
      else (bid ? bids : asks).set(price, qty);
      const book: IntBook = { bids: sorted(bids, true), asks: sorted(asks, false) };
      const size = clobSize(qty);
      if (withYes) {
        let hash = hashOf(yes, m, book, { ts, tick, lastTradePrice });
        if (badYes) hash = corruptHash(hash);
        yesItems.push(
          clobWire.change({
            asset: yes,
            price: clobPrice(price),
            size,
            side: bid ? 'BUY' : 'SELL',
            hash,
            bestBid: best(book.bids),
            bestAsk: best(book.asks),
          }),
        );
      }
      if (withNo) {
        // YES bid at p = NO ask at 1 − p. The NO token has no trades of its own (books.ts).
        const mirrored = mirror(book);
        let hash = hashOf(no, m, mirrored, { ts, tick, lastTradePrice: '' });
        if (badNo) hash = corruptHash(hash);
        noItems.push(
          clobWire.change({
            asset: no,
            price: clobPrice(100 - price),
            size,
            side: bid ? 'SELL' : 'BUY',
            hash,
            bestBid: best(mirrored.bids),
            bestAsk: best(mirrored.asks),
          }),
        );
      }
    }
    const frame = (items: string[]) => clobWire.priceChange(m.conditionId, items, ts);
    let both: string | undefined;
    let onlyYes: string | undefined;
    let onlyNo: string | undefined;
    return (conn) => {
      const y = conn.tickers.has(yes);
      const n = conn.tickers.has(no);
      if (y && n) return (both ??= frame([...yesItems, ...noItems]));
      if (y) return (onlyYes ??= frame(yesItems));
      return n ? (onlyNo ??= frame(noItems)) : undefined;
    };
  }

  close(): void {
    this.hub.close();
    this.byAsset.clear();
  }
}

const NOBODY: ReadonlySet<FeedConnection> = new Set();

const bookMessage = (summary: ClobSummary): string => clobWire.book(summary);

/** A side's levels best first, from price → size. */
function sorted(levels: Map<number, number>, desc: boolean): IntLevel[] {
  return [...levels].sort((a, b) => (desc ? b[0] - a[0] : a[0] - b[0]));
}

/** The best price of a side as the channel prints it ("0" for an empty side [3P]). */
function best(levels: readonly IntLevel[]): string {
  const p = levels[0]?.[0];
  return p === undefined ? '0' : clobPrice(p);
}

/** A hash that is not the book's (a corrupt_checksum fault): 40 hex digits like the real one. */
function corruptHash(hash: string): string {
  return createHash('sha1').update(`not ${hash}`).digest('hex');
}
