/**
 * What a book looks like on each venue: price grid, size grid, depth and how much changes per message, plus
 * ticker names in each venue's shapes (docs/history-internals.md, "Data generator"; facts from /work/shared/spec/upstreams.md):
 *
 * - venue_b (Kalshi): market tickers `SERIES-EVENT-STRIKE` (`KXBTCD-26MAR07-T100000`); YES prices in dollars on a
 *   1-cent grid from 0.01 to 0.99 written with 4 places (`0.4800`); contract counts with 2 places (`150.00`);
 *   one level per delta message.
 * - venue_a_us (Polymarket US): lowercase hyphenated market slugs; prices with 3 places on a 0.01 or 0.001 grid;
 *   sizes with 2 places; full-book messages, so several levels change at once.
 * - venue_c (Gemini): spot pairs (`BTCUSD`: 0.01 price grid, 8-place quantities) and prediction contracts
 *   (`GEMI-…`: 0.01 grid in [0.01, 0.99], whole contracts); l2 updates carry several changes.
 * - venue_a_clob (Polymarket CLOB): outcome token ids (76–78 decimal digits); prices on a 0.01 grid in [0.01, 0.99],
 *   sizes with 2 places; a `price_change` carries several levels; trades named by their transaction hash.
 * - venue_d (Coinbase Exchange): products `BASE-QUOTE` (`BTC-USD`); a 0.01 price grid, 8-place sizes; integer
 *   trade ids; a trade's side field is its maker's.
 *
 * All amounts are integers of the smallest unit (price units of 10^-priceScale, size units of 10^-qtyScale), held
 * in safe-integer Numbers: integer arithmetic is exact and the decimal text is produced by `formatUnits`.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { Rng, hash32 } from '@depthgate/service-kit';

export interface BookProfile {
  /** Decimal places written for prices. */
  priceScale: number;
  /** Price grid step, in price units. */
  tick: number;
  /** Lowest and highest price on the grid, in price units. */
  minPrice: number;
  maxPrice: number;
  /** Where the fair price starts, in price units. */
  initialMid: number;
  /** Largest move of the fair price per message, in ticks. */
  fairStepTicks: number;
  /** Gap between neighbouring levels, in ticks: [min, max]. */
  levelGapTicks: [number, number];
  /** Decimal places written for sizes. */
  qtyScale: number;
  /** Size grid step, in size units. */
  qtyStep: number;
  /** A level's size range, in size units. */
  qtyMin: number;
  qtyMax: number;
  /** Levels per side: [min, max]. */
  levels: [number, number];
  /** Levels per side the book hovers around. */
  depth: number;
  /** Level changes per message: [min, max]. */
  changesPerEvent: [number, number];
}

const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

/** Integer units → exact decimal text with `scale` places (`4800`, 4 → `0.4800`; `-1`, 2 → `-0.01`). */
export function formatUnits(units: number, scale: number): string {
  if (!Number.isSafeInteger(units)) throw new RangeError(`not an integer amount: ${units}`);
  if (scale === 0) return String(units);
  const neg = units < 0;
  const u = neg ? -units : units;
  const p = POW10[scale] as number;
  const whole = Math.floor(u / p);
  const frac = u - whole * p;
  return `${neg ? '-' : ''}${whole}.${String(frac).padStart(scale, '0')}`;
}

const SPOT_MIDS: Record<string, number> = {
  BTCUSD: 9_000_000, // 90,000.00
  ETHUSD: 300_000,
  SOLUSD: 15_000,
  LTCUSD: 9_000,
  DOGEUSD: 20,
  BTCEUR: 8_300_000,
};

/** A binary contract's grid: prices in (0, 1) at `priceScale` places; the fair price starts between 0.10 and 0.90. */
function binaryProfile(priceScale: number, tickUnits: number, rng: Rng) {
  const top = POW10[priceScale] as number;
  const mid = Math.round((rng.range(10, 90) * top) / 100 / tickUnits) * tickUnits;
  return { top, mid };
}

/** The profile of one ticker: the venue's grid, with per-ticker variety drawn from a hash of the ticker. */
export function profileFor(exchange: ExchangeKey, ticker: string): BookProfile {
  const rng = new Rng('profile', exchange, ticker);
  const profile = venueProfile(exchange, ticker, rng);
  profile.depth = rng.range(Math.max(profile.levels[0], Math.ceil(profile.levels[1] * 0.6)), profile.levels[1] - 1);
  return profile;
}

const KALSHI_SERIES = [
  { series: 'KXBTCD', strike: (r: Rng) => `T${r.range(60, 140) * 1000}` },
  { series: 'KXETHD', strike: (r: Rng) => `T${r.range(20, 60) * 100}` },
  { series: 'KXHIGHNY', strike: (r: Rng) => `B${r.range(30, 95)}.5` },
  { series: 'KXFED', strike: (r: Rng) => `T${r.range(300, 500) / 100}` },
  { series: 'KXINXU', strike: (r: Rng) => `B${r.range(5500, 7000)}` },
  { series: 'KXBTC15M', strike: (r: Rng) => String(r.range(10, 90)) },
];
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const SLUG_TEMPLATES = [
  (r: Rng) =>
    `will-bitcoin-close-above-${r.range(60, 150)}k-on-${r.pick(['mar', 'apr', 'jun', 'dec'])}-${r.range(1, 28)}`,
  (r: Rng) =>
    `fed-${r.pick(['cuts', 'holds', 'hikes'])}-rates-in-${r.pick(['april', 'june', 'july', 'september'])}-2026`,
  (r: Rng) =>
    `nba-${r.pick(['lal', 'bos', 'nyk', 'gsw', 'mia', 'den'])}-${r.pick(['phi', 'chi', 'dal', 'phx', 'mil'])}-2026-0${r.range(3, 9)}-${String(r.range(1, 28)).padStart(2, '0')}`,
  (r: Rng) =>
    `${r.pick(['eth', 'sol', 'xrp'])}-above-${r.range(1, 9)}${r.pick(['000', '00', '0'])}-on-${r.pick(['march', 'may', 'august'])}-${r.range(1, 28)}`,
  (r: Rng) => `who-wins-the-2026-${r.pick(['world-cup', 'stanley-cup', 'nba-finals', 'masters'])}`,
];
const COINBASE_MIDS: Record<string, number> = {
  'BTC-USD': 9_000_000,
  'ETH-USD': 300_000,
  'SOL-USD': 15_000,
  'BTC-EUR': 8_300_000,
};
const GEMINI_SPOT = ['BTCUSD', 'ETHUSD', 'SOLUSD', 'LTCUSD', 'DOGEUSD', 'BTCEUR'];
const GEMINI_PREDICTION = [
  (r: Rng) => `GEMI-FED${r.pick(MONTHS)}26-${r.pick(['DN25', 'UP25', 'HOLD'])}`,
  (r: Rng) =>
    `GEMI-BTC26${String(r.range(1, 12)).padStart(2, '0')}${String(r.range(1, 28)).padStart(2, '0')}1600-HI${r.range(60, 150)}000`,
  (r: Rng) =>
    `GEMI-NBA-2603${String(r.range(10, 28))}1930-${r.pick(['LAL', 'BOS', 'NYK'])}-${r.pick(['MIA', 'DEN', 'PHX'])}-ML-HOME`,
];

/** A venue's shapes: its book profiles (drawn from `rng`, seeded by the ticker) and its tickers. */
interface VenueShapes {
  book(ticker: string, rng: Rng): BookProfile;
  /** A ticker in the venue's shapes; `drawn` is how many distinct tickers were drawn so far. */
  ticker(rng: Rng, drawn: number): string;
  /** The venue's id of the ticker's `n`-th trade (its own shape, or a deterministic `h:` id where it has none). */
  tradeId(rng: Rng, n: number): string;
  /** The venue's own side field of a trade whose taker bought or sold. */
  venueSide(taker: 'buy' | 'sell'): string;
}

/** Each recorded exchange's shapes, one entry each; an exchange without one is a compile error. */
const SHAPES: { readonly [E in ExchangeKey]: VenueShapes } = {
  venue_b: {
    book(_ticker, rng) {
      const { top, mid } = binaryProfile(4, 100, rng);
      return {
        priceScale: 4,
        tick: 100,
        minPrice: 100,
        maxPrice: top - 100,
        initialMid: mid,
        fairStepTicks: 1,
        levelGapTicks: [1, 2],
        qtyScale: 2,
        qtyStep: rng.chance(0.2) ? 1 : 100,
        qtyMin: 100,
        qtyMax: 500_000,
        levels: [3, rng.range(8, 20)],
        depth: 0,
        changesPerEvent: [1, 1],
      };
    },
    ticker(rng) {
      const s = rng.pick(KALSHI_SERIES);
      const date = `26${rng.pick(MONTHS)}${String(rng.range(1, 28)).padStart(2, '0')}`;
      return s.series === 'KXBTC15M'
        ? `${s.series}-${date}${rng.range(10, 23)}${rng.pick(['00', '15', '30', '45'])}-${s.strike(rng)}`
        : `${s.series}-${date}-${s.strike(rng)}`;
    },
    tradeId: (rng) => rng.uuid(),
    // The book is the YES book: a taker who bought YES bought, one who bought NO sold.
    venueSide: (taker) => (taker === 'buy' ? 'yes' : 'no'),
  },
  venue_c: {
    book(ticker, rng) {
      if (ticker.startsWith('GEMI-') || ticker.includes('-')) {
        const { top, mid } = binaryProfile(2, 1, rng);
        return {
          priceScale: 2,
          tick: 1,
          minPrice: 1,
          maxPrice: top - 1,
          initialMid: mid,
          fairStepTicks: 1,
          levelGapTicks: [1, 2],
          qtyScale: 0,
          qtyStep: 1,
          qtyMin: 1,
          qtyMax: 5000,
          levels: [2, rng.range(6, 12)],
          depth: 0,
          changesPerEvent: [1, 2],
        };
      }
      const mid = SPOT_MIDS[ticker] ?? 100 + (hash32(ticker) % 50_000);
      const tick = 1;
      return {
        priceScale: 2,
        tick,
        minPrice: 1,
        maxPrice: mid * 10,
        initialMid: mid,
        fairStepTicks: Math.max(1, Math.round(mid / 20_000)),
        levelGapTicks: [1, Math.max(2, Math.round(mid / 50_000))],
        qtyScale: 8,
        qtyStep: mid > 1_000_000 ? 1 : 1000,
        // About $10 to $500,000 of notional per level (mid is in cents, sizes in 10^-8).
        qtyMin: Math.round(1e11 / mid),
        qtyMax: Math.round(5e15 / mid),
        levels: [10, rng.range(20, 40)],
        depth: 0,
        changesPerEvent: [1, 4],
      };
    },
    ticker(rng, drawn) {
      return drawn < GEMINI_SPOT.length && rng.chance(0.6)
        ? (GEMINI_SPOT[drawn] as string)
        : rng.pick(GEMINI_PREDICTION)(rng);
    },
    tradeId: (_rng, n) => String(2_840_000_000 + n),
    venueSide: (taker) => taker,
  },
  venue_a_us: {
    book(ticker, rng) {
      const fine = hash32(ticker) % 3 === 0;
      const tick = fine ? 1 : 10;
      const { top, mid } = binaryProfile(3, tick, rng);
      return {
        priceScale: 3,
        tick,
        minPrice: tick,
        maxPrice: top - tick,
        initialMid: mid,
        fairStepTicks: fine ? 3 : 1,
        levelGapTicks: [1, fine ? 4 : 2],
        qtyScale: 2,
        qtyStep: 1,
        qtyMin: 100,
        qtyMax: 2_000_000,
        levels: [3, rng.range(6, 15)],
        depth: 0,
        changesPerEvent: [1, 3],
      };
    },
    ticker(rng) {
      return rng.pick(SLUG_TEMPLATES)(rng);
    },
    tradeId: (rng, n) =>
      `h:${rng.range(0, 0xffffffff).toString(16).padStart(8, '0')}${n.toString(16).padStart(8, '0')}`,
    venueSide: (taker) => taker.toUpperCase(),
  },
  venue_a_clob: {
    book(_ticker, rng) {
      const { top, mid } = binaryProfile(2, 1, rng);
      return {
        priceScale: 2,
        tick: 1,
        minPrice: 1,
        maxPrice: top - 1,
        initialMid: mid,
        fairStepTicks: 1,
        levelGapTicks: [1, 2],
        qtyScale: 2,
        qtyStep: 1,
        qtyMin: 500,
        qtyMax: 5_000_000,
        levels: [3, rng.range(8, 25)],
        depth: 0,
        changesPerEvent: [1, 4],
      };
    },
    // An outcome token id: an ERC-1155 id, a decimal number of 76 to 78 digits.
    ticker(rng) {
      let id = String(rng.range(1, 9));
      const digits = rng.range(75, 77);
      while (id.length <= digits) id += String(rng.range(0, 999_999)).padStart(6, '0');
      return id.slice(0, digits + 1);
    },
    // The transaction hash the channel and the Data API name a trade by.
    tradeId: (rng, n) =>
      `0x${[0, 1, 2, 3, 4, 5, 6].map(() => rng.range(0, 0xffffffff).toString(16).padStart(8, '0')).join('')}${n.toString(16).padStart(8, '0')}`,
    venueSide: (taker) => taker.toUpperCase(),
  },
  venue_d: {
    book(ticker, rng) {
      const mid = COINBASE_MIDS[ticker] ?? 100 + (hash32(ticker) % 50_000);
      return {
        priceScale: 2,
        tick: 1,
        minPrice: 1,
        maxPrice: mid * 10,
        initialMid: mid,
        fairStepTicks: Math.max(1, Math.round(mid / 20_000)),
        levelGapTicks: [1, Math.max(2, Math.round(mid / 50_000))],
        qtyScale: 8,
        qtyStep: mid > 1_000_000 ? 1 : 1000,
        qtyMin: Math.round(1e11 / mid),
        qtyMax: Math.round(5e15 / mid),
        levels: [10, rng.range(20, 50)],
        depth: 0,
        changesPerEvent: [1, 4],
      };
    },
    ticker(rng, drawn) {
      const known = Object.keys(COINBASE_MIDS);
      return drawn < known.length
        ? (known[drawn] as string)
        : `${rng.pick(['ADA', 'AVAX', 'LINK', 'DOT', 'UNI'])}-${rng.pick(['USD', 'USDC', 'EUR'])}`;
    },
    tradeId: (_rng, n) => String(900_000_000 + n),
    // Coinbase names a trade by its maker's side: a taker who bought met a resting sell.
    venueSide: (taker) => (taker === 'buy' ? 'sell' : 'buy'),
  },
};

function venueProfile(exchange: ExchangeKey, ticker: string, rng: Rng): BookProfile {
  return SHAPES[exchange].book(ticker, rng);
}

/** How the exchange names its trades: the `n`-th trade's id and the venue's side field of a taker's side. */
export function tradeNames(exchange: ExchangeKey): Pick<VenueShapes, 'tradeId' | 'venueSide'> {
  return SHAPES[exchange];
}

/** `count` distinct tickers in the exchange's shapes, the same for the same seed. */
export function generateTickers(exchange: ExchangeKey, count: number, seed: string): string[] {
  const rng = new Rng(seed, 'tickers', exchange);
  const shapes = SHAPES[exchange];
  const out = new Set<string>();
  let attempts = 0;
  while (out.size < count && attempts < count * 50) {
    attempts++;
    out.add(shapes.ticker(rng, out.size).slice(0, 128));
  }
  return [...out].sort();
}
