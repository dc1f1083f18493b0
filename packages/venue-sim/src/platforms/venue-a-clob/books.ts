// https://docs.polymarket.com/api-reference/orderbook/get-order-book (CLOB)
import { createHash } from 'node:crypto';
import type { BookEngine } from '../../book/engine';
import type { IntBook } from '../../book/types';
import { formatScaled, formatScaledTrimmed } from '../../core/decimal';
import type { GammaMarketDef, PolymarketCatalog } from '../venue-a/catalog';

/** A token's book with its market: best prices first (`bids[0]` highest, `asks[0]` lowest), in cents. */
export interface TokenBook {
  market: GammaMarketDef;
  book: IntBook;
}

/** The book of a token: its own process for YES, the YES book mirrored at 1 − p for NO. */
export function tokenBook(engine: BookEngine, catalog: PolymarketCatalog, tokenId: string): TokenBook | undefined {
  const t = catalog.tokens.get(tokenId);
  if (!t) return undefined;
  const live = engine.book('venue-a-clob', t.market.tokens[0]);
  if (!live) return undefined;
  const yes: IntBook = { bids: live.bids.levels(), asks: live.asks.levels() };
  if (t.yes) return { market: t.market, book: yes };
  return {
    market: t.market,
    book: { bids: yes.asks.map(([p, q]) => [100 - p, q]), asks: yes.bids.map(([p, q]) => [100 - p, q]) },
  };
}

/** Prices in dollars with two decimals, sizes without trailing zeros: the CLOB's spelling on REST and WebSocket. */
export const clobPrice = (cents: number): string => formatScaled(cents, 2);
export const clobSize = (lots: number): string => formatScaledTrimmed(lots, 2);

interface ClobLevel {
  price: string;
  size: string;
}

/**
 * A token's order-book summary as `GET /book` answers it and the market channel's `book` event carries it.
 * [3P] bids ascend and asks descend: the best price comes last on both sides (clob-client's market-price walk and
 * ccxt's ticker read the last element as the best). The hash is the simulator's digest of the levels ([U]: Polymarket
 * does not document how its summary hash is computed).
 */
export function bookSummary(tokenId: string, { market, book }: TokenBook, nowMs: number) {
  const bids: ClobLevel[] = [...book.bids].reverse().map(([p, q]) => ({ price: clobPrice(p), size: clobSize(q) }));
  const asks: ClobLevel[] = [...book.asks].reverse().map(([p, q]) => ({ price: clobPrice(p), size: clobSize(q) }));
  const hash = createHash('sha1')
    .update(JSON.stringify([tokenId, bids, asks]))
    .digest('hex');
  return {
    market: market.conditionId,
    asset_id: tokenId,
    timestamp: String(nowMs),
    hash,
    bids,
    asks,
    min_order_size: '5',
    tick_size: '0.01',
    neg_risk: market.negRisk,
    last_trade_price: clobPrice(book.bids[0]?.[0] ?? market.cents),
  };
}
