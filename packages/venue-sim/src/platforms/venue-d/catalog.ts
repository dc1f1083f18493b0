// https://docs.cdp.coinbase.com/exchange/reference/exchangerestapi_getproducts
import type { Instrument } from '../../book/types';

export interface CoinbaseProduct {
  id: string;
  base: string;
  quote: string;
  /** Initial mid in cents. */
  mid: number;
  baseDecimals: number;
  minLots: number;
  maxLots: number;
}

const PRODUCTS: CoinbaseProduct[] = [
  { id: 'BTC-USD', base: 'BTC', quote: 'USD', mid: 8_711_890, baseDecimals: 8, minLots: 5_000, maxLots: 120_000_000 },
  { id: 'ETH-USD', base: 'ETH', quote: 'USD', mid: 320_987, baseDecimals: 8, minLots: 100_000, maxLots: 4_000_000_000 },
  {
    id: 'SOL-USD',
    base: 'SOL',
    quote: 'USD',
    mid: 14_822,
    baseDecimals: 8,
    minLots: 1_000_000,
    maxLots: 90_000_000_000,
  },
  {
    id: 'LTC-USD',
    base: 'LTC',
    quote: 'USD',
    mid: 8_455,
    baseDecimals: 8,
    minLots: 1_000_000,
    maxLots: 50_000_000_000,
  },
];

export const CURRENCIES = [
  {
    id: 'BTC',
    name: 'Bitcoin',
    min_size: '0.00000001',
    max_precision: '0.00000001',
    type: 'crypto',
    minWithdrawal: '0.0001',
    maxWithdrawal: '2400',
    network: 'bitcoin',
  },
  {
    id: 'ETH',
    name: 'Ether',
    min_size: '0.00000001',
    max_precision: '0.00000001',
    type: 'crypto',
    minWithdrawal: '0.001',
    maxWithdrawal: '7450',
    network: 'ethereum',
  },
  {
    id: 'SOL',
    name: 'Solana',
    min_size: '0.00000001',
    max_precision: '0.00000001',
    type: 'crypto',
    minWithdrawal: '0.01',
    maxWithdrawal: '100000',
    network: 'solana',
  },
  {
    id: 'LTC',
    name: 'Litecoin',
    min_size: '0.00000001',
    max_precision: '0.00000001',
    type: 'crypto',
    minWithdrawal: '0.001',
    maxWithdrawal: '10000',
    network: 'litecoin',
  },
  {
    id: 'USD',
    name: 'United States Dollar',
    min_size: '0.01',
    max_precision: '0.01',
    type: 'fiat',
    minWithdrawal: '0',
    maxWithdrawal: '0',
    network: '',
  },
  {
    id: 'USDC',
    name: 'USD Coin',
    min_size: '0.000001',
    max_precision: '0.000001',
    type: 'crypto',
    minWithdrawal: '1',
    maxWithdrawal: '10000000',
    network: 'ethereum',
  },
];

/** Where the simulated products' `sequence` numbers (a product's event count) and trade ids start. */
export const SEQUENCE_BASE = 13_051_505_638;
export const TRADE_ID_BASE = 86_326_522;

export interface CoinbaseCatalog {
  products: CoinbaseProduct[];
  byId: Map<string, CoinbaseProduct>;
  instruments: Instrument[];
}

export function buildCoinbaseCatalog(count: number): CoinbaseCatalog {
  const products = PRODUCTS.slice(0, Math.min(count, PRODUCTS.length));
  return {
    products,
    byId: new Map(products.map((p) => [p.id, p])),
    instruments: products.map((p) => ({
      platform: 'venue-d',
      ticker: p.id,
      priceDecimals: 2,
      qtyDecimals: p.baseDecimals,
      tick: 1,
      minPrice: 1,
      maxPrice: Number.MAX_SAFE_INTEGER,
      initialMid: p.mid,
      maxLevels: 30,
      initialLevels: 15,
      window: 30,
      unit: 1,
      minUnits: p.minLots,
      maxUnits: p.maxLots,
      fractionalPercent: 0,
    })),
  };
}
