// https://docs.kalshi.com/websockets/orderbook-updates, …/websockets/public-trades, …/websockets/websocket-connection
/**
 * Kalshi's WebSocket messages as the venue writes them, from the strings it puts in them: the venue simulator's feed
 * and the replay service both write Kalshi's channel through these, so the two cannot drift apart. Every value is
 * already the venue's text (dollar prices with 4 decimals, counts with 2); nothing here formats a number.
 */

/** A level as Kalshi lists it: `[price in dollars, contract count]`. */
export type KalshiLevel = readonly [string, string];

export interface KalshiSnapshot {
  ticker: string;
  /** Kalshi's market id (a UUID); undefined leaves the field out. */
  marketId: string | undefined;
  /** YES bids and NO bids, ascending. */
  yes: readonly KalshiLevel[];
  no: readonly KalshiLevel[];
  /** The level fields' names: the fixed-point ones (`yes_dollars_fp`), or `yes_dollars`. */
  fields: 'fp' | 'dollars';
}

export interface KalshiTradeFields {
  id: string;
  ticker: string;
  yesPrice: string;
  noPrice: string;
  count: string;
  /** The taker bought YES (lifted a YES ask); else bought NO (hit a YES bid). */
  takerYes: boolean;
  /** The trade's time, epoch ms. */
  tsMs: number;
}

/** RFC 3339 with six fractional digits, Kalshi's feed `ts`: `2026-03-07T15:00:00.123000Z`. */
export function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

/** A Kalshi WebSocket error: its code and text. */
export type KalshiWsError = readonly [code: number, text: string];

/**
 * Kalshi's WebSocket error codes [3P] (docs.kalshi.com websockets reference, "Error codes", as client libraries list
 * them): one table for every place that speaks Kalshi's protocol — the simulator's feed, the gateway's socket and the
 * replay's — so that none answers a code of its own.
 */
export const KALSHI_WS_ERRORS = {
  unprocessable: [1, 'Unable to process message'],
  params: [2, 'Params required'],
  channels: [3, 'Channels required'],
  sids: [4, 'Subscription IDs required'],
  command: [5, 'Unknown command'],
  sid: [7, 'Unknown subscription ID'],
  channel: [8, 'Unknown channel name'],
  channelError: [10, 'Channel error'],
  parameter: [11, 'Invalid parameter'],
  oneSid: [12, 'Exactly one subscription ID is required'],
  action: [13, 'Unsupported action'],
  market: [14, 'Market Ticker required'],
  actionRequired: [15, 'Action required'],
  marketNotFound: [16, 'Market not found'],
  marketLimit: [26, 'Subscription market limit exceeded'],
} as const satisfies Record<string, KalshiWsError>;

export const kalshiWire = {
  /** `orderbook_snapshot` [V]: both sides' levels under the fields the feed uses. */
  snapshot(sid: number, seq: number, s: KalshiSnapshot): string {
    const [yes, no] = s.fields === 'fp' ? ['yes_dollars_fp', 'no_dollars_fp'] : ['yes_dollars', 'no_dollars'];
    const msg = { market_ticker: s.ticker, market_id: s.marketId, [yes]: s.yes, [no]: s.no };
    return `{"type":"orderbook_snapshot","sid":${sid},"seq":${seq},"msg":${JSON.stringify(msg)}}`;
  },

  /**
   * The `msg` of a market's `orderbook_delta`s at one moment [V]: `(price, delta, side) → msg`, the fixed parts
   * written once (a change of the book is one message per level).
   */
  deltaBodies(
    ticker: string,
    marketId: string,
    tsMs: number,
  ): (price: string, delta: string, side: 'yes' | 'no') => string {
    const head = `{"market_ticker":${JSON.stringify(ticker)},"market_id":${JSON.stringify(marketId)},"price_dollars":"`;
    const tail = `,"ts":"${isoMicros(tsMs)}","ts_ms":${tsMs}}`;
    return (price, delta, side) => `${head}${price}","delta_fp":"${delta}","side":"${side}"${tail}`;
  },

  delta(sid: number, seq: number, body: string): string {
    return `{"type":"orderbook_delta","sid":${sid},"seq":${seq},"msg":${body}}`;
  },

  /** The `trade` channel's `msg` [V] (current schema): `market_ticker`, `ts` (s, deprecated) and `ts_ms`. */
  tradeBody(t: KalshiTradeFields): string {
    const side = t.takerYes ? 'yes' : 'no';
    return JSON.stringify({
      trade_id: t.id,
      market_ticker: t.ticker,
      yes_price_dollars: t.yesPrice,
      no_price_dollars: t.noPrice,
      count_fp: t.count,
      taker_side: side,
      taker_outcome_side: side,
      // [V] the YES leg: a taker buying YES lifts the ask (`bid`), one buying NO hits the YES bid (`ask`).
      taker_book_side: t.takerYes ? 'bid' : 'ask',
      is_block_trade: false,
      ts: Math.floor(t.tsMs / 1000),
      ts_ms: t.tsMs,
    });
  },

  /** A `trade` message: no `seq` (the schema defines none on trades [V]). */
  trade(sid: number, body: string): string {
    return `{"type":"trade","sid":${sid},"msg":${body}}`;
  },

  subscribed(id: unknown, channel: string, sid: number): string {
    return JSON.stringify({ id, type: 'subscribed', msg: { channel, sid } });
  },

  unsubscribed(id: unknown, sid: number, seq: number): string {
    return JSON.stringify({ id, sid, seq, type: 'unsubscribed' });
  },

  /** The answer to `list_subscriptions`: every subscription the connection holds, `{"channel","sid"}` each. */
  subscriptions(id: unknown, held: readonly { channel: string; sid: number }[]): string {
    return JSON.stringify({ id, type: 'ok', msg: held.map(({ channel, sid }) => ({ channel, sid })) });
  },

  /** The answer to `update_subscription` [V]: the subscription's markets, with its current `seq`. */
  ok(id: unknown, sid: number, seq: number, tickers: readonly string[]): string {
    return JSON.stringify({ id, sid, seq, type: 'ok', msg: { market_tickers: tickers } });
  },

  /**
   * `{"id","type":"error","msg":{"code","msg"}}` [V]: an error of KALSHI_WS_ERRORS answering command `id` (null when
   * it had none), its text followed by `: detail`.
   */
  refusal(id: unknown, [code, text]: KalshiWsError, detail?: string): string {
    return JSON.stringify({ id: id ?? null, type: 'error', msg: { code, msg: detail ? `${text}: ${detail}` : text } });
  },
};
