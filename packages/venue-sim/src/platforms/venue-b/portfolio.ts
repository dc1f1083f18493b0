// https://docs.kalshi.com/api-reference/portfolio/get-orders (and get-fills, get-positions)
// The account's orders, fills and positions in Kalshi's shapes, and the filter the portfolio's lists share.
import { isoMillis, isoSeconds } from '../../core/time';
import { costOf, type KalshiAccount, type Order, type Settlement, statusOf } from './account';
import { dollars, fp, type Query, unixSeconds } from './common';

const sideFields = (o: Order) => ({
  outcome_side: o.yes ? 'yes' : 'no',
  // [V] BookSide is the YES leg: buying YES is a bid, buying NO sells YES (an ask).
  book_side: o.yes ? 'bid' : 'ask',
  side: o.yes ? 'yes' : 'no',
  action: 'buy',
});

export function orderJson(account: KalshiAccount, o: Order): Record<string, unknown> {
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

export function fillJson(o: Order): Record<string, unknown> {
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
export function positionsJson(orders: readonly Order[], settlements: readonly Settlement[]) {
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
export function orderFilter(q: Query): (o: Order) => boolean {
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
