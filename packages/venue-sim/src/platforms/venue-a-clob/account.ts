// https://docs.polymarket.com/developers/CLOB/clients/methods-l2 (the L2-authenticated reads)
import { formatScaled, scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import { parseDay } from '../../core/time';
import type { Router } from '../../http/router';
import { json, type SimRequest, type SimResponse } from '../../http/types';
import type { PlatformContext } from '../context';
import { type GammaMarketDef, USDC_ADDRESS, polymarketImage } from '../venue-a/catalog';
import { clobPrice } from './books';
import type { ClobMarkets } from './markets';
import { END_CURSOR, cursorPage, isPage } from './paging';

/** Page size of `/data/orders`, `/data/trades` and the user-rewards listings [U]. */
const LEDGER_PAGE = 100;
/** USDC and outcome tokens have 6 decimals on chain; balances and allowances are in those base units [V]. */
const BASE_UNITS = 6;
/** An unlimited ERC-20 / ERC-1155 approval (2^256 − 1), as the exchange contracts are usually approved. */
const MAX_ALLOWANCE = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
/** The contracts a trader approves [V]: CTF Exchange, NegRisk CTF Exchange, NegRisk Adapter (Polygon). */
const SPENDERS = [
  '0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E',
  '0xC5d563A36AE78145C45a50134d48A1215220f80a',
  '0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296',
];
/** The simulated account's cash: 1 000 USDC. */
const CASH_USDC = 1000;
/** Shares the simulated account bought in its one fill, and the reward it earned on its resting order (cents). */
const FILLED_SHARES = 25;
const DAILY_EARNING_CENTS = 42;

const invalid = (error: string) => json(400, { error });

/**
 * The simulator's CLOB account (the issued L2 key's owner), deterministic per seed: 1 000 USDC, one resting GTC buy
 * of 100 YES at 5¢ under the first market's catalogue price (on a rewarded market, so it scores and earns), and one
 * filled taker buy of 25 YES on the same market (its notification too). Everything else is empty.
 */
export function accountRoutes(
  r: Router,
  ctx: PlatformContext,
  markets: ClobMarkets,
): { isScoring: (orderId: string) => boolean } {
  const { address, apiKey } = ctx.credentials.polymarketClob;
  const owner = address.toLowerCase();
  const rng = new Rng(ctx.opts.seed, 'clob', 'account');
  const readonlyKey = rng.uuid();
  const day = parseDay(ctx.opts.catalogDate);
  const m = markets.catalog.markets[0] as GammaMarketDef | undefined;
  const [counterparty] = [...markets.catalog.profiles.keys()];

  const order = m && {
    id: `0x${rng.hex(64)}`,
    status: 'LIVE',
    owner: apiKey,
    maker_address: owner,
    market: m.conditionId,
    asset_id: m.tokens[0],
    side: 'BUY',
    original_size: '100',
    size_matched: '0',
    price: clobPrice(Math.max(1, m.cents - 5)),
    associate_trades: [] as string[],
    outcome: 'Yes',
    created_at: Math.floor((day + 9 * 3600_000) / 1000),
    expiration: '0',
    order_type: 'GTC',
  };
  const matchTime = String(Math.floor((day + 8 * 3600_000) / 1000));
  const trade = m && {
    id: rng.uuid(),
    taker_order_id: `0x${rng.hex(64)}`,
    market: m.conditionId,
    asset_id: m.tokens[0],
    side: 'BUY',
    size: String(FILLED_SHARES),
    fee_rate_bps: '0',
    price: clobPrice(m.cents),
    status: 'CONFIRMED',
    match_time: matchTime,
    last_update: matchTime,
    outcome: 'Yes',
    bucket_index: 0,
    owner: apiKey,
    maker_address: owner,
    maker_orders: [
      {
        order_id: `0x${rng.hex(64)}`,
        owner: rng.uuid(),
        maker_address: counterparty ?? `0x${rng.hex(40)}`,
        matched_amount: String(FILLED_SHARES),
        price: clobPrice(m.cents),
        fee_rate_bps: '0',
        asset_id: m.tokens[0],
        outcome: 'Yes',
        side: 'SELL',
      },
    ],
    transaction_hash: `0x${rng.hex(64)}`,
    trader_side: 'TAKER',
  };
  const orders = order ? [order] : [];
  const trades = trade ? [trade] : [];
  const isScoring = (id: string) => order !== undefined && id === order.id && !!m?.rewards;

  const ledger = <T>(items: T[], req: SimRequest): SimResponse => {
    const page = cursorPage(items, req.params, LEDGER_PAGE);
    return isPage(page) ? json(200, page) : page;
  };
  /** A route that needs `date` (`YYYY-MM-DD`): 400 without a valid one. */
  const dated = (answer: (date: string, req: SimRequest) => SimResponse) => (req: SimRequest) => {
    const date = req.params.get('date');
    return date && /^\d{4}-\d{2}-\d{2}$/.test(date) && !Number.isNaN(Date.parse(date))
      ? answer(date, req)
      : invalid("invalid 'date' (YYYY-MM-DD)");
  };
  const earning = scaledNumber(DAILY_EARNING_CENTS, 2);
  const earningMarkets = m?.rewards && order ? [m] : [];

  // Keys. clob-client types `apiKeys` as ApiKeyCreds[]; Polymarket's official rs-clob-client (its tests carry the
  // wire format) reads key ids, which is what the server returns: the secret is never sent back.
  r.get('/auth/api-keys', () => json(200, { apiKeys: [apiKey] }), 'required');
  r.get('/auth/ban-status/closed-only', () => json(200, { closed_only: false }), 'required');
  r.get('/auth/readonly-api-keys', () => json(200, [readonlyKey]), 'required');
  r.get('/auth/builder-api-key', () => json(200, []), 'required');
  // Public. The answer's shape is not documented ([U]; clob-client types it as a string).
  r.get('/auth/validate-readonly-api-key', (req) => {
    const a = req.params.get('address');
    const k = req.params.get('key');
    if (!a || !k) return invalid("'address' and 'key' are required");
    return a.toLowerCase() === owner && k === readonlyKey
      ? json(200, 'OK')
      : json(401, { error: 'invalid readonly api key' });
  });

  // Orders and trades [V]: cursor pages; filters as the library sends them.
  r.get(
    '/data/orders',
    (req) => {
      const id = req.params.get('id');
      const market = req.params.get('market');
      const asset = req.params.get('asset_id');
      return ledger(
        orders.filter(
          (o) => (!id || o.id === id) && (!market || o.market === market) && (!asset || o.asset_id === asset),
        ),
        req,
      );
    },
    'required',
  );
  r.get(
    '/data/order/:id',
    (req) => {
      const o = orders.find((x) => x.id === req.pathParams.id);
      return o ? json(200, o) : json(404, { error: 'order not found' });
    },
    'required',
  );
  const tradeFilter = (req: SimRequest) => {
    const id = req.params.get('id');
    const maker = req.params.get('maker_address');
    const market = req.params.get('market');
    const asset = req.params.get('asset_id');
    const before = req.params.get('before');
    const after = req.params.get('after');
    return trades.filter(
      (t) =>
        (!id || t.id === id) &&
        (!maker || t.maker_address === maker.toLowerCase()) &&
        (!market || t.market === market) &&
        (!asset || t.asset_id === asset) &&
        (!before || Number(t.match_time) < Number(before)) &&
        (!after || Number(t.match_time) > Number(after)),
    );
  };
  r.get('/data/trades', (req) => ledger(tradeFilter(req), req), 'required');
  // The older unpaged trades route (py-clob-client) [3P].
  r.get('/trades', (req) => json(200, tradeFilter(req)), 'required');

  // Notifications [V shape: rs-clob-client]: the account's fill.
  r.get(
    '/notifications',
    () =>
      json(
        200,
        trade && m
          ? [
              {
                type: 1,
                owner: apiKey,
                payload: {
                  asset_id: trade.asset_id,
                  condition_id: m.conditionId,
                  eventSlug: m.eventSlug,
                  icon: polymarketImage(m.slug),
                  image: polymarketImage(m.slug),
                  market: m.conditionId,
                  market_slug: m.slug,
                  matched_size: trade.size,
                  order_id: trade.taker_order_id,
                  original_size: trade.size,
                  outcome: 'YES',
                  outcome_index: 0,
                  owner: apiKey,
                  price: trade.price,
                  question: m.question,
                  remaining_size: '0',
                  seriesSlug: '',
                  side: 'buy',
                  trade_id: trade.id,
                  transaction_hash: trade.transaction_hash,
                  type: '',
                },
              },
            ]
          : [],
      ),
    'required',
  );

  // Balance and allowances, in 6-decimal base units. clob-client 5.8 types a single `allowance`; the CLOB answers
  // `allowances` per exchange contract (official rs-clob-client). Both are sent, the single one for older clients.
  r.get(
    '/balance-allowance',
    (req) => {
      const type = req.params.get('asset_type');
      if (type !== 'COLLATERAL' && type !== 'CONDITIONAL') return invalid("invalid 'asset_type'");
      const token = req.params.get('token_id');
      if (type === 'CONDITIONAL' && !token) return invalid("'token_id' is required for CONDITIONAL");
      const shares = type === 'COLLATERAL' ? CASH_USDC : token === trade?.asset_id ? FILLED_SHARES : 0;
      return json(200, {
        balance: String(shares * 10 ** BASE_UNITS),
        allowance: MAX_ALLOWANCE,
        allowances: Object.fromEntries(SPENDERS.map((s) => [s, MAX_ALLOWANCE])),
      });
    },
    'required',
  );
  // Asks the CLOB to re-read the on-chain balance; nothing to refresh here. Answers an empty body [3P].
  r.get('/balance-allowance/update', () => json(200, null), 'required');

  r.get(
    '/order-scoring',
    (req) => {
      const id = req.params.get('order_id');
      return id ? json(200, { scoring: isScoring(id) }) : invalid("'order_id' is required");
    },
    'required',
  );

  // Rewards earned [V shapes]: the resting order earns on its rewarded market.
  r.get(
    '/rewards/user',
    dated((date, req) =>
      ledger(
        earningMarkets.map((x) => ({
          date,
          condition_id: x.conditionId,
          asset_address: USDC_ADDRESS,
          maker_address: owner,
          earnings: earning,
          asset_rate: 1,
        })),
        req,
      ),
    ),
    'required',
  );
  r.get(
    '/rewards/user/total',
    dated((date) =>
      json(
        200,
        earningMarkets.length
          ? [{ date, asset_address: USDC_ADDRESS, maker_address: owner, earnings: earning, asset_rate: 1 }]
          : [],
      ),
    ),
    'required',
  );
  r.get(
    '/rewards/user/markets',
    dated((_date, req) =>
      ledger(
        markets.rewarded.map(({ m: x, r: rw }) => {
          const earns = earningMarkets.includes(x);
          return {
            ...markets.marketRewardJson(x, rw),
            market_id: x.id,
            event_id: x.eventId,
            rewards_config: [markets.rewardsConfig(rw, false)],
            maker_address: owner,
            earning_percentage: earns ? 100 : 0,
            earnings: earns ? [{ asset_address: USDC_ADDRESS, earnings: earning, asset_rate: 1 }] : [],
          };
        }),
        req,
      ),
    ),
    'required',
  );
  r.get(
    '/rewards/user/percentages',
    () => json(200, Object.fromEntries(earningMarkets.map((x) => [x.conditionId, 100]))),
    'required',
  );

  // RFQ (clob-client `client.rfq`): the account requested a quote to buy 100 YES at the market's price when the
  // simulator started, and one quoter offers them a cent higher. The current docs no longer describe these
  // `/rfq/data/*` reads; names and types follow clob-client 5.8's `RfqRequest`/`RfqQuote` (Polymarket's rs-clob-client
  // reads the same names; it takes `expiry` as Unix seconds where clob-client declares a date: [U]). [V] docs'
  // RFQ overview: a request lives 10 minutes, in STATE_ACCEPTING_QUOTES; the expired states' names are [U].
  const rfq = m && rfqOf(m, ctx.clock(), owner, counterparty ?? `0x${rng.hex(40)}`, rng);
  const rfqPage = <T>(items: T[], req: SimRequest) => {
    const limit = Math.min(100, Math.max(1, Number(req.params.get('limit') ?? 50) || 50));
    return json(200, {
      data: items.slice(0, limit),
      next_cursor: END_CURSOR,
      limit,
      count: items.length,
      total_count: items.length,
    });
  };
  /** The account's requests, by the filters clob-client sends (repeated `requestIds`, `markets`; `state`). */
  const requests = (req: SimRequest) => {
    if (!rfq) return [];
    const ids = req.params.getAll('requestIds');
    const conditions = req.params.getAll('markets');
    const state = req.params.get('state');
    const active = ctx.clock() < rfq.expiresMs;
    return (ids.length === 0 || ids.includes(rfq.request.requestId)) &&
      (conditions.length === 0 || conditions.includes(rfq.request.condition)) &&
      (!state || (state === 'active') === active)
      ? [rfq.requestJson(ctx.clock())]
      : [];
  };
  r.get('/rfq/data/requests', (req) => rfqPage(requests(req), req), 'required');
  r.get(
    '/rfq/data/requester/quotes',
    (req) => {
      const ids = req.params.getAll('quoteIds');
      const quotes = requests(req).length > 0 && rfq ? [rfq.quoteJson(ctx.clock())] : [];
      return rfqPage(
        quotes.filter((q) => ids.length === 0 || ids.includes(q.quoteId)),
        req,
      );
    },
    'required',
  );
  // The account quotes nobody's requests.
  r.get('/rfq/data/quoter/quotes', (req) => rfqPage([], req), 'required');
  r.get(
    '/rfq/data/best-quote',
    (req) => {
      const id = req.params.get('requestId');
      if (!id) return invalid("'requestId' is required");
      return rfq && id === rfq.request.requestId && ctx.clock() < rfq.expiresMs
        ? json(200, rfq.quoteJson(ctx.clock()))
        : json(404, { error: 'no quote found' });
    },
    'required',
  );
  r.get('/rfq/config', () => json(200, { enabled: true, quote_expiry_seconds: 30, min_size_usdc: '1' }), 'required');
  return { isScoring };
}

/** Docs [V]: "RequestTTL 10 minutes". */
const RFQ_TTL_MS = 10 * 60_000;

/** The account's open RFQ request on market `m` (100 YES at its price) and a quoter's offer a cent above it. */
function rfqOf(m: GammaMarketDef, createdMs: number, owner: string, quoter: string, rng: Rng) {
  const expiresMs = createdMs + RFQ_TTL_MS;
  const [token = '', complement = ''] = m.tokens;
  const iso = (ms: number) => new Date(ms).toISOString();
  const request = {
    requestId: rng.uuid(),
    userAddress: owner,
    proxyAddress: owner,
    token,
    complement,
    condition: m.conditionId,
    side: 'BUY',
    // Tokens received, USDC given (whole tokens; cents).
    sizeIn: '100',
    sizeOut: formatScaled(100 * m.cents, 2),
    price: scaledNumber(m.cents, 2),
  };
  const quote = {
    quoteId: rng.uuid(),
    requestId: request.requestId,
    userAddress: quoter,
    proxyAddress: quoter,
    complement,
    condition: m.conditionId,
    token,
    // The quoter sells the tokens the requester buys: the same token, so the match is complementary.
    side: 'SELL',
    sizeIn: formatScaled(100 * (m.cents + 1), 2),
    sizeOut: '100',
    price: scaledNumber(m.cents + 1, 2),
    matchType: 'COMPLEMENTARY',
  };
  const open = (now: number) => now < expiresMs;
  return {
    expiresMs,
    request,
    requestJson: (now: number) => ({
      ...request,
      acceptedQuoteId: '',
      state: open(now) ? 'STATE_ACCEPTING_QUOTES' : 'STATE_EXPIRED',
      expiry: iso(expiresMs),
      createdAt: iso(createdMs),
      updatedAt: iso(createdMs + 1000),
    }),
    quoteJson: (now: number) => ({
      ...quote,
      state: open(now) ? 'STATE_ACTIVE' : 'STATE_EXPIRED',
      expiry: iso(expiresMs),
      createdAt: iso(createdMs + 1000),
      updatedAt: iso(createdMs + 1000),
    }),
  };
}
