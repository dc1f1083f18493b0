// https://docs.polymarket.us/api-reference/websocket/markets
/**
 * Polymarket US (`venue_a_us`): `wss://api.polymarket.us/v1/ws/markets` [V].
 *
 * - The handshake carries the Ed25519 headers of the REST API, signed over `timestamp + GET + /v1/ws/markets` [V];
 *   without credentials Polymarket US is not recorded.
 * - `{"subscribe":{"requestId","subscriptionType":"SUBSCRIPTION_TYPE_MARKET_DATA","marketSlugs":[…]}}`, at most 100
 *   markets per subscription [V]. Every MARKET_DATA message is the market's whole book (`bids`/`offers`,
 *   `px.value`, `qty`) with `transactTime` [V]: the first after a subscription is stored as the venue's snapshot,
 *   every later one is diffed against our book into signed deltas, stamped with its `transactTime` (ms).
 * - `responsesDebounced` (RECORDER_POLYMARKET_US_DEBOUNCED, default false [U]): a debounced stream may merge
 *   changes, which the history would then not show one by one.
 * - No sequence numbers: a lost message cannot be seen, but the next whole book repairs our book (its changes land
 *   at the later message's time). `{"heartbeat":{}}` keeps the connection alive.
 *
 * A book whose `transactTime` is T includes the change at T, so the first book holds from T + 1 ms.
 *
 * Trades: `SUBSCRIPTION_TYPE_TRADE` [V], a subscription of its own per request, sent before the books' (so it carries
 * trades by the time a market's first book arrives): `trade` with `marketSlug`, `price` and `quantity` (Amounts),
 * `tradeTime`, and the maker's and taker's `side` and `intent`. No trade id and no sequence [V]: the id is
 * deterministic (`venueAUsTradeId`). The book is the market's long (YES) side: the taker's intent says what it did
 * to it (BUY_LONG or SELL_SHORT: `buy`; SELL_LONG or BUY_SHORT: `sell`), its `side` where there is no intent; the
 * price is taken as the long side's [U for short intents]. Polymarket US publishes no trade history: a window the
 * feed missed (a disconnect, a stall, a restart) is a trades gap (`no_backfill`). A trade message lost on a live
 * connection shows in the books' `stats.sharesTraded` [V] (the market's traded quantity; each book counts every trade
 * up to its change, whose trades follow it [U on the venue: the simulator's order]): the trade count audit
 * (`TickerRecorder.tradesCounted`) makes the shortfall a trades gap (`missed_trades`).
 *
 * `venue_seq` is '' on every row (the protocol numbers nothing [V]). A message that cannot be read — not JSON, a
 * `marketData` without its `marketSlug`, a level that is not `{px: {value}, qty}` text, a `transactTime` that is not
 * a time, a `sharesTraded` that is not a decimal, a `trade` without its fields — is counted, logged and a gap
 * `malformed_message` (`malformedMessage`) for its market (every market of the connection when it names none
 * readably), whose book is asked for again.
 */
import { parseObject } from '@depthgate/feeds';
import { envBool } from '@depthgate/service-kit';
import { isRowTs } from '../rows';
import { defineAdapter } from './adapter';
import type { RestClient } from './rest';
import { deterministicTradeId, rfc3339Millis, type VenueTrade } from './trades';
import {
  chunk,
  malformedMessage,
  type RestBook,
  type SessionContext,
  type FeedProtocol,
  type VenueSession,
} from './types';

interface PmLevel {
  px?: { value?: unknown };
  qty?: unknown;
}

/** A side's levels (absent: none); throws on a level that is not `{px: {value}, qty}` text (a malformed message). */
function levels(list: unknown): [string, string][] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new RangeError('book side is not a list of levels');
  const out: [string, string][] = [];
  for (const l of list as PmLevel[]) {
    const p = l?.px?.value;
    const q = l?.qty;
    if (typeof p !== 'string' || typeof q !== 'string') throw new RangeError('book level is not {px: {value}, qty}');
    out.push([p, q]);
  }
  return out;
}

/** `transactTime` in ms: undefined when absent; throws when it is not a time (one a row can carry: `isRowTs`). */
function transactTime(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  if (!isRowTs(ms)) throw new RangeError('transactTime is not a time');
  return ms;
}

type PmSubscription = 'SUBSCRIPTION_TYPE_MARKET_DATA' | 'SUBSCRIPTION_TYPE_TRADE';

/** A trade of the TRADE subscription: its market, the trade normalised, the fields that identify it (`venueAUsTradeId`). */
interface PmTrade {
  slug: string;
  trade: Omit<VenueTrade, 'id'>;
  /** What identifies it: slug, tradeTime, price, quantity, taker side and intent, maker side and intent. */
  fields: string[];
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A `trade` object of the TRADE subscription, normalised; undefined when a field it needs is missing. */
export function venueAUsTrade(t: Record<string, unknown>): PmTrade | undefined {
  const slug = t.marketSlug;
  const price = (t.price as { value?: unknown } | undefined)?.value;
  const quantity = t.quantity;
  const size = typeof quantity === 'string' ? quantity : (quantity as { value?: unknown } | undefined)?.value;
  const ts = rfc3339Millis(t.tradeTime);
  const taker = (t.taker ?? {}) as Record<string, unknown>;
  const maker = (t.maker ?? {}) as Record<string, unknown>;
  const intent = taker.intent;
  let side: VenueTrade['side'] | undefined;
  if (intent === 'ORDER_INTENT_BUY_LONG' || intent === 'ORDER_INTENT_SELL_SHORT') side = 'buy';
  else if (intent === 'ORDER_INTENT_SELL_LONG' || intent === 'ORDER_INTENT_BUY_SHORT') side = 'sell';
  else if (taker.side === 'ORDER_SIDE_BUY') side = 'buy';
  else if (taker.side === 'ORDER_SIDE_SELL') side = 'sell';
  if (typeof slug !== 'string' || typeof price !== 'string' || typeof size !== 'string') return undefined;
  if (ts === undefined || side === undefined) return undefined;
  return {
    slug,
    trade: { ts, price, size, side, venueSide: text(taker.side) },
    fields: [
      slug,
      text(t.tradeTime),
      price,
      size,
      text(taker.side),
      text(intent),
      text(maker.side),
      text(maker.intent),
    ],
  };
}

/**
 * Polymarket US sends no trade id: `h:` + the first 16 hex digits of SHA-256 over the market slug, `tradeTime` as
 * sent, price, quantity, the taker's side and intent, the maker's side and intent, and `n`: how many trades with all
 * of those fields came before it at the same `tradeTime` on the connection (a taker meeting two makers at one price
 * and instant makes two such trades). The same message sequence gives the same ids to any writer.
 */
export function venueAUsTradeId(fields: readonly string[], n: number): string {
  return deterministicTradeId([...fields, String(n)]);
}

class VenueAUsSession implements VenueSession {
  private nextRequest = 1;
  /** Requests (id → type and markets) and the one of each type a market is in. */
  private readonly requests = new Map<string, { type: PmSubscription; slugs: Set<string> }>();
  private readonly requestOf = new Map<string, string>();
  private readonly tradeRequestOf = new Map<string, string>();
  private readonly expecting = new Set<string>();
  /** Per market: the last `tradeTime` seen and how many trades of each identity it had (the ids' `n`). */
  private readonly tradeTimes = new Map<string, { at: string; seen: Map<string, number> }>();
  private mark = -1;

  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
    private readonly debounced: boolean,
    private readonly trades: boolean,
  ) {}

  watermark(): number {
    return this.mark;
  }

  /**
   * Sends a subscription (a new one, or one sent again under its id: every market of it gets a first book). Only the
   * markets of `fresh` wait for theirs as the venue's snapshot (`expecting`): for the others, live, the first book is
   * one more whole book, diffed into deltas (taken as a snapshot, a change the venue made meanwhile would differ from
   * our book: a false `divergence`); a market still waiting for its first book keeps waiting.
   */
  private send(requestId: string, type: PmSubscription, slugs: readonly string[], fresh: readonly string[]): void {
    if (type === 'SUBSCRIPTION_TYPE_MARKET_DATA') for (const s of fresh) this.expecting.add(s);
    this.ctx.send(
      JSON.stringify({
        subscribe: {
          requestId,
          subscriptionType: type,
          marketSlugs: slugs,
          ...(type === 'SUBSCRIPTION_TYPE_MARKET_DATA' ? { responsesDebounced: this.debounced } : {}),
        },
      }),
    );
  }

  /** Trades first: by the time a market's first book arrives, its trades flow (the window the feed missed ends). */
  subscribe(tickers: readonly string[]): void {
    for (const part of chunk(tickers, this.batch)) {
      if (this.trades) this.request('dg-tr', 'SUBSCRIPTION_TYPE_TRADE', this.tradeRequestOf, part);
      this.request('dg-md', 'SUBSCRIPTION_TYPE_MARKET_DATA', this.requestOf, part);
    }
  }

  private request(prefix: string, type: PmSubscription, requestOf: Map<string, string>, slugs: string[]): void {
    const requestId = `${prefix}-${this.nextRequest++}`;
    this.requests.set(requestId, { type, slugs: new Set(slugs) });
    for (const s of slugs) requestOf.set(s, requestId);
    this.send(requestId, type, slugs, slugs);
  }

  unsubscribe(tickers: readonly string[]): void {
    const touched = new Set<string>();
    for (const s of tickers) {
      this.expecting.delete(s);
      this.tradeTimes.delete(s);
      for (const requestOf of [this.requestOf, this.tradeRequestOf]) {
        const id = requestOf.get(s);
        requestOf.delete(s);
        if (id === undefined) continue;
        this.requests.get(id)?.slugs.delete(s);
        touched.add(id);
      }
    }
    for (const id of touched) {
      const request = this.requests.get(id);
      if (!request || request.slugs.size === 0) {
        this.requests.delete(id);
        this.ctx.send(JSON.stringify({ unsubscribe: { requestId: id } }));
      } else {
        // Subscribing again under the same id replaces its market list; the markets kept get a first book, which
        // matches ours (no gap), and keep their trades.
        this.send(id, request.type, [...request.slugs], []);
      }
    }
  }

  /** Books in doubt: their MARKET_DATA requests again (the trade subscriptions carry on); only they wait for a book. */
  resync(tickers: readonly string[]): void {
    const fresh = tickers.filter((s) => this.requestOf.has(s));
    const ids = new Set(fresh.map((s) => this.requestOf.get(s) as string));
    for (const id of ids) {
      this.send(id, 'SUBSCRIPTION_TYPE_MARKET_DATA', [...(this.requests.get(id)?.slugs ?? [])], fresh);
    }
  }

  private onTrade(raw: Record<string, unknown>, text: string, receivedAt: number): void {
    const parsed = venueAUsTrade(raw);
    if (parsed === undefined) {
      const slug = typeof raw.marketSlug === 'string' ? raw.marketSlug : undefined;
      return this.malformed('unreadable trade', text, slug);
    }
    const rec = this.ctx.ticker(parsed.slug);
    if (rec === undefined) return;
    const at = parsed.fields[1] as string;
    let times = this.tradeTimes.get(parsed.slug);
    if (times === undefined || times.at !== at) {
      times = { at, seen: new Map() };
      this.tradeTimes.set(parsed.slug, times);
    }
    const identity = parsed.fields.join('\n');
    const n = times.seen.get(identity) ?? 0;
    times.seen.set(identity, n + 1);
    rec.trade({ ...parsed.trade, id: venueAUsTradeId(parsed.fields, n) }, receivedAt);
  }

  /** A message that cannot be read: its market's book, or every market's on the connection (see above). */
  private malformed(problem: string, text: string, slug?: string): void {
    malformedMessage(
      this.ctx,
      this,
      problem,
      text,
      slug,
      new Set([...this.requestOf.keys(), ...this.tradeRequestOf.keys()]),
    );
  }

  onMessage(text: string, receivedAt: number): void {
    const m = parseObject(text);
    if (!m) return this.malformed('not a JSON object', text);
    // The market it names: a book's, or a trade's.
    const body = m.marketData ?? m.trade;
    const named = body !== null && typeof body === 'object' ? (body as { marketSlug?: unknown }).marketSlug : undefined;
    const slug = typeof named === 'string' ? named : undefined;
    try {
      this.handle(m, slug, text, receivedAt);
    } catch (err) {
      this.malformed((err as Error).message, text, slug);
    }
  }

  private handle(m: Record<string, unknown>, slug: string | undefined, text: string, receivedAt: number): void {
    const data = m.marketData as Record<string, unknown> | undefined;
    if (data !== undefined) {
      if (data === null || typeof data !== 'object' || slug === undefined)
        return this.malformed('marketData without a marketSlug', text);
      const rec = this.ctx.ticker(slug);
      if (rec === undefined) return;
      const venueTs = transactTime(data.transactTime);
      // The trade count audit: every trade up to this book's change counted, that change's trades follow.
      const counted = (data.stats as { sharesTraded?: unknown } | undefined)?.sharesTraded;
      if (this.trades && typeof counted === 'string') rec.tradesCounted(counted, venueTs ?? receivedAt);
      const bids = levels(data.bids);
      const asks = levels(data.offers);
      if (this.expecting.delete(slug)) {
        rec.venueSnapshot(bids, asks, { ts: venueTs !== undefined ? venueTs + 1 : receivedAt, receivedAt });
        return;
      }
      const ts = venueTs ?? receivedAt;
      if (ts > this.mark) this.mark = ts;
      const t = rec.beginEvent(ts, receivedAt);
      if (t < 0) return;
      rec.applyWholeBook(t, bids, asks);
      return;
    }
    const trade = m.trade;
    if (trade !== undefined) {
      if (trade === null || typeof trade !== 'object') return this.malformed('trade is not an object', text);
      if (this.trades) this.onTrade(trade as Record<string, unknown>, text, receivedAt);
      return;
    }
    if (typeof m.error === 'string') {
      const unknown = /market not found: (\S+)/i.exec(m.error)?.[1];
      if (unknown !== undefined && (this.requestOf.has(unknown) || this.tradeRequestOf.has(unknown))) {
        this.ctx.rejectTicker(unknown, m.error);
        this.unsubscribe([unknown]);
        return;
      }
      this.ctx.logger.warn({ error: m.error, requestId: m.requestId }, 'Polymarket US feed error');
    }
    // {"heartbeat":{}}: liveness only.
  }

  close(): void {
    this.requests.clear();
    this.requestOf.clear();
    this.tradeRequestOf.clear();
    this.tradeTimes.clear();
    this.expecting.clear();
  }
}

interface PmMarket {
  slug?: unknown;
  active?: unknown;
  closed?: unknown;
}

export function venueAUsProtocol(o: { subscribeBatch: number; debounced: boolean; trades: boolean }): FeedProtocol {
  const open = (m: PmMarket) => typeof m.slug === 'string' && m.active !== false && m.closed !== true;
  return {
    venueClock: true,
    // Whole books without a sequence: each one verifies the book, but a lost one does not show.
    provesContinuity: false,
    signedHandshake: true,
    createSession: (ctx) => new VenueAUsSession(ctx, Math.min(100, o.subscribeBatch), o.debounced, o.trades),
    async listActive(rest: RestClient, series: readonly string[], all: boolean): Promise<string[]> {
      const out = new Set<string>();
      const page = 100;
      if (all) {
        for (let offset = 0; offset < 1_000_000; offset += page) {
          const body = (await rest.json(`/v1/markets?active=true&closed=false&limit=${page}&offset=${offset}`)) as {
            markets?: PmMarket[];
          };
          const markets = body.markets ?? [];
          for (const m of markets) if (open(m)) out.add(m.slug as string);
          if (markets.length < page) break;
        }
      }
      if (series.length > 0) {
        const wanted = new Set(series.map((s) => s.toLowerCase()));
        for (let offset = 0; offset < 1_000_000; offset += page) {
          const body = (await rest.json(`/v1/events?active=true&closed=false&limit=${page}&offset=${offset}`)) as {
            events?: { series?: { id?: unknown; slug?: unknown }; seriesSlug?: unknown; markets?: PmMarket[] }[];
          };
          const events = body.events ?? [];
          for (const e of events) {
            const names = [e.series?.slug, e.series?.id, e.seriesSlug].map((v) => String(v ?? '').toLowerCase());
            if (!names.some((n) => n !== '' && wanted.has(n))) continue;
            for (const m of e.markets ?? []) if (open(m)) out.add(m.slug as string);
          }
          if (events.length < page) break;
        }
      }
      return [...out];
    },
    async restBook(rest: RestClient, ticker: string): Promise<RestBook> {
      const body = (await rest.json(`/v1/markets/${encodeURIComponent(ticker)}/book`)) as {
        marketData?: { bids?: unknown; offers?: unknown };
      };
      return { bids: levels(body.marketData?.bids), asks: levels(body.marketData?.offers) };
    },
    normalizeTicker: (t) => t,
  };
}

/**
 * The recorder's adapter of Polymarket US: 20 requests per second, so 10. The public host serves listings and books
 * (`/v1/markets/{slug}/book`) without authentication [V]; the feed needs the Ed25519 credentials. Not reconciled by
 * default (RECORDER_RECONCILE_EXCHANGES can add it): every message is the market's whole book, which verifies ours,
 * so a lost one leaves ours behind only until the market's next message; and whether the feed's books are as deep as
 * the REST book's is [U] — a shallower feed would make every comparison of a deep book a divergence
 * (docs/history-internals.md, Known limits). No trade history: missed trades are a gap.
 */
export const venueAUsRecorder = defineAdapter({
  restRate: 10,
  reconcile: false,
  trades: { cannot: 'Polymarket US publishes no trade history (its trades reach us only on the feed)' },
  settings: {
    /** Polymarket US `responsesDebounced` [U]. */
    RECORDER_POLYMARKET_US_DEBOUNCED: envBool(false),
  },
  protocol: (ctx) =>
    venueAUsProtocol({
      subscribeBatch: ctx.subscribeBatch,
      debounced: ctx.settings.RECORDER_POLYMARKET_US_DEBOUNCED,
      trades: ctx.trades,
    }),
});
