// https://docs.kalshi.com/websockets/orderbook-updates, …/websockets/public-trades, …/api-reference/market/get-trades
/**
 * Kalshi (`venue_b`): the `orderbook_delta` and `trade` channels of `wss://api.elections.kalshi.com/trade-api/ws/v2`.
 *
 * - Handshake signed like REST over `timestamp + GET + /trade-api/ws/v2` (RSA-PSS) [V]; the channel is private, so
 *   without credentials Kalshi is not recorded.
 * - `{"id","cmd":"subscribe","params":{"channels":["orderbook_delta"],"market_tickers":[…]}}` [U shape] →
 *   `subscribed {sid}`, then per market an `orderbook_snapshot`, then `orderbook_delta`s [V]. `seq` counts per
 *   subscription (`sid`) [V]: a skipped `seq` means a message of one of that subscription's markets was lost.
 * - Kalshi publishes bids only, for YES and for NO [3P]: a YES bid is a bid; a NO bid at q is an ask at 1 − q
 *   (exact decimal arithmetic, the price's own number of places).
 * - Field shapes [3P]: fixed-point `yes_dollars_fp`/`no_dollars_fp` ([price, count] strings), or `yes_dollars`/
 *   `no_dollars`, or legacy integer cents `yes`/`no`; deltas `price_dollars` + `delta_fp` (or legacy `price` cents
 *   + `delta`), `side` yes|no, `ts_ms` (or RFC 3339 `ts`) — the event time used as the row's ts (none: the receipt's).
 *
 * Integrity: a `seq` gap marks every market of the subscription as suspect and resubscribes them on a new `sid`;
 * each market switches to the new subscription at its snapshot, which decides whether it lost anything (its book
 * differs: a gap from the last in-order message) or not (no gap). The old subscription is dropped once empty.
 * Snapshots carry no time: a snapshot holds from the ts of the next timestamped message of the connection (events
 * are delivered in order), or from its receipt if none follows within RECORDER_SNAPSHOT_QUIET_MS.
 *
 * `venue_seq`: every row of an `orderbook_snapshot`/`orderbook_delta` keeps its message's `sid:seq` (contiguous per
 * `sid` on the venue); a trade row its message's `sid:seq` where the message has a `seq` (the docs give `trade` none
 * [V]; the simulator sends one), else ''. A message that cannot be read — not JSON, without a numeric `sid`, a `msg`
 * whose market, levels, price, change or trade fields are not the venue's — is counted, logged and a gap
 * `malformed_message` (`malformedMessage`) for its market, or, when it names none readably, the markets of its
 * subscription (every market of the connection when the `sid` cannot be read either), which are subscribed again.
 *
 * Trades: the `trade` channel, its own subscription (`sid`), subscribed before the books' so that it carries trades
 * by the time a market's first book arrives [V: `type`, `sid`, `msg` with `trade_id`, `market_ticker`,
 * `yes_price_dollars`, `count_fp`, `taker_outcome_side` (`taker_side` before), `ts_ms`]. It has no `seq`: a trade lost
 * on a live connection cannot be seen. After a disconnect, a stall or a restart the missed window is read back from
 * `GET /markets/trades` (`ticker`, `min_ts`/`max_ts` in seconds, `limit` 1000, `cursor`; newest first) and, before
 * the historical cutoff (`GET /historical/cutoff` `trades_created_ts`), `GET /historical/trades` [V]. The book is the
 * YES book, so a taker who bought YES bought (`buy`) and one who bought NO sold YES (`sell`) at the YES price; a
 * trade's ts is `ts_ms` on the feed and `created_time` (truncated to ms) in REST: the same instant.
 */
import { defineAdapter } from './adapter';
import { ASK, BID, CanonicalMemo, centsToDollars, complementOfOne, parseObject } from '@depthgate/feeds';
import { checkedRowTs } from '../rows';
import type { TickerRecorder } from '../ticker';
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

type Channel = 'orderbook_delta' | 'trade';

interface Subscription {
  tickers: Set<string>;
  lastSeq: number | undefined;
  /** A seq gap was seen: its markets are being moved to a new subscription. */
  retiring: boolean;
  /**
   * The ts of its last in-order delta: where a loss of its seq starts (the connection's other subscriptions may have
   * moved further on; `seq` counts per subscription).
   */
  mark: number;
}

/** NO price → YES ask price, memoised (prices sit on a grid). */
const complement = new CanonicalMemo(complementOfOne, 10_000);

type LevelPair = readonly [string, string];

/** A side's levels; absent is empty ("key will not exist if there are no Yes offers" [V]); anything else throws. */
function levelsOf(v: unknown, legacyCents: boolean): LevelPair[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new RangeError('book side is not a list of levels');
  const out: LevelPair[] = [];
  for (const level of v as unknown[]) {
    const [p, q] = Array.isArray(level) ? (level as unknown[]) : [];
    if (legacyCents && typeof p === 'number' && typeof q === 'number') out.push([centsToDollars(p), String(q)]);
    else if (!legacyCents && typeof p === 'string' && typeof q === 'string') out.push([p, q]);
    else throw new RangeError('book level is not [price, count]');
  }
  return out;
}

/**
 * A Kalshi book message (`yes_*`/`no_*` bids) as bids and asks: NO bids become asks at 1 − price. Throws on a level
 * that is not `[price, count]` (a malformed message, or a REST book that cannot be compared).
 */
export function venueBBook(msg: Record<string, unknown>): RestBook {
  let yes: LevelPair[];
  let no: LevelPair[];
  if ('yes_dollars_fp' in msg || 'no_dollars_fp' in msg) {
    yes = levelsOf(msg.yes_dollars_fp, false);
    no = levelsOf(msg.no_dollars_fp, false);
  } else if ('yes_dollars' in msg || 'no_dollars' in msg) {
    yes = levelsOf(msg.yes_dollars, false);
    no = levelsOf(msg.no_dollars, false);
  } else {
    yes = levelsOf(msg.yes, true);
    no = levelsOf(msg.no, true);
  }
  return {
    bids: yes.map(([p, q]) => [p, q]),
    asks: no.map(([p, q]) => [complement.get(p), q]),
  };
}

/**
 * A delta's event ms: `ts_ms`, else `ts` (RFC 3339, or epoch s or ms in legacy fixtures). Absent (the legacy cents
 * shape carries none): undefined, its receipt stands for it. Present but not a time a row can carry (unparseable, out
 * of range): throws RangeError (`checkedRowTs`), a malformed message as at every venue — never the receipt instead.
 */
function venueBDeltaTs(msg: Record<string, unknown>): number | undefined {
  let ts: unknown;
  if (msg.ts_ms !== undefined && msg.ts_ms !== null) ts = msg.ts_ms;
  else if (typeof msg.ts === 'string') ts = rfc3339Millis(msg.ts) ?? NaN;
  else if (typeof msg.ts === 'number') ts = Number.isSafeInteger(msg.ts) && msg.ts < 1e12 ? msg.ts * 1000 : msg.ts;
  else if (msg.ts !== undefined && msg.ts !== null) ts = NaN;
  else return undefined;
  return checkedRowTs(typeof ts === 'number' ? ts : NaN, 'orderbook_delta time');
}

/**
 * A delta message's fields: side (bid for YES, ask for NO), YES-side price, signed change, event ms (venueBDeltaTs:
 * throws on one present and unreadable).
 */
export function venueBDelta(
  msg: Record<string, unknown>,
): { side: typeof BID | typeof ASK; price: string; delta: string; ts: number | undefined } | undefined {
  const side = msg.side;
  if (side !== 'yes' && side !== 'no') return undefined;
  const rawPrice =
    typeof msg.price_dollars === 'string'
      ? msg.price_dollars
      : typeof msg.price === 'number'
        ? centsToDollars(msg.price)
        : undefined;
  const delta =
    typeof msg.delta_fp === 'string' ? msg.delta_fp : typeof msg.delta === 'number' ? String(msg.delta) : undefined;
  if (rawPrice === undefined || delta === undefined) return undefined;
  const ts = venueBDeltaTs(msg);
  return side === 'yes'
    ? { side: BID, price: rawPrice, delta, ts }
    : { side: ASK, price: complement.get(rawPrice), delta, ts };
}

/**
 * A Kalshi trade (the `trade` channel's `msg`, or a REST `Trade`) on the YES book: the YES price, the taker's side
 * (YES bought → `buy`, NO bought → `sell`), the side field as sent. Undefined when a field it needs is missing.
 */
export function venueBTrade(m: Record<string, unknown>): VenueTrade | undefined {
  const id = m.trade_id;
  const price =
    typeof m.yes_price_dollars === 'string'
      ? m.yes_price_dollars
      : typeof m.yes_price === 'number'
        ? centsToDollars(m.yes_price)
        : undefined;
  const size = typeof m.count_fp === 'string' ? m.count_fp : typeof m.count === 'number' ? String(m.count) : undefined;
  let ts: number | undefined;
  if (typeof m.ts_ms === 'number' && Number.isSafeInteger(m.ts_ms)) ts = m.ts_ms;
  else if (m.created_time !== undefined) ts = rfc3339Millis(m.created_time);
  else if (typeof m.ts === 'number' && Number.isSafeInteger(m.ts)) ts = m.ts < 1e12 ? m.ts * 1000 : m.ts;
  else ts = rfc3339Millis(m.ts);
  const outcome = m.taker_outcome_side ?? m.taker_side;
  let side: VenueTrade['side'] | undefined;
  let venueSide = '';
  if (outcome === 'yes' || outcome === 'no') {
    side = outcome === 'yes' ? 'buy' : 'sell';
    venueSide = outcome;
  } else if (m.taker_book_side === 'bid' || m.taker_book_side === 'ask') {
    // The YES leg: bid = bought YES, ask = sold YES [V].
    side = m.taker_book_side === 'bid' ? 'buy' : 'sell';
    venueSide = m.taker_book_side;
  }
  if (typeof id !== 'string' || price === undefined || size === undefined || ts === undefined || side === undefined)
    return undefined;
  return { ts, id, price, size, side, venueSide };
}

/** `trades_created_ts` of `GET /historical/cutoff` (RFC 3339 or epoch seconds), read at most once an hour per host. */
const cutoffs = new WeakMap<RestClient, { ms: number; readAt: number }>();
const CUTOFF_TTL_MS = 3_600_000;

async function historicalCutoff(rest: RestClient, signal?: AbortSignal): Promise<number> {
  const known = cutoffs.get(rest);
  if (known && Date.now() - known.readAt < CUTOFF_TTL_MS) return known.ms;
  const body = (await rest.json('/historical/cutoff', signal)) as { trades_created_ts?: unknown };
  const v = body.trades_created_ts;
  const ms =
    typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))
      ? Number(v) * (Number(v) < 1e11 ? 1000 : 1)
      : rfc3339Millis(v);
  if (ms === undefined || !Number.isFinite(ms)) throw new Error(`historical cutoff unreadable: ${JSON.stringify(v)}`);
  cutoffs.set(rest, { ms, readAt: Date.now() });
  return ms;
}

/**
 * Reads a window's trades back: `/markets/trades` from the cutoff on, `/historical/trades` before it, each newest
 * first through its cursor (`min_ts`/`max_ts` widened by a second each way, whatever their inclusivity [U]; the
 * recorder keeps the window's own). Out of pages, the older part not reached is missing.
 */
export const venueBTrades: TradeBackfill = {
  async fetch(rest, ticker, w: TradeWindow, { maxPages, signal }): Promise<BackfillResult> {
    const trades: VenueTrade[] = [];
    const cutoff = await historicalCutoff(rest, signal);
    const ranges: { path: string; from: number; to: number }[] = [];
    if (w.to >= cutoff) ranges.push({ path: '/markets/trades', from: Math.max(w.from, cutoff), to: w.to });
    if (w.from < cutoff) ranges.push({ path: '/historical/trades', from: w.from, to: Math.min(w.to, cutoff - 1) });
    let pages = 0;
    for (const r of ranges) {
      let cursor = '';
      let oldest = r.to;
      for (;;) {
        if (pages >= maxPages) return { trades, missing: { from: w.from, to: oldest } };
        const q = new URLSearchParams({
          ticker,
          min_ts: String(Math.floor(r.from / 1000) - 1),
          max_ts: String(Math.floor(r.to / 1000) + 1),
          limit: '1000',
        });
        if (cursor) q.set('cursor', cursor);
        const body = (await rest.json(`${r.path}?${q.toString()}`, signal)) as { trades?: unknown; cursor?: unknown };
        pages++;
        const list = Array.isArray(body.trades) ? (body.trades as unknown[]) : [];
        for (const raw of list) {
          if (raw === null || typeof raw !== 'object') continue;
          const t = venueBTrade(raw as Record<string, unknown>);
          if (t === undefined) continue;
          trades.push(t);
          if (t.ts < oldest) oldest = t.ts;
        }
        cursor = typeof body.cursor === 'string' ? body.cursor : '';
        if (!cursor || list.length === 0) break;
      }
    }
    return { trades };
  },
};

class VenueBSession implements VenueSession {
  private nextId = 1;
  private readonly subs = new Map<number, Subscription>();
  /** The subscription whose messages a market follows. */
  private readonly active = new Map<string, number>();
  /** Trade subscriptions (`sid` → markets) and the one each market follows. */
  private readonly tradeSubs = new Map<number, Set<string>>();
  private readonly tradeSid = new Map<string, number>();
  /** Commands waiting for their answer. */
  private readonly commands = new Map<number, { tickers: string[]; channel: Channel }>();
  /** Markets whose venue snapshot waits for the next timestamped message. */
  private readonly pending = new Set<TickerRecorder>();
  private mark = -1;

  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
    private readonly trades: boolean,
  ) {}

  watermark(): number {
    return this.mark;
  }

  /** Trades first: by the time a market's first book arrives, its trades flow (the window the feed missed ends). */
  subscribe(tickers: readonly string[]): void {
    for (const part of chunk(tickers, this.batch)) {
      if (this.trades) this.command('trade', part);
      this.command('orderbook_delta', part);
    }
  }

  private subscribeChannel(channel: Channel, tickers: readonly string[]): void {
    for (const part of chunk(tickers, this.batch)) this.command(channel, part);
  }

  private command(channel: Channel, tickers: string[]): void {
    const id = this.nextId++;
    this.commands.set(id, { tickers, channel });
    this.ctx.send(JSON.stringify({ id, cmd: 'subscribe', params: { channels: [channel], market_tickers: tickers } }));
  }

  /**
   * Removes markets. A subscription that holds one and others is retired, as after a sequence gap: its other markets
   * follow it until their new subscription's snapshot (which then takes each over, and drops it once none follows
   * it), so none of their changes is lost between the two; one that no market follows any more is dropped.
   */
  unsubscribe(tickers: readonly string[]): void {
    const gone = new Set(tickers);
    const keep: string[] = [];
    for (const [sid, sub] of this.subs) {
      if (![...sub.tickers].some((t) => gone.has(t))) continue;
      for (const t of gone) sub.tickers.delete(t);
      keep.push(...sub.tickers);
      if ([...sub.tickers].some((t) => this.active.get(t) === sid)) sub.retiring = true;
      else this.dropSubscription(sid);
    }
    for (const t of tickers) this.active.delete(t);
    if (keep.length > 0) this.subscribeChannel('orderbook_delta', keep);
    this.unsubscribeTrades(gone);
  }

  /**
   * Trade subscriptions holding a removed market: the others move to a new subscription first (its `subscribed`
   * retires the old one), so no trade of theirs falls between two subscriptions (one carried by both is recorded once).
   */
  private unsubscribeTrades(gone: Set<string>): void {
    const keep: string[] = [];
    for (const [sid, markets] of this.tradeSubs) {
      if (![...markets].some((t) => gone.has(t))) continue;
      for (const t of markets) {
        if (gone.has(t)) {
          markets.delete(t);
          if (this.tradeSid.get(t) === sid) this.tradeSid.delete(t);
        } else if (this.tradeSid.get(t) === sid) keep.push(t);
      }
      if (markets.size === 0) this.dropTradeSubscription(sid);
    }
    if (keep.length > 0) this.subscribeChannel('trade', keep);
  }

  private dropTradeSubscription(sid: number): void {
    this.tradeSubs.delete(sid);
    const id = this.nextId++;
    this.ctx.send(JSON.stringify({ id, cmd: 'unsubscribe', params: { sids: [sid] } }));
  }

  /** A book in doubt: its snapshot again (the trade subscription carries on). */
  resync(tickers: readonly string[]): void {
    this.subscribeChannel('orderbook_delta', tickers);
  }

  private dropSubscription(sid: number): void {
    this.subs.delete(sid);
    const id = this.nextId++;
    this.ctx.send(JSON.stringify({ id, cmd: 'unsubscribe', params: { sids: [sid] } }));
  }

  /** Every market this connection records (books and trades). */
  private markets(): Set<string> {
    const out = new Set<string>(this.active.keys());
    for (const sub of this.subs.values()) for (const t of sub.tickers) out.add(t);
    for (const t of this.tradeSid.keys()) out.add(t);
    for (const c of this.commands.values()) for (const t of c.tickers) out.add(t);
    return out;
  }

  /** A message that cannot be read: its market's book, else its subscription's, else the connection's (see above). */
  private malformed(problem: string, text: string, ticker?: string, sid?: number): void {
    const scope = sid === undefined ? undefined : (this.subs.get(sid)?.tickers ?? this.tradeSubs.get(sid));
    malformedMessage(this.ctx, this, problem, text, ticker, scope ?? this.markets());
  }

  onMessage(text: string, receivedAt: number): void {
    const m = parseObject(text);
    if (!m) return this.malformed('not a JSON object', text);
    const sid = typeof m.sid === 'number' && Number.isSafeInteger(m.sid) && m.sid >= 0 ? m.sid : undefined;
    const msg = m.msg !== null && typeof m.msg === 'object' && !Array.isArray(m.msg) ? m.msg : undefined;
    const named = (msg as { market_ticker?: unknown } | undefined)?.market_ticker;
    const ticker = typeof named === 'string' ? named : undefined;
    try {
      this.handle(m, sid, msg as Record<string, unknown> | undefined, ticker, text, receivedAt);
    } catch (err) {
      this.malformed((err as Error).message, text, ticker, sid);
    }
  }

  private handle(
    m: Record<string, unknown>,
    sid: number | undefined,
    msg: Record<string, unknown> | undefined,
    ticker: string | undefined,
    text: string,
    receivedAt: number,
  ): void {
    const type = m.type;
    if (type === 'orderbook_delta' || type === 'orderbook_snapshot') {
      if (sid === undefined) return this.malformed(`${type} without a sid`, text, ticker);
      const sub = this.subs.get(sid);
      if (sub === undefined) return; // a subscription we dropped
      const seq = m.seq;
      if (seq !== undefined && !(typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0))
        return this.malformed(`${type} with a seq that is not an integer`, text, ticker, sid);
      if (seq !== undefined) {
        if (sub.lastSeq !== undefined && seq !== sub.lastSeq + 1 && !sub.retiring) this.sequenceGap(sid, sub);
        sub.lastSeq = seq;
      }
      if (msg === undefined || ticker === undefined)
        return this.malformed(`${type} without msg.market_ticker`, text, undefined, sid);
      const venueSeq = seq === undefined ? '' : `${sid}:${seq}`;
      if (type === 'orderbook_snapshot') this.snapshot(sid, sub, ticker, msg, receivedAt, venueSeq);
      else this.delta(sid, ticker, msg, text, receivedAt, venueSeq);
      return;
    }
    if (type === 'trade') {
      if (sid === undefined) return this.malformed('trade without a sid', text, ticker);
      if (!this.tradeSubs.has(sid)) return;
      const trade = msg === undefined ? undefined : venueBTrade(msg);
      if (trade === undefined || ticker === undefined) return this.malformed('unreadable trade', text, ticker, sid);
      const rec = this.ctx.ticker(ticker);
      const seq = m.seq;
      const venueSeq = typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? `${sid}:${seq}` : '';
      if (rec !== undefined) rec.trade({ ...trade, venueSeq }, receivedAt);
      return;
    }
    if (type === 'subscribed') {
      const id = typeof m.id === 'number' ? m.id : -1;
      const command = this.commands.get(id);
      this.commands.delete(id);
      const newSid = (msg ?? {}).sid;
      if (typeof newSid !== 'number' || !Number.isSafeInteger(newSid) || !command) {
        const problem = 'subscribed without its command id or sid';
        if (command?.channel === 'trade') {
          // No book is in doubt: the trade subscription is asked for again.
          this.ctx.malformed(problem, text);
          return this.subscribeChannel('trade', command.tickers);
        }
        // Its markets would wait for a first book that never comes: they are subscribed again.
        return malformedMessage(this.ctx, this, problem, text, undefined, command?.tickers ?? this.markets());
      }
      const sidOf = newSid;
      if (command.channel === 'trade') this.tradesSubscribed(sidOf, command.tickers);
      else this.subs.set(sidOf, { tickers: new Set(command.tickers), lastSeq: undefined, retiring: false, mark: 0 });
      return;
    }
    if (type === 'error') {
      const id = typeof m.id === 'number' ? m.id : -1;
      const error = msg ?? {};
      const message = String(error.msg ?? '');
      const command = this.commands.get(id);
      this.commands.delete(id);
      if (!command) {
        this.ctx.logger.warn({ error }, 'Kalshi feed error');
        return;
      }
      const unknown = /Market not found: (\S+)/.exec(message)?.[1];
      if (unknown !== undefined && command.tickers.includes(unknown)) {
        if (this.ctx.ticker(unknown) !== undefined) this.ctx.rejectTicker(unknown, message);
        const rest = command.tickers.filter((t) => t !== unknown && this.ctx.ticker(t) !== undefined);
        if (rest.length > 0) this.subscribeChannel(command.channel, rest);
        return;
      }
      this.ctx.logger.error({ error, markets: command.tickers.length }, 'Kalshi refused a subscription');
      this.ctx.reconnect('disconnect');
    }
    // `unsubscribed`, `ok`: nothing to do.
  }

  /** A trade subscription is live: its markets follow it, and a subscription they leave empty is dropped. */
  private tradesSubscribed(sid: number, tickers: readonly string[]): void {
    const markets = new Set(tickers.filter((t) => this.ctx.ticker(t) !== undefined));
    this.tradeSubs.set(sid, markets);
    for (const t of markets) {
      const previous = this.tradeSid.get(t);
      this.tradeSid.set(t, sid);
      if (previous === undefined || previous === sid) continue;
      const old = this.tradeSubs.get(previous);
      old?.delete(t);
      if (old !== undefined && old.size === 0) this.dropTradeSubscription(previous);
    }
    if (markets.size === 0) this.dropTradeSubscription(sid);
  }

  private sequenceGap(sid: number, sub: Subscription): void {
    sub.retiring = true;
    const moving: string[] = [];
    for (const t of sub.tickers) {
      if (this.active.get(t) !== sid) continue;
      this.ctx.ticker(t)?.suspectLoss('sequence_gap', sub.mark);
      moving.push(t);
    }
    this.ctx.logger.warn(
      { sid, markets: moving.length },
      'Kalshi sequence gap: resubscribing the markets of the subscription',
    );
    if (moving.length > 0) this.subscribe(moving);
    else this.dropSubscription(sid);
  }

  private snapshot(
    sid: number,
    sub: Subscription,
    ticker: string,
    msg: Record<string, unknown>,
    receivedAt: number,
    venueSeq: string,
  ): void {
    const rec = this.ctx.ticker(ticker);
    if (rec === undefined) return;
    const book = venueBBook(msg); // throws on a level that cannot be read: nothing changed yet
    const previous = this.active.get(ticker);
    if (previous !== sid) {
      this.active.set(ticker, sid);
      const old = previous === undefined ? undefined : this.subs.get(previous);
      if (old !== undefined && previous !== undefined) {
        old.tickers.delete(ticker);
        if (old.tickers.size === 0 || [...old.tickers].every((t) => this.active.get(t) !== previous)) {
          this.dropSubscription(previous);
        }
      }
    }
    sub.tickers.add(ticker);
    if (rec.venueSnapshot(book.bids, book.asks, { defer: true, receivedAt, venueSeq })) this.pending.add(rec);
  }

  private delta(
    sid: number,
    ticker: string,
    msg: Record<string, unknown>,
    text: string,
    receivedAt: number,
    venueSeq: string,
  ): void {
    const d = venueBDelta(msg);
    if (d === undefined) return this.malformed('orderbook_delta without side, price or change', text, ticker, sid);
    const ts = d.ts ?? receivedAt;
    // Events arrive in order: any timestamped message fixes when the snapshots before it hold from.
    if (this.pending.size > 0) {
      for (const rec of this.pending) rec.settle(ts);
      this.pending.clear();
    }
    const sub = this.subs.get(sid);
    if (sub !== undefined && !sub.retiring) {
      if (ts > this.mark) this.mark = ts;
      if (ts > sub.mark) sub.mark = ts;
    }
    if (this.active.get(ticker) !== sid) return;
    const rec = this.ctx.ticker(ticker);
    if (rec === undefined) return;
    const t = rec.beginEvent(ts, receivedAt, venueSeq);
    if (t < 0) return;
    rec.applyDelta(t, d.side, d.price, d.delta);
  }

  close(): void {
    this.pending.clear();
    this.subs.clear();
    this.active.clear();
    this.tradeSubs.clear();
    this.tradeSid.clear();
    this.commands.clear();
  }
}

export function venueBProtocol(o: { subscribeBatch: number; trades: boolean }): FeedProtocol {
  return {
    venueClock: true,
    // Every message carries its subscription's `seq`: a lost one shows at the next.
    provesContinuity: true,
    signedHandshake: true,
    createSession: (ctx) => new VenueBSession(ctx, o.subscribeBatch, o.trades),
    async listActive(rest: RestClient, series: readonly string[], all: boolean): Promise<string[]> {
      const out = new Set<string>();
      const scopes = all ? [undefined] : series;
      for (const s of scopes) {
        let cursor = '';
        for (let page = 0; page < 10_000; page++) {
          const q = new URLSearchParams({ status: 'open', limit: '1000' });
          if (s !== undefined) q.set('series_ticker', s);
          if (cursor) q.set('cursor', cursor);
          const body = (await rest.json(`/markets?${q.toString()}`)) as {
            markets?: { ticker?: unknown }[];
            cursor?: unknown;
          };
          for (const m of body.markets ?? []) if (typeof m.ticker === 'string') out.add(m.ticker);
          cursor = typeof body.cursor === 'string' ? body.cursor : '';
          if (!cursor || (body.markets ?? []).length === 0) break;
        }
      }
      return [...out];
    },
    async restBook(rest: RestClient, ticker: string): Promise<RestBook> {
      const body = (await rest.json(`/markets/${encodeURIComponent(ticker)}/orderbook`)) as Record<string, unknown>;
      const book = (body.orderbook_fp ?? body.orderbook ?? {}) as Record<string, unknown>;
      return venueBBook(book);
    },
    normalizeTicker: (t) => t,
  };
}

/**
 * The recorder's adapter of Kalshi: 20 reads per second on the Basic tier, so 10; sequence numbers show a lost
 * message, and the REST `/markets/{ticker}/orderbook` (reconciled by default, within RECORDER_RECONCILE_BUDGET of the
 * limit) a wrong book the sequence does not reveal; missed trades read back from `/markets/trades` and
 * `/historical/trades`.
 */
export const venueBRecorder = defineAdapter({
  restRate: 10,
  reconcile: true,
  trades: venueBTrades,
  settings: {},
  // Kalshi: every call signed when credentials are set (newer specs mark the orderbook endpoints private).
  signedRest: true,
  protocol: (ctx) =>
    venueBProtocol({
      subscribeBatch: ctx.subscribeBatch,
      trades: ctx.trades,
    }),
});
