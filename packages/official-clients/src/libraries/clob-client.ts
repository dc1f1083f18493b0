// @polymarket/clob-client 5.8.1 (Polymarket's CLOB client): its public reads (the batch reads are POSTs), its
// L2-signed account reads, and the RFQ client's reads.
import { randomBytes } from 'node:crypto';
import { AssetType, Chain, ClobClient, Side } from '@polymarket/clob-client';
import type { Catalogue } from '../catalogue.ts';
import {
  CHANGES_STATE,
  documented,
  need,
  LOCAL,
  nonEmpty,
  present,
  type Access,
  type LibrarySpec,
  type MethodSpec,
} from '../harness.ts';

const UNTYPED = 'clob-client declares `any`; the shape of the Polymarket docs';

type P = Catalogue['polymarket'];

/**
 * Non-2xx answers come back from clob-client as `{error, status}` instead of an exception (unless `throwOnError`):
 * a caller that checks for them sees a failure, so does this suite.
 */
function unwrap(value: unknown): unknown {
  const answer = value as { error?: unknown; status?: unknown } | null;
  if (answer && typeof answer === 'object' && 'error' in answer && typeof answer.status === 'number') {
    const { error, status } = answer;
    throw new Error(`HTTP ${status}: ${typeof error === 'string' ? error : JSON.stringify(error)}`);
  }
  return value;
}

function read(
  name: string,
  access: Access,
  call: (c: ClobClient, p: P, catalogue: Catalogue) => Promise<unknown>,
  more: Pick<MethodSpec<ClobClient>, 'type' | 'typeNote' | 'expect' | 'absent'> = {},
): MethodSpec<ClobClient> {
  return {
    name,
    access,
    call: async (c, catalogue) => unwrap(await call(c, catalogue.polymarket, catalogue)),
    ...more,
  };
}

const books = (p: P) => [
  { token_id: p.yesToken, side: Side.BUY },
  { token_id: p.noToken, side: Side.SELL },
];

/** Keyed by both tokens asked for. */
const byToken = (value: unknown, c: Catalogue) => {
  const keys = value && typeof value === 'object' ? Object.keys(value) : [];
  const want = [c.polymarket.yesToken, c.polymarket.noToken];
  return want.every((t) => keys.includes(t))
    ? []
    : [`answers for ${keys.length} tokens; asked for both of the market's`];
};

/** A page of markets: clob-client declares `data: any[]`; checked as the docs' market (simplified market). */
const MARKETS_PAGE = {
  type: documented('ClobMarketsPage'),
  typeNote: 'clob-client declares `data: any[]`; the market of the Polymarket docs',
  expect: nonEmpty('data'),
};
const SIMPLIFIED_PAGE = {
  type: documented('ClobSimplifiedMarketsPage'),
  typeNote: 'clob-client declares `data: any[]`; the simplified market of the Polymarket docs',
  expect: nonEmpty('data'),
};

const NONE = '0x0000000000000000000000000000000000000000000000000000000000000000';
/** An RFQ request id of no account (the ids are UUIDs). */
const NONE_UUID = '00000000-0000-0000-0000-000000000000';

export const CLOB_METHODS: readonly MethodSpec<ClobClient>[] = [
  // Public market data.
  read('getOk', 'public', (c) => c.getOk()),
  read('getServerTime', 'public', (c) => c.getServerTime()),
  read('getSamplingSimplifiedMarkets', 'public', (c) => c.getSamplingSimplifiedMarkets(), SIMPLIFIED_PAGE),
  read('getSamplingMarkets', 'public', (c) => c.getSamplingMarkets(), MARKETS_PAGE),
  read('getSimplifiedMarkets', 'public', (c) => c.getSimplifiedMarkets(), SIMPLIFIED_PAGE),
  read('getMarkets', 'public', (c) => c.getMarkets(), MARKETS_PAGE),
  read('getMarket', 'public', (c, p) => c.getMarket(p.conditionId), {
    type: documented('ClobMarket'),
    typeNote: UNTYPED,
  }),
  read('getOrderBook', 'public', (c, p) => c.getOrderBook(p.yesToken), { expect: nonEmpty('bids', 'asks') }),
  read('getOrderBooks', 'public', (c, p) => c.getOrderBooks(books(p)), { expect: nonEmpty('') }),
  // The client caches tick sizes (also from every order book it reads): cleared first, so that it asks.
  read('getTickSize', 'public', (c, p) => {
    c.clearTickSizeCache();
    return c.getTickSize(p.yesToken);
  }),
  read('getNegRisk', 'public', (c, p) => c.getNegRisk(p.yesToken)),
  read('getFeeRateBps', 'public', (c, p) => c.getFeeRateBps(p.yesToken)),
  read('getMidpoint', 'public', (c, p) => c.getMidpoint(p.yesToken), {
    type: documented('ClobMidpoint'),
    typeNote: UNTYPED,
  }),
  read('getMidpoints', 'public', (c, p) => c.getMidpoints(books(p)), {
    type: documented('ClobMidpoints'),
    typeNote: UNTYPED,
    expect: byToken,
  }),
  read('getPrice', 'public', (c, p) => c.getPrice(p.yesToken, Side.BUY), {
    type: documented('ClobPrice'),
    typeNote: UNTYPED,
  }),
  read('getPrices', 'public', (c, p) => c.getPrices(books(p)), {
    type: documented('ClobPrices'),
    typeNote: 'clob-client declares `any`; the Polymarket docs: prices as JSON numbers',
    expect: byToken,
  }),
  read('getSpread', 'public', (c, p) => c.getSpread(p.yesToken), { type: documented('ClobSpread'), typeNote: UNTYPED }),
  read('getSpreads', 'public', (c, p) => c.getSpreads(books(p)), {
    type: documented('ClobSpreads'),
    typeNote: UNTYPED,
    expect: byToken,
  }),
  read('getLastTradePrice', 'public', (c, p) => c.getLastTradePrice(p.yesToken), {
    type: documented('ClobLastTradePrice'),
    typeNote: UNTYPED,
  }),
  read('getLastTradesPrices', 'public', (c, p) => c.getLastTradesPrices(books(p)), {
    type: documented('ClobLastTradesPrices'),
    typeNote: UNTYPED,
    expect: nonEmpty(''),
  }),
  read(
    'getPricesHistory',
    'public',
    (c, p, cat) =>
      c.getPricesHistory({ market: p.yesToken, startTs: cat.window.startTs, endTs: cat.window.endTs, fidelity: 60 }),
    {
      type: documented('ClobPricesHistory'),
      typeNote: 'clob-client declares `MarketPrice[]`; the Polymarket docs (and ccxt) read `{history: MarketPrice[]}`',
      expect: nonEmpty('history'),
    },
  ),
  // The account's own read-only key, which validates ('OK'); another key is a 401.
  read('validateReadonlyApiKey', 'public', (c, p) =>
    c.validateReadonlyApiKey(p.address, need(p.readonlyKey, 'read-only API key of the account')),
  ),
  read('getCurrentRewards', 'public', (c) => c.getCurrentRewards(), {
    type: documented('ClobCurrentRewards'),
    typeNote:
      'clob-client declares `MarketReward[]` (with question, slugs, image, tokens); the Polymarket docs’ rows carry the programmes only',
    expect: nonEmpty(''),
  }),
  read('getRawRewardsForMarket', 'public', (c, p) => c.getRawRewardsForMarket(p.conditionId)),
  read('getMarketTradesEvents', 'public', (c, p) => c.getMarketTradesEvents(p.conditionId), { expect: nonEmpty('') }),
  // Computed by the library from the order book it reads.
  read('calculateMarketPrice', 'public', (c, p) => c.calculateMarketPrice(p.yesToken, Side.BUY, 1), {
    expect: (value) =>
      typeof value === 'number' && value > 0 && value < 1 ? [] : [`a price in (0, 1), got ${String(value)}`],
  }),

  // The account's (L2 HMAC-signed) reads.
  read('getApiKeys', 'private', (c) => c.getApiKeys(), {
    type: documented('ClobApiKeys'),
    typeNote:
      'clob-client declares `ApiKeyCreds[]`; the Polymarket docs (secrets never sent back) and rs-clob-client: key ids',
    expect: nonEmpty('apiKeys'),
  }),
  read('getClosedOnlyMode', 'private', (c) => c.getClosedOnlyMode()),
  read('getReadonlyApiKeys', 'private', (c) => c.getReadonlyApiKeys()),
  read('getBuilderApiKeys', 'private', (c) => c.getBuilderApiKeys()),
  read('getOrder', 'private', (c, p) => c.getOrder(p.orderId ?? NONE), { absent: (cat) => !cat.polymarket.orderId }),
  read('getOpenOrders', 'private', (c, p) => c.getOpenOrders({ market: p.conditionId })),
  read('getTrades', 'private', (c, p) => c.getTrades({ market: p.conditionId })),
  read('getTradesPaginated', 'private', (c, p) => c.getTradesPaginated({ market: p.conditionId })),
  read('getNotifications', 'private', (c) => c.getNotifications()),
  read('getBalanceAllowance', 'private', (c, p) =>
    c.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: p.yesToken }),
  ),
  // A GET that asks the CLOB to refresh its cached on-chain balance; the account's data does not change.
  read('updateBalanceAllowance', 'private', (c) => c.updateBalanceAllowance({ asset_type: AssetType.COLLATERAL })),
  read('isOrderScoring', 'private', (c, p) => c.isOrderScoring({ order_id: p.orderId ?? NONE }), {
    expect: present('scoring'),
  }),
  // A read-only POST, signed over its body.
  read('areOrdersScoring', 'private', (c, p) => c.areOrdersScoring({ orderIds: [p.orderId ?? NONE] })),
  read('getEarningsForUserForDay', 'private', (c, _p, cat) => c.getEarningsForUserForDay(cat.day)),
  read('getTotalEarningsForUserForDay', 'private', (c, _p, cat) => c.getTotalEarningsForUserForDay(cat.day)),
  read('getUserEarningsAndMarketsConfig', 'private', (c, _p, cat) => c.getUserEarningsAndMarketsConfig(cat.day)),
  read('getRewardPercentages', 'private', (c) => c.getRewardPercentages()),
  read('rfq.getRfqRequests', 'private', (c) => c.rfq.getRfqRequests({ limit: 10 }), { expect: nonEmpty('data') }),
  read('rfq.getRfqRequesterQuotes', 'private', (c) => c.rfq.getRfqRequesterQuotes({ limit: 10 }), {
    expect: nonEmpty('data'),
  }),
  read('rfq.getRfqQuoterQuotes', 'private', (c) => c.rfq.getRfqQuoterQuotes({ limit: 10 })),
  read('rfq.getRfqBestQuote', 'private', (c, p) => c.rfq.getRfqBestQuote({ requestId: p.rfqRequestId ?? NONE_UUID }), {
    absent: (cat) => !cat.polymarket.rfqRequestId,
  }),
  read('rfq.rfqConfig', 'private', (c) => c.rfq.rfqConfig()),
];

const L1 =
  "L1 (EIP-712 wallet signature): derives the account's API credentials from its wallet key; depthgate holds API credentials, never a wallet key, and the simulator does not simulate L1";

/** What the table does not call, and why (tables.test.ts checks that every method of the client is somewhere). */
export const CLOB_NOT_CALLED: Record<string, string> = {
  deriveApiKey: L1,
  getBuilderTrades:
    'builder-program attribution (POLY_BUILDER_* headers from builder API credentials): neither the simulator nor depthgate holds builder credentials',
  ...Object.fromEntries(
    [
      'createApiKey',
      'createOrDeriveApiKey',
      'deleteApiKey',
      'createReadonlyApiKey',
      'deleteReadonlyApiKey',
      'dropNotifications',
      'createOrder',
      'createMarketOrder',
      'createAndPostOrder',
      'createAndPostMarketOrder',
      'postOrder',
      'postOrders',
      'cancelOrder',
      'cancelOrders',
      'cancelAll',
      'postHeartbeat',
      'cancelMarketOrders',
      'createBuilderApiKey',
      'revokeBuilderApiKey',
      'rfq.createRfqRequest',
      'rfq.cancelRfqRequest',
      'rfq.createRfqQuote',
      'rfq.cancelRfqQuote',
      'rfq.acceptRfqQuote',
      'rfq.approveRfqOrder',
    ].map((m) => [m, CHANGES_STATE]),
  ),
  ...Object.fromEntries(
    [
      'clearTickSizeCache',
      'getOrderBookHash',
      '_resolveTickSize',
      '_resolveFeeRateBps',
      '_generateBuilderHeaders',
      '_getBuilderHeaders',
      'updateTickSizeFromOrderBook',
      'get',
      'post',
      'put',
      'del',
      'throwIfError',
      'canL1Auth',
      'canL2Auth',
      'mustBuilderAuth',
      'canBuilderAuth',
      'rfq.ensureL2Auth',
      'rfq.getRequestOrderCreationPayload',
    ].map((m) => [m, LOCAL]),
  ),
};

/**
 * clob-client takes a wallet to sign with; its L2 (API key) headers use only the wallet's address. This stands for
 * a wallet of that address (ethers' signer interface): EIP-712 signing, used only to create API keys and orders
 * (L1), is not part of these reads.
 */
function walletOf(address: string) {
  return {
    getAddress: async () => address,
    _signTypedData: async (): Promise<string> => {
      throw new Error('EIP-712 (L1) signing is not part of the read-only contract');
    },
  };
}

export const clobClient: LibrarySpec<ClobClient> = {
  label: '@polymarket/clob-client',
  pkg: '@polymarket/clob-client@5.8.1',
  declared(name) {
    return {
      module: '@polymarket/clob-client',
      path: ['ClobClient', ...name.split('.').map((s, i, a) => (i === a.length - 1 ? `${s}()` : s))],
    };
  },
  client(mode, env) {
    if (mode === 'direct') {
      const c = env.sim.credentials.polymarketClob;
      return new ClobClient(env.sim.urls['venue-a-clob'], Chain.POLYGON, walletOf(c.address), {
        key: c.apiKey,
        secret: c.secret,
        passphrase: c.passphrase,
      });
    }
    // Through the gateway. clob-client has no header option, so the depthgate key goes as the user name of HTTP
    // Basic (axios turns URL credentials into `Authorization: Basic`). It also refuses L2 methods without API
    // credentials (canL2Auth): it gets placeholders the gateway never forwards; the gateway signs with its own.
    const { port, key } = env.gateway;
    return new ClobClient(
      `http://${key}@127.0.0.1:${port}/api/v1/venue-a-clob`,
      Chain.POLYGON,
      walletOf(`0x${randomBytes(20).toString('hex')}`),
      { key: 'placeholder', secret: randomBytes(32).toString('base64url'), passphrase: 'placeholder' },
    );
  },
  methods: CLOB_METHODS,
  notCalled: CLOB_NOT_CALLED,
};
