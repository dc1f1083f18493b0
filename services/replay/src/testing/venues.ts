/**
 * The recorded exchanges as the replay's tests take them: each one's price and size grid (for `randomWindow`), its
 * trade ids, its encoder, its reference client (clients.ts) and how that client keys a recorded trade. Shared by the
 * engine's unit tests and the service's integration tests.
 */
import { formatDecimal, parseDecimal } from '@depthgate/feeds';
import type { ExchangeKey } from '@depthgate/platforms';
import type { RecordedTrade } from '../engine/types';
import type { VenueEncoder } from '../engine/replay';
import { clobEncoder } from '../engine/venue-a-clob';
import { pmUsEncoder } from '../engine/venue-a-us';
import { kalshiEncoder } from '../engine/venue-b';
import { geminiEncoder } from '../engine/venue-c';
import { coinbaseEncoder } from '../engine/venue-d';
import { ClobClient, CoinbaseClient, GeminiClient, KalshiClient, PmUsClient, type ReferenceClient } from './clients';
import type { Grid, HistoryOptions } from './history';

export const canon = (text: string) => formatDecimal(parseDecimal(text));

export interface Venue {
  name: string;
  exchange: ExchangeKey;
  grid: Grid;
  tradeId?: HistoryOptions['tradeId'];
  encoder(): VenueEncoder;
  /** The venue's reference client; `ticker`: the replayed market's (the CLOB's asset id). */
  client(ticker?: string): ReferenceClient;
  /** A recorded trade as the client keys it. */
  tradeKey(t: RecordedTrade): string;
  /** How a client of the venue's socket uses the WebSocket replay (absent: not replayed over WebSocket yet). */
  socket?: VenueSocketClient;
}

/** A venue's WebSocket replay as a client sees it: where, what it sends to subscribe, which answers are acks. */
export interface VenueSocketClient {
  /** `/ws/replay/v1/{platform}`. */
  platform: string;
  /** The frames that subscribe `ticker` to its book and trades (JSON values, or texts sent as they are). */
  subscribe(ticker: string): unknown[];
  /** Whether a received text is a subscription answer, not a replayed message. */
  isAck(text: string): boolean;
}

const plain = (t: RecordedTrade) => `${t.ts}|${canon(t.price)}|${canon(t.size)}|${t.side}`;
const withId = (t: RecordedTrade) => `${plain(t)}|${t.trade_id}`;
const hex = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
export const binary: Grid = {
  bid: { lo: 1, hi: 49, places: 2 },
  ask: { lo: 51, hi: 99, places: 2 },
  size: { lo: 1, hi: 50_000, places: 2 },
};

export const VENUES: Venue[] = [
  {
    name: 'venue_b (Kalshi)',
    exchange: 'venue_b',
    grid: binary,
    tradeId: (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    encoder: () => kalshiEncoder({ ticker: 'T', book: { sid: 2, seq: 0 }, tradeSid: 1 }),
    client: () => new KalshiClient(),
    tradeKey: withId,
    socket: {
      platform: 'kalshi',
      subscribe: (ticker) => [
        { id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'trade'], market_ticker: ticker } },
      ],
      isAck: (text) => text.startsWith('{"id":1,"type":"subscribed"'),
    },
  },
  {
    name: 'venue_c (Gemini)',
    exchange: 'venue_c',
    grid: {
      bid: { lo: 900_000, hi: 999_999, places: 2 },
      ask: { lo: 1_000_000, hi: 1_100_000, places: 2 },
      size: { lo: 1, hi: 5_000_000_000, places: 8 },
    },
    tradeId: (n) => String(2_840_140_800_042_677n * 1000n + BigInt(n)),
    encoder: () => geminiEncoder({ symbol: 'T', priceDecimals: 2, quantityDecimals: 8 }),
    client: () => new GeminiClient(),
    tradeKey: withId,
  },
  {
    name: 'venue_a_us (Polymarket US)',
    exchange: 'venue_a_us',
    grid: {
      bid: { lo: 1, hi: 499, places: 3 },
      ask: { lo: 501, hi: 999, places: 3 },
      size: { lo: 1, hi: 100_000, places: 2 },
    },
    encoder: () => pmUsEncoder({ slug: 'T', requestId: 'md', tradeRequestId: 'tr' }),
    client: () => new PmUsClient(),
    tradeKey: plain,
  },
  {
    name: 'venue_a_clob (Polymarket CLOB)',
    exchange: 'venue_a_clob',
    grid: binary,
    tradeId: (n) => hex(n),
    encoder: () => clobEncoder({ asset: 'T', market: '0xabc' }),
    client: (ticker = 'T') => new ClobClient(ticker),
    tradeKey: plain,
  },
  {
    name: 'venue_d (Coinbase)',
    exchange: 'venue_d',
    grid: {
      bid: { lo: 6_000_000, hi: 6_499_999, places: 2 },
      ask: { lo: 6_500_000, hi: 7_000_000, places: 2 },
      size: { lo: 1, hi: 900_000_000, places: 8 },
    },
    encoder: () => coinbaseEncoder({ product: 'T', priceDecimals: 2, sizeDecimals: 8 }),
    client: () => new CoinbaseClient(),
    tradeKey: withId,
  },
];
