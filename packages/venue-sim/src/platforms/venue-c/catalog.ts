// https://developer.gemini.com/prediction-markets/tickers-overview (symbol shapes; upstreams.md §5)
import { DAY_MS, isoSeconds, parseDay } from '../../core/time';
import type { Instrument } from '../../book/types';

interface GeminiSpot {
  symbol: string;
  base: string;
  quote: string;
  priceDecimals: number;
  qtyDecimals: number;
  /** Initial mid in price units. */
  mid: number;
  /** Size range in lots. */
  minLots: number;
  maxLots: number;
}

interface GeminiContract {
  id: string;
  label: string;
  abbreviatedName: string;
  instrumentSymbol: string;
  /** Initial probability in cents. */
  cents: number;
}

export interface GeminiEvent {
  id: string;
  ticker: string;
  title: string;
  slug: string;
  description: string;
  type: 'binary' | 'categorical';
  category: string;
  series: string;
  status: string;
  createdAt: string;
  expiryDate: string;
  contracts: GeminiContract[];
}

export interface GeminiCatalog {
  spot: GeminiSpot[];
  events: GeminiEvent[];
  categories: string[];
  instruments: Instrument[];
  /** Upper-case symbol → instrument. */
  bySymbol: Map<string, Instrument>;
}

// Precision per symbol: [3P] Gemini's symbol details (tick_size / quote_increment).
const SPOT: GeminiSpot[] = [
  {
    symbol: 'BTCUSD',
    base: 'BTC',
    quote: 'USD',
    priceDecimals: 2,
    qtyDecimals: 8,
    mid: 8_712_345,
    minLots: 10_000,
    maxLots: 150_000_000,
  },
  {
    symbol: 'ETHUSD',
    base: 'ETH',
    quote: 'USD',
    priceDecimals: 2,
    qtyDecimals: 6,
    mid: 321_050,
    minLots: 1_000,
    maxLots: 40_000_000,
  },
  {
    symbol: 'SOLUSD',
    base: 'SOL',
    quote: 'USD',
    priceDecimals: 3,
    qtyDecimals: 6,
    mid: 148_250,
    minLots: 10_000,
    maxLots: 900_000_000,
  },
];

function spotInstrument(s: GeminiSpot): Instrument {
  return {
    platform: 'venue-c',
    ticker: s.symbol,
    priceDecimals: s.priceDecimals,
    qtyDecimals: s.qtyDecimals,
    tick: 1,
    minPrice: 1,
    maxPrice: Number.MAX_SAFE_INTEGER,
    initialMid: s.mid,
    maxLevels: 25,
    initialLevels: 12,
    window: 40,
    unit: 1,
    minUnits: s.minLots,
    maxUnits: s.maxLots,
    fractionalPercent: 0,
  };
}

/** Prediction contracts: 0.01 grid in [0.01, 0.99]; whole contracts ([U] quantity precision). */
function contractInstrument(symbol: string, cents: number): Instrument {
  return {
    platform: 'venue-c',
    ticker: symbol,
    priceDecimals: 2,
    qtyDecimals: 0,
    tick: 1,
    minPrice: 1,
    maxPrice: 99,
    initialMid: cents,
    maxLevels: 15,
    initialLevels: 6,
    window: 5,
    unit: 1,
    minUnits: 1,
    maxUnits: 2500,
    fractionalPercent: 0,
  };
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

function eventFor(kind: number, k: number, day: number): Omit<GeminiEvent, 'id' | 'createdAt' | 'status'> {
  const d = new Date(day);
  switch (kind) {
    case 0: {
      const m = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, 18));
      const code = `FED${MONTHS[m.getUTCMonth()]}${String(m.getUTCFullYear() % 100)}`;
      return {
        ticker: code,
        title: `Fed decision in ${m.toLocaleString('en-US', { month: 'long', timeZone: 'UTC' })} ${m.getUTCFullYear()}`,
        slug: code.toLowerCase(),
        description: 'Resolves to the target range announced after the FOMC meeting.',
        type: 'categorical',
        category: 'economics',
        series: 'FED',
        expiryDate: isoSeconds(m.getTime() + 18 * 3600 * 1000),
        contracts: [
          {
            id: `${code}-NC`,
            label: 'No change',
            abbreviatedName: 'No change',
            instrumentSymbol: `GEMI-${code}-NC`,
            cents: 71,
          },
          {
            id: `${code}-DN25`,
            label: 'Cut 25 bps',
            abbreviatedName: '-25 bps',
            instrumentSymbol: `GEMI-${code}-DN25`,
            cents: 26,
          },
        ],
      };
    }
    case 1: {
      const m = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1 + k, 0));
      const code = `BTC${MONTHS[m.getUTCMonth()]}${String(m.getUTCFullYear() % 100)}`;
      return {
        ticker: code,
        title: `Bitcoin price at the end of ${m.toLocaleString('en-US', { month: 'long', timeZone: 'UTC' })}`,
        slug: code.toLowerCase(),
        description: 'Resolves on the Gemini BTC/USD price at 5pm ET on the last day of the month.',
        type: 'categorical',
        category: 'crypto',
        series: 'BTC',
        expiryDate: isoSeconds(m.getTime() + 21 * 3600 * 1000),
        contracts: [
          {
            id: `${code}-HI100K`,
            label: '$100,000 or above',
            abbreviatedName: '≥ $100K',
            instrumentSymbol: `GEMI-${code}-HI100K`,
            cents: 28,
          },
          {
            id: `${code}-HI90K`,
            label: '$90,000 or above',
            abbreviatedName: '≥ $90K',
            instrumentSymbol: `GEMI-${code}-HI90K`,
            cents: 47,
          },
        ],
      };
    }
    default: {
      const teams = [
        ['LAL', 'BOS'],
        ['NYK', 'MIA'],
      ][k % 2] as [string, string];
      const g = day + Math.floor(k / 2) * DAY_MS;
      const dt = new Date(g);
      const stamp = `${String(dt.getUTCFullYear() % 100)}${String(dt.getUTCMonth() + 1).padStart(2, '0')}${String(dt.getUTCDate()).padStart(2, '0')}1930`;
      const base = `NBA-${stamp}-${teams[0]}-${teams[1]}-M`;
      return {
        ticker: base,
        title: `${teams[0]} at ${teams[1]}`,
        slug: base.toLowerCase(),
        description: 'Winner of the game, including overtime.',
        type: 'categorical',
        category: 'sports',
        series: 'NBA',
        expiryDate: isoSeconds(g + 27 * 3600 * 1000),
        contracts: [
          {
            id: `${base}-${teams[0]}`,
            label: teams[0],
            abbreviatedName: teams[0],
            instrumentSymbol: `GEMI-${base}-${teams[0]}`,
            cents: 43,
          },
          {
            id: `${base}-${teams[1]}`,
            label: teams[1],
            abbreviatedName: teams[1],
            instrumentSymbol: `GEMI-${base}-${teams[1]}`,
            cents: 57,
          },
        ],
      };
    }
  }
}

export function buildGeminiCatalog(catalogDate: string, count: number): GeminiCatalog {
  const day = parseDay(catalogDate);
  const spot = SPOT.slice(0, Math.min(SPOT.length, Math.ceil(count / 2)));
  const instruments = spot.map(spotInstrument);
  const events: GeminiEvent[] = [];
  let id = 3001;
  for (let k = 0; instruments.length < count; k++) {
    for (let kind = 0; kind < 3 && instruments.length < count; kind++) {
      const ev = eventFor(kind, k, day);
      ev.contracts = ev.contracts.slice(0, count - instruments.length);
      events.push({ ...ev, id: String(id++), status: 'active', createdAt: isoSeconds(day - 14 * DAY_MS) });
      for (const c of ev.contracts) instruments.push(contractInstrument(c.instrumentSymbol, c.cents));
    }
  }
  return {
    spot,
    events,
    categories: ['crypto', 'economics', 'sports', 'politics'],
    instruments,
    bySymbol: new Map(instruments.map((i) => [i.ticker.toUpperCase(), i])),
  };
}
