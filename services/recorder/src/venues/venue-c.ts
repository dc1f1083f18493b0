// https://docs.gemini.com/websocket-api/#market-data-version-2
/**
 * Gemini (`venue_c`): Market Data v2 `l2` on `wss://api.gemini.com/v2/marketdata` ([U] URL, [3P] format). Public.
 *
 * - `{"type":"subscribe","subscriptions":[{"name":"l2","symbols":[…]}]}`; the first `l2_updates` of a symbol is its
 *   whole book, later ones carry changed levels with their new absolute size ("0" removes) — turned into signed
 *   deltas against our book.
 * - No sequence numbers and no event times on book changes: rows are stamped with our receive time, and a lost
 *   message cannot be seen in the feed. The reconciler compares our book with the REST book
 *   (`/v1/book/{symbol}?limit_bids=0&limit_asks=0`) about every RECORDER_RECONCILE_INTERVAL_MS (with many symbols
 *   less often: reads stay within RECORDER_RECONCILE_BUDGET of the 120 per minute); a mismatch that outlasts
 *   RECORDER_RECONCILE_GRACE_MS is a gap `divergence` (from the last verified moment) and the symbol is resubscribed.
 * - Resubscribing: unsubscribe, wait RECORDER_GEMINI_RESUBSCRIBE_DELAY_MS (updates sent before the unsubscribe was
 *   processed may still arrive and must not be taken for the new first message), subscribe; the next message is the
 *   whole book.
 * - Heartbeats `{"type":"heartbeat","timestamp":…}` keep the connection alive.
 * - Trades come on the same subscription [V]: the first `l2_updates` carries the symbol's last trades (`trades`),
 *   then each trade is a `trade` message (`tid`, `timestamp` ms, `price`, `quantity`, `side` = the taker's). A
 *   missed window (a disconnect, a stall, a resubscription, a restart) is read back from `GET /v1/trades/{symbol}`
 *   [V]: forward from the last trade held with `since_tid` (500 a page, newest first within a page), or, without one,
 *   the newest 500 at or after `timestamp`; the REST `timestampms` is the feed's `timestamp`, and `type` its `side`.
 *   Gemini keeps 7 days of public trades: an older part of a window is a gap.
 * - `venue_seq`: market data v2 numbers no message (its `socket_sequence` is v1's [V]): book rows carry ''. A trade
 *   row keeps its `event_id` (`eventid` in the initial `trades` [V]; "monotonically increasing" per the v1 docs, the
 *   fills of one taker share it), '' where a message has none and on trades read back from REST.
 * - A message that cannot be read — not JSON, an `l2_updates` or `trade` without its symbol, a change that is not
 *   `[buy|sell, price, quantity]` text, a trade without its fields — is counted, logged and a gap `malformed_message`
 *   (`malformedMessage`) for its symbol (every symbol of the connection when it names none readably), which is
 *   subscribed again; a `broken` trade is not recorded (not an error).
 */
import { ASK, BID, parseObject } from '@depthgate/feeds';
import { envInt } from '@depthgate/service-kit';
import { defineAdapter } from './adapter';
import type { RestClient } from './rest';
import type { BackfillResult, TradeBackfill, TradeWindow, VenueTrade } from './trades';
import {
  chunk,
  malformedMessage,
  type RestBook,
  type SessionContext,
  type FeedProtocol,
  type VenueSession,
} from './types';

/** A tid as Gemini sends it (a JSON integer) as text; undefined beyond what a double holds exactly. */
function tidText(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return v;
  return undefined;
}

/**
 * A Gemini trade: the feed's `trade` (`timestamp` ms, `quantity`, `side`) or REST's (`timestampms`, `amount`,
 * `type`); the side is the taker's on both [V]. Undefined when a field it needs is missing or the trade is broken.
 */
export function venueCTrade(m: Record<string, unknown>): VenueTrade | undefined {
  const id = tidText(m.tid);
  const ts = typeof m.timestampms === 'number' ? m.timestampms : m.timestamp;
  const size = m.quantity ?? m.amount;
  const venueSide = m.side ?? m.type;
  if (m.broken === true) return undefined;
  if (id === undefined || typeof ts !== 'number' || !Number.isSafeInteger(ts) || typeof m.price !== 'string')
    return undefined;
  if (typeof size !== 'string' || (venueSide !== 'buy' && venueSide !== 'sell')) return undefined;
  return { ts, id, price: m.price, size, side: venueSide, venueSide };
}

/** A feed trade's `event_id` (or `eventid`) as a row's `venue_seq`: '' when absent, undefined when not an integer. */
function venueCEventSeq(m: Record<string, unknown>): string | undefined {
  const v = m.event_id ?? m.eventid;
  return v === undefined ? '' : tidText(v);
}

/** A feed trade with its `venue_seq`; undefined when it cannot be read (a `broken` one is `'broken'`). */
function feedTrade(m: Record<string, unknown>): VenueTrade | 'broken' | undefined {
  if (m.broken === true) return 'broken';
  const trade = venueCTrade(m);
  const venueSeq = venueCEventSeq(m);
  return trade === undefined || venueSeq === undefined ? undefined : { ...trade, venueSeq };
}

/** `[buy|sell, price, quantity]` text as a side and a level; undefined when a change is not that. */
function changeOf(c: unknown): { side: typeof BID | typeof ASK; price: string; quantity: string } | undefined {
  if (!Array.isArray(c) || (c[0] !== 'buy' && c[0] !== 'sell') || typeof c[1] !== 'string' || typeof c[2] !== 'string')
    return undefined;
  return { side: c[0] === 'buy' ? BID : ASK, price: c[1], quantity: c[2] };
}

/** Trades per REST page: the most Gemini gives [V]. */
const GEMINI_TRADES_PAGE = 500;

/**
 * Reads a window back from `/v1/trades/{symbol}`: with the last trade held, forward with `since_tid` until a page is
 * short or passes the window's end; without one, the newest page at or after the window's start (if it is full, the
 * older part of the window is missing: `timestamp` cannot page).
 */
export const venueCTrades: TradeBackfill = {
  reachMs: 7 * 86_400_000,
  async fetch(rest, ticker, w: TradeWindow, { maxPages, signal }): Promise<BackfillResult> {
    const trades: VenueTrade[] = [];
    const page = async (query: string): Promise<VenueTrade[]> => {
      const body = (await rest.json(`/v1/trades/${encodeURIComponent(ticker)}?${query}`, signal)) as unknown;
      const out: VenueTrade[] = [];
      for (const raw of Array.isArray(body) ? (body as unknown[]) : []) {
        if (raw === null || typeof raw !== 'object') continue;
        const t = venueCTrade(raw as Record<string, unknown>);
        if (t !== undefined) out.push(t);
      }
      return out;
    };
    const since = w.last !== undefined ? tidText(w.last.id) : undefined;
    if (since === undefined) {
      const list = await page(`timestamp=${Math.max(0, w.from)}&limit_trades=${GEMINI_TRADES_PAGE}`);
      trades.push(...list);
      if (list.length < GEMINI_TRADES_PAGE) return { trades };
      return { trades, missing: { from: w.from, to: Math.min(...list.map((t) => t.ts)) } };
    }
    let tid = BigInt(since);
    let reached = w.last?.ts ?? w.from;
    for (let pages = 0; ; pages++) {
      if (pages >= maxPages) return { trades, missing: { from: reached, to: w.to } };
      const list = await page(`since_tid=${tid}&limit_trades=${GEMINI_TRADES_PAGE}`);
      trades.push(...list);
      for (const t of list) {
        if (BigInt(t.id) > tid) tid = BigInt(t.id);
        if (t.ts > reached) reached = t.ts;
      }
      if (list.length < GEMINI_TRADES_PAGE || reached > w.to) return { trades };
    }
  },
};

class VenueCSession implements VenueSession {
  /** Symbols subscribed on this connection. */
  private readonly symbols = new Set<string>();
  /** Subscribed symbols whose next message is their whole book. */
  private readonly expecting = new Set<string>();
  /** Symbols between unsubscribe and subscribe (their messages are ignored). */
  private readonly cooling = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private mark = -1;

  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
    private readonly resubscribeDelayMs: number,
    private readonly trades: boolean,
  ) {}

  watermark(): number {
    return this.mark;
  }

  private send(type: 'subscribe' | 'unsubscribe', symbols: readonly string[]): void {
    for (const part of chunk(symbols, this.batch)) {
      this.ctx.send(JSON.stringify({ type, subscriptions: [{ name: 'l2', symbols: part }] }));
    }
  }

  subscribe(tickers: readonly string[]): void {
    for (const t of tickers) {
      this.symbols.add(t);
      this.expecting.add(t);
      this.cooling.delete(t);
    }
    this.send('subscribe', tickers);
  }

  unsubscribe(tickers: readonly string[]): void {
    for (const t of tickers) {
      this.symbols.delete(t);
      this.expecting.delete(t);
      this.cooling.delete(t);
    }
    this.send('unsubscribe', tickers);
  }

  resync(tickers: readonly string[]): void {
    const list = tickers.filter((t) => !this.cooling.has(t));
    if (list.length === 0) return;
    for (const t of list) {
      this.cooling.add(t);
      this.expecting.delete(t);
      // Its trades stop with the subscription: a window, read back once the new subscription's first book is in.
      this.ctx.ticker(t)?.interruptTrades(this.mark);
    }
    this.send('unsubscribe', list);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const again = list.filter((t) => this.cooling.has(t));
      if (again.length > 0) this.subscribe(again);
    }, this.resubscribeDelayMs);
    this.timers.add(timer);
  }

  /** A message that cannot be read: its symbol's book, or every symbol's on the connection (see above). */
  private malformed(problem: string, text: string, symbol?: string): void {
    malformedMessage(this.ctx, this, problem, text, symbol, this.symbols);
  }

  onMessage(text: string, receivedAt: number): void {
    this.mark = receivedAt;
    const m = parseObject(text);
    if (!m) return this.malformed('not a JSON object', text);
    const symbol = typeof m.symbol === 'string' ? m.symbol.toUpperCase() : undefined;
    try {
      this.handle(m, symbol, text, receivedAt);
    } catch (err) {
      this.malformed((err as Error).message, text, symbol);
    }
  }

  private handle(m: Record<string, unknown>, symbol: string | undefined, text: string, receivedAt: number): void {
    if (m.type === 'l2_updates') {
      if (symbol === undefined) return this.malformed('l2_updates without a symbol', text);
      if (this.cooling.has(symbol)) return;
      const rec = this.ctx.ticker(symbol);
      if (rec === undefined) return;
      if (!Array.isArray(m.changes)) return this.malformed('l2_updates without changes', text, symbol);
      const changes = (m.changes as unknown[]).map(changeOf);
      if (changes.some((c) => c === undefined))
        return this.malformed('a change is not [buy|sell, price, quantity] text', text, symbol);
      const levels = changes as { side: typeof BID | typeof ASK; price: string; quantity: string }[];
      // The first one carries the symbol's last trades (oldest last [U]): recorded unless held.
      const trades: VenueTrade[] = [];
      if (this.trades && m.trades !== undefined) {
        if (!Array.isArray(m.trades)) return this.malformed('l2_updates trades is not a list', text, symbol);
        for (const x of m.trades as unknown[]) {
          const trade = x !== null && typeof x === 'object' ? feedTrade(x as Record<string, unknown>) : undefined;
          if (trade === undefined) return this.malformed('unreadable trade in l2_updates', text, symbol);
          if (trade !== 'broken') trades.push(trade);
        }
      }
      if (this.expecting.delete(symbol)) {
        const bids = levels.filter((c) => c.side === BID).map((c): [string, string] => [c.price, c.quantity]);
        const asks = levels.filter((c) => c.side === ASK).map((c): [string, string] => [c.price, c.quantity]);
        rec.venueSnapshot(bids, asks, { ts: receivedAt, receivedAt });
      } else {
        const t = rec.beginEvent(receivedAt, receivedAt);
        if (t >= 0) for (const c of levels) rec.applyLevel(t, c.side, c.price, c.quantity);
      }
      for (const trade of trades.sort((a, b) => a.ts - b.ts)) rec.trade(trade, receivedAt);
      return;
    }
    if (m.type === 'trade') {
      if (!this.trades) return;
      if (symbol === undefined) return this.malformed('trade without a symbol', text);
      const rec = this.ctx.ticker(symbol);
      if (rec === undefined) return;
      const trade = feedTrade(m);
      if (trade === undefined) return this.malformed('unreadable trade', text, symbol);
      if (trade !== 'broken') rec.trade(trade, receivedAt);
      return;
    }
    if (m.type === 'error' || m.result === 'error') {
      const message = String(m.message ?? m.reason ?? '');
      const symbol = /invalid symbol (\S+)/i.exec(message)?.[1]?.toUpperCase();
      if (m.reason === 'InvalidSymbol' && symbol !== undefined) {
        this.expecting.delete(symbol);
        this.ctx.rejectTicker(symbol, message);
        return;
      }
      this.ctx.logger.warn({ error: m }, 'Gemini feed error');
    }
    // heartbeat, candles…: liveness only.
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.symbols.clear();
    this.expecting.clear();
    this.cooling.clear();
  }
}

interface GeminiEvent {
  series?: unknown;
  status?: unknown;
  contracts?: { instrumentSymbol?: unknown; status?: unknown }[];
}

export function venueCProtocol(o: {
  subscribeBatch: number;
  resubscribeDelayMs: number;
  trades: boolean;
}): FeedProtocol {
  return {
    venueClock: false,
    // Gemini's market data v2 numbers nothing: a lost change shows only at the next verification.
    provesContinuity: false,
    signedHandshake: false,
    createSession: (ctx) => new VenueCSession(ctx, o.subscribeBatch, o.resubscribeDelayMs, o.trades),
    async listActive(rest: RestClient, series: readonly string[], all: boolean): Promise<string[]> {
      const out = new Set<string>();
      if (all) {
        const symbols = (await rest.json('/v1/symbols')) as unknown;
        if (Array.isArray(symbols)) for (const s of symbols) if (typeof s === 'string') out.add(s.toUpperCase());
      }
      const wanted = new Set(series.map((s) => s.toUpperCase()));
      if (all || wanted.size > 0) {
        for (let offset = 0; offset < 100_000; offset += 500) {
          const body = (await rest.json(`/v1/prediction-markets/events?status=active&limit=500&offset=${offset}`)) as {
            data?: GeminiEvent[];
          };
          const events = body.data ?? [];
          for (const e of events) {
            if (!all && !(typeof e.series === 'string' && wanted.has(e.series.toUpperCase()))) continue;
            for (const c of e.contracts ?? []) {
              if (typeof c.instrumentSymbol !== 'string') continue;
              if (c.status !== undefined && c.status !== 'active') continue;
              out.add(c.instrumentSymbol.toUpperCase());
            }
          }
          if (events.length < 500) break;
        }
      }
      return [...out];
    },
    async restBook(rest: RestClient, ticker: string): Promise<RestBook> {
      const body = (await rest.json(`/v1/book/${encodeURIComponent(ticker)}?limit_bids=0&limit_asks=0`)) as {
        bids?: { price?: unknown; amount?: unknown }[];
        asks?: { price?: unknown; amount?: unknown }[];
      };
      const side = (list: { price?: unknown; amount?: unknown }[] | undefined): [string, string][] =>
        (list ?? [])
          .filter((l) => typeof l.price === 'string' && typeof l.amount === 'string')
          .map((l) => [l.price as string, l.amount as string]);
      return { bids: side(body.bids), asks: side(body.asks) };
    },
    normalizeTicker: (t) => t.toUpperCase(),
  };
}

/**
 * The recorder's adapter of Gemini: 120 public requests per minute (at most one per second advised), so 1 per
 * second; no sequence numbers and no event times: its books are reconciled against REST (`/v1/book/{symbol}`, as on
 * every recorded exchange) by default; missed trades read back from `/v1/trades/{symbol}`.
 */
export const venueCRecorder = defineAdapter({
  restRate: 1,
  reconcile: true,
  trades: venueCTrades,
  settings: {
    /** Pause between unsubscribing and subscribing a symbol again (updates still in flight are ignored). */
    RECORDER_GEMINI_RESUBSCRIBE_DELAY_MS: envInt(1000, { min: 0, max: 60_000 }),
  },
  protocol: (ctx) =>
    venueCProtocol({
      subscribeBatch: ctx.subscribeBatch,
      resubscribeDelayMs: ctx.settings.RECORDER_GEMINI_RESUBSCRIBE_DELAY_MS,
      trades: ctx.trades,
    }),
});
