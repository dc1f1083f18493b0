// https://docs.polymarket.com/api-reference/wss/market, …/api-reference/orderbook/get-order-book
/**
 * Polymarket CLOB (`venue_a_clob`): the market channel of `wss://ws-subscriptions-clob.polymarket.com/ws/market` [V].
 * A ticker is an outcome token id (the channel's `asset_id`: an ERC-1155 id of up to 78 decimal digits).
 *
 * - Public. `{"assets_ids":[…],"type":"market"}` first, then `{"assets_ids":[…],"operation":"subscribe"|"unsubscribe"}`
 *   [V]; no confirmation. Each newly subscribed asset gets its `book` (initial books may come as a JSON array of
 *   `book` events [3P]). Keep-alive: the text `PING` (the venue asks for one every 10 s), answered `PONG` [3P]: the
 *   feed socket sends it every `RECORDER_PING_INTERVAL_MS` (10 s by default), so a quiet market's connection stays
 *   alive under any stall timeout longer than that.
 * - A `book` (`bids`/`asks` as `{price, size}`, `timestamp` ms, `hash`) is the asset's whole book: the first after a
 *   subscription is stored as the venue's snapshot, holding from `timestamp` + 1 (it includes the change at its
 *   time); later ones (the venue sends one after each trade [V]) are diffed against ours. A `price_change` carries,
 *   per changed level, an entry with the asset, `price`, new aggregate `size` ("0" removes the level), `side` (BUY:
 *   bids, SELL: asks) and the `hash` of that asset's book after the entry [V]: entries apply in order at the
 *   message's `timestamp`. Bids and asks are the token's own (a NO token's book is its own; nothing is mirrored).
 * - The hash: every `book` and every `price_change` entry of a recorded asset is checked against the book the
 *   recorder holds after it (`clobBookHash`, packages/feeds/src/clob-hash.ts), with the asset's `min_order_size`,
 *   `tick_size`, `neg_risk` (from its `book` messages, or REST `/book` where a `book` lacks them),
 *   `tick_size_change` and `last_trade_price`, at the message's timestamp. A recipe revision the venue still uses is
 *   found once (`clobHashRevision`) and kept for the connection. A match is a verification point (the book is known
 *   right there). A mismatch makes the asset's book unverified: REST `/book` is read once — if its settings (its
 *   last trade price, tick size, …) reproduce the message's hash from our book, we held stale settings, not a wrong
 *   book (the venue's race with `last_trade_price`, py-clob-client-v2 #117): `explained`, no gap; otherwise it is a
 *   divergence: a book gap `divergence` from the last moment verified before that hash to the venue's next book (a
 *   whole `book` that repaired ours while REST was read does not move it), and the asset is
 *   resubscribed (its fresh `book` re-bases ours). A wrong hash on a right book cannot be told from a wrong book:
 *   it is a gap too.
 * - Trades: `last_trade_price` [V] (`price`, `size`, the taker's `side`, `timestamp` ms, `transaction_hash`). No trade
 *   id [V]: the id is the `transaction_hash` (what the Data API also names a trade by), or where a message lacks it
 *   a deterministic `h:` id over asset, timestamp, price, size and side. [U] a taker's fills against several makers
 *   may share one transaction: they would be stored as one. A window the feed missed is a trades gap
 *   (`no_backfill`): the Data API's `/trades` gives times in whole seconds (the channel's are milliseconds) and sizes
 *   and prices as JSON numbers, so a trade read back could not get the time and exact amounts its feed copy has.
 * - No sequence anywhere [V]: a lost `price_change` shows in the next hash of its asset (a divergence). Anything
 *   that cannot be read — not JSON, a `book` or entry whose fields are not the venue's text — is counted and logged,
 *   and the books it may concern are a gap (`malformed_message`) until their fresh `book`.
 */
import {
  ASK,
  BID,
  clobBookHash,
  clobHashRevision,
  formatDecimal,
  type ClobBookSummary,
  type ClobHashRevision,
  type ClobLevel,
  type LocalBook,
  type SideCode,
} from '@depthgate/feeds';
import { VENUE_TEXT_PATTERN } from '@depthgate/history-store';
import type { TickerRecorder } from '../ticker';
import { defineAdapter } from './adapter';
import type { RestClient } from './rest';
import { deterministicTradeId, epochMillisText, type VenueTrade } from './trades';
import {
  chunk,
  malformedMessage,
  type RestBook,
  type SessionContext,
  type FeedProtocol,
  type VenueSession,
} from './types';

/** What the hash covers besides the levels, per asset, as the venue spells it. */
interface AssetSettings {
  market: string;
  minOrderSize?: string;
  tickSize?: string;
  negRisk?: boolean;
  lastTradePrice: string;
}

function isText(v: unknown): v is string {
  return typeof v === 'string';
}

/** `[{price, size}]` → `[[price, size]]`, undefined when a level is not two strings. */
function clobLevels(v: unknown): [string, string][] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: [string, string][] = [];
  for (const l of v as { price?: unknown; size?: unknown }[]) {
    if (l === null || typeof l !== 'object' || !isText(l.price) || !isText(l.size)) return undefined;
    out.push([l.price, l.size]);
  }
  return out;
}

/** One side of our book in the venue's order (best last: bids ascending, asks descending), shortest forms. */
function venueSide(book: LocalBook, side: SideCode, order: 'asc' | 'desc'): ClobLevel[] {
  return book.sortedEntries(side, order).map(([price, level]) => ({ price, size: formatDecimal(level.q) }));
}

/**
 * The summary the venue hashes for our book of an asset at `timestamp` (its prices canonical, sizes in their
 * shortest form: the venue's own spelling [V]).
 */
export function clobSummaryOf(
  asset: string,
  book: LocalBook,
  s: Required<AssetSettings>,
  timestamp: string,
): ClobBookSummary {
  return {
    market: s.market,
    asset_id: asset,
    timestamp,
    bids: venueSide(book, BID, 'asc'),
    asks: venueSide(book, ASK, 'desc'),
    min_order_size: s.minOrderSize,
    tick_size: s.tickSize,
    neg_risk: s.negRisk,
    last_trade_price: s.lastTradePrice,
  };
}

/** A `last_trade_price` event as a trade (the taker's side [V]); undefined when a field it needs is missing. */
export function venueAClobTrade(m: Record<string, unknown>): VenueTrade | undefined {
  const { price, size, side, timestamp } = m;
  const ts = epochMillisText(timestamp);
  if (!isText(price) || !isText(size) || !isText(timestamp) || ts === undefined) return undefined;
  if (side !== 'BUY' && side !== 'SELL') return undefined;
  const tx = m.transaction_hash;
  const id =
    isText(tx) && tx !== '' && VENUE_TEXT_PATTERN.test(tx)
      ? tx
      : deterministicTradeId([String(m.asset_id), timestamp, price, size, side]);
  return { ts, id, price, size, side: side === 'BUY' ? 'buy' : 'sell', venueSide: side };
}

class VenueAClobSession implements VenueSession {
  /** Assets subscribed on this connection. */
  private readonly assets = new Set<string>();
  /** Assets whose next `book` is their snapshot. */
  private readonly expecting = new Set<string>();
  private readonly settings = new Map<string, AssetSettings>();
  /** Assets whose book is unverified while a REST book is read (checks wait). */
  private readonly doubt = new Set<string>();
  /** Assets whose missing settings are being read from REST. */
  private readonly reading = new Set<string>();
  private revision: ClobHashRevision = '2025-12';
  private started = false;
  private closed = false;
  private mark = -1;

  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
    private readonly trades: boolean,
  ) {}

  watermark(): number {
    return this.mark;
  }

  subscribe(tickers: readonly string[]): void {
    for (const t of tickers) {
      this.assets.add(t);
      this.expecting.add(t);
    }
    for (const part of chunk(tickers, this.batch)) {
      this.ctx.send(
        JSON.stringify(
          this.started ? { assets_ids: part, operation: 'subscribe' } : { assets_ids: part, type: 'market' },
        ),
      );
      this.started = true;
    }
  }

  unsubscribe(tickers: readonly string[]): void {
    for (const t of tickers) {
      this.assets.delete(t);
      this.expecting.delete(t);
      this.settings.delete(t);
      this.doubt.delete(t);
    }
    for (const part of chunk(tickers, this.batch)) {
      this.ctx.send(JSON.stringify({ assets_ids: part, operation: 'unsubscribe' }));
    }
  }

  /** Books in doubt: unsubscribed and subscribed again, so each gets a fresh `book`. */
  resync(tickers: readonly string[]): void {
    const list = tickers.filter((t) => this.assets.has(t));
    if (list.length === 0) return;
    this.unsubscribe(list);
    this.subscribe(list);
  }

  private malformed(problem: string, text: string, asset?: string): void {
    malformedMessage(this.ctx, this, problem, text, asset, this.assets);
  }

  onMessage(text: string, receivedAt: number): void {
    if (text === 'PONG') return;
    if (text === 'INVALID OPERATION') {
      this.ctx.logger.warn('Polymarket CLOB refused a subscription message');
      return;
    }
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return this.malformed('not JSON', text);
    }
    const events = Array.isArray(v) ? (v as unknown[]) : [v];
    for (const e of events) {
      if (e === null || typeof e !== 'object' || Array.isArray(e)) return this.malformed('not an event object', text);
      const m = e as Record<string, unknown>;
      const asset = isText(m.asset_id) ? m.asset_id : undefined;
      try {
        this.handle(m, asset, text, receivedAt);
      } catch (err) {
        this.malformed((err as Error).message, text, asset);
      }
    }
  }

  private handle(m: Record<string, unknown>, asset: string | undefined, text: string, receivedAt: number): void {
    switch (m.event_type) {
      case 'book':
        return this.book(m, asset, text, receivedAt);
      case 'price_change':
        return this.priceChange(m, text, receivedAt);
      case 'last_trade_price': {
        const rec = asset === undefined ? undefined : this.ctx.ticker(asset);
        if (rec === undefined || asset === undefined) return;
        const trade = venueAClobTrade(m);
        if (trade === undefined) return this.malformed('unreadable last_trade_price', text, asset);
        const s = this.settings.get(asset);
        if (s) s.lastTradePrice = trade.price;
        if (trade.ts > this.mark) this.mark = trade.ts;
        if (this.trades) rec.trade(trade, receivedAt);
        return;
      }
      case 'tick_size_change': {
        if (asset === undefined || !this.assets.has(asset)) return;
        if (!isText(m.new_tick_size)) return this.malformed('tick_size_change without new_tick_size', text, asset);
        const s = this.settings.get(asset);
        if (s) s.tickSize = m.new_tick_size;
        return;
      }
      default:
      // best_bid_ask, new_market, market_resolved (custom features): nothing to record.
    }
  }

  private book(m: Record<string, unknown>, asset: string | undefined, text: string, receivedAt: number): void {
    const rec = asset === undefined ? undefined : this.ctx.ticker(asset);
    if (rec === undefined || asset === undefined) return;
    const bids = clobLevels(m.bids);
    const asks = clobLevels(m.asks);
    const { timestamp, hash, market } = m;
    const ts = epochMillisText(timestamp);
    if (!bids || !asks || !isText(timestamp) || ts === undefined || !isText(hash) || !isText(market))
      return this.malformed('book without its levels, timestamp, hash or market', text, asset);
    const s: AssetSettings = this.settings.get(asset) ?? { market, lastTradePrice: '' };
    s.market = market;
    if (isText(m.min_order_size)) s.minOrderSize = m.min_order_size;
    if (isText(m.tick_size)) s.tickSize = m.tick_size;
    if (typeof m.neg_risk === 'boolean') s.negRisk = m.neg_risk;
    if (isText(m.last_trade_price)) s.lastTradePrice = m.last_trade_price;
    this.settings.set(asset, s);
    if (ts > this.mark) this.mark = ts;
    let rowTs: number;
    if (this.expecting.delete(asset) || !rec.live) {
      this.doubt.delete(asset);
      rec.venueSnapshot(bids, asks, { ts: ts + 1, receivedAt });
      rowTs = rec.lastTs;
    } else {
      rowTs = rec.beginEvent(ts, receivedAt);
      if (rowTs < 0) return;
      rec.applyWholeBook(rowTs, bids, asks);
    }
    this.check(asset, rec, timestamp, hash, rowTs);
  }

  private priceChange(m: Record<string, unknown>, text: string, receivedAt: number): void {
    const { timestamp } = m;
    const ts = epochMillisText(timestamp);
    if (!isText(timestamp) || ts === undefined || !Array.isArray(m.price_changes))
      return this.malformed('price_change without timestamp or price_changes', text);
    if (ts > this.mark) this.mark = ts;
    const rows = new Map<string, number>();
    for (const raw of m.price_changes as unknown[]) {
      const e = (raw ?? {}) as Record<string, unknown>;
      const asset = isText(e.asset_id) ? e.asset_id : undefined;
      const rec = asset === undefined ? undefined : this.ctx.ticker(asset);
      if (rec === undefined || asset === undefined) {
        if (asset === undefined) return this.malformed('price_change entry without asset_id', text);
        continue;
      }
      const { price, size, side, hash } = e;
      if (!isText(price) || !isText(size) || !isText(hash) || (side !== 'BUY' && side !== 'SELL'))
        return this.malformed('price_change entry without price, size, side or hash', text, asset);
      if (this.expecting.has(asset)) continue;
      let t = rows.get(asset);
      if (t === undefined) {
        t = rec.beginEvent(ts, receivedAt);
        rows.set(asset, t);
      }
      if (t < 0) continue;
      rec.applyLevel(t, side === 'BUY' ? BID : ASK, price, size);
      this.check(asset, rec, timestamp, hash, t);
    }
  }

  /** The asset's settings, complete, or undefined (then read from REST once). */
  private complete(asset: string): Required<AssetSettings> | undefined {
    const s = this.settings.get(asset);
    if (s?.minOrderSize === undefined || s.tickSize === undefined || s.negRisk === undefined) {
      if (s !== undefined) void this.readSettings(asset);
      return undefined;
    }
    return s as Required<AssetSettings>;
  }

  private check(asset: string, rec: TickerRecorder, timestamp: string, hash: string, rowTs: number): void {
    if (this.doubt.has(asset) || !rec.live) return;
    const s = this.complete(asset);
    if (s === undefined) return this.ctx.checksum('unchecked');
    const summary = clobSummaryOf(asset, rec.book, s, timestamp);
    if (clobBookHash(summary, this.revision) !== hash) {
      const older = clobHashRevision(summary, hash);
      if (older === undefined) {
        this.doubt.add(asset);
        // The book is in doubt from its last verification before this hash: one after it (a whole `book` applied
        // while the REST book is read) proves the book at its own moment, not the rows between.
        void this.confirm(asset, rec, summary, hash, rec.verifiedTs >= 0 ? rec.verifiedTs : rec.lastTs);
        return;
      }
      this.ctx.logger.info({ revision: older }, 'Polymarket CLOB hashes with an older recipe; checking with it');
      this.revision = older;
    }
    this.ctx.checksum('match');
    rec.checksumMatched(rowTs);
  }

  /** The REST book's settings, over ours. */
  private async restSettings(asset: string): Promise<AssetSettings | undefined> {
    const body = (await this.ctx.rest.json(`/book?token_id=${encodeURIComponent(asset)}`)) as Record<string, unknown>;
    const s = this.settings.get(asset);
    if (this.closed || s === undefined) return undefined;
    if (isText(body.min_order_size)) s.minOrderSize = body.min_order_size;
    if (isText(body.tick_size)) s.tickSize = body.tick_size;
    if (typeof body.neg_risk === 'boolean') s.negRisk = body.neg_risk;
    return { ...s, lastTradePrice: isText(body.last_trade_price) ? body.last_trade_price : s.lastTradePrice };
  }

  private async readSettings(asset: string): Promise<void> {
    if (this.reading.has(asset)) return;
    this.reading.add(asset);
    try {
      await this.restSettings(asset);
    } catch (err) {
      this.ctx.logger.debug({ err: { message: (err as Error).message }, asset }, 'CLOB /book failed');
    } finally {
      // Read again at a later check if it is still incomplete.
      setTimeout(() => this.reading.delete(asset), 5000).unref();
    }
  }

  /**
   * A hash our book did not reproduce: the REST book's settings decide whether we held stale settings (explained) or
   * a wrong book (divergence: a gap from the last verified moment, and a fresh `book`). A REST book that cannot be
   * read explains nothing.
   */
  private async confirm(
    asset: string,
    rec: TickerRecorder,
    summary: ClobBookSummary,
    hash: string,
    knownGood: number,
  ): Promise<void> {
    let rest: AssetSettings | undefined;
    try {
      rest = await this.restSettings(asset);
    } catch (err) {
      this.ctx.logger.warn({ err: { message: (err as Error).message }, asset }, 'CLOB /book failed; hash unconfirmed');
    }
    if (this.closed || !this.doubt.has(asset) || this.ctx.ticker(asset) !== rec) return;
    if (rest?.minOrderSize !== undefined && rest.tickSize !== undefined && rest.negRisk !== undefined) {
      const again = {
        ...summary,
        min_order_size: rest.minOrderSize,
        tick_size: rest.tickSize,
        neg_risk: rest.negRisk,
        last_trade_price: rest.lastTradePrice,
      };
      if (clobBookHash(again, this.revision) === hash) {
        this.doubt.delete(asset);
        this.ctx.checksum('explained');
        return;
      }
    }
    this.ctx.checksum('divergence');
    this.ctx.logger.warn({ asset, hash }, "Polymarket CLOB hash differs from the recorder's book: divergence");
    this.doubt.delete(asset);
    rec.lose('divergence', knownGood);
    this.resync([asset]);
  }

  close(): void {
    this.closed = true;
    this.assets.clear();
    this.expecting.clear();
    this.settings.clear();
    this.doubt.clear();
  }
}

interface ClobMarket {
  condition_id?: unknown;
  active?: unknown;
  closed?: unknown;
  enable_order_book?: unknown;
  accepting_orders?: unknown;
  tokens?: { token_id?: unknown }[];
}

export function venueAClobProtocol(o: { subscribeBatch: number; trades: boolean }): FeedProtocol {
  return {
    venueClock: true,
    // The hash checks the book at each message that carries it, not that none was lost after the last one.
    provesContinuity: false,
    signedHandshake: false,
    keepAliveText: 'PING',
    createSession: (ctx) => new VenueAClobSession(ctx, o.subscribeBatch, o.trades),
    /** The tokens of every open market with an order book, or (series) of the given markets (condition ids). */
    async listActive(rest: RestClient, series: readonly string[], all: boolean): Promise<string[]> {
      const wanted = new Set(series.map((s) => s.toLowerCase()));
      const out: string[] = [];
      let cursor = '';
      for (let page = 0; page < 10_000; page++) {
        const body = (await rest.json(`/markets${cursor ? `?next_cursor=${encodeURIComponent(cursor)}` : ''}`)) as {
          data?: ClobMarket[];
          next_cursor?: unknown;
        };
        for (const m of body.data ?? []) {
          if (m.active === false || m.closed === true || m.enable_order_book === false || m.accepting_orders === false)
            continue;
          if (!all && !(isText(m.condition_id) && wanted.has(m.condition_id.toLowerCase()))) continue;
          for (const t of m.tokens ?? []) if (isText(t.token_id) && t.token_id !== '') out.push(t.token_id);
        }
        cursor = isText(body.next_cursor) ? body.next_cursor : '';
        if (cursor === '' || cursor === 'LTE=' || (body.data ?? []).length === 0) break;
      }
      return out;
    },
    async restBook(rest: RestClient, ticker: string): Promise<RestBook> {
      const body = (await rest.json(`/book?token_id=${encodeURIComponent(ticker)}`)) as Record<string, unknown>;
      return { bids: clobLevels(body.bids) ?? [], asks: clobLevels(body.asks) ?? [] };
    },
    normalizeTicker: (t) => t,
  };
}

/**
 * The recorder's adapter of Polymarket's CLOB: `/book` allows 1,500 requests per 10 s [V], so 10 a second (hash
 * confirmations, discovery, reconciliation). Every book message carries a checksum, which verifies the book only on
 * the messages that arrive: a lost `price_change` shows at the asset's next hash, and a quiet asset's loss at its next
 * scheduled REST `/book` (reconciled by default, within RECORDER_RECONCILE_BUDGET of the limit). No trade history a
 * trade could be read back from exactly.
 */
export const venueAClobRecorder = defineAdapter({
  restRate: 10,
  reconcile: true,
  trades: {
    cannot:
      "the Data API's trades carry whole-second times and JSON-number amounts, not the channel's milliseconds and exact decimals",
  },
  settings: {},
  protocol: (ctx) => venueAClobProtocol({ subscribeBatch: ctx.subscribeBatch, trades: ctx.trades }),
});
