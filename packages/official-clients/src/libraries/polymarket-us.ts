// polymarket-us 0.1.1 (Polymarket US's SDK): its 19 REST reads, public (gateway host) and Ed25519-signed (API host).
import { generateKeyPairSync } from 'node:crypto';
import dns from 'node:dns';
import { PolymarketUS } from 'polymarket-us';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import type { Catalogue } from '../catalogue.ts';
import {
  CHANGES_STATE,
  documented,
  need,
  nonEmpty,
  type Access,
  type GatewayAccess,
  type LibrarySpec,
  type MethodSpec,
} from '../harness.ts';

const STRING_IDS =
  'polymarket-us declares numeric ids (and a market `outcome`, an event `series`); the docs: string ids, no `outcome`, `seriesSlug`';
const SERIES_IDS = 'polymarket-us declares numeric series ids; the docs: string ids';
/** The docs' shape where the SDK's differs only in its ids (and a market's `outcome`, an event's series). */
const withStringIds = (shape: string) => ({ type: documented(shape), typeNote: STRING_IDS });

type U = Catalogue['polymarketUs'];

function read(
  name: string,
  access: Access,
  call: (c: PolymarketUS, u: U) => Promise<unknown>,
  more: Pick<MethodSpec<PolymarketUS>, 'type' | 'typeNote' | 'expect' | 'absent'> = {},
): MethodSpec<PolymarketUS> {
  return { name, access, call: (c, catalogue) => call(c, catalogue.polymarketUs), ...more };
}

export const POLYMARKET_US_METHODS: readonly MethodSpec<PolymarketUS>[] = [
  read('events.list', 'public', (c) => c.events.list({ limit: 10 }), {
    ...withStringIds('UsEventsResponse'),
    expect: nonEmpty('events'),
  }),
  // The SDK takes numeric ids (the path parameter is an int32); the docs' ids are the same numbers as strings.
  read('events.retrieve', 'public', (c, u) => c.events.retrieve(Number(u.eventId)), withStringIds('UsEventResponse')),
  read(
    'events.retrieveBySlug',
    'public',
    (c, u) => c.events.retrieveBySlug(u.eventSlug),
    withStringIds('UsEventResponse'),
  ),
  read('markets.list', 'public', (c) => c.markets.list({ limit: 10 }), {
    ...withStringIds('UsMarketsResponse'),
    expect: nonEmpty('markets'),
  }),
  read(
    'markets.retrieve',
    'public',
    (c, u) => c.markets.retrieve(Number(u.marketId)),
    withStringIds('UsMarketResponse'),
  ),
  read(
    'markets.retrieveBySlug',
    'public',
    (c, u) => c.markets.retrieveBySlug(u.slug),
    withStringIds('UsMarketResponse'),
  ),
  read('markets.book', 'public', (c, u) => c.markets.book(u.slug), {
    type: documented('UsBookResponse'),
    typeNote: 'polymarket-us declares the book at the top level; the docs (and the platform) wrap it in `marketData`',
    expect: nonEmpty('marketData.bids', 'marketData.offers'),
  }),
  read('markets.bbo', 'public', (c, u) => c.markets.bbo(u.slug), {
    type: documented('UsBboResponse'),
    typeNote: 'polymarket-us declares the BBO at the top level; the docs (and the platform) wrap it in `marketData`',
  }),
  // A settled market's (an open one has none yet: 404).
  read('markets.settlement', 'public', (c, u) => c.markets.settlement(need(u.settledSlug, 'settled market')), {
    type: documented('UsSettlementResponse'),
    typeNote: 'polymarket-us declares `{marketSlug, settlementPrice, settledAt}`; the docs `{slug, settlement}`',
  }),
  read('search.query', 'public', (c, u) => c.search.query({ query: u.searchText, limit: 5 }), {
    ...withStringIds('UsSearchResponse'),
    expect: nonEmpty('events'),
  }),
  read('series.list', 'public', (c) => c.series.list({ limit: 10 }), {
    type: documented('UsSeriesListResponse'),
    typeNote: SERIES_IDS,
    expect: nonEmpty('series'),
  }),
  read('series.retrieve', 'public', (c, u) => c.series.retrieve(Number(u.seriesId)), {
    type: documented('UsSeriesResponse'),
    typeNote: SERIES_IDS,
  }),
  read('sports.list', 'public', (c) => c.sports.list(), {
    type: documented('UsSportsResponse'),
    typeNote:
      'polymarket-us declares `{id, name, slug, leagues?}`; the docs’ legacy sports: `{sport, image, resolution, ordering, tags, series, …}`',
    expect: nonEmpty('sports'),
  }),
  read('sports.teams', 'public', (c, u) => c.sports.teams({ league: u.league }), {
    type: documented('UsSportsTeamsResponse'),
    typeNote:
      'polymarket-us declares numeric team ids and providers `{provider, id}`; the docs: string ids, `{provider, providerId}`',
    expect: nonEmpty('teams'),
  }),
  read('orders.list', 'private', (c) => c.orders.list()),
  read('orders.retrieve', 'private', (c, u) => c.orders.retrieve(u.orderId ?? 'none-in-this-account'), {
    absent: (cat) => !cat.polymarketUs.orderId,
  }),
  read('portfolio.positions', 'private', (c) => c.portfolio.positions({ limit: 10 })),
  read('portfolio.activities', 'private', (c) => c.portfolio.activities({ limit: 10 })),
  read('account.balances', 'private', (c) => c.account.balances()),
];

export const POLYMARKET_US_NOT_CALLED: Record<string, string> = {
  ...Object.fromEntries(
    ['orders.create', 'orders.cancel', 'orders.modify', 'orders.cancelAll', 'orders.closePosition'].map((m) => [
      m,
      CHANGES_STATE,
    ]),
  ),
  'orders.preview':
    'order entry: the dry run of an order the caller builds (a signed POST to the order API), not a read of platform data',
  ...Object.fromEntries(
    ['ws.getWebSocketOptions', 'ws.private', 'ws.markets'].map((m) => [m, 'a WebSocket stream, not a REST read']),
  ),
};

/**
 * How a user reaches depthgate with polymarket-us: the SDK builds every URL as `new URL('/v1/…', base)` (a path
 * prefix is dropped) and calls the global `fetch` with fixed headers (no header option; fetch refuses URL
 * credentials). So the platform is reached at its own root by host (`venue-a-us.{GATEWAY_BASE_DOMAIN}`), and the key
 * is added by the process's fetch dispatcher: an undici Agent whose DNS lookup sends that domain to the gateway,
 * with an interceptor adding `X-API-Key` to requests for that domain only.
 */
export function gatewayDispatcher(gateway: GatewayAccess): Dispatcher {
  const suffix = `.${gateway.baseDomain}`;
  const lookup: typeof dns.lookup = ((
    hostname: string,
    options: dns.LookupOptions,
    callback: (...args: unknown[]) => void,
  ) => {
    if (!hostname.endsWith(suffix)) return dns.lookup(hostname, options, callback as never);
    if (options.all) return callback(null, [{ address: '127.0.0.1', family: 4 }]);
    return callback(null, '127.0.0.1', 4);
  }) as typeof dns.lookup;
  return new Agent({ connect: { lookup } }).compose(
    (dispatch) => (options, handler) =>
      new URL(String(options.origin)).hostname.endsWith(suffix)
        ? dispatch({ ...options, headers: withHeader(options.headers, 'x-api-key', gateway.key) }, handler)
        : dispatch(options, handler),
  );
}

function withHeader(
  headers: Dispatcher.DispatchOptions['headers'],
  name: string,
  value: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (k: unknown, v: unknown) => {
    if (v !== undefined && v !== null) out[String(k).toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  };
  if (Array.isArray(headers)) {
    if (typeof headers[0] === 'string') for (let i = 0; i + 1 < headers.length; i += 2) add(headers[i], headers[i + 1]);
    else for (const [k, v] of headers as unknown as Iterable<[string, unknown]>) add(k, v);
  } else if (headers && typeof headers === 'object' && Symbol.iterator in headers) {
    for (const [k, v] of headers as Iterable<[string, unknown]>) add(k, v);
  } else if (headers) {
    for (const [k, v] of Object.entries(headers)) add(k, v);
  }
  out[name] = value;
  return out;
}

/** An Ed25519 key of no account: polymarket-us refuses signed methods without one (the gateway signs instead). */
function placeholderSecret(): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  return Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url').toString('base64');
}

export const polymarketUs: LibrarySpec<PolymarketUS> = {
  label: 'polymarket-us',
  pkg: 'polymarket-us@0.1.1',
  declared(name) {
    const [resource, method] = name.split('.');
    return { module: 'polymarket-us', path: ['PolymarketUS', resource ?? '', `${method ?? ''}()`] };
  },
  client(mode, env) {
    if (mode === 'direct') {
      return new PolymarketUS({
        keyId: env.sim.credentials.polymarketUs.accessKey,
        secretKey: env.sim.credentials.polymarketUs.secretKeyBase64,
        gatewayBaseUrl: env.sim.urls['venue-a-us'],
        apiBaseUrl: env.sim.urls['venue-a-us/auth'],
      });
    }
    const root = `http://venue-a-us.${env.gateway.baseDomain}:${env.gateway.port}`;
    return new PolymarketUS({
      keyId: 'placeholder',
      secretKey: placeholderSecret(),
      gatewayBaseUrl: root,
      apiBaseUrl: root,
    });
  },
  async around(mode, env, run) {
    if (mode === 'direct') return run();
    const previous = getGlobalDispatcher();
    const dispatcher = gatewayDispatcher(env.gateway);
    setGlobalDispatcher(dispatcher);
    try {
      return await run();
    } finally {
      setGlobalDispatcher(previous);
      await dispatcher.close();
    }
  },
  methods: POLYMARKET_US_METHODS,
  notCalled: POLYMARKET_US_NOT_CALLED,
};
