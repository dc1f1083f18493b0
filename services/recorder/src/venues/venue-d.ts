// https://docs.cdp.coinbase.com/exchange/websocket-feed/channels, …/exchange/reference/exchangerestapi_getproducttrades
/**
 * Coinbase Exchange (`venue_d`): `level2`, `matches` and `heartbeat` of `wss://ws-feed.exchange.coinbase.com` [V].
 *
 * - `{"type":"subscribe","product_ids":[…],"channels":["matches","heartbeat","level2"]}` [V]. `level2` needs a
 *   signed subscribe (`key`, `passphrase`, `timestamp`, `signature`: the REST signature of `GET /users/self/verify`)
 *   [3P]: signed with the platform's HMAC credentials when configured; without them the public `level2_batch` (the
 *   same messages gathered in 50 ms windows, `time` the batch's) is recorded instead.
 * - A product's book: a `snapshot` (`bids`/`asks` as `[price, size]`; no time, no sequence [V]), then `l2update`s
 *   whose `changes` (`[side, price, size]`) carry a level's new size ("0" removes it) at the change's `time` [V]. The
 *   snapshot holds from the time of the connection's next timestamped message (events arrive in order), or from its
 *   receipt when none follows within RECORDER_SNAPSHOT_QUIET_MS. Resubscribing `level2` gives a fresh snapshot.
 * - level2 carries no sequence [V]: a lost `l2update` shows only against the REST book
 *   (`/products/{id}/book?level=2`), so its books are reconciled by default (RECORDER_RECONCILE_EXCHANGES).
 * - Trades: `matches` — a `last_match` first, then a `match` per trade with its `trade_id` (per product, one greater
 *   per trade [V]), `time`, `price`, `size` and `side`, which is the **maker's** [V]: the stored side is the taker's,
 *   the other one (`venue_side` keeps the maker's). "Messages can be dropped from this channel" [V]: a `trade_id`
 *   skipped, or a `heartbeat` (one a second per product [V]) whose `last_trade_id` names a trade not received, is a
 *   window of missed trades, read back from `GET /products/{id}/trades` [V] (ids only: `before=<id>` the page of newer
 *   trades right above an id, `after=<id>` the older ones below it; at most 1000 a page). A trade's ts is its `time`
 *   truncated to the millisecond on both paths (the feed's has microseconds, REST's milliseconds).
 * - `venue_seq`: a trade row keeps its `match`'s `sequence` (the product's feed sequence [V]; several matches of one
 *   book event may share one in the simulator); book rows carry '' (level2 has none [V]), and so do trades read back
 *   from REST.
 * - Anything that cannot be read — not JSON, a change or level that is not `[side, price, size]` text, a time that
 *   is not RFC 3339, a `sequence` or a heartbeat's `last_trade_id` that is not an integer — is counted and logged, and the books it may have changed are a gap (`malformed_message`) until
 *   their fresh snapshot.
 */
import { ASK, BID, parseObject, stringList } from '@depthgate/feeds';
import { coinbaseHmacSigner, signNow, type CoinbaseHmacCredentials, type Signer } from '@depthgate/platforms';
import type { TickerRecorder } from '../ticker';
import { defineAdapter } from './adapter';
import type { RestClient } from './rest';
import { rfc3339Millis, type BackfillResult, type TradeBackfill, type TradeWindow, type VenueTrade } from './trades';
import {
  chunk,
  malformedMessage,
  type RestBook,
  type SessionContext,
  type FeedProtocol,
  type VenueSession,
} from './types';

/**
 * A message's `sequence` (the product's feed sequence [V]: `match`, `last_match`, `heartbeat`, `ticker` carry it;
 * `snapshot` and `l2update` do not [V]) as a row's `venue_seq`: '' when absent, undefined when it is not a
 * non-negative integer (a malformed message).
 */
function sequenceText(v: unknown): string | undefined {
  if (v === undefined) return '';
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return v;
  return undefined;
}

/** A trade id as Coinbase sends it (a JSON integer) as text; undefined when it is not one. */
function tradeIdText(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return v;
  return undefined;
}

/**
 * A Coinbase trade: the feed's `match`/`last_match` or a REST trade (`time`, `trade_id`, `price`, `size`, `side`).
 * `side` is the maker's [V]: the taker did the other thing (a resting sell met means the taker bought).
 */
export function venueDTrade(m: Record<string, unknown>): VenueTrade | undefined {
  const id = tradeIdText(m.trade_id);
  const ts = rfc3339Millis(m.time);
  const maker = m.side;
  if (id === undefined || ts === undefined || typeof m.price !== 'string' || typeof m.size !== 'string')
    return undefined;
  if (maker !== 'buy' && maker !== 'sell') return undefined;
  return { ts, id, price: m.price, size: m.size, side: maker === 'buy' ? 'sell' : 'buy', venueSide: maker };
}

/** Trades per REST page: the most Coinbase gives [V]. */
const COINBASE_TRADES_PAGE = 1000;

/**
 * Reads a window back from `/products/{id}/trades`: with the last trade held, forward page by page with `before`
 * (the trades right above an id) until a page is short or passes the window's end; without one, back from the newest
 * page with `after` until a page reaches before the window. Out of pages, the part not reached is missing.
 */
export const venueDTrades: TradeBackfill = {
  async fetch(rest, ticker, w: TradeWindow, { maxPages, signal }): Promise<BackfillResult> {
    const trades: VenueTrade[] = [];
    const page = async (query: string): Promise<VenueTrade[]> => {
      const body = (await rest.json(`/products/${encodeURIComponent(ticker)}/trades?${query}`, signal)) as unknown;
      const out: VenueTrade[] = [];
      for (const raw of Array.isArray(body) ? (body as unknown[]) : []) {
        if (raw === null || typeof raw !== 'object') continue;
        const t = venueDTrade(raw as Record<string, unknown>);
        if (t !== undefined) out.push(t);
      }
      return out;
    };
    const since = w.last !== undefined ? tradeIdText(w.last.id) : undefined;
    if (since !== undefined) {
      let cursor = BigInt(since);
      let reached = w.last?.ts ?? w.from;
      for (let pages = 0; ; pages++) {
        if (pages >= maxPages) return { trades, missing: { from: reached, to: w.to } };
        const list = await page(`before=${cursor}&limit=${COINBASE_TRADES_PAGE}`);
        trades.push(...list);
        for (const t of list) {
          if (BigInt(t.id) > cursor) cursor = BigInt(t.id);
          if (t.ts > reached) reached = t.ts;
        }
        if (list.length < COINBASE_TRADES_PAGE || reached > w.to) return { trades };
      }
    }
    let after: bigint | undefined;
    let oldest = w.to;
    for (let pages = 0; ; pages++) {
      if (pages >= maxPages) return { trades, missing: { from: w.from, to: oldest } };
      const list = await page(
        after === undefined ? `limit=${COINBASE_TRADES_PAGE}` : `after=${after}&limit=${COINBASE_TRADES_PAGE}`,
      );
      trades.push(...list);
      for (const t of list) {
        if (after === undefined || BigInt(t.id) < after) after = BigInt(t.id);
        if (t.ts < oldest) oldest = t.ts;
      }
      if (list.length < COINBASE_TRADES_PAGE || oldest < w.from) return { trades };
    }
  },
};

type BookChannel = 'level2' | 'level2_batch';

/** The signed subscribe's fields [3P]: the REST signature of `GET /users/self/verify` (HMAC credentials only). */
export function coinbaseSubscribeAuth(signer: Signer, feedUrl: string, nowMs: number): Record<string, string> {
  const host = new URL(feedUrl).host;
  const h = signNow(signer, { method: 'GET', path: '/users/self/verify', query: '', body: '', host }, nowMs);
  const get = (name: string) => h[name] ?? h[name.toLowerCase()] ?? '';
  return {
    key: get('CB-ACCESS-KEY'),
    passphrase: get('CB-ACCESS-PASSPHRASE'),
    timestamp: get('CB-ACCESS-TIMESTAMP'),
    signature: get('CB-ACCESS-SIGN'),
  };
}

const SIDES: Record<string, typeof BID | typeof ASK> = { buy: BID, sell: ASK };

function levelList(v: unknown): [string, string][] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: [string, string][] = [];
  for (const l of v as unknown[]) {
    if (!Array.isArray(l) || typeof l[0] !== 'string' || typeof l[1] !== 'string') return undefined;
    out.push([l[0], l[1]]);
  }
  return out;
}

class VenueDSession implements VenueSession {
  /** Products subscribed on this connection. */
  private readonly products = new Set<string>();
  /** Products whose next book message must be a snapshot (their book was lost or is being re-read). */
  private readonly expecting = new Set<string>();
  /** Snapshots waiting for the connection's next timestamped message. */
  private readonly pending = new Set<TickerRecorder>();
  /** The newest trade id each product's matches or heartbeats named on this connection. */
  private readonly lastTradeId = new Map<string, bigint>();
  private mark = -1;

  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
    private readonly channel: BookChannel,
    private readonly auth: (() => Record<string, string>) | undefined,
    private readonly trades: boolean,
  ) {}

  watermark(): number {
    return this.mark;
  }

  private send(type: 'subscribe' | 'unsubscribe', products: readonly string[], channels: string[]): void {
    for (const part of chunk(products, this.batch)) {
      const signed = type === 'subscribe' && channels.includes('level2') && this.auth ? this.auth() : {};
      this.ctx.send(JSON.stringify({ type, product_ids: part, channels, ...signed }));
    }
  }

  /** Matches first: by the time a product's snapshot arrives its trades flow (the window the feed missed ends). */
  subscribe(tickers: readonly string[]): void {
    for (const t of tickers) {
      this.products.add(t);
      this.expecting.add(t);
    }
    this.send('subscribe', tickers, [...(this.trades ? ['matches'] : []), 'heartbeat', this.channel]);
  }

  unsubscribe(tickers: readonly string[]): void {
    for (const t of tickers) {
      this.products.delete(t);
      this.expecting.delete(t);
      this.lastTradeId.delete(t);
    }
    this.send('unsubscribe', tickers, [...(this.trades ? ['matches'] : []), 'heartbeat', this.channel]);
  }

  /** A book in doubt: its book channel again (answered with a fresh snapshot); matches and heartbeats carry on. */
  resync(tickers: readonly string[]): void {
    const list = tickers.filter((t) => this.products.has(t));
    if (list.length === 0) return;
    for (const t of list) this.expecting.add(t);
    this.send('unsubscribe', list, [this.channel]);
    this.send('subscribe', list, [this.channel]);
  }

  /** A message that cannot be read: counted, logged, and the books it may concern lost until fresh snapshots. */
  private malformed(problem: string, text: string, product?: string): void {
    malformedMessage(this.ctx, this, problem, text, product, this.products);
  }

  /** Every event up to `ts` has arrived: snapshots waiting for a time hold from it. */
  private timestamped(ts: number): void {
    if (this.pending.size > 0) {
      for (const rec of this.pending) rec.settle(ts);
      this.pending.clear();
    }
    if (ts > this.mark) this.mark = ts;
  }

  onMessage(text: string, receivedAt: number): void {
    const m = parseObject(text);
    if (!m) return this.malformed('not a JSON object', text);
    const product = typeof m.product_id === 'string' ? m.product_id : undefined;
    try {
      this.handle(m, product, text, receivedAt);
    } catch (err) {
      this.malformed((err as Error).message, text, product);
    }
  }

  private handle(m: Record<string, unknown>, product: string | undefined, text: string, receivedAt: number): void {
    switch (m.type) {
      case 'snapshot': {
        const rec = product === undefined ? undefined : this.ctx.ticker(product);
        if (rec === undefined || product === undefined) return;
        const bids = levelList(m.bids);
        const asks = levelList(m.asks);
        if (!bids || !asks) return this.malformed('snapshot levels are not [price, size] text', text, product);
        this.expecting.delete(product);
        this.pending.delete(rec);
        if (rec.venueSnapshot(bids, asks, { defer: true, receivedAt })) this.pending.add(rec);
        return;
      }
      case 'l2update': {
        const ts = rfc3339Millis(m.time);
        if (ts === undefined || product === undefined || !Array.isArray(m.changes))
          return this.malformed('l2update without product_id, time or changes', text, product);
        this.timestamped(ts);
        const rec = this.ctx.ticker(product);
        if (rec === undefined || this.expecting.has(product)) return;
        const changes: [typeof BID | typeof ASK, string, string][] = [];
        for (const c of m.changes as unknown[]) {
          const list = stringList(c);
          const side = list && SIDES[list[0] as string];
          if (!list || list.length < 3 || side === undefined)
            return this.malformed('a change is not [side, price, size] text', text, product);
          changes.push([side, list[1] as string, list[2] as string]);
        }
        const t = rec.beginEvent(ts, receivedAt);
        if (t < 0) return;
        for (const [side, price, size] of changes) rec.applyLevel(t, side, price, size);
        return;
      }
      case 'match':
      case 'last_match': {
        const trade = venueDTrade(m);
        const venueSeq = sequenceText(m.sequence);
        if (trade === undefined || product === undefined || venueSeq === undefined)
          return this.malformed('unreadable match', text, product);
        // A `last_match` is the product's last trade, maybe hours old: its time says nothing of what has arrived, so
        // it settles no waiting snapshot (which would be dated back to it, before the feed's outage ended).
        if (m.type === 'match') this.timestamped(trade.ts);
        const rec = this.ctx.ticker(product);
        if (rec === undefined || !this.trades) return;
        const id = BigInt(trade.id);
        const last = this.lastTradeId.get(product);
        // A trade id skipped: the channel dropped matches [V] (`last_match` only starts the count).
        if (m.type === 'match' && last !== undefined && id > last + 1n) rec.tradesMissed(trade.ts);
        if (last === undefined || id > last) this.lastTradeId.set(product, id);
        rec.trade({ ...trade, venueSeq }, receivedAt);
        return;
      }
      case 'heartbeat': {
        const ts = rfc3339Millis(m.time);
        const id = tradeIdText(m.last_trade_id);
        // A `last_trade_id` present but not an integer: the lost-trade check it is for cannot be made.
        if (ts === undefined || product === undefined || (m.last_trade_id !== undefined && id === undefined))
          return this.malformed('unreadable heartbeat', text, product);
        this.timestamped(ts);
        const rec = this.ctx.ticker(product);
        if (rec === undefined || !this.trades || id === undefined) return;
        const last = this.lastTradeId.get(product);
        // The product's last trade is one this connection never brought.
        if (last !== undefined && BigInt(id) > last) rec.tradesMissed(ts);
        if (last === undefined || BigInt(id) > last) this.lastTradeId.set(product, BigInt(id));
        return;
      }
      case 'error': {
        const reason = String(m.reason ?? '');
        const unknown = /^(\S+) is not a valid product/.exec(reason)?.[1];
        if (unknown !== undefined && this.products.has(unknown)) {
          this.products.delete(unknown);
          this.expecting.delete(unknown);
          this.ctx.rejectTicker(unknown, reason);
          // Coinbase ignores the whole subscribe message that named it: the products still waiting for their first
          // book (those of that message among them) are subscribed again, without it.
          if (this.expecting.size > 0) this.subscribe([...this.expecting]);
          return;
        }
        this.ctx.logger.warn({ error: m }, 'Coinbase feed error');
        return;
      }
      default:
      // `subscriptions`, `ticker`: nothing to record.
    }
  }

  close(): void {
    this.pending.clear();
    this.products.clear();
    this.expecting.clear();
    this.lastTradeId.clear();
  }
}

interface CoinbaseProduct {
  id?: unknown;
  quote_currency?: unknown;
  status?: unknown;
  trading_disabled?: unknown;
}

export function venueDProtocol(o: {
  subscribeBatch: number;
  trades: boolean;
  /** Signs the `level2` subscribe; absent: `level2_batch`. */
  auth?: () => Record<string, string>;
}): FeedProtocol {
  const channel: BookChannel = o.auth ? 'level2' : 'level2_batch';
  return {
    venueClock: true,
    // `level2` carries no sequence (only `matches` and `heartbeat` do): a lost book change shows only at a verification.
    provesContinuity: false,
    signedHandshake: false,
    createSession: (ctx) => new VenueDSession(ctx, o.subscribeBatch, channel, o.auth, o.trades),
    /** Every online product, or (series) those quoted in the given currencies (`USD`, `EUR`). */
    async listActive(rest: RestClient, series: readonly string[], all: boolean): Promise<string[]> {
      const body = (await rest.json('/products')) as unknown;
      const quotes = new Set(series.map((s) => s.toUpperCase()));
      const out: string[] = [];
      for (const p of Array.isArray(body) ? (body as CoinbaseProduct[]) : []) {
        if (typeof p.id !== 'string' || p.trading_disabled === true) continue;
        if (p.status !== undefined && p.status !== 'online') continue;
        const quote = typeof p.quote_currency === 'string' ? p.quote_currency.toUpperCase() : '';
        if (all || quotes.has(quote)) out.push(p.id);
      }
      return out;
    },
    async restBook(rest: RestClient, ticker: string): Promise<RestBook> {
      const body = (await rest.json(`/products/${encodeURIComponent(ticker)}/book?level=2`)) as {
        bids?: unknown;
        asks?: unknown;
      };
      return { bids: levelList(body.bids) ?? [], asks: levelList(body.asks) ?? [] };
    },
    normalizeTicker: (t) => t.toUpperCase(),
  };
}

/**
 * The recorder's adapter of Coinbase Exchange: public REST 10 requests a second [V], so 1 (reconciliation within
 * RECORDER_RECONCILE_BUDGET of the 10, yielding to backfill and discovery: RestClient's background lane); no sequence
 * on its book channel, so its books are reconciled against REST (`/products/{id}/book?level=2`) by default; missed
 * trades read back from `/products/{id}/trades`.
 */
export const venueDRecorder = defineAdapter({
  restRate: 1,
  reconcile: true,
  trades: venueDTrades,
  settings: {},
  protocol: (ctx) => {
    // The HMAC credentials sign the level2 subscribe; a JWT key cannot (its signature is not the feed's). So the feed
    // takes the HMAC credentials whenever they are set, even where the platform signs its REST calls with a JWT.
    const hmac = ctx.credentials.hmac as CoinbaseHmacCredentials | undefined;
    const signer = hmac === undefined ? undefined : coinbaseHmacSigner(hmac, { signQuery: true });
    return venueDProtocol({
      subscribeBatch: ctx.subscribeBatch,
      trades: ctx.trades,
      auth: signer ? () => coinbaseSubscribeAuth(signer, 'wss://ws-feed.exchange.coinbase.com', Date.now()) : undefined,
    });
  },
});
