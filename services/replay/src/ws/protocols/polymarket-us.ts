// https://docs.polymarket.us/api-reference/websocket/markets
/**
 * Polymarket US over the replay socket (`/ws/replay/v1/venue-a-us`, or its alias `polymarket-us`): the client talks to
 * it as to the markets WebSocket (`wss://api.polymarket.us/v1/ws/markets`, protocols.md §3), whose messages are read
 * as the simulator reads them (`parsePmUsRequest`, packages/feeds):
 *
 * - `{"subscribe":{"requestId","subscriptionType","marketSlugs":[…]}}` with `SUBSCRIPTION_TYPE_MARKET_DATA` or
 *   `SUBSCRIPTION_TYPE_TRADE`. No acknowledgement, as the venue sends none: a MARKET_DATA subscription's first message
 *   is the market's book at `from`. Each subscription gets every message of its kind for each of its markets under its
 *   own `requestId` (a market in two MARKET_DATA subscriptions gets each book twice, as on the venue); a subscribe with
 *   a `requestId` already used replaces that subscription.
 * - `{"unsubscribe":{"requestId"}}` ends a subscription (after the start, its messages stop; a market none of whose
 *   subscriptions is left is no longer read).
 * - Errors, in the venue's form `{"requestId"?,"error"}` with the simulator's texts, and the socket stays open:
 *   `invalid message` (not a JSON object), `unknown message`, `requestId is required`, `unsupported subscriptionType`
 *   (MARKET_DATA_LITE is not replayed: its fields are not recorded), `marketSlugs is required`, `too many marketSlugs
 *   (max 100)`, `market not found: <slug>` (never recorded, or outside the key's `ticker_prefixes`: the whole
 *   subscription is refused, as the venue refuses it), `subscription not found` (unsubscribe), the window starting
 *   before the caller's window for a market (naming that start), a subscribe after the replay started.
 *
 * Then (engine/venue-a-us.ts) each MARKET_DATA message is the market's whole book (at `from`, after each recorded
 * change, and after a recorded gap: the whole book is this feed's only reset form), each trade a TRADE message. There
 * is no sequence on this feed. Not sent: heartbeats (`{"heartbeat":{}}`: the replay ends the socket itself).
 */
import { parsePmUsRequest, pmUsWire, type PmUsSubscriptionType } from '@depthgate/feeds';
import type { AppError } from '@depthgate/service-kit';
import { pmUsEncoder } from '../../engine';
import { remove } from '../protocol';
import type { Frame, MarketStream, Refusal, ReplayProtocol, SubscribeRequest, VenueSocket } from '../protocol';

const REPLAYED = new Set<PmUsSubscriptionType>(['SUBSCRIPTION_TYPE_MARKET_DATA', 'SUBSCRIPTION_TYPE_TRADE']);

interface Detail {
  requestId: string;
  type: PmUsSubscriptionType;
}

interface Subscription {
  type: PmUsSubscriptionType;
  tickers: string[];
}

/** A market's request ids per kind: the encoder reads these lists at each message (an unsubscribe empties them). */
interface Market {
  book: string[];
  trade: string[];
}

const error = (requestId: string | undefined, text: string): Frame<Detail> => ({
  kind: 'reply',
  texts: [pmUsWire.error(requestId, text)],
});

class PmUsProtocol implements ReplayProtocol<Detail> {
  /** By requestId, in the order subscribed. */
  private readonly subs = new Map<string, Subscription>();
  /** After the start: each market's request ids, shared with its encoder. */
  private readonly markets = new Map<string, Market>();

  frame(text: string, _isBinary: boolean, started: boolean): Frame<Detail> {
    const r = parsePmUsRequest(text);
    if (r.kind === 'error') return error(r.requestId, r.error);
    if (r.kind === 'unsubscribe') {
      const sub = typeof r.requestId === 'string' ? this.subs.get(r.requestId) : undefined;
      if (sub === undefined)
        return error(typeof r.requestId === 'string' ? r.requestId : undefined, 'subscription not found');
      this.subs.delete(r.requestId as string);
      for (const m of this.markets.values()) for (const ids of [m.book, m.trade]) remove(ids, r.requestId as string);
      return { kind: 'reply', texts: [] };
    }
    if (!REPLAYED.has(r.type))
      return error(
        r.requestId,
        'unsupported subscriptionType: the replay serves SUBSCRIPTION_TYPE_MARKET_DATA and SUBSCRIPTION_TYPE_TRADE',
      );
    if (started) return error(r.requestId, 'subscribe before the replay starts: this replay has started');
    return {
      kind: 'subscribe',
      request: { tickers: [...new Set(r.slugs)], detail: { requestId: r.requestId, type: r.type } },
    };
  }

  refuse(request: SubscribeRequest<Detail>, requested: string, err: AppError): Refusal {
    const text = err.code === 'unknown_ticker' ? `market not found: ${requested.slice(0, 200)}` : err.message;
    return { reject: true, texts: [pmUsWire.error(request.detail.requestId, text)] };
  }

  accept(request: SubscribeRequest<Detail>, tickers: string[]): string[] {
    const { requestId, type } = request.detail;
    // A requestId used again replaces its subscription (as the venue's simulator does); it keeps its place.
    this.subs.set(requestId, { type, tickers });
    return [];
  }

  held(request?: SubscribeRequest<Detail>, tickers: string[] = []): number {
    // A subscribe replaces the subscription of its requestId.
    let n = request ? tickers.length : 0;
    for (const [requestId, sub] of this.subs) if (requestId !== request?.detail.requestId) n += sub.tickers.length;
    return n;
  }

  limited(request: SubscribeRequest<Detail>, reason: string): string[] {
    return [pmUsWire.error(request.detail.requestId, `depthgate: ${reason}`)];
  }

  streams(): MarketStream[] {
    for (const [requestId, sub] of this.subs)
      for (const ticker of sub.tickers) {
        let m = this.markets.get(ticker);
        if (!m) this.markets.set(ticker, (m = { book: [], trade: [] }));
        (sub.type === 'SUBSCRIPTION_TYPE_TRADE' ? m.trade : m.book).push(requestId);
      }
    return [...this.markets].map(([ticker, m]) => ({
      ticker,
      encoder: pmUsEncoder({ slug: ticker, requestId: m.book, tradeRequestId: m.trade }),
      // The encoder's channels are the subscriptions' requestIds.
      wanted: (channel?: string) =>
        channel === undefined ? m.book.length + m.trade.length > 0 : [...m.book, ...m.trade].includes(channel),
    }));
  }
}

export const pmUsSocket: VenueSocket = {
  platform: 'venue-a-us',
  exchange: 'venue_a_us',
  name: 'Polymarket US',
  create: () => new PmUsProtocol(),
};
