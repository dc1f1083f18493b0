// https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/ (event contracts on FORECASTX)
import { Rng } from '../../core/rng';
import { DAY_MS, parseDay } from '../../core/time';

interface ForecastMarket {
  /** Underlying (index) conid. */
  conid: number;
  symbol: string;
  name: string;
  categoryId: string;
}

export interface ForecastContract {
  conid: number;
  market: ForecastMarket;
  /** 'C' = YES, 'P' = NO. */
  right: 'C' | 'P';
  /** Strike as text, exactly as displayed (e.g. "0.5", "45"). */
  strike: string;
  /** YYYYMMDD */
  maturityDate: string;
  /** Prices in cents. */
  bid: number;
  ask: number;
  openInterest: number;
  volume: number;
}

interface CategoryNode {
  label: string;
  parentId?: string;
  markets: Array<{ name: string; symbol: string; exchange: string; conid: number }>;
}

export interface IbkrCatalog {
  tree: Record<string, CategoryNode>;
  markets: ForecastMarket[];
  contracts: ForecastContract[];
}

const MARKETS: Array<{ symbol: string; name: string; path: [string, string, string][]; strikes: string[] }> = [
  {
    symbol: 'USIP',
    name: 'US Industrial Production',
    path: [
      ['g1003', 'Economic Indicators', ''],
      ['g17574', 'Industry', 'g1003'],
      ['g17654', 'United States', 'g17574'],
    ],
    strikes: ['0', '0.2', '0.5'],
  },
  {
    symbol: 'FF',
    name: 'Fed Funds Target Rate',
    path: [
      ['g1003', 'Economic Indicators', ''],
      ['g17580', 'Interest Rates', 'g1003'],
      ['g17660', 'United States', 'g17580'],
    ],
    strikes: ['4.125', '4.375'],
  },
  {
    symbol: 'NYCHT',
    name: 'New York City High Temperature',
    path: [
      ['g1010', 'Climate', ''],
      ['g18001', 'Temperature', 'g1010'],
      ['g18002', 'New York', 'g18001'],
    ],
    strikes: ['45', '50', '55'],
  },
];

export function buildIbkrCatalog(seed: number, catalogDate: string): IbkrCatalog {
  const day = parseDay(catalogDate);
  const tree: Record<string, CategoryNode> = {};
  const markets: ForecastMarket[] = [];
  const contracts: ForecastContract[] = [];
  let conid = 751_047_561;
  for (const m of MARKETS) {
    for (const [id, label, parent] of m.path) {
      tree[id] ??= { label, ...(parent ? { parentId: parent } : {}), markets: [] };
    }
    const leaf = (m.path[m.path.length - 1] as [string, string, string])[0];
    const market: ForecastMarket = { conid: conid++, symbol: m.symbol, name: m.name, categoryId: leaf };
    markets.push(market);
    (tree[leaf] as CategoryNode).markets.push({
      name: m.name,
      symbol: m.symbol,
      exchange: 'FORECASTX',
      conid: market.conid,
    });
    const rng = new Rng(seed, 'ibkr', m.symbol);
    for (const months of [0, 1]) {
      const d = new Date(day + months * 30 * DAY_MS);
      const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0));
      const maturity = last.toISOString().slice(0, 10).replace(/-/g, '');
      for (const strike of m.strikes) {
        const yes = rng.range(8, 92);
        for (const right of ['C', 'P'] as const) {
          const mid = right === 'C' ? yes : 100 - yes;
          contracts.push({
            conid: 700_000_000 + rng.int(90_000_000),
            market,
            right,
            strike,
            maturityDate: maturity,
            bid: Math.max(1, mid - 1),
            ask: Math.min(99, mid + 1),
            openInterest: rng.range(100, 250_000),
            volume: rng.range(10, 90_000),
          });
        }
      }
    }
  }
  return { tree, markets, contracts };
}
