// The arguments the tables call methods with: real tickers, ids, slugs and token ids from the simulator's own
// catalogue, read over its REST API (signed with its test credentials where the platform requires it), so each call
// asks for something that exists.
import { signers, type Simulator } from '@depthgate/venue-sim';

export interface Catalogue {
  kalshi: {
    /** Two markets of one event, and that event and its series. */
    ticker: string;
    ticker2: string;
    eventTicker: string;
    seriesTicker: string;
    milestone?: { id: string; type: string };
    /** An event with live data: the game of that milestone (the simulator's live data are games'). */
    liveEventTicker?: string;
    structuredTargetId?: string;
    collectionTicker?: string;
    historicalTicker?: string;
    /** Objects of the simulator's account, when it has any (absent: a by-id read expects the 404). */
    orderId?: string;
    /** An order of the account resting on a book (it has a queue position). */
    restingOrderId?: string;
    orderGroupId?: string;
    rfqId?: string;
    quoteId?: string;
    transferId?: string;
    subtraderId?: string;
    /** A weather-index city id: the docs' own example (`miami`). [V] docs.kalshi.com get-weather-index */
    city: string;
  };
  /** Polymarket: a Gamma market with its CLOB tokens and condition id, its event. */
  polymarket: {
    /** The simulator's account (its wallet address). */
    address: string;
    conditionId: string;
    yesToken: string;
    noToken: string;
    marketSlug: string;
    eventId: string;
    eventSlug: string;
    orderId?: string;
    /** The account's read-only API key (to validate), and its open RFQ request (to read the best quote of). */
    readonlyKey?: string;
    rfqRequestId?: string;
  };
  polymarketUs: {
    slug: string;
    /** A market that has settled (it has a settlement). */
    settledSlug?: string;
    marketId: string;
    eventId: string;
    eventSlug: string;
    seriesId: string;
    /** A word of the event's title, to search for; the league of its series. */
    searchText: string;
    league: string;
    orderId?: string;
  };
  /** Gemini and Coinbase spot pairs, as the platform names them and as ccxt's unified symbol. */
  gemini: { symbol: string; unified: string };
  coinbase: { productId: string; unified: string };
  /** A fixed window for candles and histories: the last six hours, in seconds. */
  window: { startTs: number; endTs: number };
  /** A day for reward queries (YYYY-MM-DD, UTC): today. */
  day: string;
}

type Json = Record<string, unknown>;

export async function readCatalogue(sim: Simulator, now = Date.now()): Promise<Catalogue> {
  const get = async (host: keyof Simulator['urls'], path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${sim.urls[host]}${path}`, { headers });
    if (!res.ok) return undefined;
    return (await res.json()) as unknown;
  };
  const kalshiBase = new URL(sim.urls['venue-b']).pathname;
  const kalshiSigned = (path: string) =>
    get('venue-b', path, signers.kalshiHeaders(sim.credentials.kalshi, 'GET', `${kalshiBase}${path}`));
  const first = (value: unknown, list: string, field: string): string | undefined => {
    const items = value && typeof value === 'object' ? (value as Json)[list] : undefined;
    const item = Array.isArray(items) ? (items[0] as Json | undefined) : undefined;
    const found = item?.[field];
    return typeof found === 'string' || typeof found === 'number' ? String(found) : undefined;
  };

  // Kalshi: the first event with two markets.
  const markets = ((await get('venue-b', '/markets?limit=200')) as { markets?: Json[] } | undefined)?.markets ?? [];
  const byEvent = new Map<string, string[]>();
  for (const m of markets)
    byEvent.set(String(m.event_ticker), [...(byEvent.get(String(m.event_ticker)) ?? []), String(m.ticker)]);
  const [eventTicker, tickers] = [...byEvent].find(([, list]) => list.length >= 2) ?? [];
  if (!eventTicker || !tickers) throw new Error('the simulator lists no Kalshi event with two markets');
  const event = (await get('venue-b', `/events/${eventTicker}`)) as { event?: Json } | undefined;
  const seriesTicker = String(event?.event?.series_ticker ?? eventTicker.split('-')[0]);
  const milestones = (await get('venue-b', '/milestones?limit=10')) as { milestones?: Json[] } | undefined;
  const milestone = milestones?.milestones?.[0];

  // Polymarket: a Gamma market with CLOB tokens (the CLOB books are the YES tokens').
  const gamma = ((await get('venue-a', '/markets?limit=50')) as Json[] | undefined) ?? [];
  const market = gamma.find((m) => typeof m.clobTokenIds === 'string' && typeof m.conditionId === 'string');
  if (!market) throw new Error('the simulator lists no Polymarket market with CLOB tokens');
  const [yesToken, noToken] = JSON.parse(String(market.clobTokenIds)) as string[];
  const gammaEvents = ((await get('venue-a', `/events?limit=50`)) as Json[] | undefined) ?? [];
  const gammaEvent =
    gammaEvents.find((e) => Array.isArray(e.markets) && (e.markets as Json[]).some((m) => m.id === market.id)) ??
    gammaEvents[0];
  const clobSigned = (path: string) =>
    get('venue-a-clob', path, signers.clobHeaders(sim.credentials.polymarketClob, 'GET', path));
  const clobOrders = await clobSigned('/data/orders');
  const readonlyKeys = await clobSigned('/auth/readonly-api-keys');

  // Polymarket US.
  const usMarket = ((await get('venue-a-us', '/v1/markets?limit=1')) as { markets?: Json[] } | undefined)?.markets?.[0];
  const usEvent = ((await get('venue-a-us', '/v1/events?limit=1')) as { events?: Json[] } | undefined)?.events?.[0];
  const usSeries = ((await get('venue-a-us', '/v1/series')) as { series?: Json[] } | undefined)?.series?.[0];
  const usSettled = first(await get('venue-a-us', '/v1/markets?closed=true&limit=1'), 'markets', 'slug');
  if (!usMarket || !usEvent || !usSeries)
    throw new Error('the simulator lists no Polymarket US market, event or series');
  const usOrders = await get(
    'venue-a-us/auth',
    '/v1/orders/open',
    signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/orders/open'),
  );

  // Spot pairs: the first of each platform's list that is a plain currency pair.
  const symbols = ((await get('venue-c', '/v1/symbols')) as string[] | undefined) ?? [];
  const geminiSymbol = symbols.find((s) => /^[a-z]{3,5}usd$/.test(s)) ?? 'btcusd';
  const products = ((await get('venue-d', '/products')) as Json[] | undefined) ?? [];
  const productId = String(products.find((p) => typeof p.id === 'string')?.id ?? 'BTC-USD');

  const endTs = Math.floor(now / 1000);
  return {
    kalshi: {
      ticker: tickers[0] ?? '',
      ticker2: tickers[1] ?? '',
      eventTicker,
      seriesTicker,
      milestone: milestone ? { id: String(milestone.id), type: String(milestone.type) } : undefined,
      liveEventTicker: Array.isArray(milestone?.primary_event_tickers)
        ? (milestone.primary_event_tickers as unknown[]).map(String)[0]
        : undefined,
      structuredTargetId: first(await get('venue-b', '/structured_targets'), 'structured_targets', 'id'),
      collectionTicker: first(
        await get('venue-b', '/multivariate_event_collections'),
        'multivariate_contracts',
        'collection_ticker',
      ),
      historicalTicker: first(await get('venue-b', '/historical/markets?limit=1'), 'markets', 'ticker'),
      orderId: first(await kalshiSigned('/portfolio/orders'), 'orders', 'order_id'),
      restingOrderId: first(await kalshiSigned('/portfolio/orders?status=resting'), 'orders', 'order_id'),
      orderGroupId: first(await kalshiSigned('/portfolio/order_groups'), 'order_groups', 'id'),
      rfqId: first(await kalshiSigned('/communications/rfqs'), 'rfqs', 'id'),
      quoteId: first(await kalshiSigned('/communications/quotes'), 'quotes', 'id'),
      transferId: first(await kalshiSigned('/portfolio/intra_exchange_instance_transfers'), 'transfers', 'transfer_id'),
      subtraderId: first(await kalshiSigned('/fcm/subtraders'), 'subtraders', 'subtrader_id'),
      city: 'miami',
    },
    polymarket: {
      address: sim.credentials.polymarketClob.address,
      conditionId: String(market.conditionId),
      yesToken: yesToken ?? '',
      noToken: noToken ?? '',
      marketSlug: String(market.slug),
      eventId: String(gammaEvent?.id ?? ''),
      eventSlug: String(gammaEvent?.slug ?? ''),
      orderId: first(clobOrders, 'data', 'id'),
      readonlyKey: Array.isArray(readonlyKeys) && typeof readonlyKeys[0] === 'string' ? readonlyKeys[0] : undefined,
      rfqRequestId: first(await clobSigned('/rfq/data/requests'), 'data', 'requestId'),
    },
    polymarketUs: {
      slug: String(usMarket.slug),
      settledSlug: usSettled,
      marketId: String(usMarket.id),
      eventId: String(usEvent.id),
      eventSlug: String(usEvent.slug),
      seriesId: String(usSeries.id),
      searchText: String(usEvent.title ?? '').split(/\s+/)[0] ?? '',
      league: String(usEvent.seriesSlug ?? usSeries.slug),
      orderId: first(usOrders, 'orders', 'id'),
    },
    gemini: { symbol: geminiSymbol, unified: `${geminiSymbol.slice(0, -3).toUpperCase()}/USD` },
    coinbase: { productId, unified: productId.replace('-', '/') },
    window: { startTs: endTs - 6 * 3600, endTs },
    day: new Date(now).toISOString().slice(0, 10),
  };
}
