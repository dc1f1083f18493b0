// https://docs.polymarket.us/api-reference/events/get-events (event and market shapes: events-schema.json)
import { Rng } from '../../core/rng';
import { DAY_MS, isoSeconds, monthName, parseDay } from '../../core/time';
import type { Instrument } from '../../book/types';

interface PmTag {
  id: string;
  slug: string;
  label: string;
}

/**
 * A series. The docs' `Series.id` is a string (protos/gateway/series/v1); polymarket-us 0.1.1 types it as a number.
 * The docs win. The docs' series carry `active` only; the SDK's type also requires `closed` and `archived`.
 */
interface PmSeries {
  id: string;
  slug: string;
  title: string;
  recurrence: string;
  active: boolean;
  closed: boolean;
  archived: boolean;
}

export interface PmMarketDef {
  id: string;
  slug: string;
  question: string;
  title: string;
  outcome: string;
  eventSlug: string;
  category: string;
  startDate: string;
  endDate: string;
  active: boolean;
  closed: boolean;
  /** Initial mid in 1e-3 dollars; 0 for markets without a live book. */
  mid: number;
  volume: number;
  hasBook: boolean;
  /** Settlement price in dollars (1 = YES won, 0 = lost) once the market is settled, else null. */
  settlement: 0 | 1 | null;
}

export interface PmEventDef {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  description: string;
  category: string;
  startDate: string;
  endDate: string;
  active: boolean;
  closed: boolean;
  archived: boolean;
  featured: boolean;
  live: boolean;
  ended: boolean;
  /** Liquidity and volume in cents (rendered as JSON numbers with two decimals). */
  liquidityCents: number;
  volumeCents: number;
  series: PmSeries;
  tags: PmTag[];
  markets: PmMarketDef[];
  createdAt: string;
}

export interface PmCatalog {
  events: PmEventDef[];
  markets: PmMarketDef[];
  marketsBySlug: Map<string, PmMarketDef>;
  series: PmSeries[];
  tags: PmTag[];
  instruments: Instrument[];
}

const series = (id: string, slug: string, title: string, recurrence: string): PmSeries => ({
  id,
  slug,
  title,
  recurrence,
  active: true,
  closed: false,
  archived: false,
});

const SERIES: PmSeries[] = [
  series('1', 'nba', 'NBA', 'daily'),
  series('2', 'fed-decisions', 'Fed Decisions', 'monthly'),
  series('3', 'bitcoin-price', 'Bitcoin Price', 'weekly'),
  series('4', 'nfl', 'NFL', 'weekly'),
  // A finished series, so that the status filters have something to tell apart.
  { ...series('5', 'nba-2025-playoffs', 'NBA 2025 Playoffs', 'annual'), active: false, closed: true, archived: true },
];

const TAGS: PmTag[] = [
  { id: '1', slug: 'sports', label: 'Sports' },
  { id: '2', slug: 'nba', label: 'NBA' },
  { id: '3', slug: 'economics', label: 'Economics' },
  { id: '4', slug: 'fed', label: 'Fed' },
  { id: '5', slug: 'crypto', label: 'Crypto' },
  { id: '6', slug: 'bitcoin', label: 'Bitcoin' },
  { id: '7', slug: 'nfl', label: 'NFL' },
];

const tag = (slug: string) => TAGS.find((t) => t.slug === slug) as PmTag;

const NBA = [
  ['lal', 'bos', 'Lakers', 'Celtics'],
  ['nyk', 'mia', 'Knicks', 'Heat'],
  ['gsw', 'den', 'Warriors', 'Nuggets'],
] as const;
const NFL = [
  ['kc', 'buf', 'Chiefs', 'Bills'],
  ['phi', 'dal', 'Eagles', 'Cowboys'],
] as const;

interface EventSeed {
  slug: string;
  title: string;
  category: string;
  series: PmSeries;
  tags: PmTag[];
  start: number;
  end: number;
  live: boolean;
  markets: Array<{ slug: string; title: string; outcome: string; cents: number }>;
}

function eventSeed(kind: number, k: number, day: number): EventSeed {
  switch (kind) {
    case 0: {
      const [a, h, an, hn] = NBA[k % NBA.length] as (typeof NBA)[number];
      const d = day + Math.floor(k / NBA.length) * DAY_MS;
      const date = new Date(d).toISOString().slice(0, 10);
      const slug = `nba-${a}-${h}-${date}`;
      return {
        slug,
        title: `${an} vs. ${hn}`,
        category: 'sports',
        series: SERIES[0] as PmSeries,
        tags: [tag('sports'), tag('nba')],
        start: d + 24 * 3600 * 1000,
        end: d + 27 * 3600 * 1000,
        live: k % 2 === 0,
        markets: [
          { slug: `${slug}-${a}`, title: an, outcome: an, cents: 45 },
          { slug: `${slug}-${h}`, title: hn, outcome: hn, cents: 55 },
        ],
      };
    }
    case 1: {
      const dt = new Date(day);
      const m = Date.UTC(dt.getUTCFullYear(), dt.getUTCMonth() + k, 18);
      const slug = `fed-decision-in-${monthName(m).toLowerCase()}-${new Date(m).getUTCFullYear()}`;
      return {
        slug,
        title: `Fed decision in ${monthName(m)}?`,
        category: 'economics',
        series: SERIES[1] as PmSeries,
        tags: [tag('economics'), tag('fed')],
        start: day - 30 * DAY_MS,
        end: m,
        live: false,
        markets: [
          { slug: `${slug}-no-change`, title: 'No change', outcome: 'No change', cents: 72 },
          { slug: `${slug}-25-bps-decrease`, title: '25 bps decrease', outcome: '25 bps decrease', cents: 24 },
        ],
      };
    }
    case 2: {
      const strike = 100 + k * 10;
      const end = day + (24 + k * 7) * DAY_MS;
      const slug = `btc-above-${strike}k-on-${monthName(end).toLowerCase()}-${new Date(end).getUTCDate()}-${new Date(end).getUTCFullYear()}`;
      return {
        slug,
        title: `Bitcoin above $${strike}K on ${monthName(end)} ${new Date(end).getUTCDate()}?`,
        category: 'crypto',
        series: SERIES[2] as PmSeries,
        tags: [tag('crypto'), tag('bitcoin')],
        start: day - 7 * DAY_MS,
        end,
        live: false,
        markets: [{ slug, title: 'Yes', outcome: 'Yes', cents: Math.max(5, 40 - k * 8) }],
      };
    }
    default: {
      const [a, h, an, hn] = NFL[k % NFL.length] as (typeof NFL)[number];
      const d = day + (1 + Math.floor(k / NFL.length) * 7) * DAY_MS;
      const slug = `nfl-${a}-${h}-${new Date(d).toISOString().slice(0, 10)}`;
      return {
        slug,
        title: `${an} vs. ${hn}`,
        category: 'sports',
        series: SERIES[3] as PmSeries,
        tags: [tag('sports'), tag('nfl')],
        start: d + 18 * 3600 * 1000,
        end: d + 22 * 3600 * 1000,
        live: false,
        markets: [
          { slug: `${slug}-${a}`, title: an, outcome: an, cents: 58 },
          { slug: `${slug}-${h}`, title: hn, outcome: hn, cents: 42 },
        ],
      };
    }
  }
}

function pmUsInstrument(slug: string, midE3: number): Instrument {
  return {
    platform: 'venue-a-us',
    ticker: slug,
    priceDecimals: 3,
    qtyDecimals: 2,
    tick: 10,
    minPrice: 10,
    maxPrice: 990,
    initialMid: midE3,
    maxLevels: 12,
    initialLevels: 6,
    window: 5,
    unit: 100,
    minUnits: 1,
    maxUnits: 5000,
    fractionalPercent: 15,
  };
}

export function buildPmUsCatalog(seed: number, catalogDate: string, count: number): PmCatalog {
  const day = parseDay(catalogDate);
  const events: PmEventDef[] = [];
  const markets: PmMarketDef[] = [];
  let nextEventId = 10_001;
  let nextMarketId = 50_001;
  const make = (s: EventSeed, state: { active: boolean; closed: boolean; archived: boolean; book: boolean }) => {
    const rng = new Rng(seed, 'polymarketUs', 'event', s.slug);
    const ev: PmEventDef = {
      id: String(nextEventId++),
      ticker: s.slug,
      slug: s.slug,
      title: s.title,
      description: `${s.title} Resolves according to the official result.`,
      category: s.category,
      startDate: isoSeconds(s.start),
      endDate: isoSeconds(s.end),
      active: state.active,
      closed: state.closed,
      archived: state.archived,
      featured: events.length % 3 === 0,
      live: state.active && s.live,
      ended: state.closed,
      liquidityCents: rng.range(100_000, 50_000_000),
      volumeCents: rng.range(1_000_000, 900_000_000),
      series: s.series,
      tags: s.tags,
      markets: [],
      createdAt: isoSeconds(day - 10 * DAY_MS),
    };
    for (const m of s.markets) {
      const def: PmMarketDef = {
        id: String(nextMarketId++),
        slug: m.slug,
        question: `${s.title}: ${m.title}`,
        title: m.title,
        outcome: m.outcome,
        eventSlug: s.slug,
        category: s.category,
        startDate: ev.startDate,
        endDate: ev.endDate,
        active: state.active,
        closed: state.closed,
        mid: m.cents * 10,
        volume: rng.range(1_000, 5_000_000),
        hasBook: state.book,
        // A settled event's first outcome won.
        settlement: state.closed ? (ev.markets.length === 0 ? 1 : 0) : null,
      };
      ev.markets.push(def);
      markets.push(def);
    }
    events.push(ev);
  };
  let k = 0;
  while (markets.filter((m) => m.hasBook).length < count) {
    for (let kind = 0; kind < 4; kind++) {
      const s = eventSeed(kind, k, day);
      const left = count - markets.filter((m) => m.hasBook).length;
      if (left <= 0) break;
      s.markets = s.markets.slice(0, left);
      make(s, { active: true, closed: false, archived: false, book: true });
    }
    k++;
  }
  // A few settled and archived events, so that the status filters have something to tell apart.
  const past = (kind: number, j: number) => {
    const s = eventSeed(kind, 0, day - (30 + j * 7) * DAY_MS);
    s.slug = `${s.slug}-settled`;
    s.markets = s.markets.map((m) => ({ ...m, slug: `${m.slug}-settled` }));
    s.live = false;
    return s;
  };
  make(past(0, 0), { active: false, closed: true, archived: false, book: false });
  make(past(3, 1), { active: false, closed: true, archived: false, book: false });
  make(past(0, 2), { active: false, closed: true, archived: true, book: false });

  return {
    events,
    markets,
    marketsBySlug: new Map(markets.map((m) => [m.slug, m])),
    series: SERIES,
    tags: TAGS,
    instruments: markets.filter((m) => m.hasBook).map((m) => pmUsInstrument(m.slug, m.mid)),
  };
}
