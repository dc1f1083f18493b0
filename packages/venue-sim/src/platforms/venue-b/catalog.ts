// https://docs.kalshi.com/api-reference (series → events → markets; ticker shapes from upstreams.md §4)
import { Rng } from '../../core/rng';
import { DAY_MS, isoSeconds, kalshiDate, kalshiMonth, parseDay, shortMonthName } from '../../core/time';
import type { Instrument } from '../../book/types';

export interface KalshiSeries {
  ticker: string;
  frequency: string;
  title: string;
  category: string;
  tags: string[];
}

export interface KalshiEvent {
  event_ticker: string;
  series_ticker: string;
  title: string;
  sub_title: string;
  category: string;
  mutually_exclusive: boolean;
  strike_date: string;
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
  volume: number;
  open_interest: number;
}

export interface KalshiCatalog {
  series: KalshiSeries[];
  events: KalshiEvent[];
  markets: KalshiMarketDef[];
  marketsByTicker: Map<string, KalshiMarketDef>;
  instruments: Instrument[];
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
  event(k: number, day: number): { ticker: string; title: string; subTitle: string; date: number; exclusive: boolean };
  markets(k: number): MarketSeed[];
}

const TEAMS = [
  ['LAL', 'BOS'],
  ['NYK', 'MIA'],
  ['GSW', 'DEN'],
  ['PHX', 'DAL'],
];

const TEMPLATES: Template[] = [
  {
    series: { ticker: 'KXBTCD', frequency: 'daily', title: 'Bitcoin price today', category: 'Crypto', tags: ['BTC'] },
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
      tags: ['Weather'],
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
      tags: ['Fed', 'Interest rates'],
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
      tags: ['Basketball', 'NBA'],
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
      tags: ['BTC'],
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
    platform: 'kalshi',
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

export function buildKalshiCatalog(seed: number, catalogDate: string, count: number): KalshiCatalog {
  const day = parseDay(catalogDate);
  const series = TEMPLATES.map((t) => t.series);
  const events: KalshiEvent[] = [];
  const markets: KalshiMarketDef[] = [];
  for (let k = 0; markets.length < count; k++) {
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
          open_time: isoSeconds(day - 7 * DAY_MS),
          close_time: isoSeconds(ev.date),
          strike_type: m.strikeType,
          ...(m.floor !== undefined ? { floor_strike: m.floor } : {}),
          ...(m.cap !== undefined ? { cap_strike: m.cap } : {}),
          rules_primary: `If the outcome is ${m.yes} for ${ev.title.replace(/\?$/, '')}, then the market resolves to Yes.`,
          mid: m.cents * 100,
          volume: rng.range(1_000, 2_000_000),
          open_interest: rng.range(500, 500_000),
        });
      }
    }
  }
  return {
    series,
    events,
    markets,
    marketsByTicker: new Map(markets.map((m) => [m.ticker, m])),
    instruments: markets.map((m) => kalshiInstrument(m.ticker, m.mid / 100)),
  };
}
