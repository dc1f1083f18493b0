// ccxt 4.5.84: coinbaseexchange, gemini, prediction.kalshi and prediction.polymarket. ccxt is loosely typed (most
// fields `number | undefined`), so beside its unified types each call checks that the fields its parsers fill from
// the platform's raw answer are there (`present`), and that lists the simulator fills are not empty.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import ccxt from 'ccxt';
import type { Catalogue } from '../catalogue.ts';
import {
  all,
  at,
  documented,
  nonEmpty,
  present,
  type Access,
  type Env,
  type LibrarySpec,
  type Mode,
  type MethodSpec,
} from '../harness.ts';

type Coinbase = InstanceType<typeof ccxt.coinbaseexchange>;
type Gemini = InstanceType<typeof ccxt.gemini>;
type Kalshi = InstanceType<typeof ccxt.prediction.kalshi>;
type Polymarket = InstanceType<typeof ccxt.prediction.polymarket>;

function method<C>(
  name: string,
  access: Access,
  call: (x: C, catalogue: Catalogue) => Promise<unknown>,
  more: Pick<MethodSpec<C>, 'expect' | 'absent' | 'exception' | 'type' | 'typeNote' | 'select' | 'noneOk'> = {},
): MethodSpec<C> {
  return { name, access, call, ...more };
}

const isTime = (value: unknown) =>
  typeof value === 'number' && value > Date.UTC(2020, 0, 1) ? [] : [`a time in ms, got ${String(value)}`];

const NONE = 'none-in-this-account';

/**
 * ccxt declares `Market[]` for its prediction classes' fetchMarkets (and `Dictionary<Market>` for loadMarkets), but
 * they key a market by `market`, never `symbol` (PredictionExchange), whatever the platform answers: checked against
 * ccxt's market without `symbol` (documented.d.ts), so that the rest of the declaration still counts.
 */
const PREDICTION_MARKETS = {
  type: documented('CcxtPredictionMarkets'),
  typeNote: 'ccxt declares Market[], its prediction classes return markets keyed by `market`, without `symbol`',
};
const PREDICTION_MARKET_MAP = {
  type: documented('CcxtPredictionMarketMap'),
  typeNote: PREDICTION_MARKETS.typeNote,
};

/** Gemini lists prediction contracts among its symbols; ccxt cannot split `GEMI-…` ids into a base and a quote. */
const GEMINI_SPOT_ONLY = 'for the spot pairs: ccxt cannot split prediction-contract ids (GEMI-…) into base and quote';
const isContract = (m: unknown) => /^gemi-/i.test(String((m as { id?: unknown } | null)?.id ?? ''));

/** ccxt's declared type of a method: the class's own declaration file (its default export). */
function declaredIn(file: string) {
  return (name: string) => ({ module: 'ccxt', file, path: ['default', `${name}()`] });
}

/** Shared options: no client-side throttling (the simulator's rate limits are off), no real host ever. */
function options(mode: Mode, env: Env, urls: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    enableRateLimit: false,
    urls: { api: urls },
    ...(mode === 'gateway' ? { headers: { 'X-API-Key': env.gateway.key } } : {}),
    ...extra,
  };
}

const gatewayBase = (env: Env, platform: string) => `${env.gateway.url}/api/v1/${platform}`;

/** An RSA key of no account: ccxt signs Kalshi's private calls itself; through the gateway the gateway re-signs. */
const placeholderRsa = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/**
 * ccxt's own list of what each class can do (`has`): every `fetch…` there is in a table, or in its `notCalled`
 * with the reason (tables.test.ts holds the two together). Emulated entries are derived from others.
 */
const EMULATED = {
  fetchCurrenciesWs: 'emulated by ccxt over a WebSocket connection, not a REST read',
  fetchTransactions: 'emulated by ccxt from fetchDepositsWithdrawals',
};
const COINBASE_TRANSFERS =
  'Coinbase transfers (deposits, withdrawals): not simulated (packages/venue-sim README, "Not simulated")';
const GEMINI_PRIVATE =
  "Gemini's private API (POSTs signed with an HMAC-SHA384 payload): depthgate serves Gemini's public data only (no Gemini credentials or signer in its descriptor), and the simulator does not simulate it";

// coinbaseexchange --------------------------------------------------------------------------------------------

export const coinbaseExchange: LibrarySpec<Coinbase> = {
  label: 'ccxt coinbaseexchange',
  pkg: 'ccxt@4.5.84',
  declared: declaredIn('js/src/coinbaseexchange.d.ts'),
  notCalled: {
    ...EMULATED,
    fetchDeposits: COINBASE_TRANSFERS,
    fetchWithdrawals: COINBASE_TRANSFERS,
    fetchDepositsWithdrawals: COINBASE_TRANSFERS,
    fetchLedger: 'the Coinbase account ledger: not simulated (packages/venue-sim README, "Not simulated")',
    fetchTradingFees: 'Coinbase fee tiers (/fees): not simulated (packages/venue-sim README, "Not simulated")',
  },
  client(mode, env) {
    const base = mode === 'direct' ? env.sim.urls['venue-d'] : gatewayBase(env, 'venue-d');
    const c = env.sim.credentials.coinbase;
    // Through the gateway ccxt still needs credentials to call private methods (checkRequiredCredentials): it gets
    // placeholders, whose headers the gateway never forwards (it signs with its own).
    const creds =
      mode === 'direct'
        ? { apiKey: c.key, secret: c.secret, password: c.passphrase }
        : { apiKey: 'placeholder', secret: randomBytes(32).toString('base64'), password: 'placeholder' };
    return new ccxt.coinbaseexchange(options(mode, env, { public: base, private: base }, creds));
  },
  methods: [
    method('fetchTime', 'public', (x) => x.fetchTime(), { expect: isTime }),
    method('fetchCurrencies', 'public', (x) => x.fetchCurrencies(), { expect: all(nonEmpty(''), present('USD.id')) }),
    method('fetchMarkets', 'public', (x) => x.fetchMarkets(), {
      expect: all(
        nonEmpty(''),
        present('0.id', '0.symbol', '0.base', '0.quote', '0.precision.price', '0.precision.amount'),
      ),
    }),
    method('loadMarkets', 'public', (x) => x.loadMarkets(true), {
      expect: (v, c) => present(`${c.coinbase.unified}.id`)(v),
    }),
    method('fetchOrderBook', 'public', (x, c) => x.fetchOrderBook(c.coinbase.unified), {
      expect: all(nonEmpty('bids', 'asks'), present('bids.0.0', 'bids.0.1', 'asks.0.0', 'nonce')),
    }),
    method('fetchL2OrderBook', 'public', (x, c) => x.fetchL2OrderBook(c.coinbase.unified), {
      expect: nonEmpty('bids', 'asks'),
    }),
    method('fetchTicker', 'public', (x, c) => x.fetchTicker(c.coinbase.unified), {
      expect: present('symbol', 'bid', 'ask', 'last', 'timestamp', 'baseVolume'),
    }),
    // ccxt reads /products/spark-lines: closes keyed by product id.
    method('fetchTickers', 'public', (x) => x.fetchTickers(), {
      expect: (v, c) => all(nonEmpty(''), present(`${c.coinbase.unified}.last`))(v, c),
    }),
    method('fetchTrades', 'public', (x, c) => x.fetchTrades(c.coinbase.unified), {
      expect: all(nonEmpty(''), present('0.id', '0.timestamp', '0.price', '0.amount', '0.side')),
    }),
    method('fetchOHLCV', 'public', (x, c) => x.fetchOHLCV(c.coinbase.unified, '1h', undefined, 24), {
      expect: all(nonEmpty(''), present('0.0', '0.1', '0.2', '0.3', '0.4', '0.5')),
    }),
    method('fetchAccounts', 'private', (x) => x.fetchAccounts()),
    method('fetchBalance', 'private', (x) => x.fetchBalance()),
    method('fetchOpenOrders', 'private', (x, c) => x.fetchOpenOrders(c.coinbase.unified)),
    method('fetchOrders', 'private', (x, c) => x.fetchOrders(c.coinbase.unified)),
    method('fetchClosedOrders', 'private', (x, c) => x.fetchClosedOrders(c.coinbase.unified)),
    method('fetchOrder', 'private', (x, c) => x.fetchOrder(NONE, c.coinbase.unified), { absent: () => true }),
    method('fetchOrderTrades', 'private', (x, c) => x.fetchOrderTrades(NONE, c.coinbase.unified)),
    method('fetchMyTrades', 'private', (x, c) => x.fetchMyTrades(c.coinbase.unified)),
  ],
};

// gemini --------------------------------------------------------------------------------------------------------

export const gemini: LibrarySpec<Gemini> = {
  label: 'ccxt gemini',
  pkg: 'ccxt@4.5.84',
  declared: declaredIn('js/src/gemini.d.ts'),
  notCalled: {
    ...EMULATED,
    ...Object.fromEntries(
      [
        'fetchBalance',
        'fetchDepositAddress',
        'fetchDepositAddressesByNetwork',
        'fetchDepositsWithdrawals',
        'fetchMyTrades',
        'fetchOpenOrders',
        'fetchOrder',
        'fetchTradingFees',
      ].map((m) => [m, GEMINI_PRIVATE]),
    ),
  },
  client(mode, env) {
    const base = mode === 'direct' ? env.sim.urls['venue-c'] : gatewayBase(env, 'venue-c');
    // ccxt scrapes currencies (and the pairs it keeps) from the HTML of exchange.gemini.com unless told not to;
    // `webApiEnable: false` is ccxt's documented switch for anything but the real site (see exceptions.ts).
    return new ccxt.gemini(
      options(
        mode,
        env,
        { public: base, private: base, web: base, webExchange: base },
        { options: { fetchCurrencies: { webApiEnable: false } } },
      ),
    );
  },
  methods: [
    // What a user with ccxt's defaults gets (the web page read, once here rather than five times), then the
    // client's setting back for the other calls.
    method(
      'fetchCurrencies',
      'public',
      async (x) => {
        const saved = x.options.fetchCurrencies as unknown;
        x.options.fetchCurrencies = { webApiEnable: true, webApiRetries: 1 };
        try {
          return await x.fetchCurrencies();
        } finally {
          x.options.fetchCurrencies = saved;
        }
      },
      {
        expect: nonEmpty(''),
        exception:
          'ccxt reads currencies from the HTML of the exchange.gemini.com web page (`="currencyData">` in a script tag), not from a Gemini API; depthgate is an API gateway and the simulator serves APIs',
      },
    ),
    method('fetchMarkets', 'public', (x) => x.fetchMarkets(), {
      typeNote: GEMINI_SPOT_ONLY,
      select: (v) => (Array.isArray(v) ? v.filter((m) => !isContract(m)) : v),
      expect: (v, c) => {
        const list = Array.isArray(v) ? (v as { symbol?: string }[]) : [];
        return list.some((m) => m.symbol === c.gemini.unified)
          ? []
          : [`no ${c.gemini.unified} among ${list.length} markets`];
      },
    }),
    method('loadMarkets', 'public', (x) => x.loadMarkets(true), {
      typeNote: GEMINI_SPOT_ONLY,
      select: (v) => Object.fromEntries(Object.entries((v as object | null) ?? {}).filter(([, m]) => !isContract(m))),
      expect: (v, c) => present(`${c.gemini.unified}.id`)(v),
    }),
    method('fetchOrderBook', 'public', (x, c) => x.fetchOrderBook(c.gemini.unified), {
      expect: all(nonEmpty('bids', 'asks'), present('bids.0.0', 'bids.0.1', 'asks.0.0')),
    }),
    method('fetchL2OrderBook', 'public', (x, c) => x.fetchL2OrderBook(c.gemini.unified), {
      expect: nonEmpty('bids', 'asks'),
    }),
    method('fetchTicker', 'public', (x, c) => x.fetchTicker(c.gemini.unified), {
      expect: present('symbol', 'bid', 'ask', 'last', 'baseVolume', 'timestamp'),
    }),
    // ccxt reads /v1/pricefeed: every pair's last price.
    method('fetchTickers', 'public', (x) => x.fetchTickers(), {
      expect: (v, c) => all(nonEmpty(''), present(`${c.gemini.unified}.last`))(v, c),
    }),
    method('fetchTrades', 'public', (x, c) => x.fetchTrades(c.gemini.unified), {
      expect: all(nonEmpty(''), present('0.id', '0.timestamp', '0.price', '0.amount', '0.side')),
    }),
    method('fetchOHLCV', 'public', (x, c) => x.fetchOHLCV(c.gemini.unified, '1h'), {
      expect: all(nonEmpty(''), present('0.0', '0.1', '0.2', '0.3', '0.4', '0.5')),
    }),
    method('fetchOpenInterest', 'public', (x, c) => x.fetchOpenInterest(c.gemini.unified), {
      expect: present('openInterestAmount'),
      exception:
        "Gemini publishes open interest (/v1/riskstats) for perpetual contracts only; depthgate's Gemini has spot pairs and prediction contracts",
    }),
  ],
};

// prediction.kalshi ---------------------------------------------------------------------------------------------

export const predictionKalshi: LibrarySpec<Kalshi> = {
  label: 'ccxt prediction.kalshi',
  pkg: 'ccxt@4.5.84',
  declared: declaredIn('js/src/prediction/kalshi.d.ts'),
  notCalled: { fetchCurrenciesWs: EMULATED.fetchCurrenciesWs },
  client(mode, env) {
    // ccxt signs `/trade-api/...` of its base URL (it cuts the URL at `/trade-api`), so the direct base keeps the
    // simulator's `/trade-api/v2`; through the gateway its placeholder signature is dropped and the gateway signs.
    const base = mode === 'direct' ? env.sim.urls['venue-b'] : gatewayBase(env, 'venue-b');
    const creds =
      mode === 'direct'
        ? { apiKey: env.sim.credentials.kalshi.accessKey, privateKey: env.sim.credentials.kalshi.privateKeyPem }
        : { apiKey: 'placeholder', privateKey: placeholderRsa() };
    // `elections` (free-text search) is not used by these calls; it points at the same base, never the real host.
    return new ccxt.prediction.kalshi(options(mode, env, { kalshi: base, elections: base }, creds));
  },
  methods: [
    method('fetchStatus', 'public', (x) => x.fetchStatus(), { expect: present('status') }),
    method('fetchMarkets', 'public', (x) => x.fetchMarkets({ limit: 200 }), {
      ...PREDICTION_MARKETS,
      expect: all(nonEmpty(''), present('0.id', '0.market', '0.active', '0.outcomes.0.outcome')),
    }),
    method('loadMarkets', 'public', (x) => x.loadMarkets(true), { ...PREDICTION_MARKET_MAP, expect: nonEmpty('') }),
    method('fetchTicker', 'public', (x, c) => x.fetchTicker(c.kalshi.ticker), {
      expect: present('outcome', 'bid', 'ask', 'last', 'timestamp', 'bidVolume', 'askVolume'),
    }),
    method('fetchTickers', 'public', (x, c) => x.fetchTickers([c.kalshi.ticker, c.kalshi.ticker2]), {
      expect: (v) =>
        Object.keys((v as object | null) ?? {}).length === 2 ? [] : ['two tickers asked, not two answered'],
    }),
    method('fetchOrderBook', 'public', (x, c) => x.fetchOrderBook(c.kalshi.ticker), {
      expect: all(nonEmpty('bids', 'asks'), present('bids.0.0', 'bids.0.1', 'outcome')),
    }),
    method('fetchOHLCV', 'public', (x, c) => x.fetchOHLCV(c.kalshi.ticker, '1h', undefined, 24), {
      expect: all(nonEmpty(''), present('0.0', '0.1', '0.4')),
    }),
    method('fetchTrades', 'public', (x, c) => x.fetchTrades(c.kalshi.ticker), {
      expect: all(nonEmpty(''), present('0.id', '0.timestamp', '0.price', '0.amount', '0.side')),
    }),
    method('fetchOpenInterest', 'public', (x, c) => x.fetchOpenInterest(c.kalshi.ticker), {
      expect: present('openInterestAmount'),
    }),
    method('fetchEvents', 'public', (x, c) => x.fetchEvents({ series_ticker: c.kalshi.seriesTicker, limit: 20 }), {
      expect: all(nonEmpty(''), present('0.id', '0.title', '0.markets.0.id')),
    }),
    method('fetchEvent', 'public', (x, c) => x.fetchEvent(c.kalshi.eventTicker), {
      expect: all(present('id', 'title'), nonEmpty('markets')),
    }),
    method('fetchBalance', 'private', (x) => x.fetchBalance(), { expect: present('USD') }),
    method('fetchPositions', 'private', (x) => x.fetchPositions()),
    method('fetchMyTrades', 'private', (x) => x.fetchMyTrades()),
    method('fetchOpenOrders', 'private', (x) => x.fetchOpenOrders()),
    method('fetchOrders', 'private', (x) => x.fetchOrders()),
    method('fetchClosedOrders', 'private', (x) => x.fetchClosedOrders()),
    method('fetchOrder', 'private', (x, c) => x.fetchOrder(c.kalshi.orderId ?? NONE), {
      absent: (c) => !c.kalshi.orderId,
    }),
    method('fetchSettlements', 'private', (x) => x.fetchSettlements()),
  ],
};

// prediction.polymarket -----------------------------------------------------------------------------------------

/**
 * Where ccxt's `data` group (Polymarket's Data API: `/oi`, `/trades`, `/positions`) goes through the gateway: the
 * gateway serves that host as a whole under `venue-a-clob/data-api/` for clients that take its base URL.
 */
const dataThroughGateway = (env: Env) => `${gatewayBase(env, 'venue-a-clob')}/data-api`;

export const predictionPolymarket: LibrarySpec<Polymarket> = {
  label: 'ccxt prediction.polymarket',
  pkg: 'ccxt@4.5.84',
  declared: declaredIn('js/src/prediction/polymarket.d.ts'),
  notCalled: { fetchCurrenciesWs: EMULATED.fetchCurrenciesWs },
  client(mode, env) {
    const c = env.sim.credentials.polymarketClob;
    const urls =
      mode === 'direct'
        ? {
            gamma: env.sim.urls['venue-a'],
            clob: env.sim.urls['venue-a-clob'],
            data: env.sim.urls['venue-a-clob/data'],
          }
        : { gamma: gatewayBase(env, 'venue-a'), clob: gatewayBase(env, 'venue-a-clob'), data: dataThroughGateway(env) };
    // L2 API credentials and the wallet address they belong to (positions are read by address, unsigned).
    const creds =
      mode === 'direct'
        ? { apiKey: c.apiKey, secret: c.secret, password: c.passphrase, walletAddress: c.address }
        : {
            apiKey: 'placeholder',
            secret: randomBytes(32).toString('base64'),
            password: 'placeholder',
            walletAddress: c.address,
          };
    const ws = 'ws://127.0.0.1:9/unused';
    return new ccxt.prediction.polymarket(options(mode, env, { ...urls, ws, wsUser: ws }, creds));
  },
  methods: [
    method('fetchTime', 'public', (x) => x.fetchTime(), { expect: isTime }),
    method('fetchStatus', 'public', (x) => x.fetchStatus(), {
      expect: (v) => (at(v, 'status') === 'ok' ? [] : [`status ${String(at(v, 'status'))}`]),
    }),
    method('fetchMarkets', 'public', (x) => x.fetchMarkets(), {
      ...PREDICTION_MARKETS,
      expect: all(nonEmpty(''), present('0.id', '0.market', '0.active', '0.outcomes.0.outcome')),
    }),
    method('loadMarkets', 'public', (x) => x.loadMarkets(true), { ...PREDICTION_MARKET_MAP, expect: nonEmpty('') }),
    method('fetchTicker', 'public', (x, c) => x.fetchTicker(c.polymarket.yesToken), {
      expect: present('outcome', 'bid', 'ask', 'last'),
    }),
    // Three read-only POSTs: /books, /midpoints, /last-trades-prices.
    method('fetchTickers', 'public', (x, c) => x.fetchTickers([c.polymarket.yesToken, c.polymarket.noToken]), {
      expect: (v) =>
        Object.keys((v as object | null) ?? {}).length === 2 ? [] : ['two tickers asked, not two answered'],
    }),
    method('fetchOrderBook', 'public', (x, c) => x.fetchOrderBook(c.polymarket.yesToken), {
      expect: all(nonEmpty('bids', 'asks'), present('bids.0.0', 'bids.0.1', 'timestamp')),
    }),
    method('fetchOHLCV', 'public', (x, c) => x.fetchOHLCV(c.polymarket.yesToken, '1h', undefined, 24), {
      expect: all(nonEmpty(''), present('0.0', '0.1', '0.4')),
    }),
    method('fetchOpenInterest', 'public', (x, c) => x.fetchOpenInterest(c.polymarket.yesToken), {
      expect: present('openInterestValue'),
    }),
    method('fetchTradingFee', 'public', (x, c) => x.fetchTradingFee(c.polymarket.yesToken), {
      expect: present('taker'),
    }),
    method('fetchTrades', 'public', (x, c) => x.fetchTrades(c.polymarket.yesToken), {
      expect: all(nonEmpty(''), present('0.id', '0.timestamp', '0.price', '0.amount', '0.side')),
    }),
    method('fetchEvents', 'public', (x, c) => x.fetchEvents({ slug: c.polymarket.eventSlug }), {
      expect: all(nonEmpty(''), present('0.id', '0.title', '0.markets.0.id')),
    }),
    method('fetchEvent', 'public', (x, c) => x.fetchEvent(c.polymarket.eventSlug), {
      expect: all(present('id', 'title'), nonEmpty('markets')),
    }),
    // By wallet address, unsigned (the Data API's positions are public).
    method('fetchPositions', 'public', (x) => x.fetchPositions()),
    method('fetchPosition', 'public', (x, c) => x.fetchPosition(c.polymarket.yesToken), {
      noneOk: 'the simulator’s account holds no position: ccxt answers undefined',
    }),
    method('fetchBalance', 'private', (x) => x.fetchBalance(), { expect: present('USDC') }),
    method('fetchMyTrades', 'private', (x) => x.fetchMyTrades()),
    method('fetchOpenOrders', 'private', (x) => x.fetchOpenOrders()),
    method('fetchOrder', 'private', (x, c) => x.fetchOrder(c.polymarket.orderId ?? NONE), {
      absent: (c) => !c.polymarket.orderId,
    }),
    method('fetchOrderTrades', 'private', (x, c) => x.fetchOrderTrades(c.polymarket.orderId ?? NONE)),
  ],
};

export const CCXT_LIBRARIES = [coinbaseExchange, gemini, predictionKalshi, predictionPolymarket] as const;
