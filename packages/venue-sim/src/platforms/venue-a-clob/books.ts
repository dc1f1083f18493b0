// https://docs.polymarket.com/api-reference/orderbook/get-order-book (CLOB), …/api-reference/wss/market (the hash)
import { clobBookHash, clobWire, type ClobBookSummary, type ClobLevel, type ClobSummary } from '@depthgate/feeds';
import type { BookEngine } from '../../book/engine';
import { BID, type IntBook, type IntLevel } from '../../book/types';
import { formatScaledTrimmed } from '../../core/decimal';
import type { GammaMarketDef, PolymarketCatalog } from '../venue-a/catalog';
import { type ClobTick, tickSize } from '../venue-a/prices';

/** A token's book with its market: best prices first (`bids[0]` highest, `asks[0]` lowest), in cents. */
export interface TokenBook {
  market: GammaMarketDef;
  /** Whether the token is the market's YES token (the one whose book moves and trades). */
  yes: boolean;
  book: IntBook;
}

/** Every price of the 0.01 grid as the CLOB spells it (formatted once: every hash spells every level). */
const PRICES: readonly string[] = Array.from({ length: 101 }, (_, c) => formatScaledTrimmed(c, 2));

/** Prices and sizes as the CLOB spells them on REST and WebSocket alike: the shortest form ("0.5", "0.57", "120"). */
export const clobPrice = (cents: number): string => PRICES[cents] ?? formatScaledTrimmed(cents, 2);
export const clobSize = (lots: number): string => formatScaledTrimmed(lots, 2);

/** A YES book seen from the NO token: a YES bid at p is a NO ask at 1 − p. */
export function mirror(yes: IntBook): IntBook {
  return { bids: yes.asks.map(([p, q]) => [100 - p, q]), asks: yes.bids.map(([p, q]) => [100 - p, q]) };
}

/** The venue's level lists: bids ascending and asks descending, the best price last on both sides [V]. */
function venueLevels(book: IntBook): Pick<ClobBookSummary, 'bids' | 'asks'> {
  const out = (levels: readonly IntLevel[]): ClobLevel[] => {
    const list: ClobLevel[] = new Array<ClobLevel>(levels.length);
    for (let i = 0; i < levels.length; i++) {
      const [p, q] = levels[levels.length - 1 - i] as IntLevel;
      list[i] = { price: clobPrice(p), size: clobSize(q) };
    }
    return list;
  };
  return { bids: out(book.bids), asks: out(book.asks) };
}

export type { ClobSummary } from '@depthgate/feeds';

/** What a token's summary says besides its levels. */
export interface SummaryState {
  /** Epoch ms: the book's last change. */
  ts: number;
  tick: ClobTick;
  /** The token's last trade price, '' before any. */
  lastTradePrice: string;
}

/** What the hash covers: the token's book and settings as the venue spells them. */
function hashed(tokenId: string, market: GammaMarketDef, book: IntBook, s: SummaryState): ClobBookSummary {
  return {
    market: market.conditionId,
    asset_id: tokenId,
    timestamp: String(s.ts),
    ...venueLevels(book),
    min_order_size: String(market.minOrderSize),
    tick_size: s.tick,
    neg_risk: market.negRisk,
    last_trade_price: s.lastTradePrice,
  };
}

/** The hash of a token's book in a given state: Polymarket's summary hash, current recipe (`clobBookHash`). */
export function hashOf(tokenId: string, market: GammaMarketDef, book: IntBook, s: SummaryState): string {
  return clobBookHash(hashed(tokenId, market, book, s));
}

/**
 * A token's order-book summary as `GET /book` answers it and the market channel's `book` carries it, with its
 * `hash`: Polymarket's summary hash (`clobBookHash`, the current recipe, packages/feeds/src/clob-hash.ts) over exactly
 * these strings. `timestamp` is the book's last change, as the venue's REST book carries it.
 */
export function summaryOf(tokenId: string, market: GammaMarketDef, book: IntBook, s: SummaryState): ClobSummary {
  return clobWire.summary(hashed(tokenId, market, book, s));
}

/**
 * The CLOB's books, one place for what REST and the market channel say about a token: its book (a YES token's own
 * process, a NO token's the YES book mirrored at 1 − p), its tick size (venue-a/prices.ts `tickSizeOf`), its last
 * trade and its summary with the hash. Trades are the YES token's (trades.ts): a NO token has none, so its last trade
 * price is '' and REST answers the documented default for it.
 */
export class ClobBooks {
  constructor(
    private readonly engine: BookEngine,
    readonly catalog: PolymarketCatalog,
  ) {}

  tokenBook(tokenId: string): TokenBook | undefined {
    const t = this.catalog.tokens.get(tokenId);
    if (!t) return undefined;
    const live = this.engine.book('venue-a-clob', t.market.tokens[0]);
    if (!live) return undefined;
    const yes: IntBook = { bids: live.bids.levels(), asks: live.asks.levels() };
    return { market: t.market, yes: t.yes, book: t.yes ? yes : mirror(yes) };
  }

  tickSize(m: GammaMarketDef): ClobTick {
    return tickSize(this.engine, m);
  }

  /** The token's last trade: price (shortest form) and the taker's side, or undefined before any (and for NO). */
  lastTrade(tokenId: string): { price: string; side: 'BUY' | 'SELL' } | undefined {
    const t = this.catalog.tokens.get(tokenId);
    if (!t?.yes) return undefined;
    const last = this.engine.lastTrade('venue-a-clob', tokenId);
    return last ? { price: clobPrice(last.price), side: last.takerSide === BID ? 'BUY' : 'SELL' } : undefined;
  }

  /** The time of the token's last book change (the engine's start before the first). */
  changedAt(m: GammaMarketDef): number {
    return this.engine.lastTs('venue-a-clob', m.tokens[0]) ?? this.engine.startTs;
  }

  /** The token's summary now: what `GET /book` answers and a `book` message sent now carries. */
  summary(tokenId: string): ClobSummary | undefined {
    const b = this.tokenBook(tokenId);
    if (!b) return undefined;
    return summaryOf(tokenId, b.market, b.book, {
      ts: this.changedAt(b.market),
      tick: this.tickSize(b.market),
      lastTradePrice: this.lastTrade(tokenId)?.price ?? '',
    });
  }
}
