// https://docs.polymarket.com/developers/gamma-markets-api/overview (events, markets, clobTokenIds)
import { scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import { DAY_MS, isoDay, isoMillis, isoSeconds, monthName, parseDay } from '../../core/time';
import type { Instrument } from '../../book/types';

interface GammaTag {
  id: string;
  label: string;
  slug: string;
}

/** A market's liquidity-rewards programme (CLOB `rewards`, Gamma `rewardsMinSize`/`clobRewards`). */
export interface MarketRewards {
  /** Minimum order size that earns rewards, in shares. */
  minSize: number;
  /** Maximum distance from the midpoint that earns rewards, in tenths of a cent (35 → 3.5¢). */
  maxSpreadTenthCents: number;
  /** USDC paid per day across the market, whole dollars. */
  dailyRate: number;
  /** Programme start, `YYYY-MM-DD`. */
  startDate: string;
}

/** The collateral every reward is paid in: USDC.e on Polygon [V]. */
export const USDC_ADDRESS = '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174';

/** `maxSpreadTenthCents` as the platforms print it: cents, one decimal (35 → 3.5). */
export const rewardsMaxSpread = (r: MarketRewards): number => scaledNumber(r.maxSpreadTenthCents, 1);

/** The image every Polymarket host shows for a market or event slug. */
export const polymarketImage = (slug: string): string =>
  `https://polymarket-upload.s3.us-east-2.amazonaws.com/${slug}.png`;

/** A market's resolution text, as Gamma and the CLOB print it. */
export const marketDescription = (m: { question: string }): string =>
  `This market resolves to "Yes" if ${m.question.replace(/\?$/, '').replace(/^Will /, '')}.`;

export interface GammaMarketDef {
  id: string;
  question: string;
  slug: string;
  conditionId: string;
  questionId: string;
  /** [YES, NO] ERC-1155 token ids (77-digit decimal strings). */
  tokens: [string, string];
  eventId: string;
  eventSlug: string;
  groupItemTitle: string;
  /** Initial YES probability in cents. */
  cents: number;
  volumeCents: number;
  liquidityCents: number;
  startDate: string;
  endDate: string;
  active: boolean;
  closed: boolean;
  /** Part of a negative-risk event (mutually exclusive outcomes settled through the NegRisk adapter). */
  negRisk: boolean;
  /** The event's NegRisk market id, `''` unless negRisk. */
  negRiskMarketId: string;
  /** The market's NegRisk question (request) id, `''` unless negRisk. */
  negRiskRequestId: string;
  /** Liquidity rewards, or null when the market pays none (then it is not a "sampling" market). */
  rewards: MarketRewards | null;
  /** The smallest order the CLOB accepts, in shares (CLOB `min_order_size`, Gamma `orderMinSize`). */
  minOrderSize: number;
}

export interface GammaEventDef {
  id: string;
  slug: string;
  title: string;
  description: string;
  startDate: string;
  endDate: string;
  createdAt: string;
  active: boolean;
  closed: boolean;
  archived: boolean;
  featured: boolean;
  /** Mutually exclusive outcomes (one market per outcome): every market is negRisk. */
  negRisk: boolean;
  tags: GammaTag[];
  seriesSlug?: string;
  markets: GammaMarketDef[];
  volumeCents: number;
  liquidityCents: number;
}

export interface PolymarketCatalog {
  events: GammaEventDef[];
  markets: GammaMarketDef[];
  tags: GammaTag[];
  /** Token id → its market and whether it is the YES token. */
  tokens: Map<string, { market: GammaMarketDef; yes: boolean }>;
  /** Known public profiles (address → pseudonym). */
  profiles: Map<string, string>;
  instruments: Instrument[];
}

const GAMMA_TAGS: GammaTag[] = [
  { id: '2', label: 'Politics', slug: 'politics' },
  { id: '21', label: 'Crypto', slug: 'crypto' },
  { id: '100', label: 'Economy', slug: 'economy' },
  { id: '1', label: 'Sports', slug: 'sports' },
  { id: '745', label: 'NBA', slug: 'nba' },
  { id: '235', label: 'Bitcoin', slug: 'bitcoin' },
  { id: '159', label: 'Fed Rates', slug: 'fed-rates' },
];
const tag = (slug: string) => GAMMA_TAGS.find((t) => t.slug === slug) as GammaTag;

const NBA_TEAMS = [
  'Boston Celtics',
  'Oklahoma City Thunder',
  'Denver Nuggets',
  'New York Knicks',
  'Los Angeles Lakers',
];

interface Seed {
  slug: string;
  title: string;
  /** The outcomes exclude each other (Fed decision, champion): a negative-risk event. */
  negRisk: boolean;
  /** Liquidity rewards on its markets: [min size, max spread in tenths of a cent, USDC per day], or null. */
  rewards: [number, number, number] | null;
  /** Its markets' smallest order in shares (5 on most markets, 15 on some older ones [3P]). */
  minOrderSize: number;
  tags: GammaTag[];
  seriesSlug?: string;
  end: number;
  markets: Array<{ slug: string; question: string; item: string; cents: number }>;
}

function seedFor(kind: number, k: number, day: number): Seed {
  switch (kind) {
    case 0: {
      const d = new Date(day);
      const m = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, 18);
      const month = monthName(m).toLowerCase();
      const y = new Date(m).getUTCFullYear();
      return {
        slug: `fed-decision-in-${month}-${y}`,
        title: `Fed decision in ${monthName(m)}?`,
        negRisk: true,
        rewards: [50, 35, 25],
        minOrderSize: 5,
        tags: [tag('economy'), tag('fed-rates')],
        seriesSlug: 'fed-interest-rates',
        end: m,
        markets: [
          {
            slug: `no-change-in-fed-interest-rates-after-${month}-${y}-meeting`,
            question: `No change in Fed interest rates after ${monthName(m)} ${y} meeting?`,
            item: 'No change',
            cents: 68,
          },
          {
            slug: `fed-decreases-interest-rates-by-25-bps-after-${month}-${y}-meeting`,
            question: `Fed decreases interest rates by 25 bps after ${monthName(m)} ${y} meeting?`,
            item: '25 bps decrease',
            cents: 29,
          },
        ],
      };
    }
    case 1: {
      const end = day + (24 + 7 * k) * DAY_MS;
      const md = `${monthName(end).toLowerCase()}-${new Date(end).getUTCDate()}`;
      return {
        slug: `bitcoin-above-on-${md}`,
        title: `Bitcoin above ___ on ${monthName(end)} ${new Date(end).getUTCDate()}?`,
        negRisk: false,
        rewards: null,
        minOrderSize: 5,
        tags: [tag('crypto'), tag('bitcoin')],
        seriesSlug: 'bitcoin-above',
        end,
        markets: [100, 110].map((s, i) => ({
          slug: `bitcoin-above-${s}k-on-${md}`,
          question: `Will the price of Bitcoin be above $${s},000 on ${monthName(end)} ${new Date(end).getUTCDate()}?`,
          item: `${s},000`,
          cents: [37, 12][i] as number,
        })),
      };
    }
    default: {
      const y = new Date(day).getUTCFullYear() + k;
      return {
        slug: `${y}-nba-champion`,
        title: `${y} NBA Champion`,
        negRisk: true,
        rewards: [100, 45, 10],
        minOrderSize: 15,
        tags: [tag('sports'), tag('nba')],
        end: Date.UTC(y, 5, 30),
        markets: NBA_TEAMS.map((team, i) => ({
          slug: `will-the-${team.toLowerCase().replace(/ /g, '-')}-win-the-${y}-nba-finals`,
          question: `Will the ${team} win the ${y} NBA Finals?`,
          item: team,
          cents: [24, 31, 11, 9, 6][i] as number,
        })),
      };
    }
  }
}

function clobInstrument(tokenId: string, cents: number): Instrument {
  return {
    platform: 'venue-a-clob',
    ticker: tokenId,
    priceDecimals: 2,
    qtyDecimals: 2,
    tick: 1,
    minPrice: 1,
    maxPrice: 99,
    initialMid: cents,
    maxLevels: 15,
    initialLevels: 8,
    window: 6,
    unit: 100,
    minUnits: 5,
    maxUnits: 20_000,
    fractionalPercent: 30,
  };
}

export function buildPolymarketCatalog(seed: number, catalogDate: string, count: number): PolymarketCatalog {
  const day = parseDay(catalogDate);
  const events: GammaEventDef[] = [];
  const markets: GammaMarketDef[] = [];
  let eventId = 16_001;
  let marketId = 512_001;
  for (let k = 0; markets.length < count; k++) {
    for (let kind = 0; kind < 3 && markets.length < count; kind++) {
      const s = seedFor(kind, k, day);
      const rng = new Rng(seed, 'gamma', 'event', s.slug);
      const ev: GammaEventDef = {
        id: String(eventId++),
        slug: s.slug,
        title: s.title,
        description: `${s.title} This market resolves according to the rules of each outcome.`,
        startDate: isoMillis(day - 20 * DAY_MS),
        endDate: isoSeconds(s.end),
        createdAt: isoMillis(day - 21 * DAY_MS),
        active: true,
        closed: false,
        archived: false,
        featured: events.length % 2 === 0,
        negRisk: s.negRisk,
        tags: s.tags,
        ...(s.seriesSlug ? { seriesSlug: s.seriesSlug } : {}),
        markets: [],
        volumeCents: 0,
        liquidityCents: 0,
      };
      const negRiskMarketId = s.negRisk ? `0x${new Rng(seed, 'gamma', 'negrisk', s.slug).hex(64)}` : '';
      for (const m of s.markets.slice(0, count - markets.length)) {
        const mr = new Rng(seed, 'gamma', 'market', m.slug);
        const conditionId = `0x${mr.hex(64)}`;
        const questionId = `0x${mr.hex(64)}`;
        const def: GammaMarketDef = {
          id: String(marketId++),
          question: m.question,
          slug: m.slug,
          conditionId,
          questionId,
          tokens: [mr.decimalDigits(77), mr.decimalDigits(77)],
          eventId: ev.id,
          eventSlug: ev.slug,
          groupItemTitle: m.item,
          cents: m.cents,
          volumeCents: rng.range(10_000_000, 9_000_000_000),
          liquidityCents: rng.range(1_000_000, 90_000_000),
          startDate: ev.startDate,
          endDate: ev.endDate,
          active: true,
          closed: false,
          negRisk: s.negRisk,
          negRiskMarketId,
          // [3P] a NegRisk market's question id is the NegRisk market id with the outcome index in its last byte.
          negRiskRequestId: s.negRisk
            ? `${negRiskMarketId.slice(0, 64)}${ev.markets.length.toString(16).padStart(2, '0')}`
            : '',
          rewards: s.rewards
            ? {
                minSize: s.rewards[0],
                maxSpreadTenthCents: s.rewards[1],
                dailyRate: s.rewards[2],
                startDate: isoDay(day - 20 * DAY_MS),
              }
            : null,
          minOrderSize: s.minOrderSize,
        };
        ev.volumeCents += def.volumeCents;
        ev.liquidityCents += def.liquidityCents;
        ev.markets.push(def);
        markets.push(def);
      }
      events.push(ev);
    }
  }
  const tokens = new Map<string, { market: GammaMarketDef; yes: boolean }>();
  for (const m of markets) {
    tokens.set(m.tokens[0], { market: m, yes: true });
    tokens.set(m.tokens[1], { market: m, yes: false });
  }
  const profiles = new Map<string, string>();
  for (let i = 0; i < 3; i++) {
    const r = new Rng(seed, 'gamma', 'profile', String(i));
    profiles.set(`0x${r.hex(40)}`, ['Trivial-Gopher', 'Overlooked-Dentist', 'Burdensome-Fav'][i] as string);
  }
  return {
    events,
    markets,
    tags: GAMMA_TAGS,
    tokens,
    profiles,
    // Only YES tokens carry their own process; a NO token's book is the YES book mirrored at 1 − p.
    instruments: markets.map((m) => clobInstrument(m.tokens[0], m.cents)),
  };
}
