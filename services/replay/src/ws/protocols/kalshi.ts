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
 *
 * Bad commands get Kalshi's error form (`{"id","type":"error","msg":{"code","msg"}}`, protocols.md §1.6) and the
 * socket stays open: 1 not JSON or not a command (or an `id` nested too deep to be echoed: answered with `id`
 * null), 2 no params, 3 no channels, 8 a channel other than orderbook_delta and trade, 10 depthgate's subscription
 * limit (`depthgate: …`, as the gateway answers its limits), 14 no market, 16 a market
 * never recorded (or outside the key's ticker_prefixes), 11 a window before the start of the caller's window for a
 * market (or more than MAX_MARKETS_PER_SUBSCRIBE markets in one command), 5 an unknown command, 13 a command the
 * replay does not support (update_subscription, unsubscribe, list_subscriptions) or a subscribe after the replay
 * started.
 */
import { jsonWritable, KALSHI_WS_ERRORS, kalshiWire, type KalshiWsError } from '@depthgate/feeds';
import type { AppError } from '@depthgate/service-kit';
import { kalshiEncoder, type KalshiSubscription } from '../../engine';
import {
  MAX_MARKETS_PER_SUBSCRIBE,
  onlyChannels,
  type Frame,
  type MarketStream,
  type Refusal,
  type ReplayProtocol,
  type SubscribeRequest,
  type VenueSocket,
} from '../protocol';

const CHANNELS = new Set(['orderbook_delta', 'trade']);
const UNSUPPORTED = new Set(['update_subscription', 'unsubscribe', 'list_subscriptions']);

interface Detail {
  id: unknown;
  channels: string[];
}

const ERR = KALSHI_WS_ERRORS;

const error = (id: unknown, refusal: KalshiWsError, detail?: string): Frame<Detail> => ({
  kind: 'reply',
  texts: [kalshiWire.refusal(id, refusal, detail)],
});

class KalshiProtocol implements ReplayProtocol<Detail> {
  private nextSid = 1;
  /**
   * Per market, the book subscriptions and trade sids of every subscribe that names it: a market named again gets
   * its messages on each subscription, as Kalshi's (and the gateway's, the simulator's) sockets send them.
   */
  private readonly markets = new Map<string, { books: KalshiSubscription[]; tradeSids: number[] }>();
  /** Subscriptions held: each subscribe's channels × its markets (the replay has no unsubscribe). */
  private subscriptions = 0;

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
    if (cmd !== 'subscribe') {
      if (typeof cmd === 'string' && UNSUPPORTED.has(cmd))
        return error(id, ERR.action, `the replay answers subscribe only (${cmd})`);
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
    const sids = new Map(channels.map((c) => [c, this.nextSid++]));
    const bookSid = sids.get('orderbook_delta');
    // One book subscription (its seq shared by its markets), as Kalshi numbers a connection's subscriptions.
    const book: KalshiSubscription | undefined = bookSid === undefined ? undefined : { sid: bookSid, seq: 0 };
    this.subscriptions = this.held(request, tickers);
    const tradeSid = sids.get('trade');
    for (const t of tickers) {
      let m = this.markets.get(t);
      if (!m) this.markets.set(t, (m = { books: [], tradeSids: [] }));
      if (book) m.books.push(book);
      if (tradeSid !== undefined) m.tradeSids.push(tradeSid);
    }
    return [...sids].map(([channel, sid]) => kalshiWire.subscribed(id, channel, sid));
  }

  held(request?: SubscribeRequest<Detail>, tickers: string[] = []): number {
    return this.subscriptions + (request ? request.detail.channels.length * tickers.length : 0);
  }

  limited(request: SubscribeRequest<Detail>, reason: string): string[] {
    // The gateway's answer to its limits: 10 Channel error, `depthgate: …`.
    return [kalshiWire.refusal(request.detail.id, ERR.channelError, `depthgate: ${reason}`)];
  }

  streams(): MarketStream[] {
    return [...this.markets].map(([ticker, m]) => ({
      ticker,
      encoder: onlyChannels(kalshiEncoder({ ticker, book: m.books, tradeSid: m.tradeSids }), {
        book: m.books.length > 0,
        trades: m.tradeSids.length > 0,
      }),
    }));
  }
}

export const kalshiSocket: VenueSocket = {
  platform: 'venue-b',
  exchange: 'venue_b',
  name: 'Kalshi',
  create: () => new KalshiProtocol(),
};
