// https://docs.cdp.coinbase.com/exchange/websocket-feed/channels
/**
 * Coinbase Exchange over the replay socket (`/ws/replay/v1/coinbase` or `venue-d`): the client talks to it as to the
 * Exchange feed (`wss://ws-feed.exchange.coinbase.com`, protocols.md §5.2), as the simulator serves it
 * (packages/venue-sim/src/platforms/venue-d/ws.ts: the same parser, `parseCoinbaseSubscribe`).
 *
 * - `{"type":"subscribe","product_ids":[…],"channels":["level2"|"level2_batch"|"matches", {"name":…,"product_ids":[…]}]}`
 *   is answered with `subscriptions`, the connection's whole list (as Coinbase answers); several subscribes before the
 *   start add up. The `level2` signature fields (`key`, `passphrase`, `timestamp`, `signature`) are accepted and
 *   ignored: the caller authenticates to depthgate with its depthgate key.
 * - Then per product the engine's messages (engine/venue-d.ts), only the channels subscribed: with `level2` the
 *   `snapshot` at `from`, `l2update`s, a recorded gap as a new `snapshot`; with `matches` the `last_match` (when the
 *   window's last earlier trade is known, whether or not there is a book at `from`) and every `match`. Products are
 *   merged in time order.
 * - `level2_batch` is served as `level2`: every recorded change as its own `l2update` (the recorded messages, not
 *   regathered into 50 ms windows; a client that applies batches applies these the same way). A product on both
 *   `level2` and `level2_batch` gets its book messages once.
 * - `unsubscribe` (same form) is answered with the list after it: before the start the pairs leave the replay; after
 *   it, their messages stop (a product none of whose channels is left is no longer read). Pairs of `ticker` or
 *   `heartbeat` (never replayed) end nothing; the frame's other pairs are ended as named.
 *
 * Errors are `{"type":"error","message":"Failed to subscribe","reason":…}`, as the simulator writes them, and the
 * socket stays open; the whole frame is refused: not JSON or another type (`type must be subscribe or unsubscribe`), a
 * channel not of the feed (`X is not a valid channel`), `ticker`/`heartbeat` in a subscribe (not replayed), no pair of
 * channel and product (`No channels or product ids provided`), a product never recorded or outside the key's
 * `ticker_prefixes` (`X is not a valid product`), a window starting before the caller's for a product (the reason names
 * that start), a subscribe after the replay started; depthgate's own limits (`depthgate: …`, as the gateway's): more
 * than MAX_MARKETS_PER_SUBSCRIBE products in one subscribe.
 */
import {
  COINBASE_CHANNELS,
  coinbaseWire,
  parseCoinbaseSubscribe,
  parseObject,
  type CoinbaseChannel,
} from '@depthgate/feeds';
import type { AppError } from '@depthgate/service-kit';
import { coinbaseEncoder, type VenueEncoder } from '../../engine';
import { applied, MAX_MARKETS_PER_SUBSCRIBE } from '../protocol';
import type { Frame, MarketStream, Refusal, ReplayProtocol, SubscribeRequest, VenueSocket } from '../protocol';

/** The channels replayed (the book's two, and the trades'). */
const REPLAYED = ['level2', 'level2_batch', 'matches'] as const;
type Channel = (typeof REPLAYED)[number];
const BOOK: readonly Channel[] = ['level2', 'level2_batch'];
/** The subscription a channel is part of: the product's book, or its trades. */
const topicOf = (c: Channel) => (BOOK.includes(c) ? 'level2' : c);

interface Detail {
  pairs: [Channel, string][];
}

const fail = (reason: string): Frame<Detail> => ({ kind: 'reply', texts: [coinbaseWire.subscribeError(reason)] });

/**
 * The product's encoder writing only what `wanted()` says at the time: its book messages (`snapshot`, `l2update`),
 * its trades (`last_match` after the start's snapshot, `match`). The book is kept either way.
 */
function channels(encoder: VenueEncoder, wanted: () => { book: boolean; trades: boolean }): VenueEncoder {
  return {
    book(book, ts, cause) {
      // engine/venue-d.ts: the snapshot first, then (at the start) the last_match.
      const [snapshot, ...lastMatch] = encoder.book(book, ts, cause);
      const w = wanted();
      return [...(w.book && snapshot !== undefined ? [snapshot] : []), ...(w.trades ? lastMatch : [])];
    },
    changes: (book, deltas, ts) => (wanted().book ? encoder.changes(book, deltas, ts) : applied(book, deltas)),
    trade: (trade, book) => (wanted().trades ? encoder.trade(trade, book) : []),
    // No book at the start: the last_match alone.
    startWithoutBook: (trade) => (wanted().trades ? (encoder.startWithoutBook?.(trade) ?? []) : []),
  };
}

class CoinbaseProtocol implements ReplayProtocol<Detail> {
  /** Per channel, its products (stored names) in the order subscribed. */
  private readonly subscribed = new Map<Channel, Set<string>>(REPLAYED.map((c) => [c, new Set()]));
  /** Pairs (`channel product`) unsubscribed after the start. */
  private readonly stopped = new Set<string>();

  frame(text: string, _isBinary: boolean, started: boolean): Frame<Detail> {
    const parsed = parseCoinbaseSubscribe(parseObject(text));
    if ('error' in parsed) return fail(parsed.error);
    const pairs: [Channel, string][] = [];
    for (const [c, p] of parsed.pairs) {
      if ((REPLAYED as readonly CoinbaseChannel[]).includes(c)) pairs.push([c as Channel, p]);
      // An unsubscribe from a channel never replayed (ticker, heartbeat) has nothing to end: its other pairs are.
      else if (parsed.type === 'subscribe')
        return fail(`${c} is not replayed: the replay serves level2, level2_batch and matches`);
    }
    if (parsed.type === 'unsubscribe') {
      for (const [c, p] of pairs) {
        const products = this.subscribed.get(c) as Set<string>;
        for (const s of products) {
          if (s.toLowerCase() !== p.toLowerCase()) continue;
          if (started) this.stopped.add(`${c} ${s}`);
          else products.delete(s);
        }
      }
      return { kind: 'reply', texts: [this.list()] };
    }
    if (started)
      return fail(
        'the replay has started: subscribe every product before it starts (within the settle time of the last subscribe)',
      );
    const tickers = [...new Set(pairs.map(([, p]) => p))];
    if (tickers.length > MAX_MARKETS_PER_SUBSCRIBE)
      return fail(`depthgate: at most ${MAX_MARKETS_PER_SUBSCRIBE} products per subscribe`);
    return { kind: 'subscribe', request: { tickers, detail: { pairs } } };
  }

  refuse(_request: SubscribeRequest<Detail>, requested: string, err: AppError): Refusal {
    const reason = err.code === 'unknown_ticker' ? `${requested.slice(0, 40)} is not a valid product` : err.message;
    return { reject: true, texts: [coinbaseWire.subscribeError(reason)] };
  }

  accept(request: SubscribeRequest<Detail>, tickers: string[]): string[] {
    for (const [c, t] of this.pairs(request, tickers)) this.subscribed.get(c)?.add(t);
    return [this.list()];
  }

  /** The pairs a subscribe accepted for `tickers` adds: each named product by its stored name. */
  private pairs(request: SubscribeRequest<Detail>, tickers: string[]): [Channel, string][] {
    // A named product's stored name: itself, else the one stored name it matches case-insensitively (request.ts).
    const stored = (p: string) => (tickers.includes(p) ? p : tickers.find((t) => t.toLowerCase() === p.toLowerCase()));
    return request.detail.pairs.flatMap(([c, p]): [Channel, string][] => {
      const t = stored(p);
      return t === undefined ? [] : [[c, t]];
    });
  }

  /**
   * The gateway's count: a product's book (`level2` and `level2_batch` share it) and its `matches`, each a
   * subscription while some channel of it is live.
   */
  held(request?: SubscribeRequest<Detail>, tickers: string[] = []): number {
    const topics = new Set<string>();
    for (const [c, products] of this.subscribed)
      for (const p of products) if (!this.stopped.has(`${c} ${p}`)) topics.add(`${topicOf(c)} ${p}`);
    if (request) for (const [c, t] of this.pairs(request, tickers)) topics.add(`${topicOf(c)} ${t}`);
    return topics.size;
  }

  limited(_request: SubscribeRequest<Detail>, reason: string): string[] {
    return [coinbaseWire.subscribeError(`depthgate: ${reason}`)];
  }

  /** The connection's whole list, in the feed's channel order. */
  private list(): string {
    const live = (c: Channel) =>
      [...(this.subscribed.get(c) as Set<string>)].filter((p) => !this.stopped.has(`${c} ${p}`));
    return coinbaseWire.subscriptions(
      COINBASE_CHANNELS.filter((c): c is Channel => (REPLAYED as readonly string[]).includes(c))
        .map((name) => ({ name, product_ids: live(name) }))
        .filter((c) => c.product_ids.length > 0),
    );
  }

  streams(): MarketStream[] {
    const on = (c: Channel, p: string) => this.subscribed.get(c)?.has(p) === true && !this.stopped.has(`${c} ${p}`);
    const products = new Set(REPLAYED.flatMap((c) => [...(this.subscribed.get(c) as Set<string>)]));
    const wanted = (ticker: string) => ({ book: BOOK.some((c) => on(c, ticker)), trades: on('matches', ticker) });
    return [...products].map((ticker) => ({
      ticker,
      encoder: channels(coinbaseEncoder({ product: ticker }), () => wanted(ticker)),
      // The encoder's channels: `level2` (the book, level2_batch's too) and `matches`.
      wanted: (channel?: string) => {
        const w = wanted(ticker);
        return channel === 'level2' ? w.book : channel === 'matches' ? w.trades : w.book || w.trades;
      },
    }));
  }
}

export const coinbaseSocket: VenueSocket = {
  platform: 'venue-d',
  exchange: 'venue_d',
  name: 'Coinbase',
  create: () => new CoinbaseProtocol(),
};
