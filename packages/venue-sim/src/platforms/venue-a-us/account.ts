// https://docs.polymarket.us/api-reference/orders/get-order (orders-schema.json, portfolio-schema.json)
import { scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import { isoMillis, parseDay } from '../../core/time';
import type { Router } from '../../http/router';
import { json } from '../../http/types';
import type { PlatformContext } from '../context';
import type { PmCatalog, PmMarketDef } from './catalog';
import { parseListQuery } from './events-filter';
import { amount, invalid, pmUsErrors } from './wire';

/** Deposited cash, whole dollars; the resting order's size and the filled trade's size, in contracts. */
const DEPOSIT = 1000;
const ORDER_QTY = 100;
const FILLED_QTY = 25;

const ACTIVITY_TYPES = [
  'ACTIVITY_TYPE_TRADE',
  'ACTIVITY_TYPE_POSITION_RESOLUTION',
  'ACTIVITY_TYPE_ACCOUNT_DEPOSIT',
  'ACTIVITY_TYPE_ACCOUNT_ADVANCED_DEPOSIT',
  'ACTIVITY_TYPE_ACCOUNT_WITHDRAWAL',
  'ACTIVITY_TYPE_REFERRAL_BONUS',
  'ACTIVITY_TYPE_TRANSFER',
];

/**
 * The simulator's Polymarket US account (the issued Ed25519 key's owner), deterministic per seed: a 1 000 USD
 * deposit, one filled buy of 25 YES on the first market with a book (a position), and one resting GTC buy of 100 at
 * 5¢ under it. Every route is on the authenticated host and signed.
 */
export function pmUsAccountRoutes(r: Router, ctx: PlatformContext, catalog: PmCatalog): void {
  const rng = new Rng(ctx.opts.seed, 'polymarketUs', 'account');
  const day = parseDay(ctx.opts.catalogDate);
  const m = catalog.markets.find((x) => x.hasBook) as PmMarketDef | undefined;
  const metadata = (x: PmMarketDef) => ({
    slug: x.slug,
    icon: `https://polymarket.us/images/${x.eventSlug}.png`,
    title: x.title,
    outcome: x.outcome,
    eventSlug: x.eventSlug,
  });
  const depositAt = isoMillis(day - 2 * 86_400_000);
  const fillAt = isoMillis(day + 8 * 3600_000);
  const orderAt = isoMillis(day + 9 * 3600_000);
  const depositId = rng.uuid();
  const tradeId = rng.uuid();

  const order = m && {
    id: rng.uuid(),
    marketSlug: m.slug,
    side: 'ORDER_SIDE_BUY',
    type: 'ORDER_TYPE_LIMIT',
    price: amount(Math.max(10, m.mid - 50)),
    // The docs type quantities as doubles, the SDK as numbers: JSON numbers.
    quantity: ORDER_QTY,
    cumQuantity: 0,
    leavesQuantity: ORDER_QTY,
    tif: 'TIME_IN_FORCE_GOOD_TILL_CANCEL',
    intent: 'ORDER_INTENT_BUY_LONG',
    marketMetadata: metadata(m),
    state: 'ORDER_STATE_NEW',
    commissionsBasisPoints: '0',
    makerCommissionsBasisPoints: '0',
    insertTime: orderAt,
    createTime: orderAt,
    outcomeSide: 'OUTCOME_SIDE_YES',
    action: 'ORDER_ACTION_BUY',
  };
  const orders = order ? [order] : [];
  // Cash in milli-dollars: the deposit less the fill; the resting order reserves its notional.
  const costE3 = m ? FILLED_QTY * m.mid : 0;
  const cashE3 = DEPOSIT * 1000 - costE3;
  const reservedE3 = order && m ? ORDER_QTY * Math.max(10, m.mid - 50) : 0;

  r.get(
    '/v1/orders/open',
    (req) => {
      const slugs = req.params.getAll('slugs');
      return json(200, { orders: orders.filter((o) => slugs.length === 0 || slugs.includes(o.marketSlug)) });
    },
    'required',
  );
  // orders.retrieve: the singular `/v1/order/{orderId}` [V].
  r.get(
    '/v1/order/:orderId',
    (req) => {
      const o = orders.find((x) => x.id === req.pathParams.orderId);
      return o ? json(200, { order: o }) : pmUsErrors.notFound(req);
    },
    'required',
  );

  r.get(
    '/v1/portfolio/positions',
    (req) => {
      const list = parseListQuery(req.params, [] as const, 100);
      if (!list.ok) return invalid(list.message);
      const market = req.params.get('market');
      const held = m && (!market || market === m.slug) ? [m] : [];
      const qty = String(FILLED_QTY);
      return json(200, {
        positions: Object.fromEntries(
          held.map((x) => [
            x.slug,
            {
              // The int64-string fields are deprecated in the docs (the SDK knows only those); both are sent.
              netPosition: qty,
              qtyBought: qty,
              qtySold: '0',
              cost: amount(costE3),
              realized: amount(0),
              bodPosition: qty,
              expired: false,
              updateTime: fillAt,
              marketMetadata: metadata(x),
              cashValue: amount(FILLED_QTY * x.mid),
              qtyAvailable: qty,
              netPositionDecimal: qty,
              qtyBoughtDecimal: qty,
              qtySoldDecimal: '0',
              bodPositionDecimal: qty,
              qtyAvailableDecimal: qty,
            },
          ]),
        ),
        nextCursor: '',
        eof: true,
      });
    },
    'required',
  );

  r.get(
    '/v1/portfolio/activities',
    (req) => {
      const list = parseListQuery(req.params, [] as const, 100);
      if (!list.ok) return invalid(list.message);
      const types = req.params.getAll('types');
      const bad = types.find((t) => !ACTIVITY_TYPES.includes(t));
      if (bad) return invalid(`parsing field "types": invalid value "${bad}"`);
      const sort = req.params.get('sortOrder') ?? 'SORT_ORDER_DESCENDING';
      if (sort !== 'SORT_ORDER_DESCENDING' && sort !== 'SORT_ORDER_ASCENDING') {
        return invalid(`parsing field "sortOrder": invalid value "${sort}"`);
      }
      const marketSlug = req.params.get('marketSlug');
      const all = [
        {
          at: depositAt,
          slug: null,
          activity: {
            type: 'ACTIVITY_TYPE_ACCOUNT_DEPOSIT',
            accountBalanceChange: {
              transactions: [
                {
                  transactionId: depositId,
                  status: 'TRANSACTION_STATUS_COMPLETED',
                  amount: amount(DEPOSIT * 1000),
                  createTime: depositAt,
                  updateTime: depositAt,
                },
              ],
            },
          },
        },
        ...(m
          ? [
              {
                at: fillAt,
                slug: m.slug,
                activity: {
                  type: 'ACTIVITY_TYPE_TRADE',
                  trade: {
                    id: tradeId,
                    marketSlug: m.slug,
                    state: 'TRADE_STATE_FILLED',
                    price: amount(m.mid),
                    qty: String(FILLED_QTY),
                    createTime: fillAt,
                    updateTime: fillAt,
                    isAggressor: true,
                    costBasis: amount(costE3),
                    realizedPnl: amount(0),
                  },
                },
              },
            ]
          : []),
      ]
        .filter(
          (a) => (types.length === 0 || types.includes(a.activity.type)) && (!marketSlug || a.slug === marketSlug),
        )
        .sort((a, b) => (sort === 'SORT_ORDER_ASCENDING' ? a.at.localeCompare(b.at) : b.at.localeCompare(a.at)));
      const page = all.slice(list.query.offset, list.query.offset + list.query.limit);
      return json(200, { activities: page.map((a) => a.activity), nextCursor: '', eof: true });
    },
    'required',
  );

  r.get(
    '/v1/account/balances',
    () =>
      json(200, {
        balances: [
          {
            currentBalance: scaledNumber(cashE3, 3),
            currency: 'USD',
            lastUpdated: orderAt,
            buyingPower: scaledNumber(cashE3 - reservedE3, 3),
            assetNotional: scaledNumber(m ? FILLED_QTY * m.mid : 0, 3),
            assetAvailable: scaledNumber(cashE3 - reservedE3, 3),
            pendingCredit: 0,
            openOrders: scaledNumber(reservedE3, 3),
            unsettledFunds: 0,
            pendingWithdrawals: [],
            marginRequirement: 0,
            balanceReservation: scaledNumber(reservedE3, 3),
          },
        ],
      }),
    'required',
  );
}
