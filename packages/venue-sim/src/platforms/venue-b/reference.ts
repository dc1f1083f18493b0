// https://docs.kalshi.com/api-reference (structured targets, milestones, live data, multivariate, incentives, fees)
import { hashInts, Rng } from '../../core/rng';
import { DAY_MS, isoSeconds } from '../../core/time';
import { type KalshiCatalog, type KalshiEvent, MVE_SERIES, NBA_TEAMS } from './catalog';

interface StructuredTarget {
  id: string;
  name: string;
  type: string;
  details: Record<string, unknown>;
  source_id: string;
  last_updated_ts: string;
}

export interface Milestone {
  id: string;
  category: string;
  type: string;
  start_date: string;
  end_date: string;
  related_event_tickers: string[];
  title: string;
  notification_message: string;
  source_id: string;
  details: Record<string, unknown>;
  primary_event_tickers: string[];
  last_updated_ts: string;
  /** Internal: the game, for live data. */
  game: Game;
}

/** A basketball game behind a milestone: tip-off, final whistle and the points per quarter. */
export interface Game {
  event: KalshiEvent;
  startMs: number;
  endMs: number;
  away: string;
  home: string;
  awayQuarters: number[];
  homeQuarters: number[];
}

interface MultivariateCollection {
  collection_ticker: string;
  series_ticker: string;
  title: string;
  description: string;
  open_date: string;
  close_date: string;
  associated_events: Array<{
    ticker: string;
    is_yes_only: boolean;
    size_min: number;
    size_max: number;
    active_quoters: string[];
  }>;
  associated_event_tickers: string[];
  is_ordered: boolean;
  is_single_market_per_event: boolean;
  is_all_yes: boolean;
  size_min: number;
  size_max: number;
  functional_description: string;
}

interface IncentiveProgram {
  id: string;
  market_id: string;
  market_ticker: string;
  incentive_type: 'liquidity' | 'volume';
  incentive_description: string;
  start_date: string;
  end_date: string;
  /** Centi-cents [V]. */
  period_reward: number;
  paid_out: boolean;
  discount_factor_bps: number;
  /** 1e-2 contracts. */
  targetSize: number;
}

interface SeriesFeeChange {
  id: string;
  series_ticker: string;
  fee_type: string;
  fee_multiplier: number;
  scheduledMs: number;
}

interface EventFeeChange {
  id: string;
  event_ticker: string;
  series_ticker: string;
  fee_type_override: string | null;
  fee_multiplier_override: number | null;
  scheduledMs: number;
}

/** Seeded reference data around the catalogue: everything that is not a market but points at markets or events. */
export interface KalshiReference {
  structuredTargets: StructuredTarget[];
  milestones: Milestone[];
  collections: MultivariateCollection[];
  incentivePrograms: IncentiveProgram[];
  seriesFeeChanges: SeriesFeeChange[];
  eventFeeChanges: EventFeeChange[];
  /** Weather index cities by id, for `/live_data/weather/{city}` and its calibrations. */
  weatherCities: Map<string, WeatherCity>;
}

/** A city of Kalshi's temperature index: its station and a climate for the seeded readings. */
export interface WeatherCity {
  /** Index within the list (draws of different cities differ). */
  n: number;
  station: string;
  name: string;
  /** Yearly mean and half the seasonal swing of the readings, °F. */
  meanF: number;
  swingF: number;
}

/**
 * The index cities: the docs' own example city id `miami` [V] (docs.kalshi.com get-weather-index, "Index city ID
 * (e.g. miami)") and `nyc`; the ids of the other cities are not in the docs ([3P] lists thirteen, nyc among them).
 * Stations: the airports and park the cities' temperature markets name [U].
 */
const WEATHER_CITIES: ReadonlyArray<[string, Omit<WeatherCity, 'n'>]> = [
  ['miami', { station: 'KMIA', name: 'Miami (Miami International Airport)', meanF: 77, swingF: 8 }],
  ['nyc', { station: 'KNYC', name: 'New York City (Central Park)', meanF: 55, swingF: 20 }],
];

const uuid = (seed: number, ...labels: string[]) => new Rng(seed, 'kalshi', ...labels).uuid();

export function buildKalshiReference(seed: number, catalog: KalshiCatalog, day: number): KalshiReference {
  const updated = isoSeconds(day - 30 * DAY_MS);
  const structuredTargets: StructuredTarget[] = Object.entries(NBA_TEAMS).map(
    ([abbr, [name, conference, division]]) => ({
      id: uuid(seed, 'structured-target', abbr),
      name,
      type: 'basketball_team',
      details: { league: 'NBA', conference, division, abbreviation: abbr },
      source_id: `nba-${abbr.toLowerCase()}`,
      last_updated_ts: updated,
    }),
  );
  const teamId = new Map(structuredTargets.map((t) => [t.details.abbreviation as string, t.id]));

  const games = [...catalog.historical.events, ...catalog.events].filter((e) => e.teams);
  const milestones: Milestone[] = games.map((event) => {
    const [away, home] = event.teams as readonly [string, string];
    const endMs = Date.parse(event.strike_date);
    const game = gameOf(seed, event, away, home, endMs - 150 * 60_000, endMs);
    return {
      id: uuid(seed, 'milestone', event.event_ticker),
      category: 'Sports',
      type: 'basketball_game',
      start_date: isoSeconds(game.startMs),
      end_date: isoSeconds(game.endMs),
      related_event_tickers: [event.event_ticker],
      title: `${NBA_TEAMS[away]?.[0]} at ${NBA_TEAMS[home]?.[0]}`,
      notification_message: `${away} at ${home} is about to start`,
      source_id: `nba-${event.event_ticker.toLowerCase()}`,
      details: {
        competition: 'Pro Basketball (M)',
        away_team_id: teamId.get(away),
        home_team_id: teamId.get(home),
        away_team: away,
        home_team: home,
      },
      primary_event_tickers: [event.event_ticker],
      last_updated_ts: isoSeconds(game.endMs + 3_600_000),
      game,
    };
  });

  const combinable = catalog.events;
  const collections: MultivariateCollection[] =
    combinable.length < 2
      ? []
      : [
          {
            collection_ticker: `${MVE_SERIES.ticker}-R`,
            series_ticker: MVE_SERIES.ticker,
            title: 'Combine outcomes across categories',
            description: 'Combine one market from each of two or more events into one contract.',
            open_date: isoSeconds(day - 7 * DAY_MS),
            close_date: isoSeconds(day + 365 * DAY_MS),
            associated_events: combinable.map((e) => ({
              ticker: e.event_ticker,
              is_yes_only: false,
              size_min: 1,
              size_max: 1,
              active_quoters: [],
            })),
            associated_event_tickers: combinable.map((e) => e.event_ticker),
            is_ordered: false,
            is_single_market_per_event: true,
            is_all_yes: false,
            size_min: 2,
            size_max: Math.min(combinable.length, 10),
            functional_description: 'Resolves Yes if every selected market resolves to its selected side.',
          },
        ];

  const m = (i: number) => catalog.markets[i % catalog.markets.length];
  const programs: Array<[number, IncentiveProgram['incentive_type'], number, number, boolean]> = [
    // [market index, type, start (days from the catalogue date), end, paid out]
    [0, 'liquidity', -7, 365, false],
    [1, 'volume', -30, -1, true],
    [2, 'liquidity', 400, 430, false],
  ];
  const incentivePrograms: IncentiveProgram[] = catalog.markets.length
    ? programs.map(([i, type, start, end, paidOut], n) => {
        const market = m(i) as KalshiCatalog['markets'][number];
        return {
          id: uuid(seed, 'incentive', String(n)),
          market_id: market.market_id,
          market_ticker: market.ticker,
          incentive_type: type,
          incentive_description:
            type === 'liquidity'
              ? `Liquidity incentive on ${market.ticker}: resting orders within 5 cents of the best price share the reward.`
              : `Volume incentive on ${market.ticker}: traded contracts share the reward.`,
          start_date: isoSeconds(day + start * DAY_MS),
          end_date: isoSeconds(day + end * DAY_MS),
          period_reward: 500_000,
          paid_out: paidOut,
          discount_factor_bps: 5000,
          targetSize: 100_000,
        };
      })
    : [];

  const feeEvent = catalog.events.find((e) => e.teams) ?? catalog.events[0];
  return {
    structuredTargets,
    milestones,
    collections,
    incentivePrograms,
    seriesFeeChanges: [
      {
        id: uuid(seed, 'series-fee-change', 'KXBTCD'),
        series_ticker: 'KXBTCD',
        fee_type: 'quadratic_with_maker_fees',
        fee_multiplier: 1,
        scheduledMs: day + 14 * DAY_MS,
      },
      {
        id: uuid(seed, 'series-fee-change', 'KXFED'),
        series_ticker: 'KXFED',
        fee_type: 'quadratic',
        fee_multiplier: 0.5,
        scheduledMs: day + 400 * DAY_MS,
      },
    ],
    eventFeeChanges: feeEvent
      ? [
          {
            id: uuid(seed, 'event-fee-change', feeEvent.event_ticker),
            event_ticker: feeEvent.event_ticker,
            series_ticker: feeEvent.series_ticker,
            fee_type_override: 'quadratic_with_maker_fees',
            fee_multiplier_override: 1,
            scheduledMs: day - DAY_MS,
          },
        ]
      : [],
    weatherCities: new Map(WEATHER_CITIES.map(([id, city], n) => [id, { ...city, n }])),
  };
}

/** A game's points per quarter, drawn from the seed (no ties). */
function gameOf(seed: number, event: KalshiEvent, away: string, home: string, startMs: number, endMs: number): Game {
  const key = new Rng(seed, 'kalshi', 'game', event.event_ticker).next();
  const quarters = (side: number) => [0, 1, 2, 3].map((q) => 20 + (hashInts(key, side, q) % 16));
  const awayQuarters = quarters(0);
  const homeQuarters = quarters(1);
  if (sum(awayQuarters) === sum(homeQuarters)) homeQuarters[3] = (homeQuarters[3] as number) + 1;
  return { event, startMs, endMs, away, home, awayQuarters, homeQuarters };
}

/** Of scheduled changes, the latest one that has taken effect by `now`. */
export function inForce<T extends { scheduledMs: number }>(changes: readonly T[], now: number): T | undefined {
  let best: T | undefined;
  for (const c of changes) if (c.scheduledMs <= now && (!best || c.scheduledMs >= best.scheduledMs)) best = c;
  return best;
}

/** A milestone as Kalshi answers it (without the game behind it). */
export const milestoneJson = ({ game: _game, ...m }: Milestone): Omit<Milestone, 'game'> => m;

export const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
