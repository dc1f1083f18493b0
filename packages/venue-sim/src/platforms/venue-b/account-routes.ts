// https://docs.kalshi.com/api-reference/portfolio/get-balance (and the other private reads)
import { Rng } from '../../core/rng';
import { DAY_MS, isoDay, isoMillis, isoSeconds } from '../../core/time';
import { json, type SimRequest } from '../../http/types';
import { costOf, DEPOSIT_CENTS, KalshiAccount, type Order, statusOf, TRANSFER_CENTS } from './account';
import { badRequest, dollars, fp, kalshiErrors, Query, type RouteFamily, unixSeconds } from './common';
import { fillJson, orderFilter, orderJson, positionsJson } from './portfolio';

/**
 * The private reads [V paths] over the account (account.ts, built at the first one); every one needs a verified
 * signature.
 */
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
