// https://docs.kalshi.com/websockets/orderbook-updates
/**
 * Kalshi (`venue_b`): the `orderbook_delta` channel of `wss://api.elections.kalshi.com/trade-api/ws/v2`.
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
 *   + `delta`), `side` yes|no, `ts_ms` (or RFC 3339 `ts`) — the event time used as the row's ts.
 *
 * Integrity: a `seq` gap marks every market of the subscription as suspect and resubscribes them on a new `sid`;
 * each market switches to the new subscription at its snapshot, which decides whether it lost anything (its book
 * differs: a gap from the last in-order message) or not (no gap). The old subscription is dropped once empty.
 * Snapshots carry no time: a snapshot holds from the ts of the next timestamped message of the connection (events
 * are delivered in order), or from its receipt if none follows within RECORDER_SNAPSHOT_QUIET_MS.
 */
import { defineAdapter } from './adapter';
import { ASK, BID, CanonicalMemo, centsToDollars, complementOfOne, parseObject } from '@depthgate/feeds';
import type { TickerRecorder } from '../ticker';
import type { RestClient } from './rest';
import { chunk, type RestBook, type SessionContext, type FeedProtocol, type VenueSession } from './types';

interface Subscription {
  tickers: Set<string>;
  lastSeq: number | undefined;
  /** A seq gap was seen: its markets are being moved to a new subscription. */
  retiring: boolean;
}

/** NO price → YES ask price, memoised (prices sit on a grid). */
const complement = new CanonicalMemo(complementOfOne, 10_000);

type LevelPair = readonly [string, string];

function levelsOf(v: unknown, legacyCents: boolean): LevelPair[] {
  if (!Array.isArray(v)) return [];
  const out: LevelPair[] = [];
  for (const level of v as unknown[]) {
    if (!Array.isArray(level) || level.length < 2) continue;
    const [p, q] = level as unknown[];
    if (legacyCents) {
      if (typeof p === 'number' && typeof q === 'number') out.push([centsToDollars(p), String(q)]);
    } else if (typeof p === 'string' && typeof q === 'string') out.push([p, q]);
  }
  return out;
}

/** A Kalshi book message (`yes_*`/`no_*` bids) as bids and asks: NO bids become asks at 1 − price. */
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

/** A delta message's fields: side (bid for YES, ask for NO), YES-side price, signed change, event ms. */
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
  let ts: number | undefined;
  if (typeof msg.ts_ms === 'number' && Number.isSafeInteger(msg.ts_ms)) ts = msg.ts_ms;
  else if (typeof msg.ts === 'string') {
    const parsed = Date.parse(msg.ts);
    if (!Number.isNaN(parsed)) ts = parsed;
  } else if (typeof msg.ts === 'number' && Number.isSafeInteger(msg.ts)) {
    // Seconds in some legacy fixtures.
    ts = msg.ts < 1e12 ? msg.ts * 1000 : msg.ts;
  }
  return side === 'yes'
    ? { side: BID, price: rawPrice, delta, ts }
    : { side: ASK, price: complement.get(rawPrice), delta, ts };
}

class VenueBSession implements VenueSession {
  private nextId = 1;
  private readonly subs = new Map<number, Subscription>();
  /** The subscription whose messages a market follows. */
  private readonly active = new Map<string, number>();
  /** Commands waiting for their answer. */
  private readonly commands = new Map<number, { tickers: string[] }>();
  /** Markets whose venue snapshot waits for the next timestamped message. */
  private readonly pending = new Set<TickerRecorder>();
  private mark = -1;

  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
  ) {}

  watermark(): number {
    return this.mark;
  }

  subscribe(tickers: readonly string[]): void {
    for (const part of chunk(tickers, this.batch)) {
      const id = this.nextId++;
      this.commands.set(id, { tickers: part });
      this.ctx.send(
        JSON.stringify({ id, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: part } }),
      );
    }
  }

  /**
   * Removes markets: each subscription that holds one is dropped, and its other markets are subscribed again (their
   * snapshots match their books, so they continue without a gap).
   */
  unsubscribe(tickers: readonly string[]): void {
    const gone = new Set(tickers);
    const keep: string[] = [];
    for (const [sid, sub] of this.subs) {
      if (![...sub.tickers].some((t) => gone.has(t))) continue;
      for (const t of sub.tickers) {
        if (this.active.get(t) === sid) this.active.delete(t);
        if (!gone.has(t)) keep.push(t);
      }
      this.dropSubscription(sid);
    }
    for (const t of tickers) this.active.delete(t);
    if (keep.length > 0) this.subscribe(keep);
  }

  resync(tickers: readonly string[]): void {
    this.subscribe(tickers);
  }

  private dropSubscription(sid: number): void {
    this.subs.delete(sid);
    const id = this.nextId++;
    this.ctx.send(JSON.stringify({ id, cmd: 'unsubscribe', params: { sids: [sid] } }));
  }

  onMessage(text: string, receivedAt: number): void {
    const m = parseObject(text);
    if (!m) return;
    const type = m.type;
    if (type === 'orderbook_delta' || type === 'orderbook_snapshot') {
      const sid = typeof m.sid === 'number' ? m.sid : -1;
      const sub = this.subs.get(sid);
      const msg = (m.msg ?? {}) as Record<string, unknown>;
      const ticker = typeof msg.market_ticker === 'string' ? msg.market_ticker : '';
      if (sub === undefined) return; // a subscription we dropped
      const seq = typeof m.seq === 'number' ? m.seq : undefined;
      if (seq !== undefined) {
        if (sub.lastSeq !== undefined && seq !== sub.lastSeq + 1 && !sub.retiring) this.sequenceGap(sid, sub);
        sub.lastSeq = seq;
      }
      if (type === 'orderbook_snapshot') this.snapshot(sid, sub, ticker, msg, receivedAt);
      else this.delta(sid, ticker, msg, receivedAt);
      return;
    }
    if (type === 'subscribed') {
      const msg = (m.msg ?? {}) as Record<string, unknown>;
      const id = typeof m.id === 'number' ? m.id : -1;
      const command = this.commands.get(id);
      this.commands.delete(id);
      if (typeof msg.sid === 'number' && command) {
        this.subs.set(msg.sid, { tickers: new Set(command.tickers), lastSeq: undefined, retiring: false });
      }
      return;
    }
    if (type === 'error') {
      const id = typeof m.id === 'number' ? m.id : -1;
      const msg = (m.msg ?? {}) as Record<string, unknown>;
      const message = String(msg.msg ?? '');
      const command = this.commands.get(id);
      this.commands.delete(id);
      if (!command) {
        this.ctx.logger.warn({ error: msg }, 'Kalshi feed error');
        return;
      }
      const unknown = /Market not found: (\S+)/.exec(message)?.[1];
      if (unknown !== undefined && command.tickers.includes(unknown)) {
        this.ctx.rejectTicker(unknown, message);
        const rest = command.tickers.filter((t) => t !== unknown);
        if (rest.length > 0) this.subscribe(rest);
        return;
      }
      this.ctx.logger.error({ error: msg, markets: command.tickers.length }, 'Kalshi refused a subscription');
      this.ctx.reconnect('disconnect');
    }
    // `unsubscribed`, `ok`: nothing to do.
  }

  private sequenceGap(sid: number, sub: Subscription): void {
    sub.retiring = true;
    const moving: string[] = [];
    for (const t of sub.tickers) {
      if (this.active.get(t) !== sid) continue;
      this.ctx.ticker(t)?.suspectLoss('sequence_gap', this.mark);
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
  ): void {
    const rec = this.ctx.ticker(ticker);
    if (rec === undefined) return;
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
    const book = venueBBook(msg);
    if (rec.venueSnapshot(book.bids, book.asks, { defer: true, receivedAt })) this.pending.add(rec);
  }

  private delta(sid: number, ticker: string, msg: Record<string, unknown>, receivedAt: number): void {
    const d = venueBDelta(msg);
    if (d === undefined) return;
    const ts = d.ts ?? receivedAt;
    // Events arrive in order: any timestamped message fixes when the snapshots before it hold from.
    if (this.pending.size > 0) {
      for (const rec of this.pending) rec.settle(ts);
      this.pending.clear();
    }
    const sub = this.subs.get(sid);
    if (sub !== undefined && !sub.retiring && ts > this.mark) this.mark = ts;
    if (this.active.get(ticker) !== sid) return;
    const rec = this.ctx.ticker(ticker);
    if (rec === undefined) return;
    const t = rec.beginEvent(ts, receivedAt);
    if (t < 0) return;
    rec.applyDelta(t, d.side, d.price, d.delta);
  }

  close(): void {
    this.pending.clear();
    this.subs.clear();
    this.active.clear();
    this.commands.clear();
  }
}

export function venueBProtocol(o: { subscribeBatch: number }): FeedProtocol {
  return {
    venueClock: true,
    signedHandshake: true,
    createSession: (ctx) => new VenueBSession(ctx, o.subscribeBatch),
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

/** The recorder's adapter of Kalshi: 20 reads per second on the Basic tier, so 10; sequence numbers, no reconciling. */
export const venueBRecorder = defineAdapter({
  restRate: 10,
  reconcile: false,
  settings: {},
  // Kalshi: every call signed when credentials are set (newer specs mark the orderbook endpoints private).
  signedRest: true,
  protocol: (ctx) =>
    venueBProtocol({
      subscribeBatch: ctx.subscribeBatch,
    }),
});
