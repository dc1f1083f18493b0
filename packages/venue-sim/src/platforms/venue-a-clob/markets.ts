// https://docs.polymarket.com/api-reference/markets/get-sampling-markets (CLOB market objects) and
// https://docs.polymarket.com/api-reference/rewards/get-current-active-rewards-configurations
import { scaledNumber } from '../../core/decimal';
import { DAY_MS, parseDay } from '../../core/time';
import type { Router } from '../../http/router';
import { json } from '../../http/types';
import type { PlatformContext } from '../context';
import {
  type GammaEventDef,
  type GammaMarketDef,
  type MarketRewards,
  type PolymarketCatalog,
  USDC_ADDRESS,
  marketDescription,
  polymarketImage,
  rewardsMaxSpread,
} from '../venue-a/catalog';
import { outcomeMids } from '../venue-a/prices';
import { cursorPage, isPage } from './paging';
import { type ClobBooks, clobPrice, clobSize } from './books';
import type { ClobTrades } from './trades';

/** Page sizes: `/markets` and its variants [U] (1 000 in captured answers), rewards per the docs [V]. */
const MARKETS_PAGE = 1000;
const CURRENT_REWARDS_PAGE = 500;
const MARKET_REWARDS_PAGE = 100;
/** Trades `/live-activity/events/{condition_id}` shows [U]. */
const LIVE_ACTIVITY_TRADES = 50;
/** Reward programmes have no end date on the CLOB [V] (docs examples: `2500-12-31`). */
const OPEN_END = '2500-12-31';

/** The CLOB's view of the Polymarket catalogue: market objects, their token prices and rewards. */
export class ClobMarkets {
  private readonly byCondition: Map<string, GammaMarketDef>;
  private readonly events: Map<string, GammaEventDef>;

  readonly catalog: PolymarketCatalog;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly books: ClobBooks,
    private readonly trades: ClobTrades,
  ) {
    const catalog = books.catalog;
    this.catalog = catalog;
    this.byCondition = new Map(catalog.markets.map((m) => [m.conditionId, m]));
    this.events = new Map(catalog.events.map((e) => [e.id, e]));
  }

  market(conditionId: string | undefined): GammaMarketDef | undefined {
    return conditionId === undefined ? undefined : this.byCondition.get(conditionId);
  }

  /** `tokens[]` [V]: YES then NO, priced at the live midpoint (the same figure as Gamma's `outcomePrices`). */
  tokens(m: GammaMarketDef, withWinner = true) {
    const mids = outcomeMids(this.ctx.engine, m);
    return (['Yes', 'No'] as const).map((outcome, i) => ({
      token_id: m.tokens[i] as string,
      outcome,
      price: scaledNumber(mids[i] as number, 3),
      ...(withWinner ? { winner: false } : {}),
    }));
  }

  /** `rewards` of a market object [V]; a market without a programme has no rates and zero thresholds. */
  private rewards(r: MarketRewards | null) {
    return r
      ? {
          rates: [{ asset_address: USDC_ADDRESS, rewards_daily_rate: r.dailyRate }],
          min_size: r.minSize,
          max_spread: rewardsMaxSpread(r),
        }
      : { rates: null, min_size: 0, max_spread: 0 };
  }

  /** A full CLOB market object [V] (docs' `Market`; numbers where the docs show numbers). */
  marketJson(m: GammaMarketDef) {
    return {
      enable_order_book: true,
      active: m.active,
      closed: m.closed,
      archived: false,
      accepting_orders: m.active && !m.closed,
      accepting_order_timestamp: m.startDate,
      minimum_order_size: m.minOrderSize,
      minimum_tick_size: Number(this.books.tickSize(m)),
      condition_id: m.conditionId,
      question_id: m.questionId,
      question: m.question,
      description: marketDescription(m),
      market_slug: m.slug,
      end_date_iso: m.endDate,
      game_start_time: null,
      seconds_delay: 0,
      fpmm: '',
      maker_base_fee: 0,
      taker_base_fee: 0,
      notifications_enabled: true,
      neg_risk: m.negRisk,
      neg_risk_market_id: m.negRiskMarketId,
      neg_risk_request_id: m.negRiskRequestId,
      icon: polymarketImage(m.slug),
      image: polymarketImage(m.slug),
      rewards: this.rewards(m.rewards),
      is_50_50_outcome: false,
      tokens: this.tokens(m),
      tags: (this.events.get(m.eventId)?.tags ?? []).map((t) => t.label),
    };
  }

  /** The simplified market object [V]. */
  simplifiedJson(m: GammaMarketDef) {
    return {
      condition_id: m.conditionId,
      tokens: this.tokens(m),
      rewards: this.rewards(m.rewards),
      active: m.active,
      closed: m.closed,
      archived: false,
      accepting_orders: m.active && !m.closed,
    };
  }

  /** A reward configuration row [V]: running since its start, open-ended, its total so far. */
  rewardsConfig(r: MarketRewards, withDays: boolean) {
    const days = Math.max(0, Math.round((parseDay(this.ctx.opts.catalogDate) - parseDay(r.startDate)) / DAY_MS));
    return {
      id: 0,
      asset_address: USDC_ADDRESS,
      start_date: r.startDate,
      end_date: OPEN_END,
      rate_per_day: r.dailyRate,
      total_rewards: r.dailyRate * days,
      ...(withDays ? { total_days: days } : {}),
    };
  }

  /** A market's reward row as `/rewards/markets/{condition_id}` and `/rewards/user/markets` show it [V]. */
  marketRewardJson(m: GammaMarketDef, r: MarketRewards) {
    return {
      condition_id: m.conditionId,
      question: m.question,
      market_slug: m.slug,
      event_slug: m.eventSlug,
      image: polymarketImage(m.slug),
      rewards_max_spread: rewardsMaxSpread(r),
      rewards_min_size: r.minSize,
      market_competitiveness: scaledNumber(m.liquidityCents % 1000, 3),
      tokens: this.tokens(m, false),
    };
  }

  get rewarded(): Array<{ m: GammaMarketDef; r: MarketRewards }> {
    return this.catalog.markets.flatMap((m) => (m.rewards ? [{ m, r: m.rewards }] : []));
  }

  register(r: Router): void {
    const all = this.catalog.markets;
    const sampling = all.filter((m) => m.rewards !== null);
    const paged = (items: readonly GammaMarketDef[], render: (m: GammaMarketDef) => unknown) => {
      return (req: { params: URLSearchParams }) => {
        const page = cursorPage(items, req.params, MARKETS_PAGE);
        return isPage(page) ? json(200, { ...page, data: page.data.map(render) }) : page;
      };
    };
    // [V] every listing pages with next_cursor; "sampling" markets are those paying liquidity rewards.
    r.get(
      '/markets',
      paged(all, (m) => this.marketJson(m)),
    );
    r.get(
      '/sampling-markets',
      paged(sampling, (m) => this.marketJson(m)),
    );
    r.get(
      '/simplified-markets',
      paged(all, (m) => this.simplifiedJson(m)),
    );
    r.get(
      '/sampling-simplified-markets',
      paged(sampling, (m) => this.simplifiedJson(m)),
    );
    r.get('/markets/:condition_id', (req) => {
      const m = this.market(req.pathParams.condition_id);
      return m ? json(200, this.marketJson(m)) : json(404, { error: 'market not found' });
    });

    // Docs [V]: current programmes grouped by market. clob-client's `MarketReward` type also declares question,
    // market_slug, event_slug, image and tokens for these rows; the docs' rows do not carry them, and the docs win.
    r.get('/rewards/markets/current', (req) => {
      const rows = this.rewarded.map(({ m, r: rw }) => ({
        condition_id: m.conditionId,
        rewards_max_spread: rewardsMaxSpread(rw),
        rewards_min_size: rw.minSize,
        rewards_config: [this.rewardsConfig(rw, false)],
        sponsored_daily_rate: 0,
        sponsors_count: 0,
        native_daily_rate: rw.dailyRate,
        total_daily_rate: rw.dailyRate,
      }));
      const page = cursorPage(rows, req.params, CURRENT_REWARDS_PAGE);
      return isPage(page) ? json(200, page) : page;
    });
    // [V] the programmes configured on one market (none: an empty page).
    r.get('/rewards/markets/:condition_id', (req) => {
      const m = this.market(req.pathParams.condition_id);
      const rows = m?.rewards
        ? [{ ...this.marketRewardJson(m, m.rewards), rewards_config: [this.rewardsConfig(m.rewards, true)] }]
        : [];
      const page = cursorPage(rows, req.params, MARKET_REWARDS_PAGE);
      return isPage(page) ? json(200, page) : page;
    });

    // clob-client `getMarketTradesEvents` [V types]: the market's latest trades with the traders' public profiles.
    r.get('/live-activity/events/:condition_id', (req) => {
      const m = this.market(req.pathParams.condition_id);
      if (!m) return json(200, []);
      return json(
        200,
        this.trades.marketTrades(m, this.ctx.clock(), LIVE_ACTIVITY_TRADES).map((t) => ({
          event_type: 'trade',
          market: {
            condition_id: m.conditionId,
            asset_id: t.asset,
            question: m.question,
            icon: polymarketImage(m.slug),
            slug: m.slug,
          },
          user: {
            address: t.wallet,
            username: t.pseudonym.toLowerCase(),
            profile_picture: '',
            optimized_profile_picture: '',
            pseudonym: t.pseudonym,
          },
          side: t.side,
          size: clobSize(t.size),
          fee_rate_bps: '0',
          price: clobPrice(t.cents),
          outcome: t.outcomeIndex === 0 ? 'Yes' : 'No',
          outcome_index: t.outcomeIndex,
          transaction_hash: t.transactionHash,
          timestamp: String(Math.floor(t.ts / 1000)),
        })),
      );
    });
  }
}
