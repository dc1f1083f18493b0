// Response shapes from the platforms' published docs, for the methods whose library declares none (`any`) or one
// the docs contradict: where a library and the platform's docs disagree, the docs win (the simulator serves what
// the platform serves). Each names its source; the table entry using it says which case it is. (And one library
// declaration corrected where the library itself never produces it, at the end.)
import type { MarketPrice, PaginationPayload } from '@polymarket/clob-client';
import type { MarketInterface } from 'ccxt';
import type { Event, Market, MarketBBO, MarketBook, MarketDetail, Tag } from 'polymarket-us';

// Polymarket CLOB. [V] https://docs.polymarket.com/developers/CLOB/clients/methods-public (clob-client's own docs),
// https://docs.polymarket.com/api-reference (prices, midpoints, spreads, last trade prices, prices history).

export interface ClobMarketToken {
  token_id: string;
  outcome: string;
  price: number;
  winner: boolean;
}

/** `getMarket`: the CLOB market (the fields the docs' `Market` interface and trading depend on). */
export interface ClobMarket {
  condition_id: string;
  question_id: string;
  tokens: ClobMarketToken[];
  minimum_order_size: number;
  minimum_tick_size: number;
  neg_risk: boolean;
  active: boolean;
  closed: boolean;
  accepting_orders: boolean;
}

export interface ClobSimplifiedMarket {
  condition_id: string;
  tokens: ClobMarketToken[];
  active: boolean;
  closed: boolean;
  archived: boolean;
  accepting_orders: boolean;
}

export interface ClobMarketsPage extends PaginationPayload {
  data: ClobMarket[];
}

export interface ClobSimplifiedMarketsPage extends PaginationPayload {
  data: ClobSimplifiedMarket[];
}

export interface ClobMidpoint {
  mid: string;
}
/** `POST /midpoints`: token id → midpoint. */
export type ClobMidpoints = Record<string, string>;
export interface ClobPrice {
  price: string;
}
/** `POST /prices`: token id → side → price. */
export type ClobPrices = Record<string, { BUY?: string; SELL?: string }>;
export interface ClobSpread {
  spread: string;
}
/** `POST /spreads`: token id → spread. */
export type ClobSpreads = Record<string, string>;
export interface ClobLastTradePrice {
  price: string;
  side: string;
}
export type ClobLastTradesPrices = Array<{ token_id: string; price: string; side: string }>;
/** `GET /prices-history` answers `{history: [...]}`; clob-client declares a bare `MarketPrice[]`. */
export interface ClobPricesHistory {
  history: MarketPrice[];
}

// Polymarket US. [V] https://docs.polymarket.us/api-reference (markets-schema.json): market, event and tag ids are
// strings (the SDK declares numbers); a market has no `outcome` (the SDK requires one); the book and the BBO come
// wrapped in `marketData`; a settlement is `{slug, settlement}`.

type WithStringId<T> = Omit<T, 'id'> & { id: string };
export type UsTag = WithStringId<Tag>;
export type UsEventMarket = Omit<Market, 'id' | 'outcome'> & { id: string; outcome?: string };
export type UsMarket = Omit<MarketDetail, 'id' | 'outcome'> & { id: string; outcome?: string };
export type UsEvent = Omit<Event, 'id' | 'markets' | 'tags'> & {
  id: string;
  markets?: UsEventMarket[];
  tags?: UsTag[];
};

export interface UsEventsResponse {
  events: UsEvent[];
}
export interface UsEventResponse {
  event: UsEvent;
}
export interface UsMarketsResponse {
  markets: UsMarket[];
}
export interface UsMarketResponse {
  market: UsMarket;
}
export interface UsSearchResponse {
  events: UsEvent[];
}
export interface UsBookResponse {
  marketData: MarketBook;
}
export interface UsBboResponse {
  marketData: MarketBBO;
}
export interface UsSettlementResponse {
  slug: string;
  settlement: number;
}

// ccxt. Not a platform's shape: what ccxt's prediction classes return whatever the platform answers
// (PredictionExchange keys markets by `market`; their declared `Market` requires a `symbol` they never set).

export type CcxtPredictionMarket = Omit<MarketInterface, 'symbol'> & { market: string };
export type CcxtPredictionMarkets = CcxtPredictionMarket[];
export type CcxtPredictionMarketMap = Record<string, CcxtPredictionMarket>;
