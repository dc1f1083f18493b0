// https://docs.kalshi.com/api-reference (series → events → markets; ticker shapes from upstreams.md §4)
import { Rng } from '../../core/rng';
import { DAY_MS, isoSeconds, kalshiDate, kalshiMonth, parseDay, shortMonthName } from '../../core/time';
import { BID, type Instrument, type RestingOrder } from '../../book/types';

interface SettlementSource {
  name: string;
  url: string;
}

export interface KalshiSeries {
  ticker: string;
  frequency: string;
  title: string;
  /** Primary category. */
  category: string;
  /** Discovery categories; the `category` filter of `/series` matches any of them [V]. */
  categories: string[];
  tags: string[];
  settlement_sources: SettlementSource[];
}

export interface KalshiEvent {
  event_ticker: string;
  series_ticker: string;
  title: string;
  sub_title: string;
  category: string;
  mutually_exclusive: boolean;
  strike_date: string;
  settlement_sources: SettlementSource[];
  /** Sports events: [away, home] team abbreviations. */
  teams?: readonly [string, string];
}

export interface KalshiMarketDef {
  ticker: string;
  event_ticker: string;
  series_ticker: string;
  market_id: string;
  title: string;
  yes_sub_title: string;
  no_sub_title: string;
  open_time: string;
  close_time: string;
  strike_type: string;
  floor_strike?: number;
  cap_strike?: number;
  rules_primary: string;
  /** Initial mid, in 1e-4 dollars. */
  mid: number;
}

/** Events and their markets, with lookups. */
export interface KalshiListing {
  events: KalshiEvent[];
  markets: KalshiMarketDef[];
  eventsByTicker: Map<string, KalshiEvent>;
  marketsByTicker: Map<string, KalshiMarketDef>;
  /** Markets per event ticker, in catalogue order. */
  marketsByEvent: Map<string, KalshiMarketDef[]>;
}

export interface KalshiCatalog extends KalshiListing {
  series: KalshiSeries[];
  instruments: Instrument[];
  /**
   * Markets settled before the historical cutoff (`/historical/*` only [V]: the live routes no longer serve them).
   * They have no moving book; their quotes and trades are the seeded path of the tape.
   */
  historical: KalshiListing;
  /** `market_settled_ts` etc. of `/historical/cutoff`: 90 days before the catalogue date ([V] the live window targets about 3 months). */
  cutoffMs: number;
}

interface MarketSeed {
  suffix: string;
  yes: string;
  strikeType: string;
  floor?: number;
  cap?: number;
  /** Initial probability in cents. */
  cents: number;
}

interface Template {
  series: KalshiSeries;
  event(
    k: number,
    day: number,
  ): {
    ticker: string;
    title: string;
    subTitle: string;
    date: number;
    exclusive: boolean;
    teams?: readonly [string, string];
  };
  markets(k: number): MarketSeed[];
}

const CF_BENCHMARKS: SettlementSource = {
  name: 'CF Benchmarks',
  url: 'https://www.cfbenchmarks.com/data/indices/BRTI',
};

const TEAMS = [
  ['LAL', 'BOS'],
  ['NYK', 'MIA'],
  ['GSW', 'DEN'],
  ['PHX', 'DAL'],
];

/** The teams of the basketball series: name, conference and division. */
export const NBA_TEAMS: Readonly<Record<string, readonly [string, string, string]>> = {
  LAL: ['Los Angeles Lakers', 'Western', 'Pacific'],
  BOS: ['Boston Celtics', 'Eastern', 'Atlantic'],
  NYK: ['New York Knicks', 'Eastern', 'Atlantic'],
  MIA: ['Miami Heat', 'Eastern', 'Southeast'],
  GSW: ['Golden State Warriors', 'Western', 'Pacific'],
  DEN: ['Denver Nuggets', 'Western', 'Northwest'],
  PHX: ['Phoenix Suns', 'Western', 'Pacific'],
  DAL: ['Dallas Mavericks', 'Western', 'Southwest'],
};

const TEMPLATES: Template[] = [
  {
    series: {
      ticker: 'KXBTCD',
      frequency: 'daily',
      title: 'Bitcoin price today',
      category: 'Crypto',
      categories: ['Crypto'],
      tags: ['BTC'],
      settlement_sources: [CF_BENCHMARKS],
    },
    event: (k, day) => {
      const d = day + k * DAY_MS;
      return {
        ticker: `KXBTCD-${kalshiDate(d)}`,
        title: `Bitcoin price on ${shortMonthName(d)} ${new Date(d).getUTCDate()}, ${new Date(d).getUTCFullYear()} at 5pm EST?`,
        subTitle: `On ${shortMonthName(d)} ${new Date(d).getUTCDate()}`,
        date: d + 22 * 3600 * 1000,
        exclusive: false,
      };
    },
    markets: (k) =>
      [100000, 102500, 97500, 105000].map((strike, i) => ({
        suffix: `T${strike + k * 500}`,
        yes: `$${(strike + k * 500).toLocaleString('en-US')} or above`,
        strikeType: 'greater',
        floor: strike + k * 500,
        cents: [52, 31, 74, 15][i] as number,
      })),
  },
  {
    series: {
      ticker: 'KXHIGHNY',
      frequency: 'daily',
      title: 'Highest temperature in NYC',
      category: 'Climate and Weather',
      categories: ['Climate and Weather'],
      tags: ['Weather'],
      settlement_sources: [{ name: 'National Weather Service', url: 'https://www.weather.gov/wrh/climate?wfo=okx' }],
    },
    event: (k, day) => {
      const d = day + k * DAY_MS;
      return {
        ticker: `KXHIGHNY-${kalshiDate(d)}`,
        title: `Highest temperature in NYC on ${shortMonthName(d)} ${new Date(d).getUTCDate()}, ${new Date(d).getUTCFullYear()}?`,
        subTitle: `On ${shortMonthName(d)} ${new Date(d).getUTCDate()}`,
        date: d + 28 * 3600 * 1000,
        exclusive: true,
      };
    },
    markets: () => [
      { suffix: 'T58', yes: '58° or above', strikeType: 'greater', floor: 58, cents: 22 },
      { suffix: 'B56.5', yes: '56° to 57°', strikeType: 'between', floor: 56, cap: 57, cents: 35 },
    ],
  },
  {
    series: {
      ticker: 'KXFED',
      frequency: 'custom',
      title: 'Fed funds rate',
      category: 'Economics',
      categories: ['Economics', 'Financials'],
      tags: ['Fed', 'Interest rates'],
      settlement_sources: [
        { name: 'Federal Reserve', url: 'https://www.federalreserve.gov/monetarypolicy/openmarket.htm' },
      ],
    },
    event: (k, day) => {
      const d = new Date(day);
      const m = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, 18);
      return {
        ticker: `KXFED-${kalshiMonth(m)}`,
        title: `Fed funds rate after the ${shortMonthName(m)} ${new Date(m).getUTCFullYear()} meeting?`,
        subTitle: `After ${shortMonthName(m)} ${new Date(m).getUTCFullYear()}`,
        date: m + 18 * 3600 * 1000,
        exclusive: false,
      };
    },
    markets: () => [
      { suffix: 'T4.25', yes: 'Above 4.25%', strikeType: 'greater', floor: 4.25, cents: 61 },
      { suffix: 'T4.50', yes: 'Above 4.50%', strikeType: 'greater', floor: 4.5, cents: 18 },
    ],
  },
  {
    series: {
      ticker: 'KXNBAGAME',
      frequency: 'custom',
      title: 'Professional Basketball Game',
      category: 'Sports',
      categories: ['Sports'],
      tags: ['Basketball', 'NBA'],
      settlement_sources: [{ name: 'NBA', url: 'https://www.nba.com/' }],
    },
    event: (k, day) => {
      const [away, home] = TEAMS[k % TEAMS.length] as [string, string];
      const d = day + Math.floor(k / TEAMS.length) * DAY_MS;
      return {
        ticker: `KXNBAGAME-${kalshiDate(d)}${away}${home}`,
        title: `${away} at ${home} Winner?`,
        subTitle: `${away} vs ${home} (${shortMonthName(d)} ${new Date(d).getUTCDate()})`,
        date: d + 27 * 3600 * 1000,
        exclusive: true,
        teams: [away, home],
      };
    },
    markets: (k) => {
      const [away, home] = TEAMS[k % TEAMS.length] as [string, string];
      return [
        { suffix: away, yes: away, strikeType: 'structured', cents: 44 },
        { suffix: home, yes: home, strikeType: 'structured', cents: 56 },
      ];
    },
  },
  {
    series: {
      ticker: 'KXBTC15M',
      frequency: 'fifteen_min',
      title: 'Bitcoin price up or down in 15 minutes',
      category: 'Crypto',
      categories: ['Crypto'],
      tags: ['BTC'],
      settlement_sources: [CF_BENCHMARKS],
    },
    event: (k, day) => {
      const d = day + 15 * 3600 * 1000 + 30 * 60 * 1000 + k * 15 * 60 * 1000;
      const hhmm = new Date(d).toISOString().slice(11, 16).replace(':', '');
      return {
        ticker: `KXBTC15M-${kalshiDate(d)}${hhmm}`,
        title: `Bitcoin price up in the next 15 mins?`,
        subTitle: `${hhmm} UTC`,
        date: d + 15 * 60 * 1000,
        exclusive: false,
      };
    },
    markets: () => [{ suffix: '50', yes: 'Up', strikeType: 'greater_or_equal', cents: 50 }],
  },
];

export function kalshiInstrument(ticker: string, midCents: number): Instrument {
  return {
    platform: 'venue-b',
    ticker,
    priceDecimals: 4,
    qtyDecimals: 2,
    tick: 100,
    minPrice: 100,
    maxPrice: 9900,
    initialMid: midCents * 100,
    maxLevels: 20,
    initialLevels: 8,
    window: 6,
    unit: 100,
    minUnits: 1,
    maxUnits: 2500,
    fractionalPercent: 10,
  };
}

/**
 * The simulated account's resting order: a YES bid of 100 contracts five cents under the first live market's
 * catalogue price, placed before the simulator starts. It is part of that market's public book (its level's size
 * includes it, book/types.ts `RestingOrder`); account.ts reads it back from the book engine.
 */
function accountRestingOrder(inst: Instrument): RestingOrder {
  return { side: BID, price: Math.max(inst.minPrice, inst.initialMid - 5 * inst.tick), qty: 100 * 100 };
}

/**
 * The series of the multivariate (combo) events built across the live events; it has no events until a combination
 * is created in its collection.
 */
export const MVE_SERIES: KalshiSeries = {
  ticker: 'KXMVECROSSCATEGORY',
  frequency: 'custom',
  title: 'Combos across categories',
  category: 'Mixed',
  categories: ['Mixed'],
  tags: [],
  settlement_sources: [],
};

/** Days before the catalogue date of the historical cutoff, and of the historical catalogue's first events. */
const CUTOFF_DAYS = 90;
const HISTORICAL_DAYS = CUTOFF_DAYS + 40;

export function buildKalshiCatalog(seed: number, catalogDate: string, count: number): KalshiCatalog {
  const day = parseDay(catalogDate);
  const live = buildListing(seed, day, count, () => day - 7 * DAY_MS);
  // As many settled markets as the templates give for two events each, long enough before the cutoff.
  const historical = buildListing(seed, day - HISTORICAL_DAYS * DAY_MS, Infinity, (close) => close - 2 * DAY_MS, 2);
  return {
    series: [...TEMPLATES.map((t) => t.series), MVE_SERIES],
    ...live,
    historical,
    cutoffMs: day - CUTOFF_DAYS * DAY_MS,
    instruments: live.markets.map((m, i) => {
      const inst = kalshiInstrument(m.ticker, m.mid / 100);
      return i === 0 ? { ...inst, resting: accountRestingOrder(inst) } : inst;
    }),
  };
}

/** Events of every template in turn (k = 0, 1, …) until `count` markets, or `eventsPerTemplate` events each. */
function buildListing(
  seed: number,
  day: number,
  count: number,
  openTime: (closeMs: number) => number,
  eventsPerTemplate = Infinity,
): KalshiListing {
  const events: KalshiEvent[] = [];
  const markets: KalshiMarketDef[] = [];
  for (let k = 0; markets.length < count && k < eventsPerTemplate; k++) {
    for (const t of TEMPLATES) {
      if (markets.length >= count) break;
      const ev = t.event(k, day);
      events.push({
        event_ticker: ev.ticker,
        series_ticker: t.series.ticker,
        title: ev.title,
        sub_title: ev.subTitle,
        category: t.series.category,
        mutually_exclusive: ev.exclusive,
        strike_date: isoSeconds(ev.date),
        settlement_sources: t.series.settlement_sources,
        ...(ev.teams ? { teams: ev.teams } : {}),
      });
      for (const m of t.markets(k)) {
        if (markets.length >= count) break;
        const ticker = `${ev.ticker}-${m.suffix}`;
        const rng = new Rng(seed, 'kalshi', 'market', ticker);
        markets.push({
          ticker,
          event_ticker: ev.ticker,
          series_ticker: t.series.ticker,
          market_id: rng.uuid(),
          title: ev.title,
          yes_sub_title: m.yes,
          no_sub_title: m.yes,
          open_time: isoSeconds(openTime(ev.date)),
          close_time: isoSeconds(ev.date),
          strike_type: m.strikeType,
          ...(m.floor !== undefined ? { floor_strike: m.floor } : {}),
          ...(m.cap !== undefined ? { cap_strike: m.cap } : {}),
          rules_primary: `If the outcome is ${m.yes} for ${ev.title.replace(/\?$/, '')}, then the market resolves to Yes.`,
          mid: m.cents * 100,
        });
      }
    }
  }
  const marketsByEvent = new Map<string, KalshiMarketDef[]>();
  for (const m of markets) {
    const list = marketsByEvent.get(m.event_ticker) ?? [];
    list.push(m);
    marketsByEvent.set(m.event_ticker, list);
  }
  return {
    events,
    markets,
    eventsByTicker: new Map(events.map((e) => [e.event_ticker, e])),
    marketsByTicker: new Map(markets.map((m) => [m.ticker, m])),
    marketsByEvent,
  };
}
