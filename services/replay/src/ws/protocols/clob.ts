// https://docs.polymarket.com/api-reference/wss/market
/**
 * Polymarket CLOB over the replay socket (`/ws/replay/v1/venue-a-clob`, or its alias `polymarket-clob`): the client
 * talks to it as to the market channel (`wss://ws-subscriptions-clob.polymarket.com/ws/market`, protocols.md §2.1),
 * whose frames are read as the simulator reads them (`parseClobRequest`, packages/feeds):
 *
 * - `{"assets_ids":[…],"type":"market"}` subscribes (again, or `{"assets_ids":[…],"operation":"subscribe"}`, adds
 *   assets: ccxt sends one per watched outcome); `"initial_dump":false` leaves out the assets' books at `from`. No
 *   confirmation, as the venue sends none. An asset id never recorded (or outside the key's `ticker_prefixes`) is
 *   ignored silently, as the venue ignores unknown assets.
 * - `{"assets_ids":[…],"operation":"unsubscribe"}` removes assets (after the start, their messages stop and they are
 *   no longer read).
 * - The text `PING` is answered `PONG`; anything else (not JSON, not an object, `assets_ids` missing or not a list of
 *   strings, no `type`/`operation` the channel knows, a binary frame) gets the text `INVALID OPERATION`, the venue's
 *   only refusal; so does a subscribe after the replay started (it would miss the clock).
 * - A window that starts before the caller's window for an asset closes the socket 1008 naming that start (the
 *   channel has no error message that could say so).
 * - depthgate's own limits (more than MAX_MARKETS_PER_SUBSCRIBE assets in one subscribe) get the gateway's
 *   `{"event_type":"depthgate_error","error":"subscription_limit","message":"depthgate: …"}`; the socket stays open.
 *
 * Then, per asset (engine/venue-a-clob.ts): its `book` at `from` (hashed), each recorded change as a `price_change`
 * with the hash of the asset's book after each entry, each trade as a `last_trade_price` followed by the asset's
 * `book` (as the venue sends after a trade), a recorded gap as a fresh hashed `book`.
 *
 * Outcome tokens: the recorder stores each token id as its own ticker with the token's own book (nothing mirrored),
 * so a client subscribing both tokens of a market gets each one's own recorded book and hashes. What differs from the
 * venue: the venue puts both tokens' entries of one change in one `price_change`; the replay, which replays each
 * recorded ticker on its own, sends one `price_change` per token, with the same `timestamp`. `market` (the condition
 * id) is not recorded: it is "" on every message, and every hash is computed with that "" (README, "Values not
 * recorded").
 */
import { CLOB_INVALID_OPERATION, clobDepthgateError, parseClobRequest } from '@depthgate/feeds';
import type { AppError } from '@depthgate/service-kit';
import { clobEncoder, type VenueEncoder } from '../../engine';
import { applied, MAX_MARKETS_PER_SUBSCRIBE } from '../protocol';
import type { Frame, MarketStream, Refusal, ReplayProtocol, SubscribeRequest, VenueSocket } from '../protocol';

interface Detail {
  initialDump: boolean;
}

/** One subscribed asset: whether its book at `from` is sent, and whether it is still subscribed. */
interface Asset {
  dump: boolean;
  on: boolean;
}

const invalid: Frame<Detail> = { kind: 'reply', texts: [CLOB_INVALID_OPERATION] };

/** depthgate's own refusal (the channel has none that says why): the gateway's `depthgate_error`. */
const refused = (error: string, message: string): Frame<Detail> => ({
  kind: 'reply',
  texts: [clobDepthgateError(error, `depthgate: ${message}`)],
});

/** A WebSocket close reason is at most 123 bytes. */
const reason = (text: string) => Buffer.from(text).subarray(0, 123).toString();

/**
 * The asset's messages while it is subscribed: nothing is sent for an asset unsubscribed after the start (which no
 * subscribe can undo: its book is only kept, and the socket stops reading it), nor the book at `from` without
 * `initial_dump` (the encoder still sees that step: its state stays that of the window).
 */
function whileSubscribed(encoder: VenueEncoder, a: Asset): VenueEncoder {
  return {
    book(book, ts, cause) {
      if (!a.on) return [];
      const out = encoder.book(book, ts, cause);
      return a.dump || cause.kind !== 'start' ? out : [];
    },
    startWithoutBook(trade) {
      const out = encoder.startWithoutBook?.(trade) ?? [];
      return a.on ? out : [];
    },
    changes: (book, deltas, ts) => (a.on ? encoder.changes(book, deltas, ts) : applied(book, deltas)),
    trade: (trade, book) => (a.on ? encoder.trade(trade, book) : []),
  };
}

class ClobProtocol implements ReplayProtocol<Detail> {
  /** By stored ticker (the token id), in the order first subscribed. */
  private readonly assets = new Map<string, Asset>();

  frame(text: string, isBinary: boolean, started: boolean): Frame<Detail> {
    const r = parseClobRequest(text, isBinary);
    if (r.kind === 'ping') return { kind: 'reply', texts: ['PONG'] };
    if (r.kind === 'invalid') return invalid;
    if (r.kind === 'unsubscribe') {
      for (const id of r.assets) {
        const a = this.assets.get(id);
        if (!a) continue;
        if (started) a.on = false;
        else this.assets.delete(id);
      }
      return { kind: 'reply', texts: [] };
    }
    if (started) return invalid;
    const named = [...new Set(r.assets)];
    if (named.length > MAX_MARKETS_PER_SUBSCRIBE)
      return refused('subscription_limit', `at most ${MAX_MARKETS_PER_SUBSCRIBE} assets per subscribe`);
    const tickers = named.filter((id) => !this.assets.has(id));
    // Nothing new (an empty list, or assets already subscribed): as the venue, nothing is sent.
    if (tickers.length === 0) return { kind: 'reply', texts: [] };
    return { kind: 'subscribe', request: { tickers, detail: { initialDump: r.initialDump } } };
  }

  refuse(_request: SubscribeRequest<Detail>, _requested: string, err: AppError): Refusal {
    if (err.code === 'unknown_ticker') return { reject: false, texts: [] };
    // invalid_timestamp: its message ends with the caller's window start (the asset id would not fit a close reason).
    const start = /(\S+)$/.exec(err.message)?.[1] ?? '';
    return {
      reject: true,
      texts: [],
      close: { code: 1008, reason: reason(`from is before the start of your window, ${start}`) },
    };
  }

  accept(request: SubscribeRequest<Detail>, tickers: string[]): string[] {
    for (const t of tickers)
      if (!this.assets.has(t)) this.assets.set(t, { dump: request.detail.initialDump, on: true });
    return [];
  }

  held(_request?: SubscribeRequest<Detail>, tickers: string[] = []): number {
    let n = tickers.filter((t) => !this.assets.has(t)).length;
    for (const a of this.assets.values()) if (a.on) n++;
    return n;
  }

  limited(_request: SubscribeRequest<Detail>, reason: string): string[] {
    return [clobDepthgateError('subscription_limit', `depthgate: ${reason}`)];
  }

  streams(): MarketStream[] {
    // `market`: the condition id is not recorded ("" as on the HTTP replay, src/encoders.ts).
    return [...this.assets].map(([ticker, a]) => ({
      ticker,
      encoder: whileSubscribed(clobEncoder({ asset: ticker, market: '' }), a),
      wanted: () => a.on,
    }));
  }
}

export const clobSocket: VenueSocket = {
  platform: 'venue-a-clob',
  exchange: 'venue_a_clob',
  name: 'Polymarket CLOB',
  create: () => new ClobProtocol(),
};
