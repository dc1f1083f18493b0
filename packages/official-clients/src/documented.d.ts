// Response shapes from the platforms' published docs, for the methods whose library declares none (`any`) or one
// the docs contradict: where a library and the platform's docs disagree, the docs win (the simulator serves what
// the platform serves). Each names its source; the table entry using it says which case it is. (And one library
// declaration corrected where the library itself never produces it, at the end.)
import type { MarketPrice, PaginationPayload, RewardsConfig } from '@polymarket/clob-client';
import type { MarketInterface } from 'ccxt';
import type { Event, Market, MarketBBO, MarketBook, MarketDetail, Series, SportsTeam, Tag } from 'polymarket-us';

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
/**
 * `POST /prices`: token id → side → price, a JSON number. [V] docs.polymarket.com/api-reference (get market prices,
 * by query and by body): the example answers `{"0xabc…": {"BUY": 0.45}, "0xdef…": {"SELL": 0.52}}`.
 */
export type ClobPrices = Record<string, { BUY?: number; SELL?: number }>;
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

/**
 * A row of `GET /rewards/markets/current` (clob-client's `getCurrentRewards` joins the pages' rows). [V]
 * docs.polymarket.com/api-reference/rewards/get-current-active-rewards-configurations: the market's condition id,
 * its reward thresholds, its configurations (each with an `id`) and its daily rates. clob-client declares
 * `MarketReward`, which adds question, market and event slugs, image and tokens: the docs' rows carry none of them.
 */
export interface ClobCurrentReward {
  condition_id: string;
  rewards_max_spread: number;
  rewards_min_size: number;
  rewards_config: Array<RewardsConfig & { id: number }>;
  sponsored_daily_rate: number;
  sponsors_count: number;
  native_daily_rate: number;
  total_daily_rate: number;
}
export type ClobCurrentRewards = ClobCurrentReward[];

/**
 * `GET /auth/api-keys`: the account's key ids. clob-client declares `{apiKeys: ApiKeyCreds[]}` (key, secret and
 * passphrase). [V] docs.polymarket.com/developers/CLOB/authentication ("Get API Keys: retrieve all API keys
 * associated with a Polygon address") shows no body, but says the secret is never sent and the passphrase never
 * stored, so neither can come back; Polymarket's own rs-clob-client reads `apiKeys` as a list of key ids (UUIDs) [V].
 */
export interface ClobApiKeys {
  apiKeys: string[];
}

// Polymarket US. [V] https://docs.polymarket.us/api-reference (oapi-schemas markets-schema.json, events-schema.json,
// series-schema.json, sports-legacy-schema.json): market, event, tag, series and sports-team ids are strings (the
// SDK declares numbers); a market has no `outcome` (the SDK requires one); an event names its series by
// `seriesSlug` only (no `series` object; the SDK's `series` is optional); the book and the BBO come wrapped in
// `marketData`; a settlement is `{slug, settlement}`; the legacy sports list and the teams' provider ids have
// their own shapes (below).

type WithStringId<T> = Omit<T, 'id'> & { id: string };
export type UsTag = WithStringId<Tag>;
export type UsEventMarket = Omit<Market, 'id' | 'outcome'> & { id: string; outcome?: string };
export type UsMarket = Omit<MarketDetail, 'id' | 'outcome'> & { id: string; outcome?: string };
export type UsEvent = Omit<Event, 'id' | 'markets' | 'tags' | 'series'> & {
  id: string;
  markets?: UsEventMarket[];
  tags?: UsTag[];
  seriesSlug?: string;
};
/** series-schema.json `gateway.series.v1.Series`: `id` a string. */
export type UsSeries = WithStringId<Series>;

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
export interface UsSeriesListResponse {
  series: UsSeries[];
}
export interface UsSeriesResponse {
  series: UsSeries;
}

/**
 * `GET /v1/sports`, in the docs' "Sports Legacy" section (sports-legacy-schema.json `gateway.sports.v1.Sport`): the
 * sport's name, image, resolution, ordering, tags and series (strings), whether it is operational and resolves
 * automatically. The SDK declares `{id, name, slug, leagues?}`, which that schema does not have.
 */
export interface UsSport {
  sport: string;
  image: string;
  resolution: string;
  ordering: string;
  tags: string;
  series: string;
  isOperational: boolean;
  automaticResolution: boolean;
  defaultJerseyImage?: string | null;
}
export interface UsSportsResponse {
  sports: UsSport[];
}
/** sports-legacy-schema.json `gateway.sports.v1.SportsTeamProvider`: `{provider, providerId}` (the SDK: `{provider, id}`). */
export interface UsSportsTeamProvider {
  provider: string;
  providerId: string;
}
/** `gateway.sports.v1.SportsTeam`: `id` an int64 string (the SDK: a number). */
export type UsSportsTeam = Omit<SportsTeam, 'id' | 'providerIds'> & {
  id: string;
  providerIds?: UsSportsTeamProvider[];
};
/** `/v1/sports/teams/provider` (`GetSportsTeamsForProviderResponse`): teams keyed by the requested team id. */
export interface UsSportsTeamsResponse {
  teams: Record<string, UsSportsTeam>;
}

// ccxt. Not a platform's shape: what ccxt's prediction classes return whatever the platform answers
// (PredictionExchange keys markets by `market`; their declared `Market` requires a `symbol` they never set).

export type CcxtPredictionMarket = Omit<MarketInterface, 'symbol'> & { market: string };
export type CcxtPredictionMarkets = CcxtPredictionMarket[];
export type CcxtPredictionMarketMap = Record<string, CcxtPredictionMarket>;
