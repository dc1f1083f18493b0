// https://docs.gemini.com/websocket/market-data/v2/level-2-data
/**
 * Gemini over the replay socket (`/ws/replay/v1/gemini` or `venue-c`): the client talks to it as to Gemini's market
 * data v2 (`wss://api.gemini.com/v2/marketdata`, protocols.md §4.2), as the simulator serves it
 * (packages/venue-sim/src/platforms/venue-c/ws.ts: the same parser, `parseGeminiSubscribe`).
 *
 * - `{"type":"subscribe","subscriptions":[{"name":"l2","symbols":["BTCUSD",…]}]}` (several subscriptions and
 *   subscribes before the start add up; a symbol named again is ignored, as Gemini ignores it). Gemini acknowledges
 *   nothing: a symbol's first message is its answer.
 * - Then per symbol the engine's messages (engine/venue-c.ts): the first `l2_updates` with the whole book (`trades`
 *   and `auction_events` empty), `l2_updates` of changed levels (new absolute quantities), `trade`s; a recorded gap as
 *   the first-message form again (the whole book at the gap's end). Symbols are merged in time order.
 * - `unsubscribe` (same form): before the start the symbol leaves the replay; after it, its messages stop (and it is
 *   no longer read).
 *
 * Errors are Gemini's form `{"type":"error","result":"error","reason","message"}` and the socket stays open:
 * `InvalidJson` a frame that is not JSON, not a subscribe/unsubscribe with a `subscriptions` list, or a subscription
 * other than `l2` with a `symbols` list (the whole frame is refused); `InvalidSymbol` (`invalid symbol X`, as the
 * simulator writes it) a symbol never recorded, or outside the key's `ticker_prefixes` — the frame's other symbols go
 * on; `InvalidTimestamp` a window starting before the caller's for the symbol (the message names that start), the
 * other symbols go on; `ReplayStarted` a subscribe after the replay started (its clock is running: subscribe every
 * symbol within REPLAY_SUBSCRIBE_SETTLE_MS of the last subscribe); `SubscriptionLimit` (the gateway's, `depthgate: …`)
 * depthgate's own limits, the whole frame refused: more than MAX_MARKETS_PER_SUBSCRIBE symbols in one subscribe.
 */
import { geminiWire, parseGeminiSubscribe, parseObject, valueText } from '@depthgate/feeds';
import type { AppError } from '@depthgate/service-kit';
import { geminiEncoder, type VenueEncoder } from '../../engine';
import { MAX_MARKETS_PER_SUBSCRIBE } from '../protocol';
import type { Frame, MarketStream, Refusal, ReplayProtocol, SubscribeRequest, VenueSocket } from '../protocol';

const reply = (reason: string, message: string): Frame<undefined> => ({
  kind: 'reply',
  texts: [geminiWire.error(reason, message)],
});

/** An encoder whose messages stop once `stopped()` says so (an unsubscribe after the start). */
function until(encoder: VenueEncoder, stopped: () => boolean): VenueEncoder {
  return {
    book: (book, ts, cause) => (stopped() ? [] : encoder.book(book, ts, cause)),
    changes: (book, deltas, ts) => (stopped() ? [] : encoder.changes(book, deltas, ts)),
    trade: (trade, book) => (stopped() ? [] : encoder.trade(trade, book)),
    startWithoutBook: (trade) => (stopped() ? [] : (encoder.startWithoutBook?.(trade) ?? [])),
  };
}

class GeminiProtocol implements ReplayProtocol<undefined> {
  /** Subscribed symbols (stored names) in the order subscribed. */
  private readonly symbols = new Set<string>();
  /** Symbols unsubscribed after the start. */
  private readonly stopped = new Set<string>();

  frame(text: string, _isBinary: boolean, started: boolean): Frame<undefined> {
    const parsed = parseGeminiSubscribe(parseObject(text));
    if ('error' in parsed) return reply(parsed.error.reason, parsed.error.message);
    if (parsed.type === 'unsubscribe') {
      const named = new Set(parsed.symbols.filter((s) => typeof s === 'string').map((s) => s.toUpperCase()));
      for (const s of this.symbols) {
        if (!named.has(s.toUpperCase())) continue;
        if (started) this.stopped.add(s);
        else this.symbols.delete(s);
      }
      return { kind: 'reply', texts: [] };
    }
    if (started)
      return reply(
        'ReplayStarted',
        'the replay has started: subscribe every symbol before it starts (within the settle time of the last subscribe)',
      );
    // As given (a symbol that is not a string is never recorded: refused as Gemini refuses it, `invalid symbol X`).
    const tickers = [...new Set(parsed.symbols.map(valueText))];
    if (tickers.length === 0) return reply('InvalidJson', 'no symbols to subscribe');
    if (tickers.length > MAX_MARKETS_PER_SUBSCRIBE)
      return reply('SubscriptionLimit', `depthgate: at most ${MAX_MARKETS_PER_SUBSCRIBE} symbols per subscribe`);
    return { kind: 'subscribe', request: { tickers, detail: undefined } };
  }

  refuse(_request: SubscribeRequest<undefined>, requested: string, err: AppError): Refusal {
    const text =
      err.code === 'unknown_ticker'
        ? geminiWire.error('InvalidSymbol', `invalid symbol ${requested.slice(0, 64)}`)
        : geminiWire.error('InvalidTimestamp', err.message);
    return { reject: false, texts: [text] };
  }

  accept(_request: SubscribeRequest<undefined>, tickers: string[]): string[] {
    for (const t of tickers) this.symbols.add(t);
    return [];
  }

  held(_request?: SubscribeRequest<undefined>, tickers: string[] = []): number {
    return this.symbols.size - this.stopped.size + tickers.filter((t) => !this.symbols.has(t)).length;
  }

  limited(_request: SubscribeRequest<undefined>, reason: string): string[] {
    return [geminiWire.error('SubscriptionLimit', `depthgate: ${reason}`)];
  }

  streams(): MarketStream[] {
    return [...this.symbols].map((ticker) => ({
      ticker,
      encoder: until(geminiEncoder({ symbol: ticker }), () => this.stopped.has(ticker)),
      wanted: () => !this.stopped.has(ticker),
    }));
  }
}

export const geminiSocket: VenueSocket = {
  platform: 'venue-c',
  exchange: 'venue_c',
  name: 'Gemini',
  create: () => new GeminiProtocol(),
};
