// https://docs.kalshi.com/api-reference/portfolio/get-balance (and the other private reads)
import { BID } from '../../book/types';
import { Rng } from '../../core/rng';
import { DAY_MS } from '../../core/time';
import type { KalshiMarketDef } from './catalog';
import type { KalshiApi } from './common';
import { SETTLEMENT_TIMER_SECONDS } from './markets';

/**
 * An order of the simulated account: a taker order filled by one trade of the tape, a canceled one, or the one
 * resting in its market's book (`remaining` > 0).
 */
export interface Order {
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

export interface Settlement {
  order: Order;
  result: 'yes' | 'no';
  ts: number;
  /** Cents. */
  revenue: number;
}

/** Cost of contracts of an order, 1e-4 dollars: contracts (1e-2) times the price of the side bought. */
const costAt = (o: Order, contracts: number) => (contracts * (o.yes ? o.yesPrice : 10000 - o.yesPrice)) / 100;
/** Cost of an order's fill. */
export const costOf = (o: Order) => costAt(o, o.filled);

/** [V] an order is resting until matched or canceled, executed once fully matched. */
export const statusOf = (o: Order) => (o.remaining > 0 ? 'resting' : o.filled > 0 ? 'executed' : 'canceled');

/**
 * Kalshi's general trading fee [V] (fee schedule, "General Trading Fees"): 0.07 × C × P × (1 − P), rounded up to the
 * next cent; in 1e-4 dollars.
 */
function takerFee(contractsE2: number, yesPrice: number): number {
  const c = contractsE2 / 100;
  const p = yesPrice / 100;
  return Math.ceil((7 * c * p * (100 - p)) / 10_000) * 100;
}

export const DEPOSIT_CENTS = 1_000_000;
/** Moved from the event-contract exchange (index 0) to the margined one (index 1) after the deposit. */
export const TRANSFER_CENTS = 10_000;

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
