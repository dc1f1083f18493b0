// https://docs.kalshi.com/api-reference/portfolio/get-balance (and the other private reads)
import { BID } from '../../book/types';
import { Rng } from '../../core/rng';
import { DAY_MS, isoDay, isoMillis, isoSeconds } from '../../core/time';
import { json, type SimRequest } from '../../http/types';
import type { KalshiMarketDef } from './catalog';
import { badRequest, dollars, fp, kalshiErrors, type KalshiApi, Query, type RouteFamily, unixSeconds } from './common';
import { SETTLEMENT_TIMER_SECONDS } from './markets';

/**
 * An order of the simulated account: a taker order filled by one trade of the tape, a canceled one, or the one
 * resting in its market's book (`remaining` > 0).
 */
interface Order {
  id: string;
  clientId: string;
  fillId: string;
  market: KalshiMarketDef;
  /** Bought YES (true) or NO. */
  yes: boolean;
  /** YES price, 1e-4 dollars. */
  yesPrice: number;
  /** Filled contracts, 1e-2 (whole contracts). */
  filled: number;
  initial: number;
  /** Contracts still resting on the book, 1e-2. */
  remaining: number;
  ts: number;
  /** Taker fee, 1e-4 dollars (whole cents). */
  fee: number;
  historical: boolean;
  groupId?: string;
}

interface Settlement {
  order: Order;
  result: 'yes' | 'no';
  ts: number;
  /** Cents. */
  revenue: number;
}

/** Cost of contracts of an order, 1e-4 dollars: contracts (1e-2) times the price of the side bought. */
const costAt = (o: Order, contracts: number) => (contracts * (o.yes ? o.yesPrice : 10000 - o.yesPrice)) / 100;
/** Cost of an order's fill. */
const costOf = (o: Order) => costAt(o, o.filled);

/** [V] an order is resting until matched or canceled, executed once fully matched. */
const statusOf = (o: Order) => (o.remaining > 0 ? 'resting' : o.filled > 0 ? 'executed' : 'canceled');

/**
 * Kalshi's general trading fee [V] (fee schedule, "General Trading Fees"): 0.07 × C × P × (1 − P), rounded up to the
 * next cent; in 1e-4 dollars.
 */
function takerFee(contractsE2: number, yesPrice: number): number {
  const c = contractsE2 / 100;
  const p = yesPrice / 100;
  return Math.ceil((7 * c * p * (100 - p)) / 10_000) * 100;
}

const DEPOSIT_CENTS = 1_000_000;
/** Moved from the event-contract exchange (index 0) to the margined one (index 1) after the deposit. */
const TRANSFER_CENTS = 10_000;

/**
 * The signed-in account, seeded: a deposit, a transfer of part of it to the margined exchange, three taker orders
 * filled hours before the simulator started (each one of the tape's trades), a canceled order, the order resting in
 * the first market's book (catalog.ts `accountRestingOrder`), one order on a market that has since settled (and its
 * settlement), an open RFQ with one quote, an order group and one FCM subtrader. Balance, positions and portfolio
 * value follow from them and from the live books.
 */
export class KalshiAccount {
  readonly userId: string;
  readonly communicationsId: string;
  readonly subtraderId: string;
  readonly groupId: string;
  readonly orders: Order[] = [];
  readonly settlements: Settlement[] = [];
  readonly depositTs: number;
  readonly transfer: { id: string; ts: number };
  readonly rfq?: {
    id: string;
    market: KalshiMarketDef;
    ts: number;
    quote: { id: string; creatorId: string; creatorUserId: string; bid: number; ask: number };
  };

  constructor(private readonly api: KalshiApi) {
    const seed = api.ctx.opts.seed;
    const id = (...labels: string[]) => new Rng(seed, 'kalshi', 'account', ...labels).uuid();
    this.userId = id('user');
    this.communicationsId = new Rng(seed, 'kalshi', 'account', 'communications').hex(32);
    this.subtraderId = `${this.userId}_a1`;
    this.groupId = id('order-group');
    this.depositTs = api.day - 150 * DAY_MS;
    this.transfer = { id: id('transfer'), ts: this.depositTs + 3 * DAY_MS };
    const { tape, catalog, startedMs } = api;

    const taken = (market: KalshiMarketDef, tradeTs: number, historical: boolean, n: number) => {
      const trade = tape.lastTrade(market.ticker, tradeTs);
      if (!trade) return;
      const filled = Math.floor(trade.count / 100) * 100;
      const yesPrice = tape.price(trade);
      this.orders.push({
        id: id('order', String(n)),
        clientId: id('client-order', String(n)),
        fillId: id('fill', String(n)),
        market,
        yes: trade.yes,
        yesPrice,
        filled,
        initial: filled,
        remaining: 0,
        ts: trade.ts,
        fee: takerFee(filled, yesPrice),
        historical,
        ...(historical ? {} : { groupId: this.groupId }),
      });
    };
    catalog.markets.slice(0, 3).forEach((m, k) => taken(m, startedMs - (k + 1) * 3_600_000, false, k));
    const past = catalog.historical.markets[0];
    if (past) {
      taken(past, Date.parse(past.close_time) - DAY_MS, true, 9);
      const order = this.orders[this.orders.length - 1];
      if (order?.historical) {
        const close = Date.parse(past.close_time);
        const q = tape.quoteAtTime(past.ticker, close - 1);
        const result = q.bid + q.ask >= 10000 ? 'yes' : 'no';
        this.settlements.push({
          order,
          result,
          ts: close + SETTLEMENT_TIMER_SECONDS * 1000,
          revenue: (result === 'yes') === order.yes ? order.filled : 0,
        });
      }
    }
    const first = catalog.markets[0];
    if (first) {
      const ts = startedMs - 30 * 60_000;
      const q = tape.quoteAtTime(first.ticker, ts);
      this.orders.push({
        id: id('order', 'canceled'),
        clientId: id('client-order', 'canceled'),
        fillId: '',
        market: first,
        yes: true,
        yesPrice: Math.max(100, q.bid - 500),
        filled: 0,
        initial: 1000,
        remaining: 0,
        ts,
        fee: 0,
        historical: false,
        groupId: this.groupId,
      });
      const resting = api.ctx.engine.resting('venue-b', first.ticker);
      if (resting) {
        this.orders.push({
          id: id('order', 'resting'),
          clientId: id('client-order', 'resting'),
          fillId: '',
          market: first,
          yes: resting.side === BID,
          yesPrice: resting.price,
          filled: 0,
          initial: resting.qty,
          remaining: resting.qty,
          ts: startedMs - 10 * 60_000,
          fee: 0,
          historical: false,
          groupId: this.groupId,
        });
      }
      const rfqTs = startedMs - 20 * 60_000;
      const rq = tape.quoteAtTime(first.ticker, rfqTs);
      this.rfq = {
        id: id('rfq'),
        market: first,
        ts: rfqTs,
        quote: {
          id: id('quote'),
          creatorId: new Rng(seed, 'kalshi', 'account', 'quoter').hex(32),
          creatorUserId: id('quoter-user'),
          bid: Math.max(100, rq.bid - 100),
          ask: Math.min(9900, rq.ask + 100),
        },
      };
    }
    this.orders.sort((a, b) => b.ts - a.ts);
  }

  /**
   * Available cash in 1e-4 dollars: the deposit, less every fill's cost and fee and what the resting orders hold
   * ([V] `balance` is "the amount available for trading"; that a resting buy holds its cost is [U]), plus settlement
   * payouts; on one exchange index (the transfer sits on 1, the rest on 0) or on all of them.
   */
  balance(exchangeIndex?: number): number {
    let cash = DEPOSIT_CENTS * 100 - this.restingValue();
    for (const o of this.orders) cash -= costOf(o) + o.fee;
    for (const s of this.settlements) cash += s.revenue * 100;
    if (exchangeIndex === 0) return cash - TRANSFER_CENTS * 100;
    if (exchangeIndex === 1) return TRANSFER_CENTS * 100;
    return exchangeIndex === undefined ? cash : 0;
  }

  /** Live positions marked at the books' best bids (YES) and 1 − best asks (NO), in cents. */
  portfolioValue(): number {
    let value = 0;
    for (const o of this.liveFills()) {
      const book = this.api.ctx.engine.book('venue-b', o.market.ticker);
      if (!book) continue;
      const price = o.yes ? (book.bids.best() ?? 0) : 10000 - (book.asks.best() ?? 10000);
      value += (o.filled * price) / 100;
    }
    return Math.floor(value / 100);
  }

  /** What the resting orders would cost if matched, 1e-4 dollars. */
  restingValue(): number {
    return this.orders.reduce((v, o) => v + costAt(o, o.remaining), 0);
  }

  resting(): Order[] {
    return this.orders.filter((o) => o.remaining > 0);
  }

  liveFills(): Order[] {
    return this.orders.filter((o) => o.filled > 0 && !o.historical);
  }

  updatedTs(): number {
    return Math.max(this.depositTs, ...this.orders.map((o) => o.ts), ...this.settlements.map((s) => s.ts));
  }
}

const sideFields = (o: Order) => ({
  outcome_side: o.yes ? 'yes' : 'no',
  // [V] BookSide is the YES leg: buying YES is a bid, buying NO sells YES (an ask).
  book_side: o.yes ? 'bid' : 'ask',
  side: o.yes ? 'yes' : 'no',
  action: 'buy',
});

function orderJson(account: KalshiAccount, o: Order): Record<string, unknown> {
  return {
    order_id: o.id,
    user_id: account.userId,
    client_order_id: o.clientId,
    ticker: o.market.ticker,
    ...sideFields(o),
    type: 'limit',
    status: statusOf(o),
    yes_price_dollars: dollars(o.yesPrice),
    no_price_dollars: dollars(10000 - o.yesPrice),
    fill_count_fp: fp(o.filled),
    remaining_count_fp: fp(o.remaining),
    initial_count_fp: fp(o.initial),
    taker_fill_cost_dollars: dollars(costOf(o)),
    maker_fill_cost_dollars: dollars(0),
    taker_fees_dollars: dollars(o.fee),
    maker_fees_dollars: dollars(0),
    created_time: isoMillis(o.ts),
    last_update_time: isoMillis(statusOf(o) === 'canceled' ? o.ts + 60_000 : o.ts),
    self_trade_prevention_type: 'taker_at_cross',
    ...(o.groupId ? { order_group_id: o.groupId } : {}),
    cancel_order_on_pause: false,
    subaccount_number: 0,
    exchange_index: 0,
  };
}

function fillJson(o: Order): Record<string, unknown> {
  return {
    fill_id: o.fillId,
    exchange_index: 0,
    trade_id: o.fillId,
    order_id: o.id,
    ticker: o.market.ticker,
    market_ticker: o.market.ticker,
    ...sideFields(o),
    count_fp: fp(o.filled),
    yes_price_dollars: dollars(o.yesPrice),
    no_price_dollars: dollars(10000 - o.yesPrice),
    is_taker: true,
    fee_cost: dollars(o.fee),
    created_time: isoMillis(o.ts),
    subaccount_number: 0,
    ts: unixSeconds(o.ts),
  };
}

/** Market and event positions from fills; a settled market's position is closed with its payout realised. */
function positionsJson(orders: readonly Order[], settlements: readonly Settlement[]) {
  const byMarket = new Map<string, Order[]>();
  for (const o of orders) byMarket.set(o.market.ticker, [...(byMarket.get(o.market.ticker) ?? []), o]);
  const market_positions = [...byMarket.values()].map((os) => {
    const settled = settlements.find((s) => s.order.market.ticker === os[0]?.market.ticker);
    const cost = os.reduce((v, o) => v + costOf(o), 0);
    const position = settled ? 0 : os.reduce((v, o) => v + (o.yes ? o.filled : -o.filled), 0);
    return {
      ticker: (os[0] as Order).market.ticker,
      exchange_index: 0,
      total_traded_dollars: dollars(cost),
      position_fp: fp(position),
      market_exposure_dollars: dollars(settled ? 0 : cost),
      realized_pnl_dollars: dollars(settled ? settled.revenue * 100 - cost : 0),
      fees_paid_dollars: dollars(os.reduce((v, o) => v + o.fee, 0)),
      last_updated_ts: isoSeconds(Math.max(...os.map((o) => o.ts), settled?.ts ?? 0)),
    };
  });
  const byEvent = new Map<string, Order[]>();
  for (const o of orders) byEvent.set(o.market.event_ticker, [...(byEvent.get(o.market.event_ticker) ?? []), o]);
  const event_positions = [...byEvent.entries()].map(([event, os]) => {
    const settledOf = (o: Order) => settlements.find((s) => s.order === o);
    const cost = os.reduce((v, o) => v + costOf(o), 0);
    return {
      event_ticker: event,
      total_cost_dollars: dollars(cost),
      total_cost_shares_fp: fp(os.reduce((v, o) => v + o.filled, 0)),
      event_exposure_dollars: dollars(os.reduce((v, o) => v + (settledOf(o) ? 0 : costOf(o)), 0)),
      realized_pnl_dollars: dollars(
        os.reduce((v, o) => v + (settledOf(o) ? (settledOf(o) as Settlement).revenue * 100 - costOf(o) : 0), 0),
      ),
      fees_paid_dollars: dollars(os.reduce((v, o) => v + o.fee, 0)),
    };
  });
  return { market_positions, event_positions };
}

/** `min_ts`/`max_ts` (Unix seconds) and `ticker`/`event_ticker` (a comma list of up to 10 [V]) over orders. */
function orderFilter(q: Query): (o: Order) => boolean {
  const lo = q.int('min_ts');
  const hi = q.int('max_ts');
  const ticker = q.get('ticker');
  const events = q.commaList('event_ticker');
  return (o) =>
    (!ticker || o.market.ticker === ticker) &&
    (events.length === 0 || events.includes(o.market.event_ticker)) &&
    (lo === undefined || o.ts / 1000 > lo) &&
    (hi === undefined || o.ts / 1000 < hi);
}

/** The private reads [V paths]; every one needs a verified signature. */
export const accountRoutes: RouteFamily = (r, api) => {
  let built: KalshiAccount | undefined;
  const account = () => (built ??= new KalshiAccount(api));
  const authed = 'required' as const;
  const get = (path: string, handler: Parameters<typeof r.get>[1]) => r.get(path, handler, authed);

  const listOrders = (req: SimRequest, historical: boolean) => {
    const q = new Query(req.params);
    const accept = orderFilter(q);
    const status = q.get('status');
    const page = q.page(
      account().orders.filter((o) => o.historical === historical && accept(o) && (!status || status === statusOf(o))),
      1000,
      100,
    );
    if (q.error) return q.error;
    return json(200, { orders: page.items.map((o) => orderJson(account(), o)), cursor: page.cursor });
  };
  const listFills = (req: SimRequest, historical: boolean) => {
    const q = new Query(req.params);
    const accept = orderFilter(q);
    const orderId = q.get('order_id');
    const page = q.page(
      account().orders.filter(
        (o) => o.filled > 0 && o.historical === historical && accept(o) && (!orderId || o.id === orderId),
      ),
      1000,
      100,
    );
    if (q.error) return q.error;
    return json(200, { fills: page.items.map(fillJson), cursor: page.cursor });
  };
  const listPositions = (req: SimRequest, historical: boolean) => {
    const q = new Query(req.params);
    const accept = orderFilter(q);
    // Subaccounts other than the primary hold nothing.
    const primary = (q.int('subaccount', 0, 63) ?? 0) === 0;
    const a = account();
    const orders = primary ? a.orders.filter((o) => o.filled > 0 && o.historical === historical && accept(o)) : [];
    const { market_positions, event_positions } = positionsJson(orders, a.settlements);
    const page = q.page(market_positions, 1000, 100);
    if (q.error) return q.error;
    return json(200, { market_positions: page.items, event_positions, cursor: page.cursor });
  };

  get('/portfolio/balance', (req) => {
    const q = new Query(req.params);
    const exchangeIndex = q.int('exchange_index', 0, 63);
    // Subaccounts other than the primary hold nothing.
    const primary = (q.int('subaccount', 0, 63) ?? 0) === 0;
    if (q.error) return q.error;
    const a = account();
    const cash = primary ? a.balance(exchangeIndex) : 0;
    return json(200, {
      balance: Math.floor(cash / 100),
      balance_dollars: dollars(cash),
      portfolio_value: primary && (exchangeIndex ?? 0) === 0 ? a.portfolioValue() : 0,
      updated_ts: unixSeconds(a.updatedTs()),
      balance_breakdown: [0, 1].map((i) => ({ exchange_index: i, balance: dollars(primary ? a.balance(i) : 0) })),
    });
  });
  get('/portfolio/orders', (req) => listOrders(req, false));
  // [V] the contracts that must match before a resting order does (price-time priority); here the quantity queued
  // ahead of it at its price level ([U] whether better-priced levels count too), kept by the book's process.
  const queuePosition = (o: Order) => fp(api.ctx.engine.resting('venue-b', o.market.ticker)?.ahead ?? 0);
  get('/portfolio/orders/queue_positions', (req) => {
    const q = new Query(req.params);
    // Subaccounts other than the primary hold nothing.
    const primary = (q.int('subaccount', 0, 63) ?? 0) === 0;
    const tickers = q.commaList('market_tickers');
    const event = q.get('event_ticker');
    if (q.error) return q.error;
    const orders = account()
      .resting()
      .filter(
        (o) =>
          primary &&
          (tickers.length === 0 || tickers.includes(o.market.ticker)) &&
          (!event || o.market.event_ticker === event),
      );
    return json(200, {
      queue_positions: orders.map((o) => ({
        order_id: o.id,
        market_ticker: o.market.ticker,
        queue_position_fp: queuePosition(o),
      })),
    });
  });
  get('/portfolio/orders/:order_id', (req) => {
    const o = account().orders.find((x) => x.id === req.pathParams.order_id && !x.historical);
    return o ? json(200, { order: orderJson(account(), o) }) : kalshiErrors.notFound(req);
  });
  get('/portfolio/orders/:order_id/queue_position', (req) => {
    const o = account().orders.find((x) => x.id === req.pathParams.order_id);
    if (!o) return kalshiErrors.notFound(req);
    // [U] an order that does not rest has no queue position: Kalshi's answer for it is not documented.
    return o.remaining > 0 ? json(200, { queue_position_fp: queuePosition(o) }) : badRequest('order is not resting');
  });
  get('/portfolio/fills', (req) => listFills(req, false));
  get('/portfolio/positions', (req) => listPositions(req, false));
  get('/portfolio/settlements', (req) => {
    const q = new Query(req.params);
    const accept = orderFilter(q);
    const page = q.page(
      account().settlements.filter((s) => accept({ ...s.order, ts: s.ts })),
      1000,
      100,
    );
    if (q.error) return q.error;
    return json(200, {
      settlements: page.items.map((s) => ({
        ticker: s.order.market.ticker,
        exchange_index: 0,
        event_ticker: s.order.market.event_ticker,
        market_result: s.result,
        yes_count_fp: fp(s.order.yes ? s.order.filled : 0),
        yes_total_cost_dollars: dollars(s.order.yes ? costOf(s.order) : 0),
        no_count_fp: fp(s.order.yes ? 0 : s.order.filled),
        no_total_cost_dollars: dollars(s.order.yes ? 0 : costOf(s.order)),
        revenue: s.revenue,
        settled_time: isoSeconds(s.ts),
        fee_cost: dollars(s.order.fee),
        value: s.result === 'yes' ? 100 : 0,
      })),
      cursor: page.cursor,
    });
  });
  get('/portfolio/deposits', (req) => {
    const a = account();
    const q = new Query(req.params);
    const page = q.page(
      [
        {
          id: new Rng(api.ctx.opts.seed, 'kalshi', 'account', 'deposit').uuid(),
          status: 'applied',
          type: 'ach',
          amount_cents: DEPOSIT_CENTS,
          fee_cents: 0,
          created_ts: unixSeconds(a.depositTs),
          finalized_ts: unixSeconds(a.depositTs + 2 * DAY_MS),
        },
      ],
      500,
      100,
    );
    if (q.error) return q.error;
    return json(200, { deposits: page.items, cursor: page.cursor });
  });
  const emptyList = (path: string, key: string, max: number) =>
    get(path, (req) => {
      const q = new Query(req.params);
      q.page([], max, 100);
      return q.error ?? json(200, { [key]: [], cursor: '' });
    });
  emptyList('/portfolio/withdrawals', 'withdrawals', 500);
  const transferJson = () => ({
    transfer_id: account().transfer.id,
    source: 'event_contract',
    destination: 'margined',
    source_exchange_shard: 0,
    destination_exchange_shard: 1,
    amount: dollars(TRANSFER_CENTS * 100),
    status: 'complete',
    created_ts: unixSeconds(account().transfer.ts),
  });
  get('/portfolio/intra_exchange_instance_transfers', (req) => {
    const q = new Query(req.params);
    const page = q.page([transferJson()], 500, 100);
    return q.error ?? json(200, { transfers: page.items, cursor: page.cursor });
  });
  get('/portfolio/intra_exchange_instance_transfers/:transfer_id', (req) =>
    req.pathParams.transfer_id === account().transfer.id
      ? json(200, { transfer: transferJson() })
      : kalshiErrors.notFound(req),
  );
  emptyList('/portfolio/subaccounts/transfers', 'transfers', 1000);
  get('/portfolio/summary/total_resting_order_value', () => {
    const value = account().restingValue();
    // [V] `total_resting_order_value` in cents; the breakdown per exchange index in dollars.
    return json(200, {
      total_resting_order_value: Math.round(value / 100),
      resting_order_value_breakdown: [{ exchange_index: 0, balance: dollars(value) }],
    });
  });
  get('/portfolio/subaccounts/balances', () =>
    json(200, {
      subaccount_balances: [0, 1].map((i) => ({
        subaccount_number: 0,
        exchange_index: i,
        balance: dollars(account().balance(i)),
        updated_ts: unixSeconds(account().updatedTs()),
      })),
    }),
  );
  get('/portfolio/subaccounts/netting', () =>
    json(200, { netting_configs: [{ subaccount_number: 0, enabled: false, exchange_index: 0 }] }),
  );
  get('/portfolio/target_balance_allocation', () =>
    json(200, { allocations: [{ exchange_index: 0, percent: 100 }], resting_margin_reservation: 'max' }),
  );
  get('/portfolio/order_groups', () =>
    json(200, {
      order_groups: [
        { id: account().groupId, is_auto_cancel_enabled: false, contracts_limit_fp: fp(100_000), exchange_index: 0 },
      ],
    }),
  );
  get('/portfolio/order_groups/:order_group_id', (req) => {
    const a = account();
    if (req.pathParams.order_group_id !== a.groupId) return kalshiErrors.notFound(req);
    return json(200, {
      is_auto_cancel_enabled: false,
      contracts_limit_fp: fp(100_000),
      orders: a.orders.filter((o) => o.groupId === a.groupId).map((o) => o.id),
      exchange_index: 0,
    });
  });

  get('/historical/fills', (req) => listFills(req, true));
  get('/historical/orders', (req) => listOrders(req, true));
  get('/historical/positions', (req) => listPositions(req, true));

  // [V] the token-bucket limits (default cost 10 per request): the Basic tier's 20 reads and 10 writes per second,
  // which is what the simulator's own limiter enforces on reads by default.
  get('/account/limits', () =>
    json(200, {
      usage_tier: 'basic',
      read: { refill_rate: 200, bucket_capacity: 200 },
      write: { refill_rate: 100, bucket_capacity: 100 },
      grants: [],
    }),
  );
  get('/account/api_usage_level/volume_progress', () => {
    const now = api.now();
    const traded = account()
      .liveFills()
      .filter((o) => o.ts > now - 30 * DAY_MS)
      .reduce((v, o) => v + o.filled, 0);
    // [U] the volume goals of the next tier.
    return json(200, {
      volume_progress: [
        {
          computed_ts: unixSeconds(now),
          trailing_30d_volume_fp: fp(traded),
          goals: [{ level: 'advanced', earn_volume_goal_fp: fp(10_000_000), keep_volume_goal_fp: fp(5_000_000) }],
        },
      ],
    });
  });
  // Public [V]. Every endpoint costs the default here, as the simulator's limiter counts every request alike.
  r.get('/account/endpoint_costs', () => json(200, { default_cost: 10, endpoint_costs: [] }));
  get('/api_keys', (req) => {
    // Keys bound to an FCM subtrader: the account has none.
    if (req.params.get('fcm_subtrader_id')) return json(200, { api_keys: [] });
    return json(200, {
      api_keys: [{ api_key_id: api.ctx.credentials.kalshi.accessKey, name: 'venue-sim', scopes: ['read', 'write'] }],
    });
  });

  get('/communications/id', () => json(200, { communications_id: account().communicationsId }));
  emptyList('/communications/block-trade-proposals', 'block_trade_proposals', 1000);
  const rfqJson = () => {
    const a = account();
    const q = a.rfq;
    if (!q) return undefined;
    return {
      id: q.id,
      creator_id: a.communicationsId,
      market_ticker: q.market.ticker,
      contracts_fp: fp(10_000),
      status: 'open',
      created_ts: isoMillis(q.ts),
      creator_user_id: a.userId,
      creator_subaccount: 0,
      updated_ts: isoMillis(q.ts),
      rest_remainder: false,
    };
  };
  const quoteJson = () => {
    const a = account();
    const q = a.rfq;
    if (!q) return undefined;
    return {
      id: q.quote.id,
      rfq_id: q.id,
      creator_id: q.quote.creatorId,
      rfq_creator_id: a.communicationsId,
      market_ticker: q.market.ticker,
      contracts_fp: fp(10_000),
      yes_bid_dollars: dollars(q.quote.bid),
      no_bid_dollars: dollars(10000 - q.quote.ask),
      created_ts: isoMillis(q.ts + 60_000),
      updated_ts: isoMillis(q.ts + 60_000),
      status: 'open',
      rfq_creator_user_id: a.userId,
    };
  };
  get('/communications/rfqs', (req) => {
    const rfq = rfqJson();
    const q = new Query(req.params);
    const is = (name: string, value: unknown) => q.get(name) === undefined || q.get(name) === value;
    const match =
      rfq &&
      is('market_ticker', rfq.market_ticker) &&
      is('event_ticker', account().rfq?.market.event_ticker) &&
      is('status', rfq.status) &&
      is('creator_user_id', rfq.creator_user_id);
    q.int('subaccount', 0, 63);
    const page = q.page(match ? [rfq] : [], 1000, 100);
    return q.error ?? json(200, { rfqs: page.items, cursor: page.cursor });
  });
  get('/communications/rfqs/:rfq_id', (req) => {
    const rfq = rfqJson();
    return rfq && rfq.id === req.pathParams.rfq_id ? json(200, { rfq }) : kalshiErrors.notFound(req);
  });
  get('/communications/rfqs/:rfq_id/quotes/:quote_id', (req) => {
    const quote = quoteJson();
    return quote && quote.rfq_id === req.pathParams.rfq_id && quote.id === req.pathParams.quote_id
      ? json(200, { quote })
      : kalshiErrors.notFound(req);
  });
  get('/communications/quotes', (req) => {
    const quote = quoteJson();
    const q = new Query(req.params);
    const is = (name: string, value: unknown) => q.get(name) === undefined || q.get(name) === value;
    q.int('min_ts');
    q.int('max_ts');
    const match =
      quote &&
      is('rfq_id', quote.rfq_id) &&
      is('status', quote.status) &&
      is('quote_creator_user_id', account().rfq?.quote.creatorUserId) &&
      is('rfq_creator_user_id', quote.rfq_creator_user_id) &&
      // `user_filter=self`: quotes the account created (none); `rfq_user_filter=self`: quotes on its RFQs (all).
      q.get('user_filter') !== 'self';
    const page = q.page(match ? [quote] : [], 1000, 500);
    return q.error ?? json(200, { quotes: page.items, cursor: page.cursor });
  });
  get('/communications/quotes/:quote_id', (req) => {
    const quote = quoteJson();
    return quote && quote.id === req.pathParams.quote_id ? json(200, { quote }) : kalshiErrors.notFound(req);
  });

  // FCM reads [V]: the account is an FCM member with one subtrader that has not traded.
  get('/fcm/subtraders', () =>
    json(200, {
      subtraders: [
        {
          subtrader_id: account().subtraderId,
          exchange_indices: [0],
          trading_blocked: false,
          fcm_trading_blocked: false,
          propagation_pending: false,
        },
      ],
    }),
  );
  get('/fcm/subtraders/event_contract_daily_cap', (req) => {
    const id = req.params.get('subtrader_id');
    if (!id) return badRequest('subtrader_id is required');
    if (id !== account().subtraderId) return kalshiErrors.notFound(req);
    // [V] cap_date is the New York calendar date (UTC−5 here; daylight saving is not modelled).
    return json(200, {
      subtrader_id: id,
      limit: dollars(250_000_000),
      executed_utilization: dollars(0),
      resting_order_utilization: dollars(0),
      pending_order_utilization: dollars(0),
      cap_date: isoDay(api.now() - 5 * 3_600_000),
    });
  });
  // [V] "Required unless client_order_ids is supplied" and the reverse. The subtrader has not traded.
  get('/fcm/orders', (req) => {
    const q = new Query(req.params);
    if (!q.get('subtrader_id') && !q.get('client_order_ids')) {
      return badRequest('subtrader_id or client_order_ids is required');
    }
    q.oneOf('status', ['resting', 'canceled', 'executed'] as const);
    q.page([], 1000, 100);
    return q.error ?? json(200, { orders: [], cursor: '' });
  });
  get('/fcm/positions', (req) => {
    const q = new Query(req.params);
    if (!q.get('subtrader_id')) return badRequest('subtrader_id is required');
    q.oneOf('settlement_status', ['all', 'unsettled', 'settled'] as const);
    q.page([], 1000, 100);
    return q.error ?? json(200, { market_positions: [], event_positions: [], cursor: '' });
  });
};
