// kalshi-typescript 3.30.0 (Kalshi's generated OpenAPI client): its 78 GET operations, every class.
import { createRequire } from 'node:module';
import type { AxiosResponse } from 'axios';
import * as kalshi from 'kalshi-typescript';
import type { Catalogue } from '../catalogue.ts';
import { at, CHANGES_STATE, need, nonEmpty, type Access, type LibrarySpec, type MethodSpec } from '../harness.ts';

/** kalshi-typescript's API classes (tables.test.ts checks that the package exports no other). */
export const KALSHI_API_NAMES = [
  'AccountApi',
  'ApiKeysApi',
  'CommunicationsApi',
  'EventsApi',
  'ExchangeApi',
  'FcmApi',
  'HistoricalApi',
  'IncentiveProgramsApi',
  'LiveDataApi',
  'MarketApi',
  'MilestoneApi',
  'MultivariateApi',
  'OrderGroupsApi',
  'OrdersApi',
  'PortfolioApi',
  'SearchApi',
  'StructuredTargetsApi',
] as const;

type ApiName = (typeof KALSHI_API_NAMES)[number];
export const KALSHI_API_CLASSES = Object.fromEntries(KALSHI_API_NAMES.map((n) => [n, kalshi[n]])) as {
  [K in ApiName]: (typeof kalshi)[K];
};

export type KalshiApis = { [K in keyof typeof KALSHI_API_CLASSES]: InstanceType<(typeof KALSHI_API_CLASSES)[K]> };

type K = Catalogue['kalshi'];

/** The axios the library itself loads (its CommonJS build), for an instance of the library's own. */
type LibraryAxios = NonNullable<ConstructorParameters<typeof kalshi.MarketApi>[2]>;
const axios = createRequire(import.meta.url)('axios') as { create(): LibraryAxios };

/** One operation: `Class.method`, called with the catalogue; the value checked is the response body. */
function op<C extends keyof KalshiApis>(
  cls: C,
  method: string,
  access: Access,
  call: (api: KalshiApis[C], k: K, catalogue: Catalogue) => Promise<AxiosResponse>,
  more: Pick<MethodSpec<KalshiApis>, 'expect' | 'absent'> = {},
): MethodSpec<KalshiApis> {
  return {
    name: `${cls}.${method}`,
    access,
    call: async (apis, catalogue) => (await call(apis[cls], catalogue.kalshi, catalogue)).data,
    ...more,
  };
}

/** A placeholder id for an account object the simulator's account does not have (`absent`). */
const NONE = 'none-in-this-account';

const HOUR = 60;

export const KALSHI_METHODS: readonly MethodSpec<KalshiApis>[] = [
  op('AccountApi', 'getAccountApiLimits', 'private', (a) => a.getAccountApiLimits()),
  op('AccountApi', 'getAccountApiUsageLevelVolumeProgress', 'private', (a) =>
    a.getAccountApiUsageLevelVolumeProgress(),
  ),
  op('AccountApi', 'getAccountEndpointCosts', 'public', (a) => a.getAccountEndpointCosts()),
  op('ApiKeysApi', 'getApiKeys', 'private', (a) => a.getApiKeys()),
  op('CommunicationsApi', 'getBlockTradeProposals', 'private', (a, k) =>
    a.getBlockTradeProposals(undefined, k.ticker, 10),
  ),
  op('CommunicationsApi', 'getCommunicationsID', 'private', (a) => a.getCommunicationsID()),
  op('CommunicationsApi', 'getQuote', 'private', (a, k) => a.getQuote(k.quoteId ?? NONE), {
    absent: (c) => !c.kalshi.quoteId,
  }),
  op('CommunicationsApi', 'getQuotes', 'private', (a) => a.getQuotes(undefined, undefined, undefined, 10)),
  op('CommunicationsApi', 'getRFQ', 'private', (a, k) => a.getRFQ(k.rfqId ?? NONE), { absent: (c) => !c.kalshi.rfqId }),
  op('CommunicationsApi', 'getRFQQuote', 'private', (a, k) => a.getRFQQuote(k.rfqId ?? NONE, k.quoteId ?? NONE), {
    absent: (c) => !c.kalshi.rfqId || !c.kalshi.quoteId,
  }),
  op('CommunicationsApi', 'getRFQs', 'private', (a) => a.getRFQs(undefined, undefined, undefined, undefined, 10)),
  op('EventsApi', 'getEvent', 'public', (a, k) => a.getEvent(k.eventTicker, true), { expect: nonEmpty('markets') }),
  op('EventsApi', 'getEventFeeChanges', 'public', (a, k) => a.getEventFeeChanges(k.eventTicker, 10)),
  op('EventsApi', 'getEventForecastPercentilesHistory', 'private', (a, k, c) =>
    a.getEventForecastPercentilesHistory(
      k.eventTicker,
      k.seriesTicker,
      [10, 50, 90],
      c.window.startTs,
      c.window.endTs,
      HOUR,
    ),
  ),
  op('EventsApi', 'getEventMetadata', 'public', (a, k) => a.getEventMetadata(k.eventTicker)),
  op('EventsApi', 'getEvents', 'public', (a) => a.getEvents(50, undefined, true), { expect: nonEmpty('events') }),
  op(
    'EventsApi',
    'getMarketCandlesticksByEvent',
    'public',
    (a, k, c) => a.getMarketCandlesticksByEvent(k.eventTicker, k.seriesTicker, c.window.startTs, c.window.endTs, HOUR),
    { expect: nonEmpty('market_tickers', 'market_candlesticks') },
  ),
  op('EventsApi', 'getMultivariateEvents', 'public', (a) => a.getMultivariateEvents(10)),
  op('ExchangeApi', 'getExchangeSchedule', 'public', (a) => a.getExchangeSchedule(), {
    expect: nonEmpty('schedule.standard_hours'),
  }),
  op('ExchangeApi', 'getExchangeStatus', 'public', (a) => a.getExchangeStatus()),
  op('ExchangeApi', 'getSeriesFeeChanges', 'public', (a, k) => a.getSeriesFeeChanges(k.seriesTicker, true)),
  op('ExchangeApi', 'getUserDataTimestamp', 'public', (a) => a.getUserDataTimestamp()),
  op(
    'FcmApi',
    'getFCMEventContractDailyCap',
    'private',
    (a, k) => a.getFCMEventContractDailyCap(k.subtraderId ?? NONE),
    {
      absent: (c) => !c.kalshi.subtraderId,
    },
  ),
  op('FcmApi', 'getFCMOrders', 'private', (a, k) =>
    a.getFCMOrders(k.subtraderId, undefined, undefined, undefined, k.ticker),
  ),
  op('FcmApi', 'getFCMPositions', 'private', (a, k) => a.getFCMPositions(k.subtraderId ?? NONE), {
    absent: (c) => !c.kalshi.subtraderId,
  }),
  op('FcmApi', 'listFCMSubtraders', 'private', (a) => a.listFCMSubtraders()),
  op('HistoricalApi', 'getFillsHistorical', 'private', (a) =>
    a.getFillsHistorical(undefined, undefined, undefined, 10),
  ),
  op('HistoricalApi', 'getHistoricalCutoff', 'public', (a) => a.getHistoricalCutoff()),
  op('HistoricalApi', 'getHistoricalMarket', 'public', (a, k) =>
    a.getHistoricalMarket(need(k.historicalTicker, 'historical market')),
  ),
  op('HistoricalApi', 'getHistoricalMarkets', 'public', (a) => a.getHistoricalMarkets(10), {
    expect: nonEmpty('markets'),
  }),
  op('HistoricalApi', 'getHistoricalOrders', 'private', (a) =>
    a.getHistoricalOrders(undefined, undefined, undefined, 10),
  ),
  op('HistoricalApi', 'getHistoricalPositions', 'private', (a) =>
    a.getHistoricalPositions(undefined, undefined, undefined, 10),
  ),
  op('HistoricalApi', 'getMarketCandlesticksHistorical', 'public', (a, k, c) =>
    a.getMarketCandlesticksHistorical(
      need(k.historicalTicker, 'historical market'),
      c.window.startTs,
      c.window.endTs,
      HOUR,
    ),
  ),
  op(
    'HistoricalApi',
    'getTradesHistorical',
    'public',
    (a) => a.getTradesHistorical(undefined, undefined, undefined, 10),
    {
      expect: nonEmpty('trades'),
    },
  ),
  op('IncentiveProgramsApi', 'getIncentivePrograms', 'public', (a) => a.getIncentivePrograms('all', 'all'), {
    expect: nonEmpty('incentive_programs'),
  }),
  // [V] event-keyed live data "such as crypto price charts, commodity price timeseries, and weather observations": not
  // every event has some (the first event's, a crypto one here, has none in the simulator); a game's event does.
  op('LiveDataApi', 'getEventLiveData', 'public', (a, k) =>
    a.getEventLiveData(need(k.liveEventTicker, 'event with live data')),
  ),
  op('LiveDataApi', 'getGameStats', 'public', (a, k) => a.getGameStats(need(k.milestone, 'milestone').id)),
  op('LiveDataApi', 'getLiveData', 'public', (a, k) => {
    const milestone = need(k.milestone, 'milestone');
    return a.getLiveData(milestone.type, milestone.id, true);
  }),
  op('LiveDataApi', 'getLiveDataByMilestone', 'public', (a, k) =>
    a.getLiveDataByMilestone(need(k.milestone, 'milestone').id, true),
  ),
  op('LiveDataApi', 'getLiveDatas', 'public', (a, k) => a.getLiveDatas([need(k.milestone, 'milestone').id]), {
    expect: nonEmpty('live_datas'),
  }),
  op('LiveDataApi', 'getWeatherIndex', 'public', (a, k) => a.getWeatherIndex(k.city, undefined, undefined, 3600)),
  op('LiveDataApi', 'getWeatherIndexCalibrations', 'public', (a, k) => a.getWeatherIndexCalibrations(k.city)),
  op(
    'MarketApi',
    'batchGetMarketCandlesticks',
    'public',
    (a, k, c) => a.batchGetMarketCandlesticks(`${k.ticker},${k.ticker2}`, c.window.startTs, c.window.endTs, HOUR),
    { expect: nonEmpty('markets') },
  ),
  op('MarketApi', 'getMarket', 'public', (a, k) => a.getMarket(k.ticker)),
  op(
    'MarketApi',
    'getMarketCandlesticks',
    'public',
    (a, k, c) => a.getMarketCandlesticks(k.seriesTicker, k.ticker, c.window.startTs, c.window.endTs, HOUR),
    { expect: nonEmpty('candlesticks') },
  ),
  op('MarketApi', 'getMarketOrderbook', 'private', (a, k) => a.getMarketOrderbook(k.ticker, 10)),
  op('MarketApi', 'getMarketOrderbooks', 'private', (a, k) => a.getMarketOrderbooks([k.ticker, k.ticker2]), {
    // The library sends `tickers=A&tickers=B` (repeated); both books must come back.
    expect: (value, c) => {
      const books = at(value, 'orderbooks');
      const got = Array.isArray(books) ? books.map((b) => at(b, 'ticker')) : [];
      const want = [c.kalshi.ticker, c.kalshi.ticker2];
      return want.every((t) => got.includes(t))
        ? []
        : [`orderbooks for ${got.join(', ')}; asked for ${want.join(', ')}`];
    },
  }),
  op('MarketApi', 'getMarkets', 'public', (a) => a.getMarkets(100), { expect: nonEmpty('markets') }),
  op('MarketApi', 'getSeries', 'public', (a, k) => a.getSeries(k.seriesTicker, true)),
  op('MarketApi', 'getSeriesList', 'public', (a) => a.getSeriesList(), { expect: nonEmpty('series') }),
  op('MarketApi', 'getTrades', 'public', (a, k) => a.getTrades(20, undefined, k.ticker), {
    expect: nonEmpty('trades'),
  }),
  op('MilestoneApi', 'getMilestone', 'public', (a, k) => a.getMilestone(need(k.milestone, 'milestone').id)),
  op('MilestoneApi', 'getMilestones', 'public', (a) => a.getMilestones(10), { expect: nonEmpty('milestones') }),
  op('MultivariateApi', 'getMultivariateEventCollection', 'public', (a, k) =>
    a.getMultivariateEventCollection(need(k.collectionTicker, 'multivariate event collection')),
  ),
  op('MultivariateApi', 'getMultivariateEventCollections', 'public', (a) => a.getMultivariateEventCollections(), {
    expect: nonEmpty('multivariate_contracts'),
  }),
  op('OrderGroupsApi', 'getOrderGroup', 'private', (a, k) => a.getOrderGroup(k.orderGroupId ?? NONE), {
    absent: (c) => !c.kalshi.orderGroupId,
  }),
  op('OrderGroupsApi', 'getOrderGroups', 'private', (a) => a.getOrderGroups()),
  op('OrdersApi', 'getOrder', 'private', (a, k) => a.getOrder(k.orderId ?? NONE), { absent: (c) => !c.kalshi.orderId }),
  op('OrdersApi', 'getOrderQueuePosition', 'private', (a, k) => a.getOrderQueuePosition(k.restingOrderId ?? NONE), {
    absent: (c) => !c.kalshi.restingOrderId,
  }),
  op('OrdersApi', 'getOrderQueuePositions', 'private', (a, k) => a.getOrderQueuePositions(`${k.ticker},${k.ticker2}`), {
    // The account's resting order is on the first of the two markets.
    expect: nonEmpty('queue_positions'),
  }),
  op('OrdersApi', 'getOrders', 'private', (a) =>
    a.getOrders(undefined, undefined, undefined, undefined, undefined, 10),
  ),
  op('PortfolioApi', 'getBalance', 'private', (a) => a.getBalance()),
  op('PortfolioApi', 'getDeposits', 'private', (a) => a.getDeposits(10)),
  op('PortfolioApi', 'getFills', 'private', (a) => a.getFills(undefined, undefined, undefined, undefined, 10)),
  op(
    'PortfolioApi',
    'getIntraExchangeInstanceTransfer',
    'private',
    (a, k) => a.getIntraExchangeInstanceTransfer(k.transferId ?? NONE),
    { absent: (c) => !c.kalshi.transferId },
  ),
  op('PortfolioApi', 'getIntraExchangeInstanceTransfers', 'private', (a) => a.getIntraExchangeInstanceTransfers(10)),
  op('PortfolioApi', 'getPortfolioRestingOrderTotalValue', 'private', (a) => a.getPortfolioRestingOrderTotalValue()),
  op('PortfolioApi', 'getPositions', 'private', (a) => a.getPositions(undefined, 10)),
  op('PortfolioApi', 'getSettlements', 'private', (a) => a.getSettlements(10)),
  op('PortfolioApi', 'getSubaccountBalances', 'private', (a) => a.getSubaccountBalances()),
  op('PortfolioApi', 'getSubaccountNetting', 'private', (a) => a.getSubaccountNetting()),
  op('PortfolioApi', 'getSubaccountTransfers', 'private', (a) => a.getSubaccountTransfers(10)),
  op('PortfolioApi', 'getTargetBalanceAllocation', 'private', (a) => a.getTargetBalanceAllocation()),
  op('PortfolioApi', 'getWithdrawals', 'private', (a) => a.getWithdrawals(10)),
  op('SearchApi', 'getFiltersForSports', 'public', (a) => a.getFiltersForSports(), {
    expect: nonEmpty('filters_by_sports', 'sport_ordering'),
  }),
  op('SearchApi', 'getTagsForSeriesCategories', 'public', (a) => a.getTagsForSeriesCategories(), {
    expect: nonEmpty('tags_by_categories'),
  }),
  op('StructuredTargetsApi', 'getStructuredTarget', 'public', (a, k) =>
    a.getStructuredTarget(need(k.structuredTargetId, 'structured target')),
  ),
  op('StructuredTargetsApi', 'getStructuredTargets', 'public', (a) => a.getStructuredTargets(), {
    expect: nonEmpty('structured_targets'),
  }),
];

/** Operations of the API classes that change something (POST, PUT, DELETE): not called. [V] the generated api/*.ts */
export const KALSHI_MUTATING = [
  'AccountApi.upgradeAccountApiUsageLevel',
  'ApiKeysApi.createApiKey',
  'ApiKeysApi.deleteApiKey',
  'ApiKeysApi.generateApiKey',
  'CommunicationsApi.acceptBlockTradeProposal',
  'CommunicationsApi.acceptQuote',
  'CommunicationsApi.acceptRFQQuote',
  'CommunicationsApi.confirmQuote',
  'CommunicationsApi.confirmRFQQuote',
  'CommunicationsApi.createQuote',
  'CommunicationsApi.createRFQ',
  'CommunicationsApi.deleteQuote',
  'CommunicationsApi.deleteRFQ',
  'CommunicationsApi.deleteRFQQuote',
  'CommunicationsApi.proposeBlockTrade',
  'FcmApi.createFCMSubtrader',
  'FcmApi.deleteFCMEventContractDailyCap',
  'FcmApi.updateFCMEventContractDailyCap',
  'MultivariateApi.createMarketInMultivariateEventCollection',
  'OrderGroupsApi.createOrderGroup',
  'OrderGroupsApi.deleteOrderGroup',
  'OrderGroupsApi.resetOrderGroup',
  'OrderGroupsApi.triggerOrderGroup',
  'OrderGroupsApi.updateOrderGroupLimit',
  'OrdersApi.amendOrderV2',
  'OrdersApi.batchCancelOrdersV2',
  'OrdersApi.batchCreateOrdersV2',
  'OrdersApi.cancelAllOrders',
  'OrdersApi.cancelOrderV2',
  'OrdersApi.createOrderV2',
  'OrdersApi.decreaseOrderV2',
  'PortfolioApi.applySubaccountTransfer',
  'PortfolioApi.createSubaccount',
  'PortfolioApi.intraExchangeInstanceTransfer',
  'PortfolioApi.setTargetBalanceAllocation',
  'PortfolioApi.updateSubaccountNetting',
] as const;

export const kalshiTypescript: LibrarySpec<KalshiApis> = {
  label: 'kalshi-typescript',
  pkg: 'kalshi-typescript@3.30.0',
  declared(name) {
    const [cls, method] = name.split('.');
    return { module: 'kalshi-typescript', path: [cls ?? '', `${method ?? ''}()`, 'data'] };
  },
  client(mode, env) {
    const configuration =
      mode === 'direct'
        ? new kalshi.Configuration({
            basePath: env.sim.urls['venue-b'],
            apiKey: env.sim.credentials.kalshi.accessKey,
            privateKeyPem: env.sim.credentials.kalshi.privateKeyPem,
          })
        : // Through the gateway: its path prefix, the depthgate key as a header, no Kalshi credentials at all.
          new kalshi.Configuration({
            basePath: `${env.gateway.url}/api/v1/venue-b`,
            baseOptions: { headers: { 'X-API-Key': env.gateway.key } },
          });
    // One axios instance per configuration: the library registers its signing interceptor on the instance it is
    // given (the process-wide default one otherwise), so a client with credentials would sign for every other.
    const http = axios.create();
    return Object.fromEntries(
      Object.entries(KALSHI_API_CLASSES).map(([name, Api]) => [name, new Api(configuration, undefined, http)]),
    ) as KalshiApis;
  },
  methods: KALSHI_METHODS,
  notCalled: Object.fromEntries(KALSHI_MUTATING.map((m) => [m, CHANGES_STATE])),
};
