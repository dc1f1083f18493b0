/**
 * Kalshi over the replay socket (`/ws/replay/v1/kalshi`): the client talks to it as to Kalshi's WebSocket.
 *
 * - `subscribe` (`{"id":1,"cmd":"subscribe","params":{"channels":["orderbook_delta","trade"],"market_ticker":"…"}}`,
 *   or `market_tickers`) is answered with one `subscribed` per channel, each with the connection's next `sid` (1, 2, …
 *   in the order subscribed), as Kalshi answers. Several subscribes before the replay starts each get their own sids;
 *   a market named by several gets its messages on each of their sids (its book first on each), as Kalshi's socket,
 *   the gateway's and the simulator's send a market subscribed again.
 * - Then each market's book at `from` (`orderbook_snapshot`), every recorded change (`orderbook_delta`, `seq`
 *   contiguous per `sid` across its markets) and trade (`trade`, on the trade subscription's `sid`), a recorded gap
 *   as a fresh `orderbook_snapshot` at the next `seq` (engine/venue-b.ts); only the channels subscribed.
 * - `unsubscribe` (`{"id":2,"cmd":"unsubscribe","params":{"sids":[1]}}`) is answered, as the simulator answers it,
 *   with one `unsubscribed` per sid (`{"id","sid","seq","type":"unsubscribed"}`, `seq` the sid's next); before the
 *   start the sid leaves the replay, after it nothing more of it is sent (not what was read ahead either), the
 *   market's other sids going on; a market with no sid left is no longer read. 4 no sids, 7 a sid not held.
 *
 * - `list_subscriptions` (`{"id":3,"cmd":"list_subscriptions"}`), before or after the start, is answered as Kalshi's
 *   socket and the simulator answer it: `{"id":3,"type":"ok","msg":[{"channel":"orderbook_delta","sid":1},…]}`, the
 *   subscriptions still held, by sid.
 *
 * Bad commands get Kalshi's error form (`{"id","type":"error","msg":{"code","msg"}}`, protocols.md §1.6) and the
 * socket stays open: 1 not JSON or not a command (or an `id` nested too deep to be echoed: answered with `id`
 * null), 2 no params, 3 no channels, 8 a channel other than orderbook_delta and trade, 10 depthgate's subscription
 * limit (`depthgate: …`, as the gateway answers its limits), 14 no market, 16 a market
 * never recorded (or outside the key's ticker_prefixes), 11 a window before the start of the caller's window for a
 * market (or more than MAX_MARKETS_PER_SUBSCRIBE markets in one command), 5 an unknown command, 13 a command the
 * replay does not support (update_subscription) or a subscribe after the replay started.
 */
import { jsonWritable, KALSHI_WS_ERRORS, kalshiWire, type KalshiWsError } from '@depthgate/feeds';
import type { AppError } from '@depthgate/service-kit';
import { kalshiEncoder, type KalshiSubscription } from '../../engine';
import {
  MAX_MARKETS_PER_SUBSCRIBE,
  onlyChannels,
  remove,
  type Frame,
  type MarketStream,
  type Refusal,
  type ReplayProtocol,
  type SubscribeRequest,
  type VenueSocket,
} from '../protocol';

const CHANNELS = new Set(['orderbook_delta', 'trade']);
const UNSUPPORTED = new Set(['update_subscription']);

interface Detail {
  id: unknown;
  channels: string[];
}

const ERR = KALSHI_WS_ERRORS;

const error = (id: unknown, refusal: KalshiWsError, detail?: string): Frame<Detail> => ({
  kind: 'reply',
  texts: [kalshiWire.refusal(id, refusal, detail)],
});

/** One of the connection's subscriptions (a `sid`): its markets, and its `seq` (book messages take it). */
interface Subscription {
  /** The `sid` and its last `seq`, shared with the encoders of its markets. */
  counter: KalshiSubscription;
  channel: string;
  tickers: string[];
}

class KalshiProtocol implements ReplayProtocol<Detail> {
  private nextSid = 1;
  /** The subscriptions held, by sid (an unsubscribe ends one). */
  private readonly subs = new Map<number, Subscription>();
  /**
   * Per market, the book subscriptions and trade sids of every subscribe that names it: a market named again gets
   * its messages on each subscription, as Kalshi's (and the gateway's, the simulator's) sockets send them. The
   * encoders read these lists at each message, so an unsubscribe after the start takes a sid out of them.
   */
  private readonly markets = new Map<string, { books: KalshiSubscription[]; tradeSids: number[] }>();

  frame(text: string, isBinary: boolean, started: boolean): Frame<Detail> {
    if (isBinary) return error(null, ERR.unprocessable);
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return error(null, ERR.unprocessable);
    }
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return error(null, ERR.unprocessable);
    const { cmd, params } = m as { cmd?: unknown; params?: unknown };
    const id = (m as { id?: unknown }).id ?? null;
    // Every answer echoes the id: one nested too deep to be written back cannot be answered as its command.
    if (!jsonWritable(id)) return error(null, ERR.unprocessable);
    if (cmd === 'unsubscribe') return this.unsubscribe(id, params);
    if (cmd === 'list_subscriptions') {
      // By sid: sids are handed out in increasing order and the map keeps its insertion order.
      const held = [...this.subs.values()].map((s) => ({ channel: s.channel, sid: s.counter.sid }));
      return { kind: 'reply', texts: [kalshiWire.subscriptions(id, held)] };
    }
    if (cmd !== 'subscribe') {
      if (typeof cmd === 'string' && UNSUPPORTED.has(cmd))
        return error(id, ERR.action, `the replay answers subscribe, unsubscribe and list_subscriptions only (${cmd})`);
      return error(id, ERR.command);
    }
    if (started) return error(id, ERR.action, 'subscribe before the replay starts');
    if (params === null || typeof params !== 'object') return error(id, ERR.params);
    const p = params as { channels?: unknown; market_ticker?: unknown; market_tickers?: unknown };
    if (!Array.isArray(p.channels) || p.channels.length === 0) return error(id, ERR.channels);
    const channels = [...new Set(p.channels as unknown[])];
    for (const c of channels)
      if (typeof c !== 'string' || !CHANNELS.has(c))
        return error(id, ERR.channel, 'the replay serves orderbook_delta and trade');
    const tickers = [
      ...new Set([
        ...(typeof p.market_ticker === 'string' ? [p.market_ticker] : []),
        ...(Array.isArray(p.market_tickers) ? (p.market_tickers as unknown[]) : []),
      ]),
    ];
    if (tickers.length === 0 || tickers.some((t) => typeof t !== 'string')) return error(id, ERR.market);
    if (tickers.length > MAX_MARKETS_PER_SUBSCRIBE)
      return error(id, ERR.parameter, `at most ${MAX_MARKETS_PER_SUBSCRIBE} markets per command`);
    return {
      kind: 'subscribe',
      request: { tickers: tickers as string[], detail: { id, channels: channels as string[] } },
    };
  }

  /**
   * `unsubscribe` (`params.sids`), as the simulator answers it: each sid in turn ended and answered `unsubscribed`
   * with its next `seq`; none given 4, a sid not held 7 (those before it stay ended). Before the start the sid leaves
   * the replay; after it nothing more of it is sent (MarketStream.wanted: not what was read ahead either).
   */
  private unsubscribe(id: unknown, params: unknown): Frame<Detail> {
    if (params === null || typeof params !== 'object') return error(id, ERR.params);
    const sids = (params as { sids?: unknown }).sids;
    if (!Array.isArray(sids) || sids.length === 0) return error(id, ERR.sids);
    const texts: string[] = [];
    for (const sid of sids) {
      const sub = typeof sid === 'number' ? this.subs.get(sid) : undefined;
      if (!sub) return { kind: 'reply', texts: [...texts, kalshiWire.refusal(id, ERR.sid)] };
      this.subs.delete(sub.counter.sid);
      for (const t of sub.tickers) {
        const m = this.markets.get(t);
        if (!m) continue;
        remove(m.books, sub.counter);
        remove(m.tradeSids, sub.counter.sid);
      }
      texts.push(kalshiWire.unsubscribed(id, sub.counter.sid, ++sub.counter.seq));
    }
    return { kind: 'reply', texts };
  }

  refuse(request: SubscribeRequest<Detail>, requested: string, err: AppError): Refusal {
    const unknown = err.code === 'unknown_ticker';
    const texts = [
      unknown
        ? kalshiWire.refusal(request.detail.id, ERR.marketNotFound, requested.slice(0, 80))
        : kalshiWire.refusal(request.detail.id, ERR.parameter, err.message),
    ];
    return { reject: true, texts };
  }

  accept(request: SubscribeRequest<Detail>, tickers: string[]): string[] {
    const { id, channels } = request.detail;
    const acks: string[] = [];
    for (const channel of channels) {
      // One subscription per channel (its seq shared by its markets), as Kalshi numbers a connection's subscriptions.
      const counter: KalshiSubscription = { sid: this.nextSid++, seq: 0 };
      this.subs.set(counter.sid, { counter, channel, tickers });
      for (const t of tickers) {
        let m = this.markets.get(t);
        if (!m) this.markets.set(t, (m = { books: [], tradeSids: [] }));
        if (channel === 'orderbook_delta') m.books.push(counter);
        else m.tradeSids.push(counter.sid);
      }
      acks.push(kalshiWire.subscribed(id, channel, counter.sid));
    }
    return acks;
  }

  held(request?: SubscribeRequest<Detail>, tickers: string[] = []): number {
    let n = request ? request.detail.channels.length * tickers.length : 0;
    for (const sub of this.subs.values()) n += sub.tickers.length;
    return n;
  }

  limited(request: SubscribeRequest<Detail>, reason: string): string[] {
    // The gateway's answer to its limits: 10 Channel error, `depthgate: …`.
    return [kalshiWire.refusal(request.detail.id, ERR.channelError, `depthgate: ${reason}`)];
  }

  streams(): MarketStream[] {
    return [...this.markets]
      .filter(([, m]) => m.books.length + m.tradeSids.length > 0)
      .map(([ticker, m]) => ({
        ticker,
        encoder: onlyChannels(kalshiEncoder({ ticker, book: m.books, tradeSid: m.tradeSids }), {
          book: m.books.length > 0,
          trades: m.tradeSids.length > 0,
        }),
        // The encoder's channels are the sids: one still held is wanted; a market with none left is not read.
        wanted: (channel?: string) =>
          channel === undefined ? m.books.length + m.tradeSids.length > 0 : this.subs.has(Number(channel)),
      }));
  }
}

export const kalshiSocket: VenueSocket = {
  platform: 'venue-b',
  exchange: 'venue_b',
  name: 'Kalshi',
  create: () => new KalshiProtocol(),
};
