// https://docs.polymarket.com/api-reference/wss/market (last_trade_price),
// https://docs.polymarket.com/api-reference/core/get-trades-for-a-user-or-markets (Data API trades)
import { createHash } from 'node:crypto';
import { clobWire } from '@depthgate/feeds';
import type { BookEngine } from '../../book/engine';
import { BID, type Instrument, type TimedTrade } from '../../book/types';
import { hashInts, Rng } from '../../core/rng';
import type { SimTrade } from '../../book/view';
import type { GammaMarketDef, PolymarketCatalog } from '../venue-a/catalog';
import { clobPrice, clobSize } from './books';

/** One public trade of a market, in exact units: what the Data API and the CLOB's live activity show. */
export interface TapeTrade {
  /** 0 = YES token, 1 = NO token. */
  outcomeIndex: 0 | 1;
  asset: string;
  /** The taker's side. */
  side: 'BUY' | 'SELL';
  /** Shares, in hundredths. */
  size: number;
  /** Price of the traded token in cents. */
  cents: number;
  /** Epoch ms. */
  ts: number;
  transactionHash: string;
  /** The taker. */
  wallet: string;
  pseudonym: string;
}

/**
 * A market's recent public trades when its book does not move (the platform runs without moving CLOB books), newest
 * first: both outcomes (a NO trade at 1 − the YES price), around the catalogue price, one every 37 s before `nowSec`.
 * Seeded per market, so the same seed replays the same tape.
 */
export function tradeTape(
  seed: number,
  catalog: PolymarketCatalog,
  m: GammaMarketDef,
  nowSec: number,
  limit: number,
): TapeTrade[] {
  const rng = new Rng(seed, 'data', 'trades', m.conditionId);
  const profiles = [...catalog.profiles.entries()];
  return Array.from({ length: limit }, (_, i) => {
    const [wallet, pseudonym] = profiles[i % profiles.length] as [string, string];
    const outcomeIndex = (i % 3 === 2 ? 1 : 0) as 0 | 1;
    const yesCents = rng.range(Math.max(1, m.cents - 3), Math.min(99, m.cents + 3));
    return {
      outcomeIndex,
      asset: m.tokens[outcomeIndex],
      side: rng.int(2) ? 'BUY' : 'SELL',
      size: rng.range(5, 50_000) * 100,
      cents: outcomeIndex === 0 ? yesCents : 100 - yesCents,
      ts: (nowSec - i * 37) * 1000,
      transactionHash: `0x${rng.hex(64)}`,
      wallet,
      pseudonym,
    };
  });
}

/**
 * The CLOB's names for a trade of a moving book (the YES token's): the market channel's `last_trade_price` [V],
 * the Data API's and live activity's trade, and the oracle. The channel carries no trade id [V]; its
 * `transaction_hash` is the trade's name here, one per fill, derived from (seed, token, trade number) — on the chain
 * a taker's fills against several makers may share one transaction.
 */
export class ClobTrades {
  private readonly wallets: [string, string][];
  private readonly key: number;

  constructor(
    private readonly seed: number,
    private readonly engine: BookEngine,
    private readonly catalog: PolymarketCatalog,
  ) {
    this.wallets = [...catalog.profiles.entries()];
    this.key = new Rng(seed, 'clob', 'takers').next();
  }

  transactionHash(token: string, no: number): string {
    return `0x${createHash('sha256').update(`${this.seed}|clob|trade|${token}|${no}`).digest('hex')}`;
  }

  /** `last_trade_price` [V]: the taker's side, `timestamp` in ms as a string, `fee_rate_bps` (no fees here). */
  lastTradePrice(m: GammaMarketDef, t: TimedTrade): string {
    const yes = m.tokens[0];
    return clobWire.lastTradePrice({
      asset: yes,
      market: m.conditionId,
      price: clobPrice(t.price),
      size: clobSize(t.size),
      feeRateBps: '0',
      side: t.takerSide === BID ? 'BUY' : 'SELL',
      timestamp: t.ts,
      transactionHash: this.transactionHash(yes, t.no),
    });
  }

  /** A trade of the YES book in the tape's terms (its taker one of the catalogue's public profiles). */
  tapeTrade(m: GammaMarketDef, t: TimedTrade): TapeTrade {
    const [wallet, pseudonym] = this.wallets[hashInts(this.key, t.no) % this.wallets.length] as [string, string];
    return {
      outcomeIndex: 0,
      asset: m.tokens[0],
      side: t.takerSide === BID ? 'BUY' : 'SELL',
      size: t.size,
      cents: t.price,
      ts: t.ts,
      transactionHash: this.transactionHash(m.tokens[0], t.no),
      wallet,
      pseudonym,
    };
  }

  /**
   * A market's trades newest first, up to `n` that `keep` accepts: its moving book's retained trades, or the seeded
   * tape when the book does not move.
   */
  marketTrades(m: GammaMarketDef, nowMs: number, n: number, keep: (t: TapeTrade) => boolean = () => true): TapeTrade[] {
    const log = this.engine.isMoving('venue-a-clob') ? this.engine.tradeLog('venue-a-clob', m.tokens[0]) : undefined;
    if (!log) return tradeTape(this.seed, this.catalog, m, Math.floor(nowMs / 1000), n).filter(keep);
    const out: TapeTrade[] = [];
    for (let no = log.lastTradeNo; no >= log.firstTradeNo && out.length < n; no--) {
      const t = this.tapeTrade(m, log.trade(no) as TimedTrade);
      if (keep(t)) out.push(t);
    }
    return out;
  }

  describe(inst: Instrument, t: TimedTrade): SimTrade {
    return {
      id: this.transactionHash(inst.ticker, t.no),
      ticker: inst.ticker,
      no: t.no,
      ts: t.ts,
      price: clobPrice(t.price),
      size: clobSize(t.size),
      side: t.takerSide === BID ? 'buy' : 'sell',
      venueSide: t.takerSide === BID ? 'BUY' : 'SELL',
    };
  }
}
